//! RED (Floyd and Jacobson 1993, with gentle mode and count-based
//! uniformization) as ns-3.44's `RedQueueDisc`
//! (`src/traffic-control/model/red-queue-disc.cc`, itself after ns-2's RED).
//!
//! All decisions are made at enqueue. The rules, with the ns-3 function each
//! comes from:
//! * Average queue (`DoEnqueue`, `Estimator`): before each arrival,
//!   `avg ← avg·(1 − qW)^(m+1) + qW·q`, with q the queue length before the
//!   arrival (packets or bytes, the `MaxSize` unit) and m the number of
//!   packets that could have been sent while the queue was idle:
//!   `m = uint32(ptc × idle seconds)`, `ptc = LinkBandwidth / (8 × MeanPktSize)`.
//!   The queue counts as idle from a dequeue that found it empty
//!   (`DoDequeue`) until the next arrival; it starts idle at time 0.
//! * Every arrival increments `count` (and `count_bytes`).
//! * If `avg ≥ MinTh` and q > 1:
//!   - forced drop if `avg ≥ 2·MaxTh` (gentle) or `avg ≥ MaxTh` (not gentle);
//!   - else, the first arrival after crossing MinTh only resets `count` to 1
//!     (`m_old == 0`);
//!   - else an early drop with probability `ModifyP(CalculatePNew())`
//!     (`DropEarly`) against a uniform draw, which resets `count` to 0.
//! * Otherwise (avg < MinTh or q ≤ 1) the drop probability is 0 and `m_old`
//!   is cleared.
//! * `CalculatePNew`: between MinTh and MaxTh, `p = maxP·(avg − MinTh)/(MaxTh − MinTh)`
//!   with `maxP = 1/LInterm`; gentle, between MaxTh and 2·MaxTh,
//!   `p = (1 − maxP)/MaxTh·avg + 2·maxP − 1` (maxP at MaxTh, 1 at 2·MaxTh);
//!   at most 1.
//! * `ModifyP` (uniformization): with `Wait`, p = 0 while count·p < 1,
//!   p/(2 − count·p) while count·p < 2, else 1; without `Wait`,
//!   p/(1 − count·p) while count·p < 1, else 1. In byte mode count is
//!   `count_bytes / MeanPktSize` (integer division) and p is scaled by
//!   size / MeanPktSize.
//! * A packet passing all that may still find the internal DropTail queue
//!   full ("Dropped by internal queue").
//!
//! Defaults (`GetTypeId`): MinTh 5, MaxTh 15, MaxSize 25 packets, QW 0.002,
//! LInterm 50, MeanPktSize 500, Gentle and Wait true, LinkBandwidth 1.5 Mbit/s,
//! LinkDelay 20 ms. ns-3 does not take LinkBandwidth from the device: unless
//! set, the idle decay assumes 1.5 Mbit/s. Adaptive variants (ARED,
//! AdaptMaxP, FengAdaptive, NLRED), ECN and the `cautious` modes (fixed at 0
//! by `InitializeParams`) are not modelled.

use super::{seconds, DropReason, Dropped, Fifo, Item, Limit, QueueDisc, Stats, UniformSource};
use crate::engine::{Duration, RngStream, Time};

