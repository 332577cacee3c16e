//! BBR v1 (docs/congestion-control.md, '`bbr`'): a model of the path, the
//! bottleneck bandwidth (windowed maximum of delivery-rate samples over 10
//! round trips) and the round-trip propagation delay (windowed minimum RTT
//! over 10 s), sets the pacing rate to gain × bandwidth and cwnd to
//! cwnd_gain × BDP (+ allowances). States: STARTUP (gains 2/ln 2) until the
//! bandwidth grows less than 25 % in 3 rounds, DRAIN (pacing 1/high_gain)
//! until in flight ≤ BDP, PROBE_BW (pacing gain cycle 5/4, 3/4, 1 ×6, cwnd
//! gain 2), PROBE_RTT (cwnd 4 segments for max(200 ms, one round)) when the
//! min-RTT sample is 10 s old.
//!
//! Sources: Cardwell et al., "BBR: Congestion-Based Congestion Control", ACM
//! Queue 14(5), 2016; Linux `net/ipv4/tcp_bbr.c` (v1, 5.x with ACK
//! aggregation); ns-3.44 `src/internet/model/tcp-bbr.cc` (`TcpBbr`).
//!
//! Profile differences (ns-3 / Linux), each kept as ns-3.44 and Linux have
//! them:
//! * units: bytes / packets; Linux rounds the BDP up to whole packets, adds
//!   3 × its TSO goal (2 segments below ~12 Mbit/s... at least
//!   `bbr_min_tso_segs`) and rounds to an even count; ns-3 adds 3 MSS;
//! * high gain: 2.89 (`HighGain`) / 739/256 = 2.8867 (`bbr_high_gain`);
//! * PROBE_BW start phase: ns-3 `7 − ⌊U(0,6)⌋` then advance: one of {3..7, 0};
//!   Linux `7 − prandom(7)` then advance: one of {2..7, 0};
//! * min RTT: ns-3 takes the last RTT (`m_lastRtt`, kept between ACKs),
//!   Linux this ACK's sample only, if ≤ the minimum or the filter expired. Both start from the handshake's RTT, which, carrying no
//!   1500-byte serialisation, is below any data RTT: the first 10 s run on it;
//! * pacing before the first RTT sample: ns-3 rounds the RTT to whole ms and
//!   seeds the bandwidth filter with cwnd/RTT; Linux uses SRTT and leaves
//!   the filter empty;
//! * round start is cleared on every ACK in Linux, only on valid samples in
//!   ns-3; Linux clears `full_bw` on a timeout;
//! * recovery: ns-3 sets cwnd = in flight + max(acked, MSS) when entering
//!   Recovery (`CongestionStateSet`) and restores on `CA_EVENT_COMPLETE_CWR`;
//!   Linux does both in `bbr_set_cwnd_to_recover_or_restore` from the
//!   previous state, and subtracts newly lost packets first;
//! * PROBE_RTT marks the rate estimator application-limited in Linux only
//!   (ns-3 keeps a private `m_appLimited`);
//! * ACK aggregation (`extra_acked`): ns-3 measures the epoch in whole
//!   seconds and resets it at 4096 bytes; Linux in µs, reset at 2^20 packets.
//! * the windowed max filter: ns-3 `WindowedFilter` (sub-window refresh by
//!   equal values), Linux `minmax_running_max` (by equal times).
//!
//! Long-term (policer) bandwidth sampling, Linux only (ns-3.44 has none):
//! over intervals of 4–16 rounds that start and end with a loss, a loss rate
//! ≥ 50/256 and two consecutive intervals' rates within 1/8 (or 4 kbit/s)
//! mean a policer: BBR then uses their average as its bandwidth (pacing gain
//! 1) for 48 rounds (`bbr_lt_bw_sampling`).

use super::{
    param, CcAction, CongestionOps, ConnInfo, CwndEvent, ParamSpec, Params, Profile, RateConn,
    RateSample, Window,
};
use crate::engine::{Duration, RngStream, Time};
use crate::tcp::state::CaState;

