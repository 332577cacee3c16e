//! Connection state shared by the sender, the loss recoveries and the
//! congestion controllers; it depends on none of them, so `cc/` and
//! `recovery/` need not import the sender.

use serde::{Deserialize, Serialize};

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

/// Loss recovery: how the sender reacts to duplicate ACKs and partial ACKs
/// (implemented in `tcp/recovery/`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Recovery {
    /// Fast retransmit, then slow start from one segment, going back N.
    Tahoe,
    /// RFC 5681 fast recovery, left on the first new ACK.
    Reno,
    /// RFC 6582 fast recovery with partial ACKs.
    NewReno,
    /// RFC 6675 SACK-based recovery (the receiver sends SACK blocks); with
    /// `prr`, RFC 6937 Proportional Rate Reduction sets cwnd during recovery.
    Sack,
}

impl Recovery {
    pub const NAMES: &'static str = "tahoe, reno, newreno, sack";

    /// The name users write in `tcp.recovery` (the serde name).
    pub fn as_str(self) -> &'static str {
        match self {
            Recovery::Tahoe => "tahoe",
            Recovery::Reno => "reno",
            Recovery::NewReno => "newreno",
            Recovery::Sack => "sack",
        }
    }
}
