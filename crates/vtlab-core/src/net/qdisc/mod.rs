//! Queue disciplines (qdiscs) with ns-3.44's traffic-control semantics:
//! pfifo_fast, CoDel, FQ-CoDel, RED and PIE, each a transcription of the
//! algorithm in ns-3's `src/traffic-control/model/*-queue-disc.cc` (the
//! function a rule comes from is named beside it), not a new design.
//!
//! This module is self-contained: it does not know the simulator's
//! [`crate::net::Packet`]. An [`Item`] carries what a queue disc looks at (the
//! size, a flow hash, a priority, the enqueue time) and an opaque payload `T`
//! the caller gets back. The link (`net/link.rs`) puts one in front of its
//! device queue with ns-3's flow control; docs/queue-discs.md describes both.
//!
//! Conventions shared by every discipline:
//! * [`QueueDisc::enqueue`] either accepts the item (`Ok`) or hands it back
//!   with the reason ns-3 gives for a drop before enqueue (`Err`).
//! * Packets dropped after they were stored (CoDel's dequeue-time drops,
//!   FQ-CoDel's fat-flow drops on overflow) are collected and handed out by
//!   [`QueueDisc::drain_drops`]; the caller should drain them after every call.
//! * [`Stats`] follows ns-3's `QueueDisc::Stats`: a packet dropped after
//!   dequeue counts as dequeued too, and "sent" is dequeued minus those.
//! * No ECN: vtlab's packets are never ECN-capable, so where ns-3 would try
//!   to mark (`QueueDisc::Mark` → `QueueDiscItem::Mark` fails for Not-ECT) it
//!   drops, whatever the `UseEcn` attribute (FQ-CoDel's default is true).
//! * Randomness (RED's and PIE's drop draws) comes from a [`UniformSource`],
//!   normally the component's [`RngStream`].

use std::collections::VecDeque;

use crate::engine::{RngStream, Time};

pub mod codel;
pub mod dql;
pub mod fq_codel;
pub mod hash;
pub mod pfifo_fast;
pub mod pie;
pub mod red;

pub use codel::{CoDel, CoDelParams};
pub use fq_codel::{FlowStatus, FqCoDel, FqCoDelParams};
pub use pfifo_fast::{priority_from_tos, PfifoFast, PfifoFastParams};
pub use pie::{Pie, PieParams};
pub use red::{Red, RedParams};

/// A packet as a queue disc sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Item<T> {
    /// Whatever the caller needs back (the simulator's packet, an id in tests).
    pub payload: T,
    /// Size in bytes as ns-3's `QueueDiscItem::GetSize` counts it: the IP
    /// packet with its header (`Ipv4QueueDiscItem::GetSize`), no link framing.
    pub bytes: u32,
    /// Flow key: ns-3 hashes the 5-tuple and a perturbation
    /// (`Ipv4QueueDiscItem::Hash`); FQ-CoDel puts the packet in queue
    /// `flow_hash % Flows` (`FqCoDelQueueDisc::DoEnqueue`).
    pub flow_hash: u32,
    /// The packet's `SocketPriorityTag` priority, 0 when it has none
    /// (pfifo_fast's band, see [`priority_from_tos`]).
    pub priority: u8,
    /// When the queue disc accepted it; set by the queue disc
    /// (`QueueDisc::Enqueue` stamps `SetTimeStamp(Now())` after `DoEnqueue`).
    pub enqueued_at: Time,
}

impl<T> Item<T> {
    pub fn new(payload: T, bytes: u32) -> Self {
        Item {
            payload,
            bytes,
            flow_hash: 0,
            priority: 0,
            enqueued_at: Time::ZERO,
        }
    }

    pub fn with_flow(mut self, flow_hash: u32) -> Self {
        self.flow_hash = flow_hash;
        self
    }

    pub fn with_priority(mut self, priority: u8) -> Self {
        self.priority = priority;
        self
    }
}

