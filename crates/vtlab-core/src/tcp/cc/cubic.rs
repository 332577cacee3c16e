//! CUBIC: the window follows a cubic function of the time since the last
//! reduction, `W(t) = C·(t−K)³ + W_max` with `K = ∛(W_max·(1−β)/C)`, plus a
//! Reno-friendly floor, with HyStart ([`super::hystart`]) ending slow start
//! early.
//!
//! Sources: I. Rhee, L. Xu, S. Ha, "CUBIC: a new TCP-friendly high-speed TCP
//! variant", ACM SIGOPS OSR 42(5) (2008); RFC 8312 / RFC 9438; Linux
//! `net/ipv4/tcp_cubic.c` (authoritative); ns-3
//! `src/internet/model/tcp-cubic.cc`; restated in docs/congestion-control.md, '`cubic`'.
//!
//! Constants: β = 0.7 (Linux 717/1024), C = 0.4 (Linux `bic_scale` 41, i.e.
//! 410/1024), fast convergence on (`W_max = cwnd·(1+β)/2` when a loss comes
//! below the previous maximum), Reno-friendliness on (a Reno window estimate
//! grows by one segment per `cwnd·⌊8(1+β)/(3(1−β))⌋/8 = 15·cwnd/8` segments
//! acked), `cnt` capped at 20 before the first loss, `cnt ≥ 2` (at most 1.5×
//! per RTT). On each ACK in avoidance, with `t = now − epoch_start +
//! delay_min`: `target = origin + C·(t−K)³`, `cnt = cwnd/(target−cwnd)` (or
//! `100·cwnd` when target ≤ cwnd), and cwnd grows one segment per `cnt`
//! segments acked. `ssthresh = max(cwnd·β, 2)`. An RTO zeroes the state.
//!
//! Profiles (the switches of [`CubicBehaviour`]):
//! * linux: whole segments; jiffies at HZ 1000 ([`super::jiffies`]); K in
//!   1/1024 s from an integer cube root (the kernel's table-plus-Newton root
//!   is within about 0.2 % of it); `cnt` recomputed at most once per jiffy
//!   and, for an unchanged cwnd, at most every HZ/32 jiffies; `delay_min` is
//!   the minimum raw sample (µs), ignored for 1 s after an epoch starts;
//!   slow start adds the segments acked (capped at ssthresh) and passes the
//!   rest to avoidance, which is `cong_avoid_ai(cnt)`; an RTO (Loss) zeroes
//!   everything, W_max and delay_min included; the AI credit is cleared on
//!   entering Recovery or Loss (the kernel sender does that). The kernel's
//!   shift of `epoch_start` over idle periods (TX_START) is not modelled: the
//!   bulk sender is never idle.
//! * ns3: K and the target in floating point (C = 0.4 exactly); `delay_min`
//!   is the minimum SRTT, samples ignored for 10 ms (`CubicDelta`) after an
//!   epoch starts; slow start adds `segments·MSS` uncapped and nothing goes
//!   to avoidance on that ACK; avoidance adds at most one MSS per ACK with
//!   the credit reduced by `cnt`; `cnt` recomputed on every ACK; W_max on
//!   fast convergence is `⌊cwnd·(1+β)/2⌋` and ssthresh `⌊cwnd·β⌋` in floating
//!   point (so 90·0.7 gives 62); the RTO reset keeps W_max; HyStart uses the
//!   ns-3 thresholds (see [`super::hystart`]).

use super::hystart::{self, HyStart};
use super::jiffies::{jiffies, msecs_to_jiffies, usecs, usecs_to_jiffies, HZ};
use super::reno::{cong_avoid_ai, cwnd_segments, slow_start};
use super::{
    param, CongestionOps, ConnInfo, CwndEvent, ParamSpec, Params, Profile, ProfileBehaviour, Window,
};
use crate::engine::{Duration, Time};
use crate::tcp::CaState;

