//! BBR's state machine: STARTUP, DRAIN, PROBE_BW (the pacing-gain cycle) and
//! PROBE_RTT, and the checks that move between them.

use super::{Bbr, Mode};
use crate::engine::{Duration, Time};
use crate::tcp::cc::{CcAction, ConnInfo, RateSample, Window};

/// The PROBE_BW pacing-gain cycle.
const PACING_GAIN_CYCLE: [f64; 8] = [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
/// cwnd gain in PROBE_BW.
const CWND_GAIN: f64 = 2.0;
/// Full-bandwidth detection: growth factor and rounds without it.
const FULL_BW_THRESH: f64 = 1.25;
const FULL_BW_CNT: u32 = 3;

impl Bbr {
    pub(super) fn enter_startup(&mut self) {
        self.mode = Mode::Startup;
        self.pacing_gain = self.high_gain;
        self.cwnd_gain = self.high_gain;
    }

    pub(super) fn enter_drain(&mut self) {
        self.mode = Mode::Drain;
        self.pacing_gain = self.b.drain_gain.unwrap_or(1.0 / self.high_gain);
        self.cwnd_gain = self.high_gain;
    }

    pub(super) fn enter_probe_bw(&mut self, now: Time) {
        self.mode = Mode::ProbeBw;
        self.cwnd_gain = CWND_GAIN;
        self.cycle_idx = if self.b.kernel_random_phase {
            // 7 − prandom_u32_max(7): 1..=7.
            7 - self.rng.uniform_int(0, 6) as usize
        } else {
            // GAIN_CYCLE_LENGTH − 1 − (int) U(0, 6): 2..=7.
            7 - (self.rng.uniform() * 6.0) as usize
        };
        self.advance_cycle_phase(now);
    }

    pub(super) fn enter_probe_rtt(&mut self) {
        self.mode = Mode::ProbeRtt;
        self.pacing_gain = 1.0;
        self.cwnd_gain = 1.0;
    }

    pub(super) fn exit_probe_rtt(&mut self, now: Time) {
        if self.filled {
            self.enter_probe_bw(now);
        } else {
            self.enter_startup();
        }
    }

    pub(super) fn advance_cycle_phase(&mut self, now: Time) {
        self.cycle_stamp = now;
        self.cycle_idx = (self.cycle_idx + 1) % PACING_GAIN_CYCLE.len();
        // Linux bbr_update_gains: gain 1 while using the policed rate.
        self.pacing_gain = if self.lt.use_bw {
            1.0
        } else {
            PACING_GAIN_CYCLE[self.cycle_idx]
        };
    }

    pub(super) fn check_cycle_phase(&mut self, now: Time, rs: &RateSample) {
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

    pub(super) fn check_full_pipe(&mut self, rs: &RateSample) {
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

    pub(super) fn check_drain(&mut self, info: &ConnInfo, w: &mut Window) {
        if self.mode == Mode::Startup && self.filled {
            self.enter_drain();
            w.ssthresh = self.inflight(1.0);
        }
        if self.mode == Mode::Drain && info.bytes_in_flight <= self.inflight(1.0) {
            self.enter_probe_bw(info.now);
        }
    }

    pub(super) fn check_probe_rtt(
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
            if self.b.probe_rtt_marks_app_limited {
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
        let delivered_some = if self.b.idle_restart_needs_positive_delivery {
            rs.delivered > 0
        } else {
            rs.delivered != 0
        };
        if delivered_some {
            self.idle_restart = false;
        }
    }
}
