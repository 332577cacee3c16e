//! Reno growth shared by most window laws, in both implementation profiles.
//!
//! * ns-3 (`TcpNewReno::SlowStart` / `CongestionAvoidance`): slow start adds
//!   one MSS per ACK whatever it covers and returns the rest; congestion
//!   avoidance adds max(1 B, MSS²/cwnd) once per ACK.
//! * Linux (`tcp_slow_start` / `tcp_cong_avoid_ai`), in whole segments: slow
//!   start adds the segments acked, capped at ssthresh, and returns the rest;
//!   additive increase keeps a credit counter `cwnd_cnt` and adds one segment
//!   each time it reaches `w`.
//! * ns-2 (`TcpAgent::opencwnd` with `wnd_option_` 1, `increase_num_` 1;
//!   `cwnd_` a double, in packets): each new ACK adds one packet below
//!   ssthresh, else 1/cwnd packets, whatever the ACK covers; vtlab adds
//!   MSS²/cwnd bytes and carries the remainder, so that no fraction of a
//!   byte is lost. `slowdown`'s ssthresh is ⌊min(cwnd_, window_)/2⌋ packets,
//!   at least 2 (`precision_reduce_`: halving the double window).

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
        Profile::Ns3 | Profile::Ns2 => {
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

/// ns-2 `TcpAgent::opencwnd` above ssthresh: cwnd_ += 1/cwnd_ packets per
/// ACK, as MSS²/cwnd bytes with the remainder (in bytes·bytes/cwnd) carried
/// in `carry`.
pub fn ns2_congestion_avoidance(info: &ConnInfo, w: &mut Window, carry: &mut u64) {
    let cwnd = w.cwnd.max(1);
    let num = info.mss * info.mss + *carry;
    w.cwnd += num / cwnd;
    *carry = num % cwnd;
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
        Profile::Ns2 if acked == 0 => {}
        Profile::Ns2 => {
            if w.in_slow_start() {
                w.cwnd += info.mss;
            } else {
                ns2_congestion_avoidance(info, w, cwnd_cnt);
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

/// Reno ssthresh: ns-3 max(2·MSS, bytes_in_flight/2); Linux max(cwnd/2, 2)
/// segments; ns-2 max(⌊min(cwnd, rwnd)/2⌋, 2) packets (`slowdown`).
pub fn reno_ssthresh(profile: Profile, info: &ConnInfo, w: &Window, bytes_in_flight: u64) -> u64 {
    match profile {
        Profile::Ns3 => (bytes_in_flight / 2).max(2 * info.mss),
        Profile::Linux => (cwnd_segments(info, w) / 2).max(2) * info.mss,
        Profile::Ns2 => (w.cwnd.min(info.rwnd) / (2 * info.mss)).max(2) * info.mss,
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
            rwnd: u64::MAX,
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
    #[test]
    fn ns2_opens_one_packet_per_ack_in_slow_start_whatever_it_covers() {
        // opencwnd: cwnd_ < ssthresh_ → cwnd_ += 1, once per new ACK; a
        // delayed ACK covering 2 packets adds 1 (ns-3 also adds 1 here,
        // Linux 2). From 4 packets with ssthresh 20: 5 packets.
        let i = info(Profile::Ns2);
        let mut w = window(4, 20);
        let mut carry = 0;
        reno_increase(Profile::Ns2, &i, &mut w, &mut carry, 2);
        assert_eq!(w.cwnd, 5_000);
    }

    #[test]
    fn ns2_congestion_avoidance_adds_one_over_cwnd_and_keeps_the_fraction() {
        // opencwnd, wnd_option_ 1: cwnd_ += increase_num_/cwnd_ = 1/cwnd_.
        // MSS 1000 B, cwnd 3 packets (3000 B) ≥ ssthresh 2: each ACK adds
        // 1/3 packet = 333⅓ B. Three ACKs add exactly 1000 B in ns-2's
        // arithmetic (1/3 + 1/3.111 + 1/3.218 would be its exact double
        // sequence; vtlab: 10⁶/3000 = 333 r 1000, (10⁶+1000)/3333 = 300 r
        // 1100, (10⁶+1100)/3633 = 275 r 2025) → 3000 + 333 + 300 + 275 = 3908 B.
        // ns-2's doubles: 3 + 1/3 = 3.3333, + 1/3.3333 = 3.6333,
        // + 1/3.6333 = 3.9086 packets = 3908.6 B: the same to a byte.
        let i = info(Profile::Ns2);
        let mut w = window(3, 2);
        let mut carry = 0;
        for _ in 0..3 {
            reno_increase(Profile::Ns2, &i, &mut w, &mut carry, 1);
        }
        assert_eq!(w.cwnd, 3_908);
        // An ACK that acknowledges nothing new opens nothing.
        reno_increase(Profile::Ns2, &i, &mut w, &mut carry, 0);
        assert_eq!(w.cwnd, 3_908);
    }

    #[test]
    fn ns2_ssthresh_halves_the_window_capped_by_window_() {
        // slowdown(CLOSE_SSTHRESH_HALF): ssthresh_ = int(windowd()/2),
        // windowd() = min(cwnd_, wnd_). cwnd 45 packets, window_ 20 →
        // ⌊20/2⌋ = 10 packets whatever the flight (30 000 B given).
        let mut i = info(Profile::Ns2);
        i.rwnd = 20_000;
        assert_eq!(
            reno_ssthresh(Profile::Ns2, &i, &window(45, 100), 30_000),
            10_000
        );
        // cwnd 13.7 packets below window_: ⌊6.85⌋ = 6 packets.
        let w = Window {
            cwnd: 13_700,
            ssthresh: 100_000,
        };
        assert_eq!(reno_ssthresh(Profile::Ns2, &i, &w, 0), 6_000);
        // cwnd 3 packets: ⌊1.5⌋ = 1, raised to the floor of 2 packets.
        assert_eq!(reno_ssthresh(Profile::Ns2, &i, &window(3, 100), 0), 2_000);
    }
}
