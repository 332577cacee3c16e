//! BIC (binary increase congestion control): after a loss, binary search
//! toward the window where it happened (`W_max`), then probe above it,
//! slowly near `W_max` and faster further away.
//!
//! Sources: L. Xu, K. Harfoush, I. Rhee, "Binary increase congestion control
//! (BIC) for fast long-distance networks", IEEE INFOCOM 2004; Linux
//! `net/ipv4/tcp_bic.c`; ns-3 `src/internet/model/tcp-bic.cc`. Restated, with the
//! profile differences, in docs/congestion-control.md, '`bic`'.
//!
//! In avoidance cwnd grows by one segment per `cnt` segments acked, with
//! (B = 4, S_max = `max_increment` = 16, `smooth_part`):
//! * `cwnd ≤ low_window` (14): `cnt = cwnd` (Reno);
//! * below W_max, with `d = ⌊(W_max − cwnd)/B⌋`: `cwnd/S_max` if d > S_max
//!   (linear), `cwnd·smooth/B` if d ≤ 1 (smooth approach), else `cwnd/d`
//!   (binary search);
//! * at or above W_max: `cwnd·smooth/B` below `W_max + B`, then
//!   `cwnd·(B−1)/(cwnd − W_max)` below `W_max + S_max·(B−1)` (slow start-like
//!   probing), then `cwnd/S_max`;
//! * with W_max = 0 (before any loss) `cnt ≤ 20`; `cnt ≥ 1`.
//!
//! On loss: W_max = `cwnd·(1+β)/2` if cwnd is below the previous W_max (fast
//! convergence) else cwnd; `ssthresh = max(cwnd·β, 2)` (β = 0.8), or the Reno
//! halving at or below low_window.
//!
//! Profiles (the switches of [`BicBehaviour`]):
//! * linux: whole segments; β = 819/1024; `smooth_part` 20; `cnt` is divided
//!   by the delayed-ACK ratio (`delayed_ack`, packets per ACK ×16, starting
//!   at 2 and tracked as `ratio += acked − ratio/16` on ACKs in Open) except
//!   in the Reno region, where the kernel returns before scaling; `cnt` is
//!   recomputed only when cwnd changed or HZ/32 (31 ms) passed; slow start
//!   adds the segments acked and passes the rest to `cong_avoid_ai(cnt)`;
//!   RTO (Loss) resets all state; the AI credit is cleared on entering
//!   Recovery or Loss (the kernel sender does that).
//! * ns3: `smooth_part` 5; fast convergence sets `W_max = ⌊β·cwnd⌋` (0.8, not
//!   0.9); the Reno region is `cwnd < low_window`; no delayed-ACK scaling;
//!   `cnt` recomputed on every ACK; slow start adds 1 MSS per ACK and
//!   passes the rest to avoidance, which adds 1 MSS once the credit is
//!   *greater than* `cnt`; no reset on Loss; below low_window ssthresh is
//!   `max(2·MSS, bytes_in_flight/2)`, above it `⌊max(cwnd·β, 2)·MSS⌋` bytes.

use super::jiffies::{jiffies, HZ};
use super::reno::{cong_avoid_ai, cwnd_segments, slow_start};
use super::{param, CongestionOps, ConnInfo, ParamSpec, Params, Profile, ProfileBehaviour, Window};
use crate::engine::{Duration, Time};
use crate::tcp::CaState;

