//! PIE (RFC 8033) as ns-3.44's `PieQueueDisc`
//! (`src/traffic-control/model/pie-queue-disc.cc`).
//!
//! A drop-tail FIFO whose enqueue drops at random with a probability that a
//! periodic controller updates from the queue delay. The rules, with the ns-3
//! function each comes from:
//! * `CalculateP` runs every `Tupdate` (15 ms), the first time `Supdate` (0)
//!   after the queue disc is created (the constructor schedules it). Here it
//!   is caught up at the start of every enqueue/dequeue (an update due at the
//!   same instant as a packet runs first), or run by [`QueueDisc::on_timer`].
//!   A catch-up over an idle stretch stops iterating once the controller has
//!   settled: an update that leaves its state as it was leaves it so until
//!   the next packet, so the remaining updates are skipped, and while only
//!   the calm-period counter moves it is advanced in one step. Both give
//!   exactly the state ns-3's updates reach; the updates actually run are
//!   counted ([`QueueDisc::periodic_work`]) against the run's event budget.
//! * Queue delay: by default the sojourn time of the last dequeued packet,
//!   0 if the queue became empty (`DoDequeue`, timestamps, the default since
//!   ns-3.32); with `UseDequeueRateEstimator`, queued bytes over a departure
//!   rate measured over cycles of `DequeueThreshold` bytes (`DoDequeue`,
//!   `CalculateP`).
//! * `CalculateP`: while burst allowance remains, p = 0; otherwise
//!   `Δ = A·(delay − QueueDelayReference) + B·(delay − old delay)` in seconds,
//!   scaled down when p is small (÷2048 below 1e-6, ÷512 below 1e-5, ÷128
//!   below 1e-4, ÷32 below 1e-3, ÷8 below 1e-2, ÷2 below 0.1), capped at 0.02
//!   when p ≥ 0.1 (`UseCapDropAdjustment`), added to p; p decays by 0.98 when
//!   both delays are 0; p is bounded to [0, 1]. The burst allowance then
//!   shrinks by `Tupdate`, and the burst state machine (protecting, in burst,
//!   no burst after `BURST_RESET_TIMEOUT` = 1.5 s of calm) advances.
//! * Enqueue (`DoEnqueue`): over `MaxSize` → "Forced drop"; otherwise
//!   `DropEarly` may drop ("Unforced drop"). `DropEarly` never drops while
//!   burst allowance remains (the first call from `NO_BURST` grants
//!   `MaxBurstAllowance`), nor when the old delay is below half the
//!   reference and p < 0.2, nor with at most 2 packets (2 × MeanPktSize bytes)
//!   queued; else it drops if a uniform draw is ≤ p (in byte mode
//!   p × size / MeanPktSize). Either drop resets the derandomization
//!   accumulator.
//!
//! Defaults (`GetTypeId` in ns-3.44; the .rst documentation lists older ones):
//! MaxSize 25 packets, MeanPktSize 1000, A 0.125, B 1.25, Tupdate 15 ms,
//! Supdate 0, DequeueThreshold 16384 bytes, QueueDelayReference 15 ms,
//! MaxBurstAllowance 150 ms, UseDequeueRateEstimator false,
//! UseCapDropAdjustment true, UseDerandomization false, ActiveThreshold
//! infinite (PIE always active). ECN and L4S are not modelled.

use super::{seconds, DropReason, Dropped, Fifo, Item, Limit, QueueDisc, Stats, UniformSource};
use crate::engine::{Duration, RngStream, Time};

/// `BURST_RESET_TIMEOUT`, seconds.
const BURST_RESET_TIMEOUT: f64 = 1.5;
/// `DQCOUNT_INVALID`.
const DQCOUNT_INVALID: u64 = u64::MAX;

