//! TCP-Illinois (loss- and delay-based concave AIMD), and Illinois-AA, the
//! V2G study's more aggressive variant, which is the same law with other
//! shape constants.
//!
//! Sources: S. Liu, T. Başar, R. Srikant, "TCP-Illinois: a loss- and
//! delay-based congestion control algorithm for high-speed networks", Perf.
//! Eval. 65 (2008); Linux `net/ipv4/tcp_illinois.c`; ns-3
//! `src/internet/model/tcp-illinois.cc`; restated in docs/congestion-control.md, '`illinois`'.
//! Illinois-AA: Park et al. 2019, "Improving TCP Performance in Vehicle-To-Grid (V2G)
//! Communication", §4.1.2 and Fig. 10.
//!
//! Once per RTT the average queueing delay `da` (mean RTT of the round minus
//! the minimum RTT ever) and the maximum `dm` (maximum RTT ever minus the
//! minimum) set the additive increase α and the decrease β:
//! * α = α_max while `da ≤ d1 = dm/100` (after the first high round, only
//!   once `theta` = 5 low rounds have been counted, cumulatively), else
//!   `α = (dm−d1)·α_max / ((dm−d1) + (da−d1)·(α_max−α_min)/α_min)`, which falls
//!   from α_max at d1 to α_min at dm;
//! * β = β_min for `da ≤ d2 = dm/10`, β_max for `da ≥ d3 = 8·dm/10`, linear
//!   in between;
//! * below `win_thresh` = 15 segments α = 1 and β = 1/2 (Reno).
//!
//! Growth is `cwnd += α/cwnd` per segment; the loss response is
//! `ssthresh = cwnd·(1−β)`. An RTO (state Loss) resets α = 1, β = 1/2 and the
//! low-delay counters; fast recovery resets nothing.
//!
//! Constants (Linux = ns-3 defaults): α_max 10, α_min 0.3 (Linux 38/128),
//! α_base 1, β_min 1/8, β_max 1/2, β_base 1/2, win_thresh 15, theta 5, and the
//! Linux clamp of RTT samples at `U32_MAX/(128·α_max)` µs (3.36 s).
//! Illinois-AA ([`AA_PARAMS`]): α_max 11, α_min 1.0, β_min 0.025, β_max 0.5.
//!
//! Profiles (the switches of [`IllinoisBehaviour`]):
//! * linux: raw RTT samples in whole µs; α in 1/128 and β in 1/64 fixed
//!   point with the kernel's integer divisions (parameters are rounded to
//!   that grid: β_min 0.025 becomes 2/64); the round ends when the ACK is
//!   strictly past `end_seq`; slow start adds the segments acked (capped at
//!   ssthresh); CA adds ⌊cnt·α⌋/cwnd segments once `cnt·α ≥ cwnd`;
//!   `ssthresh = max(cwnd − ⌊cwnd·β⌋, 2)` from cwnd; β_base is β_max (as in
//!   the kernel); the AI credit is cleared on entering Recovery or Loss
//!   (the kernel sender does that).
//! * ns3: the samples are SRTT values, duplicate ACKs included; `da` and `dm`
//!   are truncated to whole milliseconds (sub-millisecond queueing gives
//!   dm = 0, hence α = α_max, β = β_min); the round ends when the ACK is at or
//!   past `end_seq`; the low-delay counter also counts rounds before the first
//!   high one; the window threshold is compared with cwnd in *bytes* (ns-3
//!   passes `m_cWnd` to a segment threshold, so α = 1/β = 1/2 never applies
//!   in practice); slow start adds 1 MSS per ACK; CA keeps an integer credit
//!   `⌊credit + segs·α⌋` (α·segs < 1 per ACK gives no growth at all) that is
//!   never reset; `ssthresh = max(2, (1−β)·⌊bytes_in_flight/MSS⌋)` segments;
//!   β_base stays 1/2.

use super::reno::{cwnd_segments, slow_start};
use super::{param, CongestionOps, ConnInfo, ParamSpec, Params, Profile, ProfileBehaviour, Window};
use crate::engine::Duration;
use crate::tcp::CaState;

/// Tunables of TCP-Illinois.
pub const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "alpha_max",
        default_ns3: 10.0,
        default_linux: 10.0,
        default_ns2: None,
        min: 0.01,
        max: 100.0,
        doc: "largest additive increase (segments per RTT), used while the average queueing delay stays below d1 = dm/100",
        integer: false,
        at_most: None,
    },
    ParamSpec {
        name: "alpha_min",
        default_ns3: 0.3,
        default_linux: 0.296875,
        default_ns2: None,
        min: 0.01,
        max: 100.0,
        doc: "additive increase at the maximum queueing delay dm (Linux stores 0.3 as 38/128)",
        integer: false,
        at_most: Some("alpha_max"),
    },
    ParamSpec {
        name: "beta_min",
        default_ns3: 0.125,
        default_linux: 0.125,
        default_ns2: None,
        min: 0.0,
        max: 0.99,
        doc: "decrease factor while the average queueing delay is below d2 = dm/10 (ssthresh = cwnd·(1−β))",
        integer: false,
        at_most: Some("beta_max"),
    },
    ParamSpec {
        name: "beta_max",
        default_ns3: 0.5,
        default_linux: 0.5,
        default_ns2: None,
        min: 0.0,
        max: 0.99,
        doc: "decrease factor once the average queueing delay reaches d3 = 8·dm/10",
        integer: false,
        at_most: None,
    },
    ParamSpec {
        name: "win_thresh",
        default_ns3: 15.0,
        default_linux: 15.0,
        default_ns2: None,
        min: 0.0,
        max: 1e6,
        doc: "below this window (segments) α = 1 and β = 1/2; ns-3 compares it with cwnd in bytes, so it never applies there",
        integer: true,
        at_most: None,
    },
    ParamSpec {
        name: "theta",
        default_ns3: 5.0,
        default_linux: 5.0,
        default_ns2: None,
        min: 1.0,
        max: 255.0,
        doc: "low-delay rounds (cumulative) needed before α returns to α_max after a high-delay round",
        integer: true,
        at_most: None,
    },
];

