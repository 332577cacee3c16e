//! The SACK scoreboard of RFC 6675: which outstanding segments the receiver
//! has SACKed, which are deemed lost, which were retransmitted; `pipe` and
//! `NextSeg()` built on them.
//!
//! Segment granularity: every segment starts at a multiple of the MSS (the
//! sender sends full segments except the transfer's last, and the receiver
//! acknowledges whole segments), so segment i covers
//! `[base + i·MSS, min(base + (i+1)·MSS, high))`.
//!
//! `IsLost(S)` (RFC 6675 §4): at least DupThresh SACKed segments lie above S
//! (with whole segments this equals "more than (DupThresh−1)·MSS bytes SACKed
//! above"). NextSeg rules 1–3 are implemented; the optional rescue
//! retransmission (rule 4) is not, as in ns-3.
//!
//! Each segment also keeps its last transmission time and whether it was ever
//! retransmitted, for RACK (RFC 8985, `tcp/rack.rs`), which marks segments
//! lost by time instead of by `IsLost`.

use std::collections::VecDeque;

use crate::engine::{Duration, Time};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Seg {
    sacked: bool,
    lost: bool,
    retransmitted: bool,
    /// Retransmitted at least once (Linux TCPCB_EVER_RETRANS); kept through
    /// timeouts, unlike `retransmitted`.
    ever_retx: bool,
    /// When the segment was last (re)transmitted.
    xmit: Time,
    /// Its first byte. Segments are MSS-sized except where the application
    /// ran dry (a bulk transfer's tail, every message of a session), so
    /// starts are kept rather than computed.
    start: u64,
}

/// A segment newly acknowledged (cumulatively, not SACKed before) or newly
/// SACKed, as RACK needs to see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Delivered {
    pub start: u64,
    pub end: u64,
    /// Last transmission time.
    pub xmit: Time,
    pub ever_retx: bool,
}

/// RACK's reference: the most recently sent delivered segment (RFC 8985
/// RACK.xmit_ts and RACK.end_seq) and RACK.rtt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RackRef {
    pub xmit: Time,
    pub end: u64,
    pub rtt: Duration,
}

/// Linux `tcp_skb_sent_after`: sent later, or at the same time with a higher end.
pub fn sent_after(t1: Time, end1: u64, t2: Time, end2: u64) -> bool {
    t1 > t2 || (t1 == t2 && end1 > end2)
}

impl Seg {
    fn is_marked(&self) -> bool {
        self.sacked || self.lost || self.retransmitted
    }
}

#[derive(Clone, Debug)]
pub struct Scoreboard {
    /// Sequence number of `segs[0]` (the sender's `snd_una`).
    base: u64,
    /// End of the highest segment sent (the sender's `snd_max`).
    high: u64,
    segs: VecDeque<Seg>,
    /// Segments with any mark (SACKed, lost or retransmitted). While there are
    /// none, pipe is the flight size and nothing needs a scan: the common case,
    /// which keeps a window of thousands of segments (LTE buffers) O(1) per ACK.
    marked: usize,
    /// RFC 6675 pipe, kept up to date at every change (O(1) per ACK).
    pipe: u64,
    /// Segments SACKed; lost and not SACKed (Linux lost_out); ever retransmitted.
    n_sacked: usize,
    n_lost: usize,
    n_ever_retx: usize,
    /// ns-3's pipe (`TcpTxBuffer::BytesInFlight`: sent − SACKed − lost +
    /// retransmitted) also counts a retransmitted segment that was SACKed
    /// afterwards, until the cumulative ACK passes it or a timeout clears the
    /// retransmitted marks; RFC 6675 counts SACKed segments as zero.
    ns3_pipe: bool,
}

/// What the next transmission should be (RFC 6675 `NextSeg()`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// Retransmit the segment starting at this sequence number.
    Retransmit(u64),
    /// Send new data.
    NewData,
}

