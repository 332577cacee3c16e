//! Loss recovery for short exchanges, scripted through the sender: the tail
//! loss probe, RACK and its reorder timer, RFC 5827 early retransmit and the
//! RTO re-armed from the head (docs/tcp-model.md, "Loss recovery for short
//! exchanges"). Every expected time is derived by hand in the comments.
//!
//! Common setting: MSS 1000 B, no timestamps (Karn timing), SACK recovery
//! with PRR, NewReno, initial window 10 segments. The SYN goes out at 0 and
//! the SYN-ACK arrives at 10 ms: the first RTT sample is 10 ms, so
//! SRTT = 10 ms, RTTVAR = 5 ms, min_rtt = 10 ms. The application writes later
//! (a request/response exchange: `Sender::write`).
//!
//! Linux profile RTO = SRTT + max(200 ms, 4·RTTVAR) = 10 + max(200, 20) = 210 ms
//! (`clock_granularity` 200 ms stands for `tcp_rto_min`, `rto_min` 0).
//! ns3 profile RTO = max(SRTT + max(1 ms, 4·RTTVAR), 1 s) = 1 s.

use super::*;
use crate::tcp::cc::{NewReno, Profile};
use crate::tcp::Recovery;

const MSS: u64 = 1000;

fn ms(x: f64) -> Time {
    Time((x * 1e6).round() as u64)
}

fn cfg(profile: Profile) -> TcpConfig {
    TcpConfig {
        mss: MSS,
        timestamps: false,
        recovery: Recovery::Sack,
        prr: true,
        ..TcpConfig::defaults(profile)
    }
}

/// The linux profile with the probe and RACK on (its defaults; explicit
/// here so that each test states what runs).
fn linux() -> TcpConfig {
    TcpConfig {
        tlp: Some(true),
        rack: Some(true),
        ..cfg(Profile::Linux)
    }
}

struct H {
    s: Sender,
    out: Vec<Packet>,
}

impl H {
    /// Connected at 10 ms (SRTT 10 ms), nothing written yet.
    fn new(cfg: TcpConfig) -> Self {
        let profile = cfg.profile;
        let mut h = H {
            s: Sender::new(cfg, AnyCc::NewReno(NewReno::new(profile)), 0, NodeId(1), 0),
            out: vec![],
        };
        h.s.start(Time::ZERO, &mut h.out);
        h.out.clear();
        let syn_ack = Packet {
            kind: PacketKind::SynAck,
            ..ack(0, &[])
        };
        h.s.on_packet(ms(10.0), &syn_ack, &mut h.out);
        assert_eq!(h.s.srtt(), Some(Duration::from_millis(10)));
        h
    }

    fn write(&mut self, t: f64, bytes: u64) {
        self.s.write(ms(t), bytes, &mut self.out);
    }

    /// An ACK of `ack` bytes with SACK blocks in segment numbers [start, end).
    fn ack(&mut self, t: f64, ack_bytes: u64, blocks: &[(u64, u64)]) {
        let p = ack(ack_bytes, blocks);
        self.s.on_packet(ms(t), &p, &mut self.out);
    }

    /// Fire the timer at its deadline, which must be `t`.
    fn fire(&mut self, t: f64) {
        assert_eq!(self.s.timer_deadline(), Some(ms(t)), "timer deadline");
        self.s.on_timer(ms(t), &mut self.out);
    }

    fn deadline(&self) -> Option<Time> {
        self.s.timer_deadline()
    }

    fn kind(&self) -> TimerKind {
        self.s.c.timer_kind
    }

    /// Data segments sent since the last call: (seq, len).
    fn sent(&mut self) -> Vec<(u64, u32)> {
        self.out
            .drain(..)
            .filter(|p| p.kind == PacketKind::Data)
            .map(|p| (p.seq, p.len))
            .collect()
    }

    fn cwnd(&self) -> u64 {
        self.s.window().cwnd
    }
}