/// Tunables of BIC.
pub const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "beta",
        default_ns3: 0.8,
        default_linux: 0.8,
        default_ns2: None,
        min: 0.01,
        max: 0.99,
        doc: "multiplicative decrease above low_window: ssthresh = cwnd·β (Linux 819/1024)",
        integer: false,
        at_most: None,
    },
    ParamSpec {
        name: "smooth_part",
        default_ns3: 5.0,
        default_linux: 20.0,
        default_ns2: None,
        min: 1.0,
        max: 1000.0,
        doc: "RTTs to cover the last B segments before W_max (cnt = cwnd·smooth_part/B); Linux 20, ns-3 5",
        integer: true,
        at_most: None,
    },
    ParamSpec {
        name: "max_increment",
        default_ns3: 16.0,
        default_linux: 16.0,
        default_ns2: None,
        min: 1.0,
        max: 1e6,
        doc: "S_max: largest increase per RTT (segments) in the linear regions",
        integer: true,
        at_most: None,
    },
    ParamSpec {
        name: "low_window",
        default_ns3: 14.0,
        default_linux: 14.0,
        default_ns2: None,
        min: 0.0,
        max: 1e6,
        doc: "below this window (segments) BIC behaves like Reno",
        integer: true,
        at_most: None,
    },
    ParamSpec {
        name: "b",
        default_ns3: 4.0,
        default_linux: 4.0,
        default_ns2: None,
        min: 2.0,
        max: 255.0,
        doc: "binary search coefficient B: move (W_max − cwnd)/B per RTT",
        integer: true,
        at_most: None,
    },
    ParamSpec {
        name: "fast_convergence",
        default_ns3: 1.0,
        default_linux: 1.0,
        default_ns2: None,
        min: 0.0,
        max: 1.0,
        doc: "lower W_max when a loss comes below the previous W_max (1 on, 0 off)",
        integer: true,
        at_most: None,
    },
];

const BETA_SCALE: u64 = 1024;
const ACK_RATIO_SHIFT: u32 = 4;
/// Cap on cnt while W_max = 0 (5 % per RTT).
const CNT_NO_LOSS: u64 = 20;

/// Where BIC follows ns-3 (`tcp-bic.cc`) or Linux (`tcp_bic.c`); see the
/// module documentation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BicBehaviour {
    /// Linux `bictcp_update` and `tcp_cong_avoid_ai`: whole segments, β in
    /// 1/1024, the Reno region `cwnd ≤ low_window`, `cnt` recomputed only
    /// when cwnd changed or HZ/32 passed, fast convergence `W_max =
    /// cwnd·(1+β)/2`, `ssthresh = max(cwnd·β, 2)` or the Reno halving from
    /// cwnd. ns-3 `TcpBic::Update`: the Reno region `cwnd < low_window`,
    /// `cnt` recomputed on every ACK, 1 MSS once the credit is greater than
    /// `cnt`, fast convergence `W_max = ⌊β·cwnd⌋`, ssthresh
    /// `max(2·MSS, bytes_in_flight/2)` below low_window, else
    /// `⌊max(cwnd·β, 2)·MSS⌋` bytes.
    pub kernel_arithmetic: bool,
    /// `cnt` is divided by the delayed-ACK ratio (packets per ACK ×16,
    /// tracked on ACKs in Open, Linux `bictcp_acked`) outside the Reno
    /// region; ns-3 has no such scaling.
    pub delayed_ack_scaling: bool,
    /// An RTO (Loss) resets all state (Linux); ns-3 resets nothing.
    pub reset_on_loss: bool,
    /// The AI credit is cleared on entering Recovery or Loss (the Linux
    /// kernel sender does that).
    pub credit_cleared_on_recovery: bool,
}

impl ProfileBehaviour for BicBehaviour {
    const NS3: Self = BicBehaviour {
        kernel_arithmetic: false,
        delayed_ack_scaling: false,
        reset_on_loss: false,
        credit_cleared_on_recovery: false,
    };
    const LINUX: Self = BicBehaviour {
        kernel_arithmetic: true,
        delayed_ack_scaling: true,
        reset_on_loss: true,
        credit_cleared_on_recovery: true,
    };
}

