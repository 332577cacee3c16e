//! CoDel (RFC 8289) as ns-3.44's `CoDelQueueDisc`
//! (`src/traffic-control/model/codel-queue-disc.cc`, a port of Linux's codel.h).
//!
//! A drop-tail FIFO whose dequeue drops packets while their sojourn time has
//! stayed above `Target` for at least `Interval`, at a rate rising as the
//! square root of the number of drops. The rules, with the ns-3 function each
//! comes from:
//! * Enqueue drops only on overflow: `GetCurrentSize() + item > MaxSize`
//!   ("Overlimit drop"; `DoEnqueue`). `MaxSize` defaults to 1500 × 1000 bytes
//!   (`DEFAULT_CODEL_LIMIT`): a byte limit, not a packet limit.
//! * Time is ns-3's CoDel time: nanoseconds shifted right by 10 and truncated
//!   to 32 bits (`CoDelGetTime`, `Time2CoDel`, `CODEL_SHIFT`). One unit is
//!   1.024 µs; Target 5 ms is 4882 units, Interval 100 ms is 97656. Comparisons
//!   take the difference as a 64-bit signed number (`CoDelTimeAfter` & co.),
//!   so, as in ns-3, they are not wrap-safe beyond 2^32 units (≈ 73 min).
//! * `OkToDrop`: no drop if the sojourn is below target or fewer than
//!   `MinBytes` (1500) bytes remain queued after the packet was taken
//!   (this also resets `first_above_time`); the first time above target sets
//!   `first_above_time = now + interval`; a drop is allowed once `now` is
//!   strictly after it.
//! * `DoDequeue`, dropping state: leave it when `OkToDrop` says no; otherwise,
//!   while `now >= drop_next`, count one more drop, refine `rec_inv_sqrt` by
//!   one Newton step, drop the packet, take the next one, and either leave
//!   (if it may not be dropped) or set `drop_next = ControlLaw(drop_next)`.
//! * `DoDequeue`, not dropping: if `OkToDrop`, drop the packet, take the next,
//!   enter the dropping state; count restarts at 1 unless the last episode
//!   dropped more than one packet beyond its first (`count - last_count > 1`)
//!   and `now - drop_next < 16 × interval`, in which case count = that
//!   difference (RFC 8289's reuse of the previous rate); then
//!   `drop_next = ControlLaw(now)`.
//! * `ControlLaw(t) = t + interval × rec_inv_sqrt` where `rec_inv_sqrt` is a
//!   16-bit fixed-point 1/sqrt(count) kept by one Newton step per change of
//!   count (`NewtonStep`), not an exact square root: after counts 1, 2, 3, 4
//!   it is 1, 0.5, 0.5625, 0.488 (exact: 1, 0.707, 0.577, 0.5), so ns-3's
//!   (and Linux's) drop spacing departs from interval/sqrt(count) at small counts.
//! * ECN (`UseEcn`, default false here), L4S and `CeThreshold` are not modelled.

use super::{DropReason, Dropped, Fifo, Item, Limit, QueueDisc, Stats};
use crate::engine::{Duration, Time};

/// `CODEL_SHIFT`: CoDel time is nanoseconds >> 10.
const CODEL_SHIFT: u32 = 10;
/// `REC_INV_SQRT_SHIFT` = 32 − 16 bits.
const REC_INV_SQRT_SHIFT: u32 = 16;
/// `~0U >> REC_INV_SQRT_SHIFT`: 1.0 in the 16-bit fixed point.
const REC_INV_SQRT_ONE: u16 = 0xFFFF;

/// Attributes of `ns3::CoDelQueueDisc` (UseEcn, UseL4s, CeThreshold omitted).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CoDelParams {
    /// `MaxSize`: default 1500 × `DEFAULT_CODEL_LIMIT` (1000) bytes.
    pub limit: Limit,
    /// `MinBytes`: default 1500.
    pub min_bytes: u32,
    /// `Interval`: default 100 ms.
    pub interval: Duration,
    /// `Target`: default 5 ms.
    pub target: Duration,
}

impl Default for CoDelParams {
    fn default() -> Self {
        CoDelParams {
            limit: Limit::Bytes(1500 * 1000),
            min_bytes: 1500,
            interval: Duration::from_millis(100),
            target: Duration::from_millis(5),
        }
    }
}

