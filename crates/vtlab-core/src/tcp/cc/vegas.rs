//! TCP Vegas: delay-based congestion avoidance that keeps between α and β
//! segments queued in the network (docs/congestion-control.md, '`vegas`').
//!
//! Sources: L. S. Brakmo, L. L. Peterson, "TCP Vegas: End to End Congestion
//! Avoidance on a Global Internet", IEEE JSAC 13(8), 1995; Linux
//! `net/ipv4/tcp_vegas.c`; ns-3 `src/internet/model/tcp-vegas.cc`.
//!
//! Constants (same defaults in Linux and ns-3): α = 2, β = 4, γ = 1 segments.
//!
//! Once per RTT (an ACK past `beg_snd_nxt`) with at least 3 RTT samples in the
//! round, Vegas compares cwnd with `target = cwnd·baseRTT/minRTT`:
//! in slow start it leaves slow start (cwnd = min(cwnd, target+1)) when
//! `diff > γ`; in congestion avoidance it adds one segment if `diff < α`,
//! removes one if `diff > β` and holds otherwise; then ssthresh is floored at
//! ¾·cwnd. Between round edges only slow start grows; with too few samples or
//! while disabled (any state but Open) it is Reno.
//!
//! Profile differences (the switches of [`VegasBehaviour`] and
//! [`super::vegas_rtt::VegasRttBehaviour`]):
//! * Linux: `diff = cwnd·(minRTT−baseRTT)/baseRTT` in integer segments from
//!   raw µs samples (+1 µs); slowing down sets ssthresh = min(ssthresh, cwnd);
//!   cwnd ≥ 2; the ¾ floor is `(cwnd>>1)+(cwnd>>2)`; a round ends on an ACK
//!   strictly after `beg_snd_nxt`; TX_START re-initialises (baseRTT forgotten);
//!   loss uses the Reno ssthresh, max(cwnd/2, 2).
//! * ns-3: `diff = cwnd − ⌊cwnd·baseRTT/minRTT⌋` (divided by minRTT, in
//!   floating point) from SRTT samples (dupACKs included, by the sender);
//!   slowing down sets ssthresh = max(min(ssthresh, cwnd−MSS), 2·MSS), and so
//!   does a **loss**, which with the per-RTT ¾ floor cuts far less than Reno;
//!   no cwnd ≥ 2 clamp; the ¾ floor is `3·cwnd/4` in bytes; a round ends when
//!   the ACK reaches `beg_snd_nxt`; growth outside Vegas is ns-3 NewReno.

use super::reno::{cwnd_segments, reno_increase, reno_ssthresh, slow_start};
use super::vegas_rtt::{linux_us, ns3_secs, VegasRtt};
use super::{
    param, CongestionOps, ConnInfo, CwndEvent, ParamSpec, Params, Profile, ProfileBehaviour, Window,
};
use crate::engine::Duration;
use crate::tcp::CaState;

pub const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "alpha",
        default_ns3: 2.0,
        default_linux: 2.0,
        default_ns2: Some(1.0),
        min: 0.0,
        max: 1000.0,
        doc: "lower bound of extra segments queued in the network: below it cwnd grows by 1 per RTT",
        integer: true,
        at_most: Some("beta"),
    },
    ParamSpec {
        name: "beta",
        default_ns3: 4.0,
        default_linux: 4.0,
        default_ns2: Some(3.0),
        min: 0.0,
        max: 1000.0,
        doc: "upper bound of extra segments queued in the network: above it cwnd shrinks by 1 per RTT",
        integer: true,
        at_most: None,
    },
    ParamSpec {
        name: "gamma",
        default_ns3: 1.0,
        default_linux: 1.0,
        default_ns2: Some(1.0),
        min: 0.0,
        max: 1000.0,
        doc: "extra segments queued that end slow start",
        integer: true,
        at_most: None,
    },
];

/// Where Vegas follows ns-3 (`tcp-vegas.cc`) or Linux (`tcp_vegas.c`); see
/// the module documentation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VegasBehaviour {
    /// The once-per-RTT adjustment in integer segments from µs samples,
    /// `diff = cwnd·(minRTT−baseRTT)/baseRTT`, slowing down with ssthresh =
    /// min(ssthresh, cwnd), cwnd ≥ 2, the ¾ floor `(cwnd>>1)+(cwnd>>2)`
    /// (Linux); ns-3 `diff = cwnd − ⌊cwnd·baseRTT/minRTT⌋` in floating
    /// point, slowing down with its loss ssthresh, no cwnd ≥ 2 clamp, the ¾
    /// floor `3·cwnd/4` in bytes.
    pub kernel_arithmetic: bool,
    /// A loss sets ssthresh = max(min(ssthresh, cwnd−MSS), 2·MSS) (ns-3
    /// `TcpVegas::GetSsThresh`), which with the per-RTT ¾ floor cuts far
    /// less than Reno; Linux uses the Reno ssthresh, max(cwnd/2, 2).
    pub vegas_loss_ssthresh: bool,
}

