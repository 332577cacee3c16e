//! HighSpeed TCP (RFC 3649): above 38 segments the additive increase a(w)
//! grows and the multiplicative decrease b(w) shrinks with the window, read
//! from the RFC's table (docs/congestion-control.md, '`highspeed`').
//!
//! Sources: S. Floyd, RFC 3649 "HighSpeed TCP for Large Congestion Windows",
//! Appendix B; Linux `net/ipv4/tcp_highspeed.c`; ns-3
//! `src/internet/model/tcp-highspeed.cc`.
//!
//! The table has 73 rows `(w_i, a_i = i, b_i)`, i = 1..73, from (38, 1, 0.50)
//! to (89053, 72, 0.10) and (94717, 73, 0.09): a(w) = a_i for
//! `w_{i−1} < w ≤ w_i`. For w ≤ 38 it is Reno.
//!
//! Profile differences (the switches of [`HighSpeedBehaviour`]):
//! * Linux: the kernel's table stops at 89053 (72 rows, a ≤ 72) and stores b
//!   as `md/256` computed from the RFC's b(w) formula (e.g. 0.4375 for 0.44,
//!   24/256 = 0.094 at 89053). The row index `ai` is moved only in congestion
//!   avoidance so that `w_{ai−1} < cwnd ≤ w_{ai}`; each ACK (whatever it
//!   covers) adds `ai+1` to the `cwnd_cnt` credit and cwnd grows by one
//!   segment when the credit reaches cwnd; slow start leftovers are dropped.
//!   ssthresh = max(cwnd − (cwnd·md(ai) >> 8), 2) with the last `ai`.
//! * ns-3: all 73 rows with the RFC's two-decimal b, looked up afresh on
//!   every ACK; its threshold for row 62 is 53667 where the RFC and Linux
//!   have 53677 (kept, to match ns-3); the counter gains `segmentsAcked·a`;
//!   slow start is NewReno (+1 MSS per ACK, leftover to avoidance); ssthresh
//!   from bytes in flight: `max(2, ⌊flight/MSS⌋·(1 − b))` segments.

use super::reno::{cwnd_segments, slow_start};
use super::{CongestionOps, ConnInfo, ParamSpec, Params, Profile, ProfileBehaviour, Window};

/// HighSpeed has no tunables: the table is the algorithm.
pub const PARAMS: &[ParamSpec] = &[];

/// RFC 3649 Appendix B, column w: row i (1-based) ends at `W[i−1]`.
pub const W: [u64; 73] = [
    38, 118, 221, 347, 495, 663, 851, 1058, 1284, 1529, 1793, 2076, 2378, 2699, 3039, 3399, 3778,
    4177, 4596, 5036, 5497, 5979, 6483, 7009, 7558, 8130, 8726, 9346, 9991, 10661, 11358, 12082,
    12834, 13614, 14424, 15265, 16137, 17042, 17981, 18955, 19965, 21013, 22101, 23230, 24402,
    25618, 26881, 28193, 29557, 30975, 32450, 33986, 35586, 37253, 38992, 40808, 42707, 44694,
    46776, 48961, 51258, 53677, 56230, 58932, 61799, 64851, 68113, 71617, 75401, 79517, 84035,
    89053, 94717,
];

/// RFC 3649 Appendix B, column b(w), in hundredths.
pub const B_PERCENT: [u64; 73] = [
    50, 44, 41, 38, 37, 35, 34, 33, 32, 31, 30, 29, 28, 28, 27, 27, 26, 26, 25, 25, 24, 24, 23, 23,
    22, 22, 22, 21, 21, 21, 20, 20, 20, 19, 19, 19, 19, 18, 18, 18, 17, 17, 17, 17, 16, 16, 16, 16,
    15, 15, 15, 15, 14, 14, 14, 14, 13, 13, 13, 13, 13, 12, 12, 12, 12, 11, 11, 11, 10, 10, 10, 10,
    9,
];

/// Linux's decrease factors, b·256, for its 72 rows (38 … 89053).
pub const LINUX_MD: [u64; 72] = [
    128, 112, 104, 98, 93, 89, 86, 83, 81, 78, 76, 74, 72, 71, 69, 68, 66, 65, 64, 62, 61, 60, 59,
    58, 57, 56, 55, 54, 53, 52, 52, 51, 50, 49, 48, 48, 47, 46, 45, 45, 44, 43, 43, 42, 41, 41, 40,
    39, 39, 38, 38, 37, 36, 36, 35, 35, 34, 33, 33, 32, 32, 31, 30, 30, 29, 28, 28, 27, 26, 26, 25,
    24,
];

