//! YeAH-TCP ("Yet Another Highspeed"): Scalable growth while the estimated
//! queue is small ("fast" mode), Reno growth otherwise ("slow" mode), with a
//! precautionary decongestion that drains an over-long queue and a loss
//! reaction sized to the queue (docs/congestion-control.md, '`yeah`').
//!
//! Sources: A. Baiocchi, A. P. Castellani, F. Vacirca, "YeAH-TCP: Yet Another
//! Highspeed TCP", PFLDnet 2007; Linux `net/ipv4/tcp_yeah.c` (on the Vegas
//! bookkeeping of `tcp_vegas.c`); ns-3 `src/internet/model/tcp-yeah.cc`.
//!
//! Constants (same in Linux and ns-3): α = 80 packets of queue (Q_max), γ = 1
//! (fraction of the queue drained per RTT), δ = 3 (loss cut at least
//! cwnd/2^δ), ε = 1 (decongestion at most cwnd/2^ε), φ = 8 (queueing delay
//! over baseRTT/φ means slow mode), ρ = 16 (slow-mode RTTs before the loss
//! cut becomes Reno's), ζ = 50 (fast-mode RTTs before `reno_count` resets),
//! Scalable increase count 100.
//!
//! Once per RTT with more than 2 RTT samples: `queue = cwnd·(minRTT −
//! baseRTT)/minRTT`. Slow mode if `queue > α` or the queueing delay exceeds
//! `baseRTT/φ`; then, if `queue > α` and cwnd > `reno_count`, cwnd drops by
//! min(queue/γ, cwnd/2^ε) but not below `reno_count` and ssthresh = cwnd.
//!
//! Profile differences (the switches of [`YeahBehaviour`] and
//! [`super::vegas_rtt::VegasRttBehaviour`]):
//! * Linux: raw µs samples (+1 µs); round edge strictly after `beg_snd_nxt`;
//!   slow start by segments acked with the leftover going to avoidance;
//!   fast mode `cong_avoid_ai(min(cwnd, 100))`, slow mode `cong_avoid_ai(cwnd)`
//!   (one shared credit counter); `doing_reno_now` saturates at 2^24 − 1;
//!   loss: `red = max(min(lastQ, max(cwnd/2, 2)), cwnd/2^δ)` (min then max),
//!   `ssthresh = max(cwnd − red, 2)`. TX_START re-initialises the Vegas part.
//! * ns-3: SRTT samples (dupACKs too); round edge at `>=`; slow start is
//!   NewReno (+1 MSS per ACK, no leftover); fast mode is ns-3 Scalable's
//!   avoidance (own counter, AIFactor 100), slow mode NewReno's MSS²/cwnd;
//!   queue and `L = (minRTT−baseRTT)/baseRTT` in floating point, but L is
//!   compared with `1/φ` in **integer** arithmetic (= 0), so any queueing
//!   means slow mode; loss from bytes in flight, max then min:
//!   `red = min(max(lastQ, flight/2^δ), max(flight/2, 2))`,
//!   `ssthresh = max(flight − red·MSS, 2·MSS)` in uint32_t, which wraps to
//!   ~2^32 when fewer than `red` segments are in flight (ns-3 bug, kept:
//!   that loss then cuts nothing and cwnd, also uint32_t, wraps likewise).

use super::reno::{cong_avoid_ai, cwnd_segments, ns3_congestion_avoidance, slow_start};
use super::scalable::ns3_scalable_avoidance;
use super::vegas_rtt::{linux_us, ns3_secs, VegasRtt};
use super::{
    param, CongestionOps, ConnInfo, CwndEvent, ParamSpec, Params, Profile, ProfileBehaviour, Window,
};
use crate::engine::Duration;
use crate::tcp::CaState;

macro_rules! both {
    ($name:expr, $v:expr, $min:expr, $max:expr, $doc:expr) => {
        ParamSpec {
            name: $name,
            default_ns3: $v,
            default_linux: $v,
            default_ns2: None,
            min: $min,
            max: $max,
            doc: $doc,
            // Every YeAH parameter is an integer in Linux tcp_yeah.c.
            integer: true,
            at_most: None,
        }
    };
}

