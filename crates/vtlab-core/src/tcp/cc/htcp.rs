//! H-TCP: the additive increase grows with the time Δ since the last
//! congestion event, and the decrease adapts to the ratio of minimum to
//! maximum RTT (a proxy for how full the bottleneck queue was).
//!
//! Sources: D. Leith, R. Shorten, "H-TCP: TCP for high-speed and
//! long-distance networks", PFLDnet 2004, and "H-TCP: TCP congestion control
//! for high bandwidth-delay product paths" (IETF draft, 2008); Linux
//! `net/ipv4/tcp_htcp.c`; ns-3 `src/internet/model/tcp-htcp.cc`. Restated, with the
//! profile differences, in docs/congestion-control.md, '`htcp`'.
//!
//! Law: `f(Δ) = 1` for Δ ≤ Δ_L (1 s), else `1 + 10(Δ−Δ_L) + ((Δ−Δ_L)/2)²`
//! (seconds); `α = max(2·f·(1−β), 1)`; in avoidance `cwnd += α/cwnd` per
//! segment. On congestion `ssthresh = cwnd·β` with β = minRTT/maxRTT clamped
//! to [0.5, 0.8] when the throughput before the event is close to that before
//! the previous one, else 0.5.
//!
//! Profiles (the switches of [`HtcpBehaviour`]):
//! * linux: jiffies at HZ 1000 ([`super::jiffies`]) for Δ and the RTTs
//!   (samples rounded up to whole jiffies); α and β in 1/128; `f` in integer
//!   arithmetic (`1 + (10·d + (d/2)²/HZ)/HZ`, d in jiffies: whole steps);
//!   RTT scaling `f·minRTT/100 ms` with the ratio `100 ms/minRTT` clamped to
//!   [0.5, 10] (so the multiplier is within [0.1, 2]); β adapts only from the
//!   second event on (`modeswitch`), only when minRTT > 10 ms, and goes back
//!   to 0.5 when the maximum throughput (packets per second, smoothed 3:1
//!   once per window, reset in the first 3 minRTTs after an event) moved by
//!   more than ±20 %; maxRTT takes samples in Open within 20 ms of the
//!   current maximum and fades to `minRTT + 95 % (maxRTT − minRTT)` at each
//!   event; Δ counts from entering Recovery/Loss and again from the return
//!   to Open; slow start adds the segments acked; avoidance adds one segment
//!   once `credit·α ≥ cwnd` (credit = segments acked in Open);
//!   `ssthresh = max(⌊cwnd·β⌋, 2)`; the AI credit is cleared on entering
//!   Recovery or Loss (the kernel sender does that).
//! * ns3: floating point; β starts at 0 (α = 2 until the first loss); α is
//!   recomputed on every ACK, duplicates included; Δ counts from the last
//!   ssthresh call; no RTT scaling and no clamp of β (β_max 1); β =
//!   minRTT/maxRTT (SRTT extremes since the last event) when the throughput
//!   (bytes acked in Open since the last event over the elapsed time) rose
//!   and `⌊rise/previous⌋ ≤ 0.2` in integer division, i.e. by less than
//!   100 %, else 0.5; avoidance adds `⌊MSS²/cwnd + α⌋` bytes per ACK (α in
//!   bytes, not α·MSS²/cwnd: an ns-3 artifact kept for validation); slow
//!   start adds 1 MSS per ACK; `ssthresh = max(2·MSS, ⌊β·bytes_in_flight⌋)`.

use super::jiffies::{jiffies, msecs_to_jiffies, usecs, usecs_to_jiffies, HZ};
use super::reno::{cwnd_segments, slow_start};
use super::{
    param, CongestionOps, ConnInfo, CwndEvent, ParamSpec, Params, Profile, ProfileBehaviour, Window,
};
use crate::engine::{Duration, Time};
use crate::tcp::CaState;

