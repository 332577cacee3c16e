//! Serving a FIFO from a capacity schedule: a sequence of delivery
//! opportunities (time, bytes), from a trace or from the channel model.
//!
//! Semantics (mahimahi's `LinkQueue`): at an opportunity of B bytes, the
//! packets waiting at that time are served in order, a packet leaving when
//! its last byte has been served; a packet larger than what is left continues
//! at the next opportunity; bytes that no waiting packet uses are lost (the
//! capacity does not accumulate while the queue is empty). A packet that
//! arrives at time t may use opportunities at t or later.
//!
//! Because the schedule does not depend on the traffic and the queue is FIFO,
//! a packet's departure time is known when it is enqueued: the server keeps a
//! cursor (the current opportunity and the bytes left in it) after the last
//! accepted packet, exactly as a point-to-point link keeps `busy_until`.

use std::sync::Arc;

use crate::engine::Time;

/// Nanoseconds per millisecond.
const MS: u64 = 1_000_000;

/// One delivery opportunity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Opportunity {
    pub time: Time,
    pub bytes: u32,
    /// The transport block of this opportunity failed every HARQ attempt: the
    /// packets that complete in it are lost (channel model only).
    pub lost: bool,
}

/// Where the opportunities come from.
pub trait OpportunitySource {
    /// The first opportunity at or after `t`, and every later call of
    /// [`OpportunitySource::next`] continues from it.
    fn seek(&mut self, t: Time) -> Opportunity;
    /// The opportunity after the last one returned.
    fn next(&mut self) -> Opportunity;
}

impl<S: OpportunitySource + ?Sized> OpportunitySource for Box<S> {
    fn seek(&mut self, t: Time) -> Opportunity {
        (**self).seek(t)
    }
    fn next(&mut self) -> Opportunity {
        (**self).next()
    }
}

/// A mahimahi trace, repeated with its last timestamp as the period.
#[derive(Clone, Debug)]
pub struct TraceSource {
    times_ms: Arc<[u64]>,
    bytes: u32,
    /// Index of the last opportunity returned (over all repetitions).
    k: u64,
}

impl TraceSource {
    /// `times_ms` must be non-empty, non-decreasing, with a positive last
    /// element (as [`super::trace::parse_mahimahi`] returns them).
    pub fn new(times_ms: Arc<[u64]>, opportunity_bytes: u32) -> Self {
        TraceSource {
            times_ms,
            bytes: opportunity_bytes,
            k: 0,
        }
    }

    fn period_ns(&self) -> u64 {
        self.times_ms[self.times_ms.len() - 1] * MS
    }

    fn at(&self, k: u64) -> Opportunity {
        let n = self.times_ms.len() as u64;
        Opportunity {
            time: Time((k / n) * self.period_ns() + self.times_ms[(k % n) as usize] * MS),
            bytes: self.bytes,
            lost: false,
        }
    }
}

impl OpportunitySource for TraceSource {
    fn seek(&mut self, t: Time) -> Opportunity {
        let n = self.times_ms.len();
        let period = self.period_ns();
        // The last timestamp equals the period, so repetition r ends at
        // (r + 1)·period: start the search one repetition early.
        let mut rep = (t.0 / period).saturating_sub(1);
        loop {
            let base = rep * period;
            let idx = self.times_ms.partition_point(|&ms| base + ms * MS < t.0);
            if idx < n {
                self.k = rep * n as u64 + idx as u64;
                return self.at(self.k);
            }
            rep += 1;
        }
    }

    fn next(&mut self) -> Opportunity {
        self.k += 1;
        self.at(self.k)
    }
}

/// Where a FIFO's next packet starts: the opportunity the last packet ended
/// in, and the bytes left in it.
#[derive(Default)]
pub(super) struct Fill {
    cursor: Option<Opportunity>,
    left: u32,
}

/// What a [`Fill`] draws its opportunities from.
pub(super) trait Feed {
    /// The first opportunity a packet arriving at `now` may use when the
    /// queue's last opportunity is spent or already past.
    fn first(&mut self, now: Time) -> Opportunity;
    /// The opportunity after the last one returned.
    fn next(&mut self, now: Time) -> Opportunity;
    /// `bytes` of a packet were served in the opportunity at `t`.
    fn took(&mut self, _t: Time, _bytes: u32) {}
}

impl Fill {
    /// Serve a packet of `bytes` bytes that joins the queue at `now`, after
    /// every packet accepted before it.
    pub(super) fn serve(&mut self, feed: &mut impl Feed, now: Time, bytes: u32) -> Service {
        let mut op = match self.cursor {
            // The queue is not empty, or the current opportunity is still ahead.
            Some(op) if op.time >= now && self.left > 0 => op,
            _ => {
                let op = feed.first(now);
                self.left = op.bytes;
                op
            }
        };
        let start = op.time;
        let mut remaining = bytes;
        loop {
            let take = remaining.min(self.left);
            remaining -= take;
            self.left -= take;
            feed.took(op.time, take);
            if remaining == 0 {
                self.cursor = Some(op);
                return Service {
                    start,
                    end: op.time,
                    lost: op.lost,
                };
            }
            op = feed.next(now);
            self.left = op.bytes;
        }
    }
}