fn ack(ack: u64, blocks: &[(u64, u64)]) -> Packet {
    let mut p = super::tests::ack_packet(ack);
    for (i, &(s, e)) in blocks.iter().enumerate() {
        p.sack[i] = (s * MSS, e * MSS);
    }
    p.sack_len = blocks.len() as u8;
    p
}

// ---- (a) the tail loss probe -------------------------------------------------

#[test]
fn a_lone_lost_segment_is_probed_instead_of_timed_out() {
    let mut h = H::new(linux());
    // 20 ms: a 100 B request goes out. One segment outstanding, so the probe
    // timeout is 2·SRTT + tcp_rto_min = 20 + 200 = 220 ms, but never later
    // than the RTO, which expires 210 ms after the head was sent:
    // PTO = min(220, 20 + 210 − 20) = 210 ms → fires at 230 ms.
    h.write(20.0, 100);
    assert_eq!(h.sent(), vec![(0, 100)]);
    assert_eq!(
        (h.deadline(), h.kind()),
        (Some(ms(230.0)), TimerKind::Probe)
    );
    // The segment is lost. 230 ms: the probe resends the last (only) segment.
    // No timeout: state Open, cwnd 10 segments, no backoff; the RTO restarts
    // from now: 230 + 210 = 440 ms.
    h.fire(230.0);
    assert_eq!(h.sent(), vec![(0, 100)]);
    let st = h.s.stats();
    assert_eq!((st.tlp_probes, st.rto_count, st.retransmissions), (1, 0, 1));
    assert_eq!(h.s.ca_state(), CaState::Open);
    assert_eq!(h.cwnd(), 10 * MSS);
    assert_eq!(h.s.rto(), Duration::from_millis(210));
    assert_eq!((h.deadline(), h.kind()), (Some(ms(440.0)), TimerKind::Rto));
    // 240 ms: the probe's ACK (100 = tlp_high_seq). It advances snd_una but
    // does not pass tlp_high_seq, so Linux decides nothing yet (no D-SACK
    // tells it the original was lost or not): cwnd unchanged, no loss event.
    h.ack(240.0, 100, &[]);
    assert_eq!(h.cwnd(), 10 * MSS);
    assert_eq!(h.s.stats().loss_events, 0);
    assert_eq!(h.deadline(), None, "nothing outstanding");
    // 300 ms: the next request [100, 200); its ACK at 310 ms passes
    // tlp_high_seq: the probe repaired a loss (tcp_process_tlp_ack): CWR,
    // ssthresh = max(cwnd/2, 2 MSS) = 5000 (Linux Reno), cwnd = ssthresh.
    h.write(300.0, 100);
    assert_eq!(h.sent(), vec![(100, 100)]);
    h.ack(310.0, 200, &[]);
    let st = h.s.stats();
    assert_eq!((st.tlp_recoveries, st.loss_events, st.rto_count), (1, 1, 0));
    assert_eq!((h.cwnd(), h.s.window().ssthresh), (5 * MSS, 5 * MSS));
    assert_eq!(h.s.ca_state(), CaState::Open);
}

#[test]
fn a_probe_ending_in_a_pure_duplicate_ack_was_unnecessary() {
    let mut h = H::new(linux());
    h.write(20.0, 100);
    h.fire(230.0);
    h.sent();
    // The original was delayed, not lost: its ACK arrives at 235 ms, then the
    // probe's duplicate draws a duplicate ACK (240 ms) that neither advances,
    // nor updates the window, nor SACKs: both arrived, no loss, no reduction.
    h.ack(235.0, 100, &[]);
    h.ack(240.0, 100, &[]);
    h.write(300.0, 100);
    h.ack(310.0, 200, &[]);
    let st = h.s.stats();
    assert_eq!(
        (st.tlp_probes, st.tlp_recoveries, st.loss_events),
        (1, 0, 0)
    );
    assert_eq!(h.cwnd(), 10 * MSS);
}