impl ProfileBehaviour for VegasBehaviour {
    const NS3: Self = VegasBehaviour {
        kernel_arithmetic: false,
        vegas_loss_ssthresh: true,
    };
    const LINUX: Self = VegasBehaviour {
        kernel_arithmetic: true,
        vegas_loss_ssthresh: false,
    };
}

#[derive(Clone, Debug)]
pub struct Vegas {
    b: VegasBehaviour,
    /// For the Reno growth outside Vegas (reno.rs).
    profile: Profile,
    alpha: u64,
    beta: u64,
    gamma: u64,
    rtt: VegasRtt,
    /// Linux AI credit counter for the Reno fallback.
    cwnd_cnt: u64,
}

impl Vegas {
    pub fn new(params: &Params, profile: Profile) -> Self {
        let get = |n| param(PARAMS, params, n, profile).round() as u64;
        Vegas {
            b: VegasBehaviour::of(profile),
            profile,
            alpha: get("alpha"),
            beta: get("beta"),
            gamma: get("gamma"),
            rtt: VegasRtt::new(profile),
            cwnd_cnt: 0,
        }
    }

    /// Linux once-per-RTT adjustment (enough samples).
    fn linux_adjust(&mut self, info: &ConnInfo, w: &mut Window, acked: u32) {
        let mss = info.mss;
        let base = linux_us(self.rtt.base_rtt);
        let rtt = linux_us(self.rtt.min_rtt).max(1);
        let mut cwnd = cwnd_segments(info, w);
        let target = cwnd * base / rtt;
        let diff = cwnd * rtt.saturating_sub(base) / base.max(1);
        if diff > self.gamma && w.in_slow_start() {
            cwnd = cwnd.min(target + 1);
            w.ssthresh = w.ssthresh.min(cwnd * mss);
        } else if w.in_slow_start() {
            slow_start(self.profile, info, w, acked);
            cwnd = cwnd_segments(info, w);
        } else if diff > self.beta {
            cwnd -= 1;
            w.ssthresh = w.ssthresh.min(cwnd * mss);
        } else if diff < self.alpha {
            cwnd += 1;
        }
        cwnd = cwnd.max(2);
        w.cwnd = cwnd * mss;
        // tcp_current_ssthresh in Open: max(ssthresh, ¾·cwnd).
        w.ssthresh = w.ssthresh.max(((cwnd >> 1) + (cwnd >> 2)) * mss);
    }

    /// ns-3 once-per-RTT adjustment (enough samples).
    fn ns3_adjust(&mut self, info: &ConnInfo, w: &mut Window, acked: u32) {
        let mss = info.mss;
        let mut seg = w.cwnd / mss;
        let ratio = ns3_secs(self.rtt.base_rtt) / ns3_secs(self.rtt.min_rtt);
        let target = (seg as f64 * ratio) as u64;
        let diff = seg.saturating_sub(target);
        if diff > self.gamma && w.in_slow_start() {
            seg = seg.min(target + 1);
            w.cwnd = seg * mss;
            w.ssthresh = ns3_ssthresh(info, w);
        } else if w.in_slow_start() {
            slow_start(self.profile, info, w, acked);
        } else if diff > self.beta {
            seg -= 1;
            w.cwnd = seg * mss;
            w.ssthresh = ns3_ssthresh(info, w);
        } else if diff < self.alpha {
            seg += 1;
            w.cwnd = seg * mss;
        }
        w.ssthresh = w.ssthresh.max(3 * w.cwnd / 4);
    }
}

/// ns-3 `TcpVegas::GetSsThresh`: max(min(ssthresh, cwnd − MSS), 2·MSS).
fn ns3_ssthresh(info: &ConnInfo, w: &Window) -> u64 {
    w.ssthresh
        .min(w.cwnd.saturating_sub(info.mss))
        .max(2 * info.mss)
}

