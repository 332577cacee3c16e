//! Scalable TCP: a fixed increase per ACK and a gentle fixed decrease, so the
//! recovery time after a loss does not grow with the window
//! (docs/congestion-control.md, '`scalable`').
//!
//! Sources: T. Kelly, "Scalable TCP: Improving Performance in Highspeed Wide
//! Area Networks", CCR 33(2), 2003; Linux `net/ipv4/tcp_scalable.c`; ns-3
//! `src/internet/model/tcp-scalable.cc`.
//!
//! Constants: additive-increase count `ai` (one segment per `min(cwnd, ai)`
//! segments acked, i.e. +1/ai per ACK for large windows): Linux 100
//! (`TCP_SCALABLE_AI_CNT`), ns-3 **50** (`AIFactor`); multiplicative
//! decrease `md` = 1/8 in both (Linux `cwnd >> 3`, ns-3 `MDFactor` 0.125).
//!
//! Profile differences (the switches of [`ScalableBehaviour`]):
//! * Linux: slow start by segments acked, the leftover to
//!   `cong_avoid_ai(min(cwnd, ai))` (credit remainder kept);
//!   ssthresh = max(cwnd − ⌊cwnd·md⌋, 2) segments.
//! * ns-3: NewReno slow start (+1 MSS per ACK, leftover to avoidance);
//!   avoidance like `cong_avoid_ai` but the counter is **zeroed** (not
//!   reduced) after a multi-segment step; ssthresh from bytes in flight:
//!   `max(2, ⌊flight/MSS⌋·(1 − md))` segments.

use super::reno::{cong_avoid_ai, cwnd_segments, slow_start};
use super::{param, CongestionOps, ConnInfo, ParamSpec, Params, Profile, ProfileBehaviour, Window};

pub const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "ai",
        default_ns3: 50.0,
        default_linux: 100.0,
        default_ns2: None,
        min: 1.0,
        max: 100_000.0,
        doc: "additive-increase count: cwnd grows by one segment per min(cwnd, ai) segments acked",
        integer: true,
        at_most: None,
    },
    ParamSpec {
        name: "md",
        default_ns3: 0.125,
        default_linux: 0.125,
        default_ns2: None,
        min: 0.001,
        max: 0.999,
        doc: "multiplicative decrease on loss: ssthresh = cwnd·(1 − md)",
        integer: false,
        at_most: None,
    },
];

/// Where Scalable follows ns-3 (`tcp-scalable.cc`) or Linux
/// (`tcp_scalable.c`); see the module documentation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScalableBehaviour {
    /// Avoidance as ns-3 `TcpScalable::CongestionAvoidance`, reached after
    /// the NewReno slow start with whatever is left: the counter is zeroed
    /// (not reduced) after a multi-segment step. Linux:
    /// `cong_avoid_ai(min(cwnd, ai))` with the credit remainder kept, after
    /// slow start only with segments left.
    pub credit_zeroed_after_step: bool,
    /// `ssthresh = max(2, ⌊flight/MSS⌋·(1 − md))` segments from bytes in
    /// flight (ns-3); Linux `max(cwnd − ⌊cwnd·md⌋, 2)` segments.
    pub ssthresh_from_flight: bool,
}

impl ProfileBehaviour for ScalableBehaviour {
    const NS3: Self = ScalableBehaviour {
        credit_zeroed_after_step: true,
        ssthresh_from_flight: true,
    };
    const LINUX: Self = ScalableBehaviour {
        credit_zeroed_after_step: false,
        ssthresh_from_flight: false,
    };
}

#[derive(Clone, Debug)]
pub struct Scalable {
    b: ScalableBehaviour,
    /// For the Reno slow start (reno.rs).
    profile: Profile,
    ai: u64,
    md: f64,
    /// Linux `snd_cwnd_cnt` / ns-3 `m_ackCnt`.
    cnt: u64,
}

impl Scalable {
    pub fn new(params: &Params, profile: Profile) -> Self {
        Scalable {
            b: ScalableBehaviour::of(profile),
            profile,
            ai: param(PARAMS, params, "ai", profile).round().max(1.0) as u64,
            md: param(PARAMS, params, "md", profile),
            cnt: 0,
        }
    }
}

/// ns-3 `TcpScalable::CongestionAvoidance` with additive-increase factor `ai`
/// and counter `ack_cnt` (also YeAH's fast mode under the ns-3 profile).
pub fn ns3_scalable_avoidance(
    info: &ConnInfo,
    w: &mut Window,
    ack_cnt: &mut u64,
    ai: u64,
    acked: u32,
) {
    let old = w.cwnd / info.mss;
    let mut seg = old;
    let step = seg.min(ai).max(1);
    if *ack_cnt >= step {
        *ack_cnt = 0;
        seg += 1;
    }
    *ack_cnt += u64::from(acked);
    if *ack_cnt >= step {
        seg += *ack_cnt / step;
        *ack_cnt = 0;
    }
    if seg != old {
        w.cwnd = seg * info.mss;
    }
}

impl CongestionOps for Scalable {
    fn ssthresh(&mut self, info: &ConnInfo, w: &Window, bytes_in_flight: u64) -> u64 {
        if self.b.ssthresh_from_flight {
            let seg = bytes_in_flight / info.mss;
            ((seg as f64 * (1.0 - self.md)).max(2.0) as u64) * info.mss
        } else {
            let cwnd = cwnd_segments(info, w);
            let cut = (cwnd as f64 * self.md) as u64;
            (cwnd - cut).max(2) * info.mss
        }
    }