#[test]
fn without_an_rtt_sample_the_probe_waits_the_initial_timeout() {
    // The passive end of a two-way connection before the handshake's ACK
    // arrives (or with the ns3 profile) has no sample: PTO =
    // TCP_TIMEOUT_INIT = rto_initial = 1 s, capped by the RTO, 1 s after the
    // head: fires at 0 + 1 s. The RTO then restarts from the probe: 2 s.
    let mut s = Sender::new(
        linux(),
        AnyCc::NewReno(NewReno::new(Profile::Linux)),
        0,
        NodeId(1),
        0,
    );
    let mut out = vec![];
    s.accept(Time::ZERO, 1 << 30);
    s.write(Time::ZERO, 100, &mut out);
    assert_eq!(s.srtt(), None);
    assert_eq!(s.timer_deadline(), Some(ms(1000.0)));
    assert_eq!(s.c.timer_kind, TimerKind::Probe);
    out.clear();
    s.on_timer(ms(1000.0), &mut out);
    assert_eq!(out.len(), 1);
    assert_eq!((s.stats().tlp_probes, s.stats().rto_count), (1, 0));
    assert_eq!(s.rto(), Duration::from_secs(1), "no backoff");
    assert_eq!(s.timer_deadline(), Some(ms(2000.0)));
}

/// A passive end: the SYN-ACKs go out at `syn_acks` (ms), the ACK that
/// completes the handshake arrives at `acked` ms.
fn passive(cfg: TcpConfig, syn_acks: &[f64], acked: f64) -> Sender {
    let profile = cfg.profile;
    let mut s = Sender::new(cfg, AnyCc::NewReno(NewReno::new(profile)), 0, NodeId(1), 0);
    for &t in syn_acks {
        s.accept(ms(t), 1 << 30);
    }
    s.on_packet(ms(acked), &super::tests::ack_packet(0), &mut vec![]);
    s
}

#[test]
fn the_passive_end_times_its_syn_ack() {
    // Linux tcp_synack_rtt_meas: SYN-ACK at 0, its ACK at 4 ms: one sample
    // R = 4 ms. tcp_rtt_estimator's first sample: srtt = R, mdev = R/2, so
    // rttvar_us = max(4·mdev, tcp_rto_min) and __tcp_set_rto gives
    // RTO = R + max(2R, 200 ms) = 4 + max(8, 200) = 204 ms (not the initial 1 s).
    let mut s = passive(linux(), &[0.0], 4.0);
    assert_eq!(s.srtt(), Some(Duration::from_millis(4)));
    assert_eq!(s.rto(), Duration::from_millis(204));
    // The first response at 220 ms: one segment out, PTO = 2·srtt + 200 ms =
    // 208 ms, capped by the RTO from the head's send (tcp_rto_delta_us):
    // 204 ms, so the lost response is resent at 424 ms, not at 1220 ms.
    let mut out = vec![];
    s.write(ms(220.0), 100, &mut out);
    assert_eq!(s.timer_deadline(), Some(ms(424.0)));
    // Only the handshake's ACK is timed so: a later ACK that acknowledges
    // nothing new gives no sample.
    s.on_packet(ms(230.0), &super::tests::ack_packet(0), &mut out);
    assert_eq!(s.stats().rtt_samples, 1);
    // The ns3 profile keeps no handshake sample at the passive end (the
    // initial RTO until data is acknowledged; docs/validation.md).
    let n = passive(cfg(Profile::Ns3), &[0.0], 4.0);
    assert_eq!((n.srtt(), n.rto()), (None, Duration::from_secs(1)));
}