/// A queue size limit (ns-3 `QueueSize`: packets or bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Limit {
    Packets(u32),
    Bytes(u32),
}

impl Limit {
    /// The current size in this limit's unit (`QueueDisc::GetCurrentSize`).
    pub fn current(&self, packets: usize, bytes: u64) -> u64 {
        match self {
            Limit::Packets(_) => packets as u64,
            Limit::Bytes(_) => bytes,
        }
    }

    /// Whether one more item of `item_bytes` would exceed the limit
    /// (ns-3 `GetCurrentSize() + item > GetMaxSize()`).
    pub fn exceeded_by(&self, packets: usize, bytes: u64, item_bytes: u32) -> bool {
        match *self {
            Limit::Packets(max) => packets as u64 + 1 > u64::from(max),
            Limit::Bytes(max) => bytes + u64::from(item_bytes) > u64::from(max),
        }
    }

    pub fn is_bytes(&self) -> bool {
        matches!(self, Limit::Bytes(_))
    }
}

/// Why a queue disc dropped a packet; [`DropReason::ns3_name`] is the string
/// ns-3 records in `QueueDisc::Stats`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DropReason {
    /// pfifo_fast over `MaxSize` (`PfifoFastQueueDisc::LIMIT_EXCEEDED_DROP`).
    LimitExceeded,
    /// CoDel over `MaxSize` at enqueue; FQ-CoDel's fat-flow drops
    /// (`CoDelQueueDisc::OVERLIMIT_DROP`, `FqCoDelQueueDisc::OVERLIMIT_DROP`).
    Overlimit,
    /// CoDel's control-law drop at dequeue (`CoDelQueueDisc::TARGET_EXCEEDED_DROP`).
    TargetExceeded,
    /// An FQ-CoDel flow queue's CoDel dropped at dequeue (the child's reason
    /// prefixed by `QueueDisc::CHILD_QUEUE_DISC_DROP`).
    ChildTargetExceeded,
    /// An FQ-CoDel flow queue over its own `MaxSize` (equal to the whole
    /// queue disc's) refused the packet: the child's overlimit drop.
    ChildOverlimit,
    /// RED/PIE random early drop (`UNFORCED_DROP`).
    Unforced,
    /// RED above the forced-drop threshold; PIE over `MaxSize` (`FORCED_DROP`).
    Forced,
    /// The internal DropTail queue was full (`QueueDisc::INTERNAL_QUEUE_DROP`).
    InternalQueue,
}

impl DropReason {
    pub const ALL: [DropReason; 8] = [
        DropReason::LimitExceeded,
        DropReason::Overlimit,
        DropReason::TargetExceeded,
        DropReason::ChildTargetExceeded,
        DropReason::ChildOverlimit,
        DropReason::Unforced,
        DropReason::Forced,
        DropReason::InternalQueue,
    ];

    fn index(self) -> usize {
        self as usize
    }

    /// An active-queue-management decision (CoDel's control law, RED's or
    /// PIE's early drop) rather than a full queue.
    pub fn is_aqm(self) -> bool {
        matches!(
            self,
            DropReason::TargetExceeded | DropReason::ChildTargetExceeded | DropReason::Unforced
        )
    }

    /// The reason string ns-3.44 uses for this drop.
    pub fn ns3_name(self) -> &'static str {
        match self {
            DropReason::LimitExceeded => "Queue disc limit exceeded",
            DropReason::Overlimit => "Overlimit drop",
            DropReason::TargetExceeded => "Target exceeded drop",
            DropReason::ChildTargetExceeded => "(Dropped by child queue disc) Target exceeded drop",
            DropReason::ChildOverlimit => "(Dropped by child queue disc) Overlimit drop",
            DropReason::Unforced => "Unforced drop",
            DropReason::Forced => "Forced drop",
            DropReason::InternalQueue => "Dropped by internal queue",
        }
    }
}

/// A packet a queue disc dropped, with why and when.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dropped<T> {
    pub item: Item<T>,
    pub reason: DropReason,
    pub at: Time,
}

