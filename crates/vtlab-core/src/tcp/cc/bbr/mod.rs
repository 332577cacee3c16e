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
//! them (the switches of [`BbrBehaviour`]):
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
//!
//! Files: [`behaviour`] the profile switches, [`filter`] the windowed max filter, [`model`] the path model
//! (bandwidth, min RTT, ACK aggregation, BDP), [`modes`] the state machine
//! (STARTUP, DRAIN, PROBE_BW, PROBE_RTT), [`control`] pacing and cwnd,
//! [`long_term`] the Linux policer detection; the hooks below run them in
//! the order of ns-3 `CongControl` / Linux `bbr_main`.

mod behaviour;
mod control;
mod filter;
mod long_term;
mod model;
mod modes;

use super::{
    param, CcAction, CongestionOps, ConnInfo, CwndEvent, ParamSpec, Params, Profile,
    ProfileBehaviour, RateConn, RateSample, Window,
};
use crate::engine::{Duration, RngStream, Time};
use crate::tcp::state::CaState;
use behaviour::BbrBehaviour;
use filter::MaxFilter;
use long_term::LongTerm;

pub const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "high_gain",
        default_ns3: 2.89,
        default_linux: 739.0 / 256.0,
        default_ns2: None,
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
        default_ns2: None,
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
        default_ns2: None,
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
        default_ns2: None,
        min: 0.0,
        max: 10_000.0,
        doc: "time held at the minimum cwnd in PROBE_RTT (ms)",
        integer: true,
        at_most: None,
    },
];

/// Pacing margin: BBR paces 1 % below its bandwidth estimate.
const PACING_MARGIN: f64 = 0.01;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

#[derive(Clone, Debug)]
pub struct Bbr {
    b: BbrBehaviour,
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

impl Bbr {
    pub fn new(params: &Params, profile: Profile) -> Self {
        let ms = |name| Duration::from_millis(param(PARAMS, params, name, profile) as u64);
        let b = BbrBehaviour::of(profile);
        Bbr {
            b,
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
            bw: MaxFilter::new(0.0, 0, !b.minmax_running_max),
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
                if !self.b.recovery_from_previous_state {
                    // ns-3 SaveCwnd in CongestionStateSet(CA_LOSS); Linux saves
                    // only in bbr_ssthresh.
                    self.save_cwnd(info.ca_state, w.cwnd);
                }
                self.round_start = true;
                // Linux bbr_set_state(TCP_CA_Loss): a sample with one loss.
                if self.b.recovery_from_previous_state {
                    self.prev_ca_state = CaState::Loss;
                }
                if self.b.timeout_clears_full_bw {
                    self.full_bw = 0.0;
                }
                if self.b.long_term_sampling {
                    self.lt_sampling(info.now, self.mss, false);
                }
            }
            CaState::Recovery if !self.b.recovery_from_previous_state => {
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
            CwndEvent::CompleteCwr if !self.b.recovery_from_previous_state => {
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
        if self.b.long_term_sampling {
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
mod tests;