pub const PARAMS: &[ParamSpec] = &[
    both!(
        "alpha",
        80.0,
        1.0,
        100_000.0,
        "maximum queue backlog (packets) before decongestion"
    ),
    both!(
        "gamma",
        1.0,
        1.0,
        1000.0,
        "decongestion drains queue/gamma packets per RTT"
    ),
    both!(
        "delta",
        3.0,
        0.0,
        16.0,
        "log2: a loss removes at least cwnd/2^delta"
    ),
    both!(
        "epsilon",
        1.0,
        0.0,
        16.0,
        "log2: decongestion removes at most cwnd/2^epsilon"
    ),
    both!(
        "phy",
        8.0,
        1.0,
        1000.0,
        "slow mode when queueing delay exceeds baseRTT/phy"
    ),
    both!(
        "rho",
        16.0,
        0.0,
        1.0e6,
        "slow-mode RTTs after which a loss halves like Reno"
    ),
    both!(
        "zeta",
        50.0,
        0.0,
        1.0e6,
        "fast-mode RTTs after which reno_count resets to 2"
    ),
    both!(
        "stcp_ai",
        100.0,
        1.0,
        100_000.0,
        "Scalable additive-increase count in fast mode"
    ),
];

/// Where YeAH follows ns-3 (`tcp-yeah.cc`) or Linux (`tcp_yeah.c`); see the
/// module documentation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct YeahBehaviour {
    /// Linux: slow start by segments acked with the leftover going to
    /// avoidance, fast mode `cong_avoid_ai(min(cwnd, 100))` and slow mode
    /// `cong_avoid_ai(cwnd)` on one shared credit, the queue from µs samples
    /// in integers. ns-3: NewReno slow start, fast mode ns-3 Scalable's
    /// avoidance (own counter), slow mode NewReno's MSS²/cwnd, cwnd a
    /// uint32_t, the queue and `L` in floating point but `L` compared with
    /// `1/φ` in integer arithmetic (= 0: any queueing means slow mode).
    pub kernel_arithmetic: bool,
    /// `doing_reno_now` saturates at 2^24 − 1 (Linux); ns-3 counts on.
    pub reno_count_saturates: bool,
    /// The loss reduction from bytes in flight, max then min, `red =
    /// min(max(lastQ, flight/2^δ), max(flight/2, 2))`, `ssthresh = max(flight
    /// − red·MSS, 2·MSS)` in uint32_t (ns-3, wrapping to ~2^32 when fewer than
    /// `red` segments are in flight); Linux from cwnd, min then max, `red =
    /// max(min(lastQ, max(cwnd/2, 2)), cwnd/2^δ)`, `ssthresh = max(cwnd −
    /// red, 2)`.
    pub ssthresh_from_flight: bool,
}

impl ProfileBehaviour for YeahBehaviour {
    const NS3: Self = YeahBehaviour {
        kernel_arithmetic: false,
        reno_count_saturates: false,
        ssthresh_from_flight: true,
    };
    const LINUX: Self = YeahBehaviour {
        kernel_arithmetic: true,
        reno_count_saturates: true,
        ssthresh_from_flight: false,
    };
}

#[derive(Clone, Debug)]
pub struct Yeah {
    b: YeahBehaviour,
    /// For the Reno slow start (reno.rs).
    profile: Profile,
    alpha: u64,
    gamma: u64,
    delta: u32,
    epsilon: u32,
    phy: u64,
    rho: u64,
    zeta: u64,
    stcp_ai: u64,
    rtt: VegasRtt,
    last_q: u64,
    /// Consecutive slow-mode RTTs (0 = fast mode).
    doing_reno_now: u64,
    reno_count: u64,
    fast_count: u64,
    /// Linux `snd_cwnd_cnt` / ns-3 NewReno has none.
    cwnd_cnt: u64,
    /// ns-3: the embedded TcpScalable's `m_ackCnt`.
    stcp_cnt: u64,
}