/// Tunables of H-TCP.
pub const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "delta_l",
        default_ns3: 1.0,
        default_linux: 1.0,
        default_ns2: None,
        min: 0.0,
        max: 100.0,
        doc: "Δ_L (s): for this long after a congestion event H-TCP grows like Reno",
        integer: false,
        at_most: None,
    },
    ParamSpec {
        name: "beta_min",
        default_ns3: 0.5,
        default_linux: 0.5,
        default_ns2: None,
        min: 0.0,
        max: 1.0,
        doc: "default decrease factor, used when β does not adapt (ns-3 DefaultBackoff; Linux BETA_MIN 64/128, also the lower clamp)",
        integer: false,
        at_most: Some("beta_max"),
    },
    ParamSpec {
        name: "beta_max",
        default_ns3: 1.0,
        default_linux: 0.8,
        default_ns2: None,
        min: 0.0,
        max: 1.0,
        doc: "upper clamp of the adaptive β = minRTT/maxRTT (Linux 102/128; ns-3 has none: 1)",
        integer: false,
        at_most: None,
    },
    ParamSpec {
        name: "throughput_ratio",
        default_ns3: 0.2,
        default_linux: 0.2,
        default_ns2: None,
        min: 0.0,
        max: 10.0,
        doc: "throughput change that turns the adaptive β off (Linux: max throughput moved by more than ±20 %; ns-3: ⌊rise/previous⌋ compared with it)",
        integer: false,
        at_most: None,
    },
    ParamSpec {
        name: "rtt_scaling",
        default_ns3: 0.0,
        default_linux: 1.0,
        default_ns2: None,
        min: 0.0,
        max: 1.0,
        doc: "scale α by minRTT/100 ms (clamped to [0.1, 2]); Linux use_rtt_scaling on, ns-3 has none",
        integer: true,
        at_most: None,
    },
    ParamSpec {
        name: "bandwidth_switch",
        default_ns3: 1.0,
        default_linux: 1.0,
        default_ns2: None,
        min: 0.0,
        max: 1.0,
        doc: "Linux use_bandwidth_switch: measure throughput and reset β to beta_min when it moves (ns-3 always applies its throughput rule)",
        integer: true,
        at_most: None,
    },
];

/// Linux fixed point: α and β in 1/128.
const SCALE: u32 = 128;
/// Linux: the adaptive β needs minRTT above this (ms).
const MIN_RTT_FOR_BETA_MS: u64 = 10;
/// Linux: maxRTT ignores samples more than this above it (ms).
const MAX_RTT_SPIKE_MS: u64 = 20;

/// Where H-TCP follows ns-3 (`tcp-htcp.cc`) or Linux (`tcp_htcp.c`); see
/// the module documentation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HtcpBehaviour {
    /// Linux `tcp_htcp.c` (`htcp_alpha_update`, `htcp_beta_update`,
    /// `measure_rtt`, `measure_achieved_throughput`): jiffies at HZ 1000, α
    /// and β in 1/128, β adaptive only from the second event and with minRTT
    /// above 10 ms, throughput in packets per second smoothed 3:1, maxRTT
    /// taking samples within 20 ms of it in Open and fading at each event, α
    /// updated at each added segment and each event, one segment added once
    /// `credit·α ≥ cwnd`, `ssthresh = max(⌊cwnd·β⌋, 2)`. ns-3 `TcpHtcp`
    /// (`UpdateAlpha`, `UpdateBeta`): doubles, β from 0, α recomputed on
    /// every ACK, Δ counted from the last ssthresh call, β = minRTT/maxRTT
    /// when the throughput (bytes acked in Open over the time since the
    /// event) rose by less than 100 %, `⌊MSS²/cwnd + α⌋` bytes per ACK,
    /// `ssthresh = max(2·MSS, ⌊β·bytes_in_flight⌋)`.
    pub kernel_arithmetic: bool,
    /// The slow-start step's leftover segments go to avoidance on the same
    /// ACK (ns-3 `IncreaseWindow`); Linux adds only the slow-start step.
    pub slow_start_rest_to_avoidance: bool,
    /// Δ counts from entering Recovery or Loss and again from the return to
    /// Open (Linux); ns-3 counts it from the last ssthresh call.
    pub delta_from_state_changes: bool,
    /// The AI credit is cleared on entering Recovery or Loss (the Linux
    /// kernel sender does that).
    pub credit_cleared_on_recovery: bool,
}

impl ProfileBehaviour for HtcpBehaviour {
    const NS3: Self = HtcpBehaviour {
        kernel_arithmetic: false,
        slow_start_rest_to_avoidance: true,
        delta_from_state_changes: false,
        credit_cleared_on_recovery: false,
    };
    const LINUX: Self = HtcpBehaviour {
        kernel_arithmetic: true,
        slow_start_rest_to_avoidance: false,
        delta_from_state_changes: true,
        credit_cleared_on_recovery: true,
    };
}

