//! Scripted sender cases: hand-built ACK sequences against hand-computed
//! windows (MSS 1000 B to keep the arithmetic readable).

use super::*;
use crate::tcp::cc::{LossCause, NewReno, Profile};
use crate::tcp::Recovery;

const MSS: u64 = 1000;

struct Harness {
    s: Sender,
    out: Vec<Packet>,
}

fn config() -> TcpConfig {
    TcpConfig {
        mss: MSS,
        initial_cwnd: 10,
        timestamps: false,
        recovery: Recovery::NewReno,
        prr: false,
        ..TcpConfig::default()
    }
}

fn with_recovery(recovery: Recovery, prr: bool) -> TcpConfig {
    TcpConfig {
        recovery,
        prr,
        ..config()
    }
}

impl Harness {
    /// Open a connection at t = 0 and complete the handshake at 10 ms.
    fn new(cfg: TcpConfig, total: u64) -> Self {
        Self::with_cc(cfg, AnyCc::NewReno(NewReno::new(Profile::Ns3)), total)
    }

    /// As `new`, with the controller the registry builds for `cfg.cc`.
    fn from_registry(cfg: TcpConfig, total: u64) -> Self {
        let desc = crate::tcp::cc::lookup(&cfg.cc).expect("a registry name");
        let cc = desc.build(&cfg.cc_params, cfg.profile);
        Self::with_cc(cfg, cc, total)
    }

    fn with_cc(cfg: TcpConfig, cc: AnyCc, total: u64) -> Self {
        let mut h = Harness {
            s: Sender::new(cfg, cc, 0, NodeId(1), total),
            out: vec![],
        };
        h.s.start(Time::ZERO, &mut h.out);
        assert_eq!(h.out.pop().map(|p| p.kind), Some(PacketKind::Syn));
        let syn_ack = Packet {
            kind: PacketKind::SynAck,
            rwnd: 1 << 30,
            ..ack_packet(0)
        };
        h.s.on_packet(Time(10_000_000), &syn_ack, &mut h.out);
        h
    }

    fn ack(&mut self, t_ms: u64, ack: u64) {
        self.s
            .on_packet(Time(t_ms * 1_000_000), &ack_packet(ack), &mut self.out);
    }

    /// An ACK carrying SACK blocks given in segment numbers [start, end).
    fn sack(&mut self, t_ms: u64, ack: u64, blocks: &[(u64, u64)]) {
        let mut p = ack_packet(ack);
        for (i, &(s, e)) in blocks.iter().enumerate() {
            p.sack[i] = (s * MSS, e * MSS);
        }
        p.sack_len = blocks.len() as u8;
        self.s.on_packet(Time(t_ms * 1_000_000), &p, &mut self.out);
    }

    /// Data segments emitted since the last call, as (seq / MSS) numbers.
    fn sent(&mut self) -> Vec<u64> {
        self.out
            .drain(..)
            .filter(|p| p.kind == PacketKind::Data)
            .map(|p| p.seq / MSS)
            .collect()
    }

    fn cwnd(&self) -> u64 {
        self.s.window().cwnd
    }
    fn ssthresh(&self) -> u64 {
        self.s.window().ssthresh
    }
}

pub(super) fn ack_packet(ack: u64) -> Packet {
    Packet {
        flow: 0,
        dst: NodeId(0),
        kind: PacketKind::Ack,
        seq: 0,
        len: 0,
        ack,
        rwnd: 1 << 30,
        ts_val: Time::ZERO,
        ts_ecr: Time::ZERO,
        ip_bytes: 40,
        sack: Default::default(),
        sack_len: 0,
        frag_index: 0,
        frag_count: 1,
        piggyback: false,
        push: false,
    }
}

/// The harness with RFC 6582 NewReno (FlightSize, window inflation) in place
/// of ns-3's SACK-less sent list: the recovery NewReno without SACK runs
/// under the `linux` and `ns2` profiles (`StackBehaviour::reno_sack_marks`).
fn classic(mut h: Harness) -> Harness {
    h.s.c.b.reno_sack_marks = false;
    h.s.rec = AnyRecovery::NewReno(crate::tcp::recovery::NewReno::default());
    h
}

/// Initial window of segments 0..10, then ACKs for segments 0 and 1 (slow
/// start: cwnd 12 segments, segments 10..14 sent). Segment 2 is lost.
fn after_two_acks(cfg: TcpConfig) -> Harness {
    let mut h = Harness::new(cfg, 1_000_000);
    assert_eq!(h.sent(), (0..10).collect::<Vec<_>>());
    h.ack(20, 1000);
    h.ack(21, 2000);
    assert_eq!(h.cwnd(), 12 * MSS);
    assert_eq!(h.sent(), vec![10, 11, 12, 13]);
    h
}

#[test]
fn single_loss_fast_retransmit_and_full_ack() {
    let mut h = classic(after_two_acks(config()));
    // Dupacks 1 and 2: limited transmit sends one new segment each.
    h.ack(22, 2000);
    assert_eq!(h.sent(), vec![14]);
    assert_eq!(h.s.ca_state(), CaState::Disorder);
    h.ack(23, 2000);
    assert_eq!(h.sent(), vec![15]);
    assert_eq!(h.cwnd(), 12 * MSS, "limited transmit leaves cwnd alone");
    // Dupack 3: FlightSize = 16 − 2 = 14 segments; ssthresh 7, cwnd 7 + 3.
    h.ack(24, 2000);
    assert_eq!(h.s.ca_state(), CaState::Recovery);
    assert_eq!(h.ssthresh(), 7 * MSS);
    assert_eq!(h.cwnd(), 10 * MSS);
    assert_eq!(
        h.sent(),
        vec![2],
        "fast retransmit of the first unacked segment"
    );
    // Each further dupack inflates by one MSS; new data once cwnd > flight (14).
    for t in 0..4 {
        h.ack(25 + t, 2000);
    }
    assert_eq!(h.cwnd(), 14 * MSS);
    assert!(h.sent().is_empty());
    h.ack(30, 2000);
    assert_eq!(h.sent(), vec![16]);
    // Full ACK (covers recover = 16 segments): deflate to ssthresh, back to Open;
    // the same ACK then grows the window (ns-3 ProcessAck): 7000 + 1000²/7000.
    h.ack(40, 16_000);
    assert_eq!(h.s.ca_state(), CaState::Open);
    assert_eq!(h.cwnd(), 7 * MSS + 142);
    assert_eq!(h.s.stats().fast_recoveries, 1);
    assert_eq!(h.s.stats().retransmissions, 1);
}