impl Scoreboard {
    pub fn new() -> Self {
        Scoreboard {
            base: 0,
            high: 0,
            segs: VecDeque::with_capacity(128),
            marked: 0,
            n_sacked: 0,
            n_lost: 0,
            n_ever_retx: 0,
            pipe: 0,
            ns3_pipe: false,
        }
    }

    /// Count SACKed retransmissions in pipe, as ns-3 does (ns3 profile).
    pub fn with_ns3_pipe(mut self, on: bool) -> Self {
        self.ns3_pipe = on;
        self
    }

    /// First byte of segment `i`.
    fn start_of(&self, i: usize) -> u64 {
        self.segs[i].start
    }

    fn seg_len(&self, i: usize) -> u64 {
        let end = self.segs.get(i + 1).map_or(self.high, |s| s.start);
        end - self.segs[i].start
    }

    /// How many times a segment counts in pipe: un-SACKed segments once unless
    /// lost, and once more if retransmitted; SACKed ones not at all (ns-3:
    /// once if retransmitted).
    fn weight(&self, s: Seg) -> u64 {
        if s.sacked {
            u64::from(self.ns3_pipe && s.retransmitted)
        } else {
            u64::from(!s.lost) + u64::from(s.retransmitted)
        }
    }

    /// Replace segment `i`'s marks, keeping the counts and `pipe` in step.
    fn set(&mut self, i: usize, new: Seg) {
        let old = self.segs[i];
        let len = self.seg_len(i);
        self.pipe = self.pipe + self.weight(new) * len - self.weight(old) * len;
        self.marked = self.marked + usize::from(new.is_marked()) - usize::from(old.is_marked());
        self.count(old, false);
        self.count(new, true);
        self.segs[i] = new;
    }

    /// Add (or remove) a segment's contribution to the per-mark counts.
    fn count(&mut self, s: Seg, add: bool) {
        let n = |c: &mut usize, on: bool| {
            if on {
                if add {
                    *c += 1;
                } else {
                    *c -= 1;
                }
            }
        };
        n(&mut self.n_sacked, s.sacked);
        n(&mut self.n_lost, s.lost && !s.sacked);
        n(&mut self.n_ever_retx, s.ever_retx);
    }

    /// Index of the segment holding `seq` (≥ base).
    fn index_of(&self, seq: u64) -> usize {
        self.segs
            .partition_point(|s| s.start <= seq)
            .saturating_sub(1)
    }

    /// New data `[seq, seq + len)` was sent at `now` (seq = the previous high).
    pub fn on_new_data(&mut self, seq: u64, len: u64, now: Time) {
        debug_assert_eq!(seq, self.high);
        self.high = seq + len;
        self.segs.push_back(Seg {
            xmit: now,
            start: seq,
            ..Seg::default()
        });
        self.pipe += len;
    }

    /// The cumulative ACK advanced to `ack`; returns the bytes it covers that
    /// were already SACKed (not newly delivered, RFC 6937 DeliveredData).
    pub fn on_cumulative_ack(&mut self, ack: u64) -> u64 {
        self.on_cumulative_ack_visit(ack, |_| {})
    }

    /// As [`Scoreboard::on_cumulative_ack`], showing `visit` every segment it
    /// acknowledges that was not SACKed before, lowest first.
    pub fn on_cumulative_ack_visit(&mut self, ack: u64, mut visit: impl FnMut(Delivered)) -> u64 {
        let mut sacked = 0;
        while ack > self.base && !self.segs.is_empty() {
            let len = self.seg_len(0);
            if self.base + len > ack {
                break;
            }
            let seg = self.segs.pop_front().unwrap_or_default();
            if seg.sacked {
                sacked += len;
            } else {
                visit(Delivered {
                    start: self.base,
                    end: self.base + len,
                    xmit: seg.xmit,
                    ever_retx: seg.ever_retx,
                });
            }
            if seg.is_marked() {
                self.marked -= 1;
            }
            self.count(seg, false);
            self.pipe -= self.weight(seg) * len;
            self.base += len;
        }
        if self.segs.is_empty() {
            self.base = ack.max(self.base);
            self.high = self.high.max(self.base);
        }
        sacked
    }