/// Tunables of Illinois-AA (same names, the V2G study's defaults).
pub const AA_PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "alpha_max",
        default_ns3: 11.0,
        default_linux: 11.0,
        default_ns2: None,
        min: 0.01,
        max: 100.0,
        doc: "largest additive increase (Park et al. 2019, Fig. 10: 11, up from 10)",
        integer: false,
        at_most: None,
    },
    ParamSpec {
        name: "alpha_min",
        default_ns3: 1.0,
        default_linux: 1.0,
        default_ns2: None,
        min: 0.01,
        max: 100.0,
        doc: "additive increase at the maximum queueing delay dm (Fig. 10: 1.0, up from 0.3, never below NewReno)",
        integer: false,
        at_most: Some("alpha_max"),
    },
    ParamSpec {
        name: "beta_min",
        default_ns3: 0.025,
        default_linux: 0.025,
        default_ns2: None,
        min: 0.0,
        max: 0.99,
        doc: "decrease factor at low queueing delay (Fig. 10: 0.025, down from 0.125; Linux fixed point rounds it to 2/64)",
        integer: false,
        at_most: Some("beta_max"),
    },
    ParamSpec {
        name: "beta_max",
        default_ns3: 0.5,
        default_linux: 0.5,
        default_ns2: None,
        min: 0.0,
        max: 0.99,
        doc: "decrease factor at high queueing delay (unchanged: 0.5)",
        integer: false,
        at_most: None,
    },
    ParamSpec {
        name: "win_thresh",
        default_ns3: 15.0,
        default_linux: 15.0,
        default_ns2: None,
        min: 0.0,
        max: 1e6,
        doc: "below this window (segments) α = 1 and β = 1/2; ns-3 compares it with cwnd in bytes, so it never applies there",
        integer: true,
        at_most: None,
    },
    ParamSpec {
        name: "theta",
        default_ns3: 5.0,
        default_linux: 5.0,
        default_ns2: None,
        min: 1.0,
        max: 255.0,
        doc: "low-delay rounds (cumulative) needed before α returns to α_max after a high-delay round",
        integer: true,
        at_most: None,
    },
];

/// Linux fixed point: α in 1/128, β in 1/64.
const ALPHA_SCALE: f64 = 128.0;
const ALPHA_SHIFT: u32 = 7;
const BETA_SCALE: f64 = 64.0;
const BETA_SHIFT: u32 = 6;
const ALPHA_BASE: f64 = 1.0;
/// ns-3 `BetaBase` (Linux uses β_max).
const NS3_BETA_BASE: f64 = 0.5;
/// Linux initial `base_rtt` (µs).
const LINUX_BASE_RTT_INIT: u64 = 0x7fff_ffff;

/// Where Illinois follows ns-3 (`tcp-illinois.cc`) or Linux
/// (`tcp_illinois.c`); see the module documentation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IllinoisBehaviour {
    /// Linux: α in 1/128 and β in 1/64 fixed point with the kernel's integer
    /// divisions (`alpha()`, `beta()`; parameters rounded to that grid), raw
    /// RTT samples in whole µs clamped at `U32_MAX/(128·α_max)`. ns-3
    /// (`CalculateAlpha`, `CalculateBeta`): doubles, samples in ns (a zero
    /// sample ignored), `da` and `dm` truncated to whole milliseconds.
    pub fixed_point: bool,
    /// The minimum RTT before the first sample: Linux `base_rtt` starts at
    /// 0x7fffffff µs; ns-3 at the largest time (no sample yet).
    pub base_rtt_init: u64,
    /// β on a small window and after an RTO is β_max (Linux); ns-3 keeps its
    /// own `BetaBase` of 1/2.
    pub beta_base_is_beta_max: bool,
    /// The round ends on an ACK at or past `end_seq` (ns-3); Linux needs one
    /// strictly past it.
    pub round_end_inclusive: bool,
    /// A round ends at the highest sequence sent (Linux `snd_nxt`); ns-3 at
    /// `m_nextTxSequence`, the next to send.
    pub round_end_at_snd_max: bool,
    /// Low-delay rounds count towards `theta` also before the first
    /// high-delay one (ns-3 `CalculateAlpha`); Linux counts only after one.
    pub counts_low_rounds_before_high: bool,
    /// `win_thresh` is compared with cwnd in bytes (ns-3 passes `m_cWnd` to a
    /// segment threshold, so α = 1, β = 1/2 never applies in practice);
    /// Linux compares segments.
    pub win_thresh_in_bytes: bool,
    /// Avoidance keeps an integer credit `⌊credit + segs·α⌋` (never reset; α·segs
    /// < 1 per ACK gives no growth) and adds one segment per cwnd of it
    /// (ns-3); Linux adds ⌊cnt·α⌋/cwnd segments once `cnt·α ≥ cwnd`, cnt
    /// counting the segments acked.
    pub alpha_credit: bool,
    /// `ssthresh = max(2, (1−β)·⌊bytes_in_flight/MSS⌋)` segments in doubles
    /// (ns-3); Linux `max(cwnd − ⌊cwnd·β⌋, 2)` from cwnd.
    pub ssthresh_from_flight: bool,
    /// The AI credit is cleared on entering Recovery or Loss (the Linux
    /// kernel sender does that); ns-3 never resets it.
    pub credit_cleared_on_recovery: bool,
}