/// `Time2CoDel` / `CoDelGetTime`: ns >> 10, truncated to 32 bits.
fn codel_time(ns: u64) -> u32 {
    (ns >> CODEL_SHIFT) as u32
}

/// `CoDelTimeAfter`.
fn after(a: u32, b: u32) -> bool {
    i64::from(a) - i64::from(b) > 0
}

/// `CoDelTimeAfterEq`.
fn after_eq(a: u32, b: u32) -> bool {
    i64::from(a) - i64::from(b) >= 0
}

/// `CoDelTimeBefore`.
fn before(a: u32, b: u32) -> bool {
    i64::from(a) - i64::from(b) < 0
}

/// `NewtonStep`: one Newton iteration of 1/sqrt(count) in 16-bit fixed point,
/// with the kernel's integer widths (wrapping where C wraps).
fn newton_step(rec_inv_sqrt: u16, count: u32) -> u16 {
    let invsqrt = u32::from(rec_inv_sqrt) << REC_INV_SQRT_SHIFT;
    let invsqrt2 = ((u64::from(invsqrt) * u64::from(invsqrt)) >> 32) as u32;
    let mut val = (3u64 << 32).wrapping_sub(u64::from(count) * u64::from(invsqrt2));
    val >>= 2; // avoid overflow
    val = val.wrapping_mul(u64::from(invsqrt)) >> (32 - 2 + 1);
    (val >> REC_INV_SQRT_SHIFT) as u16
}

/// `ControlLaw`: t + interval × rec_inv_sqrt (`ReciprocalDivide`), 32-bit wrapping.
fn control_law(t: u32, interval: u32, rec_inv_sqrt: u16) -> u32 {
    let r = u32::from(rec_inv_sqrt) << REC_INV_SQRT_SHIFT;
    t.wrapping_add(((u64::from(interval) * u64::from(r)) >> 32) as u32)
}

/// The CoDel state machine over a FIFO; also each FQ-CoDel flow queue's.
#[derive(Clone, Debug)]
pub(crate) struct CoDelState {
    target: u32,
    interval: u32,
    min_bytes: u32,
    count: u32,
    last_count: u32,
    dropping: bool,
    rec_inv_sqrt: u16,
    first_above_time: u32,
    drop_next: u32,
}

impl CoDelState {
    pub(crate) fn new(p: &CoDelParams) -> Self {
        // The constructor's initial values (CoDelQueueDisc::CoDelQueueDisc).
        CoDelState {
            target: codel_time(p.target.as_nanos()),
            interval: codel_time(p.interval.as_nanos()),
            min_bytes: p.min_bytes,
            count: 0,
            last_count: 0,
            dropping: false,
            rec_inv_sqrt: REC_INV_SQRT_ONE,
            first_above_time: 0,
            drop_next: 0,
        }
    }

    /// `OkToDrop`: `item` was just taken; `queued_bytes` remain.
    fn ok_to_drop<T>(
        &mut self,
        item: Option<&Item<T>>,
        now: Time,
        now_c: u32,
        queued_bytes: u64,
    ) -> bool {
        let Some(item) = item else {
            self.first_above_time = 0;
            return false;
        };
        let sojourn = codel_time(now.since(item.enqueued_at).as_nanos());
        if before(sojourn, self.target) || queued_bytes < u64::from(self.min_bytes) {
            // Went below: we'll stay below for at least an interval.
            self.first_above_time = 0;
            return false;
        }
        if self.first_above_time == 0 {
            // Just went above: it must stay above for an interval first.
            self.first_above_time = now_c.wrapping_add(self.interval);
            false
        } else {
            after(now_c, self.first_above_time)
        }
    }