#[test]
fn ns3_single_loss_without_sack_follows_the_reno_marks() {
    // The same loss under ns-3.44's rules (recovery/reno_sack.rs).
    let mut h = after_two_acks(config());
    // DupAck in Disorder (limited transmit): AddRenoSack marks 3, then 4;
    // BytesInFlight 12 − 1 leaves room for one new segment each time.
    h.ack(22, 2000);
    assert_eq!(h.sent(), vec![14]);
    h.ack(23, 2000);
    assert_eq!(h.sent(), vec![15]);
    // Third: EnterRecovery marks 5 and the head 2 lost: 14 − 3 − 1 = 10 in
    // flight, ssthresh = GetSsThresh(10 + 1 segments) = 5 500 B = cwnd
    // (TcpClassicRecovery), 2 resent (11 in flight).
    h.ack(24, 2000);
    assert_eq!(h.s.ca_state(), CaState::Recovery);
    assert_eq!((h.ssthresh(), h.cwnd()), (5_500, 5_500));
    assert_eq!(h.sent(), vec![2]);
    // Each duplicate ACK marks one more (6, 7, ...): new data once
    // 11 − k + 1 ≤ 5.5 segments, at the 7th (k = 7: 4 in flight).
    for t in 0..6 {
        h.ack(25 + t, 2000);
    }
    assert!(h.sent().is_empty());
    h.ack(31, 2000);
    assert_eq!(h.sent(), vec![16]);
    assert_eq!(h.cwnd(), 5_500, "no inflation of cwnd itself");
    // Full ACK: cwnd = ssthresh, then congestion avoidance (TcpNewReno:
    // 1000² / 5500 = 181): 5 681 B; 16 alone in flight (unmarked), so 17..20
    // go out (5 + 1 > 5.681 stops).
    h.ack(40, 16_000);
    assert_eq!(h.s.ca_state(), CaState::Open);
    assert_eq!(h.cwnd(), 5_681);
    assert_eq!(h.sent(), vec![17, 18, 19, 20]);
    assert_eq!(h.s.stats().retransmissions, 1);
}

#[test]
fn several_losses_in_one_window_use_partial_acks() {
    let mut h = classic(after_two_acks(config()));
    for t in 0..3 {
        h.ack(22 + t, 2000);
    }
    assert_eq!(h.sent(), vec![14, 15, 2]);
    let timer_before = h.s.timer_deadline();
    // Segment 5 was also lost: the retransmission of 2 brings a partial ACK at 5.
    h.ack(50, 5000);
    assert_eq!(
        h.s.ca_state(),
        CaState::Recovery,
        "NewReno stays in recovery"
    );
    assert_eq!(h.sent(), vec![5], "the next hole is retransmitted at once");
    // Deflation: cwnd 10 − 3 acked + 1 = 8 segments.
    assert_eq!(h.cwnd(), 8 * MSS);
    // The first partial ACK restarts the timer (impatient variant)...
    let after_first = h.s.timer_deadline();
    assert_ne!(after_first, timer_before);
    // ...a second partial ACK (segment 8 lost too) does not.
    h.ack(60, 8000);
    assert_eq!(h.sent(), vec![8]);
    assert_eq!(h.s.timer_deadline(), after_first);
    h.ack(70, 16_000);
    assert_eq!(h.s.ca_state(), CaState::Open);
    assert_eq!(
        h.s.stats().fast_recoveries,
        1,
        "one recovery episode for three losses"
    );
    assert_eq!(h.s.stats().retransmissions, 3);
    assert_eq!(h.cwnd(), 7 * MSS + 142);
}

#[test]
fn rto_during_recovery_goes_back_to_slow_start() {
    let mut h = classic(after_two_acks(config()));
    for t in 0..3 {
        h.ack(22 + t, 2000);
    }
    h.sent();
    let deadline = h.s.timer_deadline().unwrap();
    // Restarted by the last new ACK (21 ms); RTO 1 s (the minimum).
    assert_eq!(deadline, Time(21_000_000) + Duration::from_secs(1));
    h.s.on_timer(deadline, &mut h.out);
    assert_eq!(h.s.ca_state(), CaState::Loss);
    assert_eq!(h.s.stats().rto_count, 1);
    assert_eq!(h.s.stats().slow_starts_after_loss, 1);
    assert_eq!(h.cwnd(), MSS);
    assert_eq!(h.ssthresh(), 7 * MSS);
    assert_eq!(h.sent(), vec![2], "go back to snd_una with one segment");
    assert_eq!(h.s.rto(), Duration::from_secs(2), "exponential backoff");
    // Dupacks are ignored in Loss.
    for t in 0..5 {
        h.ack(1100 + t, 2000);
    }
    assert!(h.sent().is_empty());
    assert_eq!(h.s.stats().fast_recoveries, 1);
    // A repeated timeout doubles again but does not cut ssthresh twice.
    let d2 = h.s.timer_deadline().unwrap();
    assert_eq!(d2, deadline + Duration::from_secs(2));
    h.s.on_timer(d2, &mut h.out);
    assert_eq!(h.s.stats().rto_count, 2);
    assert_eq!(h.s.stats().slow_starts_after_loss, 1);
    assert_eq!(h.ssthresh(), 7 * MSS);
    assert_eq!(h.s.rto(), Duration::from_secs(4));
    assert_eq!(h.sent(), vec![2], "each expiry resends the head");
    // The retransmission is acked: slow start from one segment, two out.
    h.ack(4000, 3000);
    assert_eq!(h.cwnd(), 2 * MSS);
    assert_eq!(
        h.sent(),
        vec![3, 4],
        "go-back-N resends what followed the hole"
    );
}

#[test]
fn fast_retransmit_only_once_the_ack_covers_recover() {
    // RFC 6582 step 1: after an RTO (recover = 14 segments sent), dupacks below
    // recover start no fast retransmit (they arrive in Loss); an ACK of
    // everything sent before the timeout covers recover, so three dupacks there
    // do (the segment starting at recover was lost).
    let mut h = after_two_acks(config());
    let deadline = h.s.timer_deadline().unwrap();
    h.s.on_timer(deadline, &mut h.out);
    h.sent();
    h.ack(1100, 3000); // Loss ends only at recover; still Loss
    for t in 0..3 {
        h.ack(1101 + t, 3000);
    }
    assert_eq!(h.s.ca_state(), CaState::Loss);
    h.ack(1200, 14_000); // covers recover: back to Open
    assert_eq!(h.s.ca_state(), CaState::Open);
    for t in 0..3 {
        h.ack(1300 + t, 14_000);
    }
    assert_eq!(h.s.ca_state(), CaState::Recovery);
    assert_eq!(h.s.stats().fast_recoveries, 1);
}

#[test]
fn limited_transmit_can_be_switched_off() {
    let mut h = after_two_acks(TcpConfig {
        limited_transmit: false,
        ..config()
    });
    h.ack(22, 2000);
    h.ack(23, 2000);
    assert!(h.sent().is_empty());
}

#[test]
fn dupack_threshold_is_configurable() {
    let mut h = classic(after_two_acks(TcpConfig {
        dupack_threshold: 5,
        limited_transmit: false,
        ..config()
    }));
    for t in 0..4 {
        h.ack(22 + t, 2000);
    }
    assert_eq!(h.s.ca_state(), CaState::Disorder);
    h.ack(30, 2000);
    assert_eq!(h.s.ca_state(), CaState::Recovery);
    // No limited transmit: FlightSize 14 − 2 = 12 → ssthresh 6, cwnd = 6 + 5 dupacks.
    assert_eq!(h.ssthresh(), 6 * MSS);
    assert_eq!(h.cwnd(), 11 * MSS);
}