/// Tunables of CUBIC (HyStart's included).
pub const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "beta",
        default_ns3: 0.7,
        default_linux: 0.7,
        default_ns2: None,
        min: 0.01,
        max: 0.99,
        doc: "multiplicative decrease: ssthresh = cwnd·β (Linux 717/1024)",
        integer: false,
        at_most: None,
    },
    ParamSpec {
        name: "c",
        default_ns3: 0.4,
        default_linux: 0.4,
        default_ns2: None,
        min: 0.01,
        max: 10.0,
        doc: "cubic scaling constant C (segments/s³; Linux bic_scale 41 = 0.4004)",
        integer: false,
        at_most: None,
    },
    ParamSpec {
        name: "fast_convergence",
        default_ns3: 1.0,
        default_linux: 1.0,
        default_ns2: None,
        min: 0.0,
        max: 1.0,
        doc: "release bandwidth faster: W_max = cwnd·(1+β)/2 when a loss comes below the previous W_max",
        integer: true,
        at_most: None,
    },
    ParamSpec {
        name: "tcp_friendliness",
        default_ns3: 1.0,
        default_linux: 1.0,
        default_ns2: None,
        min: 0.0,
        max: 1.0,
        doc: "grow at least as fast as an estimated Reno window (RFC 9438 Reno-friendly region)",
        integer: true,
        at_most: None,
    },
    ParamSpec {
        name: "cnt_clamp",
        default_ns3: 20.0,
        default_linux: 20.0,
        default_ns2: None,
        min: 1.0,
        max: 1e6,
        doc: "before the first loss (W_max = 0), grow at least one segment per this many acked (5 %/RTT)",
        integer: true,
        at_most: None,
    },
    ParamSpec {
        name: "cubic_delta",
        default_ns3: 10.0,
        default_linux: 1000.0,
        default_ns2: None,
        min: 0.0,
        max: 100000.0,
        doc: "RTT samples are ignored for this long (ms) after an epoch starts (Linux HZ = 1 s, ns-3 CubicDelta 10 ms)",
        integer: false,
        at_most: None,
    },
    hystart::PARAMS[0],
    hystart::PARAMS[1],
    hystart::PARAMS[2],
    hystart::PARAMS[3],
    hystart::PARAMS[4],
    hystart::PARAMS[5],
    hystart::PARAMS[6],
];

/// Linux fixed point: β in 1/1024, time in 1/1024 s (`BICTCP_HZ` = 10).
const BETA_SCALE: u64 = 1024;
const BICTCP_HZ: u32 = 10;

/// Where CUBIC follows ns-3 (`tcp-cubic.cc`) or Linux (`tcp_cubic.c`); see
/// the module documentation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CubicBehaviour {
    /// Linux `bictcp_update` and `tcp_cong_avoid_ai`: whole segments,
    /// jiffies at HZ 1000, K in 1/1024 s from an integer cube root, `cnt`
    /// recomputed at most once per jiffy (and every HZ/32 jiffies for an
    /// unchanged cwnd), β in 1/1024 for ssthresh and W_max, RTT samples in
    /// whole µs ignored for `cubic_delta` in jiffies after an epoch starts.
    /// ns-3 `TcpCubic::Update`: K and the target in floating point, `cnt`
    /// recomputed on every ACK, avoidance at most one MSS per ACK with the
    /// credit reduced by `cnt`, W_max `⌊cwnd·(1+β)/2⌋` and ssthresh
    /// `⌊cwnd·β⌋` in floating point.
    pub kernel_arithmetic: bool,
    /// Slow start adds `segments·MSS` uncapped and passes nothing to
    /// avoidance on that ACK (ns-3); Linux adds the segments acked, capped
    /// at ssthresh, and passes the rest to avoidance.
    pub slow_start_uncapped: bool,
    /// The reset on an RTO keeps W_max (ns-3 `CubicReset`); Linux
    /// `bictcp_reset` zeroes everything, W_max included.
    pub reset_keeps_w_max: bool,
    /// The AI credit is cleared on entering Recovery or Loss (the Linux
    /// kernel sender does that); ns-3 keeps it.
    pub credit_cleared_on_recovery: bool,
    /// The first HyStart round starts at connection start (Linux
    /// `cubictcp_init`); ns-3 starts it on the first slow-start ACK.
    pub hystart_round_at_start: bool,
}

impl ProfileBehaviour for CubicBehaviour {
    const NS3: Self = CubicBehaviour {
        kernel_arithmetic: false,
        slow_start_uncapped: true,
        reset_keeps_w_max: true,
        credit_cleared_on_recovery: false,
        hystart_round_at_start: false,
    };
    const LINUX: Self = CubicBehaviour {
        kernel_arithmetic: true,
        slow_start_uncapped: false,
        reset_keeps_w_max: false,
        credit_cleared_on_recovery: true,
        hystart_round_at_start: true,
    };
}

#[derive(Clone, Debug)]
pub struct Cubic {
    b: CubicBehaviour,
    /// For the Reno slow start (reno.rs).
    profile: Profile,
    beta: f64,
    c: f64,
    fast_convergence: bool,
    tcp_friendliness: bool,
    cnt_clamp: u64,
    sample_discard: Duration,
    /// Linux: β·1024, 1024·C/10 and the derived scale factors.
    beta_fp: u64,
    cube_rtt_scale: u64,
    cube_factor: u64,
    beta_scale: u64,
    /// Segments acked per +1 segment.
    cnt: u64,
    /// W_max, in segments.
    last_max_cwnd: u64,
    last_cwnd: u64,
    last_time: Option<Time>,
    origin: u64,
    /// K: linux in 1/1024 s, ns3 in seconds.
    k_fp: u64,
    k_secs: f64,
    delay_min: Option<Duration>,
    epoch_start: Option<Time>,
    ack_cnt: u64,
    tcp_cwnd: u64,
    /// Linux `snd_cwnd_cnt`; ns-3 `m_cWndCnt`.
    cwnd_cnt: u64,
    hystart: HyStart,
    /// HyStart fired in `pkts_acked`; ssthresh = cwnd at the next increase.
    hystart_exit: bool,
    started: bool,
}

