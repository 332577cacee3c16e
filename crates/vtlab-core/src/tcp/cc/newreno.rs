//! NewReno window laws, as ns-3's `TcpNewReno` (the V2G study's baseline).
//!
//! * Slow start (cwnd < ssthresh): +1 MSS per ACK that acknowledges new data,
//!   whatever the number of segments it covers (ns-3 behaviour; Linux adds the
//!   segment count). Leftover segments go to congestion avoidance.
//! * Congestion avoidance: +max(1, MSS²/cwnd) bytes once per ACK.
//! * ssthresh on loss: max(2·MSS, bytes_in_flight / 2) (RFC 5681 eq. 4).
//!
//! Recovery (fast retransmit, partial/full ACKs) is not here: it is the
//! sender's state machine, RFC 6582.

use super::{CongestionOps, ConnInfo, Window};

#[derive(Clone, Copy, Debug, Default)]
pub struct NewReno;

impl NewReno {
    /// Slow-start step; returns the segments left for congestion avoidance.
    pub fn slow_start(info: &ConnInfo, w: &mut Window, segments_acked: u32) -> u32 {
        if segments_acked >= 1 {
            w.cwnd += info.mss;
            segments_acked - 1
        } else {
            0
        }
    }

    pub fn congestion_avoidance(info: &ConnInfo, w: &mut Window, segments_acked: u32) {
        if segments_acked > 0 {
            let inc = (info.mss * info.mss / w.cwnd.max(1)).max(1);
            w.cwnd += inc;
        }
    }
}

impl CongestionOps for NewReno {
    fn ssthresh(&mut self, info: &ConnInfo, _w: &Window, bytes_in_flight: u64) -> u64 {
        (bytes_in_flight / 2).max(2 * info.mss)
    }

    fn increase_window(&mut self, info: &ConnInfo, w: &mut Window, mut segments_acked: u32) {
        if w.in_slow_start() {
            segments_acked = Self::slow_start(info, w, segments_acked);
        }
        if !w.in_slow_start() {
            Self::congestion_avoidance(info, w, segments_acked);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Time;
    use crate::tcp::CaState;

    fn info() -> ConnInfo {
        ConnInfo {
            now: Time::ZERO,
            mss: 1000,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            bytes_in_flight: 0,
            srtt: None,
            min_rtt: None,
            ca_state: CaState::Open,
        }
    }

    #[test]
    fn slow_start_adds_one_mss_per_ack() {
        let mut w = Window {
            cwnd: 10_000,
            ssthresh: u64::MAX,
        };
        NewReno.increase_window(&info(), &mut w, 2);
        assert_eq!(w.cwnd, 11_000);
    }

    #[test]
    fn slow_start_leftover_goes_to_avoidance_at_threshold() {
        // At 9000 with ssthresh 10000: SS brings cwnd to 10000, one segment
        // is left and CA adds 1000²/10000 = 100.
        let mut w = Window {
            cwnd: 9_000,
            ssthresh: 10_000,
        };
        NewReno.increase_window(&info(), &mut w, 2);
        assert_eq!(w.cwnd, 10_100);
    }

    #[test]
    fn avoidance_adds_mss_squared_over_cwnd_per_ack() {
        let mut w = Window {
            cwnd: 20_000,
            ssthresh: 10_000,
        };
        NewReno.increase_window(&info(), &mut w, 2);
        assert_eq!(w.cwnd, 20_050);
        // Never less than one byte.
        let mut w = Window {
            cwnd: 5_000_000,
            ssthresh: 10,
        };
        NewReno.increase_window(&info(), &mut w, 1);
        assert_eq!(w.cwnd, 5_000_001);
    }

    #[test]
    fn ssthresh_is_half_the_flight_with_a_floor() {
        let w = Window {
            cwnd: 50_000,
            ssthresh: 1,
        };
        assert_eq!(NewReno.ssthresh(&info(), &w, 30_000), 15_000);
        assert_eq!(NewReno.ssthresh(&info(), &w, 3_000), 2_000);
    }
}