impl ProfileBehaviour for IllinoisBehaviour {
    const NS3: Self = IllinoisBehaviour {
        fixed_point: false,
        base_rtt_init: u64::MAX,
        beta_base_is_beta_max: false,
        round_end_inclusive: true,
        round_end_at_snd_max: false,
        counts_low_rounds_before_high: true,
        win_thresh_in_bytes: true,
        alpha_credit: true,
        ssthresh_from_flight: true,
        credit_cleared_on_recovery: false,
    };
    const LINUX: Self = IllinoisBehaviour {
        fixed_point: true,
        base_rtt_init: LINUX_BASE_RTT_INIT,
        beta_base_is_beta_max: true,
        round_end_inclusive: false,
        round_end_at_snd_max: true,
        counts_low_rounds_before_high: false,
        win_thresh_in_bytes: false,
        alpha_credit: false,
        ssthresh_from_flight: false,
        credit_cleared_on_recovery: true,
    };
}

#[derive(Clone, Debug)]
pub struct Illinois {
    b: IllinoisBehaviour,
    /// For the Reno slow start (reno.rs).
    profile: Profile,
    alpha_max: f64,
    alpha_min: f64,
    beta_min: f64,
    beta_max: f64,
    beta_base: f64,
    win_thresh: u64,
    theta: u32,
    /// Linux: largest RTT sample kept (µs), so that `dm·α_max` fits 32 bits.
    rtt_max_us: u64,
    /// Sum and count of this round's samples (linux: µs, ns3: ns).
    sum_rtt: u64,
    cnt_rtt: u32,
    /// Minimum and maximum sample ever (same unit); max is never aged.
    base_rtt: u64,
    max_rtt: u64,
    end_seq: u64,
    alpha: f64,
    beta: f64,
    /// Linux: segments acked by the last ACK (`ca->acked`).
    acked: u32,
    rtt_above: bool,
    rtt_low: u32,
    /// Linux `snd_cwnd_cnt`; ns-3 `m_ackCnt` (integer).
    cwnd_cnt: u64,
}

impl Illinois {
    /// TCP-Illinois with [`PARAMS`].
    pub fn new(params: &Params, profile: Profile) -> Self {
        Self::with_specs(PARAMS, params, profile)
    }

    /// Illinois-AA: the same law with [`AA_PARAMS`].
    pub fn aa(params: &Params, profile: Profile) -> Self {
        Self::with_specs(AA_PARAMS, params, profile)
    }

    fn with_specs(specs: &[ParamSpec], params: &Params, profile: Profile) -> Self {
        let b = IllinoisBehaviour::of(profile);
        let get = |name| param(specs, params, name, profile);
        let (mut alpha_max, mut alpha_min) = (get("alpha_max"), get("alpha_min"));
        let (mut beta_min, mut beta_max) = (get("beta_min"), get("beta_max"));
        if b.fixed_point {
            // Round to the kernel's fixed-point grid (α ≥ 1/128).
            let grid = |v: f64, scale: f64, floor: f64| (v * scale).round().max(floor) / scale;
            alpha_max = grid(alpha_max, ALPHA_SCALE, 1.0);
            alpha_min = grid(alpha_min, ALPHA_SCALE, 1.0);
            beta_min = grid(beta_min, BETA_SCALE, 0.0);
            beta_max = grid(beta_max, BETA_SCALE, 0.0);
        }
        let beta_base = if b.beta_base_is_beta_max {
            beta_max
        } else {
            NS3_BETA_BASE
        };
        Illinois {
            b,
            profile,
            alpha_max,
            alpha_min,
            beta_min,
            beta_max,
            beta_base,
            win_thresh: get("win_thresh") as u64,
            theta: get("theta") as u32,
            rtt_max_us: u64::from(u32::MAX) / (alpha_max * ALPHA_SCALE) as u64,
            sum_rtt: 0,
            cnt_rtt: 0,
            base_rtt: b.base_rtt_init,
            max_rtt: 0,
            end_seq: 0,
            alpha: alpha_max,
            beta: beta_base,
            acked: 0,
            rtt_above: false,
            rtt_low: 0,
            cwnd_cnt: 0,
        }
    }

    /// Current additive-increase factor (segments per RTT).
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// Current decrease factor.
    pub fn beta(&self) -> f64 {
        self.beta
    }

    fn alpha_fp(&self) -> u64 {
        (self.alpha * ALPHA_SCALE).round() as u64
    }

    fn beta_fp(&self) -> u64 {
        (self.beta * BETA_SCALE).round() as u64
    }

    /// A round with `da ≤ d1`: whether α returns to α_max. After a
    /// high-delay round it does once `theta` low rounds are counted
    /// (cumulatively), which clears the count.
    fn low_delay_round(&mut self) -> bool {
        if !self.rtt_above && !self.b.counts_low_rounds_before_high {
            return true;
        }
        let was_above = self.rtt_above;
        self.rtt_low += 1;
        if self.rtt_low >= self.theta {
            self.rtt_low = 0;
            self.rtt_above = false;
            return true;
        }
        !was_above
    }

    /// Linux `alpha()`: da, dm in µs; α in 1/128.
    fn linux_alpha(&mut self, da: u64, dm: u64) -> u64 {
        let amax = (self.alpha_max * ALPHA_SCALE).round() as i64;
        let amin = (self.alpha_min * ALPHA_SCALE).round() as i64;
        let d1 = dm / 100;
        if da <= d1 {
            return if self.low_delay_round() {
                amax as u64
            } else {
                self.alpha_fp()
            };
        }
        self.rtt_above = true;
        let (dm, da) = ((dm - d1) as i64, (da - d1) as i64);
        let den = dm + da * (amax - amin) / amin;
        if den <= 0 {
            return amin as u64;
        }
        (dm * amax / den) as u64
    }

