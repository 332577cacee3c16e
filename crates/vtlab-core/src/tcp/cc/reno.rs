//! Reno growth shared by most window laws, in both implementation profiles.
//!
//! * ns-3 (`TcpNewReno::SlowStart` / `CongestionAvoidance`): slow start adds
//!   one MSS per ACK whatever it covers and returns the rest; congestion
//!   avoidance adds max(1 B, MSS²/cwnd) once per ACK.
//! * Linux (`tcp_slow_start` / `tcp_cong_avoid_ai`), in whole segments: slow
//!   start adds the segments acked, capped at ssthresh, and returns the rest;
//!   additive increase keeps a credit counter `cwnd_cnt` and adds one segment
//!   each time it reaches `w`.

use super::{ConnInfo, Profile, Window};

/// cwnd in whole segments (Linux arithmetic).
pub fn cwnd_segments(info: &ConnInfo, w: &Window) -> u64 {
    w.cwnd / info.mss
}

/// ssthresh in whole segments (saturating for "unlimited").
pub fn ssthresh_segments(info: &ConnInfo, w: &Window) -> u64 {
    w.ssthresh / info.mss
}

/// Slow-start step; returns the segments left over for congestion avoidance.
pub fn slow_start(profile: Profile, info: &ConnInfo, w: &mut Window, acked: u32) -> u32 {
    match profile {
        Profile::Ns3 => {
            if acked >= 1 {
                w.cwnd += info.mss;
                acked - 1
            } else {
                0
            }
        }
        Profile::Linux => {
            let cwnd = cwnd_segments(info, w);
            let new = (cwnd + u64::from(acked))
                .min(ssthresh_segments(info, w))
                .max(cwnd);
            w.cwnd = new * info.mss;
            acked - (new - cwnd) as u32
        }
    }
}

/// Linux `tcp_cong_avoid_ai`: cwnd grows by `acked / w` segments, with the
/// fractional credit kept in `cwnd_cnt`.
pub fn cong_avoid_ai(info: &ConnInfo, w: &mut Window, cwnd_cnt: &mut u64, w_seg: u64, acked: u32) {
    let w_seg = w_seg.max(1);
    let mut cwnd = cwnd_segments(info, w);
    if *cwnd_cnt >= w_seg {
        *cwnd_cnt = 0;
        cwnd += 1;
    }
    *cwnd_cnt += u64::from(acked);
    if *cwnd_cnt >= w_seg {
        let delta = *cwnd_cnt / w_seg;
        *cwnd_cnt -= delta * w_seg;
        cwnd += delta;
    }
    w.cwnd = cwnd * info.mss;
}

/// ns-3 `TcpNewReno::CongestionAvoidance`: max(1 B, MSS²/cwnd) once per ACK.
pub fn ns3_congestion_avoidance(info: &ConnInfo, w: &mut Window, acked: u32) {
    if acked > 0 {
        w.cwnd += (info.mss * info.mss / w.cwnd.max(1)).max(1);
    }
}

/// Reno slow start then congestion avoidance (ns-3 `IncreaseWindow`, Linux
/// `tcp_reno_cong_avoid`).
pub fn reno_increase(
    profile: Profile,
    info: &ConnInfo,
    w: &mut Window,
    cwnd_cnt: &mut u64,
    acked: u32,
) {
    match profile {
        Profile::Ns3 => {
            let mut acked = acked;
            if w.in_slow_start() {
                acked = slow_start(profile, info, w, acked);
            }
            if !w.in_slow_start() {
                ns3_congestion_avoidance(info, w, acked);
            }
        }
        Profile::Linux => {
            let mut acked = acked;
            if w.in_slow_start() {
                acked = slow_start(profile, info, w, acked);
                if acked == 0 {
                    return;
                }
            }
            let cwnd = cwnd_segments(info, w);
            cong_avoid_ai(info, w, cwnd_cnt, cwnd, acked);
        }
    }
}

/// Reno ssthresh: ns-3 max(2·MSS, bytes_in_flight/2); Linux max(cwnd/2, 2) segments.
pub fn reno_ssthresh(profile: Profile, info: &ConnInfo, w: &Window, bytes_in_flight: u64) -> u64 {
    match profile {
        Profile::Ns3 => (bytes_in_flight / 2).max(2 * info.mss),
        Profile::Linux => (cwnd_segments(info, w) / 2).max(2) * info.mss,
    }
}

#[cfg(test)]
pub(crate) mod test_support {
    use super::*;
    use crate::engine::Time;
    use crate::tcp::CaState;

    /// A connection view with MSS 1000 B and everything else neutral.
    pub fn info(profile: Profile) -> ConnInfo {
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
            profile,
        }
    }

    pub fn window(cwnd_segments: u64, ssthresh_segments: u64) -> Window {
        Window {
            cwnd: cwnd_segments * 1000,
            ssthresh: ssthresh_segments.saturating_mul(1000),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::test_support::{info, window};
    use super::*;

    #[test]
    fn linux_slow_start_adds_acked_segments_capped_at_ssthresh() {
        let i = info(Profile::Linux);
        let mut w = window(10, 11);
        assert_eq!(slow_start(Profile::Linux, &i, &mut w, 3), 2);
        assert_eq!(w.cwnd, 11_000);
        let mut w = window(10, u64::MAX);
        assert_eq!(slow_start(Profile::Linux, &i, &mut w, 2), 0);
        assert_eq!(w.cwnd, 12_000);
    }

    #[test]
    fn linux_additive_increase_keeps_credit() {
        let i = info(Profile::Linux);
        let mut w = window(10, 5);
        let mut cnt = 0;
        // 10 segments acked in twos: +1 segment after the fifth ACK, credit 0.
        for _ in 0..5 {
            cong_avoid_ai(&i, &mut w, &mut cnt, 10, 2);
        }
        assert_eq!(w.cwnd, 11_000);
        assert_eq!(cnt, 0);
        // A large ACK adds several segments at once and keeps the remainder.
        cong_avoid_ai(&i, &mut w, &mut cnt, 10, 25);
        assert_eq!(w.cwnd, 13_000);
        assert_eq!(cnt, 5);
    }

    #[test]
    fn reno_ssthresh_per_profile() {
        let w = window(40, 100);
        assert_eq!(
            reno_ssthresh(Profile::Ns3, &info(Profile::Ns3), &w, 30_000),
            15_000
        );
        assert_eq!(
            reno_ssthresh(Profile::Linux, &info(Profile::Linux), &w, 30_000),
            20_000
        );
        assert_eq!(
            reno_ssthresh(Profile::Linux, &info(Profile::Linux), &window(3, 9), 0),
            2_000
        );
    }
}