#[derive(Clone, Debug)]
pub struct Bic {
    behaviour: BicBehaviour,
    /// For the Reno slow start (reno.rs).
    profile: Profile,
    beta: f64,
    beta_fp: u64,
    smooth_part: u64,
    max_increment: u64,
    low_window: u64,
    b: u64,
    fast_convergence: bool,
    cnt: u64,
    /// W_max, segments.
    last_max_cwnd: u64,
    last_cwnd: u64,
    last_time: Option<Time>,
    epoch_start: Option<Time>,
    /// Linux: packets per ACK ×16.
    delayed_ack: u32,
    /// Linux `snd_cwnd_cnt`; ns-3 `m_cWndCnt`.
    cwnd_cnt: u64,
}

impl Bic {
    pub fn new(params: &Params, profile: Profile) -> Self {
        let get = |name| param(PARAMS, params, name, profile);
        let beta = get("beta");
        Bic {
            behaviour: BicBehaviour::of(profile),
            profile,
            beta,
            beta_fp: (beta * BETA_SCALE as f64).round() as u64,
            smooth_part: get("smooth_part") as u64,
            max_increment: (get("max_increment") as u64).max(1),
            low_window: get("low_window") as u64,
            b: (get("b") as u64).max(2),
            fast_convergence: get("fast_convergence") >= 0.5,
            cnt: 0,
            last_max_cwnd: 0,
            last_cwnd: 0,
            last_time: None,
            epoch_start: None,
            delayed_ack: 2 << ACK_RATIO_SHIFT,
            cwnd_cnt: 0,
        }
    }

    /// The cnt regions shared by both profiles (cwnd above the Reno region).
    fn region_cnt(&self, cwnd: u64) -> u64 {
        let (wmax, b, smax) = (self.last_max_cwnd, self.b, self.max_increment);
        let cnt = if cwnd < wmax {
            let dist = (wmax - cwnd) / b;
            if dist > smax {
                cwnd / smax
            } else if dist <= 1 {
                cwnd * self.smooth_part / b
            } else {
                cwnd / dist
            }
        } else if cwnd < wmax + b {
            cwnd * self.smooth_part / b
        } else if cwnd < wmax + smax * (b - 1) {
            cwnd * (b - 1) / (cwnd - wmax)
        } else {
            cwnd / smax
        };
        if wmax == 0 {
            cnt.min(CNT_NO_LOSS)
        } else {
            cnt
        }
    }

    /// Linux `bictcp_update`.
    fn linux_update(&mut self, now: Time, cwnd: u64) {
        if let Some(last) = self.last_time {
            let since = jiffies(now).wrapping_sub(jiffies(last)) as i32;
            if self.last_cwnd == cwnd && since <= (HZ / 32) as i32 {
                return;
            }
        }
        self.last_cwnd = cwnd;
        self.last_time = Some(now);
        self.epoch_start.get_or_insert(now);
        if cwnd <= self.low_window {
            self.cnt = cwnd;
            return;
        }
        let cnt = self.region_cnt(cwnd);
        self.cnt = if self.behaviour.delayed_ack_scaling {
            ((cnt << ACK_RATIO_SHIFT) / u64::from(self.delayed_ack.max(1))).max(1)
        } else {
            cnt.max(1)
        };
    }

    /// ns-3 `TcpBic::Update`.
    fn ns3_update(&mut self, now: Time, seg: u64) -> u64 {
        self.last_cwnd = seg;
        self.epoch_start.get_or_insert(now);
        if seg < self.low_window {
            return seg;
        }
        self.region_cnt(seg).max(1)
    }

    fn reset(&mut self) {
        self.cnt = 0;
        self.last_max_cwnd = 0;
        self.last_cwnd = 0;
        self.last_time = None;
        self.epoch_start = None;
        self.delayed_ack = 2 << ACK_RATIO_SHIFT;
    }
}