    fn increase_window(&mut self, info: &ConnInfo, w: &mut Window, segments_acked: u32) {
        let mut acked = segments_acked;
        if self.b.credit_zeroed_after_step {
            if w.in_slow_start() {
                acked = slow_start(self.profile, info, w, acked);
            }
            if !w.in_slow_start() {
                ns3_scalable_avoidance(info, w, &mut self.cnt, self.ai, acked);
            }
        } else {
            if w.in_slow_start() {
                acked = slow_start(self.profile, info, w, acked);
                if acked == 0 {
                    return;
                }
            }
            let step = cwnd_segments(info, w).min(self.ai);
            cong_avoid_ai(info, w, &mut self.cnt, step, acked);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::reno::test_support::{info, window};
    use super::*;

    fn scalable(p: Profile) -> Scalable {
        Scalable::new(&Params::new(), p)
    }

    #[test]
    fn defaults_per_profile() {
        assert_eq!(scalable(Profile::Linux).ai, 100);
        assert_eq!(scalable(Profile::Ns3).ai, 50);
    }

    #[test]
    fn linux_increase_one_segment_per_100_acked_at_large_windows() {
        let i = info(Profile::Linux);
        let mut cc = scalable(Profile::Linux);
        // cwnd 500 > 100: step min(500, 100) = 100; 50 ACKs of 2 → +1.
        let mut w = window(500, 100);
        for _ in 0..49 {
            cc.increase_window(&i, &mut w, 2);
        }
        assert_eq!((w.cwnd, cc.cnt), (500_000, 98));
        cc.increase_window(&i, &mut w, 2);
        assert_eq!((w.cwnd, cc.cnt), (501_000, 0));
        // A stretch ACK of 250: +2, remainder 50 kept.
        cc.increase_window(&i, &mut w, 250);
        assert_eq!((w.cwnd, cc.cnt), (503_000, 50));
        // Small windows are Reno: cwnd 20, step 20.
        let mut cc = scalable(Profile::Linux);
        let mut w = window(20, 10);
        cc.increase_window(&i, &mut w, 20);
        assert_eq!(w.cwnd, 21_000);
    }

    #[test]
    fn linux_slow_start_leftover_to_avoidance() {
        let i = info(Profile::Linux);
        let mut cc = scalable(Profile::Linux);
        let mut w = window(9, 10);
        cc.increase_window(&i, &mut w, 4);
        // SS to 10 (1 used), 3 left: credit 3 < min(10, 100).
        assert_eq!((w.cwnd, cc.cnt), (10_000, 3));
    }

    #[test]
    fn ns3_increase_with_ai_50_and_zeroed_counter() {
        let i = info(Profile::Ns3);
        let mut cc = scalable(Profile::Ns3);
        // cwnd 500: step min(500, 50) = 50; 25 ACKs of 2 → +1.
        let mut w = window(500, 100);
        for _ in 0..25 {
            cc.increase_window(&i, &mut w, 2);
        }
        assert_eq!((w.cwnd, cc.cnt), (501_000, 0));
        // A stretch ACK of 120: 120/50 = +2, counter zeroed (Linux keeps 20).
        cc.increase_window(&i, &mut w, 120);
        assert_eq!((w.cwnd, cc.cnt), (503_000, 0));
        // Exactly at the step: 49 then 1 more → +1 on the ACK that reaches 50.
        let mut cc = scalable(Profile::Ns3);
        let mut w = window(500, 100);
        cc.increase_window(&i, &mut w, 49);
        assert_eq!((w.cwnd, cc.cnt), (500_000, 49));
        cc.increase_window(&i, &mut w, 1);
        assert_eq!((w.cwnd, cc.cnt), (501_000, 0));
    }

    #[test]
    fn ns3_slow_start_one_mss_then_leftover() {
        let i = info(Profile::Ns3);
        let mut cc = scalable(Profile::Ns3);
        // cwnd 9, ssthresh 10, ACK of 3: +1 MSS → 10 (CA), leftover 2 → counter 2.
        let mut w = window(9, 10);
        cc.increase_window(&i, &mut w, 3);
        assert_eq!((w.cwnd, cc.cnt), (10_000, 2));
    }

    #[test]
    fn ssthresh_cuts_one_eighth() {
        // Linux: 100 − 100>>3 = 100 − 12 = 88 segments (flight ignored).
        let w = window(100, 10);
        let mut cc = scalable(Profile::Linux);
        assert_eq!(cc.ssthresh(&info(Profile::Linux), &w, 40_000), 88_000);
        assert_eq!(cc.ssthresh(&info(Profile::Linux), &window(2, 10), 0), 2_000);
        // ns-3: flight 40.5 segments → ⌊40·0.875⌋ = 35 segments.
        let mut cc = scalable(Profile::Ns3);
        assert_eq!(cc.ssthresh(&info(Profile::Ns3), &w, 40_500), 35_000);
        assert_eq!(cc.ssthresh(&info(Profile::Ns3), &w, 1_000), 2_000);
        // A custom md = 0.3: Linux 100 − 30 = 70.
        let params = Params::from([("md".to_string(), 0.3)]);
        let mut cc = Scalable::new(&params, Profile::Linux);
        assert_eq!(cc.ssthresh(&info(Profile::Linux), &w, 0), 70_000);
    }
}