/// Attributes of `ns3::PieQueueDisc` (no ECN, no L4S).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PieParams {
    /// `MaxSize`: default 25 packets.
    pub limit: Limit,
    /// `MeanPktSize`: default 1000 bytes.
    pub mean_pkt_size: u32,
    /// `A`: default 0.125 (per second of delay error).
    pub a: f64,
    /// `B`: default 1.25.
    pub b: f64,
    /// `Tupdate`: default 15 ms.
    pub t_update: Duration,
    /// `Supdate`: first update after creation, default 0.
    pub s_update: Duration,
    /// `DequeueThreshold`: default 16384 bytes.
    pub dq_threshold: u32,
    /// `QueueDelayReference`: default 15 ms.
    pub q_delay_ref: Duration,
    /// `MaxBurstAllowance`: default 150 ms.
    pub max_burst: Duration,
    /// `UseDequeueRateEstimator`: default false (timestamps).
    pub use_dq_rate_estimator: bool,
    /// `UseCapDropAdjustment`: default true.
    pub use_cap_drop_adjustment: bool,
    /// `UseDerandomization`: default false.
    pub use_derandomization: bool,
    /// `ActiveThreshold`: `None` is ns-3's default `Time::Max()` (always active).
    pub active_threshold: Option<Duration>,
}

impl Default for PieParams {
    fn default() -> Self {
        PieParams {
            limit: Limit::Packets(25),
            mean_pkt_size: 1000,
            a: 0.125,
            b: 1.25,
            t_update: Duration::from_millis(15),
            s_update: Duration::ZERO,
            dq_threshold: 16384,
            q_delay_ref: Duration::from_millis(15),
            max_burst: Duration::from_millis(150),
            use_dq_rate_estimator: false,
            use_cap_drop_adjustment: true,
            use_derandomization: false,
            active_threshold: None,
        }
    }
}

/// `PieQueueDisc::BurstStateT`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BurstState {
    NoBurst,
    InBurst,
    InBurstProtecting,
}

/// `ns3::PieQueueDisc`.
pub struct Pie<T> {
    params: PieParams,
    rng: Box<dyn UniformSource>,
    fifo: Fifo<T>,
    stats: Stats,
    next_update: Time,
    drop_prob: f64,
    q_delay_old: Duration,
    q_delay: Duration,
    burst_allowance: Duration,
    burst_reset: u32,
    burst_state: BurstState,
    in_measurement: bool,
    avg_dq_rate: f64,
    dq_start: Time,
    dq_count: u64,
    accu_prob: f64,
    active: bool,
    /// `CalculateP` runs actually made (skipped settled ones not counted).
    updates: u64,
}

/// What `CalculateP` reads and writes besides the queue (constant between
/// packets): two updates from equal states end in equal states.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Controller {
    q_delay: Duration,
    q_delay_old: Duration,
    drop_prob: u64,
    burst_allowance: Duration,
    burst_state: BurstState,
    burst_reset: u32,
    dq_count: u64,
    avg_dq_rate: u64,
}

/// `Seconds(x)`: a double number of seconds to a `Time`, rounded to the ns.
fn from_seconds(x: f64) -> Duration {
    if x <= 0.0 {
        return Duration::ZERO;
    }
    Duration((x * 1e9).round() as u64)
}

/// The adjustment `p` scaled down while the drop probability `dp` is small,
/// so that `dp` moves in steps of its own order (ns-3 `CalculateP`).
fn scale_adjustment(p: f64, dp: f64) -> f64 {
    if dp < 0.000001 {
        p / 2048.0
    } else if dp < 0.00001 {
        p / 512.0
    } else if dp < 0.0001 {
        p / 128.0
    } else if dp < 0.001 {
        p / 32.0
    } else if dp < 0.01 {
        p / 8.0
    } else if dp < 0.1 {
        p / 2.0
    } else {
        p
    }
}

impl<T> Pie<T> {
    /// A PIE queue disc created at `now` (its first update is `Supdate` later).
    pub fn new(params: PieParams, now: Time, rng: RngStream) -> Self {
        Self::with_source(params, now, Box::new(rng))
    }

