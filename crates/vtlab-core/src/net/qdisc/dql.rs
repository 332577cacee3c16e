//! Byte queue limits: Linux's dynamic queue limits (`lib/dynamic_queue_limits.c`)
//! as ns-3.44's `DynamicQueueLimits` (`src/network/utils/dynamic-queue-limits.cc`)
//! transcribes them, including its 32-bit counters.
//!
//! The device queue reports the bytes it takes ([`Dql::queued`]) and the bytes
//! it hands to the transmitter ([`Dql::completed`]); while
//! [`Dql::available`] is negative the device stops the queue disc. The limit
//! grows when the queue ran dry while over its limit (starved) and shrinks, at
//! most once per `hold_time`, by the smallest slack seen meanwhile.

use crate::engine::{Duration, Time};

/// `DQL_MAX_OBJECT` and `DQL_MAX_LIMIT` of ns-3 (and Linux).
const DQL_MAX_OBJECT: u32 = u32::MAX / 16;
pub const DQL_MAX_LIMIT: u32 = u32::MAX / 2 - DQL_MAX_OBJECT;

/// Attributes of `ns3::DynamicQueueLimits`.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DqlParams {
    /// `HoldTime`: default 1 s.
    pub hold_time: Duration,
    /// `MinLimit`: default 0 bytes.
    pub min_limit: u32,
    /// `MaxLimit`: default `DQL_MAX_LIMIT`.
    pub max_limit: u32,
}

impl Default for DqlParams {
    fn default() -> Self {
        DqlParams {
            hold_time: Duration::from_millis(1000),
            min_limit: 0,
            max_limit: DQL_MAX_LIMIT,
        }
    }
}

/// `DynamicQueueLimits`.
#[derive(Clone, Debug)]
pub struct Dql {
    params: DqlParams,
    num_queued: u32,
    adj_limit: u32,
    last_obj_cnt: u32,
    limit: u32,
    num_completed: u32,
    prev_ovlimit: u32,
    prev_num_queued: u32,
    prev_last_obj_cnt: u32,
    lowest_slack: u32,
    slack_start_time: Time,
}

/// `Posdiff`: max(a − b, 0) in ns-3's `int32_t`.
fn posdiff(a: u32, b: u32) -> u32 {
    (a as i32).wrapping_sub(b as i32).max(0) as u32
}

impl Dql {
    /// `Reset` at `now` (ns-3 constructs it when the helper installs it).
    pub fn new(params: DqlParams, now: Time) -> Self {
        Dql {
            params,
            num_queued: 0,
            adj_limit: 0,
            last_obj_cnt: 0,
            limit: 0,
            num_completed: 0,
            prev_ovlimit: 0,
            prev_num_queued: 0,
            prev_last_obj_cnt: 0,
            lowest_slack: u32::MAX,
            slack_start_time: now,
        }
    }

    /// The current limit in bytes (`m_limit`).
    pub fn limit(&self) -> u32 {
        self.limit
    }

    /// `Available`: bytes that may still be queued; negative stops the queue.
    pub fn available(&self) -> i32 {
        self.adj_limit.wrapping_sub(self.num_queued) as i32
    }

    /// `Queued`: the device queue took `count` bytes.
    pub fn queued(&mut self, count: u32) {
        self.last_obj_cnt = count;
        self.num_queued = self.num_queued.wrapping_add(count);
    }

