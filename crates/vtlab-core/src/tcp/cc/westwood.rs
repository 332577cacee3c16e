//! TCP Westwood and Westwood+: Reno growth, but after a loss the window is set
//! from an end-to-end estimate of the bandwidth used, `ssthresh = BWE·RTTmin`,
//! instead of being halved (docs/congestion-control.md, '`westwood`' and
//! '`westwood-plus`'). One struct, three registry names:
//!
//! * `westwood` — the original (S. Mascolo, C. Casetti, M. Gerla, M. Sanadidi,
//!   R. Wang, "TCP Westwood: Bandwidth Estimation for Enhanced Transport over
//!   Wireless Links", MobiCom 2001). One bandwidth sample per ACK,
//!   `b_k = d_k/(t_k − t_{k−1})`, through the time-varying Tustin low-pass
//!   filter `b̂_k = a_k·b̂_{k−1} + (1−a_k)·(b_k + b_{k−1})/2`,
//!   `a_k = (2τ − Δ_k)/(2τ + Δ_k)`; when no ACK arrives for τ/m a zero
//!   "virtual sample" is fed (also up to the present before ssthresh is
//!   computed, so an RTO after silence sees the decayed estimate). A duplicate
//!   ACK counts one MSS, taken back from the next cumulative ACK. τ = 1 s and
//!   m = 2 (a virtual sample per τ/2, a last interval under 10 ms merged into
//!   the previous τ/2) are the defaults of the authors' ns-2 model
//!   (`tcp-westwood-nr.cc`); there is no ns-3 counterpart any more (ns-3
//!   removed `TcpWestwood` in 3.38, issue 579), so both profiles run the paper
//!   filter and differ only in the common inputs: Reno growth per profile,
//!   RTTmin over raw samples (Linux) or SRTT (ns-3), dupACKs visible only
//!   under ns-3, ssthresh in whole segments (Linux) or bytes (ns-3).
//!   On 3 dupACKs the paper sets `ssthresh = BWE·RTTmin/MSS` (≥ 2) and
//!   `cwnd = min(cwnd, ssthresh)`. Here `ssthresh()` returns that value; the
//!   sender runs NewReno recovery from it and sets cwnd = ssthresh on the full
//!   ACK, and `cwnd_event(CompleteCwr)` (after feeding the exit ACK to the
//!   filter) keeps cwnd = ssthresh. On an RTO the same ssthresh, cwnd = 1.
//! * `westwood-plus` — Westwood+ (L. A. Grieco, S. Mascolo, "Performance
//!   evaluation and comparison of Westwood+, New Reno, and Vegas TCP
//!   congestion control", CCR 34(2), 2004): one sample per RTT.
//!   - Linux profile, `net/ipv4/tcp_westwood.c` (jiffies, HZ = 1000): bytes
//!     acked are summed in `bk`; when more than max(RTT, 50 ms) has passed
//!     since the window start, `bk/Δt` (bytes per jiffy) feeds two cascaded
//!     7/8 EWMAs (the first sample seeds both). The first ACK only aligns
//!     `snd_una`. `rtt_min` is the minimum raw sample (20 s initially; reset
//!     to the next sample after an RTO). 3 dupACKs: Reno ssthresh; recovery
//!     completion: `cwnd = ssthresh = max(bw_est·rtt_min/MSS, 2)`; RTO:
//!     `ssthresh = max(bw_est·rtt_min/MSS, 2)`. The sender does not report
//!     duplicate ACKs nor ACKs inside recovery under this profile, so their
//!     bytes are counted when the next reported ACK (or the recovery exit)
//!     arrives (Linux's dupACK credit nets out to the same total).
//!   - ns-3 profile, `src/internet/model/tcp-westwood-plus.cc`: segments
//!     handed to `PktsAcked` (dupACKs count 1) are counted from the first ACK
//!     with an RTT until an estimate one SRTT later:
//!     `sample = segments·MSS·8/SRTT` bit/s, Tustin filter with fixed
//!     coefficients `bw = 0.9·bw + 0.1·(sample + prev_sample)/2` (`tustin` =
//!     0: raw samples), all in ns-3 `DataRate` integer bit/s with its
//!     truncations; `ssthresh = max(bw·minRtt/8, 2·MSS)` bytes on 3 dupACKs
//!     and RTO, minRtt the minimum SRTT; recovery exits with cwnd = ssthresh
//!     (the sender). The scheduled estimate is run lazily: at the first hook
//!     call at or after its due time.
//! * `westwood-nr` — the same window law as `westwood-plus` (Westwood+
//!   estimation over the sender's NewReno recovery), kept under the name used
//!   by the Martignon study.

use super::reno::{reno_increase, reno_ssthresh};
use super::{param, CongestionOps, ConnInfo, CwndEvent, ParamSpec, Params, Profile, Window};
use crate::engine::{Duration, Time};