#[test]
fn karn_rule_without_timestamps() {
    let mut h = Harness::new(config(), 1_000_000);
    h.sent();
    // The handshake gave the first sample (10 ms); segment 0 is timed.
    assert_eq!(h.s.stats().rtt_samples, 1);
    h.ack(30, 1000);
    assert_eq!(
        h.s.stats().rtt_samples,
        2,
        "timed segment acked: 20 ms sample"
    );
    assert_eq!(h.s.stats().rtt_max, Some(Duration::from_millis(20)));
    // After a timeout the retransmitted segment gives no sample. The ns3
    // profile still drops the backoff when the new ACK restarts the timer
    // (ns-3 NewAck); the linux profile keeps it until a valid sample.
    let d = h.s.timer_deadline().unwrap();
    h.s.on_timer(d, &mut h.out);
    assert_eq!(h.s.rto(), Duration::from_secs(2));
    h.ack(2000, 2000);
    assert_eq!(h.s.stats().rtt_samples, 2);
    assert_eq!(h.s.rto(), Duration::from_secs(1), "ns3: backoff dropped");

    let mut h = Harness::new(
        TcpConfig {
            profile: Profile::Linux,
            ..config()
        },
        1_000_000,
    );
    h.sent();
    h.ack(30, 1000);
    let d = h.s.timer_deadline().unwrap();
    h.s.on_timer(d, &mut h.out);
    let backed_off = h.s.rto();
    h.ack(d.0 / 1_000_000 + 100, 2000);
    assert_eq!(h.s.stats().rtt_samples, 2);
    assert_eq!(
        h.s.rto(),
        backed_off,
        "linux: backoff kept until a valid sample"
    );
}

#[test]
fn send_buffer_and_receive_window_cap_the_flight() {
    let mut h = Harness::new(
        TcpConfig {
            send_buffer: 5_500,
            ..config()
        },
        1_000_000,
    );
    // Only five full segments fit the send buffer; no runt of 500 B mid-transfer.
    assert_eq!(h.sent(), vec![0, 1, 2, 3, 4]);
    let mut small_rwnd = ack_packet(1000);
    small_rwnd.rwnd = 2000;
    h.s.on_packet(Time(20_000_000), &small_rwnd, &mut h.out);
    assert!(
        h.sent().is_empty(),
        "4 segments in flight exceed a 2-segment window"
    );
}

#[test]
fn tail_segment_may_be_short() {
    let mut h = Harness::new(config(), 2_500);
    let lens: Vec<u32> = h.out.drain(..).map(|p| p.len).collect();
    assert_eq!(lens, vec![1000, 1000, 500]);
    h.ack(30, 2_500);
    assert!(h.s.is_done());
    assert_eq!(h.s.timer_deadline(), None);
}

#[test]
fn syn_is_retransmitted_with_backoff() {
    let mut s = Sender::new(
        config(),
        AnyCc::NewReno(NewReno::new(Profile::Ns3)),
        0,
        NodeId(1),
        10,
    );
    let mut out = vec![];
    s.start(Time::ZERO, &mut out);
    assert_eq!(s.timer_deadline(), Some(Time(3_000_000_000)));
    s.on_timer(Time(3_000_000_000), &mut out);
    assert_eq!(out.len(), 2);
    assert_eq!(s.timer_deadline(), Some(Time(9_000_000_000)));
    assert_eq!(s.stats().syn_retransmissions, 1);
}

#[test]
fn the_connection_attempt_fails_after_the_allowed_syn_retransmissions() {
    // ns-3 (ConnCount 6): SYNs at 0, 3, 9, 21, 45 and 93 s (timeout 3 s
    // doubling); the sixth times out at 93 + 96 = 189 s and the attempt fails.
    let mut s = Sender::new(
        config(),
        AnyCc::NewReno(NewReno::new(Profile::Ns3)),
        0,
        NodeId(1),
        10,
    );
    let mut out = vec![];
    s.start(Time::ZERO, &mut out);
    let mut syn_times = vec![0];
    while let Some(t) = s.timer_deadline() {
        s.on_timer(t, &mut out);
        if s.aborted().is_none() {
            syn_times.push(t.0 / 1_000_000_000);
        } else {
            assert_eq!(t, Time(189_000_000_000));
        }
    }
    assert_eq!(syn_times, vec![0, 3, 9, 21, 45, 93]);
    assert_eq!(out.len(), 6);
    assert_eq!(s.aborted(), Some("syn_retries"));
    assert_eq!(s.stats().syn_retransmissions, 5);
}

#[test]
fn the_user_timeout_drops_the_connection_after_the_first_timeout() {
    // TCP_USER_TIMEOUT 1.5 s, RTO 1 s (ns3 floor), data sent at 10 ms (the
    // SYN-ACK): the first expiry at 1.01 s retransmits (Linux never gives up on
    // the first); the next would fire at 1.01 + 2 s (backed off) but is clamped
    // to the user timeout, 0.01 + 1.5 s, and drops the connection there.
    let cfg = TcpConfig {
        user_timeout_ns: Some(1_500_000_000),
        ..config()
    };
    let mut h = Harness::new(cfg, 1_000_000);
    h.sent();
    let first = h.s.timer_deadline().expect("a timer");
    assert_eq!(first, Time(1_010_000_000));
    h.s.on_timer(first, &mut h.out);
    assert_eq!((h.s.aborted(), h.s.stats().rto_count), (None, 1));
    assert_eq!(h.s.timer_deadline(), Some(Time(1_510_000_000)));
    h.s.on_timer(Time(1_510_000_000), &mut h.out);
    assert_eq!(h.s.aborted(), Some("user_timeout"));
    assert_eq!(h.s.timer_deadline(), None);
}

#[test]
fn a_user_timeout_shorter_than_the_first_rto_drops_just_after_it() {
    // TCP_USER_TIMEOUT 100 ms < RTO 1 s: the first expiry (1.01 s) still
    // retransmits; the drop follows 1 ns later, never in the past.
    let cfg = TcpConfig {
        user_timeout_ns: Some(100_000_000),
        ..config()
    };
    let mut h = Harness::new(cfg, 1_000_000);
    h.sent();
    h.s.on_timer(Time(1_010_000_000), &mut h.out);
    assert_eq!(h.s.aborted(), None);
    assert_eq!(h.s.timer_deadline(), Some(Time(1_010_000_001)));
    h.s.on_timer(Time(1_010_000_001), &mut h.out);
    assert_eq!(h.s.aborted(), Some("user_timeout"));
}

#[test]
fn the_connection_is_dropped_after_the_allowed_timeouts_in_a_row() {
    // Two timeouts allowed: the first two expiries retransmit (RTO 1 s, then
    // 2 s backed off), the third gives up. An ACK of new data in between
    // starts the count again.
    let cfg = TcpConfig {
        data_retries: Some(2),
        ..config()
    };
    let mut h = Harness::new(cfg, 1_000_000);
    h.sent();
    let fire = |h: &mut Harness| {
        let t = h.s.timer_deadline().expect("a timer");
        h.s.on_timer(t, &mut h.out);
    };
    fire(&mut h);
    fire(&mut h);
    assert_eq!((h.s.aborted(), h.s.stats().rto_count), (None, 2));
    h.ack(5_000, MSS);
    fire(&mut h);
    fire(&mut h);
    assert_eq!((h.s.aborted(), h.s.stats().rto_count), (None, 4));
    fire(&mut h);
    assert_eq!(h.s.aborted(), Some("data_retries"));
    assert_eq!(
        h.s.stats().rto_count,
        4,
        "the expiry that gives up resends nothing"
    );
    assert_eq!(h.s.timer_deadline(), None);
}