    /// `DoDequeue`: take the next packet from `fifo` at `now`. Packets the
    /// control law drops are appended to `dropped`; every packet taken from
    /// the FIFO is either in `dropped` or returned.
    pub(crate) fn dequeue<T>(
        &mut self,
        now: Time,
        fifo: &mut Fifo<T>,
        dropped: &mut Vec<Item<T>>,
    ) -> Option<Item<T>> {
        let Some(first) = fifo.pop() else {
            // Leave dropping state when the queue is empty.
            self.dropping = false;
            return None;
        };
        let now_c = codel_time(now.0);
        let ok = self.ok_to_drop(Some(&first), now, now_c, fifo.bytes());
        let mut item = Some(first);
        if self.dropping {
            if !ok {
                // Sojourn time fell below target: leave the dropping state.
                self.dropping = false;
            } else {
                while self.dropping && after_eq(now_c, self.drop_next) {
                    self.count = self.count.wrapping_add(1);
                    self.rec_inv_sqrt = newton_step(self.rec_inv_sqrt, self.count);
                    dropped.extend(item.take());
                    item = fifo.pop();
                    if !self.ok_to_drop(item.as_ref(), now, now_c, fifo.bytes()) {
                        self.dropping = false;
                    } else {
                        self.drop_next =
                            control_law(self.drop_next, self.interval, self.rec_inv_sqrt);
                    }
                }
            }
        } else if ok {
            // Drop the first packet and enter the dropping state.
            dropped.extend(item.take());
            item = fifo.pop();
            self.ok_to_drop(item.as_ref(), now, now_c, fifo.bytes());
            self.dropping = true;
            // `int delta = m_count - m_lastCount` (unsigned difference read as int).
            let delta = self.count.wrapping_sub(self.last_count) as i32;
            let since_drop_next = now_c.wrapping_sub(self.drop_next);
            if delta > 1 && before(since_drop_next, self.interval.wrapping_mul(16)) {
                self.count = delta as u32;
                self.rec_inv_sqrt = newton_step(self.rec_inv_sqrt, self.count);
            } else {
                self.count = 1;
                self.rec_inv_sqrt = REC_INV_SQRT_ONE;
            }
            self.last_count = self.count;
            self.drop_next = control_law(now_c, self.interval, self.rec_inv_sqrt);
        }
        item
    }

    /// Whether `OkToDrop` refuses a packet with a sojourn of 0 and no bytes
    /// behind it: a target of at least one CoDel time unit, or a positive
    /// `MinBytes`.
    pub(crate) fn keeps_lone_packet(&self) -> bool {
        before(0, self.target) || self.min_bytes > 0
    }

    /// `DoDequeue` of a queue holding one packet enqueued at the same time,
    /// when [`CoDelState::keeps_lone_packet`]: `OkToDrop` refuses (and resets
    /// `first_above_time`), so CoDel leaves the dropping state and returns it.
    pub(crate) fn keep_lone_packet(&mut self) {
        self.first_above_time = 0;
        self.dropping = false;
    }

    /// `DoDequeue` of an empty queue: leave the dropping state.
    pub(crate) fn leave_dropping(&mut self) {
        self.dropping = false;
    }

    pub(crate) fn count(&self) -> u32 {
        self.count
    }
    pub(crate) fn last_count(&self) -> u32 {
        self.last_count
    }
    pub(crate) fn dropping(&self) -> bool {
        self.dropping
    }
    pub(crate) fn drop_next(&self) -> u32 {
        self.drop_next
    }
}

/// `ns3::CoDelQueueDisc`.
pub struct CoDel<T> {
    params: CoDelParams,
    state: CoDelState,
    fifo: Fifo<T>,
    stats: Stats,
    dropped: Vec<Dropped<T>>,
    scratch: Vec<Item<T>>,
}

impl<T> CoDel<T> {
    pub fn new(params: CoDelParams) -> Self {
        CoDel {
            state: CoDelState::new(&params),
            params,
            fifo: Fifo::default(),
            stats: Stats::default(),
            dropped: Vec::new(),
            scratch: Vec::new(),
        }
    }

    /// Drops since entering the dropping state (ns-3 trace source `Count`).
    pub fn count(&self) -> u32 {
        self.state.count()
    }
    /// `LastCount`.
    pub fn last_count(&self) -> u32 {
        self.state.last_count()
    }
    /// `DropState`.
    pub fn dropping(&self) -> bool {
        self.state.dropping()
    }
    /// `DropNext`, in CoDel time units (ns >> 10).
    pub fn drop_next(&self) -> u32 {
        self.state.drop_next()
    }
}