/// Attributes of `ns3::RedQueueDisc` (no ECN; Feng's adaptive RED and
/// nonlinear RED are not modelled).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RedParams {
    /// `MaxSize`: default 25 packets.
    pub limit: Limit,
    /// `MeanPktSize`: default 500 bytes.
    pub mean_pkt_size: u32,
    /// `Wait`: wait between dropped packets. Default true.
    pub wait: bool,
    /// `Gentle`: default true.
    pub gentle: bool,
    /// `MinTh`: default 5 (packets or bytes, the `limit` unit).
    pub min_th: f64,
    /// `MaxTh`: default 15.
    pub max_th: f64,
    /// `QW`: default 0.002; 0, −1 and −2 select ns-3's automatic settings.
    pub q_w: f64,
    /// `LInterm`: 1/maxP. Default 50.
    pub l_interm: f64,
    /// `LinkBandwidth`, bit/s: default 1.5 Mbit/s.
    pub link_bandwidth_bps: u64,
    /// `LinkDelay`: default 20 ms (used only when `q_w` is −1).
    pub link_delay: Duration,
    /// `TargetDelay`: default 5 ms (used only when MinTh = MaxTh = 0).
    pub target_delay: Duration,
    /// `Ns1Compat`: default false.
    pub ns1_compat: bool,
    /// `ARED`: Adaptive RED (Floyd, Gummadi and Shenker 2001): MinTh, MaxTh and
    /// QW set automatically, and maxP adapted (`AdaptMaxP`). Default false.
    pub ared: bool,
    /// `AdaptMaxP`: adapt maxP every `Interval` to keep the average queue
    /// between MinTh and MaxTh (`UpdateMaxP`). Default false.
    pub adapt_max_p: bool,
    /// `Interval`: default 0.5 s.
    pub interval: Duration,
    /// `Top`, `Bottom`: bounds of the adapted maxP. Defaults 0.5 and 0 (0:
    /// min(0.01, 8·MeanPktSize·Rtt/LinkBandwidth)).
    pub top: f64,
    pub bottom: f64,
    /// `Alpha` (additive increase of maxP), `Beta` (its multiplicative
    /// decrease). Defaults 0.01, 0.9.
    pub alpha: f64,
    pub beta: f64,
    /// `Rtt`, for the automatic `Bottom`: default 100 ms.
    pub rtt: Duration,
}

impl RedParams {
    /// The lower bound of the adapted maxP: `bottom`, or with `bottom` 0
    /// ns-3's automatic one, at most 1/W with W the bandwidth-delay product
    /// in packets of a connection: min(0.01, 8 · MeanPktSize · Rtt /
    /// LinkBandwidth).
    pub fn bottom_in_use(&self) -> f64 {
        if self.bottom == 0.0 {
            let bottom1 = 8.0 * f64::from(self.mean_pkt_size) * seconds(self.rtt)
                / self.link_bandwidth_bps as f64;
            bottom1.min(0.01)
        } else {
            self.bottom
        }
    }
}

impl Default for RedParams {
    fn default() -> Self {
        RedParams {
            limit: Limit::Packets(25),
            mean_pkt_size: 500,
            wait: true,
            gentle: true,
            min_th: 5.0,
            max_th: 15.0,
            q_w: 0.002,
            l_interm: 50.0,
            link_bandwidth_bps: 1_500_000,
            link_delay: Duration::from_millis(20),
            target_delay: Duration::from_millis(5),
            ns1_compat: false,
            ared: false,
            adapt_max_p: false,
            interval: Duration::from_millis(500),
            top: 0.5,
            bottom: 0.0,
            alpha: 0.01,
            beta: 0.9,
            rtt: Duration::from_millis(100),
        }
    }
}

/// `ns3::RedQueueDisc`.
pub struct Red<T> {
    params: RedParams,
    rng: Box<dyn UniformSource>,
    fifo: Fifo<T>,
    stats: Stats,
    // InitializeParams.
    min_th: f64,
    max_th: f64,
    q_w: f64,
    ptc: f64,
    v_a: f64,
    v_b: f64,
    v_c: f64,
    v_d: f64,
    cur_max_p: f64,
    adapt_max_p: bool,
    bottom: f64,
    // State.
    /// When maxP was last adapted (`m_lastSet`).
    last_set: Time,
    q_avg: f64,
    v_prob: f64,
    count: u32,
    count_bytes: u32,
    old: bool,
    idle: bool,
    idle_time: Time,
}

impl<T> Red<T> {
    pub fn new(params: RedParams, rng: RngStream) -> Self {
        Self::with_source(params, Box::new(rng))
    }