impl CongestionOps for Vegas {
    fn ssthresh(&mut self, info: &ConnInfo, w: &Window, bytes_in_flight: u64) -> u64 {
        if self.b.vegas_loss_ssthresh {
            ns3_ssthresh(info, w)
        } else {
            reno_ssthresh(self.profile, info, w, bytes_in_flight)
        }
    }

    fn increase_window(&mut self, info: &ConnInfo, w: &mut Window, segments_acked: u32) {
        let p = self.profile;
        if !self.rtt.doing {
            reno_increase(p, info, w, &mut self.cwnd_cnt, segments_acked);
            return;
        }
        if self.rtt.round_done(info.snd_una) {
            self.rtt.beg_snd_nxt = info.snd_nxt;
            if self.rtt.cnt_rtt <= 2 {
                reno_increase(p, info, w, &mut self.cwnd_cnt, segments_acked);
            } else {
                if self.b.kernel_arithmetic {
                    self.linux_adjust(info, w, segments_acked);
                } else {
                    self.ns3_adjust(info, w, segments_acked);
                }
            }
            self.rtt.next_round(info.snd_nxt);
        } else if w.in_slow_start() {
            slow_start(p, info, w, segments_acked);
        }
    }

    fn pkts_acked(&mut self, _info: &ConnInfo, _w: &Window, _segs: u32, rtt: Option<Duration>) {
        self.rtt.sample(rtt);
    }

    fn congestion_state_set(&mut self, info: &ConnInfo, _w: &mut Window, new: CaState) {
        self.rtt.set_state(info, new);
    }

    fn cwnd_event(&mut self, info: &ConnInfo, _w: &mut Window, event: CwndEvent) {
        self.rtt.cwnd_event(info, event);
    }
}

#[cfg(test)]
mod tests {
    use super::super::reno::test_support::{info, window};
    use super::*;

    fn vegas(p: Profile) -> Vegas {
        Vegas::new(&Params::new(), p)
    }

    use super::super::vegas_rtt::stored_sample as rtt;

    /// Set up a round with `baseRTT` from an earlier round, three samples of
    /// `min_us` in this one, and a round edge at 0; then end it with an ACK.
    fn end_round(cc: &mut Vegas, w: &mut Window, base_us: u64, min_us: u64, acked: u32) {
        let p = cc.profile;
        cc.rtt.base_rtt = Some(Duration::from_micros(base_us));
        cc.rtt.next_round(0);
        let mut i = info(p);
        for _ in 0..3 {
            cc.pkts_acked(&i, w, 1, rtt(p, min_us));
        }
        i.snd_una = 1_000;
        i.snd_nxt = 50_000;
        cc.increase_window(&i, w, acked);
        assert_eq!(cc.rtt.beg_snd_nxt, 50_000, "next round ends at snd_nxt");
        assert_eq!((cc.rtt.cnt_rtt, cc.rtt.min_rtt), (0, None), "round wiped");
    }

    #[test]
    fn linux_avoidance_regions() {
        let p = Profile::Linux;
        // diff = 20·(104000−100000)/100000 = 0.8 → 0 < α=2: +1 segment.
        let (mut cc, mut w) = (vegas(p), window(20, 10));
        end_round(&mut cc, &mut w, 100_000, 104_000, 2);
        assert_eq!(w.cwnd, 21_000);
        // ssthresh floor ¾·21 = (21>>1)+(21>>2) = 10+5 = 15 segments.
        assert_eq!(w.ssthresh, 15_000);
        // diff = 21·15000/100000 = 3.15 → 3 ∈ [α, β]: hold.
        end_round(&mut cc, &mut w, 100_000, 115_000, 2);
        assert_eq!(w.cwnd, 21_000);
        // diff = 21·25000/100000 = 5.25 → 5 > β=4: −1 segment, ssthresh =
        // min(15, 20) = 15, floor (20>>1)+(20>>2) = 15.
        end_round(&mut cc, &mut w, 100_000, 125_000, 2);
        assert_eq!(w.cwnd, 20_000);
        assert_eq!(w.ssthresh, 15_000);
    }