impl Cubic {
    pub fn new(params: &Params, profile: Profile) -> Self {
        let get = |name| param(PARAMS, params, name, profile);
        let beta = get("beta");
        let c = get("c");
        let beta_fp = (beta * BETA_SCALE as f64).round() as u64;
        let bic_scale = ((c * BETA_SCALE as f64 / 10.0).round() as u64).max(1);
        Cubic {
            b: CubicBehaviour::of(profile),
            profile,
            beta,
            c,
            fast_convergence: get("fast_convergence") >= 0.5,
            tcp_friendliness: get("tcp_friendliness") >= 0.5,
            cnt_clamp: get("cnt_clamp") as u64,
            sample_discard: Duration::from_nanos((get("cubic_delta") * 1e6).round() as u64),
            beta_fp,
            cube_rtt_scale: bic_scale * 10,
            cube_factor: (1u64 << (10 + 3 * BICTCP_HZ)) / (bic_scale * 10),
            beta_scale: 8 * (BETA_SCALE + beta_fp) / 3 / (BETA_SCALE - beta_fp).max(1),
            cnt: 0,
            last_max_cwnd: 0,
            last_cwnd: 0,
            last_time: None,
            origin: 0,
            k_fp: 0,
            k_secs: 0.0,
            delay_min: None,
            epoch_start: None,
            ack_cnt: 0,
            tcp_cwnd: 0,
            cwnd_cnt: 0,
            hystart: HyStart::new(PARAMS, params, profile),
            hystart_exit: false,
            started: false,
        }
    }

    /// Linux `bictcp_update`: recompute `cnt` for a cwnd of `cwnd` segments.
    fn linux_update(&mut self, now: Time, cwnd: u64, acked: u64) {
        let jnow = jiffies(now);
        self.ack_cnt += acked;
        if let Some(last) = self.last_time {
            let since = jnow.wrapping_sub(jiffies(last)) as i32;
            if self.last_cwnd == cwnd && since <= (HZ / 32) as i32 {
                return;
            }
        }
        let same_jiffy = self.last_time.is_some_and(|l| jiffies(l) == jnow);
        if !(self.epoch_start.is_some() && same_jiffy) {
            self.last_cwnd = cwnd;
            self.last_time = Some(now);
            if self.epoch_start.is_none() {
                self.epoch_start = Some(now);
                self.ack_cnt = acked;
                self.tcp_cwnd = cwnd;
                if self.last_max_cwnd <= cwnd {
                    self.k_fp = 0;
                    self.origin = cwnd;
                } else {
                    self.k_fp = cbrt(self.cube_factor * (self.last_max_cwnd - cwnd));
                    self.origin = self.last_max_cwnd;
                }
            }
            let epoch = jiffies(self.epoch_start.unwrap_or(now));
            let mut t = u64::from(jnow.wrapping_sub(epoch));
            t += u64::from(usecs_to_jiffies(self.delay_min.map_or(0, usecs)));
            t = (t << BICTCP_HZ) / u64::from(HZ);
            let offs = t.abs_diff(self.k_fp);
            let delta = (self
                .cube_rtt_scale
                .wrapping_mul(offs)
                .wrapping_mul(offs)
                .wrapping_mul(offs)
                >> (10 + 3 * BICTCP_HZ)) as u32;
            let origin = self.origin as u32;
            let target = if t < self.k_fp {
                origin.wrapping_sub(delta)
            } else {
                origin.wrapping_add(delta)
            };
            let target = u64::from(target);
            self.cnt = if target > cwnd {
                cwnd / (target - cwnd)
            } else {
                100 * cwnd
            };
            if self.last_max_cwnd == 0 && self.cnt > self.cnt_clamp {
                self.cnt = self.cnt_clamp;
            }
        }
        if self.tcp_friendliness {
            self.cnt = self.friendly_cnt(cwnd, self.beta_scale);
        }
        self.cnt = self.cnt.max(2);
    }

    /// The Reno-friendly bound on `cnt` (both profiles).
    fn friendly_cnt(&mut self, cwnd: u64, scale: u64) -> u64 {
        let delta = ((cwnd * scale) >> 3).max(1);
        while self.ack_cnt > delta {
            self.ack_cnt -= delta;
            self.tcp_cwnd += 1;
        }
        if self.tcp_cwnd > cwnd {
            let max_cnt = cwnd / (self.tcp_cwnd - cwnd);
            return self.cnt.min(max_cnt);
        }
        self.cnt
    }