    /// Apply SACK blocks; returns the bytes newly SACKed.
    pub fn on_sack_blocks(&mut self, blocks: &[(u64, u64)]) -> u64 {
        self.on_sack_blocks_visit(blocks, |_| {})
    }

    /// As [`Scoreboard::on_sack_blocks`], showing `visit` every newly SACKed
    /// segment, in the blocks' order.
    pub fn on_sack_blocks_visit(
        &mut self,
        blocks: &[(u64, u64)],
        mut visit: impl FnMut(Delivered),
    ) -> u64 {
        let mut newly = 0;
        for &(start, end) in blocks {
            let start = start.max(self.base);
            let end = end.min(self.high);
            if start >= end {
                continue;
            }
            // Whole segments inside the block only.
            let mut i = self.index_of(start);
            if self.start_of(i) < start {
                i += 1;
            }
            while i < self.segs.len() {
                let s = self.start_of(i);
                let len = self.seg_len(i);
                if s + len > end {
                    break;
                }
                if !self.segs[i].sacked {
                    let mut seg = self.segs[i];
                    visit(Delivered {
                        start: s,
                        end: s + len,
                        xmit: seg.xmit,
                        ever_retx: seg.ever_retx,
                    });
                    seg.sacked = true;
                    self.set(i, seg);
                    newly += len;
                }
                i += 1;
            }
        }
        newly
    }

    /// Mark segments lost per `IsLost` (never unmarks).
    pub fn update_lost(&mut self, dupthresh: u32) {
        if self.marked == 0 {
            return; // nothing SACKed: nothing to mark
        }
        let mut sacked_above = 0u32;
        for i in (0..self.segs.len()).rev() {
            let seg = self.segs[i];
            if seg.sacked {
                sacked_above += 1;
            } else if sacked_above >= dupthresh && !seg.lost {
                self.set(i, Seg { lost: true, ..seg });
            }
        }
    }

    /// Whether the first outstanding segment is deemed lost.
    pub fn head_lost(&self) -> bool {
        self.segs.front().is_some_and(|s| s.lost)
    }

    /// RFC 6675 `pipe`, in bytes: un-SACKed segments count once unless lost,
    /// and once more if retransmitted.
    pub fn pipe(&self) -> u64 {
        debug_assert_eq!(
            (self.marked, self.pipe),
            (
                self.segs.iter().filter(|s| s.is_marked()).count(),
                (0..self.segs.len())
                    .map(|i| self.weight(self.segs[i]) * self.seg_len(i))
                    .sum::<u64>()
            ),
            "the counts are kept in step with the marks"
        );
        debug_assert_eq!(
            (self.n_sacked, self.n_lost, self.n_ever_retx),
            (
                self.segs.iter().filter(|s| s.sacked).count(),
                self.segs.iter().filter(|s| s.lost && !s.sacked).count(),
                self.segs.iter().filter(|s| s.ever_retx).count(),
            ),
            "the per-mark counts are kept in step with the marks"
        );
        self.pipe
    }

    /// RFC 6675 `NextSeg()`: rule 1 (a lost segment not yet retransmitted),
    /// rule 2 (new data, if `new_data_available`), rule 3 (an un-SACKed segment
    /// below the highest SACKed one, not yet retransmitted).
    #[cfg(test)]
    pub fn next_seg(&self, new_data_available: bool) -> Option<Next> {
        self.next_seg_with(new_data_available, false)
    }