/// Counters of a queue disc, as ns-3's `QueueDisc::Stats`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Offered to `enqueue`.
    pub received_packets: u64,
    pub received_bytes: u64,
    /// Stored (`PacketEnqueued`).
    pub enqueued_packets: u64,
    pub enqueued_bytes: u64,
    /// Taken out of storage, including those then dropped (`PacketDequeued`).
    pub dequeued_packets: u64,
    pub dequeued_bytes: u64,
    pub dropped_before_enqueue_packets: u64,
    pub dropped_before_enqueue_bytes: u64,
    pub dropped_after_dequeue_packets: u64,
    pub dropped_after_dequeue_bytes: u64,
    by_reason: [(u64, u64); DropReason::ALL.len()],
}

impl Stats {
    /// All counters zero (a `const`, unlike `Default`).
    pub const EMPTY: Stats = Stats {
        received_packets: 0,
        received_bytes: 0,
        enqueued_packets: 0,
        enqueued_bytes: 0,
        dequeued_packets: 0,
        dequeued_bytes: 0,
        dropped_before_enqueue_packets: 0,
        dropped_before_enqueue_bytes: 0,
        dropped_after_dequeue_packets: 0,
        dropped_after_dequeue_bytes: 0,
        by_reason: [(0, 0); DropReason::ALL.len()],
    };

    /// Handed on by `dequeue` (`QueueDisc::GetStats`: dequeued minus dropped
    /// after dequeue; no requeues here).
    pub fn sent_packets(&self) -> u64 {
        self.dequeued_packets - self.dropped_after_dequeue_packets
    }

    pub fn sent_bytes(&self) -> u64 {
        self.dequeued_bytes - self.dropped_after_dequeue_bytes
    }

    /// Packets and bytes dropped for `reason`.
    pub fn dropped(&self, reason: DropReason) -> (u64, u64) {
        self.by_reason[reason.index()]
    }

    pub fn dropped_packets(&self) -> u64 {
        self.dropped_before_enqueue_packets + self.dropped_after_dequeue_packets
    }

    fn received(&mut self, bytes: u32) {
        self.received_packets += 1;
        self.received_bytes += u64::from(bytes);
    }

    fn enqueued(&mut self, bytes: u32) {
        self.enqueued_packets += 1;
        self.enqueued_bytes += u64::from(bytes);
    }

    fn dequeued(&mut self, bytes: u32) {
        self.dequeued_packets += 1;
        self.dequeued_bytes += u64::from(bytes);
    }

    fn by_reason(&mut self, reason: DropReason, bytes: u32) {
        let e = &mut self.by_reason[reason.index()];
        e.0 += 1;
        e.1 += u64::from(bytes);
    }

    /// `QueueDisc::DropBeforeEnqueue`.
    fn dropped_before(&mut self, reason: DropReason, bytes: u32) {
        self.dropped_before_enqueue_packets += 1;
        self.dropped_before_enqueue_bytes += u64::from(bytes);
        self.by_reason(reason, bytes);
    }

    /// `QueueDisc::DropAfterDequeue`.
    fn dropped_after(&mut self, reason: DropReason, bytes: u32) {
        self.dropped_after_dequeue_packets += 1;
        self.dropped_after_dequeue_bytes += u64::from(bytes);
        self.by_reason(reason, bytes);
    }
}

/// One queue disc. `now` must not decrease from call to call.
pub trait QueueDisc<T> {
    /// Offer an item at `now` (ns-3 `QueueDisc::Enqueue`). On success the
    /// item is stored with `enqueued_at = now`; on a drop before enqueue it
    /// is handed back with the reason.
    fn enqueue(&mut self, now: Time, item: Item<T>) -> Result<(), Dropped<T>>;

    /// Take the next item to transmit at `now` (ns-3 `QueueDisc::Dequeue`),
    /// applying the AQM decisions ns-3 makes at dequeue. Items dropped on the
    /// way are added to [`QueueDisc::drain_drops`].
    fn dequeue(&mut self, now: Time) -> Option<Item<T>>;