impl Yeah {
    pub fn new(params: &Params, profile: Profile) -> Self {
        let get = |n| param(PARAMS, params, n, profile).round() as u64;
        Yeah {
            b: YeahBehaviour::of(profile),
            profile,
            alpha: get("alpha"),
            gamma: get("gamma").max(1),
            delta: get("delta") as u32,
            epsilon: get("epsilon") as u32,
            phy: get("phy").max(1),
            rho: get("rho"),
            zeta: get("zeta"),
            stcp_ai: get("stcp_ai").max(1),
            rtt: VegasRtt::new(profile),
            last_q: 0,
            doing_reno_now: 0,
            reno_count: 2,
            fast_count: 0,
            cwnd_cnt: 0,
            stcp_cnt: 0,
        }
    }

    fn grow(&mut self, info: &ConnInfo, w: &mut Window, acked: u32) {
        if self.b.kernel_arithmetic {
            let mut acked = acked;
            if w.in_slow_start() {
                acked = slow_start(self.profile, info, w, acked);
                if acked == 0 {
                    return;
                }
            }
            let cwnd = cwnd_segments(info, w);
            let step = if self.doing_reno_now == 0 {
                cwnd.min(self.stcp_ai)
            } else {
                cwnd
            };
            cong_avoid_ai(info, w, &mut self.cwnd_cnt, step, acked);
        } else {
            if w.in_slow_start() {
                slow_start(self.profile, info, w, acked);
            } else if self.doing_reno_now == 0 {
                ns3_scalable_avoidance(info, w, &mut self.stcp_cnt, self.stcp_ai, acked);
            } else {
                ns3_congestion_avoidance(info, w, acked);
            }
            // ns-3's cWnd is a uint32_t: growth from a wrapped ssthresh
            // (see `ssthresh`) wraps around 2^32 too.
            w.cwnd = u64::from(w.cwnd as u32);
        }
    }

    /// The once-per-RTT mode decision; `cwnd` in segments, `queue` the
    /// backlog estimate, `slow` whether the delay test says slow mode.
    /// Returns the new cwnd (segments) and whether it was cut.
    fn decide(&mut self, cwnd: u64, queue: u64, slow: bool) -> (u64, bool) {
        let mut cwnd = cwnd;
        let mut cut = false;
        if queue > self.alpha || slow {
            if queue > self.alpha && cwnd > self.reno_count {
                let reduction = (queue / self.gamma).min(cwnd >> self.epsilon);
                cwnd = (cwnd - reduction).max(self.reno_count);
                cut = true;
            }
            if self.reno_count <= 2 {
                self.reno_count = (cwnd >> 1).max(2);
            } else {
                self.reno_count += 1;
            }
            self.doing_reno_now += 1;
            if self.b.reno_count_saturates {
                self.doing_reno_now = self.doing_reno_now.min(0xff_ffff);
            }
        } else {
            self.fast_count += 1;
            if self.fast_count > self.zeta {
                self.reno_count = 2;
                self.fast_count = 0;
            }
            self.doing_reno_now = 0;
        }
        self.last_q = queue;
        (cwnd, cut)
    }

    fn end_of_round(&mut self, info: &ConnInfo, w: &mut Window) {
        let mss = info.mss;
        let (cwnd, queue, slow) = if self.b.kernel_arithmetic {
            let cwnd = cwnd_segments(info, w);
            let rtt = linux_us(self.rtt.min_rtt).max(1);
            let base = linux_us(self.rtt.base_rtt);
            let queueing = rtt.saturating_sub(base);
            let queue = cwnd * queueing / rtt;
            (cwnd, queue, queueing > base / self.phy)
        } else {
            let seg = w.cwnd / mss;
            let min = ns3_secs(self.rtt.min_rtt);
            let base = ns3_secs(self.rtt.base_rtt);
            let queueing = (min - base).max(0.0);
            let queue = (seg as f64 / min * queueing) as u64;
            let l = queueing / base;
            // ns-3 compares with `1 / m_phy` in unsigned integer arithmetic.
            let threshold = (1 / self.phy) as f64;
            (seg, queue, l > threshold)
        };
        let (new, cut) = self.decide(cwnd, queue, slow);
        if cut {
            w.cwnd = new * mss;
            w.ssthresh = w.cwnd;
        }
    }
}