pub const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "high_gain",
        default_ns3: 2.89,
        default_linux: 739.0 / 256.0,
        min: 1.0,
        max: 10.0,
        doc: "STARTUP pacing and cwnd gain (2/ln 2 ≈ 2.885; ns-3 HighGain 2.89, Linux bbr_high_gain 739/256)",
        integer: false,
        at_most: None,
    },
    ParamSpec {
        name: "bw_rounds",
        default_ns3: 10.0,
        default_linux: 10.0,
        min: 1.0,
        max: 1000.0,
        doc: "length of the max-bandwidth filter, in round trips",
        integer: true,
        at_most: None,
    },
    ParamSpec {
        name: "min_rtt_win_ms",
        default_ns3: 10_000.0,
        default_linux: 10_000.0,
        min: 1.0,
        max: 3_600_000.0,
        doc: "length of the min-RTT filter (ms); its expiry triggers PROBE_RTT",
        integer: true,
        at_most: None,
    },
    ParamSpec {
        name: "probe_rtt_ms",
        default_ns3: 200.0,
        default_linux: 200.0,
        min: 0.0,
        max: 10_000.0,
        doc: "time held at the minimum cwnd in PROBE_RTT (ms)",
        integer: true,
        at_most: None,
    },
];

/// The PROBE_BW pacing-gain cycle.
pub const PACING_GAIN_CYCLE: [f64; 8] = [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
/// cwnd gain in PROBE_BW.
pub const CWND_GAIN: f64 = 2.0;
/// Pacing margin: BBR paces 1 % below its bandwidth estimate.
const PACING_MARGIN: f64 = 0.01;
/// Minimum cwnd (`bbr_cwnd_min_target`, ns-3 `m_minPipeCwnd`), segments.
const MIN_CWND_SEGMENTS: u64 = 4;
/// Linux long-term sampling: interval bounds (rounds), loss-rate threshold,
/// rate agreement (ratio, bytes/s) and how long the policed rate is used.
const LT_INTVL_MIN_RTTS: u32 = 4;
const LT_LOSS_THRESH: f64 = 50.0 / 256.0;
const LT_BW_RATIO: f64 = 1.0 / 8.0;
const LT_BW_DIFF: f64 = 4000.0 / 8.0;
const LT_BW_MAX_RTTS: u32 = 48;
/// Full-bandwidth detection: growth factor and rounds without it.
const FULL_BW_THRESH: f64 = 1.25;
const FULL_BW_CNT: u32 = 3;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

/// Windowed maximum over round counts: Kathleen Nichols' three-sample
/// algorithm (Linux `lib/win_minmax.c`, ns-3 `WindowedFilter`).
#[derive(Clone, Copy, Debug)]
struct MaxFilter {
    s: [(f64, u64); 3],
    /// ns-3: a value that means empty (the first update resets).
    zero: f64,
    ns3: bool,
}

impl MaxFilter {
    fn new(value: f64, t: u64, ns3: bool) -> Self {
        MaxFilter {
            s: [(value, t); 3],
            zero: value,
            ns3,
        }
    }

    fn best(&self) -> f64 {
        self.s[0].0
    }

    fn update(&mut self, v: f64, t: u64, win: u64) {
        let reset = if self.ns3 {
            self.s[0].0 == self.zero || v >= self.s[0].0
        } else {
            v >= self.s[0].0
        };
        if reset || t - self.s[2].1 > win {
            self.s = [(v, t); 3];
            return;
        }
        if v >= self.s[1].0 {
            self.s[1] = (v, t);
            self.s[2] = (v, t);
        } else if v >= self.s[2].0 {
            self.s[2] = (v, t);
        }
        let dt = t - self.s[0].1;
        if dt > win {
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = (v, t);
            if t - self.s[0].1 > win {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                if !self.ns3 {
                    self.s[2] = (v, t);
                }
            }
        } else if self.ns3 {
            if self.s[1].0 == self.s[0].0 && t - self.s[1].1 > win / 4 {
                self.s[1] = (v, t);
                self.s[2] = (v, t);
            } else if self.s[2].0 == self.s[1].0 && t - self.s[2].1 > win / 2 {
                self.s[2] = (v, t);
            }
        } else if self.s[1].1 == self.s[0].1 && dt > win / 4 {
            self.s[1] = (v, t);
            self.s[2] = (v, t);
        } else if self.s[2].1 == self.s[1].1 && dt > win / 2 {
            self.s[2] = (v, t);
        }
    }
}

#[derive(Clone, Debug)]
pub struct Bbr {
    linux: bool,
    high_gain: f64,
    bw_rounds: u64,
    min_rtt_win: Duration,
    probe_rtt_time: Duration,
    rng: RngStream,

    initialized: bool,
    mss: u64,
    initial_cwnd: u64,
    mode: Mode,
    pacing_gain: f64,
    cwnd_gain: f64,
    bw: MaxFilter,
    round_count: u64,
    round_start: bool,
    next_round_delivered: u64,
    full_bw: f64,
    full_bw_cnt: u32,
    filled: bool,
    min_rtt: Option<Duration>,
    min_rtt_stamp: Time,
    min_rtt_expired: bool,
    last_rtt: Option<Duration>,
    probe_rtt_done: Option<Time>,
    probe_rtt_round_done: bool,
    packet_conservation: bool,
    prior_cwnd: u64,
    idle_restart: bool,
    cycle_idx: usize,
    cycle_stamp: Time,
    pacing_rate: Option<f64>,
    has_seen_rtt: bool,
    delivered: u64,
    /// ns-3 `m_appLimited` (private to TcpBbr).
    app_limited: u64,
    last_acked_sacked: u64,
    prev_ca_state: CaState,
    extra_acked: [u64; 2],
    extra_acked_idx: usize,
    extra_acked_win_rtts: u32,
    ack_epoch_time: Time,
    ack_epoch_acked: u64,
    target_cwnd: u64,
    /// Linux long-term sampling (`lt_*`); bytes and bytes/s.
    lt: LongTerm,
}

#[derive(Clone, Copy, Debug, Default)]
struct LongTerm {
    is_sampling: bool,
    use_bw: bool,
    bw: f64,
    rtt_cnt: u32,
    last_stamp_ms: u64,
    last_delivered: u64,
    last_lost: u64,
    /// Bytes marked lost so far (Linux `tp->lost`).
    lost: u64,
}

impl Bbr {
    pub fn new(params: &Params, profile: Profile) -> Self {
        let ms = |name| Duration::from_millis(param(PARAMS, params, name, profile) as u64);
        let linux = profile == Profile::Linux;
        Bbr {
            linux,
            high_gain: param(PARAMS, params, "high_gain", profile),
            bw_rounds: param(PARAMS, params, "bw_rounds", profile) as u64,
            min_rtt_win: ms("min_rtt_win_ms"),
            probe_rtt_time: ms("probe_rtt_ms"),
            rng: RngStream::for_component(0, "cc/bbr"),
            initialized: false,
            mss: 0,
            initial_cwnd: 0,
            mode: Mode::Startup,
            pacing_gain: 0.0,
            cwnd_gain: 0.0,
            bw: MaxFilter::new(0.0, 0, !linux),
            round_count: 0,
            round_start: false,
            next_round_delivered: 0,
            full_bw: 0.0,
            full_bw_cnt: 0,
            filled: false,
            min_rtt: None,
            min_rtt_stamp: Time::ZERO,
            min_rtt_expired: false,
            last_rtt: None,
            probe_rtt_done: None,
            probe_rtt_round_done: false,
            packet_conservation: false,
            prior_cwnd: 0,
            idle_restart: false,
            cycle_idx: 0,
            cycle_stamp: Time::ZERO,
            pacing_rate: None,
            has_seen_rtt: false,
            delivered: 0,
            app_limited: 0,
            last_acked_sacked: 0,
            prev_ca_state: CaState::Open,
            extra_acked: [0; 2],
            extra_acked_idx: 0,
            extra_acked_win_rtts: 0,
            ack_epoch_time: Time::ZERO,
            ack_epoch_acked: 0,
            target_cwnd: 0,
            lt: LongTerm::default(),
        }
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }
    pub fn pacing_gain(&self) -> f64 {
        self.pacing_gain
    }
    pub fn cwnd_gain(&self) -> f64 {
        self.cwnd_gain
    }
    pub fn cycle_index(&self) -> usize {
        self.cycle_idx
    }
    pub fn max_bw(&self) -> f64 {
        self.bw.best()
    }
    pub fn min_rtt(&self) -> Option<Duration> {
        self.min_rtt
    }
    pub fn full_bw_reached(&self) -> bool {
        self.filled
    }
    /// The policed rate in use, if long-term sampling found one (Linux).
    pub fn lt_bw(&self) -> Option<f64> {
        self.lt.use_bw.then_some(self.lt.bw)
    }

    /// The bandwidth that sets pacing and cwnd (Linux `bbr_bw`: the
    /// long-term rate while policed, else the max filter).
    fn control_bw(&self) -> f64 {
        if self.lt.use_bw {
            self.lt.bw
        } else {
            self.bw.best()
        }
    }

    // ---- Linux long-term (policer) sampling ----------------------------------

    fn lt_reset_interval(&mut self, now: Time) {
        self.lt.last_stamp_ms = now.0 / 1_000_000;
        self.lt.last_delivered = self.delivered;
        self.lt.last_lost = self.lt.lost;
        self.lt.rtt_cnt = 0;
    }

    fn lt_reset(&mut self, now: Time) {
        self.lt.bw = 0.0;
        self.lt.use_bw = false;
        self.lt.is_sampling = false;
        self.lt_reset_interval(now);
    }

    fn lt_interval_done(&mut self, now: Time, bw: f64) {
        if self.lt.bw > 0.0 {
            let diff = (bw - self.lt.bw).abs();
            if diff <= LT_BW_RATIO * self.lt.bw || diff * (1.0 - PACING_MARGIN) <= LT_BW_DIFF {
                self.lt.bw = (bw + self.lt.bw) / 2.0;
                self.lt.use_bw = true;
                self.pacing_gain = 1.0;
                self.lt.rtt_cnt = 0;
                return;
            }
        }
        self.lt.bw = bw;
        self.lt_reset_interval(now);
    }

    /// Linux `bbr_lt_bw_sampling`, for an ACK with `losses` newly lost bytes.
    fn lt_sampling(&mut self, now: Time, losses: u64, app_limited: bool) {
        if self.lt.use_bw {
            if self.mode == Mode::ProbeBw && self.round_start {
                self.lt.rtt_cnt += 1;
                if self.lt.rtt_cnt >= LT_BW_MAX_RTTS {
                    self.lt_reset(now);
                    self.enter_probe_bw(now);
                }
            }
            return;
        }
        if !self.lt.is_sampling {
            if losses == 0 {
                return;
            }
            self.lt_reset_interval(now);
            self.lt.is_sampling = true;
        }
        if app_limited {
            self.lt_reset(now);
            return;
        }
        if self.round_start {
            self.lt.rtt_cnt += 1;
        }
        if self.lt.rtt_cnt < LT_INTVL_MIN_RTTS {
            return;
        }
        if self.lt.rtt_cnt > 4 * LT_INTVL_MIN_RTTS {
            self.lt_reset(now);
            return;
        }
        if losses == 0 {
            return;
        }
        let lost = self.lt.lost - self.lt.last_lost;
        let delivered = self.delivered - self.lt.last_delivered;
        if delivered == 0 || (lost as f64) < LT_LOSS_THRESH * delivered as f64 {
            return;
        }
        let t_ms = (now.0 / 1_000_000).saturating_sub(self.lt.last_stamp_ms);
        if t_ms < 1 {
            return;
        }
        self.lt_interval_done(now, delivered as f64 / (t_ms as f64 / 1000.0));
    }

    /// ns-3 `CongestionStateSet(CA_OPEN)` at establishment / Linux `bbr_init`.
    fn init(&mut self, info: &ConnInfo, w: &mut Window) {
        self.initialized = true;
        self.mss = info.mss;
        self.initial_cwnd = w.cwnd;
        // ns-3 reads m_srtt (the handshake's sample at the SYN-ACK), Linux
        // tcp_min_rtt (the same single sample).
        self.min_rtt = if self.linux { info.min_rtt } else { info.srtt };
        self.min_rtt_stamp = info.now;
        self.prior_cwnd = w.cwnd;
        self.target_cwnd = w.cwnd;
        self.next_round_delivered = 0;
        self.round_start = false;
        self.round_count = 0;
        self.filled = false;
        self.full_bw = 0.0;
        self.full_bw_cnt = 0;
        self.enter_startup();
        self.init_pacing_rate(info, w);
        self.lt_reset(info.now);
        self.ack_epoch_time = info.now;
        self.ack_epoch_acked = 0;
        self.extra_acked = [0; 2];
        self.extra_acked_idx = 0;
        self.extra_acked_win_rtts = 0;
    }

    /// ns-3 `InitPacingRate` / Linux `bbr_init_pacing_rate_from_rtt`.
    fn init_pacing_rate(&mut self, info: &ConnInfo, w: &Window) {
        if self.linux {
            let rtt = match info.srtt {
                Some(s) => {
                    self.has_seen_rtt = true;
                    s.max(Duration::from_micros(1))
                }
                None => Duration::from_millis(1),
            };
            let bw = w.cwnd as f64 / rtt.as_secs_f64();
            self.pacing_rate = Some(self.high_gain * bw * (1.0 - PACING_MARGIN));
        } else {
            // ns-3: tcb->m_minRtt in whole milliseconds (at least 1).
            let rtt_ms = match info.min_rtt {
                Some(m) => {
                    self.has_seen_rtt = true;
                    (m.as_nanos() / 1_000_000).max(1)
                }
                None => 1,
            };
            let bw = w.cwnd as f64 / (rtt_ms as f64 / 1000.0);
            self.pacing_rate = Some(self.pacing_gain * bw);
            self.bw = MaxFilter::new(bw, 0, true);
        }
    }

    fn enter_startup(&mut self) {
        self.mode = Mode::Startup;
        self.pacing_gain = self.high_gain;
        self.cwnd_gain = self.high_gain;
    }

    fn enter_drain(&mut self) {
        self.mode = Mode::Drain;
        // Linux bbr_drain_gain = BBR_UNIT · 1000 / 2885 = 88/256; ns-3 1/HighGain.
        self.pacing_gain = if self.linux {
            88.0 / 256.0
        } else {
            1.0 / self.high_gain
        };
        self.cwnd_gain = self.high_gain;
    }

    fn enter_probe_bw(&mut self, now: Time) {
        self.mode = Mode::ProbeBw;
        self.cwnd_gain = CWND_GAIN;
        self.cycle_idx = if self.linux {
            // 7 − prandom_u32_max(7): 1..=7.
            7 - self.rng.uniform_int(0, 6) as usize
        } else {
            // GAIN_CYCLE_LENGTH − 1 − (int) U(0, 6): 2..=7.
            7 - (self.rng.uniform() * 6.0) as usize
        };
        self.advance_cycle_phase(now);
    }

    fn enter_probe_rtt(&mut self) {
        self.mode = Mode::ProbeRtt;
        self.pacing_gain = 1.0;
        self.cwnd_gain = 1.0;
    }

    fn advance_cycle_phase(&mut self, now: Time) {
        self.cycle_stamp = now;
        self.cycle_idx = (self.cycle_idx + 1) % PACING_GAIN_CYCLE.len();
        // Linux bbr_update_gains: gain 1 while using the policed rate.
        self.pacing_gain = if self.lt.use_bw {
            1.0
        } else {
            PACING_GAIN_CYCLE[self.cycle_idx]
        };
    }

    /// Linux `bbr_tso_segs_goal` for the current pacing rate: about 1 ms of
    /// data (`sk_pacing_shift` 10), at least 2 segments (1 below 1.2 Mbit/s).
    fn tso_segs_goal(&self) -> u64 {
        let rate = self.pacing_rate.unwrap_or(0.0);
        let min_segs = if rate < 1_200_000.0 / 8.0 { 1 } else { 2 };
        let bytes = (rate / 1024.0).min(65_536.0 - 1.0 - 320.0) as u64;
        (bytes / self.mss.max(1)).max(min_segs).min(127)
    }

    /// The inflight for `gain` × the estimated BDP plus the send-quantum
    /// allowance (ns-3 `InFlight`; Linux `bbr_inflight` = `bbr_bdp` +
    /// `bbr_quantization_budget`), bytes.
    fn inflight(&self, gain: f64) -> u64 {
        self.inflight_at(self.bw.best(), gain)
    }

    fn inflight_at(&self, bw: f64, gain: f64) -> u64 {
        self.inflight_plus(bw, gain, 0)
    }

    /// `inflight_at` with `extra` bytes (the ACK-aggregation allowance) added
    /// to the BDP: Linux `bbr_set_cwnd` adds it before the quantisation
    /// budget (and its rounding to an even count), ns-3 after `InFlight`.
    fn inflight_plus(&self, bw: f64, gain: f64, extra: u64) -> u64 {
        let cycle0 = self.mode == Mode::ProbeBw && self.cycle_idx == 0;
        if self.linux {
            // bbr_bdp: TCP_INIT_CWND without an RTT sample, else rounded up.
            let bdp = match self.min_rtt {
                None => 10,
                Some(m) => (gain * bw * m.as_secs_f64() / self.mss as f64).ceil() as u64,
            };
            let mut pkts = bdp + extra / self.mss;
            pkts += 3 * self.tso_segs_goal();
            pkts = (pkts + 1) & !1;
            if cycle0 {
                pkts += 2;
            }
            pkts * self.mss
        } else {
            let Some(min_rtt) = self.min_rtt else {
                return self.initial_cwnd + extra;
            };
            let bdp = bw * min_rtt.as_secs_f64();
            let quanta = 3 * self.mss;
            let probe = if cycle0 { 2 * self.mss } else { 0 };
            (gain * bdp) as u64 + quanta + probe + extra
        }
    }

    fn min_cwnd(&self) -> u64 {
        MIN_CWND_SEGMENTS * self.mss
    }

    fn save_cwnd(&mut self, ca_state: CaState, cwnd: u64) {
        let in_recovery = if self.linux {
            matches!(self.prev_ca_state, CaState::Recovery | CaState::Loss)
        } else {
            ca_state == CaState::Recovery
        };
        if !in_recovery && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(cwnd);
        }
    }

    fn exit_probe_rtt(&mut self, now: Time) {
        if self.filled {
            self.enter_probe_bw(now);
        } else {
            self.enter_startup();
        }
    }

    fn set_pacing_rate(&mut self, info: &ConnInfo, w: &Window, gain: f64) {
        let rate = gain * self.control_bw() * (1.0 - PACING_MARGIN);
        let rate = rate.min(4e9 / 8.0);
        if !self.has_seen_rtt && (info.min_rtt.is_some() && (!self.linux || info.srtt.is_some())) {
            self.init_pacing_rate(info, w);
        }
        if self.filled || self.pacing_rate.is_none_or(|r| rate > r) {
            self.pacing_rate = Some(rate);
        }
    }

    // ---- the model ----------------------------------------------------------

    fn update_bw(&mut self, now: Time, rs: &RateSample) {
        if self.linux {
            self.round_start = false;
        }
        if !rs.valid() {
            return;
        }
        if rs.prior_delivered >= self.next_round_delivered {
            self.next_round_delivered = self.delivered;
            self.round_count += 1;
            self.round_start = true;
            self.packet_conservation = false;
        } else {
            self.round_start = false;
        }
        if self.linux {
            self.lt_sampling(now, rs.lost, rs.is_app_limited);
        }
        let bw = if self.linux {
            rs.delivered as f64 / rs.interval.as_secs_f64()
        } else {
            rs.delivery_rate
        };
        if !rs.is_app_limited || bw >= self.bw.best() {
            self.bw.update(bw, self.round_count, self.bw_rounds);
        }
    }

    fn update_ack_aggregation(&mut self, now: Time, w: &Window, rs: &RateSample) {
        if rs.acked_sacked == 0 || rs.delivered < 0 || (self.linux && rs.interval.0 == 0) {
            return;
        }
        if self.round_start {
            self.extra_acked_win_rtts = (self.extra_acked_win_rtts + 1).min(31);
            if self.extra_acked_win_rtts >= 5 {
                self.extra_acked_win_rtts = 0;
                self.extra_acked_idx ^= 1;
                self.extra_acked[self.extra_acked_idx] = 0;
            }
        }
        let elapsed = now.since(self.ack_epoch_time).as_secs_f64();
        let (elapsed, reset_thresh) = if self.linux {
            (elapsed, (1u64 << 20) * self.mss)
        } else {
            // ns-3: uint32_t epochProp = Now().GetSeconds() − m_ackEpochTime.GetSeconds().
            (elapsed.trunc(), 1 << 12)
        };
        let mut expected = (self.control_bw() * elapsed) as u64;
        if self.ack_epoch_acked <= expected
            || self.ack_epoch_acked + rs.acked_sacked >= reset_thresh
        {
            self.ack_epoch_acked = 0;
            self.ack_epoch_time = now;
            expected = 0;
        }
        self.ack_epoch_acked += rs.acked_sacked;
        let extra = (self.ack_epoch_acked - expected).min(w.cwnd);
        if extra > self.extra_acked[self.extra_acked_idx] {
            self.extra_acked[self.extra_acked_idx] = extra;
        }
    }

    fn ack_aggregation_cwnd(&self) -> u64 {
        if !self.filled {
            return 0;
        }
        let max_aggr = (self.control_bw() * 0.1) as u64;
        self.extra_acked[0].max(self.extra_acked[1]).min(max_aggr)
    }

    fn check_cycle_phase(&mut self, now: Time, rs: &RateSample) {
        if self.mode != Mode::ProbeBw {
            return;
        }
        let min_rtt = self.min_rtt.unwrap_or(Duration(u64::MAX));
        let full_length = now.since(self.cycle_stamp) > min_rtt;
        let next = if self.pacing_gain == 1.0 {
            full_length
        } else if self.pacing_gain > 1.0 {
            full_length && (rs.lost > 0 || rs.prior_in_flight >= self.inflight(self.pacing_gain))
        } else {
            full_length || rs.prior_in_flight <= self.inflight(1.0)
        };
        if next {
            self.advance_cycle_phase(now);
        }
    }

    fn check_full_pipe(&mut self, rs: &RateSample) {
        if self.filled || !self.round_start || rs.is_app_limited {
            return;
        }
        if self.bw.best() >= self.full_bw * FULL_BW_THRESH {
            self.full_bw = self.bw.best();
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
        if self.full_bw_cnt >= FULL_BW_CNT {
            self.filled = true;
        }
    }

    fn check_drain(&mut self, info: &ConnInfo, w: &mut Window) {
        if self.mode == Mode::Startup && self.filled {
            self.enter_drain();
            w.ssthresh = self.inflight(1.0);
        }
        if self.mode == Mode::Drain && info.bytes_in_flight <= self.inflight(1.0) {
            self.enter_probe_bw(info.now);
        }
    }

    fn update_min_rtt(&mut self, now: Time, rs: &RateSample) {
        self.min_rtt_expired = now > self.min_rtt_stamp + self.min_rtt_win;
        let sample = if self.linux { rs.rtt } else { self.last_rtt };
        if let Some(r) = sample.filter(|r| r.0 > 0) {
            let better = self.min_rtt.is_none_or(|m| r <= m);
            if better || self.min_rtt_expired {
                self.min_rtt = Some(r);
                self.min_rtt_stamp = now;
            }
        }
    }

    fn check_probe_rtt(
        &mut self,
        info: &ConnInfo,
        w: &mut Window,
        rs: &RateSample,
        act: &mut CcAction,
    ) {
        let now = info.now;
        if self.mode != Mode::ProbeRtt && self.min_rtt_expired && !self.idle_restart {
            self.enter_probe_rtt();
            self.save_cwnd(info.ca_state, w.cwnd);
            self.probe_rtt_done = None;
        }
        if self.mode == Mode::ProbeRtt {
            if self.linux {
                act.mark_app_limited = true;
            } else {
                self.app_limited = (self.delivered + info.bytes_in_flight).max(1);
            }
            if self.probe_rtt_done.is_none() && info.bytes_in_flight <= self.min_cwnd() {
                self.probe_rtt_done = Some(now + self.probe_rtt_time);
                self.probe_rtt_round_done = false;
                self.next_round_delivered = self.delivered;
            } else if let Some(done) = self.probe_rtt_done {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done && now > done {
                    self.min_rtt_stamp = now;
                    w.cwnd = w.cwnd.max(self.prior_cwnd);
                    self.exit_probe_rtt(now);
                }
            }
        }
        let delivered_some = if self.linux {
            rs.delivered > 0
        } else {
            rs.delivered != 0
        };
        if delivered_some {
            self.idle_restart = false;
        }
    }

    // ---- the controls -------------------------------------------------------

    /// Packet conservation in recovery and the restore after it. Returns
    /// whether cwnd is settled (conservation holds it).
    fn recover_or_restore(&mut self, info: &ConnInfo, w: &mut Window, rs: &RateSample) -> bool {
        if self.linux {
            let state = info.ca_state;
            let mut cwnd = w.cwnd;
            if rs.lost > 0 {
                cwnd = cwnd.saturating_sub(rs.lost).max(self.mss);
            }
            if state == CaState::Recovery && self.prev_ca_state != CaState::Recovery {
                self.packet_conservation = true;
                self.next_round_delivered = self.delivered;
                cwnd = info.bytes_in_flight + rs.acked_sacked;
            } else if matches!(self.prev_ca_state, CaState::Recovery | CaState::Loss)
                && matches!(state, CaState::Open | CaState::Disorder)
            {
                cwnd = cwnd.max(self.prior_cwnd);
                self.packet_conservation = false;
            }
            self.prev_ca_state = state;
            if self.packet_conservation {
                w.cwnd = cwnd.max(info.bytes_in_flight + rs.acked_sacked);
                return true;
            }
            w.cwnd = cwnd;
            false
        } else {
            if info.ca_state != CaState::Recovery {
                return false;
            }
            if rs.lost > 0 {
                w.cwnd = w.cwnd.saturating_sub(rs.lost).max(self.mss);
            }
            if self.packet_conservation {
                w.cwnd = w.cwnd.max(info.bytes_in_flight + rs.acked_sacked);
                return true;
            }
            false
        }
    }

    fn set_cwnd(&mut self, info: &ConnInfo, w: &mut Window, rs: &RateSample) {
        if rs.acked_sacked > 0 && !self.recover_or_restore(info, w, rs) {
            let aggregation = self.ack_aggregation_cwnd();
            self.target_cwnd = self.inflight_plus(self.control_bw(), self.cwnd_gain, aggregation);
            let initial = if self.linux {
                10 * self.mss
            } else {
                self.initial_cwnd
            };
            if self.filled {
                let grown = if self.linux {
                    w.cwnd.saturating_add(rs.acked_sacked)
                } else {
                    // ns-3 adds in uint32_t: a cwnd left at an unset ssthresh
                    // (UINT32_MAX, `cwnd = ssthresh` on leaving recovery
                    // before STARTUP ended) wraps around to a few bytes.
                    (w.cwnd.min(u64::from(u32::MAX)) + rs.acked_sacked) & u64::from(u32::MAX)
                };
                w.cwnd = grown.min(self.target_cwnd);
            } else if w.cwnd < self.target_cwnd || self.delivered < initial {
                w.cwnd += rs.acked_sacked;
            }
            w.cwnd = w.cwnd.max(self.min_cwnd());
        }
        if self.mode == Mode::ProbeRtt {
            w.cwnd = w.cwnd.min(self.min_cwnd());
        }
    }
}

impl CongestionOps for Bbr {
    /// ns-3 `GetSsThresh` / Linux `bbr_ssthresh`: remember cwnd, leave
    /// ssthresh as it is (BBR sets it only on leaving STARTUP).
    fn ssthresh(&mut self, info: &ConnInfo, w: &Window, _bytes_in_flight: u64) -> u64 {
        self.save_cwnd(info.ca_state, w.cwnd);
        w.ssthresh
    }

    fn increase_window(&mut self, _info: &ConnInfo, _w: &mut Window, _segments_acked: u32) {}

    fn congestion_state_set(&mut self, info: &ConnInfo, w: &mut Window, new: CaState) {
        if !self.initialized {
            return;
        }
        match new {
            CaState::Loss => {
                if !self.linux {
                    // ns-3 SaveCwnd in CongestionStateSet(CA_LOSS); Linux saves
                    // only in bbr_ssthresh.
                    self.save_cwnd(info.ca_state, w.cwnd);
                }
                self.round_start = true;
                if self.linux {
                    // bbr_set_state(TCP_CA_Loss): a sample with one loss.
                    self.prev_ca_state = CaState::Loss;
                    self.full_bw = 0.0;
                    self.lt_sampling(info.now, self.mss, false);
                }
            }
            CaState::Recovery if !self.linux => {
                self.save_cwnd(info.ca_state, w.cwnd);
                w.cwnd = info.bytes_in_flight + self.last_acked_sacked.max(info.mss);
                self.packet_conservation = true;
            }
            _ => {}
        }
    }

    fn cwnd_event(&mut self, info: &ConnInfo, w: &mut Window, event: CwndEvent) {
        match event {
            CwndEvent::TxStart if !self.initialized => self.init(info, w),
            CwndEvent::TxStart if self.app_limited != 0 => {
                self.idle_restart = true;
                self.ack_epoch_time = info.now;
                self.ack_epoch_acked = 0;
                if self.mode == Mode::ProbeBw {
                    self.set_pacing_rate(info, w, 1.0);
                } else if self.mode == Mode::ProbeRtt
                    && self.probe_rtt_round_done
                    && self.probe_rtt_done.is_some_and(|d| info.now > d)
                {
                    self.min_rtt_stamp = info.now;
                    w.cwnd = w.cwnd.max(self.prior_cwnd);
                    self.exit_probe_rtt(info.now);
                }
            }
            CwndEvent::CompleteCwr if !self.linux => {
                self.packet_conservation = false;
                w.cwnd = w.cwnd.max(self.prior_cwnd);
            }
            _ => {}
        }
    }

    fn has_cong_control(&self) -> bool {
        true
    }

    fn on_ack_delivered(&mut self, bytes: u64) {
        self.last_acked_sacked = bytes;
    }

    fn cong_control(
        &mut self,
        info: &ConnInfo,
        w: &mut Window,
        rc: &RateConn,
        rs: &RateSample,
    ) -> CcAction {
        let mut act = CcAction::default();
        if !self.initialized {
            self.init(info, w);
        }
        self.delivered = rc.delivered;
        if let Some(r) = rs.rtt {
            self.last_rtt = Some(r);
        }
        // ns-3 UpdateModelAndState / Linux bbr_update_model.
        if self.linux {
            self.lt.lost += rs.lost;
        }
        self.update_bw(info.now, rs);
        self.update_ack_aggregation(info.now, w, rs);
        self.check_cycle_phase(info.now, rs);
        self.check_full_pipe(rs);
        self.check_drain(info, w);
        self.update_min_rtt(info.now, rs);
        self.check_probe_rtt(info, w, rs, &mut act);
        // ns-3 UpdateControlParameters / Linux bbr_main.
        self.set_pacing_rate(info, w, self.pacing_gain);
        self.set_cwnd(info, w, rs);
        act
    }

    fn pacing_rate(&self) -> Option<f64> {
        self.pacing_rate
    }

    fn set_rng(&mut self, rng: RngStream) {
        self.rng = rng;
    }
}

#[cfg(test)]
#[path = "bbr_tests.rs"]
mod tests;