impl CongestionOps for Bic {
    fn ssthresh(&mut self, info: &ConnInfo, w: &Window, bytes_in_flight: u64) -> u64 {
        self.epoch_start = None;
        let cwnd = cwnd_segments(info, w);
        if self.behaviour.kernel_arithmetic {
            self.last_max_cwnd = if cwnd < self.last_max_cwnd && self.fast_convergence {
                cwnd * (BETA_SCALE + self.beta_fp) / (2 * BETA_SCALE)
            } else {
                cwnd
            };
            if cwnd <= self.low_window {
                (cwnd / 2).max(2) * info.mss
            } else {
                (cwnd * self.beta_fp / BETA_SCALE).max(2) * info.mss
            }
        } else {
            self.last_max_cwnd = if cwnd < self.last_max_cwnd && self.fast_convergence {
                (self.beta * cwnd as f64) as u32 as u64
            } else {
                cwnd
            };
            if cwnd < self.low_window {
                (bytes_in_flight / 2).max(2 * info.mss)
            } else {
                ((cwnd as f64 * self.beta).max(2.0) * info.mss as f64) as u32 as u64
            }
        }
    }

    fn increase_window(&mut self, info: &ConnInfo, w: &mut Window, segments_acked: u32) {
        let mut acked = segments_acked;
        if w.in_slow_start() {
            acked = slow_start(self.profile, info, w, acked);
            if acked == 0 {
                return;
            }
        }
        if self.behaviour.kernel_arithmetic {
            self.linux_update(info.now, cwnd_segments(info, w));
            cong_avoid_ai(info, w, &mut self.cwnd_cnt, self.cnt, acked);
        } else if !w.in_slow_start() && acked > 0 {
            self.cwnd_cnt += u64::from(acked);
            let cnt = self.ns3_update(info.now, cwnd_segments(info, w));
            self.cnt = cnt;
            if self.cwnd_cnt > cnt {
                w.cwnd += info.mss;
                self.cwnd_cnt = 0;
            }
        }
    }

    fn pkts_acked(
        &mut self,
        info: &ConnInfo,
        _w: &Window,
        segments_acked: u32,
        _rtt: Option<Duration>,
    ) {
        // Linux `bictcp_acked`: ratio = 15/16·ratio + acked (in 1/16 units).
        if self.behaviour.delayed_ack_scaling && info.ca_state == CaState::Open {
            self.delayed_ack = self
                .delayed_ack
                .wrapping_add(segments_acked)
                .wrapping_sub(self.delayed_ack >> ACK_RATIO_SHIFT);
        }
    }