/// Tunables of the original Westwood (`westwood`).
pub const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "tau",
        default_ns3: 1.0,
        default_linux: 1.0,
        default_ns2: None,
        min: 0.01,
        max: 100.0,
        doc: "time constant τ of the Tustin bandwidth filter, seconds (cut-off 1/τ; ns-2 WestwoodNR tau_)",
        integer: false,
        at_most: None,
    },
    ParamSpec {
        name: "virtual_m",
        default_ns3: 2.0,
        default_linux: 2.0,
        default_ns2: None,
        min: 2.0,
        max: 100.0,
        doc: "a zero virtual sample is fed after τ/m without ACKs (m ≥ 2 for the Nyquist bound)",
        integer: false,
        at_most: None,
    },
];

/// Tunables of Westwood+ (`westwood-plus`, `westwood-nr`).
pub const PLUS_PARAMS: &[ParamSpec] = &[ParamSpec {
    name: "tustin",
    default_ns3: 1.0,
    default_linux: 1.0,
    default_ns2: None,
    min: 0.0,
    max: 1.0,
    doc: "ns3 profile only: 1 = ns-3 FilterType Tustin, 0 = None (raw per-RTT samples)",
    integer: true,
    at_most: None,
}];

/// Which estimator drives ssthresh.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WestwoodVariant {
    /// Per-ACK samples, time-varying Tustin filter (`westwood`).
    Original,
    /// Per-RTT samples (`westwood-plus`, `westwood-nr`).
    Plus,
}

#[derive(Clone, Debug)]
pub struct Westwood {
    profile: Profile,
    variant: WestwoodVariant,
    cwnd_cnt: u64,
    est: Estimator,
}

#[derive(Clone, Debug)]
enum Estimator {
    LinuxPlus(LinuxPlus),
    Ns3Plus(Ns3Plus),
    Original(Original),
}

impl Westwood {
    /// The original Westwood (`westwood`).
    pub fn new(params: &Params, profile: Profile) -> Self {
        let tau = param(PARAMS, params, "tau", profile);
        let m = param(PARAMS, params, "virtual_m", profile);
        Westwood {
            profile,
            variant: WestwoodVariant::Original,
            cwnd_cnt: 0,
            est: Estimator::Original(Original::new(tau, m)),
        }
    }

    /// Westwood+ (`westwood-plus`, and its alias `westwood-nr`).
    pub fn plus(params: &Params, profile: Profile) -> Self {
        let est = match profile {
            // ns-2.35 has no Westwood+: under ns2 the estimator is Linux's
            // (tcp_westwood.c, by Westwood+'s authors), which, as ns-2's
            // agents, counts every ACK and takes raw RTT samples; ns-3's needs
            // an RTT on every ACK (its SRTT), which ns2's senders do not give.
            Profile::Linux | Profile::Ns2 => Estimator::LinuxPlus(LinuxPlus::new()),
            Profile::Ns3 => {
                let tustin = param(PLUS_PARAMS, params, "tustin", profile) >= 0.5;
                Estimator::Ns3Plus(Ns3Plus::new(tustin))
            }
        };
        Westwood {
            profile,
            variant: WestwoodVariant::Plus,
            cwnd_cnt: 0,
            est,
        }
    }

    pub fn variant(&self) -> WestwoodVariant {
        self.variant
    }
}

impl CongestionOps for Westwood {
    fn ssthresh(&mut self, info: &ConnInfo, w: &Window, bytes_in_flight: u64) -> u64 {
        match &mut self.est {
            Estimator::LinuxPlus(_) => reno_ssthresh(Profile::Linux, info, w, bytes_in_flight),
            Estimator::Ns3Plus(e) => e.ssthresh(info),
            Estimator::Original(e) => e.ssthresh(self.profile, info),
        }
    }

    fn increase_window(&mut self, info: &ConnInfo, w: &mut Window, segments_acked: u32) {
        reno_increase(self.profile, info, w, &mut self.cwnd_cnt, segments_acked);
    }

    fn pkts_acked(&mut self, info: &ConnInfo, _w: &Window, segs: u32, rtt: Option<Duration>) {
        match &mut self.est {
            Estimator::LinuxPlus(e) => {
                if !e.initialized {
                    e.init(info);
                }
                e.rtt_sample(rtt);
                e.on_ack(info);
            }
            Estimator::Ns3Plus(e) => e.pkts_acked(info, segs, rtt),
            Estimator::Original(e) => {
                e.rtt_sample(rtt);
                e.on_ack(info);
            }
        }
    }

