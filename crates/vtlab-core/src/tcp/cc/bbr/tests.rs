//! BBR's state machine driven by scripted rate samples. Path: MSS 1000 B,
//! bottleneck 1 000 000 B/s, min RTT 10 ms, so BDP = 10 000 B (10 MSS).
//! Expected values are BBR's rules (ns-3 tcp-bbr.cc, Linux tcp_bbr.c)
//! worked by hand in the comments.

use super::*;
use crate::engine::{Duration, Time};
use crate::tcp::cc::reno::test_support::info;

const MSS: u64 = 1000;
const RTT: Duration = Duration::from_millis(10);

fn at(ms: u64) -> Time {
    Time::ZERO + Duration::from_millis(ms)
}

/// A BBR initialised at t = 0 with cwnd 10 MSS and a 10 ms handshake RTT.
fn started(profile: Profile) -> (Bbr, Window, ConnInfo) {
    let mut b = Bbr::new(&Params::new(), profile);
    let mut i = info(profile);
    i.srtt = Some(RTT);
    i.min_rtt = Some(RTT);
    let mut w = Window {
        cwnd: 10 * MSS,
        ssthresh: u64::MAX,
    };
    b.cwnd_event(&i, &mut w, CwndEvent::TxStart);
    (b, w, i)
}

/// Drives one ACK per call; each `round()` starts a new packet-timed round
/// (the ACKed data was sent after the previous round began).
struct Driver {
    delivered: u64,
    round_base: u64,
}

impl Driver {
    fn new() -> Self {
        Driver {
            delivered: 0,
            round_base: 0,
        }
    }

    /// An ACK of `acked` bytes with delivery rate `bw`, in a new round if
    /// `new_round`.
    #[allow(clippy::too_many_arguments)]
    fn ack(
        &mut self,
        b: &mut Bbr,
        w: &mut Window,
        i: &mut ConnInfo,
        now: Time,
        bw: f64,
        new_round: bool,
        prior_in_flight: u64,
        rtt: Duration,
    ) -> CcAction {
        let prior_delivered = if new_round {
            let p = self.delivered;
            self.round_base = p;
            p
        } else {
            self.round_base.saturating_sub(1)
        };
        self.delivered += MSS;
        i.now = now;
        let rs = RateSample {
            delivery_rate: bw,
            is_app_limited: false,
            interval: RTT,
            delivered: (bw * RTT.as_secs_f64()) as i64,
            prior_delivered,
            prior_time: Some(Time::ZERO),
            send_elapsed: RTT,
            ack_elapsed: RTT,
            lost: 0,
            prior_in_flight,
            acked_sacked: MSS,
            rtt: Some(rtt),
        };
        let rc = RateConn {
            delivered: self.delivered,
            app_limited: 0,
        };
        b.cong_control(i, w, &rc, &rs)
    }
}

/// STARTUP gains are 2/ln 2 ≈ 2.885 for both pacing and cwnd (ns-3
/// HighGain 2.89, Linux 739/256 = 2.8867: both within 0.005 of 2/ln 2).
#[test]
fn startup_gains_are_two_over_ln2() {
    for p in [Profile::Ns3, Profile::Linux] {
        let (b, _, _) = started(p);
        let g = 2.0 / std::f64::consts::LN_2;
        assert_eq!(b.mode(), Mode::Startup);
        assert!(
            (b.pacing_gain() - g).abs() < 0.005,
            "{p:?} {}",
            b.pacing_gain()
        );
        assert_eq!(b.cwnd_gain(), b.pacing_gain());
    }
}

/// Initial pacing rate: high_gain × cwnd / RTT. ns-3 (RTT in whole ms):
/// 2.89 × 10 000 B / 0.010 s = 2 890 000 B/s; Linux (SRTT, 1 % margin):
/// 2.8867 × 1 000 000 × 0.99.
#[test]
fn initial_pacing_rate_is_high_gain_times_cwnd_over_rtt() {
    let (b, _, _) = started(Profile::Ns3);
    assert!((b.pacing_rate().unwrap() - 2_890_000.0).abs() < 1e-3);
    let (b, _, _) = started(Profile::Linux);
    let want = 739.0 / 256.0 * 1_000_000.0 * 0.99;
    assert!((b.pacing_rate().unwrap() - want).abs() < 1e-3);
}