#[test]
fn a_retransmitted_syn_ack_is_timed_only_by_its_timestamp() {
    // SYN-ACKs at 0 and 1000 ms (the first lost, the client's SYN resent),
    // the ACK at 1004 ms. Without timestamps Karn's rule leaves no sample
    // (Linux: req->num_retrans > 0 → rtt_us = -1, no TSecr to fall back on).
    let karn = passive(linux(), &[0.0, 1000.0], 1004.0);
    assert_eq!((karn.srtt(), karn.stats().rtt_samples), (None, 0));
    // With timestamps the ACK echoes the SYN-ACK the client accepted, the
    // second (sent at 1000 ms): R = 4 ms, RTO = 4 + max(8, 200) = 204 ms.
    let ts = TcpConfig {
        timestamps: true,
        ..linux()
    };
    let echo = passive(ts, &[0.0, 1000.0], 1004.0);
    assert_eq!(echo.srtt(), Some(Duration::from_millis(4)));
    assert_eq!(echo.rto(), Duration::from_millis(204));
}

#[test]
fn a_probe_draws_a_sack_and_rack_repairs_the_rest_of_the_tail() {
    let mut h = H::new(linux());
    // 20 ms: three segments (0, 1, 2). More than one out: PTO = 2·SRTT + 2 ms
    // = 22 ms → 42 ms (the RTO, 230 ms, is later).
    h.write(20.0, 3000);
    assert_eq!(h.sent().len(), 3);
    assert_eq!(h.deadline(), Some(ms(42.0)));
    // 30 ms: segment 0 acked, the timed one (sent at 20 ms): a 10 ms sample,
    // SRTT stays 10 ms. The ACK advances: the probe is rescheduled from now
    // with two segments out: 30 + 22 = 52 ms. Segments 1 and 2 are lost.
    h.ack(30.0, 1000, &[]);
    assert_eq!((h.deadline(), h.kind()), (Some(ms(52.0)), TimerKind::Probe));
    // 52 ms: the probe resends the last segment, 2.
    h.fire(52.0);
    assert_eq!(h.sent(), vec![(2000, 1000)]);
    // 62 ms: it arrives out of order: a duplicate ACK SACKing 2. RACK: RACK.rtt
    // = 62 − 52 = 10 ms (a retransmission, but not below min_rtt 10 ms, so
    // trusted), reference = segment 2 sent at 52 ms. Segment 1 was sent at
    // 20 ms, before it: lost once 10 + reo_wnd − (62 − 20) ≤ 0, which holds
    // (reo_wnd = min(min_rtt/4, SRTT) = 2.5 ms). Fast recovery resends 1 at
    // once: no timeout for the tail.
    h.ack(62.0, 1000, &[(2, 3)]);
    assert_eq!(h.s.ca_state(), CaState::Recovery);
    assert_eq!(h.sent(), vec![(1000, 1000)]);
    h.ack(72.0, 3000, &[]);
    let st = h.s.stats();
    assert_eq!(
        (
            st.tlp_probes,
            st.rack_losses,
            st.fast_recoveries,
            st.rto_count
        ),
        (1, 1, 1, 0)
    );
    assert_eq!(h.s.ca_state(), CaState::Open);
    assert_eq!(h.deadline(), None);
}

// ---- (b) the same loss with the probe off: the RTO ---------------------------

#[test]
fn without_the_probe_the_rto_repairs_the_lone_segment() {
    let mut h = H::new(TcpConfig {
        tlp: Some(false),
        ..linux()
    });
    // 20 ms: the request; RTO = 210 ms → 230 ms, the time the probe would
    // have gone out, but now a timeout: cwnd = 1 MSS, ssthresh = max(10/2,
    // 2) = 5 segments, state Loss, RTO doubled to 420 ms: next expiry 650 ms.
    h.write(20.0, 100);
    h.sent();
    assert_eq!((h.deadline(), h.kind()), (Some(ms(230.0)), TimerKind::Rto));
    h.fire(230.0);
    assert_eq!(h.sent(), vec![(0, 100)]);
    let st = h.s.stats();
    assert_eq!((st.rto_count, st.tlp_probes, st.loss_events), (1, 0, 1));
    assert_eq!(h.s.ca_state(), CaState::Loss);
    assert_eq!((h.cwnd(), h.s.window().ssthresh), (MSS, 5 * MSS));
    assert_eq!(h.s.rto(), Duration::from_millis(420));
    assert_eq!(h.deadline(), Some(ms(650.0)));
}