#[derive(Clone, Debug)]
pub struct Htcp {
    b: HtcpBehaviour,
    /// For the Reno slow start (reno.rs).
    profile: Profile,
    delta_l: Duration,
    beta_min: f64,
    beta_max: f64,
    throughput_ratio: f64,
    rtt_scaling: bool,
    bandwidth_switch: bool,
    // ---- linux (jiffies, 1/128) ----
    alpha: u32,
    beta: u32,
    modeswitch: bool,
    pkts_acked: u32,
    packetcount: u32,
    min_rtt: u32,
    max_rtt: u32,
    last_cong: u32,
    undo_last_cong: Option<u32>,
    min_b: u32,
    max_b: u32,
    old_max_b: u32,
    bi: u32,
    lasttime: u32,
    cwnd_cnt: u64,
    started: bool,
    // ---- ns3 ----
    n_alpha: f64,
    n_beta: f64,
    last_con: Time,
    n_min_rtt: Option<Duration>,
    n_max_rtt: Option<Duration>,
    throughput: u32,
    last_throughput: u32,
    data_sent: u64,
}

impl Htcp {
    pub fn new(params: &Params, profile: Profile) -> Self {
        let get = |name| param(PARAMS, params, name, profile);
        let beta_min = get("beta_min");
        Htcp {
            b: HtcpBehaviour::of(profile),
            profile,
            delta_l: Duration::from_nanos((get("delta_l") * 1e9).round() as u64),
            beta_min,
            beta_max: get("beta_max"),
            throughput_ratio: get("throughput_ratio"),
            rtt_scaling: get("rtt_scaling") >= 0.5,
            bandwidth_switch: get("bandwidth_switch") >= 0.5,
            alpha: SCALE,
            beta: Self::fp(beta_min),
            modeswitch: false,
            pkts_acked: 1,
            packetcount: 0,
            min_rtt: 0,
            max_rtt: 0,
            last_cong: 0,
            undo_last_cong: None,
            min_b: 0,
            max_b: 0,
            old_max_b: 0,
            bi: 0,
            lasttime: 0,
            cwnd_cnt: 0,
            started: false,
            n_alpha: 0.0,
            n_beta: 0.0,
            last_con: Time::ZERO,
            n_min_rtt: None,
            n_max_rtt: None,
            throughput: 0,
            last_throughput: 0,
            data_sent: 0,
        }
    }

    fn fp(v: f64) -> u32 {
        (v * f64::from(SCALE)).round() as u32
    }

    /// Current α (segments per RTT).
    pub fn alpha(&self) -> f64 {
        if self.b.kernel_arithmetic {
            f64::from(self.alpha) / f64::from(SCALE)
        } else {
            self.n_alpha
        }
    }

    /// Current β.
    pub fn beta(&self) -> f64 {
        if self.b.kernel_arithmetic {
            f64::from(self.beta) / f64::from(SCALE)
        } else {
            self.n_beta
        }
    }

    // ---- linux ---------------------------------------------------------------

    fn delta_l_jiffies(&self) -> u32 {
        (self.delta_l.as_nanos() / (1_000_000_000 / u64::from(HZ))) as u32
    }

    /// `htcp_alpha_update`.
    fn linux_alpha_update(&mut self, now: u32) {
        let mut diff = now.wrapping_sub(self.last_cong);
        let mut factor: u32 = 1;
        let dl = self.delta_l_jiffies();
        if diff > dl {
            diff -= dl;
            let half = diff / 2;
            factor = 1 + (10u32.wrapping_mul(diff) + half.wrapping_mul(half) / HZ) / HZ;
        }
        if self.rtt_scaling && self.min_rtt > 0 {
            let scale = ((HZ << 3) / (10 * self.min_rtt)).clamp(1 << 2, 10 << 3);
            factor = ((factor << 3) / scale).max(1);
        }
        self.alpha = 2 * factor * (SCALE - self.beta.min(SCALE));
        if self.alpha == 0 {
            self.alpha = SCALE;
        }
    }

    /// `htcp_beta_update`.
    fn linux_beta_update(&mut self) {
        let (beta_min, beta_max) = (Self::fp(self.beta_min), Self::fp(self.beta_max));
        if self.bandwidth_switch {
            let (max_b, old) = (u64::from(self.max_b), u64::from(self.old_max_b));
            self.old_max_b = self.max_b;
            let r = (self.throughput_ratio * 1000.0).round() as u64;
            let lo = old * 1000u64.saturating_sub(r);
            let hi = old * (1000 + r);
            if !(lo..=hi).contains(&(max_b * 1000)) {
                self.beta = beta_min;
                self.modeswitch = false;
                return;
            }
        }
        if self.modeswitch
            && self.min_rtt > msecs_to_jiffies(MIN_RTT_FOR_BETA_MS)
            && self.max_rtt > 0
        {
            // The kernel keeps β in a u8.
            let b = u32::from(((self.min_rtt << 7) / self.max_rtt) as u8);
            self.beta = b.clamp(beta_min, beta_max.max(beta_min));
        } else {
            self.beta = beta_min;
            self.modeswitch = true;
        }
    }