impl<T> QueueDisc<T> for CoDel<T> {
    fn enqueue(&mut self, now: Time, mut item: Item<T>) -> Result<(), Dropped<T>> {
        self.stats.received(item.bytes);
        // DoEnqueue: GetCurrentSize() + item > GetMaxSize() → OVERLIMIT_DROP.
        // (The internal DropTail queue has the same MaxSize and never refuses after this.)
        if self
            .params
            .limit
            .exceeded_by(self.fifo.len(), self.fifo.bytes(), item.bytes)
        {
            self.stats.dropped_before(DropReason::Overlimit, item.bytes);
            return Err(Dropped {
                item,
                reason: DropReason::Overlimit,
                at: now,
            });
        }
        item.enqueued_at = now;
        self.stats.enqueued(item.bytes);
        self.fifo.push(item);
        Ok(())
    }

    fn dequeue(&mut self, now: Time) -> Option<Item<T>> {
        let item = self.state.dequeue(now, &mut self.fifo, &mut self.scratch);
        for d in self.scratch.drain(..) {
            // Taken from the internal queue (PacketDequeued), then DropAfterDequeue.
            self.stats.dequeued(d.bytes);
            self.stats
                .dropped_after(DropReason::TargetExceeded, d.bytes);
            self.dropped.push(Dropped {
                item: d,
                reason: DropReason::TargetExceeded,
                at: now,
            });
        }
        if let Some(i) = &item {
            self.stats.dequeued(i.bytes);
        }
        item
    }

    fn len_packets(&self) -> usize {
        self.fifo.len()
    }

    fn len_bytes(&self) -> u64 {
        self.fifo.bytes()
    }

    fn stats(&self) -> &Stats {
        &self.stats
    }