    /// As [`Red::new`] with any source of uniform draws (tests script them).
    pub fn with_source(params: RedParams, rng: Box<dyn UniformSource>) -> Self {
        // InitializeParams.
        let ptc = params.link_bandwidth_bps as f64 / (8.0 * f64::from(params.mean_pkt_size));
        // ARED sets MinTh, MaxTh and QW automatically and adapts maxP.
        let (mut min_th, mut max_th, q_w_param) = if params.ared {
            (0.0, 0.0, 0.0)
        } else {
            (params.min_th, params.max_th, params.q_w)
        };
        let adapt_max_p = params.ared || params.adapt_max_p;
        let bottom = params.bottom_in_use();
        if min_th == 0.0 && max_th == 0.0 {
            min_th = 5.0;
            let target_queue = seconds(params.target_delay) * ptc;
            if min_th < target_queue / 2.0 {
                min_th = target_queue / 2.0;
            }
            if params.limit.is_bytes() {
                min_th *= f64::from(params.mean_pkt_size);
            }
            max_th = 3.0 * min_th;
        }
        assert!(min_th <= max_th, "RED needs MinTh <= MaxTh");
        let mut th_diff = max_th - min_th;
        if th_diff == 0.0 {
            th_diff = 1.0;
        }
        let cur_max_p = 1.0 / params.l_interm;
        let (v_c, v_d) = if params.gentle {
            ((1.0 - cur_max_p) / max_th, 2.0 * cur_max_p - 1.0)
        } else {
            (0.0, 0.0)
        };
        let q_w = if q_w_param == 0.0 {
            1.0 - (-1.0 / ptc).exp()
        } else if q_w_param == -1.0 {
            let mut rtt = 3.0 * (seconds(params.link_delay) + 1.0 / ptc);
            if rtt < 0.1 {
                rtt = 0.1;
            }
            1.0 - (-1.0 / (10.0 * rtt * ptc)).exp()
        } else if q_w_param == -2.0 {
            1.0 - (-10.0 / ptc).exp()
        } else {
            q_w_param
        };
        Red {
            rng,
            fifo: Fifo::default(),
            stats: Stats::default(),
            min_th,
            max_th,
            q_w,
            ptc,
            v_a: 1.0 / th_diff,
            v_b: -min_th / th_diff,
            v_c,
            v_d,
            cur_max_p,
            adapt_max_p,
            bottom,
            last_set: Time::ZERO,
            q_avg: 0.0,
            v_prob: 0.0,
            count: 0,
            count_bytes: 0,
            old: false,
            idle: true,
            idle_time: Time::ZERO,
            params,
        }
    }

    /// The average queue length (`m_qAvg`), in the limit's unit.
    pub fn average(&self) -> f64 {
        self.q_avg
    }

    /// The drop probability used for the last early-drop decision (`m_vProb`).
    pub fn drop_probability(&self) -> f64 {
        self.v_prob
    }

    /// Arrivals since the last early drop (`m_count`).
    pub fn count(&self) -> u32 {
        self.count
    }

    /// The current maxP (`m_curMaxP`): 1/LInterm, or its adapted value.
    pub fn max_p(&self) -> f64 {
        self.cur_max_p
    }

    /// The thresholds in use (`m_minTh`, `m_maxTh`), after automatic setting.
    pub fn thresholds(&self) -> (f64, f64) {
        (self.min_th, self.max_th)
    }

    /// `UpdateMaxP`: AIMD on maxP to keep the average near the middle of
    /// [MinTh, MaxTh] (within 40 % of the range from either end).
    fn update_max_p(&mut self, new_avg: f64, now: Time) {
        let part = 0.4 * (self.max_th - self.min_th);
        if new_avg < self.min_th + part && self.cur_max_p > self.bottom {
            self.cur_max_p *= self.params.beta;
            self.last_set = now;
        } else if new_avg > self.max_th - part && self.params.top > self.cur_max_p {
            let alpha = self.params.alpha.min(0.25 * self.cur_max_p);
            self.cur_max_p += alpha;
            self.last_set = now;
        }
    }

    /// `CalculatePNew`.
    fn calculate_p_new(&self) -> f64 {
        let mut p = if self.params.gentle && self.q_avg >= self.max_th {
            // From maxP to 1 as avg goes from MaxTh to 2·MaxTh.
            self.v_c * self.q_avg + self.v_d
        } else if !self.params.gentle && self.q_avg >= self.max_th {
            1.0
        } else {
            (self.v_a * self.q_avg + self.v_b) * self.cur_max_p
        };
        if p > 1.0 {
            p = 1.0;
        }
        p
    }