    /// As [`Pie::new`] with any source of uniform draws (tests script them).
    pub fn with_source(params: PieParams, now: Time, rng: Box<dyn UniformSource>) -> Self {
        assert!(params.t_update > Duration::ZERO, "PIE needs Tupdate > 0");
        // InitializeParams (m_burstAllowance and m_qDelay start at Time 0).
        Pie {
            next_update: now + params.s_update,
            params,
            rng,
            fifo: Fifo::default(),
            stats: Stats::default(),
            drop_prob: 0.0,
            q_delay_old: Duration::ZERO,
            q_delay: Duration::ZERO,
            burst_allowance: Duration::ZERO,
            burst_reset: 0,
            burst_state: BurstState::NoBurst,
            in_measurement: false,
            avg_dq_rate: 0.0,
            dq_start: Time::ZERO,
            dq_count: DQCOUNT_INVALID,
            accu_prob: 0.0,
            active: false,
            updates: 0,
        }
    }

    /// The drop probability (`m_dropProb`).
    pub fn drop_probability(&self) -> f64 {
        self.drop_prob
    }

    /// The current queue delay estimate (`GetQueueDelay`).
    pub fn queue_delay(&self) -> Duration {
        self.q_delay
    }

    /// Remaining burst allowance.
    pub fn burst_allowance(&self) -> Duration {
        self.burst_allowance
    }

    pub fn burst_state(&self) -> BurstState {
        self.burst_state
    }

    /// The measured departure rate, bytes/s (`m_avgDqRate`, estimator only).
    pub fn dequeue_rate(&self) -> f64 {
        self.avg_dq_rate
    }

    fn controller(&self) -> Controller {
        Controller {
            q_delay: self.q_delay,
            q_delay_old: self.q_delay_old,
            drop_prob: self.drop_prob.to_bits(),
            burst_allowance: self.burst_allowance,
            burst_state: self.burst_state,
            burst_reset: self.burst_reset,
            dq_count: self.dq_count,
            avg_dq_rate: self.avg_dq_rate.to_bits(),
        }
    }

    /// Calm updates in burst that end it (`BURST_RESET_TIMEOUT / Tupdate`).
    fn burst_reset_limit(&self) -> u32 {
        (BURST_RESET_TIMEOUT / seconds(self.params.t_update)) as u32
    }

    /// Run every update due at or before `now`, skipping those that cannot
    /// change the state (see the module documentation).
    fn advance(&mut self, now: Time) {
        let step = self.params.t_update;
        while self.next_update <= now {
            let before = self.controller();
            self.calculate_p();
            self.updates += 1;
            self.next_update += step;
            if self.next_update > now {
                return;
            }
            let after = self.controller();
            // Updates still due, each giving the same state as this one (a
            // fixed point), or only one more calm period while in burst.
            let due = now.since(self.next_update).0 / step.0 + 1;
            let unchanged = Controller {
                burst_reset: before.burst_reset,
                ..after
            } == before;
            let skip = if after == before {
                due
            } else if unchanged
                && after.burst_state == BurstState::InBurst
                && after.burst_reset == before.burst_reset + 1
            {
                due.min(u64::from(self.burst_reset_limit() - self.burst_reset))
            } else {
                0
            };
            if after != before {
                // At most the limit, so the counter stays within u32.
                self.burst_reset += skip as u32;
            }
            self.next_update += step.saturating_mul(skip);
        }
    }