/// ns-3's row-62 threshold (the RFC and Linux have 53677).
const NS3_ROW62_W: u64 = 53_667;

/// ns-3 `TableLookupA`/`TableLookupB`: the row for a window of `w` segments
/// (0-based; the last row beyond the table).
fn ns3_row(w: u64) -> usize {
    W.iter()
        .enumerate()
        .position(|(i, &wi)| w <= if i == 61 { NS3_ROW62_W } else { wi })
        .unwrap_or(W.len() - 1)
}

/// ns-3 a(w).
pub fn ns3_a(w: u64) -> u64 {
    ns3_row(w) as u64 + 1
}

/// ns-3 b(w), as its two-decimal literal.
pub fn ns3_b(w: u64) -> f64 {
    B_PERCENT[ns3_row(w)] as f64 / 100.0
}

/// Where HighSpeed follows ns-3 (`tcp-highspeed.cc`) or Linux
/// (`tcp_highspeed.c`); see the module documentation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HighSpeedBehaviour {
    /// The kernel's table (72 rows, b as `md/256`), its row index moved only
    /// in avoidance, `ai+1` added to the credit per ACK whatever it covers,
    /// slow-start leftovers dropped (Linux). ns-3: all 73 rows with the RFC's
    /// two-decimal b looked up afresh on every ACK, `segmentsAcked·a` added
    /// to the counter, NewReno slow start with the leftover to avoidance.
    pub kernel_table: bool,
    /// `ssthresh = max(2, ⌊flight/MSS⌋·(1 − b))` segments from bytes in
    /// flight (ns-3); Linux `max(cwnd − (cwnd·md(ai) >> 8), 2)` with the
    /// last row index.
    pub ssthresh_from_flight: bool,
}

impl ProfileBehaviour for HighSpeedBehaviour {
    const NS3: Self = HighSpeedBehaviour {
        kernel_table: false,
        ssthresh_from_flight: true,
    };
    const LINUX: Self = HighSpeedBehaviour {
        kernel_table: true,
        ssthresh_from_flight: false,
    };
}

#[derive(Clone, Debug)]
pub struct HighSpeed {
    b: HighSpeedBehaviour,
    /// For the Reno slow start (reno.rs).
    profile: Profile,
    /// Linux row index `ai` (a = ai + 1).
    ai: usize,
    /// Linux `snd_cwnd_cnt` / ns-3 `m_ackCnt`.
    cnt: u64,
}

impl HighSpeed {
    pub fn new(_params: &Params, profile: Profile) -> Self {
        HighSpeed {
            b: HighSpeedBehaviour::of(profile),
            profile,
            ai: 0,
            cnt: 0,
        }
    }

    fn linux_increase(&mut self, info: &ConnInfo, w: &mut Window, acked: u32) {
        if w.in_slow_start() {
            slow_start(self.profile, info, w, acked);
            return;
        }
        let cwnd = cwnd_segments(info, w);
        if cwnd > W[self.ai] {
            while cwnd > W[self.ai] && self.ai < LINUX_MD.len() - 1 {
                self.ai += 1;
            }
        } else {
            while self.ai > 0 && cwnd <= W[self.ai - 1] {
                self.ai -= 1;
            }
        }
        // Linux clamps cwnd to 2^32/128 for the MD arithmetic.
        if cwnd < u64::from(u32::MAX / 128) {
            self.cnt += self.ai as u64 + 1;
            if self.cnt >= cwnd {
                self.cnt -= cwnd;
                w.cwnd = (cwnd + 1) * info.mss;
            }
        }
    }

    fn ns3_increase(&mut self, info: &ConnInfo, w: &mut Window, acked: u32) {
        let mut acked = acked;
        if w.in_slow_start() {
            acked = slow_start(self.profile, info, w, acked);
        }
        if w.in_slow_start() {
            return;
        }
        let old = (w.cwnd / info.mss).max(1);
        let mut seg = old;
        if acked > 0 {
            self.cnt += u64::from(acked) * ns3_a(seg);
        }
        while self.cnt >= seg {
            self.cnt -= seg;
            seg += 1;
        }
        if seg != old {
            w.cwnd = seg * info.mss;
        }
    }
}