/// Full bandwidth: bw 100, 200, 400, 800 kB/s grows ≥ 25 % a round
/// (full_bw follows, count 0); then 900 kB/s < 1.25 × 800: rounds 1 and 2
/// count, the third without growth fills the pipe: DRAIN (pacing gain
/// 1/high_gain, cwnd gain high_gain) and ssthresh = inflight(1) = BDP +
/// quanta. BDP = 900 000 B/s × 10 ms = 9 000 B; ns-3 quanta 3 MSS →
/// 12 000 B; Linux: ceil(9000/1000) = 9 pkts + 3 × 2 (TSO goal at ≥ 150 kB/s
/// pacing) = 15 → even 16 → 16 000 B.
#[test]
fn startup_ends_after_three_rounds_without_25_percent_growth() {
    for (p, ssthresh) in [(Profile::Ns3, 12_000), (Profile::Linux, 16_000)] {
        let (mut b, mut w, mut i) = started(p);
        let mut d = Driver::new();
        i.bytes_in_flight = 50 * MSS;
        let mut t = 10;
        for bw in [100e3, 200e3, 400e3, 800e3] {
            d.ack(&mut b, &mut w, &mut i, at(t), bw, true, 0, RTT);
            t += 10;
            assert_eq!(b.mode(), Mode::Startup);
        }
        for k in 1..=3 {
            // An ACK within the round changes nothing.
            d.ack(&mut b, &mut w, &mut i, at(t), 900e3, false, 0, RTT);
            assert_eq!(b.mode(), Mode::Startup);
            d.ack(&mut b, &mut w, &mut i, at(t + 5), 900e3, true, 0, RTT);
            t += 10;
            if k < 3 {
                assert_eq!(b.mode(), Mode::Startup, "{p:?} round {k}");
            }
        }
        assert!(b.full_bw_reached());
        assert_eq!(b.mode(), Mode::Drain, "{p:?}");
        // DRAIN pacing gain: ns-3 1/2.89; Linux 88/256 (BBR_UNIT·1000/2885).
        let drain = if p == Profile::Linux {
            88.0 / 256.0
        } else {
            1.0 / 2.89
        };
        assert!((b.pacing_gain() - drain).abs() < 1e-12);
        assert!(
            (b.cwnd_gain() - 2.885).abs() <= 0.0051,
            "DRAIN keeps the high cwnd gain"
        );
        assert_eq!(w.ssthresh, ssthresh, "{p:?}");
        // In flight at or below BDP + quanta: PROBE_BW.
        i.bytes_in_flight = 5 * MSS;
        d.ack(&mut b, &mut w, &mut i, at(t), 900e3, false, 0, RTT);
        assert_eq!(b.mode(), Mode::ProbeBw);
        assert_eq!(b.cwnd_gain(), 2.0);
    }
}

/// Drive a BBR to PROBE_BW at bw 1 MB/s (constant bandwidth: 3 rounds
/// after the first fill the pipe).
fn in_probe_bw(p: Profile, seed: u64) -> (Bbr, Window, ConnInfo, Driver, u64) {
    let (mut b, mut w, mut i) = started(p);
    b.set_rng(RngStream::for_component(seed, "test/bbr"));
    let mut d = Driver::new();
    i.bytes_in_flight = 5 * MSS;
    let mut t = 10;
    while b.mode() != Mode::ProbeBw {
        d.ack(&mut b, &mut w, &mut i, at(t), 1e6, true, 0, RTT);
        t += 10;
        assert!(t < 200);
    }
    (b, w, i, d, t)
}

/// The phase PROBE_BW starts in: ns-3 7 − ⌊U(0,6)⌋ + 1 (mod 8) ∈ {3..7, 0};
/// Linux 7 − U{0..6} + 1 (mod 8) ∈ {2..7, 0}; never 1 (the 3/4 phase).
#[test]
fn probe_bw_start_phase_by_profile() {
    for (p, allowed) in [
        (Profile::Ns3, vec![3, 4, 5, 6, 7, 0]),
        (Profile::Linux, vec![2, 3, 4, 5, 6, 7, 0]),
    ] {
        let mut seen = std::collections::BTreeSet::new();
        for seed in 0..200 {
            let (b, ..) = in_probe_bw(p, seed);
            seen.insert(b.cycle_index());
        }
        let mut allowed = allowed;
        allowed.sort();
        assert_eq!(seen.into_iter().collect::<Vec<_>>(), allowed, "{p:?}");
    }
}