    /// Linux `beta()`: da, dm in µs; β in 1/64.
    fn linux_beta(&self, da: u64, dm: u64) -> u64 {
        let bmin = (self.beta_min * BETA_SCALE).round() as i64;
        let bmax = (self.beta_max * BETA_SCALE).round() as i64;
        let d2 = dm / 10;
        if da <= d2 {
            return bmin as u64;
        }
        let d3 = 8 * dm / 10;
        if da >= d3 || d3 <= d2 {
            return bmax as u64;
        }
        let (d2, d3, da) = (d2 as i64, d3 as i64, da as i64);
        ((bmin * d3 - bmax * d2 + (bmax - bmin) * da) / (d3 - d2)) as u64
    }

    /// ns-3 `CalculateAlpha`: da, dm in (whole) milliseconds.
    fn ns3_alpha(&mut self, da: f64, dm: f64) {
        let d1 = dm / 100.0;
        if da <= d1 {
            if self.low_delay_round() {
                self.alpha = self.alpha_max;
            }
        } else {
            self.rtt_above = true;
            self.alpha = alpha_curve(da, dm, self.alpha_max, self.alpha_min);
        }
    }

    /// ns-3 `CalculateBeta`.
    fn ns3_beta(&mut self, da: f64, dm: f64) {
        self.beta = beta_curve(da, dm, self.beta_min, self.beta_max);
    }

    /// Once per RTT: new α and β from this round's samples, then a new round.
    fn update_params(&mut self, info: &ConnInfo, w: &Window) {
        let cwnd = if self.b.win_thresh_in_bytes {
            w.cwnd
        } else {
            cwnd_segments(info, w)
        };
        if cwnd < self.win_thresh {
            self.alpha = ALPHA_BASE;
            self.beta = self.beta_base;
        } else if self.cnt_rtt > 0 {
            let avg = self.sum_rtt / u64::from(self.cnt_rtt);
            if self.b.fixed_point {
                let dm = self.max_rtt - self.base_rtt;
                let da = avg - self.base_rtt;
                self.alpha = self.linux_alpha(da, dm) as f64 / ALPHA_SCALE;
                self.beta = self.linux_beta(da, dm) as f64 / BETA_SCALE;
            } else {
                const NS_PER_MS: u64 = 1_000_000;
                let dm = ((self.max_rtt - self.base_rtt) / NS_PER_MS) as f64;
                let da = ((avg - self.base_rtt) / NS_PER_MS) as f64;
                self.ns3_alpha(da, dm);
                self.ns3_beta(da, dm);
            }
        }
        self.rtt_reset(info);
    }

    fn rtt_reset(&mut self, info: &ConnInfo) {
        self.end_seq = if self.b.round_end_at_snd_max {
            info.snd_max
        } else {
            info.snd_nxt
        };
        self.cnt_rtt = 0;
        self.sum_rtt = 0;
    }

    /// Avoidance for an ACK of `segments_acked` (see
    /// [`IllinoisBehaviour::alpha_credit`]).
    fn avoidance(&mut self, info: &ConnInfo, w: &mut Window, segments_acked: u32) {
        if self.b.alpha_credit {
            let mut seg = cwnd_segments(info, w);
            let old = seg;
            if segments_acked > 0 {
                let credit = self.cwnd_cnt as f64 + f64::from(segments_acked) * self.alpha;
                self.cwnd_cnt = credit as u32 as u64;
            }
            while self.cwnd_cnt >= seg {
                self.cwnd_cnt -= seg;
                seg += 1;
            }
            if seg != old {
                w.cwnd = seg * info.mss;
            }
        } else {
            self.cwnd_cnt += u64::from(self.acked);
            self.acked = 1;
            let cwnd = cwnd_segments(info, w);
            let delta = (self.cwnd_cnt * self.alpha_fp()) >> ALPHA_SHIFT;
            if delta >= cwnd {
                w.cwnd = (cwnd + delta / cwnd.max(1)) * info.mss;
                self.cwnd_cnt = 0;
            }
        }
    }
}

/// The α curve for `d1 < da ≤ dm` (ns-3 in doubles): α_max at d1, α_min at dm.
fn alpha_curve(da: f64, dm: f64, alpha_max: f64, alpha_min: f64) -> f64 {
    let d1 = dm / 100.0;
    let (dm, da) = (dm - d1, da - d1);
    dm * alpha_max / (dm + da * (alpha_max - alpha_min) / alpha_min)
}

/// The β curve (ns-3 in doubles): β_min up to d2, linear to β_max at d3.
fn beta_curve(da: f64, dm: f64, beta_min: f64, beta_max: f64) -> f64 {
    let d2 = dm / 10.0;
    let d3 = 8.0 * dm / 10.0;
    if da <= d2 {
        beta_min
    } else if da < d3 {
        (beta_min * d3 - beta_max * d2 + (beta_max - beta_min) * da) / (d3 - d2)
    } else {
        beta_max
    }
}

impl CongestionOps for Illinois {
    fn ssthresh(&mut self, info: &ConnInfo, w: &Window, bytes_in_flight: u64) -> u64 {
        if self.b.ssthresh_from_flight {
            let seg_flight = (bytes_in_flight / info.mss) as f64;
            ((1.0 - self.beta) * seg_flight).max(2.0) as u64 * info.mss
        } else {
            let cwnd = cwnd_segments(info, w);
            (cwnd - ((cwnd * self.beta_fp()) >> BETA_SHIFT)).max(2) * info.mss
        }
    }