    /// `Completed`: `count` bytes left the device queue at `now`.
    pub fn completed(&mut self, now: Time, count: u32) {
        let num_queued = self.num_queued;
        let completed = self.num_completed.wrapping_add(count);
        let mut limit = self.limit;
        let mut ovlimit = posdiff(num_queued.wrapping_sub(self.num_completed), limit);
        let inprogress = num_queued.wrapping_sub(completed);
        let prev_inprogress = self.prev_num_queued.wrapping_sub(self.num_completed);
        let all_prev_completed = (completed.wrapping_sub(self.prev_num_queued) as i32) >= 0;
        if (ovlimit != 0 && inprogress == 0) || (self.prev_ovlimit != 0 && all_prev_completed) {
            // Starved: grow by what was sent and completed in the last
            // interval, plus the previous over-limit.
            limit = limit
                .wrapping_add(posdiff(completed, self.prev_num_queued))
                .wrapping_add(self.prev_ovlimit);
            self.slack_start_time = now;
            self.lowest_slack = u32::MAX;
        } else if inprogress != 0 && prev_inprogress != 0 && !all_prev_completed {
            // Busy the whole interval: shrink by the lowest slack seen over
            // the hold time.
            let mut slack = posdiff(
                limit.wrapping_add(self.prev_ovlimit),
                2u32.wrapping_mul(completed.wrapping_sub(self.num_completed)),
            );
            let slack_last_objs = if self.prev_ovlimit != 0 {
                posdiff(self.prev_last_obj_cnt, self.prev_ovlimit)
            } else {
                0
            };
            slack = slack.max(slack_last_objs);
            if slack < self.lowest_slack {
                self.lowest_slack = slack;
            }
            if now > self.slack_start_time + self.params.hold_time {
                limit = posdiff(limit, self.lowest_slack);
                self.slack_start_time = now;
                self.lowest_slack = u32::MAX;
            }
        }
        limit = limit.max(self.params.min_limit).min(self.params.max_limit);
        if limit != self.limit {
            self.limit = limit;
            ovlimit = 0;
        }
        self.adj_limit = limit.wrapping_add(completed);
        self.prev_ovlimit = ovlimit;
        self.prev_last_obj_cnt = self.last_obj_cnt;
        self.num_completed = completed;
        self.prev_num_queued = num_queued;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limit_starts_at_zero_and_grows_when_the_queue_starves() {
        // Reset: limit 0, so one queued packet makes Available = 0 − 1502 < 0.
        let mut d = Dql::new(DqlParams::default(), Time::ZERO);
        assert_eq!(d.available(), 0);
        d.queued(1502);
        assert_eq!(d.available(), -1502);
        // It is sent: ovlimit = posdiff(1502 − 0, 0) = 1502 and nothing is in
        // progress, so the queue starved: limit += posdiff(1502, 0) + 0 = 1502.
        // adj_limit = 1502 + 1502; Available = 3004 − 1502 = 1502.
        d.completed(Time(1_000), 1502);
        assert_eq!(d.limit(), 1502);
        assert_eq!(d.available(), 1502);
        // Two more queued (3004 in all ahead of completions: 1502 over the
        // limit), one completed with one still in progress: not starved;
        // previous over-limit 0 and all previous completed (completed 3004 ≥
        // prev_num_queued 1502), so no decrease either.
        d.queued(1502);
        d.queued(1502);
        assert_eq!(d.available(), -1502);
        d.completed(Time(2_000), 1502);
        assert_eq!(d.limit(), 1502);
        // adj_limit = 1502 + 3004 = 4506; queued 4506: Available 0.
        assert_eq!(d.available(), 0);
    }

    #[test]
    fn a_busy_queue_sheds_its_lowest_slack_after_the_hold_time() {
        // A limit of 10 000 bytes with the queue always busy and never over
        // it: each completion of 1000 B with 5000 B queued ahead computes
        // slack = posdiff(limit + 0, 2 · 1000) = 8000; after HoldTime (1 s)
        // the limit drops by the lowest slack, to 2000.
        let mut d = Dql::new(
            DqlParams {
                min_limit: 10_000,
                ..DqlParams::default()
            },
            Time::ZERO,
        );
        for _ in 0..5 {
            d.queued(1000);
        }
        d.completed(Time(1), 1000); // starved rule not met; limit clamps to 10 000
        assert_eq!(d.limit(), 10_000);
        d.params.min_limit = 0;
        for t in 2..5 {
            d.queued(1000);
            d.completed(Time(t), 1000);
        }
        assert_eq!(d.limit(), 10_000, "within the hold time");
        d.queued(1000);
        d.completed(Time(1_000_000_001 + 5), 1000);
        assert_eq!(d.limit(), 2000);
    }
}