// ---- recovery variants ---------------------------------------------------------

/// Segments 2, 5 and 8 of the first window lost; every later segment arrives.
/// Returns the harness after the third dupACK (segments 3, 4, 6 arrived).
fn three_losses(cfg: TcpConfig) -> Harness {
    let mut h = after_two_acks(cfg);
    h.ack(22, 2000);
    h.ack(23, 2000);
    h.ack(24, 2000);
    h
}

#[test]
fn tahoe_goes_back_to_one_segment_and_resends_the_window() {
    let mut h = three_losses(with_recovery(Recovery::Tahoe, false));
    assert_eq!(h.s.ca_state(), CaState::Loss);
    assert_eq!(h.cwnd(), MSS);
    assert_eq!(h.ssthresh(), 7 * MSS);
    assert_eq!(
        h.sent(),
        vec![14, 15, 2],
        "limited transmit, then the retransmission"
    );
    assert_eq!(h.s.stats().fast_recoveries, 0, "Tahoe has no fast recovery");
    assert_eq!(h.s.stats().slow_starts_after_loss, 1);
    // The retransmission fills the first hole: slow start resends 3 and 4 even
    // though the receiver has them (go back N).
    h.ack(40, 5000);
    assert_eq!(h.cwnd(), 2 * MSS);
    assert_eq!(h.sent(), vec![5, 6]);
}

#[test]
fn reno_leaves_recovery_on_the_first_partial_ack_and_halves_again() {
    let mut h = three_losses(with_recovery(Recovery::Reno, false));
    assert_eq!(h.sent(), vec![14, 15, 2]);
    assert_eq!(h.s.ca_state(), CaState::Recovery);
    // The retransmission of 2 brings a partial ACK: Reno exits with cwnd = 7.
    h.ack(50, 5000);
    assert_eq!(h.s.ca_state(), CaState::Open);
    assert_eq!(h.cwnd(), 7 * MSS + 142);
    assert!(h.sent().is_empty(), "flight 11 segments exceeds cwnd 7.1");
    // Three more dupACKs for the hole at 5 start a second recovery and halve again.
    for t in 0..3 {
        h.ack(51 + t, 5000);
    }
    assert_eq!(h.s.stats().fast_recoveries, 2);
    // FlightSize = 16 − 5 = 11 → ssthresh 5.5 segments.
    assert_eq!(h.ssthresh(), 5_500);
}

#[test]
fn newreno_recovers_the_same_losses_in_one_episode() {
    let mut h = classic(after_two_acks(config()));
    for t in 22..25 {
        h.ack(t, 2000);
    }
    h.ack(50, 5000);
    h.ack(60, 8000);
    h.ack(70, 16_000);
    assert_eq!(h.s.stats().fast_recoveries, 1);
    assert_eq!(h.ssthresh(), 7 * MSS, "one halving for three losses");
}

#[test]
fn sack_recovery_retransmits_every_hole_at_once() {
    let mut h = after_two_acks(with_recovery(Recovery::Sack, false));
    // DupACKs SACK 3, then 3..5, then 3..5 + 6..7: three dupACKs.
    h.sack(22, 2000, &[(3, 4)]);
    assert_eq!(
        h.sent(),
        vec![14],
        "RFC 6675 limited transmit: cwnd − pipe ≥ 1 MSS"
    );
    h.sack(23, 2000, &[(3, 5)]);
    assert_eq!(h.sent(), vec![15]);
    h.sack(24, 2000, &[(6, 7), (3, 5)]);
    assert_eq!(h.s.ca_state(), CaState::Recovery);
    // pipe at entry: 16 − 2 outstanding = 14 segments, 3 SACKed, 2 lost (2 is
    // lost: 3 SACKed above) → 14 − 3 − 1 = 10; ssthresh = pipe/2 = 5 (ns-3 input).
    assert_eq!(h.ssthresh(), 5 * MSS);
    assert_eq!(h.cwnd(), 5 * MSS);
    let first = h.sent();
    assert_eq!(first[0], 2, "the head goes out first");
    // More SACKs: 5 becomes lost (3 SACKed segments above: 6, 7, 9) and is
    // retransmitted by NextSeg rule 1 as soon as pipe allows.
    h.sack(25, 2000, &[(9, 10), (6, 8), (3, 5)]);
    h.sack(26, 2000, &[(9, 14), (6, 8), (3, 5)]);
    let retx: Vec<u64> = h.sent().into_iter().filter(|&s| s < 16).collect();
    assert!(retx.contains(&5), "hole 5 retransmitted: {retx:?}");
    // The cumulative ACK passes recover: back to Open with cwnd = ssthresh,
    // grown by the same ACK (5000 + 1000²/5000).
    h.sack(40, 16_000, &[]);
    assert_eq!(h.s.ca_state(), CaState::Open);
    assert_eq!(h.cwnd(), 5 * MSS + 200);
    assert_eq!(h.s.stats().fast_recoveries, 1);
}

/// The linux profile with RFC 6675 loss marking: RACK and the probe off.
/// (The scripted ACK times below are no real network's: RACK would judge the
/// segments sent before a retransmission lost by the time its ACK arrives.)
fn linux_rfc6675(prr: bool) -> TcpConfig {
    TcpConfig {
        profile: Profile::Linux,
        tlp: Some(false),
        rack: Some(false),
        ..with_recovery(Recovery::Sack, prr)
    }
}

#[test]
fn prr_spreads_transmissions_over_the_recovery() {
    // RFC 6937 PRR (linux profile); ns-3.44's variant is tested in prr.rs.
    let mut h = after_two_acks(linux_rfc6675(true));
    h.sack(22, 2000, &[(3, 4)]);
    h.sack(23, 2000, &[(3, 5)]);
    h.sack(24, 2000, &[(3, 6)]);
    assert_eq!(h.s.ca_state(), CaState::Recovery);
    // Entry: pipe 16 − 2 − 3 SACKed − 1 lost = 10 segments > ssthresh 5, so the
    // proportional part applies: ⌈1000 · 5000 / 14 000⌉ = 358 B may go out, and
    // the forced head retransmission takes the quota.
    assert_eq!(h.sent(), vec![14, 15, 2]);
    // Ten more SACKs, one segment each. After the head, pipe = 11 segments.
    // Proportional part while pipe > ssthresh: quota ⌈delivered·5000/14 000⌉ −
    // prr_out; it first reaches a whole segment at the 5th SACK (delivered 6000:
    // 2143 − 1000 = 1143 B), pipe 6 → one segment out. Once pipe ≤ ssthresh the
    // slow-start bound refills pipe up to ssthresh: nothing at pipe 5 (13th
    // segment), then one per ACK at pipe 4 (the last three SACKs).
    let mut sent_at = vec![];
    for (t, top) in (7..=16).enumerate() {
        h.sack(25 + t as u64, 2000, &[(3, top)]);
        sent_at.push(h.sent().len());
    }
    assert_eq!(sent_at, vec![0, 0, 0, 0, 1, 0, 0, 1, 1, 1]);
}