#[test]
fn without_the_probe_a_tail_loss_waits_for_the_rto() {
    let mut h = H::new(TcpConfig {
        tlp: Some(false),
        ..linux()
    });
    // Three segments at 20 ms, segment 0 acked at 30 ms: the RTO restarts
    // from the ACK (tcp_rearm_rto, no probe or reorder timer pending): 30 +
    // 210 = 240 ms, where the probe would have fired at 52 ms.
    h.write(20.0, 3000);
    h.ack(30.0, 1000, &[]);
    assert_eq!((h.deadline(), h.kind()), (Some(ms(240.0)), TimerKind::Rto));
    h.sent();
    h.fire(240.0);
    assert_eq!(h.s.stats().rto_count, 1);
    assert_eq!(h.sent(), vec![(1000, 1000)], "slow start from one segment");
}

// ---- (c) RACK and the reorder timer ------------------------------------------

#[test]
fn rack_marks_a_segment_lost_once_a_later_one_is_sacked_and_the_window_passes() {
    let mut h = H::new(TcpConfig {
        tlp: Some(false),
        ..linux()
    });
    // Segments 0, 1, 2 at 20 ms; 0 is lost. 30 ms: a duplicate ACK SACKs 1.
    // RACK: RACK.rtt = 30 − 20 = 10 ms; reference = segment 1 (sent at 20 ms,
    // ends at 2000). Segment 0 was sent at the same time and ends lower, so
    // before it. One segment SACKed (< DupThresh 3), no reordering seen:
    // reo_wnd = min(min_rtt/4, SRTT) = min(2.5, 10) = 2.5 ms. Segment 0 waits
    // RACK.rtt + reo_wnd − (now − sent) = 10 + 2.5 − 10 = 2.5 ms; the reorder
    // timer adds 2 ms (TCP_TIMEOUT_MIN): it fires at 30 + 4.5 = 34.5 ms.
    // Segment 2 was sent after the reference (ends higher): not judged.
    h.write(20.0, 3000);
    h.sent();
    h.ack(30.0, 0, &[(1, 2)]);
    assert_eq!(h.s.ca_state(), CaState::Disorder);
    assert!(h.sent().is_empty(), "one duplicate ACK: nothing yet");
    assert_eq!(
        (h.deadline(), h.kind()),
        (Some(ms(34.5)), TimerKind::Reorder)
    );
    // 34.5 ms: 10 + 2.5 − 14.5 < 0: segment 0 is lost; recovery starts and it
    // is resent. The RTO follows the head's transmission (now): 34.5 + 210.
    h.fire(34.5);
    assert_eq!(h.s.ca_state(), CaState::Recovery);
    assert_eq!(h.sent(), vec![(0, 1000)]);
    let st = h.s.stats();
    assert_eq!(
        (st.reorder_timeouts, st.rack_losses, st.fast_recoveries),
        (1, 1, 1)
    );
    assert_eq!((h.deadline(), h.kind()), (Some(ms(244.5)), TimerKind::Rto));
}