/// The gain cycle 5/4, 3/4, 1 ×6: a phase lasts more than min_rtt; 5/4
/// also needs prior_in_flight ≥ inflight(5/4) (or a loss); 3/4 ends early
/// once prior_in_flight ≤ inflight(1).
#[test]
fn probe_bw_gain_cycle() {
    for p in [Profile::Ns3, Profile::Linux] {
        let (mut b, mut w, mut i, mut d, mut t) = in_probe_bw(p, 7);
        // Walk 16 ACKs 11 ms apart (> min_rtt 10 ms), much in flight.
        let mut gains = vec![b.pacing_gain()];
        for _ in 0..16 {
            d.ack(&mut b, &mut w, &mut i, at(t), 1e6, false, 1 << 30, RTT);
            t += 11;
            gains.push(b.pacing_gain());
        }
        let start = gains.iter().position(|g| *g == 1.25).unwrap();
        assert_eq!(
            gains[start..start + 9],
            [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.25],
            "{p:?}"
        );
        // Back to 5/4 (entered at t − 11): with little in flight it stays
        // past min_rtt.
        while b.pacing_gain() != 1.25 {
            d.ack(&mut b, &mut w, &mut i, at(t), 1e6, false, 1 << 30, RTT);
            t += 11;
        }
        d.ack(&mut b, &mut w, &mut i, at(t + 20), 1e6, false, 0, RTT);
        assert_eq!(b.pacing_gain(), 1.25, "{p:?}: 5/4 needs inflight");
        d.ack(&mut b, &mut w, &mut i, at(t + 21), 1e6, false, 1 << 30, RTT);
        assert_eq!(b.pacing_gain(), 0.75);
        // 3/4 ends at once when in flight ≤ BDP + quanta, before min_rtt.
        d.ack(&mut b, &mut w, &mut i, at(t + 22), 1e6, false, 0, RTT);
        assert_eq!(b.pacing_gain(), 1.0, "{p:?}");
    }
}

/// PROBE_RTT: the min-RTT sample is 10 s old (later samples were 12 ms >
/// 10 ms): cwnd is capped at 4 MSS; once in flight ≤ 4 MSS the mode lasts
/// 200 ms and at least one round; then cwnd is restored and PROBE_BW
/// resumes.
#[test]
fn probe_rtt_holds_four_segments_for_200ms_and_a_round() {
    for p in [Profile::Ns3, Profile::Linux] {
        let (mut b, mut w, mut i, mut d, t) = in_probe_bw(p, 3);
        let slow = Duration::from_millis(12);
        // Settle cwnd at its target.
        for k in 0..50 {
            d.ack(&mut b, &mut w, &mut i, at(t + k), 1e6, false, 0, slow);
        }
        let before = w.cwnd;
        assert!(before > 4 * MSS);
        // min_rtt_stamp is at most t; 10 s later the filter expires.
        let t0 = 10_000 + t + 1;
        i.bytes_in_flight = 20 * MSS;
        let act = d.ack(&mut b, &mut w, &mut i, at(t0), 1e6, false, 0, slow);
        assert_eq!(b.mode(), Mode::ProbeRtt, "{p:?}");
        assert_eq!(w.cwnd, 4 * MSS);
        assert_eq!(act.mark_app_limited, p == Profile::Linux);
        // In flight drained to 4 MSS at t0 + 5: the 200 ms start now.
        i.bytes_in_flight = 4 * MSS;
        d.ack(&mut b, &mut w, &mut i, at(t0 + 5), 1e6, false, 0, slow);
        // A round passes at t0 + 50, but 200 ms have not.
        d.ack(&mut b, &mut w, &mut i, at(t0 + 50), 1e6, true, 0, slow);
        assert_eq!(b.mode(), Mode::ProbeRtt);
        assert_eq!(w.cwnd, 4 * MSS);
        d.ack(&mut b, &mut w, &mut i, at(t0 + 205), 1e6, false, 0, slow);
        assert_eq!(b.mode(), Mode::ProbeRtt, "{p:?}: 200 ms not over");
        d.ack(&mut b, &mut w, &mut i, at(t0 + 206), 1e6, false, 0, slow);
        assert_eq!(b.mode(), Mode::ProbeBw, "{p:?}");
        assert!(w.cwnd >= before, "{p:?}: cwnd restored");
    }
}

