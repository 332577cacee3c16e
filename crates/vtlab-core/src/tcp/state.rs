//! Connection state shared by the sender, the loss recoveries and the
//! congestion controllers; it depends on none of them, so `cc/` and
//! `recovery/` need not import the sender.

/// Congestion state of the sender (Linux `ca_state`, ns-3 `TcpCongState_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaState {
    Open,
    /// Duplicate ACKs seen, below the threshold.
    Disorder,
    /// Fast recovery.
    Recovery,
    /// After a retransmission timeout.
    Loss,
}

impl CaState {
    pub fn as_str(self) -> &'static str {
        match self {
            CaState::Open => "open",
            CaState::Disorder => "disorder",
            CaState::Recovery => "recovery",
            CaState::Loss => "loss",
        }
    }
}