#[test]
fn with_dupthresh_segments_sacked_rack_needs_no_window() {
    let mut h = H::new(TcpConfig {
        tlp: Some(false),
        ..linux()
    });
    // Five segments at 20 ms, 0 lost; SACKs of 1, 1–2, 1–3 at 30, 31, 32 ms.
    // 30 ms: wait 2.5 ms → reorder timer at 34.5 ms. 31 ms: RACK.rtt 11 ms,
    // 11 + 2.5 − 11 = 2.5 ms → 35.5 ms. 32 ms: three SACKed: reo_wnd = 0 and
    // 12 + 0 − 12 = 0: lost at once (Linux: remaining ≤ 0), recovery at 32 ms.
    h.write(20.0, 5000);
    h.sent();
    h.ack(30.0, 0, &[(1, 2)]);
    assert_eq!(h.deadline(), Some(ms(34.5)));
    h.ack(31.0, 0, &[(1, 3)]);
    assert_eq!(h.deadline(), Some(ms(35.5)));
    assert!(h.sent().is_empty());
    h.ack(32.0, 0, &[(1, 4)]);
    assert_eq!(h.s.ca_state(), CaState::Recovery);
    assert_eq!(h.sent(), vec![(0, 1000)]);
    assert_eq!(h.s.stats().reorder_timeouts, 0);
}

#[test]
fn without_rack_one_duplicate_ack_leaves_the_loss_to_the_rto() {
    let mut h = H::new(TcpConfig {
        tlp: Some(false),
        rack: Some(false),
        ..linux()
    });
    // The same loss: RFC 6675 needs 3 duplicate ACKs (or 3 SACKed segments
    // above); with one, the RTO (230 ms) remains.
    h.write(20.0, 3000);
    h.sent();
    h.ack(30.0, 0, &[(1, 2)]);
    assert_eq!(h.s.ca_state(), CaState::Disorder);
    assert_eq!((h.deadline(), h.kind()), (Some(ms(230.0)), TimerKind::Rto));
}

// ---- (d) early retransmit ----------------------------------------------------

fn early_retransmit_cfg(recovery: Recovery, er: bool) -> TcpConfig {
    TcpConfig {
        recovery,
        prr: recovery == Recovery::Sack,
        tlp: Some(false),
        rack: Some(false),
        early_retransmit: Some(er),
        ..linux()
    }
}

#[test]
fn early_retransmit_resends_on_the_first_duplicate_ack_of_two_segments() {
    // Two segments at 20 ms, 0 lost, nothing more to send: 2 < 4 outstanding,
    // so ER_thresh = 2 − 1 = 1. With SACK (RFC 5827 §3.2: oldSeg − 1 = 1
    // segment SACKed) the duplicate ACK at 30 ms SACKing 1 starts recovery.
    let mut h = H::new(early_retransmit_cfg(Recovery::Sack, true));
    h.write(20.0, 2000);
    h.sent();
    h.ack(30.0, 0, &[(1, 2)]);
    assert_eq!(h.s.ca_state(), CaState::Recovery);
    assert_eq!(h.sent(), vec![(0, 1000)]);
    assert_eq!(
        (h.s.stats().early_retransmits, h.s.stats().fast_recoveries),
        (1, 1)
    );
    // Without SACK: one duplicate ACK = oldSeg − 1.
    let mut h = H::new(early_retransmit_cfg(Recovery::NewReno, true));
    h.write(20.0, 2000);
    h.sent();
    h.ack(30.0, 0, &[]);
    assert_eq!(h.sent(), vec![(0, 1000)]);
    assert_eq!(h.s.stats().early_retransmits, 1);
    // Switched off: the duplicate ACK is only counted; the RTO (230 ms) stays.
    let mut h = H::new(early_retransmit_cfg(Recovery::Sack, false));
    h.write(20.0, 2000);
    h.sent();
    h.ack(30.0, 0, &[(1, 2)]);
    assert_eq!(h.s.ca_state(), CaState::Disorder);
    assert!(h.sent().is_empty());
    assert_eq!(h.deadline(), Some(ms(230.0)));
}

