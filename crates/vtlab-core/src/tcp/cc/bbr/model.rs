//! BBR's model of the path: the bottleneck bandwidth (max filter over
//! rounds), the round-trip propagation delay (min RTT over a window), the
//! ACK-aggregation allowance, and the inflight they imply.

use super::{Bbr, Mode};
use crate::engine::Time;
use crate::tcp::cc::{RateSample, Window};

impl Bbr {
    /// The bandwidth that sets pacing and cwnd (Linux `bbr_bw`: the
    /// long-term rate while policed, else the max filter).
    pub(super) fn control_bw(&self) -> f64 {
        if self.lt.use_bw {
            self.lt.bw
        } else {
            self.bw.best()
        }
    }

    pub(super) fn update_bw(&mut self, now: Time, rs: &RateSample) {
        if self.b.round_start_cleared_every_ack {
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
        if self.b.long_term_sampling {
            self.lt_sampling(now, rs.lost, rs.is_app_limited);
        }
        let bw = if self.b.bw_sample_from_interval {
            rs.delivered as f64 / rs.interval.as_secs_f64()
        } else {
            rs.delivery_rate
        };
        if !rs.is_app_limited || bw >= self.bw.best() {
            self.bw.update(bw, self.round_count, self.bw_rounds);
        }
    }

    pub(super) fn update_ack_aggregation(&mut self, now: Time, w: &Window, rs: &RateSample) {
        let us_epoch = self.b.aggregation_epoch_us;
        if rs.acked_sacked == 0 || rs.delivered < 0 || (us_epoch && rs.interval.0 == 0) {
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
        let (elapsed, reset_thresh) = if us_epoch {
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

    pub(super) fn ack_aggregation_cwnd(&self) -> u64 {
        if !self.filled {
            return 0;
        }
        let max_aggr = (self.control_bw() * 0.1) as u64;
        self.extra_acked[0].max(self.extra_acked[1]).min(max_aggr)
    }

    pub(super) fn update_min_rtt(&mut self, now: Time, rs: &RateSample) {
        self.min_rtt_expired = now > self.min_rtt_stamp + self.min_rtt_win;
        let sample = if self.b.min_rtt_from_ack_sample {
            rs.rtt
        } else {
            self.last_rtt
        };
        if let Some(r) = sample.filter(|r| r.0 > 0) {
            let better = self.min_rtt.is_none_or(|m| r <= m);
            if better || self.min_rtt_expired {
                self.min_rtt = Some(r);
                self.min_rtt_stamp = now;
            }
        }
    }

    /// Linux `bbr_tso_segs_goal` for the current pacing rate: about 1 ms of
    /// data (`sk_pacing_shift` 10), at least 2 segments (1 below 1.2 Mbit/s).
    pub(super) fn tso_segs_goal(&self) -> u64 {
        let rate = self.pacing_rate.unwrap_or(0.0);
        let min_segs = if rate < 1_200_000.0 / 8.0 { 1 } else { 2 };
        let bytes = (rate / 1024.0).min(65_536.0 - 1.0 - 320.0) as u64;
        (bytes / self.mss.max(1)).max(min_segs).min(127)
    }

    /// The inflight for `gain` × the estimated BDP plus the send-quantum
    /// allowance (ns-3 `InFlight`; Linux `bbr_inflight` = `bbr_bdp` +
    /// `bbr_quantization_budget`), bytes.
    pub(super) fn inflight(&self, gain: f64) -> u64 {
        self.inflight_at(self.bw.best(), gain)
    }

    pub(super) fn inflight_at(&self, bw: f64, gain: f64) -> u64 {
        self.inflight_plus(bw, gain, 0)
    }

    /// `inflight_at` with `extra` bytes (the ACK-aggregation allowance) added
    /// to the BDP: Linux `bbr_set_cwnd` adds it before the quantisation
    /// budget (and its rounding to an even count), ns-3 after `InFlight`.
    pub(super) fn inflight_plus(&self, bw: f64, gain: f64, extra: u64) -> u64 {
        let cycle0 = self.mode == Mode::ProbeBw && self.cycle_idx == 0;
        if self.b.packet_units {
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
}