#[test]
fn prr_does_not_count_sacked_data_twice_on_a_partial_ack() {
    // RFC 6937 PRR (linux profile); ns-3.44's variant is tested in prr.rs.
    let mut h = after_two_acks(linux_rfc6675(true));
    h.sack(22, 2000, &[(3, 4)]);
    h.sack(23, 2000, &[(3, 5)]);
    h.sack(24, 2000, &[(3, 6)]);
    assert_eq!(h.sent(), vec![14, 15, 2]);
    for (t, top) in (7..=10).enumerate() {
        h.sack(25 + t as u64, 2000, &[(3, top)]);
    }
    assert!(h.sent().is_empty());
    // prr_delivered 5000, prr_out 1000. The retransmission of 2 arrives: the
    // ACK moves to 10 but delivers one segment only (3..9 were SACKed), so
    // ⌈6000 · 5000 / 14 000⌉ − 1000 = 1143 B: one segment, not a burst of three.
    h.sack(40, 10_000, &[]);
    assert_eq!(h.sent(), vec![16]);
}

#[test]
fn sack_timeout_resends_only_unsacked_segments() {
    let mut h = after_two_acks(with_recovery(Recovery::Sack, false));
    h.sack(22, 2000, &[(3, 5)]);
    h.sent();
    let deadline = h.s.timer_deadline().unwrap();
    h.s.on_timer(deadline, &mut h.out);
    assert_eq!(h.s.ca_state(), CaState::Loss);
    assert_eq!(h.sent(), vec![2]);
    // The retransmission is acked up to 3; SACKed 3 and 4 are skipped.
    h.sack(1100, 3000, &[(3, 5)]);
    assert_eq!(
        h.sent(),
        vec![5, 6],
        "slow start: 2 segments, skipping SACKed ones"
    );
}

// ---- registry names that imply a recovery ------------------------------------

/// The harness's configuration with registry entry `cc` and the recovery and
/// PRR setting it implies (that resolution applies them is tested in
/// `spec::tcp`).
fn implied(cc: &str) -> TcpConfig {
    let desc = crate::tcp::cc::lookup(cc).expect("a registry name");
    let base = config();
    TcpConfig {
        cc: cc.into(),
        recovery: desc.implies.recovery.unwrap_or(base.recovery),
        prr: desc.implies.prr.unwrap_or(base.prr),
        ..base
    }
}

#[test]
fn cc_tahoe_means_tahoe_recovery() {
    let cfg = implied("tahoe");
    assert_eq!((cfg.recovery, cfg.prr), (Recovery::Tahoe, false));
    let mut h = Harness::from_registry(cfg, 1_000_000);
    assert_eq!(h.sent(), (0..10).collect::<Vec<_>>());
    h.ack(20, 1000);
    h.ack(21, 2000);
    h.sent();
    for t in 22..25 {
        h.ack(t, 2000);
    }
    // Third dupACK: FlightSize 16 − 2 = 14 segments → ssthresh 7 (ns-3 NewReno:
    // half the bytes in flight); Tahoe has no fast recovery: state Loss, cwnd
    // one segment, the head resent (after the two limited-transmit segments).
    assert_eq!(h.s.ca_state(), CaState::Loss);
    assert_eq!((h.cwnd(), h.ssthresh()), (MSS, 7 * MSS));
    assert_eq!(h.sent(), vec![14, 15, 2]);
}

#[test]
fn cc_reno_means_reno_recovery() {
    let cfg = implied("reno");
    assert_eq!((cfg.recovery, cfg.prr), (Recovery::Reno, false));
    let mut h = Harness::from_registry(cfg, 1_000_000);
    h.ack(20, 1000);
    h.ack(21, 2000);
    for t in 22..25 {
        h.ack(t, 2000);
    }
    // RFC 5681 §3.2 step 3: ssthresh 7, cwnd = 7 + 3 segments.
    assert_eq!(h.s.ca_state(), CaState::Recovery);
    assert_eq!(h.cwnd(), 10 * MSS);
    // An ACK below recover (16 segments) ends Reno's recovery (step 6), where
    // NewReno would stay in recovery.
    h.ack(50, 5000);
    assert_eq!(h.s.ca_state(), CaState::Open);
}

#[test]
fn cc_sack_means_sack_recovery_without_prr() {
    let cfg = implied("sack");
    assert_eq!((cfg.recovery, cfg.prr), (Recovery::Sack, false));
    assert_eq!(cfg.recovery_name(), "sack");
    let mut h = Harness::from_registry(cfg, 1_000_000);
    h.ack(20, 1000);
    h.ack(21, 2000);
    h.sack(22, 2000, &[(3, 4)]);
    h.sack(23, 2000, &[(3, 5)]);
    h.sack(24, 2000, &[(6, 7), (3, 5)]);
    assert_eq!(h.s.ca_state(), CaState::Recovery);
    // pipe at entry: 14 outstanding − 3 SACKed − 1 lost (segment 2) = 10
    // segments; ssthresh 5. Without PRR cwnd is held at ssthresh (RFC 6675 §5
    // step 4.2); ns-3's PRR would have set it to pipe + one segment = 11.
    assert_eq!((h.cwnd(), h.ssthresh()), (5 * MSS, 5 * MSS));
}

// ---- the loss oracle ---------------------------------------------------------

/// Segment 2 lost to a link error (recorded as the simulation would), then
/// three dupACKs: the loss event of a controller named `cc`.
fn link_loss_with(cc: &str) -> Harness {
    let cfg = TcpConfig {
        cc: cc.into(),
        ..config()
    };
    let mut h = Harness::from_registry(cfg, 1_000_000);
    h.ack(20, 1000);
    h.ack(21, 2000);
    h.s.record_drop(2 * MSS, LossCause::Link);
    for t in 22..25 {
        h.ack(t, 2000);
    }
    assert_eq!(h.s.ca_state(), CaState::Recovery);
    h
}

#[test]
fn the_loss_oracle_reaches_the_controller_that_asks_for_it() {
    // newreno-ideal-lp reads the truth (link error): ssthresh = the bytes in
    // flight ns-3 hands GetSsThresh without SACK (EnterRecovery): 16 − 2 = 14
    // outstanding, less 3 Reno-SACK marks and the lost head, plus one
    // segment: 11 segments, instead of NewReno's half.
    let h = link_loss_with("newreno-ideal-lp");
    assert_eq!(h.ssthresh(), 11 * MSS);
    let st = h.s.stats();
    assert_eq!((st.loss_events, st.true_link_losses), (1, 1));
    assert_eq!((st.predicted_link_losses, st.correct_predictions), (1, 1));
    // Plain NewReno does not ask: it halves (11 / 2 segments); the true cause
    // is still counted.
    let h = link_loss_with("newreno");
    assert_eq!(h.ssthresh(), 5_500);
    let st = h.s.stats();
    assert_eq!((st.loss_events, st.true_link_losses), (1, 1));
    assert_eq!(st.predicted_link_losses + st.predicted_congestion_losses, 0);
}