    /// Offer `item` at `now` to the empty queue disc and take it straight
    /// back out, where the discipline can do so without storing it: exactly
    /// what `enqueue` then `dequeue` at `now` would do to the state, for a
    /// packet that both accept. Returns false, having changed nothing, where
    /// it cannot (then call `enqueue` and `dequeue`). Disciplines with
    /// periodic work of their own ([`QueueDisc::periodic_work`]) do not pass.
    fn pass_through(&mut self, _now: Time, _item: &Item<T>) -> bool {
        false
    }

    /// Packets stored (`QueueDisc::GetNPackets`).
    fn len_packets(&self) -> usize;

    /// Bytes stored (`QueueDisc::GetNBytes`).
    fn len_bytes(&self) -> u64;

    fn stats(&self) -> &Stats;

    /// Items dropped after they had been stored, oldest first, since the last
    /// call (none for disciplines that decide only at enqueue).
    fn drain_drops(&mut self) -> Vec<Dropped<T>> {
        Vec::new()
    }

    /// The next time the queue disc has work of its own (PIE's periodic
    /// drop-probability update), if any. Such work is also caught up at the
    /// start of every `enqueue`/`dequeue`, so calling [`QueueDisc::on_timer`]
    /// is optional.
    fn next_timer(&self) -> Option<Time> {
        None
    }

    /// Run the queue disc's own work due at or before `now`.
    fn on_timer(&mut self, _now: Time) {}

    /// Units of its own work done so far (PIE: drop-probability updates run),
    /// which the run counts against its event budget as ns-3 counts the
    /// events that schedule them.
    fn periodic_work(&self) -> u64 {
        0
    }

    fn is_empty(&self) -> bool {
        self.len_packets() == 0
    }
}

/// Uniform draws on (0, 1] for RED's and PIE's drop decisions. ns-3 draws
/// from `UniformRandomVariable::GetValue()` on (0, 1), so a zero drop
/// probability never drops (`u <= p` with `u > 0`).
pub trait UniformSource {
    fn next_u01(&mut self) -> f64;
}

impl UniformSource for RngStream {
    fn next_u01(&mut self) -> f64 {
        // uniform() is on [0, 1); 1 - u is on (0, 1].
        1.0 - self.uniform()
    }
}

/// A duration in seconds as ns-3's `Time::GetSeconds` gives it: the
/// nanoseconds divided by 1e9 (correctly rounded here; ns-3 divides in
/// 64.64 fixed point, which may differ in the last bit).
pub(crate) fn seconds(d: crate::engine::Duration) -> f64 {
    d.as_nanos() as f64 / 1e9
}

/// A FIFO of items with a byte count (ns-3's internal `DropTailQueue`).
#[derive(Clone, Debug)]
pub(crate) struct Fifo<T> {
    items: VecDeque<Item<T>>,
    bytes: u64,
}

impl<T> Default for Fifo<T> {
    fn default() -> Self {
        Fifo {
            items: VecDeque::new(),
            bytes: 0,
        }
    }
}

impl<T> Fifo<T> {
    pub(crate) fn push(&mut self, item: Item<T>) {
        self.bytes += u64::from(item.bytes);
        self.items.push_back(item);
    }

    pub(crate) fn pop(&mut self) -> Option<Item<T>> {
        let item = self.items.pop_front()?;
        self.bytes -= u64::from(item.bytes);
        Some(item)
    }

    pub(crate) fn len(&self) -> usize {
        self.items.len()
    }

    pub(crate) fn bytes(&self) -> u64 {
        self.bytes
    }
}

/// Which discipline, with its parameters: what a resolved scenario names
/// (`{"kind": "fq_codel", ...every parameter}`).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum QdiscConf {
    PfifoFast(PfifoFastParams),
    #[serde(rename = "codel")]
    CoDel(CoDelParams),
    #[serde(rename = "fq_codel")]
    FqCoDel(FqCoDelParams),
    Red(RedParams),
    Pie(PieParams),
}