    /// `CalculateP`.
    fn calculate_p(&mut self) {
        let mut missing_init = false;
        let q_delay = if self.params.use_dq_rate_estimator {
            let d = if self.avg_dq_rate > 0.0 {
                from_seconds(self.fifo.bytes() as f64 / self.avg_dq_rate)
            } else {
                missing_init = true;
                Duration::ZERO
            };
            self.q_delay = d;
            d
        } else {
            self.q_delay
        };
        let qd = seconds(q_delay);
        let qd_old = seconds(self.q_delay_old);
        let qd_ref = seconds(self.params.q_delay_ref);

        let mut p = 0.0;
        if self.burst_allowance > Duration::ZERO {
            self.drop_prob = 0.0;
        } else {
            p = self.params.a * (qd - qd_ref) + self.params.b * (qd - qd_old);
            let dp = self.drop_prob;
            p = scale_adjustment(p, dp);
            // Cap Drop Adjustment (RFC 8033 section 5.5).
            if self.params.use_cap_drop_adjustment && dp >= 0.1 && p > 0.02 {
                p = 0.02;
            }
        }
        p += self.drop_prob;
        // Decay when the queue has been empty (RFC 8033 section 4.2).
        if qd == 0.0 && qd_old == 0.0 {
            p *= 0.98;
        }
        self.drop_prob = p.clamp(0.0, 1.0);

        // Section 4.4 #2.
        self.burst_allowance = if self.burst_allowance < self.params.t_update {
            Duration::ZERO
        } else {
            Duration(self.burst_allowance.0 - self.params.t_update.0)
        };
        let burst_reset_limit = self.burst_reset_limit();
        let calm = qd < 0.5 * qd_ref && qd_old < 0.5 * qd_ref && self.drop_prob == 0.0;
        if calm && !missing_init {
            self.dq_count = DQCOUNT_INVALID;
            self.avg_dq_rate = 0.0;
        }
        if calm && self.burst_allowance == Duration::ZERO {
            match self.burst_state {
                BurstState::InBurstProtecting => {
                    self.burst_state = BurstState::InBurst;
                    self.burst_reset = 0;
                }
                BurstState::InBurst => {
                    self.burst_reset += 1;
                    if self.burst_reset > burst_reset_limit {
                        self.burst_reset = 0;
                        self.burst_state = BurstState::NoBurst;
                    }
                }
                BurstState::NoBurst => {}
            }
        } else if self.burst_state == BurstState::InBurst {
            self.burst_reset = 0;
        }
        self.q_delay_old = q_delay;
    }

    /// `DropEarly`: `q_size` is the queue before this packet, in the limit's unit.
    fn drop_early(&mut self, size: u32, q_size: u64) -> bool {
        if self.burst_allowance > Duration::ZERO {
            // Burst allowance left: skip random early drop.
            return false;
        }
        if self.burst_state == BurstState::NoBurst {
            self.burst_state = BurstState::InBurstProtecting;
            self.burst_allowance = self.params.max_burst;
        }
        let bytes = self.params.limit.is_bytes();
        let mean = self.params.mean_pkt_size;
        let mut p = self.drop_prob;
        if bytes {
            p = p * f64::from(size) / f64::from(mean);
        }
        // Safeguard PIE to be work conserving (RFC 8033 section 4.1).
        if (seconds(self.q_delay_old) < 0.5 * seconds(self.params.q_delay_ref)
            && self.drop_prob < 0.2)
            || (bytes && q_size <= 2 * u64::from(mean))
            || (!bytes && q_size <= 2)
        {
            return false;
        }
        if self.params.use_derandomization {
            if self.drop_prob == 0.0 {
                self.accu_prob = 0.0;
            }
            self.accu_prob += self.drop_prob;
            if self.accu_prob < 0.85 {
                return false;
            } else if self.accu_prob >= 8.5 {
                return true;
            }
        }
        self.rng.next_u01() <= p
    }
}