    /// `NextSeg()`, where with `lost_anywhere` rule 1 takes a lost segment
    /// even above the highest SACKed one (RACK can mark one there: a segment
    /// sent before a retransmission that was SACKed; Linux retransmits every
    /// segment marked lost, `tcp_xmit_retransmit_queue`).
    pub fn next_seg_with(&self, new_data_available: bool, lost_anywhere: bool) -> Option<Next> {
        if self.marked == 0 {
            // Nothing SACKed: rules 1 and 3 have no candidate.
            return new_data_available.then_some(Next::NewData);
        }
        let highest_sacked = self.segs.iter().rposition(|s| s.sacked);
        let below_high = |i: usize| highest_sacked.is_some_and(|h| i < h);
        let seq = |i: usize| self.segs[i].start;
        if let Some(i) = (0..self.segs.len()).find(|&i| {
            (lost_anywhere || below_high(i))
                && self.segs[i].lost
                && !self.segs[i].retransmitted
                && !self.segs[i].sacked
        }) {
            return Some(Next::Retransmit(seq(i)));
        }
        if new_data_available {
            return Some(Next::NewData);
        }
        (0..self.segs.len())
            .find(|&i| below_high(i) && !self.segs[i].sacked && !self.segs[i].retransmitted)
            .map(|i| Next::Retransmit(seq(i)))
    }

    /// The first segment to resend after a timeout (lost, not yet resent, not SACKed).
    pub fn first_unsent_lost(&self) -> Option<u64> {
        self.segs
            .iter()
            .position(|s| s.lost && !s.retransmitted && !s.sacked)
            .map(|i| self.segs[i].start)
    }

    /// Length of the segment starting at `seq`.
    pub fn len_at(&self, seq: u64) -> u64 {
        self.seg_len(self.index_of(seq))
    }

    /// Whether the first outstanding segment was retransmitted since the last
    /// timeout (or recovery) marked it.
    pub fn head_retransmitted(&self) -> bool {
        self.segs.front().is_some_and(|s| s.retransmitted)
    }

    /// Whether a segment that the cumulative ACK `ack` covers (fully) was
    /// retransmitted (ns-3 `m_isRetransDataAcked`).
    pub fn retransmitted_below(&self, ack: u64) -> bool {
        let mut end = self.base;
        for (i, s) in self.segs.iter().enumerate() {
            end += self.seg_len(i);
            if end > ack {
                break;
            }
            if s.retransmitted {
                return true;
            }
        }
        false
    }

    /// The segment at `seq` was retransmitted at `now`.
    pub fn mark_retransmitted(&mut self, seq: u64, now: Time) {
        let i = self.index_of(seq);
        if let Some(&seg) = self.segs.get(i) {
            self.set(
                i,
                Seg {
                    retransmitted: true,
                    ever_retx: true,
                    xmit: now,
                    ..seg
                },
            );
        }
    }

    /// After a retransmission timeout: every un-SACKed segment is lost and
    /// eligible for retransmission again (SACK information is kept, as Linux
    /// and ns-3 do).
    pub fn on_timeout(&mut self) {
        self.on_timeout_sparing(|_| false);
    }

    /// As [`Scoreboard::on_timeout`], except that segments other than the head
    /// for which `recent(last transmission)` holds are not marked lost (Linux
    /// `tcp_timeout_mark_lost` with RACK: "don't mark recently sent ones lost yet").
    pub fn on_timeout_sparing(&mut self, recent: impl Fn(Time) -> bool) {
        for (i, s) in self.segs.iter_mut().enumerate() {
            if !s.sacked && (i == 0 || !recent(s.xmit)) {
                s.lost = true;
            }
            s.retransmitted = false;
        }
        self.recount();
    }

    /// Recompute the counts and pipe from the marks.
    fn recount(&mut self) {
        self.marked = self.segs.iter().filter(|s| s.is_marked()).count();
        self.n_sacked = self.segs.iter().filter(|s| s.sacked).count();
        self.n_lost = self.segs.iter().filter(|s| s.lost && !s.sacked).count();
        self.n_ever_retx = self.segs.iter().filter(|s| s.ever_retx).count();
        self.pipe = (0..self.segs.len())
            .map(|i| self.weight(self.segs[i]) * self.seg_len(i))
            .sum();
    }