impl CongestionOps for Yeah {
    fn ssthresh(&mut self, info: &ConnInfo, w: &Window, bytes_in_flight: u64) -> u64 {
        let mss = info.mss;
        let ret = if self.b.ssthresh_from_flight {
            let seg = bytes_in_flight / mss;
            let half = (seg >> 1).max(2);
            let red = if self.doing_reno_now < self.rho {
                self.last_q.max(seg >> self.delta).min(half)
            } else {
                half
            };
            // ns-3 computes this in uint32_t: with fewer than `red`
            // segments in flight the difference wraps to ~2^32 (no cut).
            let raw = (bytes_in_flight as u32).wrapping_sub((red * mss) as u32);
            u64::from(raw.max(2 * mss as u32))
        } else {
            let cwnd = cwnd_segments(info, w);
            let half = (cwnd >> 1).max(2);
            let red = if self.doing_reno_now < self.rho {
                self.last_q.min(half).max(cwnd >> self.delta)
            } else {
                half
            };
            cwnd.saturating_sub(red).max(2) * mss
        };
        self.fast_count = 0;
        self.reno_count = (self.reno_count >> 1).max(2);
        ret
    }

    fn increase_window(&mut self, info: &ConnInfo, w: &mut Window, segments_acked: u32) {
        self.grow(info, w, segments_acked);
        if self.rtt.round_done(info.snd_una) {
            if self.rtt.cnt_rtt > 2 {
                self.end_of_round(info, w);
            }
            self.rtt.next_round(info.snd_nxt);
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

    fn yeah(p: Profile) -> Yeah {
        Yeah::new(&Params::new(), p)
    }

    use super::super::vegas_rtt::stored_sample as rtt;

    /// baseRTT `base_us` from before, three samples of `min_us` this round,
    /// then an ACK that ends the round (edge 0) acking `acked` segments.
    fn end_round(cc: &mut Yeah, w: &mut Window, base_us: u64, min_us: u64, acked: u32) {
        let p = cc.profile;
        cc.rtt.base_rtt = Some(Duration::from_micros(base_us));
        cc.rtt.next_round(0);
        let mut i = info(p);
        for _ in 0..3 {
            cc.pkts_acked(&i, w, 1, rtt(p, min_us));
        }
        i.snd_una = 1_000;
        i.snd_nxt = 90_000;
        cc.increase_window(&i, w, acked);
        assert_eq!((cc.rtt.beg_snd_nxt, cc.rtt.cnt_rtt), (90_000, 0));
    }

    #[test]
    fn linux_fast_mode_scalable_then_slow_mode_on_delay() {
        let p = Profile::Linux;
        let mut cc = yeah(p);
        // cwnd 200, baseRTT 100 ms, minRTT 110 ms:
        // queue = 200·10000/110000 = 18 ≤ 80, queueing 10000 µs > 100000/8 =
        // 12500? no → fast mode. Growth first: Scalable step min(200, 100),
        // credit 2.
        let mut w = window(200, 50);
        end_round(&mut cc, &mut w, 100_000, 110_000, 2);
        assert_eq!((cc.doing_reno_now, cc.fast_count, cc.last_q), (0, 1, 18));
        assert_eq!((w.cwnd, cc.cwnd_cnt), (200_000, 2));
        // minRTT 113 ms: queue = 200·13000/113000 = 23 ≤ 80 but 13000 > 12500:
        // slow mode without decongestion; reno_count = max(200>>1, 2) = 100.
        end_round(&mut cc, &mut w, 100_000, 113_000, 2);
        assert_eq!((cc.doing_reno_now, cc.reno_count, cc.last_q), (1, 100, 23));
        assert_eq!(w.cwnd, 200_000);
        // Now growth is Reno: step cwnd = 200 (credit 2 + 2 = 4).
        end_round(&mut cc, &mut w, 100_000, 113_000, 2);
        assert_eq!((cc.cwnd_cnt, cc.doing_reno_now, cc.reno_count), (6, 2, 101));
    }

    #[test]
    fn linux_precautionary_decongestion() {
        let p = Profile::Linux;
        let mut cc = yeah(p);
        // cwnd 400, baseRTT 100 ms, minRTT 150 ms:
        // queue = 400·50000/150000 = 133 > 80 and cwnd > reno_count = 2:
        // reduction = min(133/1, 400>>1 = 200) = 133 → cwnd 267 = ssthresh;
        // reno_count = max(267>>1, 2) = 133.
        let mut w = window(400, 100);
        end_round(&mut cc, &mut w, 100_000, 150_000, 1);
        assert_eq!((w.cwnd, w.ssthresh), (267_000, 267_000));
        assert_eq!((cc.reno_count, cc.doing_reno_now, cc.last_q), (133, 1, 133));
        // Loss in slow mode (1 < ρ): red = max(min(133, 133), 267>>3 = 33) = 133,
        // ssthresh = 267 − 133 = 134; reno_count = max(133>>1, 2) = 66.
        assert_eq!(cc.ssthresh(&info(p), &w, 0), 134_000);
        assert_eq!((cc.reno_count, cc.fast_count), (66, 0));
    }

    #[test]
    fn linux_decongestion_floor_at_reno_count_and_half_cap() {
        let p = Profile::Linux;
        let mut cc = yeah(p);
        cc.reno_count = 250;
        // cwnd 300, queue = 300·100000/200000 = 150 > 80: reduction =
        // min(150, 150) = 150 → 150, floored at reno_count 250; reno_count
        // is > 2 so it just increments to 251.
        let mut w = window(300, 100);
        end_round(&mut cc, &mut w, 100_000, 200_000, 1);
        assert_eq!((w.cwnd, w.ssthresh, cc.reno_count), (250_000, 250_000, 251));
    }

    #[test]
    fn linux_fast_count_resets_reno_count_after_zeta() {
        let p = Profile::Linux;
        let mut cc = yeah(p);
        cc.reno_count = 40;
        cc.fast_count = 50;
        let mut w = window(100, 10);
        // No queueing: fast mode, fast_count 51 > ζ = 50 → reno_count 2, count 0.
        end_round(&mut cc, &mut w, 100_000, 100_000, 1);
        assert_eq!((cc.reno_count, cc.fast_count, cc.doing_reno_now), (2, 0, 0));
    }

    #[test]
    fn linux_loss_cut_per_mode() {
        let p = Profile::Linux;
        let i = info(p);
        let w = window(160, 10);
        // Fast mode, lastQ 5: red = max(min(5, 80), 160>>3 = 20) = 20 → 140.
        let mut cc = yeah(p);
        cc.last_q = 5;
        assert_eq!(cc.ssthresh(&i, &w, 0), 140_000);
        // lastQ 120: red = max(min(120, 80), 20) = 80 → 80.
        cc.last_q = 120;
        assert_eq!(cc.ssthresh(&i, &w, 0), 80_000);
        // 16 slow-mode RTTs (= ρ): Reno, red = 80 → 80.
        cc.last_q = 5;
        cc.doing_reno_now = 16;
        assert_eq!(cc.ssthresh(&i, &w, 0), 80_000);
    }

    #[test]
    fn ns3_any_queueing_means_slow_mode() {
        let p = Profile::Ns3;
        let mut cc = yeah(p);
        // cwnd 200, baseRTT 100 ms, minRTT 101 ms: queue = ⌊200/0.101·0.001⌋ =
        // ⌊1.98⌋ = 1; L = 0.01 > 1/8 computed as integer 0 → slow mode
        // (Linux: 1000 µs < 12500 µs would be fast).
        let mut w = window(200, 50);
        end_round(&mut cc, &mut w, 100_000, 101_000, 2);
        assert_eq!((cc.doing_reno_now, cc.last_q, cc.reno_count), (1, 1, 100));
        // Growth came first, in fast mode: ns-3 Scalable, counter 2 < min(200, 100).
        assert_eq!((w.cwnd, cc.stcp_cnt), (200_000, 2));
        // Next round in slow mode: NewReno +1000²/200000 = 5 B; minRTT = baseRTT:
        // queue 0, L = 0 → fast mode again.
        end_round(&mut cc, &mut w, 100_000, 100_000, 2);
        assert_eq!(w.cwnd, 200_005);
        assert_eq!((cc.doing_reno_now, cc.fast_count), (0, 1));

        // Linux at 101 ms: fast mode.
        let mut cc = yeah(Profile::Linux);
        let mut w = window(200, 50);
        end_round(&mut cc, &mut w, 100_000, 101_000, 2);
        assert_eq!(cc.doing_reno_now, 0);
    }

    #[test]
    fn ns3_precautionary_decongestion_and_loss() {
        let p = Profile::Ns3;
        let mut cc = yeah(p);
        // cwnd 400, base 100 ms, min 150 ms: queue = ⌊400/0.15·0.05⌋ =
        // ⌊133.33⌋ = 133 > 80: reduction min(133, 200) → 267 segments.
        let mut w = window(400, 100);
        end_round(&mut cc, &mut w, 100_000, 150_000, 1);
        assert_eq!((w.cwnd, w.ssthresh, cc.reno_count), (267_000, 267_000, 133));
        // Loss with 250 segments in flight: red = min(max(133, 250>>3 = 31),
        // max(125, 2)) = 125 → 250000 − 125000 = 125000.
        assert_eq!(cc.ssthresh(&info(p), &w, 250_000), 125_000);
        assert_eq!(cc.reno_count, 66);
        // Max then min (with δ = 3 the same as Linux's min then max):
        // lastQ 10, flight 400: red = min(max(10, 50), 200) = 50 → 350 segments.
        cc.last_q = 10;
        assert_eq!(cc.ssthresh(&info(p), &w, 400_000), 350_000);
        // Tiny flight: 1 segment − 2 wraps in ns-3's uint32_t.
        assert_eq!(cc.ssthresh(&info(p), &w, 1_000), (1u64 << 32) - 1_000);
        // No queue estimate and nothing in flight: red 0, floor 2·MSS.
        cc.last_q = 0;
        assert_eq!(cc.ssthresh(&info(p), &w, 0), 2_000);
    }

    #[test]
    fn ns3_slow_start_has_no_leftover_but_rounds_still_run() {
        let p = Profile::Ns3;
        let mut cc = yeah(p);
        // In slow start: +1 MSS for an ACK of 3; the round still decides
        // (no queueing → fast mode).
        let mut w = window(9, 10);
        end_round(&mut cc, &mut w, 100_000, 100_000, 3);
        assert_eq!((w.cwnd, cc.stcp_cnt, cc.cwnd_cnt), (10_000, 0, 0));
        assert_eq!(cc.fast_count, 1);
        // Linux gives the leftover 2 to avoidance (credit 2).
        let mut cc = yeah(Profile::Linux);
        let mut w = window(9, 10);
        end_round(&mut cc, &mut w, 100_000, 100_000, 3);
        assert_eq!((w.cwnd, cc.cwnd_cnt), (10_000, 2));
    }

    #[test]
    fn few_samples_skip_the_decision() {
        for p in [Profile::Linux, Profile::Ns3] {
            let mut cc = yeah(p);
            let mut i = info(p);
            let mut w = window(400, 100);
            cc.cwnd_event(&i, &mut w, CwndEvent::TxStart);
            cc.pkts_acked(&i, &w, 1, rtt(p, 100_000));
            cc.pkts_acked(&i, &w, 1, rtt(p, 300_000));
            i.snd_una = 1_000;
            i.snd_nxt = 5_000;
            cc.increase_window(&i, &mut w, 1);
            assert_eq!((cc.fast_count, cc.doing_reno_now), (0, 0), "{p:?}");
            assert_eq!((cc.rtt.beg_snd_nxt, cc.rtt.cnt_rtt), (5_000, 0), "{p:?}");
        }
    }
}