    fn cwnd_event(&mut self, info: &ConnInfo, w: &mut Window, event: CwndEvent) {
        match (&mut self.est, event) {
            (Estimator::LinuxPlus(e), CwndEvent::TxStart) if !e.initialized => e.init(info),
            (Estimator::LinuxPlus(e), CwndEvent::CompleteCwr) => {
                // The full ACK went through in_ack_event before COMPLETE_CWR.
                e.on_ack(info);
                let bw = e.bw_rttmin_segments(info.mss) * info.mss;
                w.cwnd = bw;
                w.ssthresh = bw;
            }
            (Estimator::LinuxPlus(e), CwndEvent::Loss) => {
                w.ssthresh = e.bw_rttmin_segments(info.mss) * info.mss;
                e.reset_rtt_min = true;
            }
            (Estimator::Ns3Plus(e), CwndEvent::TxStart) => e.min_rtt_sample(info.srtt),
            (Estimator::Original(e), CwndEvent::TxStart) => {
                let seed = match self.profile {
                    Profile::Linux | Profile::Ns2 => info.min_rtt,
                    Profile::Ns3 => info.srtt,
                };
                e.start(info, seed);
            }
            (Estimator::Original(e), CwndEvent::CompleteCwr) => {
                e.on_ack(info);
                w.cwnd = w.ssthresh;
            }
            _ => {}
        }
    }
}

// ---- Westwood+, Linux ----------------------------------------------------------

/// Linux clock rate: one jiffy = 1 ms.
const HZ: u64 = 1_000;
const NS_PER_JIFFY: u64 = 1_000_000_000 / HZ;
/// `TCP_WESTWOOD_RTT_MIN`: shortest estimation window, 50 ms.
const LINUX_RTT_MIN_J: u64 = HZ / 20;
/// `TCP_WESTWOOD_INIT_RTT`: 20 s.
const LINUX_INIT_RTT_J: u64 = 20 * HZ;

fn jiffies(t: Time) -> u64 {
    t.0 / NS_PER_JIFFY
}

#[derive(Clone, Debug)]
struct LinuxPlus {
    /// Bytes acked in the current window.
    bk: u64,
    /// First filter stage and bandwidth estimate, bytes per jiffy.
    bw_ns_est: u64,
    bw_est: u64,
    /// Last RTT sample and minimum, jiffies.
    rtt: u64,
    rtt_min: u64,
    /// Start of the current window, jiffies.
    rtt_win_sx: u64,
    snd_una: u64,
    first_ack: bool,
    reset_rtt_min: bool,
    initialized: bool,
}

impl LinuxPlus {
    fn new() -> Self {
        LinuxPlus {
            bk: 0,
            bw_ns_est: 0,
            bw_est: 0,
            rtt: LINUX_INIT_RTT_J,
            rtt_min: LINUX_INIT_RTT_J,
            rtt_win_sx: 0,
            snd_una: 0,
            first_ack: true,
            reset_rtt_min: true,
            initialized: false,
        }
    }

    /// `tcp_westwood_init` at connection start.
    fn init(&mut self, info: &ConnInfo) {
        *self = LinuxPlus::new();
        self.rtt_win_sx = jiffies(info.now);
        self.snd_una = info.snd_una;
        self.initialized = true;
    }

    /// `pkts_acked`: the raw sample in jiffies, rounded up (usecs_to_jiffies).
    fn rtt_sample(&mut self, rtt: Option<Duration>) {
        if let Some(r) = rtt {
            let us = r.as_nanos() / 1_000;
            if us > 0 {
                self.rtt = us.div_ceil(1_000_000 / HZ);
            }
        }
    }

    /// `westwood_update_window`: close the window and filter when it is long enough.
    fn update_window(&mut self, info: &ConnInfo) {
        let now = jiffies(info.now);
        let delta = now.saturating_sub(self.rtt_win_sx);
        if self.first_ack {
            self.snd_una = info.snd_una;
            self.first_ack = false;
        }
        if self.rtt > 0 && delta > self.rtt.max(LINUX_RTT_MIN_J) {
            let sample = self.bk / delta;
            if self.bw_ns_est == 0 && self.bw_est == 0 {
                self.bw_ns_est = sample;
                self.bw_est = sample;
            } else {
                self.bw_ns_est = (7 * self.bw_ns_est + sample) >> 3;
                self.bw_est = (7 * self.bw_est + self.bw_ns_est) >> 3;
            }
            self.bk = 0;
            self.rtt_win_sx = now;
        }
    }

    /// `tcp_westwood_ack` for an ACK that moved snd_una to `info.snd_una`.
    fn on_ack(&mut self, info: &ConnInfo) {
        self.update_window(info);
        self.bk += info.snd_una.saturating_sub(self.snd_una);
        self.snd_una = self.snd_una.max(info.snd_una);
        if self.reset_rtt_min {
            self.rtt_min = self.rtt;
            self.reset_rtt_min = false;
        } else {
            self.rtt_min = self.rtt_min.min(self.rtt);
        }
    }

    /// `tcp_westwood_bw_rttmin`: max(bw_est·rtt_min/MSS, 2) segments.
    fn bw_rttmin_segments(&self, mss: u64) -> u64 {
        (self.bw_est * self.rtt_min / mss).max(2)
    }
}

// ---- Westwood+, ns-3 -------------------------------------------------------------