/// A sender held back by a 4-segment receive window, acked one segment at a
/// time: a window that cannot be used must not grow under Linux
/// (`tcp_is_cwnd_limited`), while ns-3 grows it on every ACK.
fn rwnd_limited_cwnd(profile: Profile) -> u64 {
    let cfg = TcpConfig {
        profile,
        initial_cwnd: 4,
        initial_ssthresh: Some(4 * MSS), // congestion avoidance from the start
        ..config()
    };
    let cc = AnyCc::NewReno(NewReno::new(profile));
    let mut h = Harness::with_cc(cfg, cc, 10_000_000);
    h.out.clear();
    for k in 1..=200u64 {
        let mut p = ack_packet(k * MSS);
        p.rwnd = 4 * MSS;
        h.s.on_packet(Time((10 + k) * 1_000_000), &p, &mut h.out);
    }
    h.cwnd()
}

#[test]
fn cwnd_grows_only_while_it_limits_sending_under_linux() {
    // 200 ACKs of one segment in congestion avoidance at cwnd 4: Reno adds
    // MSS/cwnd per ACK when cwnd is the limit. Here rwnd = cwnd = 4 segments,
    // so the sender is at once cwnd- and rwnd-limited; Linux tests cwnd first,
    // so cwnd grows to 5 after 4 ACKs — and then rwnd (4) holds the flight
    // below cwnd: no longer cwnd-limited, no more growth: cwnd stays 5.
    assert_eq!(rwnd_limited_cwnd(Profile::Linux), 5 * MSS);
    // ns-3 grows on every ACK: 4 → 5 after 4 ACKs, → 6 after 5 more, ...
    // roughly sqrt(2·200) + 4 ≈ 20 segments; certainly far above 5.
    assert!(rwnd_limited_cwnd(Profile::Ns3) > 15 * MSS);
}

#[test]
fn ns3_measures_timestamp_rtts_in_whole_milliseconds() {
    // ns-3 TcpOptionTS: TSval = ⌊now/1 ms⌋ and a sample is (⌊now⌋ − TSecr) ms,
    // 1 µs when that is 0 (EstimateRtt). The handshake gives 10 ms (SYN at 0,
    // SYN-ACK at 10 ms), the first SRTT.
    let srtt_after = |profile: Profile, at_ns: u64, echo_ns: u64| {
        let cfg = TcpConfig {
            timestamps: true,
            profile,
            ..config()
        };
        let mut h = Harness::new(cfg, 1_000_000);
        assert_eq!(h.s.srtt(), Some(Duration(10_000_000)));
        let p = Packet {
            ts_ecr: Time(echo_ns),
            ..ack_packet(1000)
        };
        h.s.on_packet(Time(at_ns), &p, &mut h.out);
        h.s.srtt().unwrap().0
    };
    // Echo of 20.4 ms at 23.7 ms: 23 − 20 = 3 ms (Linux: exactly 3.3 ms).
    // SRTT = 7/8 · 10 ms + 1/8 · sample.
    assert_eq!(srtt_after(Profile::Ns3, 23_700_000, 20_400_000), 9_125_000);
    assert_eq!(
        srtt_after(Profile::Linux, 23_700_000, 20_400_000),
        9_162_500
    );
    // Within the same millisecond: 1 µs (7/8 · 10 ms + 125 ns).
    assert_eq!(srtt_after(Profile::Ns3, 20_900_000, 20_400_000), 8_750_125);
}

#[test]
fn ns3_sack_recovery_restarts_the_timer_on_the_first_partial_ack_only() {
    // As sack_recovery_retransmits_every_hole_at_once: recovery from 24 ms,
    // holes at 2 and 5. Partial ACKs at 30 ms (up to 3) and 35 ms (up to 5).
    // ns-3 (NewAck(ack, m_isFirstPartialAck)): only the first restarts the
    // timer, so it stays due an RTO after 30 ms.
    let deadlines = |profile: Profile| {
        let mut h = after_two_acks(TcpConfig {
            profile,
            ..with_recovery(Recovery::Sack, false)
        });
        h.sack(22, 2000, &[(3, 4)]);
        h.sack(23, 2000, &[(3, 5)]);
        h.sack(24, 2000, &[(6, 7), (3, 5)]);
        assert_eq!(h.s.ca_state(), CaState::Recovery);
        h.sack(30, 3000, &[(6, 7), (3, 5)]);
        assert_eq!(h.s.ca_state(), CaState::Recovery);
        let first = (h.s.timer_deadline().unwrap(), Time(30_000_000) + h.s.rto());
        h.sack(35, 5000, &[(6, 7)]);
        assert_eq!(h.s.ca_state(), CaState::Recovery);
        let second = (h.s.timer_deadline().unwrap(), Time(35_000_000) + h.s.rto());
        (first, second)
    };
    let ((t1, due1), (t2, _)) = deadlines(Profile::Ns3);
    assert_eq!(t1, due1);
    assert_eq!(t2, t1, "the second partial ACK leaves the timer");
    // Linux (RACK, RTO re-armed from the head's transmission): the second
    // partial ACK moves the timer again.
    let ((t1, _), (t2, _)) = deadlines(Profile::Linux);
    assert!(
        t2 > t1,
        "Linux re-arms on every ACK of new data: {t1:?} {t2:?}"
    );
}

/// The `ns2` profile's agent: ns-2.35's defaults with MSS 1000 B, a window_
/// of 4 packets (4000 B, also the initial ssthresh) and the NewReno controller.
fn ns2_harness() -> Harness {
    let cfg = TcpConfig {
        recv_buffer: 4 * MSS,
        initial_ssthresh: Some(4 * MSS),
        ..TcpConfig::defaults(Profile::Ns2)
    };
    Harness::with_cc(cfg, AnyCc::NewReno(NewReno::new(Profile::Ns2)), 1_000_000)
}

/// An ACK advertising window_ = 4 packets (ns-2's sender caps itself at
/// window_; in vtlab the receiver advertises it).
fn ns2_ack(h: &mut Harness, t_ms: u64, ack: u64) {
    let mut p = ack_packet(ack);
    p.rwnd = 4 * MSS;
    h.s.on_packet(Time(t_ms * 1_000_000), &p, &mut h.out);
}

#[test]
fn ns2_agent_opens_windowinit_then_slow_starts_to_window_and_times_in_ticks() {
    let mut h = ns2_harness();
    // windowInit_ 2 after the pseudo-SYN (delay_growth_).
    assert_eq!(h.sent(), vec![0, 1]);
    // The SYN (sent at 0, answered at 10 ms) gave 1 tick (rtt_update:
    // ⌊(10 + 0)/10⌋): srtt8 8, rttvar4 2, t_rtxcur_ (2·8 + 8) >> 3 = 3 ticks
    // = 30 ms < minrto_ → 200 ms, armed at the first data packet (10 ms).
    assert_eq!(h.s.rto(), Duration::from_millis(200));
    assert_eq!(h.s.timer_deadline(), Some(Time(210_000_000)));
    // opencwnd: +1 packet per new ACK below ssthresh (4): 3, then 4; then
    // +1/cwnd: 4 + 1/4 = 4.25 packets = 4250 B.
    ns2_ack(&mut h, 30, 1000);
    assert_eq!(h.cwnd(), 3 * MSS);
    assert_eq!(h.sent(), vec![2, 3]);
    ns2_ack(&mut h, 31, 2000);
    assert_eq!(h.cwnd(), 4 * MSS);
    // send_much: t_seqno_ ≤ highest_ack_ + window(), window() =
    // min(int(cwnd_), window_) = 4 with packets 0 and 1 acked: 4 and 5.
    assert_eq!(h.sent(), vec![4, 5]);
    ns2_ack(&mut h, 32, 3000);
    assert_eq!(h.cwnd(), 4 * MSS + 250);
    assert_eq!(h.sent(), vec![6]);
    // cwnd_ keeps growing past window_ (4.25 + 1/4.25 = 4.485 packets:
    // 10⁶/4250 = 235 B) while the flight stays at window_.
    ns2_ack(&mut h, 33, 4000);
    assert_eq!(h.cwnd(), 4 * MSS + 250 + 235);
    assert_eq!(h.sent(), vec![7]);
}