    /// ns-3 `TcpCubic::Update`: `cnt` for a cwnd of `seg` segments.
    fn ns3_update(&mut self, now: Time, seg: u64, acked: u64) -> u64 {
        self.ack_cnt += acked;
        if self.epoch_start.is_none() {
            self.epoch_start = Some(now);
            self.ack_cnt = acked;
            self.tcp_cwnd = seg;
            if self.last_max_cwnd <= seg {
                self.k_secs = 0.0;
                self.origin = seg;
            } else {
                self.k_secs = ((self.last_max_cwnd - seg) as f64 / self.c).powf(1.0 / 3.0);
                self.origin = self.last_max_cwnd;
            }
        }
        let epoch = self.epoch_start.unwrap_or(now);
        let t = (now + self.delay_min.unwrap_or(Duration::ZERO)).since(epoch);
        let t = t.as_nanos() as f64 / 1e9;
        let offs = (t - self.k_secs).abs();
        let delta = (self.c * offs.powf(3.0)) as u32;
        let origin = self.origin as u32;
        let target = if t < self.k_secs {
            origin.wrapping_sub(delta)
        } else {
            origin.wrapping_add(delta)
        };
        let target = u64::from(target);
        self.cnt = if target > seg {
            seg / (target - seg)
        } else {
            100 * seg
        };
        if self.last_max_cwnd == 0 && self.cnt > self.cnt_clamp {
            self.cnt = self.cnt_clamp;
        }
        if self.tcp_friendliness {
            let b = self.beta * BETA_SCALE as f64;
            let scale = (8.0 * (BETA_SCALE as f64 + b) / 3.0 / (BETA_SCALE as f64 - b)) as u64;
            self.cnt = self.friendly_cnt(seg, scale);
        }
        self.cnt.max(2)
    }

    /// Linux `bictcp_reset` / ns-3 `CubicReset` (ns-3 keeps W_max).
    fn reset(&mut self) {
        if !self.b.reset_keeps_w_max {
            self.last_max_cwnd = 0;
            self.last_cwnd = 0;
            self.last_time = None;
            self.epoch_start = None;
            self.cnt = 0;
        }
        self.origin = 0;
        self.k_fp = 0;
        self.k_secs = 0.0;
        self.delay_min = None;
        self.ack_cnt = 0;
        self.tcp_cwnd = 0;
    }

    fn apply_hystart_exit(&mut self, w: &mut Window) {
        if self.hystart_exit {
            self.hystart_exit = false;
            w.ssthresh = w.cwnd;
        }
    }
}

/// ⌊∛a⌋.
fn cbrt(a: u64) -> u64 {
    let mut x = (a as f64).cbrt().round() as u64;
    while x > 0 && x.saturating_mul(x).saturating_mul(x) > a {
        x -= 1;
    }
    while (x + 1).saturating_mul(x + 1).saturating_mul(x + 1) <= a {
        x += 1;
    }
    x
}

impl CongestionOps for Cubic {
    fn ssthresh(&mut self, info: &ConnInfo, w: &Window, _bytes_in_flight: u64) -> u64 {
        self.hystart_exit = false;
        self.epoch_start = None;
        let cwnd = cwnd_segments(info, w);
        if self.b.kernel_arithmetic {
            self.last_max_cwnd = if cwnd < self.last_max_cwnd && self.fast_convergence {
                cwnd * (BETA_SCALE + self.beta_fp) / (2 * BETA_SCALE)
            } else {
                cwnd
            };
            (cwnd * self.beta_fp / BETA_SCALE).max(2) * info.mss
        } else {
            self.last_max_cwnd = if cwnd < self.last_max_cwnd && self.fast_convergence {
                (cwnd as f64 * (1.0 + self.beta) / 2.0) as u32 as u64
            } else {
                cwnd
            };
            ((cwnd as f64 * self.beta) as u32 as u64).max(2) * info.mss
        }
    }

    fn increase_window(&mut self, info: &ConnInfo, w: &mut Window, segments_acked: u32) {
        self.apply_hystart_exit(w);
        let mut acked = segments_acked;
        if w.in_slow_start() {
            // A new HyStart round where its round check is not in the sample (ns-3).
            self.hystart.on_slow_start_ack(info);
            if self.b.slow_start_uncapped {
                w.cwnd += u64::from(acked) * info.mss;
                acked = 0;
            } else {
                acked = slow_start(self.profile, info, w, acked);
            }
            if acked == 0 {
                return;
            }
        }
        if self.b.kernel_arithmetic {
            let cwnd = cwnd_segments(info, w);
            self.linux_update(info.now, cwnd, u64::from(acked));
            cong_avoid_ai(info, w, &mut self.cwnd_cnt, self.cnt, acked);
        } else if !w.in_slow_start() && acked > 0 {
            self.cwnd_cnt += u64::from(acked);
            let cnt = self.ns3_update(info.now, cwnd_segments(info, w), u64::from(acked));
            if self.cwnd_cnt >= cnt {
                w.cwnd += info.mss;
                self.cwnd_cnt -= cnt;
            }
        }
    }

