//! NewReno window laws (the V2G study's baseline and ISO 15118's mandate).
//!
//! Source: RFC 5681; ns-3 `tcp-congestion-ops.cc` (`TcpNewReno`); Linux
//! `tcp_cong.c` (`tcp_reno_cong_avoid`, `tcp_reno_ssthresh`).
//! * ns-3 profile: +1 MSS per ACK in slow start, +max(1, MSS²/cwnd) per ACK in
//!   congestion avoidance, ssthresh = max(2·MSS, bytes_in_flight/2).
//! * Linux profile: slow start by segments acked, `cong_avoid_ai(cwnd)`,
//!   ssthresh = max(cwnd/2, 2) segments.
//!
//! Recovery (fast retransmit, partial/full ACKs) is the sender's state machine.
//!
//! **NewReno-SC** (Park et al. 2019, §4.2, Algorithm 1, "Ssthresh Changed"):
//! the same controller with the ssthresh floor raised from 2 to k = 10 MSS,
//! ssthresh = max(FlightSize/2, k·MSS). Algorithm 1 states it for fast
//! retransmit; the study motivates it by NewReno's frequent timeouts, and its
//! ns-3 implementation point is `GetSsThresh`, which ns-3 calls on both fast
//! retransmit and timeout, so the floor applies to both here too.

use super::reno::{reno_increase, reno_ssthresh};
use super::{param, CongestionOps, ConnInfo, ParamSpec, Params, Profile, Window};
use crate::tcp::CaState;

/// Parameters of NewReno-SC.
pub const SC_PARAMS: &[ParamSpec] = &[ParamSpec {
    name: "k",
    default_ns3: 10.0,
    default_linux: 10.0,
    default_ns2: None,
    min: 2.0,
    max: 10_000.0,
    doc: "ssthresh floor after a loss, in segments (RFC 5681: 2; Algorithm 1: 10)",
    integer: true,
    at_most: None,
}];

#[derive(Clone, Debug)]
pub struct NewReno {
    profile: Profile,
    cwnd_cnt: u64,
    /// Lower bound of ssthresh after a loss, in segments (2 for NewReno).
    min_ssthresh_segments: u64,
}

impl NewReno {
    pub fn new(profile: Profile) -> Self {
        NewReno {
            profile,
            cwnd_cnt: 0,
            min_ssthresh_segments: 2,
        }
    }

    /// NewReno-SC with the floor `k` from `params`.
    pub fn ssthresh_changed(params: &Params, profile: Profile) -> Self {
        NewReno {
            min_ssthresh_segments: param(SC_PARAMS, params, "k", profile) as u64,
            ..Self::new(profile)
        }
    }
}

impl CongestionOps for NewReno {
    fn ssthresh(&mut self, info: &ConnInfo, w: &Window, bytes_in_flight: u64) -> u64 {
        reno_ssthresh(self.profile, info, w, bytes_in_flight)
            .max(self.min_ssthresh_segments * info.mss)
    }

    fn increase_window(&mut self, info: &ConnInfo, w: &mut Window, segments_acked: u32) {
        reno_increase(self.profile, info, w, &mut self.cwnd_cnt, segments_acked);
    }

    fn congestion_state_set(&mut self, _info: &ConnInfo, _w: &mut Window, new: CaState) {
        // Linux clears the additive-increase credit when a reduction starts
        // (tcp_init_cwnd_reduction, tcp_enter_loss).
        if self.profile == Profile::Linux && matches!(new, CaState::Recovery | CaState::Loss) {
            self.cwnd_cnt = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::reno::test_support::{info, window};
    use super::*;

    #[test]
    fn ns3_slow_start_adds_one_mss_per_ack() {
        let mut w = window(10, u64::MAX);
        NewReno::new(Profile::Ns3).increase_window(&info(Profile::Ns3), &mut w, 2);
        assert_eq!(w.cwnd, 11_000);
    }

    #[test]
    fn ns3_slow_start_leftover_goes_to_avoidance_at_threshold() {
        // At 9 segments with ssthresh 10: SS brings cwnd to 10, one segment is
        // left and CA adds 1000²/10000 = 100 bytes.
        let mut w = window(9, 10);
        NewReno::new(Profile::Ns3).increase_window(&info(Profile::Ns3), &mut w, 2);
        assert_eq!(w.cwnd, 10_100);
    }

    #[test]
    fn ns3_avoidance_adds_mss_squared_over_cwnd_per_ack() {
        let mut w = window(20, 10);
        NewReno::new(Profile::Ns3).increase_window(&info(Profile::Ns3), &mut w, 2);
        assert_eq!(w.cwnd, 20_050);
        let mut w = Window {
            cwnd: 5_000_000,
            ssthresh: 10,
        };
        NewReno::new(Profile::Ns3).increase_window(&info(Profile::Ns3), &mut w, 1);
        assert_eq!(w.cwnd, 5_000_001, "never less than one byte");
    }

    #[test]
    fn linux_avoidance_grows_one_segment_per_window_of_acks() {
        let mut cc = NewReno::new(Profile::Linux);
        let i = info(Profile::Linux);
        let mut w = window(20, 10);
        // Delayed ACKs (2 segments each): 10 ACKs = one window = +1 segment,
        // twice ns-3's per-ACK rate.
        for _ in 0..10 {
            cc.increase_window(&i, &mut w, 2);
        }
        assert_eq!(w.cwnd, 21_000);
    }

    #[test]
    fn sc_floors_ssthresh_at_k_segments() {
        // Flight 30 segments: NewReno 15, SC max(15, 10) = 15; flight 8: 4 vs 10.
        let mut sc = NewReno::ssthresh_changed(&Params::new(), Profile::Ns3);
        let w = window(50, 1);
        assert_eq!(sc.ssthresh(&info(Profile::Ns3), &w, 30_000), 15_000);
        assert_eq!(sc.ssthresh(&info(Profile::Ns3), &w, 8_000), 10_000);
        let mut plain = NewReno::new(Profile::Ns3);
        assert_eq!(plain.ssthresh(&info(Profile::Ns3), &w, 8_000), 4_000);
        // k is a parameter; Linux computes from cwnd (50/2 = 25 > 20).
        let p = Params::from([("k".to_string(), 20.0)]);
        let mut sc20 = NewReno::ssthresh_changed(&p, Profile::Linux);
        assert_eq!(
            sc20.ssthresh(&info(Profile::Linux), &window(30, 1), 0),
            20_000
        );
        assert_eq!(sc20.ssthresh(&info(Profile::Linux), &w, 0), 25_000);
    }

    #[test]
    fn ssthresh_is_half_with_a_floor() {
        let w = window(50, 1);
        assert_eq!(
            NewReno::new(Profile::Ns3).ssthresh(&info(Profile::Ns3), &w, 30_000),
            15_000
        );
        assert_eq!(
            NewReno::new(Profile::Ns3).ssthresh(&info(Profile::Ns3), &w, 3_000),
            2_000
        );
        assert_eq!(
            NewReno::new(Profile::Linux).ssthresh(&info(Profile::Linux), &w, 3_000),
            25_000
        );
    }
}