    /// `htcp_param_update`, at each congestion event.
    fn linux_param_update(&mut self, now: u32) {
        let (min, max) = (self.min_rtt, self.max_rtt);
        self.linux_beta_update();
        self.linux_alpha_update(now);
        if min > 0 && max > min {
            self.max_rtt = min + (max - min) * 95 / 100;
        }
    }

    /// `measure_rtt`, with a sample in jiffies.
    fn linux_measure_rtt(&mut self, srtt: u32, state: CaState) {
        if self.min_rtt > srtt || self.min_rtt == 0 {
            self.min_rtt = srtt;
        }
        if state == CaState::Open {
            if self.max_rtt < self.min_rtt {
                self.max_rtt = self.min_rtt;
            }
            if self.max_rtt < srtt && srtt <= self.max_rtt + msecs_to_jiffies(MAX_RTT_SPIKE_MS) {
                self.max_rtt = srtt;
            }
        }
    }

    /// `measure_achieved_throughput`.
    fn linux_pkts_acked(&mut self, info: &ConnInfo, w: &Window, n: u32, rtt: Option<Duration>) {
        let now = jiffies(info.now);
        if info.ca_state == CaState::Open {
            self.pkts_acked = n;
        }
        if let Some(r) = rtt {
            let us = usecs(r);
            if us > 0 {
                self.linux_measure_rtt(usecs_to_jiffies(us), info.ca_state);
            }
        }
        if !self.bandwidth_switch {
            return;
        }
        if !matches!(info.ca_state, CaState::Open | CaState::Disorder) {
            self.packetcount = 0;
            self.lasttime = now;
            return;
        }
        self.packetcount += n;
        let cwnd = cwnd_segments(info, w) as u32;
        let a = (self.alpha >> 7).max(1);
        let elapsed = now.wrapping_sub(self.lasttime);
        if self.packetcount >= cwnd.wrapping_sub(a) && elapsed >= self.min_rtt && self.min_rtt > 0 {
            let cur = (u64::from(self.packetcount) * u64::from(HZ) / u64::from(elapsed)) as u32;
            let ccount = now.wrapping_sub(self.last_cong) / self.min_rtt;
            if ccount <= 3 {
                self.min_b = cur;
                self.max_b = cur;
                self.bi = cur;
            } else {
                self.bi = ((3 * u64::from(self.bi) + u64::from(cur)) / 4) as u32;
                self.max_b = self.max_b.max(self.bi);
                self.min_b = self.min_b.min(self.max_b);
            }
            self.packetcount = 0;
            self.lasttime = now;
        }
    }

    // ---- ns3 -----------------------------------------------------------------

    /// `TcpHtcp::UpdateAlpha`.
    fn ns3_update_alpha(&mut self, now: Time) {
        let delta = now.since(self.last_con);
        let mut a = if delta <= self.delta_l {
            1.0
        } else {
            let d = (delta.as_nanos() - self.delta_l.as_nanos()) as f64 / 1e9;
            1.0 + 10.0 * d + 0.25 * (d * d)
        };
        if self.rtt_scaling {
            if let Some(min) = self.n_min_rtt {
                a *= (min.as_nanos() as f64 / 1e8).clamp(0.1, 2.0);
            }
        }
        self.n_alpha = (2.0 * (1.0 - self.n_beta) * a).max(1.0);
    }

    /// `TcpHtcp::PktsAcked`.
    fn ns3_pkts_acked(&mut self, info: &ConnInfo, n: u32, rtt: Option<Duration>) {
        if info.ca_state == CaState::Open {
            self.data_sent += u64::from(n) * info.mss;
        }
        let elapsed = info.now.since(self.last_con).as_nanos() as f64 / 1e9;
        self.throughput = if elapsed > 0.0 {
            (self.data_sent as f64 / elapsed) as u32
        } else {
            0
        };
        self.ns3_update_alpha(info.now);
        if let Some(r) = rtt {
            self.n_min_rtt = Some(self.n_min_rtt.map_or(r, |m| m.min(r)));
            self.n_max_rtt = Some(self.n_max_rtt.map_or(r, |m| m.max(r)));
        }
    }

    /// `TcpHtcp::UpdateBeta`.
    fn ns3_update_beta(&mut self) {
        self.n_beta = self.beta_min;
        if self.throughput > self.last_throughput && self.last_throughput > 0 {
            let diff = self.throughput - self.last_throughput;
            if f64::from(diff / self.last_throughput) <= self.throughput_ratio {
                if let (Some(min), Some(max)) = (self.n_min_rtt, self.n_max_rtt) {
                    let b = min.as_nanos() as f64 / max.as_nanos().max(1) as f64;
                    self.n_beta = b.min(self.beta_max);
                }
            }
        }
    }
}