#[derive(Clone, Debug)]
struct Ns3Plus {
    tustin: bool,
    /// `m_currentBW`, `m_lastSampleBW`, `m_lastBW`: ns-3 DataRate, bit/s.
    current_bw: u64,
    last_sample_bw: u64,
    last_bw: u64,
    /// `m_ackedSegments`.
    acked_segments: u64,
    /// Pending `EstimateBW` event: due time and the SRTT it was scheduled with.
    pending: Option<(Time, Duration)>,
    /// `tcb->m_minRtt`: minimum SRTT.
    min_rtt: Option<Duration>,
}

impl Ns3Plus {
    fn new(tustin: bool) -> Self {
        Ns3Plus {
            tustin,
            current_bw: 0,
            last_sample_bw: 0,
            last_bw: 0,
            acked_segments: 0,
            pending: None,
            min_rtt: None,
        }
    }

    fn min_rtt_sample(&mut self, rtt: Option<Duration>) {
        if let Some(r) = rtt.filter(|r| *r > Duration::ZERO) {
            self.min_rtt = Some(self.min_rtt.map_or(r, |m| m.min(r)));
        }
    }

    /// Run the scheduled estimate if it is due by `now`.
    fn fire_due(&mut self, now: Time, mss: u64) {
        if let Some((at, rtt)) = self.pending {
            if now >= at {
                self.estimate(rtt, mss);
            }
        }
    }

    /// `EstimateBW`, with DataRate's integer truncations.
    fn estimate(&mut self, rtt: Duration, mss: u64) {
        let secs = rtt.as_nanos() as f64 / 1e9;
        self.current_bw = ((self.acked_segments * mss) as f64 * 8.0 / secs) as u64;
        self.pending = None;
        self.acked_segments = 0;
        if self.tustin {
            const ALPHA: f64 = 0.9;
            let sample = self.current_bw;
            let old = (self.last_bw as f64 * ALPHA) as u64;
            let mean = ((sample + self.last_sample_bw) as f64 * 0.5) as u64;
            self.current_bw = old + (mean as f64 * (1.0 - ALPHA)) as u64;
            self.last_sample_bw = sample;
            self.last_bw = self.current_bw;
        }
    }

    fn pkts_acked(&mut self, info: &ConnInfo, segs: u32, rtt: Option<Duration>) {
        self.fire_due(info.now, info.mss);
        let Some(rtt) = rtt.filter(|r| *r > Duration::ZERO) else {
            return;
        };
        self.min_rtt_sample(Some(rtt));
        self.acked_segments += u64::from(segs);
        if self.pending.is_none() {
            self.pending = Some((info.now + rtt, rtt));
        }
    }

    /// `GetSsThresh`: max(bw·minRtt/8, 2·MSS), bytes.
    fn ssthresh(&mut self, info: &ConnInfo) -> u64 {
        self.fire_due(info.now, info.mss);
        let min_rtt = self.min_rtt.map_or(0.0, |d| d.as_nanos() as f64 / 1e9);
        ((min_rtt * self.current_bw as f64 / 8.0) as u64).max(2 * info.mss)
    }
}

// ---- Original Westwood --------------------------------------------------------

/// A last interval shorter than this after virtual samples is merged into the
/// previous τ/m period (ns-2 WestwoodNR: 10 ms).
const MIN_LAST_INTERVAL: Duration = Duration::from_millis(10);

#[derive(Clone, Debug)]
struct Original {
    /// τ, seconds.
    tau: f64,
    /// τ/m: the virtual-sample period.
    period: Duration,
    /// b̂: filtered bandwidth, bytes per second.
    bwe: f64,
    /// b_{k−1}: the previous sample (real or virtual), bytes per second.
    last_sample: f64,
    /// Time of the last filter update (real or virtual sample).
    last_update: Option<Time>,
    /// Bytes of ACKs that arrived at the same instant as the last update.
    pending_bytes: u64,
    snd_una: Option<u64>,
    /// Bytes credited by duplicate ACKs, not yet covered by a cumulative ACK.
    unaccounted: u64,
    rtt_min: Option<Duration>,
}

impl Original {
    fn new(tau: f64, m: f64) -> Self {
        Original {
            tau,
            period: Duration::from_nanos((tau / m * 1e9).round() as u64),
            bwe: 0.0,
            last_sample: 0.0,
            last_update: None,
            pending_bytes: 0,
            snd_una: None,
            unaccounted: 0,
            rtt_min: None,
        }
    }

    /// Connection start: time origin of the first interval, initial snd_una.
    fn start(&mut self, info: &ConnInfo, rtt_seed: Option<Duration>) {
        if self.last_update.is_none() {
            self.last_update = Some(info.now);
        }
        if self.snd_una.is_none() {
            self.snd_una = Some(info.snd_una);
        }
        self.rtt_sample(rtt_seed);
    }