    fn pkts_acked(
        &mut self,
        info: &ConnInfo,
        w: &Window,
        _segments_acked: u32,
        rtt: Option<Duration>,
    ) {
        let Some(rtt) = rtt else { return };
        let delay = if self.b.kernel_arithmetic {
            if let Some(epoch) = self.epoch_start {
                let since = jiffies(info.now).wrapping_sub(jiffies(epoch)) as i32;
                let discard = msecs_to_jiffies(self.sample_discard.as_nanos() / 1_000_000);
                if since < discard as i32 {
                    return;
                }
            }
            Duration::from_micros(usecs(rtt).max(1))
        } else {
            if self
                .epoch_start
                .is_some_and(|e| info.now.since(e) < self.sample_discard)
            {
                return;
            }
            rtt
        };
        let delay_min = self.delay_min.map_or(delay, |d| d.min(delay));
        self.delay_min = Some(delay_min);
        if self.hystart.on_sample(info, w, delay, delay_min) {
            self.hystart_exit = true;
        }
    }

    fn congestion_state_set(&mut self, info: &ConnInfo, _w: &mut Window, new: CaState) {
        if new == CaState::Loss {
            self.hystart_exit = false;
            self.reset();
            self.hystart.restart(info);
        }
        if self.b.credit_cleared_on_recovery && matches!(new, CaState::Recovery | CaState::Loss) {
            self.cwnd_cnt = 0;
        }
    }