    #[test]
    fn ns3_avoidance_regions() {
        let p = Profile::Ns3;
        // target = ⌊20·100/105⌋ = ⌊19.05⌋ = 19, diff = 1 < α: +1 segment.
        let (mut cc, mut w) = (vegas(p), window(20, 10));
        end_round(&mut cc, &mut w, 100_000, 105_000, 2);
        assert_eq!(w.cwnd, 21_000);
        // ssthresh = max(10000, 3·21000/4 = 15750).
        assert_eq!(w.ssthresh, 15_750);
        // target = ⌊21·100/115⌋ = ⌊18.26⌋ = 18, diff = 3: hold.
        end_round(&mut cc, &mut w, 100_000, 115_000, 2);
        assert_eq!(w.cwnd, 21_000);
        // target = ⌊21·100/130⌋ = ⌊16.15⌋ = 16, diff = 5 > β: −1 segment;
        // ssthresh = max(min(15750, 20000−1000), 2000) = 15750, then
        // max(15750, 3·20000/4 = 15000) = 15750.
        end_round(&mut cc, &mut w, 100_000, 130_000, 2);
        assert_eq!(w.cwnd, 20_000);
        assert_eq!(w.ssthresh, 15_750);
    }

    #[test]
    fn diff_formulas_differ_between_profiles() {
        // cwnd 10, baseRTT 100 ms, minRTT 160 ms.
        // Linux: diff = 10·60/100 = 6 > β → 9 segments.
        let (mut cc, mut w) = (vegas(Profile::Linux), window(10, 5));
        end_round(&mut cc, &mut w, 100_000, 160_000, 2);
        assert_eq!(w.cwnd, 9_000);
        // ns-3: diff = 10 − ⌊10·100/160⌋ = 10 − 6 = 4 ≤ β → hold at 10.
        let (mut cc, mut w) = (vegas(Profile::Ns3), window(10, 5));
        end_round(&mut cc, &mut w, 100_000, 160_000, 2);
        assert_eq!(w.cwnd, 10_000);
    }

    #[test]
    fn slow_start_exit_when_diff_exceeds_gamma() {
        // cwnd 20 in slow start, baseRTT 100 ms, minRTT 150 ms.
        // Linux: target = 20·100000/150000 = 13, diff = 20·50000/100000 = 10 > γ:
        // cwnd = min(20, 13+1) = 14, ssthresh = min(∞, 14) = 14, floor 7+3 = 10.
        let (mut cc, mut w) = (vegas(Profile::Linux), window(20, u64::MAX));
        end_round(&mut cc, &mut w, 100_000, 150_000, 2);
        assert_eq!((w.cwnd, w.ssthresh), (14_000, 14_000));
        // ns-3: target = ⌊20·0.667⌋ = 13, diff = 7 > γ: cwnd = 14 segments,
        // ssthresh = max(min(∞, 14000−1000), 2000) = 13000, then
        // max(13000, 3·14000/4 = 10500) = 13000.
        let (mut cc, mut w) = (vegas(Profile::Ns3), window(20, u64::MAX));
        end_round(&mut cc, &mut w, 100_000, 150_000, 2);
        assert_eq!((w.cwnd, w.ssthresh), (14_000, 13_000));
    }

    #[test]
    fn slow_start_continues_within_gamma() {
        // Linux: diff = 10·5000/100000 = 0 ≤ γ: slow start adds the 2 acked.
        let (mut cc, mut w) = (vegas(Profile::Linux), window(10, u64::MAX));
        end_round(&mut cc, &mut w, 100_000, 105_000, 2);
        assert_eq!((w.cwnd, w.ssthresh), (12_000, u64::MAX));
        // ns-3: target = ⌊10·100/105⌋ = 9, diff = 1 ≤ γ: +1 MSS per ACK.
        let (mut cc, mut w) = (vegas(Profile::Ns3), window(10, u64::MAX));
        end_round(&mut cc, &mut w, 100_000, 105_000, 2);
        assert_eq!((w.cwnd, w.ssthresh), (11_000, u64::MAX));
    }

    #[test]
    fn between_round_edges_only_slow_start_grows() {
        for p in [Profile::Linux, Profile::Ns3] {
            let mut cc = vegas(p);
            cc.rtt.beg_snd_nxt = 100_000;
            let mut i = info(p);
            i.snd_una = 5_000;
            let mut w = window(20, 10);
            cc.increase_window(&i, &mut w, 2);
            assert_eq!(w.cwnd, 20_000, "{p:?}: CA holds inside a round");
            let mut w = window(5, 100);
            cc.increase_window(&i, &mut w, 2);
            // Linux adds both segments, ns-3 one MSS per ACK.
            let want = if p == Profile::Linux { 7_000 } else { 6_000 };
            assert_eq!(w.cwnd, want, "{p:?}: slow start grows");
        }
    }

