//! Where the sender and the loss recoveries follow ns-3, Linux or ns-2: one struct
//! of named switches, built once from the [`Profile`], read by the state
//! machine and the recoveries instead of tests of the profile.

use crate::tcp::cc::Profile;

/// The stack behaviours that differ between the `ns3` and `linux` profiles
/// (the congestion controllers' own differences stay in `cc/`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StackBehaviour {
    /// Duplicate ACKs reach the controller: ns-3 `ProcessAck` calls `PktsAcked`
    /// for each as one segment with the SRTT; Linux reports only ACKs of new data.
    pub dupack_feeds_controller: bool,
    /// RTT handed to `pkts_acked`: ns-3 passes the SRTT (`m_srtt`); Linux the
    /// sample this ACK produced, if any.
    pub pkts_acked_gets_srtt: bool,
    /// With SACK, an ACK that SACKs new data is a duplicate ACK even if it also
    /// advances snd_una (ns-3 `ProcessAck`); Linux: a new ACK.
    pub sack_ack_is_dupack: bool,
    /// With SACK, rwnd bounds pipe like cwnd (ns-3 `AvailableWindow`); Linux tests
    /// rwnd against the sequence space instead (`tcp_snd_wnd_test`).
    pub rwnd_bounds_pipe: bool,
    /// A timer restart on a new ACK drops the RTO backoff (ns-3 `NewAck`
    /// recomputes `m_rto`); Linux keeps it until a valid RTT sample (RFC 6298).
    pub new_ack_clears_backoff: bool,
    /// Leaving Loss grows cwnd by the segments above `recover` only, and ACKs in
    /// Loss by at most the newly delivered ones (ns-3 `ProcessAck`); Linux counts all.
    pub loss_exit_counts_above_recover: bool,
    /// Every retransmission timeout cuts ssthresh, also with SACK: ns-3.44's
    /// `ReTxTimeout` clears every retransmitted flag (`SetSentListLost`)
    /// before it asks `IsHeadRetransmitted`. Otherwise a repeated timeout
    /// after the head was resent keeps ssthresh (RFC 5681 §3.1).
    pub every_timeout_cuts_ssthresh: bool,
    /// pipe counts a retransmitted segment SACKed afterwards (ns-3
    /// `TcpTxBuffer::BytesInFlight`); RFC 6675 and Linux count SACKed data as 0.
    pub pipe_counts_sacked_retransmissions: bool,
    /// PRR as ns-3.44 `TcpPrrRecovery` (RecoverFS = pipe, per event, its
    /// quirks: `Prr::on_ack_ns3`); Linux `tcp_cwnd_reduction`: RFC 6937 per ACK.
    pub ns3_prr: bool,
    /// A partial ACK in SACK recovery resends one segment whatever cwnd allows
    /// (ns-3 `ProcessAck` → `DoRetransmit`); Linux sends only what cwnd − pipe allows.
    pub partial_ack_retransmits: bool,
    /// The window grows only while it limits sending (Linux `tcp_is_cwnd_limited`
    /// in every `cong_avoid`, `tcp_cwnd_validate`): a flow held back by the
    /// receive window or the application does not inflate cwnd. ns-3.44 grows
    /// cwnd on every ACK.
    pub cwnd_validation: bool,
    /// The doubling SYN timeout stops at the maximum RTO (Linux
    /// `tcp_retransmit_timer`: TCP_RTO_MAX); ns-3 `SendEmptyPacket` sets
    /// `m_cnTimeout << k` without a ceiling.
    pub syn_backoff_capped: bool,
    /// Default of `tcp.tlp`: the Tail Loss Probe of RFC 8985 §7 (Linux
    /// `tcp_schedule_loss_probe`, `tcp_send_loss_probe`, on since 3.10 with
    /// `tcp_early_retrans` = 3); ns-3.44 has none.
    pub tlp: bool,
    /// Default of `tcp.rack`: RACK time-based loss detection, RFC 8985 §6
    /// (Linux `tcp_recovery.c`, the only SACK loss detection since 4.18);
    /// ns-3.44 has none (RFC 6675's `IsLost` only).
    pub rack: bool,
    /// Default of `tcp.early_retransmit`: RFC 5827 (Linux 3.5 to 4.10, removed
    /// when RACK took its place); neither ns-3.44 nor a current Linux has it.
    pub early_retransmit: bool,
    /// Default of `tcp.rto_from_head`: an RTO re-armed after a probe or
    /// reorder timer held the timer expires an RTO after the head's last
    /// transmission (Linux `tcp_rearm_rto`, `tcp_rto_delta_us`), not an RTO
    /// from now.
    pub rto_from_head: bool,
    /// Sending a pure ACK recomputes the RTO from srtt and rttvar, dropping
    /// the exponential backoff (ns-3.44 `SendEmptyPacket` sets `m_rto` for
    /// every empty segment it sends). It shows only on a connection that
    /// carries data both ways: an endpoint whose retransmission is backed
    /// off and that acknowledges the peer's (re)transmitted data backs off
    /// from the minimum RTO again. Linux `tcp_send_ack` leaves `icsk_rto`.
    pub pure_ack_clears_backoff: bool,
    /// The timestamp clock ticks in milliseconds and an RTT sample from a
    /// timestamp echo is whole milliseconds: (⌊now⌋ − TSecr) ms, 1 µs when
    /// that is 0 (ns-3.44 `TcpOptionTS::NowToTsValue`,
    /// `ElapsedTimeFromTsValue`, `EstimateRtt`). Linux times segments with a
    /// microsecond clock (`tcp_ack_update_rtt` uses the echo only when no
    /// segment timing is available), as vtlab does otherwise.
    pub ts_clock_ms: bool,
    /// In SACK recovery only the first partial ACK restarts the
    /// retransmission timer (ns-3 `ProcessAck` → `NewAck(ack,
    /// m_isFirstPartialAck)`, RFC 6582's impatient variant); Linux re-arms it
    /// on every ACK of new data (`tcp_set_xmit_timer`).
    pub timer_restart_first_partial_ack_only: bool,
    /// The passive end times its SYN-ACK: the ACK that completes the
    /// handshake gives the first RTT sample, from the SYN-ACK's send time if
    /// it was sent once, else (Karn) from the timestamp echo if there is one
    /// (Linux `tcp_synack_rtt_meas` → `tcp_ack_update_rtt`, in
    /// `tcp_rcv_state_process` for TCP_SYN_RECV). ns-3.44 `EstimateRtt` does
    /// too (`UpdateRttHistory` for the SYN-ACK); the `ns3` profile does not
    /// follow it there (docs/validation.md), which at ns-3's 1 s minimum RTO
    /// changes no timing.
    pub synack_rtt_sample: bool,
    /// Reno starts a new fast recovery only once snd_una passes `recover`
    /// (ns-2 `RenoTcpAgent::dupack_action` with `bug_fix_`, its default);
    /// RFC 5681's Reno, as ns-3's and Linux's, has no such guard.
    pub reno_guards_recover: bool,
    /// NewReno without SACK keeps ns-3.44's sent list with SACK marks guessed
    /// from duplicate ACKs (`TcpTxBuffer::AddRenoSack`, `MarkHeadAsLost`,
    /// `DiscardUpTo`, `SetSentListLost`; recovery/reno_sack.rs); otherwise RFC
    /// 6582 with FlightSize and window inflation, as Linux and ns-2.
    pub reno_sack_marks: bool,
    /// Without timestamps every segment is timed and every ACK that covers
    /// the oldest untimed-out, never-resent one is a sample (ns-3.44
    /// `m_history`, `EstimateRtt`; tcp/rtt_history.rs); otherwise one
    /// segment per round trip (BSD, ns-2's `rtt_active_`).
    pub rtt_every_segment: bool,
    /// `recovery = "sack"` is ns-2.35's Sack1 (`Sack1TcpAgent`,
    /// tcp/recovery/sack1_ns2.rs: its own `pipe_` count, `ScoreBoardRQ`),
    /// not RFC 6675's scoreboard and pipe.
    pub sack1: bool,
    /// With the `vegas` controller, a recovery other than `sack` is ns-2.35
    /// Vegas's own (`VegasTcpAgent::recv`, `vegas_expire`,
    /// tcp/recovery/vegas_ns2.rs), as ns-2's Vegas agent has it built in.
    pub vegas_agent: bool,
    /// A new fast retransmit needs the ACKs one packet past `recover`: ns-2's
    /// `highest_ack_ > recover_` (`bug_fix_`, in `dupack_action` of Tahoe,
    /// Reno, NewReno and Sack1) counts the last packet acknowledged against
    /// the highest sent, where RFC 6582 lets an ACK of exactly `recover`
    /// start one; also allowed while only the pseudo-SYN is acknowledged
    /// (`bugfix_ss_`).
    pub recover_guard_one_past: bool,
}