    fn rtt_sample(&mut self, rtt: Option<Duration>) {
        if let Some(r) = rtt.filter(|r| *r > Duration::ZERO) {
            self.rtt_min = Some(self.rtt_min.map_or(r, |m| m.min(r)));
        }
    }

    /// Tustin step over an interval of `dt` seconds with sample `b`.
    fn tustin(&mut self, dt: f64, b: f64) {
        let a = ((2.0 * self.tau - dt) / (2.0 * self.tau + dt)).max(0.0);
        self.bwe = a * self.bwe + (1.0 - a) * (b + self.last_sample) / 2.0;
        self.last_sample = b;
    }

    /// Feed zero virtual samples for `n` whole periods.
    fn virtual_samples(&mut self, n: u64) {
        let dt = self.period.as_secs_f64();
        for _ in 0..n.min(100_000) {
            if self.bwe == 0.0 && self.last_sample == 0.0 {
                break;
            }
            self.tustin(dt, 0.0);
        }
        if n > 100_000 {
            self.bwe = 0.0;
            self.last_sample = 0.0;
        }
    }

    /// Bytes this ACK reports delivered (dupACK: one MSS, taken back later).
    fn acked_bytes(&mut self, info: &ConnInfo) -> u64 {
        let prev = *self.snd_una.get_or_insert(info.snd_una);
        let cumul = info.snd_una.saturating_sub(prev);
        self.snd_una = Some(prev.max(info.snd_una));
        if cumul == 0 {
            self.unaccounted += info.mss;
            info.mss
        } else if cumul > info.mss {
            if self.unaccounted >= cumul {
                self.unaccounted -= cumul;
                info.mss
            } else {
                let d = cumul - self.unaccounted;
                self.unaccounted = 0;
                d
            }
        } else {
            cumul
        }
    }

    /// One ACK: a real sample, preceded by virtual ones for idle periods.
    fn on_ack(&mut self, info: &ConnInfo) {
        let d = self.acked_bytes(info) + self.pending_bytes;
        let now = info.now;
        let Some(last) = self.last_update else {
            self.last_update = Some(now);
            self.pending_bytes = 0;
            return;
        };
        let gap = now - last;
        if gap == Duration::ZERO {
            self.pending_bytes = d;
            return;
        }
        let p = self.period.as_nanos().max(1);
        let mut idle = gap.as_nanos() / p;
        let mut rem = gap.as_nanos() - idle * p;
        if idle > 0 && rem < MIN_LAST_INTERVAL.as_nanos() {
            idle -= 1;
            rem += p;
        }
        self.virtual_samples(idle);
        let dt = rem as f64 / 1e9;
        self.tustin(dt, d as f64 / dt);
        self.pending_bytes = 0;
        self.last_update = Some(now);
    }

    /// Feed the virtual samples owed up to `now` (no ACK since the last update).
    fn catch_up(&mut self, now: Time) {
        if let Some(last) = self.last_update {
            let p = self.period.as_nanos().max(1);
            let idle = (now - last).as_nanos() / p;
            if idle > 0 {
                self.virtual_samples(idle);
                self.last_update = Some(last + Duration::from_nanos(idle * p));
            }
        }
    }

