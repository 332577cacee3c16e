//! BBR's controls: the pacing rate and cwnd from the model, packet
//! conservation in recovery and the restore after it.

use super::filter::MaxFilter;
use super::{Bbr, Mode, PACING_MARGIN};
use crate::engine::Duration;
use crate::tcp::cc::{ConnInfo, RateSample, Window};
use crate::tcp::state::CaState;

/// Minimum cwnd (`bbr_cwnd_min_target`, ns-3 `m_minPipeCwnd`), segments.
const MIN_CWND_SEGMENTS: u64 = 4;

impl Bbr {
    /// ns-3 `CongestionStateSet(CA_OPEN)` at establishment / Linux `bbr_init`.
    pub(super) fn init(&mut self, info: &ConnInfo, w: &mut Window) {
        self.initialized = true;
        self.mss = info.mss;
        self.initial_cwnd = w.cwnd;
        // ns-3 reads m_srtt (the handshake's sample at the SYN-ACK), Linux
        // tcp_min_rtt (the same single sample).
        self.min_rtt = if self.b.initial_min_rtt_from_srtt {
            info.srtt
        } else {
            info.min_rtt
        };
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
    pub(super) fn init_pacing_rate(&mut self, info: &ConnInfo, w: &Window) {
        if self.b.pacing_init_from_srtt {
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
            self.bw = MaxFilter::new(bw, 0, !self.b.minmax_running_max);
        }
    }

    pub(super) fn set_pacing_rate(&mut self, info: &ConnInfo, w: &Window, gain: f64) {
        let rate = gain * self.control_bw() * (1.0 - PACING_MARGIN);
        let rate = rate.min(4e9 / 8.0);
        let needs_srtt = self.b.pacing_init_from_srtt;
        if !self.has_seen_rtt && (info.min_rtt.is_some() && (!needs_srtt || info.srtt.is_some())) {
            self.init_pacing_rate(info, w);
        }
        if self.filled || self.pacing_rate.is_none_or(|r| rate > r) {
            self.pacing_rate = Some(rate);
        }
    }

    pub(super) fn min_cwnd(&self) -> u64 {
        MIN_CWND_SEGMENTS * self.mss
    }

    pub(super) fn save_cwnd(&mut self, ca_state: CaState, cwnd: u64) {
        let in_recovery = if self.b.recovery_from_previous_state {
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

    /// Packet conservation in recovery and the restore after it. Returns
    /// whether cwnd is settled (conservation holds it).
    pub(super) fn recover_or_restore(
        &mut self,
        info: &ConnInfo,
        w: &mut Window,
        rs: &RateSample,
    ) -> bool {
        if self.b.recovery_from_previous_state {
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

    pub(super) fn set_cwnd(&mut self, info: &ConnInfo, w: &mut Window, rs: &RateSample) {
        if rs.acked_sacked > 0 && !self.recover_or_restore(info, w, rs) {
            let aggregation = self.ack_aggregation_cwnd();
            self.target_cwnd = self.inflight_plus(self.control_bw(), self.cwnd_gain, aggregation);
            let initial = if self.b.startup_grows_until_ten_packets {
                10 * self.mss
            } else {
                self.initial_cwnd
            };
            if self.filled {
                let grown = if self.b.cwnd_u32 {
                    // ns-3 adds in uint32_t: a cwnd left at an unset ssthresh
                    // (UINT32_MAX, `cwnd = ssthresh` on leaving recovery
                    // before STARTUP ended) wraps around to a few bytes.
                    (w.cwnd.min(u64::from(u32::MAX)) + rs.acked_sacked) & u64::from(u32::MAX)
                } else {
                    w.cwnd.saturating_add(rs.acked_sacked)
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