#[test]
fn early_retransmit_waits_while_new_data_could_be_sent() {
    // RFC 5827 (3.b): not while unsent data fits the receive window. Initial
    // window 2: of 3000 B written at 20 ms, segments 0 and 1 go out, 2 waits
    // for cwnd. The duplicate ACK SACKing 1 (30 ms) finds 2 outstanding (< 4)
    // but new data ready: no early retransmit; limited transmit (cwnd − pipe
    // = 2 − 1 segments) sends segment 2 instead.
    let mut h = H::new(TcpConfig {
        initial_cwnd: 2,
        ..early_retransmit_cfg(Recovery::Sack, true)
    });
    h.write(20.0, 3000);
    assert_eq!(h.sent(), vec![(0, 1000), (1000, 1000)]);
    h.ack(30.0, 0, &[(1, 2)]);
    assert_eq!(h.sent(), vec![(2000, 1000)]);
    assert_eq!(h.s.stats().early_retransmits, 0);
    assert_eq!(h.s.ca_state(), CaState::Disorder);
}

// ---- the RTO measured from the head ------------------------------------------

#[test]
fn the_probe_after_new_data_is_capped_by_the_rto_of_the_head() {
    // 20 ms: one segment (probe for 230 ms, see above). 220 ms: a second
    // request. Linux first re-arms the RTO in place of the probe (from the
    // head: 20 + 210 = 230 ms), then reschedules the probe: two segments out,
    // 2·10 + 2 = 22 ms → 242 ms, but never after the RTO: the time left is
    // 230 − 220 = 10 ms → 230 ms. Measured from now instead
    // (rto_from_head = false) the cap is a whole RTO, 210 ms: 242 ms.
    for (from_head, want) in [(true, 230.0), (false, 242.0)] {
        let mut h = H::new(TcpConfig {
            rto_from_head: Some(from_head),
            ..linux()
        });
        h.write(20.0, 100);
        h.write(220.0, 100);
        assert_eq!(h.sent().len(), 2);
        assert_eq!(
            (h.deadline(), h.kind()),
            (Some(ms(want)), TimerKind::Probe),
            "rto_from_head = {from_head}"
        );
    }
}

// ---- (e) the ns3 profile: none of these --------------------------------------

#[test]
fn the_ns3_profile_has_no_probe_no_rack_and_no_early_retransmit() {
    let c = cfg(Profile::Ns3);
    assert!(!c.tlp() && !c.rack() && !c.early_retransmit() && !c.rto_from_head());
    // The lone lost segment: the RTO, 1 s after the request (20 ms).
    let mut h = H::new(c.clone());
    h.write(20.0, 100);
    assert_eq!((h.deadline(), h.kind()), (Some(ms(1020.0)), TimerKind::Rto));
    h.fire(1020.0);
    assert_eq!((h.s.stats().rto_count, h.s.stats().tlp_probes), (1, 0));
    // Two segments, one duplicate ACK SACKing the second: no reorder timer,
    // no early retransmit; the RTO stays where it was.
    let mut h = H::new(c);
    h.write(20.0, 2000);
    h.sent();
    h.ack(30.0, 0, &[(1, 2)]);
    assert!(h.sent().is_empty());
    assert_eq!((h.deadline(), h.kind()), (Some(ms(1020.0)), TimerKind::Rto));
    let st = h.s.stats();
    assert_eq!(
        (
            st.tlp_probes,
            st.rack_losses,
            st.reorder_timeouts,
            st.early_retransmits
        ),
        (0, 0, 0, 0)
    );
}

#[test]
fn the_ns3_profile_runs_them_when_asked() {
    // Explicit opt-in works in either profile: the lone segment is probed at
    // min(2·10 + 200, RTO 1 s) = 220 ms after the request: 240 ms.
    let mut h = H::new(TcpConfig {
        tlp: Some(true),
        ..cfg(Profile::Ns3)
    });
    h.write(20.0, 100);
    assert_eq!(
        (h.deadline(), h.kind()),
        (Some(ms(240.0)), TimerKind::Probe)
    );
    h.fire(240.0);
    assert_eq!(h.s.stats().tlp_probes, 1);
}