impl StackBehaviour {
    pub const NS3: StackBehaviour = StackBehaviour {
        dupack_feeds_controller: true,
        pkts_acked_gets_srtt: true,
        sack_ack_is_dupack: true,
        rwnd_bounds_pipe: true,
        new_ack_clears_backoff: true,
        loss_exit_counts_above_recover: true,
        every_timeout_cuts_ssthresh: true,
        pipe_counts_sacked_retransmissions: true,
        ns3_prr: true,
        partial_ack_retransmits: true,
        cwnd_validation: false,
        syn_backoff_capped: false,
        tlp: false,
        rack: false,
        early_retransmit: false,
        rto_from_head: false,
        pure_ack_clears_backoff: true,
        ts_clock_ms: true,
        timer_restart_first_partial_ack_only: true,
        synack_rtt_sample: false,
        reno_guards_recover: false,
        reno_sack_marks: true,
        rtt_every_segment: true,
        sack1: false,
        vegas_agent: false,
        recover_guard_one_past: false,
    };

    pub const LINUX: StackBehaviour = StackBehaviour {
        dupack_feeds_controller: false,
        pkts_acked_gets_srtt: false,
        sack_ack_is_dupack: false,
        rwnd_bounds_pipe: false,
        new_ack_clears_backoff: false,
        loss_exit_counts_above_recover: false,
        every_timeout_cuts_ssthresh: false,
        pipe_counts_sacked_retransmissions: false,
        ns3_prr: false,
        partial_ack_retransmits: false,
        cwnd_validation: true,
        syn_backoff_capped: true,
        tlp: true,
        rack: true,
        early_retransmit: false,
        rto_from_head: true,
        pure_ack_clears_backoff: false,
        ts_clock_ms: false,
        timer_restart_first_partial_ack_only: false,
        synack_rtt_sample: true,
        reno_guards_recover: false,
        reno_sack_marks: false,
        rtt_every_segment: false,
        sack1: false,
        vegas_agent: false,
        recover_guard_one_past: false,
    };