impl CongestionOps for Htcp {
    fn ssthresh(&mut self, info: &ConnInfo, w: &Window, bytes_in_flight: u64) -> u64 {
        if self.b.kernel_arithmetic {
            self.linux_param_update(jiffies(info.now));
            let cwnd = cwnd_segments(info, w);
            return ((cwnd * u64::from(self.beta)) >> 7).max(2) * info.mss;
        }
        self.last_con = info.now;
        self.ns3_update_beta();
        self.ns3_update_alpha(info.now);
        let b_flight = (bytes_in_flight as f64 * self.n_beta) as u32 as u64;
        self.n_min_rtt = None;
        self.n_max_rtt = None;
        self.last_throughput = self.throughput;
        self.throughput = 0;
        self.data_sent = 0;
        b_flight.max(2 * info.mss)
    }

    fn increase_window(&mut self, info: &ConnInfo, w: &mut Window, segments_acked: u32) {
        let mut acked = segments_acked;
        if w.in_slow_start() {
            acked = slow_start(self.profile, info, w, acked);
            if !self.b.slow_start_rest_to_avoidance {
                return;
            }
        }
        if self.b.kernel_arithmetic {
            let cwnd = cwnd_segments(info, w);
            if (self.cwnd_cnt * u64::from(self.alpha)) >> 7 >= cwnd {
                w.cwnd = (cwnd + 1) * info.mss;
                self.cwnd_cnt = 0;
                self.linux_alpha_update(jiffies(info.now));
            } else {
                self.cwnd_cnt += u64::from(self.pkts_acked);
            }
            self.pkts_acked = 1;
        } else if !w.in_slow_start() && acked > 0 {
            let cwnd = w.cwnd.max(1) as f64;
            let mss2 = (info.mss * info.mss) as f64;
            let adder = ((mss2 + cwnd * self.n_alpha) / cwnd).max(1.0);
            w.cwnd += u64::from(adder as u32);
        }
    }

    fn pkts_acked(
        &mut self,
        info: &ConnInfo,
        w: &Window,
        segments_acked: u32,
        rtt: Option<Duration>,
    ) {
        if self.b.kernel_arithmetic {
            self.linux_pkts_acked(info, w, segments_acked, rtt);
        } else {
            self.ns3_pkts_acked(info, segments_acked, rtt);
        }
    }

    fn congestion_state_set(&mut self, info: &ConnInfo, _w: &mut Window, new: CaState) {
        let now = jiffies(info.now);
        let entering = matches!(new, CaState::Recovery | CaState::Loss);
        if self.b.delta_from_state_changes {
            if entering {
                self.undo_last_cong = Some(self.last_cong);
                self.last_cong = now;
            } else if new == CaState::Open && self.undo_last_cong.take().is_some() {
                self.last_cong = now;
            }
        }
        if self.b.credit_cleared_on_recovery && entering {
            self.cwnd_cnt = 0;
        }
    }