    fn cwnd_event(&mut self, info: &ConnInfo, _w: &mut Window, event: CwndEvent) {
        // Linux `cubictcp_init` starts the first HyStart round at connection
        // start; ns-3 starts it on the first slow-start ACK.
        if event == CwndEvent::TxStart && !self.started {
            self.started = true;
            if self.b.hystart_round_at_start {
                self.hystart.reset_round(info);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::reno::test_support::{info, window};
    use super::*;

    fn at(profile: Profile, ms: u64) -> ConnInfo {
        let mut i = info(profile);
        i.now = Time(ms * 1_000_000);
        i
    }

    /// A controller after a loss at cwnd 100 (W_max = 100), with cwnd set
    /// to the new ssthresh (70) as at the end of recovery.
    fn after_loss(profile: Profile) -> (Cubic, Window) {
        let mut cc = Cubic::new(&Params::new(), profile);
        let i = info(profile);
        let s = cc.ssthresh(&i, &window(100, u64::MAX), 100_000);
        assert_eq!(s, 70_000, "⌊100·0.7⌋ (Linux ⌊100·717/1024⌋) = 70");
        assert_eq!(cc.last_max_cwnd, 100);
        (
            cc,
            Window {
                cwnd: s,
                ssthresh: s,
            },
        )
    }

    #[test]
    fn k_for_wmax_100_and_cwnd_70() {
        // K = ∛((W_max − cwnd)/C) = ∛(30/0.4) = 4.2172 s (ns-3);
        // Linux: ⌊∛(⌊2⁴⁰/410⌋·30)⌋ = ⌊∛80 452 070 310⌋ = 4316 /1024 s = 4.2148 s
        // (= ∛(30·1024/410) s, C = 0.4004).
        let (mut cc, _) = after_loss(Profile::Ns3);
        cc.ns3_update(Time::ZERO, 70, 1);
        assert!((cc.k_secs - 75f64.cbrt()).abs() < 1e-12);
        assert!((cc.k_secs - 4.217_163).abs() < 1e-6);
        assert_eq!(cc.origin, 100);
        let (mut cc, _) = after_loss(Profile::Linux);
        assert_eq!(cc.cube_factor, 2_681_735_677);
        cc.linux_update(Time::ZERO, 70, 1);
        assert_eq!((cc.k_fp, cc.origin), (4316, 100));
        assert_eq!(cbrt(80_452_070_310), 4316);
    }

    #[test]
    fn target_window_and_cnt_along_the_curve() {
        // Linux, delay_min 0, epoch at t = 0:
        // t = 0:     offs = 4316, δ = ⌊410·4316³/2⁴⁰⌋ = 29, target 71, cnt = 70/1 = 70
        // t = 1 s:   t = 1024, offs = 3292, δ = 13, target 87, cnt = ⌊70/17⌋ = 4
        // t = 6 s:   t = 6144, offs = 1828, δ = 2, target 102, cnt = ⌊70/32⌋ = 2
        // t = 8 s:   t = 8192, offs = 3876, δ = 21, target 121, cnt = ⌊70/51⌋ = 1 → 2
        let (mut cc, _) = after_loss(Profile::Linux);
        for (ms, cnt) in [(0, 70), (1000, 4), (6000, 2), (8000, 2)] {
            cc.linux_update(Time(ms * 1_000_000), 70, 1);
            assert_eq!(cc.cnt, cnt, "t = {ms} ms");
        }
        // ns-3: offs = |t − 4.2172|; δ = ⌊0.4·offs³⌋.
        // t = 1 s: offs 3.2172, δ = ⌊13.32⌋ = 13, target 87, cnt 4;
        // t = 6 s: offs 1.7828, δ = ⌊2.27⌋ = 2, target 102, cnt 2;
        // t = 8 s: offs 3.7828, δ = ⌊21.65⌋ = 21, target 121, cnt max(1, 2) = 2.
        let (mut cc, _) = after_loss(Profile::Ns3);
        cc.ns3_update(Time::ZERO, 70, 1);
        for (ms, cnt) in [(1000, 4), (6000, 2), (8000, 2)] {
            assert_eq!(
                cc.ns3_update(Time(ms * 1_000_000), 70, 1),
                cnt,
                "t = {ms} ms"
            );
        }
    }

    #[test]
    fn delay_min_shifts_the_curve() {
        // t = now − epoch + delay_min: at now = 990 ms with delay_min 10 ms
        // the target is that of t = 1 s (cnt 4).
        let (mut cc, _) = after_loss(Profile::Linux);
        cc.delay_min = Some(Duration::from_millis(10));
        cc.linux_update(Time::ZERO, 70, 1);
        cc.linux_update(Time(990_000_000), 70, 1);
        assert_eq!(cc.cnt, 4);
        let (mut cc, _) = after_loss(Profile::Ns3);
        cc.delay_min = Some(Duration::from_millis(10));
        cc.ns3_update(Time::ZERO, 70, 1);
        assert_eq!(cc.ns3_update(Time(990_000_000), 70, 1), 4);
    }

    #[test]
    fn linux_recomputes_cnt_at_most_every_32nd_of_a_second_for_same_cwnd() {
        // After the epoch start at t = 0 (cnt 70), an ACK at 20 ms with the
        // same cwnd keeps cnt; at 1 s it is recomputed (4).
        let (mut cc, _) = after_loss(Profile::Linux);
        cc.linux_update(Time::ZERO, 70, 1);
        cc.cnt = 999;
        cc.linux_update(Time(20_000_000), 70, 1);
        assert_eq!(cc.cnt, 999);
        cc.linux_update(Time(1_000_000_000), 70, 1);
        assert_eq!(cc.cnt, 4);
    }

    #[test]
    fn reno_friendly_region_linux() {
        // cwnd = W_max = 100: K = 0, origin 100, target = 100 near the epoch
        // start, so cubic's cnt = 100·cwnd = 10 000. The Reno estimate starts
        // at 100 and gains a segment per ⌊100·15/8⌋ = 187 segments acked.
        // 94 ACKs of 2 segments at t = 0 (cnt frozen: same cwnd, same jiffy),
        // then one at 40 ms: ack_cnt = 190 > 187 → tcp_cwnd 101 > 100 →
        // cnt = min(10 000, 100/1) = 100. The credit (190) then passes 100: +1.
        let mut cc = Cubic::new(&Params::new(), Profile::Linux);
        cc.last_max_cwnd = 100;
        let mut i = at(Profile::Linux, 0);
        let mut w = window(100, 50);
        for _ in 0..94 {
            cc.increase_window(&i, &mut w, 2);
        }
        assert_eq!((cc.cnt, cc.ack_cnt, w.cwnd), (10_000, 188, 100_000));
        i.now = Time(40_000_000);
        cc.increase_window(&i, &mut w, 2);
        assert_eq!((cc.tcp_cwnd, cc.ack_cnt), (101, 3));
        assert_eq!(cc.cnt, 100);
        assert_eq!(w.cwnd, 101_000);
        // Without friendliness cwnd stays put.
        let mut p = Params::new();
        p.insert("tcp_friendliness".into(), 0.0);
        let mut cc = Cubic::new(&p, Profile::Linux);
        cc.last_max_cwnd = 100;
        let mut w = window(100, 50);
        for k in 0..95 {
            i.now = Time(if k < 94 { 0 } else { 40_000_000 });
            cc.increase_window(&i, &mut w, 2);
        }
        assert_eq!((cc.cnt, w.cwnd), (10_000, 100_000));
    }

    #[test]
    fn reno_friendly_region_ns3() {
        // ns-3 re-evaluates on every ACK: the 94th ACK of 2 segments brings
        // ack_cnt to 188 > 187, tcp_cwnd to 101 and cnt to 100; the credit is
        // 188 ≥ 100, so +1 MSS and the credit drops to 88.
        let mut cc = Cubic::new(&Params::new(), Profile::Ns3);
        cc.last_max_cwnd = 100;
        let i = at(Profile::Ns3, 0);
        let mut w = window(100, 50);
        for _ in 0..93 {
            cc.increase_window(&i, &mut w, 2);
        }
        assert_eq!((cc.cnt, w.cwnd, cc.cwnd_cnt), (10_000, 100_000, 186));
        cc.increase_window(&i, &mut w, 2);
        assert_eq!((cc.tcp_cwnd, cc.cnt), (101, 100));
        assert_eq!((w.cwnd, cc.cwnd_cnt), (101_000, 88));
    }

    #[test]
    fn avoidance_growth_per_profile() {
        // cnt 4 at t = 1 s after the loss (see above).
        // Linux: cong_avoid_ai(4): +1 segment per 4 acked; an ACK of 8 gives +2.
        let (mut cc, mut w) = after_loss(Profile::Linux);
        cc.increase_window(&at(Profile::Linux, 0), &mut w, 1);
        assert_eq!(w.cwnd, 70_000, "cnt 70 at the epoch start");
        cc.increase_window(&at(Profile::Linux, 1000), &mut w, 8);
        assert_eq!(cc.cnt, 4);
        assert_eq!(w.cwnd, 72_000);
        // ns-3: at most one MSS per ACK; credit 1 + 8 = 9 ≥ 4 → +1, credit 5.
        let (mut cc, mut w) = after_loss(Profile::Ns3);
        cc.increase_window(&at(Profile::Ns3, 0), &mut w, 1);
        cc.increase_window(&at(Profile::Ns3, 1000), &mut w, 8);
        assert_eq!((w.cwnd, cc.cwnd_cnt), (71_000, 5));
    }

    #[test]
    fn ssthresh_and_fast_convergence_per_profile() {
        // Second loss at cwnd 90 < W_max 100:
        // Linux W_max = ⌊90·1741/2048⌋ = 76, ssthresh ⌊90·717/1024⌋ = 63;
        // ns-3 W_max = ⌊90·1.7/2⌋ = 76, ssthresh ⌊90·0.7⌋ = 62 (62.999… in
        // floating point).
        for (profile, ss) in [(Profile::Linux, 63_000), (Profile::Ns3, 62_000)] {
            let (mut cc, _) = after_loss(profile);
            let i = info(profile);
            assert_eq!(cc.ssthresh(&i, &window(90, 1), 0), ss, "{profile:?}");
            assert_eq!(cc.last_max_cwnd, 76, "{profile:?}");
            assert!(cc.epoch_start.is_none());
            // Without fast convergence W_max is the cwnd at loss.
            let mut p = Params::new();
            p.insert("fast_convergence".into(), 0.0);
            let mut cc = Cubic::new(&p, profile);
            cc.last_max_cwnd = 100;
            cc.ssthresh(&i, &window(90, 1), 0);
            assert_eq!(cc.last_max_cwnd, 90);
            // Floor of 2 segments.
            assert_eq!(cc.ssthresh(&i, &window(2, 1), 0), 2_000);
        }
    }

    #[test]
    fn first_epoch_caps_cnt_before_any_loss() {
        // W_max = 0: cwnd 100, target ≤ cwnd → cnt 10 000, capped to 20.
        let mut cc = Cubic::new(&Params::new(), Profile::Ns3);
        assert_eq!(cc.ns3_update(Time::ZERO, 100, 1), 20);
        let mut cc = Cubic::new(&Params::new(), Profile::Linux);
        cc.linux_update(Time::ZERO, 100, 1);
        assert_eq!(cc.cnt, 20);
    }

    #[test]
    fn slow_start_per_profile() {
        // ns-3 adds segments·MSS uncapped; Linux adds segments capped at
        // ssthresh and passes the rest to avoidance.
        let mut cc = Cubic::new(&Params::new(), Profile::Ns3);
        let mut w = window(10, 11);
        cc.increase_window(&info(Profile::Ns3), &mut w, 3);
        assert_eq!(w.cwnd, 13_000);
        let mut cc = Cubic::new(&Params::new(), Profile::Linux);
        let mut w = window(10, 11);
        cc.increase_window(&info(Profile::Linux), &mut w, 3);
        assert_eq!(w.cwnd, 11_000);
        assert_eq!(cc.cwnd_cnt, 2, "2 leftover segments credited to avoidance");
    }

    #[test]
    fn delay_min_and_sample_discard() {
        // Linux: samples within 1 s of the epoch start are ignored; ns-3 only
        // within 10 ms.
        for (profile, later_ms, kept) in [
            (Profile::Linux, 500, false),
            (Profile::Linux, 1000, true),
            (Profile::Ns3, 5, false),
            (Profile::Ns3, 10, true),
        ] {
            let mut cc = Cubic::new(&Params::new(), profile);
            let i = at(profile, 0);
            let w = window(10, 5);
            cc.pkts_acked(&i, &w, 1, Some(Duration::from_millis(30)));
            assert_eq!(cc.delay_min, Some(Duration::from_millis(30)));
            cc.epoch_start = Some(Time::ZERO);
            cc.pkts_acked(
                &at(profile, later_ms),
                &w,
                1,
                Some(Duration::from_millis(20)),
            );
            let want = if kept { 20 } else { 30 };
            assert_eq!(
                cc.delay_min,
                Some(Duration::from_millis(want)),
                "{profile:?} {later_ms}"
            );
        }
    }

    #[test]
    fn rto_resets_state_ns3_keeps_wmax() {
        for (profile, wmax) in [(Profile::Linux, 0), (Profile::Ns3, 100)] {
            let (mut cc, mut w) = after_loss(profile);
            let i = info(profile);
            cc.pkts_acked(&i, &w, 1, Some(Duration::from_millis(30)));
            cc.increase_window(&i, &mut w, 1);
            cc.congestion_state_set(&i, &mut w, CaState::Loss);
            assert_eq!(cc.last_max_cwnd, wmax, "{profile:?}");
            assert_eq!((cc.delay_min, cc.origin, cc.tcp_cwnd), (None, 0, 0));
            assert!(!cc.hystart.found());
        }
    }

    #[test]
    fn hystart_ack_train_ends_slow_start_linux() {
        // Connection start at t = 0 opens the first round (end_seq 100 000).
        // ACKs of one segment every 1 ms with RTT 10 ms: the train exceeds
        // delay_min/2 = 5 ms at t = 6 ms; cwnd then is 20 + 5 = 25 segments
        // (the exit is applied before this ACK's growth): ssthresh = 25.
        let mut cc = Cubic::new(&Params::new(), Profile::Linux);
        let mut i = at(Profile::Linux, 0);
        i.snd_max = 100_000;
        let mut w = window(20, u64::MAX);
        cc.cwnd_event(&i, &mut w, CwndEvent::TxStart);
        for t in 1..=6 {
            i.now = Time(t * 1_000_000);
            i.snd_una = t * 1000;
            cc.pkts_acked(&i, &w, 1, Some(Duration::from_millis(10)));
            cc.increase_window(&i, &mut w, 1);
        }
        assert_eq!(w.ssthresh, 25_000);
        assert_eq!(
            w.cwnd, 25_000,
            "in avoidance, first epoch: cnt 20, credit 1"
        );
    }

    #[test]
    fn hystart_ack_train_ends_slow_start_ns3() {
        // ns-3 opens the round on the first slow-start ACK (t = 1 ms) and
        // needs a train longer than delay_min = 10 ms: exit at t = 12 ms with
        // cwnd 20 + 11 = 31 segments.
        let mut cc = Cubic::new(&Params::new(), Profile::Ns3);
        let mut i = at(Profile::Ns3, 0);
        i.snd_max = 100_000;
        let mut w = window(20, u64::MAX);
        for t in 1..=12 {
            i.now = Time(t * 1_000_000);
            i.snd_una = t * 1000;
            cc.pkts_acked(&i, &w, 1, Some(Duration::from_millis(10)));
            cc.increase_window(&i, &mut w, 1);
            if t < 12 {
                assert_eq!(w.ssthresh, u64::MAX, "t = {t}");
            }
        }
        assert_eq!((w.ssthresh, w.cwnd), (31_000, 31_000));
    }

    #[test]
    fn hystart_delay_exit_through_the_hooks() {
        // Linux, ACKs 10 ms apart (no train), delay_min 40 ms from the first
        // sample, later samples 50 ms; the exit needs a round minimum above
        // 40 + clamp(40/8, 4, 16) = 45 ms after 8 samples.
        let mut cc = Cubic::new(&Params::new(), Profile::Linux);
        let mut i = at(Profile::Linux, 0);
        i.snd_max = 1_000_000;
        let mut w = window(20, u64::MAX);
        cc.cwnd_event(&i, &mut w, CwndEvent::TxStart);
        let mut exit_at = None;
        for k in 1..=12u64 {
            i.now = Time(k * 10_000_000);
            i.snd_una = k * 1000;
            let rtt = if k == 1 { 40 } else { 50 };
            cc.pkts_acked(&i, &w, 1, Some(Duration::from_millis(rtt)));
            cc.increase_window(&i, &mut w, 1);
            if exit_at.is_none() && w.ssthresh != u64::MAX {
                exit_at = Some(k);
            }
        }
        // The round minimum includes the first 40 ms sample, so it never
        // exceeds 45 ms in this round: no exit.
        assert_eq!(exit_at, None);
        // A fresh round (ACK past end_seq) without the low sample exits on
        // its 9th sample.
        i.snd_una = 1_000_001;
        i.snd_max = 2_000_000;
        for k in 13..=30u64 {
            i.now = Time(k * 10_000_000);
            i.snd_una += 1000;
            cc.pkts_acked(&i, &w, 1, Some(Duration::from_millis(50)));
            cc.increase_window(&i, &mut w, 1);
            if exit_at.is_none() && w.ssthresh != u64::MAX {
                exit_at = Some(k);
            }
        }
        // Round reset at k = 13 (first sample of the round, count 1), samples
        // 13..20 count to 8, k = 21 checks: 50 > 45 → exit.
        assert_eq!(exit_at, Some(21));
    }
}