    /// ns-2.35's one-way agents (`tcp/tcp.cc`, `tcp-newreno.cc`), where a
    /// switch applies: no controller split, so duplicate ACKs feed nothing
    /// and a loss predictor reads the raw sample of each timed packet
    /// (as `tcp-vegas.cc` times every packet with its own clock); the window
    /// opens on every new ACK (`opencwnd`, no cwnd validation); the backoff
    /// ends only when a timed packet is acknowledged (`newack`:
    /// `rtt_active_`), not on every new ACK; the pseudo-SYN is timed by the
    /// retransmission timer, capped at `maxrto_`; NewReno restarts the
    /// timer on the first partial ACK only (`newreno_changes1_` 1,
    /// `partialnewack_helper`); Reno, as Tahoe and NewReno, retransmits fast
    /// only past `recover_` (`bug_fix_`); no PRR, TLP, RACK or early retransmit, no
    /// timestamps. SACK is ns-2's `Sack1` (`sack1`), which counts pipe and
    /// tests the window in packets; the RFC 6675 switches below do not
    /// apply to it.
    pub const NS2: StackBehaviour = StackBehaviour {
        dupack_feeds_controller: false,
        pkts_acked_gets_srtt: false,
        sack_ack_is_dupack: false,
        rwnd_bounds_pipe: false,
        new_ack_clears_backoff: false,
        loss_exit_counts_above_recover: false,
        every_timeout_cuts_ssthresh: false,
        pipe_counts_sacked_retransmissions: false,
        ns3_prr: false,
        partial_ack_retransmits: false,
        cwnd_validation: false,
        syn_backoff_capped: true,
        tlp: false,
        rack: false,
        early_retransmit: false,
        rto_from_head: false,
        pure_ack_clears_backoff: false,
        ts_clock_ms: false,
        timer_restart_first_partial_ack_only: true,
        synack_rtt_sample: false,
        reno_guards_recover: true,
        reno_sack_marks: false,
        rtt_every_segment: false,
        sack1: true,
        vegas_agent: true,
        recover_guard_one_past: true,
    };

    pub fn of(profile: Profile) -> Self {
        match profile {
            Profile::Ns3 => Self::NS3,
            Profile::Linux => Self::LINUX,
            Profile::Ns2 => Self::NS2,
        }
    }

    /// Whether a flow with controller `cc` is ns-2's Vegas agent (its own
    /// loss handling, opening and header-less packets).
    pub fn is_vegas_agent(&self, cc: &str) -> bool {
        self.vegas_agent && cc == "vegas"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_profile_has_its_switches() {
        assert_eq!(StackBehaviour::of(Profile::Ns3), StackBehaviour::NS3);
        assert_eq!(StackBehaviour::of(Profile::Linux), StackBehaviour::LINUX);
        let b = StackBehaviour::of(Profile::Ns2);
        assert_eq!(b, StackBehaviour::NS2);
        // ns-2 newack: t_backoff_ = 1 only for the timed packet's ACK;
        // opencwnd on every new ACK; NewReno resets the timer on the first
        // partial ACK only (newreno_changes1_ 1).
        assert!(!b.new_ack_clears_backoff && !b.cwnd_validation);
        assert!(b.timer_restart_first_partial_ack_only);
    }
}