    /// Segments sent and not cumulatively acknowledged (Linux packets_out).
    pub fn packets_out(&self) -> usize {
        self.segs.len()
    }

    /// Segments SACKed (Linux sacked_out).
    pub fn sacked_segments(&self) -> usize {
        self.n_sacked
    }

    /// Segments marked lost and not SACKed (Linux lost_out).
    pub fn lost_segments(&self) -> usize {
        self.n_lost
    }

    /// Whether any un-SACKed segment is marked lost (Linux lost_out > 0).
    pub fn any_lost(&self) -> bool {
        self.n_lost > 0
    }

    /// Whether any segment is SACKed or marked lost (Linux left_out > 0).
    pub fn left_out(&self) -> bool {
        self.n_sacked + self.n_lost > 0
    }

    /// When the first outstanding segment was last (re)transmitted.
    pub fn head_sent_at(&self) -> Option<Time> {
        self.segs.front().map(|s| s.xmit)
    }

    /// Start of the highest outstanding segment.
    pub fn last_seq(&self) -> Option<u64> {
        self.segs.back().map(|s| s.start)
    }

    /// End of the highest SACKed segment (Linux `tcp_highest_sack_seq`), if any.
    pub fn highest_sacked_end(&self) -> Option<u64> {
        if self.n_sacked == 0 {
            return None;
        }
        self.segs
            .iter()
            .rposition(|s| s.sacked)
            .map(|i| self.start_of(i) + self.seg_len(i))
    }