impl CongestionOps for HighSpeed {
    fn ssthresh(&mut self, info: &ConnInfo, w: &Window, bytes_in_flight: u64) -> u64 {
        if self.b.ssthresh_from_flight {
            let seg = bytes_in_flight / info.mss;
            let b = 1.0 - ns3_b(seg);
            ((seg as f64 * b).max(2.0) as u64) * info.mss
        } else {
            let cwnd = cwnd_segments(info, w);
            let cut = (cwnd * LINUX_MD[self.ai]) >> 8;
            (cwnd - cut).max(2) * info.mss
        }
    }

    fn increase_window(&mut self, info: &ConnInfo, w: &mut Window, segments_acked: u32) {
        if self.b.kernel_table {
            self.linux_increase(info, w, segments_acked);
        } else {
            self.ns3_increase(info, w, segments_acked);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::reno::test_support::{info, window};
    use super::*;

    #[test]
    fn table_has_73_rows_ascending_with_falling_b() {
        assert_eq!(W.len(), 73);
        assert!(W.windows(2).all(|p| p[0] < p[1]));
        assert!(B_PERCENT.windows(2).all(|p| p[0] >= p[1]));
        assert!(LINUX_MD.windows(2).all(|p| p[0] >= p[1]));
        // Spot rows against RFC 3649 Appendix B.
        assert_eq!((W[0], B_PERCENT[0]), (38, 50));
        assert_eq!((W[4], B_PERCENT[4]), (495, 37));
        assert_eq!((W[70], B_PERCENT[70]), (84035, 10));
        assert_eq!((W[72], B_PERCENT[72]), (94717, 9));
        // Linux md = b·256 truncated from the formula: 0.50 → 128, 0.44 → 112.
        assert_eq!((LINUX_MD[0], LINUX_MD[1], LINUX_MD[71]), (128, 112, 24));
    }

    #[test]
    fn ns3_lookup_rows() {
        // a(w), b(w) at several windows (w_{i−1} < w ≤ w_i → row i).
        assert_eq!((ns3_a(10), ns3_b(10)), (1, 0.50));
        assert_eq!((ns3_a(38), ns3_b(38)), (1, 0.50));
        assert_eq!((ns3_a(39), ns3_b(39)), (2, 0.44));
        assert_eq!((ns3_a(118), ns3_b(118)), (2, 0.44));
        assert_eq!((ns3_a(119), ns3_b(119)), (3, 0.41));
        assert_eq!((ns3_a(1000), ns3_b(1000)), (8, 0.33));
        assert_eq!((ns3_a(10_000), ns3_b(10_000)), (30, 0.21));
        // ns-3's row 62 ends at 53667, not 53677.
        assert_eq!(ns3_a(53_670), 63);
        assert_eq!((ns3_a(89_053), ns3_b(89_053)), (72, 0.10));
        assert_eq!((ns3_a(90_000), ns3_b(90_000)), (73, 0.09));
        assert_eq!((ns3_a(1_000_000), ns3_b(1_000_000)), (73, 0.09));
    }

    #[test]
    fn linux_row_index_follows_cwnd() {
        let i = info(Profile::Linux);
        let mut cc = HighSpeed::new(&Params::new(), Profile::Linux);
        // cwnd 100: 38 < 100 ≤ 118 → ai = 1, a = 2: credit 2 per ACK.
        let mut w = window(100, 50);
        cc.increase_window(&i, &mut w, 2);
        assert_eq!((cc.ai, cc.cnt), (1, 2));
        // 50 ACKs in total: credit 100 = cwnd → +1 segment, credit 0.
        for _ in 0..49 {
            cc.increase_window(&i, &mut w, 2);
        }
        assert_eq!((w.cwnd, cc.cnt), (101_000, 0));
        // cwnd 1000: 851 < 1000 ≤ 1058 → ai = 7, a = 8.
        let mut w = window(1000, 50);
        cc.increase_window(&i, &mut w, 1);
        assert_eq!((cc.ai, cc.cnt), (7, 8));
        // Beyond the Linux table: ai stops at 71 (a = 72).
        let mut w = window(100_000, 50);
        cc.increase_window(&i, &mut w, 1);
        assert_eq!((cc.ai, cc.cnt), (71, 80));
        // Back down to 30 segments: ai = 0, Reno credit.
        let mut w = window(30, 10);
        cc.cnt = 0;
        cc.increase_window(&i, &mut w, 1);
        assert_eq!((cc.ai, cc.cnt), (0, 1));
    }

    #[test]
    fn linux_ssthresh_cut() {
        let i = info(Profile::Linux);
        let mut cc = HighSpeed::new(&Params::new(), Profile::Linux);
        // ai = 0: cut (30·128)>>8 = 15 → 15 segments (Reno).
        assert_eq!(cc.ssthresh(&i, &window(30, 10), 0), 15_000);
        // ai = 1 (cwnd 100): cut (100·112)>>8 = 43 → 57 segments.
        let mut w = window(100, 50);
        cc.increase_window(&i, &mut w, 1);
        assert_eq!(cc.ssthresh(&i, &w, 0), 57_000);
        // ai = 7 (cwnd 1000): cut (1000·83)>>8 = 324 → 676 segments.
        let mut w = window(1000, 50);
        cc.increase_window(&i, &mut w, 1);
        assert_eq!(cc.ssthresh(&i, &w, 0), 676_000);
        // Floor: 2 segments.
        cc.ai = 0;
        assert_eq!(cc.ssthresh(&i, &window(3, 10), 0), 2_000);
    }

    #[test]
    fn linux_slow_start_drops_leftover() {
        let i = info(Profile::Linux);
        let mut cc = HighSpeed::new(&Params::new(), Profile::Linux);
        let mut w = window(9, 10);
        cc.increase_window(&i, &mut w, 3);
        assert_eq!((w.cwnd, cc.cnt), (10_000, 0));
    }

    #[test]
    fn ns3_avoidance_adds_segments_times_a() {
        let i = info(Profile::Ns3);
        let mut cc = HighSpeed::new(&Params::new(), Profile::Ns3);
        // cwnd 100 → a = 2; an ACK of 2 segments adds 4 to the counter.
        let mut w = window(100, 50);
        cc.increase_window(&i, &mut w, 2);
        assert_eq!((w.cwnd, cc.cnt), (100_000, 4));
        // 25 such ACKs: counter 100 ≥ 100 → 101 segments, counter 0.
        for _ in 0..24 {
            cc.increase_window(&i, &mut w, 2);
        }
        assert_eq!((w.cwnd, cc.cnt), (101_000, 0));
        // cwnd 1000 → a = 8; one ACK of 200 segments: counter 1600 →
        // −1000 → 1001 segments, counter 600 < 1001.
        let mut w = window(1000, 50);
        cc.increase_window(&i, &mut w, 200);
        assert_eq!((w.cwnd, cc.cnt), (1_001_000, 600));
    }

    #[test]
    fn ns3_slow_start_leftover_goes_to_avoidance() {
        // cwnd 37.5 segments, ssthresh 38: +1 MSS → 38.5 ≥ 38; leftover 1
        // segment: counter += 1·a(38) = 1 < 38.
        let i = info(Profile::Ns3);
        let mut cc = HighSpeed::new(&Params::new(), Profile::Ns3);
        let mut w = Window {
            cwnd: 37_500,
            ssthresh: 38_000,
        };
        cc.increase_window(&i, &mut w, 2);
        assert_eq!((w.cwnd, cc.cnt), (38_500, 1));
    }

    #[test]
    fn ns3_ssthresh_from_flight_and_table() {
        let i = info(Profile::Ns3);
        let mut cc = HighSpeed::new(&Params::new(), Profile::Ns3);
        let w = window(5000, 10);
        // flight 30 segments: b = 0.5 → 15 segments.
        assert_eq!(cc.ssthresh(&i, &w, 30_500), 15_000);
        // flight 100 segments: b = 0.44 → ⌊100·0.56⌋ = 56.
        assert_eq!(cc.ssthresh(&i, &w, 100_000), 56_000);
        // flight 1000: b = 0.33 → ⌊1000·(1 − 0.33)⌋ = ⌊669.9999999999999⌋ = 669
        // (ns-3's double arithmetic).
        assert_eq!(cc.ssthresh(&i, &w, 1_000_000), 669_000);
        // flight 90000: ns-3's extra row, b = 0.09 → ⌊90000·0.91⌋ = 81900.
        assert_eq!(cc.ssthresh(&i, &w, 90_000_000), 81_900_000);
        // flight 3 segments: max(2, 1.5) = 2.
        assert_eq!(cc.ssthresh(&i, &w, 3_000), 2_000);
    }
}