impl<T> QueueDisc<T> for Pie<T> {
    fn enqueue(&mut self, now: Time, mut item: Item<T>) -> Result<(), Dropped<T>> {
        self.advance(now);
        self.stats.received(item.bytes);
        let n_queued = self
            .params
            .limit
            .current(self.fifo.len(), self.fifo.bytes());
        let reason =
            if self
                .params
                .limit
                .exceeded_by(self.fifo.len(), self.fifo.bytes(), item.bytes)
            {
                // Drops due to the queue limit: reactive.
                Some(DropReason::Forced)
            } else if (self.params.active_threshold.is_none() || self.active)
                && self.drop_early(item.bytes, n_queued)
            {
                // Early probability drop: proactive.
                Some(DropReason::Unforced)
            } else {
                None
            };
        if let Some(reason) = reason {
            self.accu_prob = 0.0;
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
        if let Some(threshold) = self.params.active_threshold {
            // Over the threshold: turn PIE on.
            if !self.active && self.q_delay >= threshold {
                self.active = true;
                self.q_delay_old = Duration::ZERO;
                self.drop_prob = 0.0;
                self.in_measurement = true;
                self.dq_count = 0;
                self.avg_dq_rate = 0.0;
                self.burst_allowance = self.params.max_burst;
                self.accu_prob = 0.0;
                self.dq_start = now;
            }
            // Idle for a while: turn PIE off (GetMilliSeconds truncates).
            if self.drop_prob == 0.0
                && self.q_delay_old.as_nanos() / 1_000_000 == 0
                && self.q_delay.as_nanos() / 1_000_000 == 0
            {
                self.active = false;
                self.in_measurement = false;
            }
        }
        Ok(())
    }

    fn dequeue(&mut self, now: Time) -> Option<Item<T>> {
        self.advance(now);
        let item = self.fifo.pop()?;
        self.stats.dequeued(item.bytes);
        if self.params.use_dq_rate_estimator {
            let threshold = u64::from(self.params.dq_threshold);
            // Start a measurement cycle once the queue holds DequeueThreshold bytes.
            if self.fifo.bytes() >= threshold && !self.in_measurement {
                self.dq_start = now;
                self.dq_count = 0;
                self.in_measurement = true;
            }
            if self.in_measurement {
                self.dq_count = self.dq_count.wrapping_add(u64::from(item.bytes));
                if self.dq_count >= threshold {
                    let dq_time = now.since(self.dq_start);
                    if dq_time > Duration::ZERO {
                        let rate = self.dq_count as f64 / seconds(dq_time);
                        self.avg_dq_rate = if self.avg_dq_rate == 0.0 {
                            rate
                        } else {
                            0.5 * self.avg_dq_rate + 0.5 * rate
                        };
                    }
                    // Restart a cycle if there is enough data.
                    if self.fifo.bytes() > threshold {
                        self.dq_start = now;
                        self.dq_count = 0;
                        self.in_measurement = true;
                    } else {
                        self.dq_count = 0;
                        self.in_measurement = false;
                    }
                }
            }
        } else {
            self.q_delay = if self.fifo.bytes() == 0 {
                Duration::ZERO
            } else {
                now.since(item.enqueued_at)
            };
        }
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

    fn next_timer(&self) -> Option<Time> {
        Some(self.next_update)
    }

    fn periodic_work(&self) -> u64 {
        self.updates
    }

    fn on_timer(&mut self, now: Time) {
        self.advance(now);
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;

    use super::*;
    use crate::net::qdisc::testutil::Scripted;

    const MS: u64 = 1_000_000;

    fn pie(params: PieParams, draws: &[f64], then: f64) -> Pie<u32> {
        let src = Scripted {
            values: draws.iter().copied().collect::<VecDeque<_>>(),
            then,
            draws: 0,
        };
        Pie::with_source(params, Time::ZERO, Box::new(src))
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs()
    }

    #[test]
    fn pie_burst_allowance_then_drop_probability_from_queue_delay() {
        // Draws: 0.001 then 0.002 (the only two draws this test makes).
        let mut q = pie(PieParams::default(), &[0.001, 0.002], 1.0);
        // Update at 0 (delay 0: p stays 0). 20 × 1000 B arrive at 1 ms; the first
        // DropEarly call grants the 150 ms burst allowance (state NO_BURST →
        // protecting), the others return at once.
        for id in 0..20 {
            q.enqueue(Time(MS), Item::new(id, 1000)).unwrap();
        }
        assert_eq!(q.burst_allowance(), Duration::from_millis(150));
        // Updates at 15, 30, …, 150 ms: p = 0, allowance 150 − 10 × 15 = 0; at 150 ms the
        // delay (no dequeue yet: 0) is calm, so protecting → in burst.
        q.on_timer(Time(150 * MS));
        assert_eq!(
            (q.drop_probability(), q.burst_allowance()),
            (0.0, Duration::ZERO)
        );
        assert_eq!(q.burst_state(), BurstState::InBurst);
        // Dequeue at 161 ms: delay = 161 − 1 = 160 ms.
        assert_eq!(q.dequeue(Time(161 * MS)).map(|i| i.payload), Some(0));
        assert_eq!(q.queue_delay(), Duration::from_millis(160));
        // Update at 165 ms: Δ = 0.125 × (0.160 − 0.015) + 1.25 × (0.160 − 0)
        // = 0.018125 + 0.2 = 0.218125; p = 0 < 1e-6 → Δ / 2048 = 1.0650634765625e-4.
        q.on_timer(Time(165 * MS));
        assert!(
            close(q.drop_probability(), 0.218125 / 2048.0),
            "{}",
            q.drop_probability()
        );
        // Dequeue at 170 ms: delay 169 ms. Update at 180 ms:
        // Δ = 0.125 × (0.169 − 0.015) + 1.25 × (0.169 − 0.160) = 0.01925 + 0.01125 = 0.0305;
        // p = 1.065e-4 ∈ [1e-4, 1e-3) → Δ / 32 = 9.53125e-4; p = 1.05963134765625e-3.
        assert_eq!(q.dequeue(Time(170 * MS)).map(|i| i.payload), Some(1));
        q.on_timer(Time(180 * MS));
        let want = 0.0305 / 32.0 + 0.218125 / 2048.0;
        assert!(
            close(q.drop_probability(), want),
            "{} vs {want}",
            q.drop_probability()
        );
        // An arrival at 181 ms: old delay 169 ms ≥ 7.5 ms, 18 packets queued: it draws
        // u = 0.001 ≤ 0.00106: dropped. The next draws u = 0.002 > p: accepted.
        let d = q.enqueue(Time(181 * MS), Item::new(100, 1000)).unwrap_err();
        assert_eq!(d.reason, DropReason::Unforced);
        q.enqueue(Time(182 * MS), Item::new(101, 1000)).unwrap();
        assert_eq!(q.len_packets(), 19);
    }

    /// PIE after its burst allowance, queue delay held at 1 s from 1000 ms on.
    fn held_at_one_second(cap: bool) -> Pie<u32> {
        let params = PieParams {
            use_cap_drop_adjustment: cap,
            ..PieParams::default()
        };
        let mut q = pie(params, &[], 1.0);
        for id in 0..3 {
            q.enqueue(Time::ZERO, Item::new(id, 1000)).unwrap();
        }
        // Allowance gone after the update at 150 ms; delay 0 until 1000 ms: p stays 0.
        assert_eq!(q.dequeue(Time(1000 * MS)).map(|i| i.payload), Some(0));
        assert_eq!(q.queue_delay(), Duration::from_millis(1000));
        q
    }

    #[test]
    fn pie_scales_small_probabilities_and_caps_the_step() {
        let mut q = held_at_one_second(true);
        // Updates at 1005, 1020, … ms (multiples of 15). Δ₁ uses old delay 0:
        // 0.125 × 0.985 + 1.25 × 1 = 1.373125, p = 0 → / 2048 = 6.70471e-4.
        // Afterwards the old delay is 1 s too: Δ = 0.125 × 0.985 = 0.123125, and
        // p ∈ [1e-4, 1e-3) → / 32: p = 0.0045181; ∈ [1e-3, 1e-2) → / 8: 0.0199088;
        // ∈ [0.01, 0.1) → / 2: 0.0814713, then 0.1430338; p ≥ 0.1: Δ capped at 0.02.
        let d1 = 1.373125 / 2048.0;
        let d2 = d1 + 0.123125 / 32.0;
        let d3 = d2 + 0.123125 / 8.0;
        let d4 = d3 + 0.123125 / 2.0;
        let d5 = d4 + 0.123125 / 2.0;
        let d6 = d5 + 0.02;
        let want = [d1, d2, d3, d4, d5, d6];
        for (k, w) in want.iter().enumerate() {
            q.on_timer(Time((1005 + 15 * k as u64) * MS));
            assert!(
                close(q.drop_probability(), *w),
                "update {k}: {} vs {w}",
                q.drop_probability()
            );
        }
        assert!((d6 - 0.163_033_75).abs() < 1e-8);
        // Without the cap the sixth step adds the whole 0.123125.
        let mut q = held_at_one_second(false);
        q.on_timer(Time(1080 * MS));
        assert!(close(q.drop_probability(), d5 + 0.123125));
    }

    #[test]
    fn pie_never_drops_early_with_two_packets_or_fewer() {
        // p = 0.163 and old delay 1 s after the updates above; draws of 1e-4 drop
        // whenever DropEarly gets as far as drawing.
        let params = PieParams::default();
        let mut q = pie(params, &[], 1e-4);
        for id in 0..3 {
            q.enqueue(Time::ZERO, Item::new(id, 1000)).unwrap();
        }
        q.dequeue(Time(1000 * MS)).unwrap();
        q.on_timer(Time(1080 * MS));
        assert!(q.drop_probability() > 0.16);
        // 2 packets queued: the safeguard keeps it (q ≤ 2); then 3 queued: dropped.
        q.enqueue(Time(1081 * MS), Item::new(10, 1000)).unwrap();
        let d = q.enqueue(Time(1081 * MS), Item::new(11, 1000)).unwrap_err();
        assert_eq!(d.reason, DropReason::Unforced);
        // Over MaxSize (25 packets) it is a forced drop whatever p.
        let mut q = pie(PieParams::default(), &[], 1.0);
        for id in 0..25 {
            q.enqueue(Time::ZERO, Item::new(id, 1000)).unwrap();
        }
        let d = q.enqueue(Time::ZERO, Item::new(25, 1000)).unwrap_err();
        assert_eq!(d.reason, DropReason::Forced);
    }

    #[test]
    fn pie_byte_mode_scales_p_by_packet_size_and_guards_two_mean_packets() {
        // Byte mode, MaxSize 100000 B; the drop probability reaches 0.163034 as in
        // pie_scales_small_probabilities_and_caps_the_step; every draw is u = 0.09.
        let params = PieParams {
            limit: Limit::Bytes(100_000),
            ..PieParams::default()
        };
        let mut q = pie(params, &[], 0.09);
        for id in 0..3 {
            q.enqueue(Time::ZERO, Item::new(id, 1000)).unwrap();
        }
        q.dequeue(Time(1000 * MS)).unwrap();
        q.on_timer(Time(1080 * MS));
        assert!((q.drop_probability() - 0.163_033_75).abs() < 1e-8);
        // 2000 B queued ≤ 2 × MeanPktSize: kept without a draw.
        q.enqueue(Time(1081 * MS), Item::new(10, 500)).unwrap();
        // 2500 B queued: p = 0.163 × 500/1000 = 0.0815 < 0.09: kept.
        q.enqueue(Time(1081 * MS), Item::new(11, 500)).unwrap();
        // A 1000 B packet: p = 0.163 ≥ 0.09: dropped.
        let d = q.enqueue(Time(1081 * MS), Item::new(12, 1000)).unwrap_err();
        assert_eq!(d.reason, DropReason::Unforced);
    }

    #[test]
    fn pie_dequeue_rate_estimator_measures_a_cycle() {
        let params = PieParams {
            use_dq_rate_estimator: true,
            ..PieParams::default()
        };
        let mut q = pie(params, &[], 1.0);
        for id in 0..20 {
            q.enqueue(Time::ZERO, Item::new(id, 1000)).unwrap();
        }
        // First dequeue at 1 ms leaves 19000 B ≥ 16384: a cycle starts at 1 ms. One
        // packet per ms: the 17th (at 17 ms) brings the count to 17000 ≥ 16384:
        // rate = 17000 B / 16 ms = 1062500 B/s; 3000 B left < 16384: no new cycle.
        for k in 1..=17u64 {
            q.dequeue(Time(k * MS)).unwrap();
        }
        assert!(close(q.dequeue_rate(), 1_062_500.0));
        // The update at 15 ms had no rate yet (delay 0); the one at 30 ms estimates
        // 3000 / 1062500 s = 2.8235294 ms → 2823529 ns.
        q.on_timer(Time(30 * MS));
        assert_eq!(q.queue_delay(), Duration(2_823_529));
    }

    #[test]
    fn pie_defaults_are_ns3_344s() {
        let p = PieParams::default();
        assert_eq!(p.t_update, Duration::from_millis(15));
        assert_eq!(p.q_delay_ref, Duration::from_millis(15));
        assert_eq!(p.max_burst, Duration::from_millis(150));
        assert_eq!(
            (p.a, p.b, p.mean_pkt_size, p.dq_threshold),
            (0.125, 1.25, 1000, 16384)
        );
        assert_eq!(p.limit, Limit::Packets(25));
        assert!(!p.use_dq_rate_estimator && p.use_cap_drop_adjustment && !p.use_derandomization);
        // BURST_RESET_TIMEOUT / Tupdate = 1.5 / 0.015 = 100 updates.
        assert_eq!((BURST_RESET_TIMEOUT / seconds(p.t_update)) as u32, 100);
    }

    /// A packet offered at (`In`) or taken out at (`Out`) a time in ms.
    enum Op {
        In(u64),
        Out(u64),
    }

    /// PIE (t_update 1 ms) driven by `ops`, then left idle until `until_ms`:
    /// caught up by one call, or `stepwise`, one update per call as ns-3's
    /// timer runs them (the reference).
    fn idle_after(params: &PieParams, ops: &[Op], until_ms: u64, stepwise: bool) -> Pie<u32> {
        let params = PieParams {
            t_update: Duration::from_millis(1),
            ..params.clone()
        };
        let mut q = pie(params, &[], 0.5);
        let catch_up = |q: &mut Pie<u32>, until: Time| {
            if stepwise {
                while q.next_update <= until {
                    let t = q.next_update;
                    q.on_timer(t);
                }
            } else {
                q.on_timer(until);
            }
        };
        for (id, op) in ops.iter().enumerate() {
            match *op {
                Op::In(ms) => {
                    catch_up(&mut q, Time(ms * MS));
                    let _ = q.enqueue(Time(ms * MS), Item::new(id as u32, 1000));
                }
                Op::Out(ms) => {
                    catch_up(&mut q, Time(ms * MS));
                    q.dequeue(Time(ms * MS));
                }
            }
        }
        catch_up(&mut q, Time(until_ms * MS));
        q
    }

    /// 24 packets at 0 ms, one out every 10 ms (queue delay up to 230 ms: the
    /// drop probability rises), and optionally the rest out at 300 ms.
    fn congested(drain: bool) -> Vec<Op> {
        let mut ops: Vec<Op> = (0..24).map(|_| Op::In(0)).collect();
        ops.extend((1..=12).map(|k| Op::Out(10 * k)));
        if drain {
            ops.extend((0..12).map(|_| Op::Out(300)));
        }
        ops
    }

    #[test]
    fn pie_idle_catch_up_skips_only_updates_that_change_nothing() {
        let estimator = PieParams {
            use_dq_rate_estimator: true,
            dq_threshold: 2000,
            ..PieParams::default()
        };
        for (params, drain) in [
            (PieParams::default(), true),
            (PieParams::default(), false),
            (estimator, true),
        ] {
            let fast = idle_after(&params, &congested(drain), 60_000, false);
            let reference = idle_after(&params, &congested(drain), 60_000, true);
            assert!(reference.drop_probability() < 1.0 || !drain);
            assert!(fast.controller() == reference.controller(), "drain {drain}");
            assert_eq!(fast.next_update, reference.next_update);
            // Updates at 0, 1, ..., 60 000 ms, each run by the reference.
            assert_eq!(reference.periodic_work(), 60_001);
            assert!(fast.periodic_work() < reference.periodic_work());
        }
    }

    #[test]
    fn pie_idle_day_costs_a_bounded_number_of_updates() {
        // A day idle after congestion: 86.4 million updates are due at 1 ms.
        // The drop probability decays (×0.98 and at least 0.001875 / 2048 down per
        // update: at most about 700 updates to 0), the calm period in burst is
        // 1.5 s / 1 ms = 1500 updates advanced in one step, then nothing changes.
        let q = idle_after(&PieParams::default(), &congested(true), 86_400_000, false);
        assert_eq!(q.drop_probability(), 0.0);
        assert_eq!(q.burst_state(), BurstState::NoBurst);
        assert_eq!(q.next_update, Time((86_400_000 + 1) * MS));
        assert!(q.periodic_work() < 1_000, "{}", q.periodic_work());
    }
}