    fn increase_window(&mut self, info: &ConnInfo, w: &mut Window, segments_acked: u32) {
        let new_round = if self.b.round_end_inclusive {
            info.snd_una >= self.end_seq
        } else {
            info.snd_una > self.end_seq
        };
        if new_round {
            self.update_params(info, w);
        }
        if w.in_slow_start() {
            slow_start(self.profile, info, w, segments_acked);
            return;
        }
        self.avoidance(info, w, segments_acked);
    }

    fn pkts_acked(
        &mut self,
        _info: &ConnInfo,
        _w: &Window,
        segments_acked: u32,
        rtt: Option<Duration>,
    ) {
        self.acked = segments_acked;
        let Some(rtt) = rtt else { return };
        let r = if self.b.fixed_point {
            (rtt.as_nanos() / 1_000).min(self.rtt_max_us)
        } else if rtt > Duration::ZERO {
            rtt.as_nanos()
        } else {
            return;
        };
        self.base_rtt = self.base_rtt.min(r);
        self.max_rtt = self.max_rtt.max(r);
        self.cnt_rtt += 1;
        self.sum_rtt += r;
    }

    fn congestion_state_set(&mut self, info: &ConnInfo, _w: &mut Window, new: CaState) {
        if new == CaState::Loss {
            self.alpha = ALPHA_BASE;
            self.beta = self.beta_base;
            self.rtt_low = 0;
            self.rtt_above = false;
            self.rtt_reset(info);
        }
        if self.b.credit_cleared_on_recovery && matches!(new, CaState::Recovery | CaState::Loss) {
            self.cwnd_cnt = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::reno::test_support::{info, window};
    use super::*;

    fn ms(v: f64) -> Duration {
        Duration::from_nanos((v * 1e6).round() as u64)
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    /// One RTT round: the samples (ms) arrive on ACKs of one segment each,
    /// then an ACK past the round's end recomputes α and β. cwnd is in
    /// congestion avoidance at 100 segments so growth does not interfere.
    struct Rig {
        cc: Illinois,
        info: ConnInfo,
        w: Window,
        seq: u64,
    }

    impl Rig {
        fn new(cc: Illinois, profile: Profile) -> Self {
            Rig {
                cc,
                info: info(profile),
                w: window(100, 2),
                seq: 0,
            }
        }

        fn round(&mut self, samples_ms: &[f64]) {
            for &s in samples_ms {
                self.cc.pkts_acked(&self.info, &self.w, 1, Some(ms(s)));
            }
            // The ACK that closes the round acknowledges past end_seq.
            self.seq += 10_000;
            self.info.snd_una = self.seq;
            self.info.snd_nxt = self.seq + 5_000;
            self.info.snd_max = self.seq + 5_000;
            self.w.cwnd = 100_000;
            self.cc.increase_window(&self.info, &mut self.w, 0);
        }
    }

    #[test]
    fn ns3_alpha_curve_at_d1_midrange_and_dm() {
        // dm = 100 ms, so d1 = 1 ms.
        // da = d1: the low-delay branch, α = α_max = 10.
        let mut cc = Illinois::new(&Params::new(), Profile::Ns3);
        cc.ns3_alpha(1.0, 100.0);
        assert_eq!(cc.alpha, 10.0);
        // da = (d1+dm)/2 = 50.5: α = 99·10 / (99 + 49.5·9.7/0.3) = 990/1699.5.
        let a = alpha_curve(50.5, 100.0, 10.0, 0.3);
        assert!(close(a, 990.0 / 1699.5), "{a}");
        assert!((a - 0.582_524).abs() < 1e-6);
        // da = dm: α = 99·10 / (99 + 99·9.7/0.3) = 10/(1 + 97/3) = 0.3 = α_min.
        assert!(close(alpha_curve(100.0, 100.0, 10.0, 0.3), 0.3));
        // Just above d1 the curve starts at α_max.
        assert!((alpha_curve(1.0 + 1e-9, 100.0, 10.0, 0.3) - 10.0).abs() < 1e-6);
    }

    #[test]
    fn linux_alpha_curve_in_fixed_point() {
        // dm = 100 000 µs, d1 = 1 000 µs; α_max = 1280/128, α_min = 38/128.
        let mut cc = Illinois::new(&Params::new(), Profile::Linux);
        assert_eq!(cc.linux_alpha(1_000, 100_000), 1280, "da = d1: α_max");
        // da = 50 500: 99 000·1280 / (99 000 + ⌊49 500·1242/38⌋ = 1 617 868)
        // = 126 720 000 / 1 716 868 = 73 (α = 0.570).
        assert_eq!(cc.linux_alpha(50_500, 100_000), 73);
        // da = dm: 126 720 000 / (99 000 + ⌊99 000·1242/38⌋ = 3 235 736) = 38.
        assert_eq!(cc.linux_alpha(100_000, 100_000), 38);
    }

    #[test]
    fn beta_at_d2_d3_and_linear_between() {
        // dm = 100 ms: d2 = 10 ms, d3 = 80 ms.
        assert_eq!(beta_curve(10.0, 100.0, 0.125, 0.5), 0.125, "da = d2");
        assert_eq!(beta_curve(80.0, 100.0, 0.125, 0.5), 0.5, "da = d3");
        assert_eq!(beta_curve(95.0, 100.0, 0.125, 0.5), 0.5, "da > d3");
        // Linear: (0.125·80 − 0.5·10 + 0.375·da)/70; da = 45 (midpoint) gives
        // (10 − 5 + 16.875)/70 = 0.3125 = (0.125+0.5)/2; da = 27.5 gives
        // (5 + 10.3125)/70 = 0.21875 (a quarter of the way).
        assert!(close(beta_curve(45.0, 100.0, 0.125, 0.5), 0.3125));
        assert!(close(beta_curve(27.5, 100.0, 0.125, 0.5), 0.21875));
        // Linux, 1/64 units: (8·80 000 − 32·10 000 + 24·45 000)/70 000 = 20 = 0.3125.
        let cc = Illinois::new(&Params::new(), Profile::Linux);
        assert_eq!(cc.linux_beta(10_000, 100_000), 8);
        assert_eq!(cc.linux_beta(45_000, 100_000), 20);
        assert_eq!(cc.linux_beta(27_500, 100_000), 14, "⌊980 000/70 000⌋");
        assert_eq!(cc.linux_beta(80_000, 100_000), 32);
    }

    #[test]
    fn no_queueing_variation_gives_alpha_max_and_beta_min() {
        // Every sample 50 ms: dm = 0 and da = 0 ≤ d1 = d2 = 0, so α = 10,
        // β = 1/8 (cwnd 100 ≥ win_thresh).
        for profile in [Profile::Ns3, Profile::Linux] {
            let mut rig = Rig::new(Illinois::new(&Params::new(), profile), profile);
            rig.round(&[50.0, 50.0, 50.0]);
            rig.round(&[50.0, 50.0]);
            assert_eq!(rig.cc.alpha(), 10.0, "{profile:?}");
            assert_eq!(rig.cc.beta(), 0.125, "{profile:?}");
            // Linux: 100 − ⌊100·8/64⌋ = 100 − 12 = 88 segments.
            // ns-3: ⌊(1 − 0.125)·100⌋ = 87 segments of bytes in flight.
            let i = info(profile);
            let s = rig.cc.ssthresh(&i, &window(100, 1), 100_000);
            let want = if profile == Profile::Linux {
                88_000
            } else {
                87_000
            };
            assert_eq!(s, want, "{profile:?}");
        }
    }

    #[test]
    fn ns3_truncates_delays_to_whole_milliseconds() {
        // Samples 100.0 and 100.9 ms: dm = 0.9 ms → 0 ms under ns-3, so α = 10
        // and β = 1/8; Linux sees dm = 900 µs, da = 450 µs > d1 = 9 µs:
        // α = 891·1280/(891 + ⌊441·1242/38⌋ = 14 413) = 74/128,
        // β = (8·720 − 32·90 + 24·450)/630 = 13 680/630 = 21/64.
        let mut ns3 = Rig::new(Illinois::new(&Params::new(), Profile::Ns3), Profile::Ns3);
        ns3.round(&[100.0, 100.9]);
        assert_eq!((ns3.cc.alpha(), ns3.cc.beta()), (10.0, 0.125));
        let mut lx = Rig::new(
            Illinois::new(&Params::new(), Profile::Linux),
            Profile::Linux,
        );
        lx.round(&[100.0, 100.9]);
        assert_eq!(lx.cc.alpha(), 74.0 / 128.0);
        assert_eq!(lx.cc.beta(), 21.0 / 64.0);
    }

    #[test]
    fn round_average_is_the_mean_of_this_rounds_samples() {
        // Round 1 sets base 100 ms and max 200 ms (dm = 100 ms). Round 2's
        // samples 140 and 160 ms average 150: da = 50 ms (integer), so
        // α = 99·10/(99 + 49·9.7/0.3) = 990/1683.333… and
        // β = (10 − 5 + 0.375·50)/70 = 23.75/70.
        let mut rig = Rig::new(Illinois::new(&Params::new(), Profile::Ns3), Profile::Ns3);
        rig.round(&[100.0, 200.0]);
        rig.round(&[140.0, 160.0]);
        assert!(close(rig.cc.alpha(), 990.0 / (99.0 + 49.0 * 9.7 / 0.3)));
        assert!(close(rig.cc.beta(), 23.75 / 70.0));
    }

    #[test]
    fn rtt_low_counter_is_cumulative() {
        // base 100, max 200 → dm = 100 ms, d1 = 1 ms. A high round is
        // {100, 200} (da = 50 ms); a low round is {100} (da = 0).
        // Linux: high (rtt_above), low ×2 (rtt_low 1, 2: α kept), high (α
        // recomputed, rtt_low stays 2), low ×2 (3, 4: kept), low (5 = theta:
        // α = α_max, counter cleared).
        let mut rig = Rig::new(
            Illinois::new(&Params::new(), Profile::Linux),
            Profile::Linux,
        );
        rig.round(&[100.0, 200.0]);
        // da = 50 000 µs: 99 000·1280/(99 000 + ⌊49 000·1242/38⌋) = 126 720 000/1 700 526 = 74.
        let high = 74.0 / 128.0;
        assert_eq!(rig.cc.alpha(), high);
        rig.round(&[100.0]);
        rig.round(&[100.0]);
        assert_eq!((rig.cc.alpha(), rig.cc.rtt_low), (high, 2));
        rig.round(&[100.0, 200.0]);
        assert_eq!((rig.cc.alpha(), rig.cc.rtt_low), (high, 2), "not cleared");
        rig.round(&[100.0]);
        rig.round(&[100.0]);
        assert_eq!((rig.cc.alpha(), rig.cc.rtt_low), (high, 4));
        rig.round(&[100.0]);
        assert_eq!((rig.cc.alpha(), rig.cc.rtt_low), (10.0, 0));
        assert!(!rig.cc.rtt_above);
    }

    #[test]
    fn ns3_counts_low_rounds_before_the_first_high_one() {
        // Three low rounds at start (dm = 0: α = 10, rtt_low 1, 2, 3), one
        // high round (dm = 100 ms, da = 50 ms), then the 2nd low round brings
        // rtt_low to 5 and α back to α_max; Linux would need five.
        let mut rig = Rig::new(Illinois::new(&Params::new(), Profile::Ns3), Profile::Ns3);
        for _ in 0..3 {
            rig.round(&[100.0]);
        }
        assert_eq!(rig.cc.rtt_low, 3);
        rig.round(&[100.0, 200.0]);
        assert!(rig.cc.alpha() < 1.0);
        rig.round(&[100.0]);
        assert!(rig.cc.alpha() < 1.0, "rtt_low 4: α kept");
        rig.round(&[100.0]);
        assert_eq!((rig.cc.alpha(), rig.cc.rtt_low), (10.0, 0));
        let mut lx = Rig::new(
            Illinois::new(&Params::new(), Profile::Linux),
            Profile::Linux,
        );
        for _ in 0..3 {
            lx.round(&[100.0]);
        }
        assert_eq!(lx.cc.rtt_low, 0, "Linux: no count while never above");
    }

    #[test]
    fn small_window_is_reno_on_linux_only() {
        // cwnd 10 < 15 segments: Linux α = 1, β = 1/2. ns-3 compares 10 000
        // bytes with 15, so it keeps the delay-based values (α = 10, β = 1/8).
        for (profile, want) in [(Profile::Linux, (1.0, 0.5)), (Profile::Ns3, (10.0, 0.125))] {
            let mut cc = Illinois::new(&Params::new(), profile);
            let mut i = info(profile);
            let mut w = window(10, 2);
            cc.pkts_acked(&i, &w, 1, Some(ms(50.0)));
            i.snd_una = 1_000;
            cc.increase_window(&i, &mut w, 1);
            assert_eq!((cc.alpha(), cc.beta()), want, "{profile:?}");
        }
    }

    #[test]
    fn round_boundary_is_inclusive_on_ns3_only() {
        // end_seq = 10 000 after the first round; an ACK of exactly 10 000
        // starts a new round under ns-3 (≥) but not under Linux (>).
        for (profile, recomputed) in [(Profile::Ns3, true), (Profile::Linux, false)] {
            let mut cc = Illinois::new(&Params::new(), profile);
            let mut i = info(profile);
            let mut w = window(100, 2);
            i.snd_una = 1_000;
            i.snd_nxt = 10_000;
            i.snd_max = 10_000;
            cc.increase_window(&i, &mut w, 1);
            assert_eq!(cc.end_seq, 10_000);
            cc.pkts_acked(&i, &w, 1, Some(ms(50.0)));
            i.snd_una = 10_000;
            i.snd_nxt = 20_000;
            i.snd_max = 20_000;
            cc.increase_window(&i, &mut w, 1);
            assert_eq!(cc.end_seq == 20_000, recomputed, "{profile:?}");
            assert_eq!(cc.cnt_rtt == 0, recomputed, "{profile:?}");
        }
    }

    #[test]
    fn linux_avoidance_adds_alpha_over_cwnd_per_segment() {
        // α = 10 (1280/128), cwnd 20: an ACK of 2 segments gives
        // δ = (2·1280) >> 7 = 20 ≥ 20: +1 segment, credit cleared.
        let mut cc = Illinois::new(&Params::new(), Profile::Linux);
        let i = info(Profile::Linux);
        let mut w = window(20, 2);
        cc.pkts_acked(&i, &w, 2, None);
        cc.increase_window(&i, &mut w, 2);
        assert_eq!(w.cwnd, 21_000);
        // cwnd 21: credit 2 → δ = 20 < 21, nothing; credit 4 → δ = 40: +⌊40/21⌋ = 1.
        cc.pkts_acked(&i, &w, 2, None);
        cc.increase_window(&i, &mut w, 2);
        assert_eq!(w.cwnd, 21_000);
        cc.pkts_acked(&i, &w, 2, None);
        cc.increase_window(&i, &mut w, 2);
        assert_eq!(w.cwnd, 22_000);
        assert_eq!(cc.cwnd_cnt, 0);
    }

    #[test]
    fn ns3_integer_credit_stalls_below_one_segment_per_ack() {
        // α = 0.3 and 2 segments per ACK: ⌊0 + 0.6⌋ = 0 every time, so cwnd
        // never grows (ns-3 artifact).
        let mut cc = Illinois::new(&Params::new(), Profile::Ns3);
        cc.alpha = 0.3;
        cc.end_seq = u64::MAX;
        let i = info(Profile::Ns3);
        let mut w = window(20, 2);
        for _ in 0..100 {
            cc.increase_window(&i, &mut w, 2);
        }
        assert_eq!((w.cwnd, cc.cwnd_cnt), (20_000, 0));
        // α = 10, 2 segments: credit 20 ≥ 20 → +1 segment, credit 0.
        cc.alpha = 10.0;
        cc.increase_window(&i, &mut w, 2);
        assert_eq!((w.cwnd, cc.cwnd_cnt), (21_000, 0));
        // α = 0.6, 2 segments: ⌊1.2⌋ = 1 per ACK; 21 ACKs reach 21 → +1.
        cc.alpha = 0.6;
        for _ in 0..20 {
            cc.increase_window(&i, &mut w, 2);
        }
        assert_eq!((w.cwnd, cc.cwnd_cnt), (21_000, 20));
        cc.increase_window(&i, &mut w, 2);
        assert_eq!((w.cwnd, cc.cwnd_cnt), (22_000, 0));
    }

    #[test]
    fn slow_start_per_profile() {
        // ns-3: +1 MSS per ACK whatever it covers; Linux: + segments acked,
        // capped at ssthresh, leftover not used for avoidance.
        let mut cc = Illinois::new(&Params::new(), Profile::Ns3);
        let mut w = window(10, 100);
        cc.increase_window(&info(Profile::Ns3), &mut w, 3);
        assert_eq!(w.cwnd, 11_000);
        let mut cc = Illinois::new(&Params::new(), Profile::Linux);
        let mut w = window(10, 12);
        cc.increase_window(&info(Profile::Linux), &mut w, 3);
        assert_eq!(w.cwnd, 12_000);
    }

    #[test]
    fn ns3_ssthresh_uses_bytes_in_flight() {
        // β = 1/2 at start: ⌊0.5·⌊30 500/1000⌋⌋ = 15 segments; floor 2.
        let mut cc = Illinois::new(&Params::new(), Profile::Ns3);
        let i = info(Profile::Ns3);
        assert_eq!(cc.ssthresh(&i, &window(80, 1), 30_500), 15_000);
        assert_eq!(cc.ssthresh(&i, &window(80, 1), 3_000), 2_000);
        // Linux, β = 32/64: 80 − 40 = 40 segments; cwnd 3 → max(3 − 1, 2) = 2.
        let mut cc = Illinois::new(&Params::new(), Profile::Linux);
        let i = info(Profile::Linux);
        assert_eq!(cc.ssthresh(&i, &window(80, 1), 0), 40_000);
        assert_eq!(cc.ssthresh(&i, &window(3, 1), 0), 2_000);
    }

    #[test]
    fn rto_resets_alpha_beta_but_keeps_rtt_extremes_and_recovery_resets_nothing() {
        for profile in [Profile::Ns3, Profile::Linux] {
            let mut rig = Rig::new(Illinois::new(&Params::new(), profile), profile);
            rig.round(&[100.0, 200.0]);
            rig.round(&[100.0]);
            rig.round(&[100.0]);
            let (a, b, low) = (rig.cc.alpha(), rig.cc.beta(), rig.cc.rtt_low);
            let (i, mut w) = (rig.info, rig.w);
            rig.cc.congestion_state_set(&i, &mut w, CaState::Recovery);
            assert_eq!((rig.cc.alpha(), rig.cc.beta(), rig.cc.rtt_low), (a, b, low));
            rig.cc.congestion_state_set(&i, &mut w, CaState::Loss);
            assert_eq!(
                (rig.cc.alpha(), rig.cc.beta(), rig.cc.rtt_low),
                (1.0, 0.5, 0)
            );
            assert!(!rig.cc.rtt_above);
            assert_eq!(rig.cc.cnt_rtt, 0);
            let (base, max) = match profile {
                Profile::Linux => (100_000, 200_000),
                Profile::Ns3 | Profile::Ns2 => (100_000_000, 200_000_000),
            };
            assert_eq!((rig.cc.base_rtt, rig.cc.max_rtt), (base, max));
        }
    }

    #[test]
    fn linux_clamps_rtt_samples() {
        // RTT_MAX = ⌊(2³²−1)/1280⌋ = 3 355 443 µs.
        let mut cc = Illinois::new(&Params::new(), Profile::Linux);
        let i = info(Profile::Linux);
        cc.pkts_acked(&i, &window(10, 1), 1, Some(Duration::from_secs(10)));
        assert_eq!(cc.max_rtt, 3_355_443);
    }

    #[test]
    fn illinois_aa_defaults_and_curve() {
        // α starts at 11; dm = 0 gives α = 11, β = 0.025 (ns-3) or 2/64 (Linux).
        let cc = Illinois::aa(&Params::new(), Profile::Ns3);
        assert_eq!((cc.alpha(), cc.beta()), (11.0, 0.5));
        let mut rig = Rig::new(Illinois::aa(&Params::new(), Profile::Ns3), Profile::Ns3);
        rig.round(&[50.0]);
        assert_eq!((rig.cc.alpha(), rig.cc.beta()), (11.0, 0.025));
        // ssthresh from 100 segments in flight: ⌊0.975·100⌋ = 97.
        let s = rig.cc.ssthresh(&rig.info, &window(100, 1), 100_000);
        assert_eq!(s, 97_000);
        // At da = dm: 99·11/(99 + 99·10/1) = 11/11 = 1.0 = α_min (never below Reno).
        assert!(close(alpha_curve(100.0, 100.0, 11.0, 1.0), 1.0));
        let mut rig = Rig::new(Illinois::aa(&Params::new(), Profile::Linux), Profile::Linux);
        rig.round(&[50.0]);
        assert_eq!((rig.cc.alpha(), rig.cc.beta()), (11.0, 2.0 / 64.0));
        // 100 − ⌊100·2/64⌋ = 97.
        let s = rig.cc.ssthresh(&rig.info, &window(100, 1), 0);
        assert_eq!(s, 97_000);
        // Linux α at dm: 99 000·1408/(99 000 + 99 000·1280/128) = 128 = 1.0.
        let mut cc = Illinois::aa(&Params::new(), Profile::Linux);
        assert_eq!(cc.linux_alpha(100_000, 100_000), 128);
    }

    #[test]
    fn parameters_override_defaults() {
        let mut p = Params::new();
        p.insert("alpha_max".into(), 4.0);
        p.insert("beta_min".into(), 0.25);
        let mut rig = Rig::new(Illinois::new(&p, Profile::Ns3), Profile::Ns3);
        rig.round(&[50.0]);
        assert_eq!((rig.cc.alpha(), rig.cc.beta()), (4.0, 0.25));
        for spec in PARAMS.iter().chain(AA_PARAMS) {
            assert!(!param(PARAMS, &Params::new(), spec.name, Profile::Ns3).is_nan());
        }
    }
}
