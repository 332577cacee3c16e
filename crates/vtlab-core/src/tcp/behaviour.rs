//! Where the sender and the loss recoveries follow ns-3 or Linux: one struct
//! of named switches, built once from the [`Profile`], instead of profile
//! tests scattered through the state machine. (The controllers' own ns-3 /
//! Linux differences stay in `cc/`, which reads `ConnInfo::profile`.)

use crate::tcp::cc::Profile;

/// The stack behaviours that differ between the `ns3` and `linux` profiles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StackBehaviour {
    /// Every duplicate ACK goes to the controller's `pkts_acked` as one segment
    /// with the SRTT (ns-3 `TcpSocketBase::ProcessAck` → `PktsAcked`); Linux
    /// calls `pkts_acked` only for ACKs that acknowledge data.
    pub dupack_feeds_controller: bool,
    /// The RTT handed to `pkts_acked` is the SRTT (ns-3 passes `m_srtt`);
    /// Linux passes the sample this ACK produced, if any.
    pub pkts_acked_gets_srtt: bool,
    /// With SACK, an ACK that SACKs new data is a duplicate ACK even if it
    /// also advances snd_una (ns-3 `ProcessAck`, after RFC 6675 §2); Linux
    /// treats any ACK that advances snd_una as a new ACK.
    pub sack_ack_is_dupack: bool,
    /// With SACK, the receive window bounds `pipe` like cwnd (ns-3
    /// `AvailableWindow`: min(cwnd, rwnd) − pipe); Linux tests cwnd against
    /// the packets in flight and rwnd against the sequence space
    /// (`tcp_cwnd_test`, `tcp_snd_wnd_test`).
    pub rwnd_bounds_pipe: bool,
    /// Restarting the retransmission timer on a new ACK drops any RTO backoff
    /// (ns-3 `NewAck` recomputes `m_rto` from srtt/rttvar); Linux keeps the
    /// backoff until a valid RTT sample, as RFC 6298 §5.7 says.
    pub new_ack_clears_backoff: bool,
    /// The ACK that ends state Loss grows cwnd by the segments above the
    /// recovery point only, and earlier ACKs in Loss by at most the newly
    /// delivered segments (ns-3 `ProcessAck` counts from `m_recover`); Linux
    /// counts every acknowledged segment.
    pub loss_exit_counts_above_recover: bool,
    /// SACK `pipe` keeps counting a retransmitted segment that is SACKed
    /// afterwards (ns-3 `TcpTxBuffer::BytesInFlight`); RFC 6675 and Linux
    /// count SACKed segments as zero.
    pub pipe_counts_sacked_retransmissions: bool,
    /// PRR as ns-3.44 `TcpPrrRecovery` computes it: RecoverFS = pipe, run once
    /// per scoreboard update and once per partial ACK, with its arithmetic
    /// quirks (see `Prr::on_ack_ns3`); Linux `tcp_cwnd_reduction` follows
    /// RFC 6937 once per ACK with RecoverFS = FlightSize.
    pub ns3_prr: bool,
    /// A partial ACK in SACK recovery sends one segment whatever cwnd allows
    /// (ns-3 `ProcessAck` → `DoRetransmit`, unless the new head was already
    /// retransmitted); Linux sends only what cwnd − pipe allows.
    pub partial_ack_retransmits: bool,
}

impl StackBehaviour {
    pub const NS3: StackBehaviour = StackBehaviour {
        dupack_feeds_controller: true,
        pkts_acked_gets_srtt: true,
        sack_ack_is_dupack: true,
        rwnd_bounds_pipe: true,
        new_ack_clears_backoff: true,
        loss_exit_counts_above_recover: true,
        pipe_counts_sacked_retransmissions: true,
        ns3_prr: true,
        partial_ack_retransmits: true,
    };

    pub const LINUX: StackBehaviour = StackBehaviour {
        dupack_feeds_controller: false,
        pkts_acked_gets_srtt: false,
        sack_ack_is_dupack: false,
        rwnd_bounds_pipe: false,
        new_ack_clears_backoff: false,
        loss_exit_counts_above_recover: false,
        pipe_counts_sacked_retransmissions: false,
        ns3_prr: false,
        partial_ack_retransmits: false,
    };

    pub fn of(profile: Profile) -> Self {
        match profile {
            Profile::Ns3 => Self::NS3,
            Profile::Linux => Self::LINUX,
        }
    }
}