impl QdiscConf {
    /// The discipline's name as scenarios write it.
    pub fn name(&self) -> &'static str {
        match self {
            QdiscConf::PfifoFast(_) => "pfifo_fast",
            QdiscConf::CoDel(_) => "codel",
            QdiscConf::FqCoDel(_) => "fq_codel",
            QdiscConf::Red(_) => "red",
            QdiscConf::Pie(_) => "pie",
        }
    }
}

/// Any of the disciplines, dispatched by value.
pub enum Qdisc<T> {
    PfifoFast(PfifoFast<T>),
    CoDel(CoDel<T>),
    FqCoDel(FqCoDel<T>),
    Red(Red<T>),
    Pie(Pie<T>),
}

impl<T> Qdisc<T> {
    /// Build the discipline `conf` names, created at `now` (PIE's first
    /// update is `Supdate` after its creation). `rng` feeds RED and PIE.
    pub fn new(conf: &QdiscConf, now: Time, rng: RngStream) -> Self {
        match conf {
            QdiscConf::PfifoFast(p) => Qdisc::PfifoFast(PfifoFast::new(p.clone())),
            QdiscConf::CoDel(p) => Qdisc::CoDel(CoDel::new(p.clone())),
            QdiscConf::FqCoDel(p) => Qdisc::FqCoDel(FqCoDel::new(p.clone())),
            QdiscConf::Red(p) => Qdisc::Red(Red::new(p.clone(), rng)),
            QdiscConf::Pie(p) => Qdisc::Pie(Pie::new(p.clone(), now, rng)),
        }
    }
}

/// Call `$call` on the discipline inside a [`Qdisc`], statically dispatched
/// (so that the discipline's code inlines into the link's per-packet path).
macro_rules! dispatch {
    ($self:expr, $q:ident => $call:expr) => {
        match $self {
            Qdisc::PfifoFast($q) => $call,
            Qdisc::CoDel($q) => $call,
            Qdisc::FqCoDel($q) => $call,
            Qdisc::Red($q) => $call,
            Qdisc::Pie($q) => $call,
        }
    };
}

impl<T> QueueDisc<T> for Qdisc<T> {
    #[inline]
    fn enqueue(&mut self, now: Time, item: Item<T>) -> Result<(), Dropped<T>> {
        dispatch!(self, q => q.enqueue(now, item))
    }
    #[inline]
    fn dequeue(&mut self, now: Time) -> Option<Item<T>> {
        dispatch!(self, q => q.dequeue(now))
    }
    #[inline]
    fn pass_through(&mut self, now: Time, item: &Item<T>) -> bool {
        dispatch!(self, q => q.pass_through(now, item))
    }
    #[inline]
    fn len_packets(&self) -> usize {
        dispatch!(self, q => q.len_packets())
    }
    fn len_bytes(&self) -> u64 {
        dispatch!(self, q => q.len_bytes())
    }
    fn stats(&self) -> &Stats {
        dispatch!(self, q => q.stats())
    }
    #[inline]
    fn drain_drops(&mut self) -> Vec<Dropped<T>> {
        dispatch!(self, q => q.drain_drops())
    }
    fn next_timer(&self) -> Option<Time> {
        dispatch!(self, q => q.next_timer())
    }
    fn on_timer(&mut self, now: Time) {
        dispatch!(self, q => q.on_timer(now))
    }
    #[inline]
    fn periodic_work(&self) -> u64 {
        dispatch!(self, q => q.periodic_work())
    }
}

#[cfg(test)]
pub(crate) mod testutil {
    use std::collections::VecDeque;

    use super::UniformSource;

    /// Draws given by the test, then a constant.
    pub struct Scripted {
        pub values: VecDeque<f64>,
        pub then: f64,
        pub draws: usize,
    }

    impl Scripted {
        pub fn constant(u: f64) -> Self {
            Scripted {
                values: VecDeque::new(),
                then: u,
                draws: 0,
            }
        }
    }