/// PROBE_RTT lasts at least one round even past 200 ms.
#[test]
fn probe_rtt_waits_for_a_round() {
    let (mut b, mut w, mut i, mut d, t) = in_probe_bw(Profile::Linux, 3);
    let slow = Duration::from_millis(12);
    let t0 = 10_000 + t + 1;
    i.bytes_in_flight = 4 * MSS;
    d.ack(&mut b, &mut w, &mut i, at(t0), 1e6, false, 0, slow);
    assert_eq!(b.mode(), Mode::ProbeRtt);
    // Entered and the 200 ms started on the same ACK; nothing starts a round.
    d.ack(&mut b, &mut w, &mut i, at(t0 + 1), 1e6, false, 0, slow);
    d.ack(&mut b, &mut w, &mut i, at(t0 + 300), 1e6, false, 0, slow);
    assert_eq!(b.mode(), Mode::ProbeRtt);
    d.ack(&mut b, &mut w, &mut i, at(t0 + 301), 1e6, true, 0, slow);
    assert_eq!(b.mode(), Mode::ProbeBw);
}

/// Entering Recovery (ns-3): cwnd = in flight + max(last acked, MSS), packet
/// conservation until the next round; leaving restores the saved cwnd.
#[test]
fn recovery_packet_conservation_ns3() {
    let (mut b, mut w, mut i, _, _) = in_probe_bw(Profile::Ns3, 1);
    w.cwnd = 30 * MSS;
    i.bytes_in_flight = 12 * MSS;
    i.ca_state = CaState::Disorder;
    b.on_ack_delivered(0);
    b.ssthresh(&i, &w, 12 * MSS);
    b.congestion_state_set(&i, &mut w, CaState::Recovery);
    assert_eq!(w.cwnd, 13 * MSS);
    i.ca_state = CaState::Recovery;
    b.cwnd_event(&i, &mut w, CwndEvent::CompleteCwr);
    assert_eq!(w.cwnd, 30 * MSS, "prior cwnd restored");
}

/// Linux long-term sampling. A policer lets 1000 B through every 2 ms
/// (500 000 B/s) and drops much of the rest: every ACK reports lost bytes
/// (480 B, 1000 B at the interval's ends), about half of what is delivered
/// (≥ 50/256). Sampling starts at the first loss; once 4 rounds (of 10 ACKs)
/// have passed, the next ACK with a loss closes the interval: its rate is
/// delivered / elapsed whole ms = 1000 B / 2 ms = 500 000 B/s, whatever the
/// boundaries. The second interval agrees within 1/8, so BBR is policed:
/// lt_bw = their average, 500 000 B/s, pacing gain 1, pacing 0.99 × lt_bw.
#[test]
fn linux_long_term_sampling_detects_a_policer() {
    let (mut b, mut w, mut i, mut d, mut t) = in_probe_bw(Profile::Linux, 2);
    let mut lt_found = None;
    'outer: for _interval in 0..2 {
        for k in 0..=50u64 {
            // Lost bytes reported by every ACK.
            let lost = if k == 0 || k == 50 { 1000 } else { 480 };
            let new_round = k % 10 == 0;
            let prior_delivered = if new_round {
                d.round_base = d.delivered;
                d.delivered
            } else {
                d.round_base.saturating_sub(1)
            };
            d.delivered += MSS;
            i.now = at(t);
            let rs = RateSample {
                delivery_rate: 1e6,
                interval: RTT,
                delivered: 10_000,
                prior_delivered,
                prior_time: Some(Time::ZERO),
                lost,
                acked_sacked: MSS,
                rtt: Some(RTT),
                ..RateSample::default()
            };
            let rc = RateConn {
                delivered: d.delivered,
                app_limited: 0,
            };
            b.cong_control(&i, &mut w, &rc, &rs);
            t += 2;
            if let Some(bw) = b.lt_bw() {
                lt_found = Some(bw);
                break 'outer;
            }
        }
    }
    let bw = lt_found.expect("policer detected");
    // 50 ACKs × 1000 B over 100 ms in whole ms = 500 000 B/s, twice.
    assert!((bw - 500_000.0).abs() < 1.0, "{bw}");
    assert_eq!(b.pacing_gain(), 1.0);
    assert!((b.pacing_rate().unwrap() - 0.99 * 500_000.0).abs() < 1.0);
    // ns-3 has no long-term sampling.
    let (b, ..) = in_probe_bw(Profile::Ns3, 2);
    assert_eq!(b.lt_bw(), None);
}