    fn cwnd_event(&mut self, info: &ConnInfo, _w: &mut Window, event: CwndEvent) {
        // Linux `htcp_init` at connection start: the first Δ counts from here.
        if event == CwndEvent::TxStart && !self.started {
            self.started = true;
            self.last_cong = jiffies(info.now);
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

    #[test]
    fn ns3_alpha_of_delta() {
        // β = 0.5: Δ ≤ 1 s → α = 2·0.5·1 = 1; Δ = 1.5 s → f = 1 + 5 + 0.0625
        // = 6.0625; Δ = 3 s → f = 1 + 20 + 1 = 22; α = f (2·(1−β) = 1).
        let mut h = Htcp::new(&Params::new(), Profile::Ns3);
        h.n_beta = 0.5;
        for (ms, alpha) in [(500, 1.0), (1000, 1.0), (1500, 6.0625), (3000, 22.0)] {
            h.ns3_update_alpha(Time(ms * 1_000_000));
            assert_eq!(h.alpha(), alpha, "Δ = {ms} ms");
        }
        // β = 0 before the first loss: α = 2·f, so 2 for Δ ≤ 1 s.
        h.n_beta = 0.0;
        h.ns3_update_alpha(Time(500_000_000));
        assert_eq!(h.alpha(), 2.0);
        // β = 0.8: 2·0.2·1 = 0.4 → at least 1.
        h.n_beta = 0.8;
        h.ns3_update_alpha(Time(500_000_000));
        assert_eq!(h.alpha(), 1.0);
    }

    #[test]
    fn linux_alpha_of_delta_in_integers() {
        // β = 64/128, no RTT scaling yet (minRTT 0):
        // Δ = 500 j → f = 1 → α = 2·1·64 = 128 (1.0);
        // Δ = 1500 j → d = 500: f = 1 + ⌊(5000 + ⌊250²/1000⌋)/1000⌋ = 6 → 768 (6.0);
        // Δ = 3000 j → d = 2000: f = 1 + ⌊(20000 + 1000)/1000⌋ = 22 → 2816 (22.0).
        let mut h = Htcp::new(&Params::new(), Profile::Linux);
        for (now, alpha) in [(500, 128), (1500, 768), (3000, 2816)] {
            h.linux_alpha_update(now);
            assert_eq!(h.alpha, alpha, "Δ = {now} jiffies");
        }
    }

    #[test]
    fn linux_rtt_scaling_of_alpha() {
        // f = 22 (Δ = 3 s). scale = ⌊8000/(10·minRTT)⌋ clamped to [4, 80],
        // f' = ⌊8f/scale⌋:
        // minRTT 100 ms: scale 8 → 22; 20 ms: scale 40 → ⌊176/40⌋ = 4;
        // 300 ms: scale 2 → 4 → 44; 5 ms: scale 160 → 80 → ⌊176/80⌋ = 2.
        let mut h = Htcp::new(&Params::new(), Profile::Linux);
        for (min_rtt, f) in [(100, 22), (20, 4), (300, 44), (5, 2)] {
            h.min_rtt = min_rtt;
            h.linux_alpha_update(3000);
            assert_eq!(h.alpha, 2 * f * 64, "minRTT {min_rtt}");
        }
        // f = 1 at 20 ms: ⌊8/40⌋ = 0 → 1.
        h.min_rtt = 20;
        h.linux_alpha_update(100);
        assert_eq!(h.alpha, 128);
    }

    #[test]
    fn linux_beta_update() {
        let mut h = Htcp::new(&Params::new(), Profile::Linux);
        let i = at(Profile::Linux, 5000);
        let w = window(100, 1);
        // First event: modeswitch off → β = 0.5, switch on.
        // ssthresh = ⌊100·64/128⌋ = 50.
        h.min_rtt = 60;
        h.max_rtt = 100;
        assert_eq!(h.ssthresh(&i, &w, 0), 50_000);
        assert!(h.modeswitch);
        // maxRTT fades: 60 + ⌊40·95/100⌋ = 98.
        assert_eq!(h.max_rtt, 98);
        // Second event, throughput unchanged (0 = 0): β = ⌊60·128/100⌋ = 76
        // (0.59); ssthresh ⌊100·76/128⌋ = 59.
        h.max_rtt = 100;
        assert_eq!(h.ssthresh(&i, &w, 0), 59_000);
        assert_eq!(h.beta, 76);
        // minRTT/maxRTT above 0.8 is clamped to 102/128.
        h.min_rtt = 90;
        h.max_rtt = 100;
        h.ssthresh(&i, &w, 0);
        assert_eq!(h.beta, 102);
        // minRTT ≤ 10 ms: β = 0.5.
        h.min_rtt = 10;
        h.max_rtt = 100;
        h.ssthresh(&i, &w, 0);
        assert_eq!(h.beta, 64);
        // Max throughput moved by more than 20 % (100 → 130): β = 0.5 and
        // modeswitch off, even with a good RTT ratio.
        h.min_rtt = 60;
        h.max_rtt = 100;
        h.old_max_b = 100;
        h.max_b = 130;
        h.ssthresh(&i, &w, 0);
        assert_eq!((h.beta, h.modeswitch), (64, false));
        assert_eq!(h.old_max_b, 130);
        // Within 20 % (130 → 150, 15 %) the switch stays on next time.
        h.max_b = 150;
        h.ssthresh(&i, &w, 0);
        assert_eq!((h.beta, h.modeswitch), (64, true));
        h.max_b = 150;
        h.max_rtt = 100;
        h.ssthresh(&i, &w, 0);
        assert_eq!(h.beta, 76);
    }

    #[test]
    fn ns3_beta_follows_throughput_rule() {
        // minRTT 60 ms, maxRTT 100 ms (SRTT extremes).
        let cases = [
            (100_000, 150_000, 0.6), // rose 50 %: ⌊50 000/100 000⌋ = 0 ≤ 0.2 → 0.6
            (100_000, 250_000, 0.5), // rose 150 %: ⌊1.5⌋ = 1 > 0.2 → 0.5
            (100_000, 90_000, 0.5),  // fell → 0.5
            (0, 90_000, 0.5),        // no previous event → 0.5
        ];
        for (last, thr, beta) in cases {
            let mut h = Htcp::new(&Params::new(), Profile::Ns3);
            h.n_min_rtt = Some(Duration::from_millis(60));
            h.n_max_rtt = Some(Duration::from_millis(100));
            h.last_throughput = last;
            h.throughput = thr;
            // ssthresh = max(2·MSS, ⌊β·flight⌋) with 50 000 bytes in flight.
            let s = h.ssthresh(&at(Profile::Ns3, 10_000), &window(50, 1), 50_000);
            assert_eq!(h.beta(), beta, "{last} → {thr}");
            assert_eq!(s, (50_000.0 * beta) as u64);
            // Right after the event α = 2·(1−β)·1, at least 1.
            assert_eq!(h.alpha(), (2.0 * (1.0 - beta)).max(1.0));
            assert_eq!((h.n_min_rtt, h.n_max_rtt, h.throughput), (None, None, 0));
            assert_eq!(h.last_throughput, thr);
        }
    }

    #[test]
    fn ns3_throughput_and_rtt_extremes_from_acks() {
        // Open ACKs of 2 segments: 10 ACKs by t = 2 s → 20 000 bytes / 2 s.
        let mut h = Htcp::new(&Params::new(), Profile::Ns3);
        let w = window(20, 10);
        for k in 1..=10 {
            let i = at(Profile::Ns3, 200 * k);
            h.pkts_acked(&i, &w, 2, Some(Duration::from_millis(40 + k)));
        }
        assert_eq!(h.throughput, 10_000);
        assert_eq!(h.n_min_rtt, Some(Duration::from_millis(41)));
        assert_eq!(h.n_max_rtt, Some(Duration::from_millis(50)));
        // A duplicate ACK (Disorder) adds no bytes but recomputes throughput.
        let mut i = at(Profile::Ns3, 4000);
        i.ca_state = CaState::Disorder;
        h.pkts_acked(&i, &w, 1, Some(Duration::from_millis(45)));
        assert_eq!(h.throughput, 5_000);
    }

    #[test]
    fn ns3_avoidance_adds_alpha_bytes() {
        // β = 0 before any loss: α = 2 (Δ ≤ 1 s). cwnd 20 000:
        // ⌊1000²/20 000 + 2⌋ = 52 bytes per ACK.
        let mut h = Htcp::new(&Params::new(), Profile::Ns3);
        let i = at(Profile::Ns3, 100);
        let mut w = window(20, 10);
        h.pkts_acked(&i, &w, 2, None);
        h.increase_window(&i, &mut w, 2);
        assert_eq!(w.cwnd, 20_052);
        // α = 22 (β 0.5, Δ = 3 s): ⌊1 000 000/20 052 + 22⌋ = ⌊71.87⌋ = 71.
        h.n_beta = 0.5;
        let i = at(Profile::Ns3, 3000);
        h.pkts_acked(&i, &w, 2, None);
        assert_eq!(h.alpha(), 22.0);
        h.increase_window(&i, &mut w, 2);
        assert_eq!(w.cwnd, 20_123);
    }

    #[test]
    fn linux_avoidance_one_segment_when_credit_times_alpha_reaches_cwnd() {
        // α = 1 (128): credit·α/128 ≥ cwnd = 20 needs a credit of 20: with
        // 2 segments per ACK (Open), the 11th ACK finds credit 20 → +1.
        let mut h = Htcp::new(&Params::new(), Profile::Linux);
        let i = at(Profile::Linux, 100);
        let mut w = window(20, 10);
        for _ in 0..10 {
            h.pkts_acked(&i, &w, 2, None);
            h.increase_window(&i, &mut w, 2);
        }
        assert_eq!((w.cwnd, h.cwnd_cnt), (20_000, 20));
        h.pkts_acked(&i, &w, 2, None);
        h.increase_window(&i, &mut w, 2);
        assert_eq!((w.cwnd, h.cwnd_cnt), (21_000, 0));
        // α = 22 at Δ = 3 s (no RTT sample, no scaling): credit 2 gives
        // ⌊2·2816/128⌋ = 44 ≥ 21 on the next ACK → +1, α recomputed.
        let i = at(Profile::Linux, 3000);
        h.linux_alpha_update(3000);
        h.pkts_acked(&i, &w, 2, None);
        h.increase_window(&i, &mut w, 2);
        assert_eq!((w.cwnd, h.cwnd_cnt), (21_000, 2));
        h.pkts_acked(&i, &w, 2, None);
        h.increase_window(&i, &mut w, 2);
        assert_eq!((w.cwnd, h.alpha), (22_000, 2816));
    }

    #[test]
    fn linux_rtt_extremes() {
        // Samples round up to jiffies; maxRTT follows only in Open and only
        // within 20 ms of its current value.
        let mut h = Htcp::new(&Params::new(), Profile::Linux);
        let mut i = at(Profile::Linux, 0);
        let w = window(20, 10);
        h.pkts_acked(&i, &w, 1, Some(Duration::from_micros(9_100)));
        assert_eq!((h.min_rtt, h.max_rtt), (10, 10));
        h.pkts_acked(&i, &w, 1, Some(Duration::from_millis(25)));
        assert_eq!(h.max_rtt, 25);
        h.pkts_acked(&i, &w, 1, Some(Duration::from_millis(50)));
        assert_eq!(h.max_rtt, 25, "spike above 25 + 20 ignored");
        i.ca_state = CaState::Disorder;
        h.pkts_acked(&i, &w, 1, Some(Duration::from_millis(40)));
        assert_eq!(h.max_rtt, 25, "not in Open");
        h.pkts_acked(&i, &w, 1, Some(Duration::from_millis(8)));
        assert_eq!(h.min_rtt, 8, "the minimum follows in any state");
    }

    #[test]
    fn linux_throughput_estimate() {
        // minRTT 10 j, α = 1: a sample is due once packetcount ≥ cwnd − 1 = 19
        // and ≥ minRTT passed. 20 packets in 10 ms → 2000 pkt/s; within
        // 3 minRTTs of the last event (ccount = 1) it resets Bi, minB, maxB.
        let mut h = Htcp::new(&Params::new(), Profile::Linux);
        let w = window(20, 10);
        h.pkts_acked(
            &at(Profile::Linux, 5),
            &w,
            10,
            Some(Duration::from_millis(10)),
        );
        assert_eq!(h.packetcount, 10);
        h.pkts_acked(&at(Profile::Linux, 10), &w, 10, None);
        assert_eq!(
            (h.bi, h.min_b, h.max_b, h.packetcount),
            (2000, 2000, 2000, 0)
        );
        // Later (ccount = 100/10 = 10 > 3): 20 packets in 90 ms → ⌊20 000/90⌋
        // = 222; Bi = ⌊(3·2000 + 222)/4⌋ = 1555; maxB stays 2000.
        h.pkts_acked(&at(Profile::Linux, 100), &w, 20, None);
        assert_eq!((h.bi, h.max_b, h.min_b), (1555, 2000, 2000));
        // Outside Open/Disorder the count restarts.
        let mut i = at(Profile::Linux, 120);
        i.ca_state = CaState::Loss;
        h.pkts_acked(&i, &w, 5, None);
        assert_eq!((h.packetcount, h.lasttime), (0, 120));
    }

    #[test]
    fn linux_delta_counts_from_congestion_and_recovery_exit() {
        let mut h = Htcp::new(&Params::new(), Profile::Linux);
        let mut w = window(20, 10);
        h.cwnd_event(&at(Profile::Linux, 50), &mut w, CwndEvent::TxStart);
        assert_eq!(h.last_cong, 50);
        h.congestion_state_set(&at(Profile::Linux, 1000), &mut w, CaState::Disorder);
        assert_eq!(h.last_cong, 50);
        h.congestion_state_set(&at(Profile::Linux, 1000), &mut w, CaState::Recovery);
        assert_eq!((h.last_cong, h.undo_last_cong), (1000, Some(50)));
        h.congestion_state_set(&at(Profile::Linux, 1200), &mut w, CaState::Open);
        assert_eq!((h.last_cong, h.undo_last_cong), (1200, None));
        // Disorder → Open does not move it.
        h.congestion_state_set(&at(Profile::Linux, 1500), &mut w, CaState::Open);
        assert_eq!(h.last_cong, 1200);
    }

    #[test]
    fn slow_start_per_profile() {
        let mut h = Htcp::new(&Params::new(), Profile::Ns3);
        let mut w = window(10, 100);
        h.increase_window(&info(Profile::Ns3), &mut w, 2);
        assert_eq!(w.cwnd, 11_000);
        let mut h = Htcp::new(&Params::new(), Profile::Linux);
        let mut w = window(10, 100);
        h.increase_window(&info(Profile::Linux), &mut w, 2);
        assert_eq!(w.cwnd, 12_000);
    }
}