    impl UniformSource for Scripted {
        fn next_u01(&mut self) -> f64 {
            self.draws += 1;
            self.values.pop_front().unwrap_or(self.then)
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use proptest::prelude::*;

    use super::*;
    use crate::engine::Duration;

    #[test]
    fn limits_compare_as_ns3_queue_size() {
        // GetCurrentSize() + item > GetMaxSize(): 2 packets + 1 > 3 is false.
        assert!(!Limit::Packets(3).exceeded_by(2, 0, 1500));
        assert!(Limit::Packets(3).exceeded_by(3, 0, 1));
        // Bytes: 3000 + 1500 > 4500 is false, 3001 + 1500 > 4500 is true.
        assert!(!Limit::Bytes(4500).exceeded_by(2, 3000, 1500));
        assert!(Limit::Bytes(4500).exceeded_by(2, 3001, 1500));
        assert_eq!(DropReason::Overlimit.ns3_name(), "Overlimit drop");
    }

    #[derive(Clone, Debug)]
    enum Op {
        Enq {
            dt_us: u64,
            bytes: u32,
            flow: u32,
            prio: u8,
        },
        Deq {
            dt_us: u64,
        },
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            3 => (0u64..3_000, 40u32..=1500, 0u32..6, 0u8..16)
                .prop_map(|(dt_us, bytes, flow, prio)| Op::Enq { dt_us, bytes, flow, prio }),
            2 => (0u64..3_000).prop_map(|dt_us| Op::Deq { dt_us }),
        ]
    }

    fn small_confs() -> Vec<QdiscConf> {
        // Small limits so that every drop path is reached.
        vec![
            QdiscConf::PfifoFast(PfifoFastParams { limit_packets: 20 }),
            QdiscConf::CoDel(CoDelParams {
                limit: Limit::Bytes(30_000),
                ..CoDelParams::default()
            }),
            QdiscConf::FqCoDel(FqCoDelParams {
                limit_packets: 20,
                flows: 4,
                drop_batch_size: 3,
                ..FqCoDelParams::default()
            }),
            QdiscConf::Red(RedParams {
                limit: Limit::Packets(20),
                min_th: 2.0,
                max_th: 6.0,
                q_w: 0.2,
                l_interm: 5.0,
                ..RedParams::default()
            }),
            QdiscConf::Pie(PieParams {
                limit: Limit::Packets(20),
                max_burst: Duration::from_millis(15),
                ..PieParams::default()
            }),
        ]
    }