    /// RACK loss marking (RFC 8985 §6.2 step 5, Linux `tcp_rack_detect_loss`):
    /// every segment not SACKed, not already lost and waiting for its
    /// retransmission, and sent before the reference is lost once `now` is
    /// RACK.rtt + `reo_wnd` past its last transmission; a lost retransmission
    /// becomes resendable. Returns the segments marked and, for the others
    /// sent before the reference, the longest wait until they would be (the
    /// reorder timer's delay).
    pub fn rack_mark_lost(
        &mut self,
        now: Time,
        r: RackRef,
        reo_wnd: Duration,
    ) -> (u32, Option<Duration>) {
        let mut marked = 0;
        let mut wait: Option<Duration> = None;
        let mut ever_seen = 0;
        let limit = i128::from(r.rtt.as_nanos()) + i128::from(reo_wnd.as_nanos());
        for i in 0..self.segs.len() {
            let seg = self.segs[i];
            if seg.ever_retx {
                ever_seen += 1;
            }
            if seg.sacked || (seg.lost && !seg.retransmitted) {
                continue;
            }
            let end = self.start_of(i) + self.seg_len(i);
            if !sent_after(r.xmit, r.end, seg.xmit, end) {
                // Segments never retransmitted were sent in sequence order:
                // all later ones are later still. Only retransmissions ahead
                // may have been sent before the reference.
                if !seg.ever_retx && ever_seen == self.n_ever_retx {
                    break;
                }
                continue;
            }
            let elapsed = i128::from(now.since(seg.xmit).as_nanos());
            let remaining = limit - elapsed;
            if remaining <= 0 {
                self.set(
                    i,
                    Seg {
                        lost: true,
                        retransmitted: false,
                        ..seg
                    },
                );
                marked += 1;
            } else {
                let d = Duration(remaining as u64);
                wait = Some(wait.map_or(d, |w| w.max(d)));
            }
        }
        (marked, wait)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: Time = Time(0);

    #[test]
    fn ns3_pipe_counts_sacked_retransmissions() {
        for (ns3, want) in [(false, 9000), (true, 10_000)] {
            let mut b = board().with_ns3_pipe(ns3);
            b.mark_retransmitted(3000, T0);
            b.on_sack_blocks(&[(3000, 4000)]);
            assert_eq!(b.pipe(), want);
            b.on_timeout();
            assert!(b.pipe() < want, "a timeout clears the retransmitted marks");
        }
    }

    /// Ten 1000-byte segments outstanding from 0.
    fn board() -> Scoreboard {
        let mut b = Scoreboard::new();
        for i in 0..10 {
            b.on_new_data(i * 1000, 1000, T0);
        }
        b
    }

    #[test]
    fn pipe_counts_unsacked_segments() {
        let mut b = board();
        assert_eq!(b.pipe(), 10_000);
        // Segments 2..5 SACKed: pipe drops by three segments.
        assert_eq!(b.on_sack_blocks(&[(2000, 5000)]), 3000);
        assert_eq!(b.on_sack_blocks(&[(2000, 5000)]), 0, "no double counting");
        assert_eq!(b.pipe(), 7_000);
    }

    #[test]
    fn is_lost_needs_dupthresh_sacked_segments_above() {
        let mut b = board();
        b.on_sack_blocks(&[(2000, 4000)]);
        b.update_lost(3);
        assert!(!b.head_lost(), "two SACKed segments above are not enough");
        b.on_sack_blocks(&[(5000, 6000)]);
        b.update_lost(3);
        // Segments 0 and 1 have three SACKed above; segment 4 only one.
        assert!(b.head_lost());
        // pipe: 0,1 lost (0); 4 not lost (1); 6..9 (4) → 5 segments.
        assert_eq!(b.pipe(), 5_000);
    }

    #[test]
    fn next_seg_rules_in_order() {
        let mut b = board();
        b.on_sack_blocks(&[(1000, 2000), (3000, 6000)]);
        b.update_lost(3);
        // Rule 1: segment 0 is lost (4 SACKed above), segment 2 too (3 above).
        assert_eq!(b.next_seg(true), Some(Next::Retransmit(0)));
        b.mark_retransmitted(0, T0);
        assert_eq!(b.next_seg(true), Some(Next::Retransmit(2000)));
        b.mark_retransmitted(2000, T0);
        // Rule 2: new data before rule 3.
        assert_eq!(b.next_seg(true), Some(Next::NewData));
        // Rule 3 when no new data: nothing un-SACKed, unretransmitted below segment 5.
        assert_eq!(b.next_seg(false), None);
        // Retransmitted segments count twice in pipe: 0 and 2 (lost, resent: 1 each),
        // 6..9 (4) = 6 segments.
        assert_eq!(b.pipe(), 6_000);
    }

    #[test]
    fn rule_three_picks_unsacked_below_the_highest_sack() {
        let mut b = board();
        b.on_sack_blocks(&[(8000, 9000)]);
        b.update_lost(3);
        assert_eq!(b.next_seg(false), Some(Next::Retransmit(0)));
    }

    #[test]
    fn cumulative_ack_reports_the_sacked_bytes_it_covers() {
        let mut b = board();
        b.on_sack_blocks(&[(2000, 4000), (6000, 7000)]);
        assert_eq!(b.on_cumulative_ack(5000), 2000);
        assert_eq!(b.on_cumulative_ack(8000), 1000);
    }

    #[test]
    fn cumulative_ack_and_tail_segment() {
        let mut b = Scoreboard::new();
        b.on_new_data(0, 1000, T0);
        b.on_new_data(1000, 500, T0);
        assert_eq!(b.len_at(1000), 500);
        b.on_cumulative_ack(1000);
        assert_eq!(b.pipe(), 500);
        b.on_cumulative_ack(1500);
        assert_eq!(b.pipe(), 0);
        assert_eq!(b.next_seg(false), None);
    }

    #[test]
    fn timeout_marks_unsacked_lost_and_resendable() {
        let mut b = board();
        b.on_sack_blocks(&[(5000, 6000)]);
        b.mark_retransmitted(0, T0);
        b.on_timeout();
        assert_eq!(b.pipe(), 0);
        assert_eq!(b.first_unsent_lost(), Some(0));
        b.mark_retransmitted(0, T0);
        assert_eq!(b.first_unsent_lost(), Some(1000));
    }
}