    fn drain_drops(&mut self) -> Vec<Dropped<T>> {
        std::mem::take(&mut self.dropped)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A time exactly at CoDel unit `u` (u × 1024 ns).
    fn at_unit(u: u64) -> Time {
        Time(u << CODEL_SHIFT)
    }

    fn fill(q: &mut CoDel<u32>, now: Time, ids: std::ops::Range<u32>) {
        for id in ids {
            q.enqueue(now, Item::new(id, 1500)).unwrap();
        }
    }

    /// Dequeue at `now`; the returned id and the ids dropped on the way.
    fn deq(q: &mut CoDel<u32>, now: Time) -> (Option<u32>, Vec<u32>) {
        let got = q.dequeue(now).map(|i| i.payload);
        let dropped = q
            .drain_drops()
            .into_iter()
            .map(|d| d.item.payload)
            .collect();
        (got, dropped)
    }

    #[test]
    fn newton_step_and_control_law_by_hand() {
        // count 2 from rec = 0xFFFF: invsqrt = 0xFFFF << 16 = 2^32 − 2^16;
        // invsqrt² >> 32 = 2^32 − 2^17 + 1 = 4294836225;
        // val = 3·2^32 − 2·4294836225 = 4295229438, >> 2 = 1073807359;
        // × invsqrt >> 31 = 2·1073807359 − ceil(1073807359 / 2^15) = 2147614718 − 32770
        // = 2147581948; >> 16 = 32769 (≈ 0.50002).
        assert_eq!(newton_step(0xFFFF, 2), 32769);
        // count 3 from 32769: invsqrt = 2^31 + 2^16, invsqrt² >> 32 = 2^30 + 2^16 + 1
        // = 1073807361; val = 3·2^32 − 3·1073807361 = 9663479805, >> 2 = 2415869951;
        // × invsqrt >> 31 = 2415869951 + floor(2415869951 / 2^15 = 73726.49) = 2415943677;
        // >> 16 = 36864 (0.5625, the exact Newton iterate from 0.5).
        assert_eq!(newton_step(32769, 3), 36864);
        // count 4 from 36864 = 0.5625·2^16: 0.5625·(3 − 4·0.31640625)/2 = 0.48779296875
        // = 31968 / 2^16, exactly representable all the way.
        assert_eq!(newton_step(36864, 4), 31968);
        // ControlLaw spacing for Interval 100 ms = 100000000 >> 10 = 97656 units:
        // 97656·0xFFFF/2^16 = 97656 − 1.49 → 97654; 97656·32769/2^16 = 48829.49 → 48829;
        // 97656·0.5625 = 54931.5 → 54931; 97656·31968/2^16 = 47635.9 → 47635.
        assert_eq!(control_law(0, 97656, 0xFFFF), 97654);
        assert_eq!(control_law(0, 97656, 32769), 48829);
        assert_eq!(control_law(0, 97656, 36864), 54931);
        assert_eq!(control_law(0, 97656, 31968), 47635);
        assert_eq!(codel_time(100_000_000), 97656);
        assert_eq!(codel_time(5_000_000), 4882);
    }

    /// A standing queue of 1500 B packets enqueued at 0, dequeued so that the
    /// first four drops are hit exactly at their unit; packets 12..16 arrive at
    /// 313 ms and are still queued at the end.
    fn first_episode(q: &mut CoDel<u32>) {
        fill(q, Time::ZERO, 0..12);
        // 10 ms = 9765 units (10e6 / 1024 = 9765.6): sojourn 9765 ≥ target 4882 and
        // 11 × 1500 B remain ≥ MinBytes, first time above: first_above = 9765 + 97656
        // = 107421. No drop.
        assert_eq!(deq(q, Time(10_000_000)), (Some(0), vec![]));
        // At unit 107421 (109.999104 ms) now is not strictly after first_above: no drop.
        assert_eq!(deq(q, at_unit(107_421)), (Some(1), vec![]));
        assert!(!q.dropping());
        // One unit later: drop packet 2, return 3, enter dropping with count 1;
        // drop_next = 107422 + 97654 = 205076.
        assert_eq!(deq(q, at_unit(107_422)), (Some(3), vec![2]));
        assert!(q.dropping());
        assert_eq!((q.count(), q.last_count(), q.drop_next()), (1, 1, 205_076));
        // Just before drop_next: no drop.
        assert_eq!(deq(q, at_unit(205_075)), (Some(4), vec![]));
        // At drop_next: count 2 (rec 32769), drop 5, return 6;
        // drop_next = 205076 + 48829 = 253905.
        assert_eq!(deq(q, at_unit(205_076)), (Some(6), vec![5]));
        assert_eq!((q.count(), q.drop_next()), (2, 253_905));
        assert_eq!(deq(q, at_unit(253_904)), (Some(7), vec![]));
        // count 3 (rec 36864): drop 8, return 9; drop_next = 253905 + 54931 = 308836.
        assert_eq!(deq(q, at_unit(253_905)), (Some(9), vec![8]));
        assert_eq!((q.count(), q.drop_next()), (3, 308_836));
        // Fresh packets so that MinBytes still holds after packet 11 leaves.
        fill(q, Time(313_000_000), 12..16);
        // count 4 (rec 31968): drop 10, return 11; drop_next = 308836 + 47635 = 356471.
        assert_eq!(deq(q, at_unit(308_836)), (Some(11), vec![10]));
        assert_eq!((q.count(), q.last_count(), q.drop_next()), (4, 1, 356_471));
    }

    #[test]
    fn codel_control_law_drop_times() {
        // Drop times in units: t0 = 107422, then + 97654, + 48829, + 54931:
        // 110.000128 ms, 209.997824 ms, 259.99872 ms, 316.248064 ms. The textbook
        // t0 + interval/sqrt(count) spacing would be 97656, 69053, 56382 units.
        let mut q = CoDel::new(CoDelParams::default());
        first_episode(&mut q);
        let s = q.stats();
        assert_eq!(s.dropped(DropReason::TargetExceeded), (4, 6000));
        // 12 packets taken from the FIFO: 8 sent, 4 dropped after dequeue.
        assert_eq!((s.dequeued_packets, s.sent_packets()), (12, 8));
    }

    #[test]
    fn codel_leaves_dropping_state_when_sojourn_falls_below_target() {
        let mut q = CoDel::new(CoDelParams::default());
        first_episode(&mut q);
        // 317 ms: packet 12 (enqueued at 313 ms) waited 4 ms = 3906 units < 4882:
        // leave the dropping state, no drop, even though now (309570) < drop_next.
        assert_eq!(deq(&mut q, Time(317_000_000)), (Some(12), vec![]));
        assert!(!q.dropping());
        assert_eq!(q.count(), 4);
    }

    #[test]
    fn codel_reentering_soon_reuses_the_drop_count() {
        let mut q = CoDel::new(CoDelParams::default());
        first_episode(&mut q);
        assert_eq!(deq(&mut q, Time(317_000_000)), (Some(12), vec![]));
        fill(&mut q, Time(318_000_000), 16..26);
        // 320 ms = unit 312500 exactly: packet 13 waited 7 ms (6835 units) ≥ target,
        // 12 packets remain: first_above = 312500 + 97656 = 410156. No drop.
        assert_eq!(deq(&mut q, Time(320_000_000)), (Some(13), vec![]));
        // Unit 410157: drop 14, return 15, re-enter. delta = count − last_count
        // = 4 − 1 = 3 > 1 and now − drop_next = 410157 − 356471 = 53686 < 16 × 97656:
        // count = 3, rec = NewtonStep(31968, 3): 31968² = 1021953024,
        // 3·2^32 − 3·1021953024 = 9819042816, >> 2 = 2454760704,
        // × 31968·2^16 >> 31 = 2454760704·31968 / 2^15 = 2394830022, >> 16 = 36542.
        // drop_next = 410157 + 97656·36542/2^16 (= 54451.9 → 54451) = 464608.
        assert_eq!(deq(&mut q, at_unit(410_157)), (Some(15), vec![14]));
        assert!(q.dropping());
        assert_eq!((q.count(), q.last_count(), q.drop_next()), (3, 3, 464_608));
    }

    #[test]
    fn codel_reentering_after_16_intervals_restarts_at_count_one() {
        let mut q = CoDel::new(CoDelParams::default());
        first_episode(&mut q);
        assert_eq!(deq(&mut q, Time(317_000_000)), (Some(12), vec![]));
        fill(&mut q, Time(318_000_000), 16..26);
        // 2010 ms = unit 1962890 (2010e6 / 1024 = 1962890.6): packet 13 is above target,
        // first_above = 1962890 + 97656 = 2060546.
        assert_eq!(deq(&mut q, Time(2_010_000_000)), (Some(13), vec![]));
        // Unit 2060547: now − drop_next = 2060547 − 356471 = 1704076 ≥ 16 × 97656 = 1562496,
        // so count = 1 although delta = 3; drop_next = 2060547 + 97654 = 2158201.
        assert_eq!(deq(&mut q, at_unit(2_060_547)), (Some(15), vec![14]));
        assert_eq!(
            (q.count(), q.last_count(), q.drop_next()),
            (1, 1, 2_158_201)
        );
    }

    #[test]
    fn codel_needs_min_bytes_queued_to_drop() {
        let mut q = CoDel::new(CoDelParams::default());
        for id in 0..3 {
            q.enqueue(Time::ZERO, Item::new(id, 700)).unwrap();
        }
        // After taking a packet only 1400 then 700 bytes remain (< MinBytes 1500):
        // never above target in CoDel's eyes, however long the sojourn.
        assert_eq!(deq(&mut q, Time(10_000_000)), (Some(0), vec![]));
        assert_eq!(deq(&mut q, Time(500_000_000)), (Some(1), vec![]));
        assert_eq!(deq(&mut q, Time(900_000_000)), (Some(2), vec![]));
        assert_eq!(q.stats().dropped_packets(), 0);
        // Empty: dequeue returns nothing and leaves the dropping state.
        assert_eq!(deq(&mut q, Time(900_000_001)), (None, vec![]));
    }

    #[test]
    fn codel_default_limit_is_1500_kb() {
        let mut q = CoDel::new(CoDelParams::default());
        // 1000 × 1500 B = 1500000 B fills MaxSize exactly; one more byte does not fit.
        fill(&mut q, Time::ZERO, 0..1000);
        let d = q.enqueue(Time::ZERO, Item::new(1000, 1)).unwrap_err();
        assert_eq!(d.reason, DropReason::Overlimit);
        assert_eq!(q.len_bytes(), 1_500_000);
        assert_eq!(q.stats().dropped(DropReason::Overlimit), (1, 1));
    }
}