    /// BWE·RTTmin: whole segments (≥ 2) under Linux, bytes (≥ 2·MSS) under ns-3.
    fn ssthresh(&mut self, profile: Profile, info: &ConnInfo) -> u64 {
        self.catch_up(info.now);
        let rtt_min = self.rtt_min.map_or(0.0, |d| d.as_secs_f64());
        let bytes = self.bwe * rtt_min;
        match profile {
            Profile::Linux | Profile::Ns2 => ((bytes / info.mss as f64) as u64).max(2) * info.mss,
            Profile::Ns3 => (bytes as u64).max(2 * info.mss),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::reno::test_support::{info, window};
    use super::*;
    use crate::tcp::CaState;

    fn at(p: Profile, ms: u64, snd_una: u64) -> ConnInfo {
        let mut i = info(p);
        i.now = Time(ms * 1_000_000);
        i.snd_una = snd_una;
        i
    }

    fn ms(v: u64) -> Option<Duration> {
        Some(Duration::from_millis(v))
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn linux_plus_filter_on_scripted_acks() {
        let p = Profile::Linux;
        let mut cc = Westwood::plus(&Params::new(), p);
        let mut w = window(20, 10);
        cc.cwnd_event(&at(p, 0, 0), &mut w, CwndEvent::TxStart);
        let est = |cc: &Westwood| match &cc.est {
            Estimator::LinuxPlus(e) => e.clone(),
            _ => unreachable!(),
        };
        // t=10: first ACK only aligns snd_una (10000 not counted); rtt = 100 j,
        // rtt_min reset to it.
        cc.pkts_acked(&at(p, 10, 10_000), &w, 10, ms(100));
        let e = est(&cc);
        assert_eq!((e.bk, e.snd_una, e.rtt_min, e.bw_est), (0, 10_000, 100, 0));
        // t=60: Δ = 60 ≤ max(120, 50): no sample; bk = 10000.
        cc.pkts_acked(&at(p, 60, 20_000), &w, 10, ms(120));
        assert_eq!((est(&cc).bk, est(&cc).rtt_min), (10_000, 100));
        // t=130: Δ = 130 > 120: sample 10000/130 = 76 B/jiffy seeds both
        // stages; then this ACK's 10000 starts the next window.
        cc.pkts_acked(&at(p, 130, 30_000), &w, 10, ms(120));
        let e = est(&cc);
        assert_eq!(
            (e.bw_ns_est, e.bw_est, e.bk, e.rtt_win_sx),
            (76, 76, 10_000, 130)
        );
        // t=200, rtt 60: Δ = 70 > max(60, 50): sample 10000/70 = 142;
        // bw_ns = (7·76+142)/8 = 674/8 = 84; bw = (7·76+84)/8 = 616/8 = 77.
        cc.pkts_acked(&at(p, 200, 45_000), &w, 15, ms(60));
        let e = est(&cc);
        assert_eq!(
            (e.bw_ns_est, e.bw_est, e.bk, e.rtt_min),
            (84, 77, 15_000, 60)
        );
        // t=300: Δ = 100: sample 15000/100 = 150; bw_ns = (588+150)/8 = 92;
        // bw = (539+92)/8 = 78.
        cc.pkts_acked(&at(p, 300, 60_000), &w, 15, ms(60));
        let e = est(&cc);
        assert_eq!((e.bw_ns_est, e.bw_est), (92, 78));
        // 3 dupACKs: Reno ssthresh, cwnd/2 = 10 segments.
        assert_eq!(cc.ssthresh(&at(p, 310, 60_000), &w, 0), 10_000);
        // Recovery completes at t=320 (snd_una 80000 counted into bk):
        // cwnd = ssthresh = max(78·60/1000, 2) = max(4, 2) = 4 segments.
        cc.cwnd_event(&at(p, 320, 80_000), &mut w, CwndEvent::CompleteCwr);
        assert_eq!((w.cwnd, w.ssthresh), (4_000, 4_000));
        assert_eq!(est(&cc).bk, 35_000);
        // RTO: ssthresh = 4 segments and rtt_min is replaced by the next sample.
        let mut w = window(30, 10);
        cc.cwnd_event(&at(p, 900, 80_000), &mut w, CwndEvent::Loss);
        assert_eq!(w.ssthresh, 4_000);
        cc.pkts_acked(&at(p, 950, 81_000), &w, 1, ms(250));
        assert_eq!(est(&cc).rtt_min, 250);
    }

    #[test]
    fn linux_rtt_rounds_up_to_jiffies() {
        let mut e = LinuxPlus::new();
        e.rtt_sample(Some(Duration::from_micros(100_001)));
        assert_eq!(e.rtt, 101);
        e.rtt_sample(Some(Duration::from_nanos(999)));
        assert_eq!(e.rtt, 101, "0 µs is not a sample");
    }

    #[test]
    fn ns3_plus_estimates_once_per_srtt_with_datarate_truncation() {
        let p = Profile::Ns3;
        let mut cc = Westwood::plus(&Params::new(), p);
        let w = window(20, 10);
        // t=0, 50, 90 ms: 20 + 20 + 10 (dupACKs count) = 50 segments; the
        // estimate is due at 0 + SRTT = 100 ms.
        cc.pkts_acked(&at(p, 0, 0), &w, 20, ms(100));
        cc.pkts_acked(&at(p, 50, 0), &w, 20, ms(100));
        cc.pkts_acked(&at(p, 90, 0), &w, 10, ms(110));
        // t=120: the estimate fires first: 50·1000·8/0.1 = 4000000 bit/s;
        // Tustin: ⌊0·0.9⌋ + ⌊⌊(4000000+0)·0.5⌋·(1−0.9)⌋ = ⌊199999.99999999994⌋
        // = 199999 (ns-3's 1−0.9 = 0.09999999999999998). Then a new count
        // starts with these 20 segments, due at 120 + 110 = 230 ms.
        cc.pkts_acked(&at(p, 120, 0), &w, 20, ms(110));
        let Estimator::Ns3Plus(e) = &cc.est else {
            unreachable!()
        };
        assert_eq!(
            (e.current_bw, e.last_sample_bw, e.acked_segments),
            (199_999, 4_000_000, 20)
        );
        assert_eq!(
            e.pending,
            Some((Time(230_000_000), Duration::from_millis(110)))
        );
        // t=240, 3 dupACKs: estimate 20·1000·8/0.11 = 1454545 bit/s;
        // bw = ⌊199999·0.9⌋ + ⌊⌊(1454545+4000000)·0.5⌋·0.1⌋ = 179999 + 272727
        // = 452726; ssthresh = ⌊0.1·452726/8⌋ = ⌊5659.075⌋ = 5659 bytes
        // (minRtt = min SRTT = 100 ms), flight ignored.
        assert_eq!(cc.ssthresh(&at(p, 240, 0), &w, 99_000), 5_659);
        let Estimator::Ns3Plus(e) = &cc.est else {
            unreachable!()
        };
        assert_eq!((e.current_bw, e.pending), (452_726, None));
    }

    #[test]
    fn ns3_plus_without_filter_uses_raw_sample_and_floor() {
        let p = Profile::Ns3;
        let params = Params::from([("tustin".to_string(), 0.0)]);
        let mut cc = Westwood::plus(&params, p);
        let w = window(20, 10);
        cc.pkts_acked(&at(p, 0, 0), &w, 20, ms(110));
        cc.pkts_acked(&at(p, 100, 0), &w, 0, ms(100));
        // At 110 ms: 20·1000·8/0.11 = 1454545 bit/s; ssthresh =
        // ⌊0.1·1454545/8⌋ = 18181 bytes.
        assert_eq!(cc.ssthresh(&at(p, 110, 0), &w, 0), 18_181);
        // Nothing measured: 2·MSS.
        let mut cc = Westwood::plus(&Params::new(), p);
        assert_eq!(cc.ssthresh(&at(p, 5, 0), &w, 50_000), 2_000);
        // Recovery exit leaves cwnd to the sender.
        let mut w = window(7, 7);
        cc.cwnd_event(&at(p, 5, 0), &mut w, CwndEvent::CompleteCwr);
        assert_eq!(w, window(7, 7));
    }

    #[test]
    fn original_per_ack_tustin_filter_with_virtual_samples() {
        let p = Profile::Ns3;
        let mut cc = Westwood::new(&Params::new(), p);
        let mut w = window(20, 10);
        cc.cwnd_event(&at(p, 0, 0), &mut w, CwndEvent::TxStart);
        let bwe = |cc: &Westwood| match &cc.est {
            Estimator::Original(e) => (e.bwe, e.last_sample, e.unaccounted),
            _ => unreachable!(),
        };
        // τ = 1 s, m = 2. ACKs 100 ms apart: a = (2−0.1)/(2+0.1) = 19/21.
        // t=100: b1 = 10000 B / 0.1 s = 1e5; b̂1 = (2/21)·(1e5 + 0)/2 = 100000/21.
        cc.pkts_acked(&at(p, 100, 10_000), &w, 10, ms(100));
        assert!(close(bwe(&cc).0, 100_000.0 / 21.0));
        // t=200: b2 = 1e5; b̂2 = (19/21)·b̂1 + (2/21)·1e5 = 6100000/441.
        cc.pkts_acked(&at(p, 200, 20_000), &w, 10, ms(100));
        assert!(close(bwe(&cc).0, 6_100_000.0 / 441.0));
        // t=300: a duplicate ACK counts one MSS: b3 = 1000/0.1 = 1e4;
        // b̂3 = (19/21)·b̂2 + (1/21)·(1e4 + 1e5) = 17752.942446820016.
        cc.pkts_acked(&at(p, 300, 20_000), &w, 1, ms(100));
        let (b3, last, unacc) = bwe(&cc);
        assert!(close(b3, 17_752.942_446_820_016));
        assert_eq!((last, unacc), (10_000.0, 1_000));
        // t=1400 (1.1 s later): 2 virtual zero samples (τ/2 = 0.5 s each,
        // a = 1.5/2.5 = 0.6): b̂ = 0.6·b̂3 + 0.2·(0 + 1e4) = 12651.765468…,
        // then 0.6·b̂ + 0.2·0 = 7591.059280…; then the real sample over the
        // remaining 0.1 s: 10000 acked − 1000 already credited = 9000 B,
        // b = 9e4, b̂ = (19/21)·7591.059280855 + (1/21)·(9e4 + 0).
        cc.pkts_acked(&at(p, 1_400, 30_000), &w, 10, ms(100));
        let (b4, last, unacc) = bwe(&cc);
        let v2 = 0.6 * (0.6 * b3 + 0.2 * 10_000.0);
        assert!(close(b4, 19.0 / 21.0 * v2 + 90_000.0 / 21.0));
        assert!(close(b4, 11_153.815_539_821_38));
        assert_eq!((last, unacc), (90_000.0, 0));
        // ssthresh = BWE·RTTmin = 11153.8·0.1 = 1115 B → floor 2·MSS.
        assert_eq!(cc.ssthresh(&at(p, 1_400, 30_000), &w, 0), 2_000);
    }

    #[test]
    fn original_short_last_interval_merges_into_previous_period() {
        let p = Profile::Linux;
        let mut cc = Westwood::new(&Params::new(), p);
        let mut w = window(20, 10);
        cc.cwnd_event(&at(p, 0, 0), &mut w, CwndEvent::TxStart);
        // Gap 505 ms = one τ/2 period + 5 ms < 10 ms: no virtual sample, one
        // real sample over 0.505 s: b = 5050/0.505 = 1e4,
        // a = (2−0.505)/(2+0.505), b̂ = (1−a)·(1e4 + 0)/2.
        cc.pkts_acked(&at(p, 505, 5_050), &w, 5, ms(100));
        let Estimator::Original(e) = &cc.est else {
            unreachable!()
        };
        let a = 1.495 / 2.505;
        assert!(close(e.bwe, (1.0 - a) * 10_000.0 / 2.0));
    }

    #[test]
    fn original_steady_rate_and_loss_reaction() {
        // 2000 B every 10 ms (2e5 B/s) for 200 ACKs, RTTmin 100 ms.
        // a = 1.99/2.01; b̂1 = (1−a)·b/2, b̂k = a·b̂(k−1) + (1−a)·b, so
        // b̂200 = b·(1 − a^199·(1+a)/2).
        for p in [Profile::Linux, Profile::Ns3] {
            let mut cc = Westwood::new(&Params::new(), p);
            let mut w = window(40, 10);
            cc.cwnd_event(&at(p, 0, 0), &mut w, CwndEvent::TxStart);
            for k in 1..=200u64 {
                cc.pkts_acked(&at(p, 10 * k, 2_000 * k), &w, 2, ms(100));
            }
            let a: f64 = 1.99 / 2.01;
            let want = 200_000.0 * (1.0 - a.powi(199) * (1.0 + a) / 2.0);
            let Estimator::Original(e) = &cc.est else {
                unreachable!()
            };
            assert!(close(e.bwe, want), "{p:?}: {} vs {want}", e.bwe);
            assert!(close(want, 172_797.381_380_196_46));
            // ssthresh = 172797.4·0.1 = 17279.7 B: Linux 17 segments, ns-3 17279 B.
            let ss = cc.ssthresh(&at(p, 2_000, 400_000), &w, 40_000);
            let want_ss = if p == Profile::Linux { 17_000 } else { 17_279 };
            assert_eq!(ss, want_ss, "{p:?}");
            // Recovery exit keeps cwnd = ssthresh (the paper's min(cwnd, ssthresh)
            // with cwnd at 40 > ssthresh).
            w.ssthresh = ss;
            w.cwnd = 23_000;
            cc.cwnd_event(&at(p, 2_010, 402_000), &mut w, CwndEvent::CompleteCwr);
            assert_eq!(w.cwnd, ss);
            // An RTO 10 s later: 20 virtual samples (a = 0.6) decay the estimate
            // to ~0, ssthresh falls to 2 segments.
            let ss = cc.ssthresh(&at(p, 12_010, 402_000), &w, 40_000);
            assert_eq!(ss, 2_000, "{p:?}");
        }
    }

    #[test]
    fn registry_names_and_alias() {
        use super::super::{lookup, AnyCc};
        for (name, want) in [
            ("westwood", WestwoodVariant::Original),
            ("westwood-plus", WestwoodVariant::Plus),
            ("westwood-nr", WestwoodVariant::Plus),
        ] {
            let d = lookup(name).expect(name);
            for p in [Profile::Linux, Profile::Ns3] {
                let AnyCc::Westwood(cc) = d.build(&Params::new(), p) else {
                    panic!("{name} is not Westwood");
                };
                assert_eq!(cc.variant(), want, "{name} {p:?}");
            }
        }
        assert!(lookup("westwood-nr")
            .unwrap()
            .description
            .contains("NewReno"));
    }

    #[test]
    fn growth_is_reno_in_both_profiles() {
        for (p, want) in [(Profile::Linux, 11_000), (Profile::Ns3, 10_100)] {
            for mut cc in [
                Westwood::new(&Params::new(), p),
                Westwood::plus(&Params::new(), p),
            ] {
                let mut w = window(10, 10);
                // Linux: 10 segments acked at cwnd 10 → +1; ns-3: +1000²/10000 once.
                cc.increase_window(&info(p), &mut w, 10);
                assert_eq!(w.cwnd, want, "{p:?} {:?}", cc.variant());
                cc.congestion_state_set(&info(p), &mut w, CaState::Recovery);
            }
        }
    }
    #[test]
    fn ns2_takes_the_estimator_that_counts_acks_without_samples() {
        // ns-2 has no Westwood+; its senders time one packet per round trip,
        // so ns-3's estimator (which skips ACKs without an RTT) would see a
        // fraction of the data. Under ns2 Westwood+ is Linux's estimator and
        // ssthresh counts whole packets (ns-2's windows are in packets):
        // bwe·RTT_min = 2.5 segments → 2 segments.
        let w = Westwood::plus(&Params::new(), Profile::Ns2);
        assert!(matches!(w.est, Estimator::LinuxPlus(_)));
        let mut o = Original::new(0.5, 4.0);
        o.bwe = 25_000.0;
        o.rtt_min = Some(Duration::from_millis(100));
        assert_eq!(o.ssthresh(Profile::Ns2, &info(Profile::Ns2)), 2_000);
    }
}