    #[test]
    fn few_samples_or_disabled_behave_like_reno() {
        // Round edge with only 2 samples: one NewReno step (ns-3 CA adds
        // 1000²/20000 = 50 bytes).
        let mut cc = vegas(Profile::Ns3);
        let mut i = info(Profile::Ns3);
        let mut w = window(20, 10);
        cc.pkts_acked(&i, &w, 1, Some(Duration::from_millis(100)));
        cc.pkts_acked(&i, &w, 1, Some(Duration::from_millis(100)));
        i.snd_una = 1_000;
        cc.increase_window(&i, &mut w, 1);
        assert_eq!(w.cwnd, 20_050);
        // Disabled in Recovery: every ACK is Reno, even inside a round.
        cc.congestion_state_set(&i, &mut w, CaState::Recovery);
        cc.increase_window(&i, &mut w, 1);
        assert_eq!(w.cwnd, 20_050 + 1_000_000 / 20_050);
        // Back to Open: a fresh round from snd_nxt.
        i.snd_nxt = 77_000;
        cc.congestion_state_set(&i, &mut w, CaState::Open);
        assert!(cc.rtt.doing);
        assert_eq!(cc.rtt.beg_snd_nxt, 77_000);
    }

    #[test]
    fn loss_ssthresh_per_profile() {
        // Linux: Reno, cwnd/2 = 10 segments.
        let w = window(20, 15);
        let mut cc = vegas(Profile::Linux);
        assert_eq!(cc.ssthresh(&info(Profile::Linux), &w, 30_000), 10_000);
        // ns-3: max(min(ssthresh, cwnd − MSS), 2·MSS), flight ignored:
        // min(15000, 19000) = 15000 — the ¾ floor survives the loss.
        let mut cc = vegas(Profile::Ns3);
        assert_eq!(cc.ssthresh(&info(Profile::Ns3), &w, 30_000), 15_000);
        // In slow start (ssthresh ∞) the cut is a single segment: 19000.
        let w = window(20, u64::MAX);
        assert_eq!(cc.ssthresh(&info(Profile::Ns3), &w, 30_000), 19_000);
        // Floor at 2 segments.
        let w = window(2, u64::MAX);
        assert_eq!(cc.ssthresh(&info(Profile::Ns3), &w, 30_000), 2_000);
    }

    #[test]
    fn linux_tx_start_reinitialises() {
        let mut cc = vegas(Profile::Linux);
        let mut i = info(Profile::Linux);
        let mut w = window(10, u64::MAX);
        cc.pkts_acked(&i, &w, 1, Some(Duration::from_millis(80)));
        i.snd_nxt = 3_000;
        cc.cwnd_event(&i, &mut w, CwndEvent::TxStart);
        assert_eq!(cc.rtt.base_rtt, None);
        assert_eq!(cc.rtt.beg_snd_nxt, 3_000);
        // ns-3 ignores the event.
        let mut cc = vegas(Profile::Ns3);
        cc.pkts_acked(&i, &w, 1, Some(Duration::from_millis(80)));
        cc.cwnd_event(&i, &mut w, CwndEvent::TxStart);
        assert_eq!(cc.rtt.base_rtt, Some(Duration::from_millis(80)));
    }

    #[test]
    fn scripted_rounds_through_the_hooks() {
        // Round 1: three 100 ms samples; Round 2: three 150 ms samples.
        // Linux (cwnd 10, CA): round 1 diff 0 → 11; round 2
        // diff = 11·50000/100000 = 5 > β → 10.
        // ns-3: round 1 → 11; round 2 target ⌊11·100/150⌋ = 7, diff 4 → hold 11.
        for (p, want) in [(Profile::Linux, 10_000), (Profile::Ns3, 11_000)] {
            let mut cc = vegas(p);
            let mut i = info(p);
            let mut w = window(10, 5);
            cc.cwnd_event(&i, &mut w, CwndEvent::TxStart);
            for (round, us) in [(1u64, 100_000), (2, 150_000)] {
                for _ in 0..3 {
                    cc.pkts_acked(&i, &w, 1, rtt(p, us));
                }
                i.snd_una = round * 20_000 + 1;
                i.snd_nxt = (round + 1) * 20_000;
                cc.increase_window(&i, &mut w, 1);
                if round == 1 {
                    assert_eq!(w.cwnd, 11_000, "{p:?} round 1");
                }
            }
            assert_eq!(w.cwnd, want, "{p:?} round 2");
        }
    }
}