#[test]
fn ns2_timeout_halves_the_window_and_backs_off_in_ticks() {
    let mut h = ns2_harness();
    ns2_ack(&mut h, 30, 1000);
    ns2_ack(&mut h, 31, 2000);
    h.sent();
    // cwnd 4 packets, 4 out (2..5), timer restarted at 31 ms with 200 ms.
    let deadline = h.s.timer_deadline().unwrap();
    assert_eq!(deadline, Time(231_000_000));
    h.s.on_timer(deadline, &mut h.out);
    // slowdown(CLOSE_SSTHRESH_HALF|CLOSE_CWND_RESTART): ssthresh_ =
    // ⌊min(4, 4)/2⌋ = 2, cwnd_ = 1; rtt_backoff: 200 ms · 2 = 400 ms.
    assert_eq!((h.cwnd(), h.ssthresh()), (MSS, 2 * MSS));
    assert_eq!(h.sent(), vec![2]);
    assert_eq!(h.s.rto(), Duration::from_millis(400));
    // The retransmission's ACK is not a sample (Karn; rtt_active_ was
    // cleared): the backoff stays (newack resets t_backoff_ only for the
    // timed packet).
    ns2_ack(&mut h, 300, 3000);
    assert_eq!(h.s.rto(), Duration::from_millis(400));
}

fn ns2_vegas_harness() -> Harness {
    let cfg = TcpConfig {
        cc: "vegas".to_string(),
        recv_buffer: 4 * MSS,
        initial_ssthresh: Some(4 * MSS),
        ..TcpConfig::defaults(Profile::Ns2)
    };
    Harness::from_registry(cfg, 1_000_000)
}

#[test]
fn ns2_vegas_sends_a_full_pseudo_syn_then_one_packet() {
    // VegasTcpAgent::output sends every packet, packet 0 (the pseudo-SYN)
    // too, with the agent's packetSize_ 1000 B and no headersize() added.
    let cfg = TcpConfig {
        cc: "vegas".to_string(),
        ..TcpConfig::defaults(Profile::Ns2)
    };
    let cc = crate::tcp::cc::lookup("vegas")
        .unwrap()
        .build(&Default::default(), Profile::Ns2);
    let mut s = Sender::new(cfg, cc, 0, NodeId(1), 1_000_000);
    let mut out = vec![];
    s.start(Time::ZERO, &mut out);
    assert_eq!((out[0].kind, out[0].ip_bytes), (PacketKind::Syn, 1_000));
    // Another agent's SYN is tcpip_base_hdr_size_ 40 B, its data packets
    // 1000 + headersize() 40 B (TcpAgent::output, useHeaders_ true).
    let reno = AnyCc::NewReno(NewReno::new(Profile::Ns2));
    let mut s = Sender::new(TcpConfig::defaults(Profile::Ns2), reno, 0, NodeId(1), 1);
    s.start(Time::ZERO, &mut out);
    assert_eq!(out[1].ip_bytes, 40);
    let h = ns2_harness();
    assert_eq!(h.out[0].ip_bytes, 1_040);
    // cwnd_ 1 until the ACK after the SYN's: one packet follows the SYN,
    // of 1000 B.
    let mut h = ns2_vegas_harness();
    assert_eq!((h.out.len(), h.out[0].ip_bytes), (1, 1_000));
    assert_eq!((h.sent(), h.cwnd()), (vec![0], MSS));
}

#[test]
fn ns2_vegas_grows_on_the_first_data_ack_and_restarts_from_two_packets() {
    let mut h = ns2_vegas_harness();
    assert_eq!(h.sent(), vec![0]);
    // VegasTcpAgent::recv, the ACK of packet 0 (ns-2's packet 1, last_ack_
    // 0) at 30 ms: cwnd_ = windowInit_ 2; the second round (the SYN's ACK
    // was the first) toggles v_inc_flag_ 0 → 1, delta 0: +1 → 3; window_ 4
    // lets packets 1, 2, 3 go.
    ns2_ack(&mut h, 30, 1000);
    assert_eq!((h.cwnd(), h.sent()), (3 * MSS, vec![1, 2, 3]));
    // The ACK of packet 1 starts the third round (v_begseq_ was 1): the
    // flag goes back to 0, no growth; the window slides: packet 4.
    ns2_ack(&mut h, 50, 2000);
    assert_eq!((h.cwnd(), h.sent()), (3 * MSS, vec![4]));
    let deadline = h.s.timer_deadline().unwrap();
    h.s.on_timer(deadline, &mut h.out);
    // VegasTcpAgent::timeout: slowdown(CLOSE_SSTHRESH_HALF) ⌊3/2⌋ = 1 → 2,
    // cwnd_ = v_slowstart_ 2: packets 2 and 3 again.
    assert_eq!((h.cwnd(), h.ssthresh()), (2 * MSS, 2 * MSS));
    assert_eq!(h.sent(), vec![2, 3]);
}

#[test]
fn ns2_vegas_resends_an_expired_packet_on_the_first_duplicate() {
    let mut h = ns2_vegas_harness();
    assert_eq!(h.sent(), vec![0]);
    // VegasTcpAgent::recv, fine-grained timeout: firstrecv_ = the SYN's
    // 10 ms: v_sa_ 0.08, v_sd_ 0.01. Packet 0's 20 ms (sent at 10 ms, ACK
    // at 30): n = 0.01, v_sa_ 0.09, v_sd_ 0.0175. Packet 1's 20 ms (30 →
    // 50 ms): n = 0.02 − 0.01125 = 0.00875, v_sa_ 0.09875, v_sd_ 0.0175 +
    // 0.00875 − 0.004375 = 0.021875, v_timeout_ (0.0246875 +
    // 0.021875)/2·17/16 ≈ 24.74 ms.
    ns2_ack(&mut h, 30, 1000);
    ns2_ack(&mut h, 50, 2000);
    assert_eq!(h.sent(), vec![1, 2, 3, 4]);
    // The first duplicate at 54 ms: packet 2, sent at 30 ms, is 24 ms old
    // < 24.74 ms and this is not the third: nothing.
    ns2_ack(&mut h, 54, 2000);
    assert_eq!(h.sent(), Vec::<u64>::new());
    // The second at 55 ms: 25 ms ≥ v_timeout_ (vegas_expire): resent at
    // once; window() 3 ≤ 3 → v_newcwnd_ 2, cwnd_ = 2 + 2 duplicates,
    // dupacks_ = 3, so send_much runs: 4 out of window_ 4 from packet 2
    // lets packet 5 go. (NewReno would send only 5, by limited transmit.)
    ns2_ack(&mut h, 55, 2000);
    assert_eq!(h.sent(), vec![2, 5]);
    assert_eq!(h.cwnd(), 4 * MSS);
}