    /// `ModifyP`.
    fn modify_p(&self, mut p: f64, size: u32) -> f64 {
        let bytes = self.params.limit.is_bytes();
        let count1 = if bytes {
            f64::from(self.count_bytes / self.params.mean_pkt_size)
        } else {
            f64::from(self.count)
        };
        if self.params.wait {
            if count1 * p < 1.0 {
                p = 0.0;
            } else if count1 * p < 2.0 {
                p /= 2.0 - count1 * p;
            } else {
                p = 1.0;
            }
        } else if count1 * p < 1.0 {
            p /= 1.0 - count1 * p;
        } else {
            p = 1.0;
        }
        if bytes && p < 1.0 {
            p = p * f64::from(size) / f64::from(self.params.mean_pkt_size);
        }
        if p > 1.0 {
            p = 1.0;
        }
        p
    }

    /// `DropEarly`: one uniform draw against the uniformized probability.
    fn drop_early(&mut self, size: u32) -> bool {
        let p = self.calculate_p_new();
        self.v_prob = self.modify_p(p, size);
        let u = self.rng.next_u01();
        if u <= self.v_prob {
            self.count = 0;
            self.count_bytes = 0;
            return true;
        }
        false
    }
}

impl<T> QueueDisc<T> for Red<T> {
    fn enqueue(&mut self, now: Time, mut item: Item<T>) -> Result<(), Dropped<T>> {
        self.stats.received(item.bytes);
        let n_queued = self
            .params
            .limit
            .current(self.fifo.len(), self.fifo.bytes());
        // Packets that could have been sent during the idle period.
        let mut m = 0u32;
        if self.idle {
            m = (self.ptc * seconds(now.since(self.idle_time))) as u32;
            self.idle = false;
        }
        // Estimator(nQueued, m + 1, qAvg, qW).
        self.q_avg = self.q_avg * (1.0 - self.q_w).powf(f64::from(m.wrapping_add(1)))
            + self.q_w * n_queued as f64;
        if self.adapt_max_p && now > self.last_set + self.params.interval {
            self.update_max_p(self.q_avg, now);
        }
        self.count = self.count.wrapping_add(1);
        self.count_bytes = self.count_bytes.wrapping_add(item.bytes);

        let mut reason = None;
        if self.q_avg >= self.min_th && n_queued > 1 {
            let forced = if self.params.gentle {
                self.q_avg >= 2.0 * self.max_th
            } else {
                self.q_avg >= self.max_th
            };
            if forced {
                reason = Some(DropReason::Forced);
            } else if !self.old {
                // Just crossed MinTh (or came back to a non-empty queue above it).
                self.count = 1;
                self.count_bytes = item.bytes;
                self.old = true;
            } else if self.drop_early(item.bytes) {
                reason = Some(DropReason::Unforced);
            }
        } else {
            self.v_prob = 0.0;
            self.old = false;
        }
        if reason == Some(DropReason::Forced) && self.params.ns1_compat {
            self.count = 0;
            self.count_bytes = 0;
        }
        // The internal DropTail queue (MaxSize = the queue disc's).
        if reason.is_none()
            && self
                .params
                .limit
                .exceeded_by(self.fifo.len(), self.fifo.bytes(), item.bytes)
        {
            reason = Some(DropReason::InternalQueue);
        }
        if let Some(reason) = reason {
            self.stats.dropped_before(reason, item.bytes);
            return Err(Dropped {
                item,
                reason,
                at: now,
            });
        }
        item.enqueued_at = now;
        self.stats.enqueued(item.bytes);
        self.fifo.push(item);
        Ok(())
    }