    fn congestion_state_set(&mut self, _info: &ConnInfo, _w: &mut Window, new: CaState) {
        if self.behaviour.reset_on_loss && new == CaState::Loss {
            self.reset();
        }
        if self.behaviour.credit_cleared_on_recovery
            && matches!(new, CaState::Recovery | CaState::Loss)
        {
            self.cwnd_cnt = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::reno::test_support::{info, window};
    use super::*;

    fn bic(profile: Profile, wmax: u64) -> Bic {
        let mut b = Bic::new(&Params::new(), profile);
        b.last_max_cwnd = wmax;
        b
    }

    #[test]
    fn ns3_cnt_regions() {
        // W_max = 100, B = 4, S_max = 16, smooth_part 5 (ns-3), no ACK-ratio
        // scaling.
        let mut b = bic(Profile::Ns3, 100);
        let t = Time::ZERO;
        // Reno region: cwnd < 14 → cnt = cwnd.
        assert_eq!(b.ns3_update(t, 13), 13);
        // cwnd 14 is not in it under ns-3 (<): d = ⌊86/4⌋ = 21 > 16 → 14/16 = 0 → 1.
        assert_eq!(b.ns3_update(t, 14), 1);
        // Linear: cwnd 20, d = 20 > 16 → ⌊20/16⌋ = 1.
        assert_eq!(b.ns3_update(t, 20), 1);
        // Binary search: cwnd 60, d = 10 → ⌊60/10⌋ = 6.
        assert_eq!(b.ns3_update(t, 60), 6);
        // Smooth approach: cwnd 97, d = ⌊3/4⌋ = 0 ≤ 1 → ⌊97·5/4⌋ = 121.
        assert_eq!(b.ns3_update(t, 97), 121);
        // Just above W_max (< W_max + B): ⌊102·5/4⌋ = 127.
        assert_eq!(b.ns3_update(t, 102), 127);
        // Max probing (< W_max + 16·3 = 148): ⌊110·3/10⌋ = 33.
        assert_eq!(b.ns3_update(t, 110), 33);
        // Linear above: cwnd 200 → ⌊200/16⌋ = 12.
        assert_eq!(b.ns3_update(t, 200), 12);
    }

    #[test]
    fn linux_cnt_regions_scaled_by_delayed_ack_ratio() {
        // smooth_part 20; delayed_ack = 32 (2 packets per ACK) halves cnt:
        // cnt·16/32, at least 1; the Reno region (≤ 14) is not scaled.
        let cases = [
            (14, 14),   // ≤ low_window: cnt = cwnd, returned before scaling
            (20, 1),    // ⌊20/16⌋ = 1 → ⌊16/32⌋ = 0 → 1
            (60, 3),    // ⌊60/10⌋ = 6 → 3
            (97, 242),  // ⌊97·20/4⌋ = 485 → 242
            (102, 255), // ⌊102·20/4⌋ = 510 → 255
            (110, 16),  // ⌊110·3/10⌋ = 33 → 16
            (200, 6),   // ⌊200/16⌋ = 12 → 6
        ];
        for (cwnd, want) in cases {
            let mut b = bic(Profile::Linux, 100);
            b.linux_update(Time::ZERO, cwnd);
            assert_eq!(b.cnt, want, "cwnd {cwnd}");
        }
        // One packet per ACK (ratio 16): unscaled, e.g. cwnd 60 → 6.
        let mut b = bic(Profile::Linux, 100);
        b.delayed_ack = 16;
        b.linux_update(Time::ZERO, 60);
        assert_eq!(b.cnt, 6);
    }

    #[test]
    fn no_loss_yet_caps_cnt_at_20() {
        // W_max = 0, low_window 0, smooth_part 40: cwnd 3 < 0 + B → ⌊3·40/4⌋ = 30 → 20.
        let mut p = Params::new();
        p.insert("low_window".into(), 0.0);
        p.insert("smooth_part".into(), 40.0);
        let mut b = Bic::new(&p, Profile::Ns3);
        assert_eq!(b.ns3_update(Time::ZERO, 3), 20);
        // Without the cap rule (W_max = 1): ⌊3·40/4⌋ = 30.
        b.last_max_cwnd = 1;
        assert_eq!(b.ns3_update(Time::ZERO, 3), 30);
    }

    #[test]
    fn linux_delayed_ack_ratio_tracks_packets_per_ack() {
        // ratio ← ratio + acked − ratio/16: 32 + 1 − 2 = 31, then 31 + 1 − 1 = 31,
        // only in Open.
        let mut b = Bic::new(&Params::new(), Profile::Linux);
        let mut i = info(Profile::Linux);
        let w = window(20, 1);
        b.pkts_acked(&i, &w, 1, None);
        assert_eq!(b.delayed_ack, 31);
        b.pkts_acked(&i, &w, 1, None);
        assert_eq!(b.delayed_ack, 31);
        i.ca_state = CaState::Disorder;
        b.pkts_acked(&i, &w, 5, None);
        assert_eq!(b.delayed_ack, 31);
    }

    #[test]
    fn linux_recomputes_only_on_change_or_after_31_ms() {
        let mut b = bic(Profile::Linux, 100);
        b.linux_update(Time::ZERO, 60);
        assert_eq!(b.cnt, 3);
        b.last_max_cwnd = 200;
        b.linux_update(Time(31_000_000), 60);
        assert_eq!(b.cnt, 3, "same cwnd within HZ/32");
        // 32 ms: d = ⌊140/4⌋ = 35 > 16 → ⌊60/16⌋ = 3 → ⌊3·16/32⌋ = 1.
        b.linux_update(Time(32_000_000), 60);
        assert_eq!(b.cnt, 1);
    }

    #[test]
    fn avoidance_step_per_profile() {
        // ns-3: cnt 6 (cwnd 60, W_max 100); one segment per ACK: the counter
        // must exceed 6, so the 7th ACK adds one MSS.
        let mut b = bic(Profile::Ns3, 100);
        let i = info(Profile::Ns3);
        let mut w = window(60, 10);
        for _ in 0..6 {
            b.increase_window(&i, &mut w, 1);
        }
        assert_eq!(w.cwnd, 60_000);
        b.increase_window(&i, &mut w, 1);
        assert_eq!((w.cwnd, b.cwnd_cnt), (61_000, 0));
        // Linux: cnt 3 with ratio 32: cong_avoid_ai(3): 2-segment ACKs, +1 once
        // the credit reaches 3 (second ACK: credit 4 → +1, 1 left).
        let mut b = bic(Profile::Linux, 100);
        let i = info(Profile::Linux);
        let mut w = window(60, 10);
        b.increase_window(&i, &mut w, 2);
        assert_eq!(w.cwnd, 60_000);
        b.increase_window(&i, &mut w, 2);
        assert_eq!((w.cwnd, b.cwnd_cnt), (61_000, 1));
    }

    #[test]
    fn slow_start_per_profile() {
        // ns-3: +1 MSS, the rest to avoidance; Linux: + acked capped.
        let mut b = Bic::new(&Params::new(), Profile::Ns3);
        let mut w = window(10, 100);
        b.increase_window(&info(Profile::Ns3), &mut w, 2);
        assert_eq!(w.cwnd, 11_000);
        let mut b = Bic::new(&Params::new(), Profile::Linux);
        let mut w = window(10, 100);
        b.increase_window(&info(Profile::Linux), &mut w, 2);
        assert_eq!(w.cwnd, 12_000);
    }

    #[test]
    fn ssthresh_and_wmax_per_profile() {
        // Linux: first loss at 100 → W_max 100, ssthresh ⌊100·819/1024⌋ = 79;
        // second at 90 < 100 → W_max ⌊90·1843/2048⌋ = 80, ssthresh ⌊90·819/1024⌋ = 71;
        // at 10 ≤ 14 → ⌊10/2⌋ = 5.
        let mut b = Bic::new(&Params::new(), Profile::Linux);
        let i = info(Profile::Linux);
        assert_eq!(b.ssthresh(&i, &window(100, 1), 0), 79_000);
        assert_eq!(b.last_max_cwnd, 100);
        assert_eq!(b.ssthresh(&i, &window(90, 1), 0), 71_000);
        assert_eq!(b.last_max_cwnd, 80);
        assert_eq!(b.ssthresh(&i, &window(10, 1), 0), 5_000);
        // ns-3: W_max 100, ssthresh 80·1000; at 90: W_max ⌊0.8·90⌋ = 72,
        // ssthresh 72 000; at 13 < 14: max(2 000, flight/2).
        let mut b = Bic::new(&Params::new(), Profile::Ns3);
        let i = info(Profile::Ns3);
        assert_eq!(b.ssthresh(&i, &window(100, 1), 0), 80_000);
        assert_eq!(b.ssthresh(&i, &window(90, 1), 0), 72_000);
        assert_eq!(b.last_max_cwnd, 72);
        assert_eq!(b.ssthresh(&i, &window(13, 1), 9_000), 4_500);
        // Fractional segments survive in bytes: 21·0.8 = 16.8 → 16 800.
        assert_eq!(b.ssthresh(&i, &window(21, 1), 0), 16_800);
    }

    #[test]
    fn loss_resets_linux_only() {
        for (profile, wmax) in [(Profile::Linux, 0), (Profile::Ns3, 100)] {
            let mut b = Bic::new(&Params::new(), profile);
            let i = info(profile);
            let mut w = window(100, 1);
            b.ssthresh(&i, &w, 100_000);
            b.congestion_state_set(&i, &mut w, CaState::Loss);
            assert_eq!(b.last_max_cwnd, wmax, "{profile:?}");
        }
    }
}
