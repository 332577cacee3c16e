//! Long-term (policer) bandwidth sampling, Linux only (`bbr_lt_bw_sampling`;
//! ns-3.44 has none): see the module documentation of [`super`].

use super::{Bbr, Mode, PACING_MARGIN};
use crate::engine::Time;

/// Linux long-term sampling: interval bounds (rounds), loss-rate threshold,
/// rate agreement (ratio, bytes/s) and how long the policed rate is used.
const LT_INTVL_MIN_RTTS: u32 = 4;
const LT_LOSS_THRESH: f64 = 50.0 / 256.0;
const LT_BW_RATIO: f64 = 1.0 / 8.0;
const LT_BW_DIFF: f64 = 4000.0 / 8.0;
const LT_BW_MAX_RTTS: u32 = 48;

#[derive(Clone, Copy, Debug, Default)]
pub(super) struct LongTerm {
    pub(super) is_sampling: bool,
    pub(super) use_bw: bool,
    pub(super) bw: f64,
    pub(super) rtt_cnt: u32,
    pub(super) last_stamp_ms: u64,
    pub(super) last_delivered: u64,
    pub(super) last_lost: u64,
    /// Bytes marked lost so far (Linux `tp->lost`).
    pub(super) lost: u64,
}

impl Bbr {
    pub(super) fn lt_reset_interval(&mut self, now: Time) {
        self.lt.last_stamp_ms = now.0 / 1_000_000;
        self.lt.last_delivered = self.delivered;
        self.lt.last_lost = self.lt.lost;
        self.lt.rtt_cnt = 0;
    }

    pub(super) fn lt_reset(&mut self, now: Time) {
        self.lt.bw = 0.0;
        self.lt.use_bw = false;
        self.lt.is_sampling = false;
        self.lt_reset_interval(now);
    }

    pub(super) fn lt_interval_done(&mut self, now: Time, bw: f64) {
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
    pub(super) fn lt_sampling(&mut self, now: Time, losses: u64, app_limited: bool) {
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
}