/// A schedule that does not depend on the traffic feeds a FIFO directly.
struct Direct<'a, S>(&'a mut S);

impl<S: OpportunitySource> Feed for Direct<'_, S> {
    fn first(&mut self, now: Time) -> Opportunity {
        self.0.seek(now)
    }
    fn next(&mut self, _now: Time) -> Opportunity {
        self.0.next()
    }
}

/// The serving state of one link direction.
pub struct Server<S> {
    source: S,
    fill: Fill,
}

/// Where a packet's service begins and ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Service {
    /// The opportunity its first byte uses.
    pub start: Time,
    /// The opportunity its last byte uses: it leaves then.
    pub end: Time,
    /// It completed in a lost transport block.
    pub lost: bool,
}

impl<S: OpportunitySource> Server<S> {
    pub fn new(source: S) -> Self {
        Server {
            source,
            fill: Fill::default(),
        }
    }

    /// Serve a packet of `bytes` bytes that joins the queue at `now`, after
    /// every packet accepted before it.
    pub fn serve(&mut self, now: Time, bytes: u32) -> Service {
        let service = self.fill.serve(&mut Direct(&mut self.source), now, bytes);
        if self.fill.left == 0 {
            // Step past a spent opportunity now: a later packet must not seek
            // back into it (a trace may list several at the same millisecond).
            let op = self.source.next();
            self.fill.left = op.bytes;
            self.fill.cursor = Some(op);
        }
        service
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(times: &[u64], bytes: u32) -> Server<TraceSource> {
        Server::new(TraceSource::new(times.into(), bytes))
    }

    const fn ms(x: u64) -> Time {
        Time(x * MS)
    }

    #[test]
    fn one_packet_per_opportunity() {
        // Opportunities at 1, 1, 3, 7 ms (period 7 ms) of 1504 B; 1504 B packets
        // all arriving at 0 leave at 1, 1, 3, 7, then 8, 8, 10 (next period).
        let mut s = server(&[1, 1, 3, 7], 1504);
        let ends: Vec<Time> = (0..7).map(|_| s.serve(Time(0), 1504).end).collect();
        assert_eq!(ends, [1, 1, 3, 7, 8, 8, 10].map(ms));
    }

    #[test]
    fn small_packets_share_an_opportunity_and_large_ones_span_several() {
        let mut s = server(&[1, 2, 3, 4], 1504);
        // 3 × 500 B fit in the first opportunity (1500 ≤ 1504): all leave at 1 ms.
        for _ in 0..3 {
            assert_eq!(s.serve(Time(0), 500).end, ms(1));
        }
        // 4 B are left at 1 ms; a 1504 B packet takes them and 1500 B at 2 ms.
        let sv = s.serve(Time(0), 1504);
        assert_eq!((sv.start, sv.end), (ms(1), ms(2)));
        // 4 B left at 2 ms; a 3000 B packet: 4 + 1504 (3 ms) + 1492 (4 ms).
        assert_eq!(s.serve(Time(0), 3000).end, ms(4));
    }

    #[test]
    fn unused_capacity_is_lost_while_the_queue_is_empty() {
        let mut s = server(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 1504);
        assert_eq!(s.serve(Time(0), 100).end, ms(1));
        // Arriving at 4.5 ms: the opportunities at 1 (rest), 2, 3, 4 are gone.
        assert_eq!(s.serve(Time(4_500_000), 1504).end, ms(5));
        // Arriving exactly at an opportunity's time may use it.
        assert_eq!(s.serve(ms(7), 1504).end, ms(7));
        // 12 ms is in the second period (10 ms): opportunities at 11, 12, ...
        assert_eq!(s.serve(ms(12), 1).end, ms(12));
    }

    #[test]
    fn a_waiting_packet_keeps_the_rest_of_the_current_opportunity() {
        let mut s = server(&[10, 20], 1504);
        assert_eq!(s.serve(Time(0), 1000).end, ms(10));
        // Joins at 5 ms behind it: the 504 B left at 10 ms, then 20 ms.
        assert_eq!(s.serve(ms(5), 1000).end, ms(20));
        // After 20 ms the queue is empty; 30 ms is the next period's 10 ms.
        assert_eq!(s.serve(ms(21), 10).end, ms(30));
    }

    #[test]
    fn seek_over_many_periods() {
        // Period 3 ms, opportunities at 2 and 3 of each period.
        let mut src = TraceSource::new([2u64, 3].as_slice().into(), 1504);
        assert_eq!(src.seek(ms(3_000_000 + 1)).time, ms(3_000_002));
        assert_eq!(src.next().time, ms(3_000_003));
        assert_eq!(src.next().time, ms(3_000_005));
        assert_eq!(src.seek(ms(3)).time, ms(3));
    }
}