    #[test]
    fn small_configurations_reach_their_drop_paths() {
        // The configurations of the property below, under a 5:3 mix of arrivals
        // (3 flows, 40..1500 B) and departures 0..3 ms apart for 4 s: each must drop
        // for the reasons its discipline has, or the property would prove little.
        let mut rng = RngStream::for_component(1, "qdisc/coverage");
        let want: [&[DropReason]; 5] = [
            &[DropReason::LimitExceeded],
            &[DropReason::Overlimit, DropReason::TargetExceeded],
            &[DropReason::Overlimit, DropReason::ChildTargetExceeded],
            &[DropReason::Unforced, DropReason::Forced],
            &[DropReason::Unforced, DropReason::Forced],
        ];
        for (conf, reasons) in small_confs().iter().zip(want) {
            let mut q: Qdisc<u64> = Qdisc::new(conf, Time::ZERO, RngStream::for_component(2, "q"));
            let mut now = Time::ZERO;
            let mut id = 0;
            while now < Time(4_000_000_000) {
                now += Duration::from_micros(rng.uniform_int(0, 3_000));
                if rng.uniform_int(0, 7) < 5 {
                    let bytes = rng.uniform_int(40, 1500) as u32;
                    let flow = rng.uniform_int(0, 2) as u32;
                    let _ = q.enqueue(now, Item::new(id, bytes).with_flow(flow));
                    id += 1;
                } else {
                    q.dequeue(now);
                }
                q.drain_drops();
            }
            for r in reasons {
                assert!(
                    q.stats().dropped(*r).0 > 0,
                    "{conf:?}: no {r:?} drop: {:?}",
                    q.stats()
                );
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

        /// Every offered packet ends exactly once: handed on, dropped (before
        /// enqueue or after), or still queued; the counters agree with the items.
        #[test]
        fn no_packet_is_lost_or_duplicated(ops in prop::collection::vec(op(), 1..400), seed in any::<u64>()) {
            for conf in small_confs() {
                let mut q: Qdisc<u64> = Qdisc::new(&conf, Time::ZERO, RngStream::for_component(seed, "q"));
                let mut now = Time::ZERO;
                let mut offered = BTreeSet::new();
                let mut sizes = std::collections::BTreeMap::new();
                let mut out: Vec<u64> = Vec::new();
                let mut dropped_before: Vec<u64> = Vec::new();
                let mut dropped_after: Vec<u64> = Vec::new();
                for (id, o) in ops.iter().enumerate() {
                    let id = id as u64;
                    match *o {
                        Op::Enq { dt_us, bytes, flow, prio } => {
                            now += Duration::from_micros(dt_us);
                            offered.insert(id);
                            sizes.insert(id, bytes);
                            let it = Item::new(id, bytes).with_flow(flow).with_priority(prio);
                            if let Err(d) = q.enqueue(now, it) {
                                prop_assert_eq!(d.item.payload, id);
                                dropped_before.push(id);
                            }
                        }
                        Op::Deq { dt_us } => {
                            now += Duration::from_micros(dt_us);
                            if let Some(it) = q.dequeue(now) {
                                prop_assert!(it.enqueued_at <= now);
                                out.push(it.payload);
                            }
                        }
                    }
                    dropped_after.extend(q.drain_drops().into_iter().map(|d| d.item.payload));
                    let s = q.stats().clone();
                    prop_assert_eq!(s.received_packets, s.enqueued_packets + s.dropped_before_enqueue_packets);
                    prop_assert_eq!(s.received_bytes, s.enqueued_bytes + s.dropped_before_enqueue_bytes);
                    prop_assert_eq!(s.enqueued_packets - s.dequeued_packets, q.len_packets() as u64);
                    prop_assert_eq!(s.enqueued_bytes - s.dequeued_bytes, q.len_bytes());
                    prop_assert_eq!(s.sent_packets(), out.len() as u64);
                    prop_assert_eq!(s.dropped_before_enqueue_packets, dropped_before.len() as u64);
                    prop_assert_eq!(s.dropped_after_dequeue_packets, dropped_after.len() as u64);
                    let by_reason: u64 = DropReason::ALL.iter().map(|r| s.dropped(*r).0).sum();
                    prop_assert_eq!(by_reason, s.dropped_packets());
                }
                // Drain what is left, 1 ms apart (AQMs may still drop on the way). Every
                // dequeue of a non-empty queue must take at least one packet out.
                while !q.is_empty() {
                    let before = q.len_packets();
                    now += Duration::from_millis(1);
                    if let Some(it) = q.dequeue(now) {
                        out.push(it.payload);
                    }
                    dropped_after.extend(q.drain_drops().into_iter().map(|d| d.item.payload));
                    prop_assert!(q.len_packets() < before, "dequeue made no progress");
                }
                prop_assert_eq!(q.len_bytes(), 0);
                let mut all: Vec<u64> = out.iter().chain(&dropped_before).chain(&dropped_after).copied().collect();
                all.sort_unstable();
                let n = all.len();
                all.dedup();
                prop_assert_eq!(n, all.len(), "a packet came out twice");
                prop_assert_eq!(all.into_iter().collect::<BTreeSet<_>>(), offered);
                let s = q.stats();
                let sent_bytes: u64 = out.iter().map(|id| u64::from(sizes[id])).sum();
                prop_assert_eq!(s.sent_bytes(), sent_bytes);
            }
        }
    }
}