#[test]
fn ns2_needs_an_ack_one_packet_past_recover_for_a_new_fast_retransmit() {
    // dupack_action (Tahoe, Reno, NewReno, Sack1): `highest_ack_ >
    // recover_`, the last packet acknowledged against the highest sent.
    let mut h = ns2_harness();
    assert_eq!(h.sent(), vec![0, 1]);
    // Slow start to window_ 4: packets 2..5 out, snd_max 6 packets.
    ns2_ack(&mut h, 30, 1000);
    ns2_ack(&mut h, 31, 2000);
    assert_eq!(h.sent(), vec![2, 3, 4, 5]);
    // Timeout: recover = 6 packets (recover_ = maxseq_, ns-2's packet 6
    // with the SYN as 0), cwnd 1, ssthresh 2; 2 resent.
    let t = h.s.timer_deadline().unwrap().0 / 1_000_000;
    h.s.on_timer(Time(t * 1_000_000), &mut h.out);
    assert_eq!(h.sent(), vec![2]);
    // ACKs of 2 (cwnd 2: 3, 4 go) and of everything sent before (6000:
    // highest_ack_ 6 = recover_), cwnd 2.5: 6 and 7 go.
    ns2_ack(&mut h, t + 10, 3000);
    ns2_ack(&mut h, t + 20, 6000);
    assert_eq!(h.sent(), vec![3, 4, 6, 7]);
    // Three duplicates of 6000: 6 > 6 fails, no fast retransmit (RFC 6582
    // would start one: the ACK covers recover); limited transmit sends 8, 9.
    for k in 0..3 {
        ns2_ack(&mut h, t + 30 + k, 6000);
    }
    assert_eq!(h.sent(), vec![8, 9]);
    assert_eq!(h.s.stats().fast_recoveries, 0);
    assert_eq!(h.s.ca_state(), CaState::Disorder);
    // One packet further (highest_ack_ 7 > 6): the third duplicate does.
    ns2_ack(&mut h, t + 40, 7000);
    for k in 0..3 {
        ns2_ack(&mut h, t + 50 + k, 7000);
    }
    assert_eq!(h.s.ca_state(), CaState::Recovery);
    assert_eq!(h.s.stats().fast_recoveries, 1);
}

/// An `ns2` NewReno sender with Sack1 after its first two ACKs: windowInit_ 2,
/// +1 packet per ACK in slow start, so packets 0..5 are out.
fn ns2_sack1_after_two_acks() -> Harness {
    let cfg = TcpConfig {
        recovery: Recovery::Sack,
        initial_ssthresh: Some(100 * MSS),
        ..TcpConfig::defaults(Profile::Ns2)
    };
    let reno = AnyCc::NewReno(NewReno::new(Profile::Ns2));
    let mut h = Harness::with_cc(cfg, reno, 1_000_000);
    h.ack(30, 1000);
    h.ack(31, 2000);
    assert_eq!(h.sent(), vec![0, 1, 2, 3, 4, 5]);
    h
}

#[test]
fn ns2_sack1_leaves_recovery_without_growing_and_without_a_partial_ack_sample() {
    // windowInit_ 2, +1 per ACK: packets 0..5 out; packet 2 is lost.
    let mut h = ns2_sack1_after_two_acks();
    let samples = h.s.stats().rtt_samples;
    // Sack1TcpAgent::recv: three duplicates that each change the scoreboard
    // (3, then 3-4, then 3-5 SACKed); singledup_ sends 6 and 7 on the first
    // two; the third: dupack_action, slowdown(CLOSE_SSTHRESH_HALF |
    // CLOSE_CWND_HALF) of window() 4: ssthresh_ 2, cwnd_ 2.0; recover_ =
    // maxseq_ (packet 7: vtlab's recover 8000); timing cancelled
    // (reset_rtx_timer(1, 0)).
    h.sack(40, 2000, &[(3, 4)]);
    h.sack(41, 2000, &[(3, 5)]);
    h.sack(42, 2000, &[(3, 6)]);
    assert_eq!(h.s.ca_state(), CaState::Recovery);
    assert_eq!((h.cwnd(), h.ssthresh()), (2 * MSS, 2 * MSS));
    assert_eq!(h.s.snd_max(), 8 * MSS);
    // A partial ACK (highest_ack_ → 5 < recover_): no newack, so no RTT
    // sample (the timed packet was forgotten at entry; one sent since lies
    // above recover_).
    h.sack(60, 6 * MSS, &[]);
    assert_eq!(h.s.ca_state(), CaState::Recovery);
    assert_eq!(h.s.stats().rtt_samples, samples);
    // The ACK of recover_ ends recovery with newack alone (no opencwnd):
    // cwnd_ stays 2.0 (a grown window would be 2 + 1/2 packets).
    h.sack(70, 8 * MSS, &[]);
    assert_eq!(h.s.ca_state(), CaState::Open);
    assert_eq!(h.cwnd(), 2 * MSS);
    // The next new ACK opens it by 1/cwnd_ (opencwnd, avoidance): 2.5.
    let next = h.s.snd_max().min(9 * MSS);
    h.sack(80, next, &[]);
    assert_eq!(h.cwnd(), 2 * MSS + MSS / 2);
}

#[test]
fn ns2_sack1_after_a_timeout_counts_duplicates_once_a_new_ack_came() {
    let mut h = ns2_sack1_after_two_acks();
    // Packets 2 and 3 are lost. Timeout (TcpAgent::timeout): cwnd_ 1, go
    // back N: 2 again; Sack1TcpAgent::timeout sets timeout_.
    let t = h.s.timer_deadline().unwrap().0 / 1_000_000;
    h.s.on_timer(Time(t * 1_000_000), &mut h.out);
    assert_eq!(h.sent(), vec![2]);
    // recv: a duplicate while timeout_ is true is ignored (no scoreboard,
    // no count): nothing goes.
    h.sack(t + 1, 2000, &[(4, 6)]);
    assert_eq!(h.sent(), Vec::<u64>::new());
    // The ACK of 2 (new: timeout_ false, scoreboard cleared, cwnd_ 2 by
    // opencwnd): send_much from t_seqno_ 3 within highest_ack_ + 2: 3, 4.
    h.sack(t + 10, 3000, &[(4, 6)]);
    assert_eq!((h.cwnd(), h.sent()), (2 * MSS, vec![3, 4]));
    // A duplicate that changes the scoreboard (4-5 SACKed): dupacks_ 1 <
    // numdupacks_ 3, send_one: t_seqno_ 5 ≤ highest_ack_ 2 + cwnd_ 2 +
    // dupacks_ 1: packet 5 goes (go-back-N resends SACKed packets, S7).
    h.sack(t + 11, 3000, &[(4, 6)]);
    assert_eq!(h.sent(), vec![5]);
    // The same blocks again change nothing (CheckUpdate): no count, no send.
    h.sack(t + 12, 3000, &[(4, 6)]);
    assert_eq!(h.sent(), Vec::<u64>::new());
    assert_eq!(h.s.ca_state(), CaState::Loss);
}