    fn dequeue(&mut self, now: Time) -> Option<Item<T>> {
        // DoDequeue: an empty queue starts an idle period.
        let Some(item) = self.fifo.pop() else {
            self.idle = true;
            self.idle_time = now;
            return None;
        };
        self.idle = false;
        self.stats.dequeued(item.bytes);
        Some(item)
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::qdisc::testutil::Scripted;

    fn red(params: RedParams, u: f64) -> Red<u32> {
        Red::with_source(params, Box::new(Scripted::constant(u)))
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs().max(1e-300)
    }

    #[test]
    fn red_average_is_an_ewma_with_idle_decay() {
        let mut q = red(RedParams::default(), 1.0);
        // qW = 0.002; three arrivals at t = 0 see queues of 0, 1, 2 packets (m = 0:
        // the queue starts idle at 0 and 375 pkt/s × 0 s = 0):
        // 0; 0·0.998 + 0.002·1 = 0.002; 0.002·0.998 + 0.002·2 = 0.005996.
        for id in 0..3 {
            q.enqueue(Time::ZERO, Item::new(id, 500)).unwrap();
        }
        assert!(close(q.average(), 0.005996), "{}", q.average());
        for _ in 0..3 {
            q.dequeue(Time(500_000_000)).unwrap();
        }
        // A dequeue finding the queue empty at 1 s starts an idle period.
        assert!(q.dequeue(Time(1_000_000_000)).is_none());
        // Arrival at 1.1 s: ptc = 1.5e6 / (8 × 500) = 375 pkt/s, m = uint32(375 × 0.1)
        // = 37, so avg = 0.005996 × 0.998^38 + 0.002 × 0, and
        // 0.998^38 = exp(38 ln 0.998) = exp(−0.0760761) = 0.9267457, avg = 0.0055568.
        q.enqueue(Time(1_100_000_000), Item::new(3, 500)).unwrap();
        let want = 0.005996 * 0.998f64.powf(38.0);
        assert!(close(q.average(), want));
        assert!((q.average() - 0.005_556_77).abs() < 1e-8, "{}", q.average());
    }

    /// qW = 1 makes the average the instantaneous queue: avg = q before the arrival.
    fn instantaneous(gentle: bool, wait: bool) -> RedParams {
        RedParams {
            limit: Limit::Packets(100),
            q_w: 1.0,
            gentle,
            wait,
            ..RedParams::default()
        }
    }

    #[test]
    fn red_count_uniformizes_the_drop_probability() {
        // MinTh 5, MaxTh 15, maxP 1/50 = 0.02, Wait. Every draw is u = 0.015.
        let mut q = red(instantaneous(true, true), 0.015);
        // Arrivals 0..=4 see avg 0..4 < MinTh. Arrival 5 sees avg 5: count := 1.
        // Arrivals 6..=9: count 2..5, p_b = (avg − 5)/10 × 0.02 ≤ 0.008, count·p_b < 1 → 0.
        for id in 0..10 {
            q.enqueue(Time::ZERO, Item::new(id, 500)).unwrap();
        }
        assert_eq!(q.count(), 5);
        assert_eq!(q.drop_probability(), 0.0);
        // Hold the queue at 10: each arrival sees avg 10, p_b = 0.5 × 0.02 = 0.01, and
        // count goes 6, 7, …; with Wait, p_a = 0 while count·0.01 < 1 (count < 100),
        // then p_a = 0.01 / (2 − count·0.01): count 133 → 0.01/0.67 = 0.014925 < 0.015,
        // count 134 → 0.01/0.66 = 0.015152 ≥ 0.015: the arrival with count 134 is
        // dropped, the 129th of this phase (count 6 + 128).
        let mut dropped_at = None;
        for j in 0..200u32 {
            let before = q.count();
            match q.enqueue(Time::ZERO, Item::new(1000 + j, 500)) {
                Ok(()) => {
                    if before + 1 == 100 {
                        // count 100: p_a = 0.01 / (2 − 1) = 0.01.
                        assert!(close(q.drop_probability(), 0.01));
                    }
                    if before + 1 == 133 {
                        assert!(close(q.drop_probability(), 0.01 / 0.67));
                    }
                    q.dequeue(Time::ZERO).unwrap();
                }
                Err(d) => {
                    assert_eq!(d.reason, DropReason::Unforced);
                    assert!(close(q.drop_probability(), 0.01 / (2.0 - 1.34)));
                    dropped_at = Some(j);
                    break;
                }
            }
        }
        assert_eq!(dropped_at, Some(128));
        // The drop restarts the count: the next arrival has count 1, p_a = 0.
        assert_eq!(q.count(), 0);
        q.enqueue(Time::ZERO, Item::new(9999, 500)).unwrap();
        assert_eq!((q.count(), q.drop_probability()), (1, 0.0));
    }

    #[test]
    fn red_gentle_region_and_forced_drops() {
        // Gentle, Wait, qW = 1, every draw u = 1 (drops only when p_a = 1).
        let mut q = red(instantaneous(true, true), 1.0);
        // Arrivals 0..=15: count reset to 1 at 5, count 11 at 15. At avg 15 = MaxTh:
        // p_b = (1 − 0.02)/15 × 15 + 2 × 0.02 − 1 = 0.02, count·p_b = 0.22 → 0.
        for id in 0..16 {
            q.enqueue(Time::ZERO, Item::new(id, 500)).unwrap();
        }
        assert_eq!(q.count(), 11);
        // Arrival 16 sees avg 16: p_b = 0.98 × 16/15 − 0.96 = 0.0853333, count 12:
        // count·p_b = 1.024 → p_a = 0.0853333/(2 − 1.024) = 0.0874317.
        q.enqueue(Time::ZERO, Item::new(16, 500)).unwrap();
        let pb = 0.98 * 16.0 / 15.0 - 0.96;
        assert!(close(q.drop_probability(), pb / (2.0 - 12.0 * pb)));
        assert!((q.drop_probability() - 0.087_431_7).abs() < 1e-7);
        // Arrival 17 sees avg 17: p_b = 0.98 × 17/15 − 0.96 = 0.1506667, count 13:
        // count·p_b = 1.9587 → p_a = 0.1506667/0.0413333 = 3.645 → capped at 1: dropped.
        let d = q.enqueue(Time::ZERO, Item::new(17, 500)).unwrap_err();
        assert_eq!(d.reason, DropReason::Unforced);
        assert_eq!(q.drop_probability(), 1.0);
        // Forced drops start at avg ≥ 2·MaxTh = 30 in gentle mode. Draws u = 2 never
        // drop early, so 30 arrivals fill the queue to 30; the 31st sees avg 30.
        let mut q2 = red(instantaneous(true, false), 2.0);
        for id in 0..30 {
            q2.enqueue(Time::ZERO, Item::new(id, 500)).unwrap();
        }
        let d = q2.enqueue(Time::ZERO, Item::new(30, 500)).unwrap_err();
        assert_eq!(d.reason, DropReason::Forced);
        // Not gentle: forced from avg ≥ MaxTh = 15.
        let mut q3 = red(instantaneous(false, false), 2.0);
        for id in 0..15 {
            q3.enqueue(Time::ZERO, Item::new(id, 500)).unwrap();
        }
        let d = q3.enqueue(Time::ZERO, Item::new(15, 500)).unwrap_err();
        assert_eq!(d.reason, DropReason::Forced);
    }

    #[test]
    fn red_without_wait_uses_the_geometric_correction() {
        // Not Wait: p_a = p_b / (1 − count·p_b). Queue held at 10 (avg 10, p_b = 0.01):
        // arrivals 0..=9 as before (count 5 after arrival 9), then count 6:
        // p_a = 0.01 / (1 − 0.06) = 0.0106383.
        let mut q = red(instantaneous(true, false), 1.0);
        for id in 0..10 {
            q.enqueue(Time::ZERO, Item::new(id, 500)).unwrap();
        }
        q.enqueue(Time::ZERO, Item::new(10, 500)).unwrap();
        assert!(close(q.drop_probability(), 0.01 / 0.94));
        // The internal queue still bounds it: MaxSize 100 packets.
        assert_eq!(q.len_packets(), 11);
    }

    #[test]
    fn red_byte_mode_counts_bytes_over_the_mean_packet_size() {
        // Byte mode: MaxSize 100000 B, MinTh 5000 B, MaxTh 15000 B, qW = 1 (avg = bytes
        // queued before the arrival), maxP 0.02, no Wait, MeanPktSize 500; 700 B packets.
        let params = RedParams {
            limit: Limit::Bytes(100_000),
            min_th: 5000.0,
            max_th: 15_000.0,
            q_w: 1.0,
            wait: false,
            ..RedParams::default()
        };
        let mut q = red(params, 1.0);
        // Arrival 8 sees 5600 B ≥ MinTh: count_bytes := 700. Arrival 9 sees 6300 B:
        // count_bytes 1400, count = 1400 / 500 = 2 (integer division, not 2.8);
        // p_b = (6300 − 5000)/10000 × 0.02 = 0.0026; p = 0.0026/(1 − 2 × 0.0026)
        // = 0.0026136; scaled by 700/500: 0.0036590.
        for id in 0..10 {
            q.enqueue(Time::ZERO, Item::new(id, 700)).unwrap();
        }
        assert!(close(q.drop_probability(), 0.0026 / (1.0 - 0.0052) * 1.4));
        assert!((q.drop_probability() - 0.003_659_03).abs() < 1e-8);
    }

    #[test]
    fn ared_sets_its_thresholds_weight_and_bottom_automatically() {
        // InitializeParams with ARED on a 10 Mbit/s link, MeanPktSize 500:
        // ptc = 10e6 / (8·500) = 2500 packets/s; target queue = 5 ms · 2500
        // = 12.5, so MinTh = max(5, 12.5/2) = 6.25 and MaxTh = 3·MinTh = 18.75;
        // QW = 1 − exp(−1/2500); Bottom = min(0.01, 8·500·0.1 s / 10e6) = 4e-5.
        let q = red(
            RedParams {
                ared: true,
                link_bandwidth_bps: 10_000_000,
                ..RedParams::default()
            },
            1.0,
        );
        assert_eq!(q.thresholds(), (6.25, 18.75));
        assert!(close(q.q_w, 1.0 - (-1.0f64 / 2500.0).exp()));
        assert!(close(q.bottom, 4e-5));
        assert_eq!(q.max_p(), 0.02);
    }

    #[test]
    fn adapt_max_p_is_aimd_once_per_interval() {
        // QW = 1: the average is the queue length found by each arrival.
        // MinTh 5, MaxTh 15: part = 0.4·10 = 4, so maxP grows above an
        // average of 11 and shrinks below 9, at most once per 0.5 s. Draws of
        // 1.0 never drop early (u ≤ p needs p = 1).
        let mut q = red(
            RedParams {
                adapt_max_p: true,
                q_w: 1.0,
                limit: Limit::Packets(100),
                ..RedParams::default()
            },
            1.0,
        );
        let ms = |t: u64| Time(t * 1_000_000);
        for id in 0..12 {
            q.enqueue(ms(0), Item::new(id, 500)).unwrap(); // now = 0: not after LastSet + 0.5 s
        }
        assert_eq!(q.max_p(), 0.02);
        // 0.6 s: average 12 > 11: + min(Alpha 0.01, 0.25·0.02) = 0.025.
        q.enqueue(ms(600), Item::new(12, 500)).unwrap();
        assert!(close(q.max_p(), 0.025));
        // 0.8 s: within the interval of the last change.
        q.enqueue(ms(800), Item::new(13, 500)).unwrap();
        assert!(close(q.max_p(), 0.025));
        // 1.2 s: average 14: + min(0.01, 0.25·0.025 = 0.00625) = 0.03125.
        q.enqueue(ms(1200), Item::new(14, 500)).unwrap();
        assert!(close(q.max_p(), 0.03125));
        // Empty it at 1.3 s; at 2 s the arrival finds 0 < 9: × Beta 0.9.
        while q.dequeue(ms(1300)).is_some() {}
        assert!(q.dequeue(ms(1300)).is_none());
        q.enqueue(ms(2000), Item::new(15, 500)).unwrap();
        assert!(close(q.max_p(), 0.028125));
    }

    #[test]
    fn red_defaults_are_ns3s() {
        let p = RedParams::default();
        assert_eq!(
            (p.min_th, p.max_th, p.q_w, p.l_interm),
            (5.0, 15.0, 0.002, 50.0)
        );
        assert_eq!(
            (p.limit, p.mean_pkt_size, p.gentle, p.wait),
            (Limit::Packets(25), 500, true, true)
        );
        assert_eq!(p.link_bandwidth_bps, 1_500_000);
        // The 26th packet finds the internal queue full. With qW = 0.002 the average
        // stays below MinTh over 25 back-to-back arrivals (it reaches
        // 0.002·Σ k·0.998^(24−k) < 0.6), so no early drop happens before.
        let mut q = red(p, 1.0);
        for id in 0..25 {
            q.enqueue(Time::ZERO, Item::new(id, 500)).unwrap();
        }
        let d = q.enqueue(Time::ZERO, Item::new(25, 500)).unwrap_err();
        assert_eq!(d.reason, DropReason::InternalQueue);
        assert_eq!(d.reason.ns3_name(), "Dropped by internal queue");
    }
}
