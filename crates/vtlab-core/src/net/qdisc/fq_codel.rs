//! FQ-CoDel (RFC 8290) as ns-3.44's `FqCoDelQueueDisc`
//! (`src/traffic-control/model/fq-codel-queue-disc.cc`), the root queue disc
//! ns-3 installs by default on single-queue devices since ns-3.30.
//!
//! Packets are hashed into `Flows` (1024) flow queues, each a CoDel queue
//! disc, served by deficit round robin with a list of new flows served before
//! the list of old ones. The rules, with the ns-3 function each comes from:
//! * Classification: queue `flow_hash % Flows` (`DoEnqueue`; ns-3 hashes the
//!   5-tuple and `Perturbation` in `Ipv4QueueDiscItem::Hash`, here the caller
//!   supplies the hash). Flow queues are created on first use, and "creation
//!   order" (ns-3's class list) is what breaks ties in the fat-flow search.
//! * An inactive flow receiving a packet becomes a new flow with deficit =
//!   quantum, appended to the new list (`DoEnqueue`).
//! * The packet is enqueued in the flow's CoDel, whose `MaxSize` is the whole
//!   queue disc's (`InitializeParams`); it refuses a packet only when that one
//!   flow alone holds the whole limit ("(Dropped by child queue disc)
//!   Overlimit drop").
//! * If the queue disc then holds more than `MaxSize` (10240) packets, it
//!   drops from the head of the flow with the most bytes (the first created
//!   among equals) until `DropBatchSize` (64) packets are dropped or at least
//!   half that flow's bytes are ("Overlimit drop"; `FqCoDelDrop`). The
//!   arriving packet is accepted and usually survives.
//! * Dequeue (`DoDequeue`): the head of the new list, if its deficit is ≤ 0,
//!   gets a quantum more and moves to the tail of the old list; likewise the
//!   head of the old list, if its deficit is ≤ 0, gets a quantum and moves to
//!   the old tail. The first flow with a positive deficit is asked for a packet
//!   (its CoDel may drop some: "(Dropped by child queue disc) Target exceeded
//!   drop"). If it has none, a flow from the new list moves to the old list
//!   (ns-3 always does; Linux only when the old list is not empty) and a flow
//!   from the old list becomes inactive; then selection starts over.
//!   Otherwise the packet's size is charged to the flow's deficit.
//! * Quantum: ns-3 has no attribute; `CheckConfig` sets it to the device MTU
//!   (1500 for a `PointToPointNetDevice`), not Linux's MTU + 14.
//! * `UseEcn` defaults to true in ns-3, but vtlab's packets are not
//!   ECN-capable, so CoDel drops instead of marking. Set-associative hashing,
//!   L4S and `CeThreshold` are not modelled.

use std::collections::VecDeque;

use super::codel::{CoDelParams, CoDelState};
use super::{DropReason, Dropped, Fifo, Item, QueueDisc, Stats};
use crate::engine::{Duration, Time};

/// Attributes of `ns3::FqCoDelQueueDisc` (and the quantum it takes from the device).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FqCoDelParams {
    /// `MaxSize`, packets only (the constructor fixes the unit). Default 10240.
    pub limit_packets: u32,
    /// `Flows`: number of flow queues. Default 1024.
    pub flows: u32,
    /// `DropBatchSize`: most packets dropped from the fat flow at once. Default 64.
    pub drop_batch_size: u32,
    /// Bytes a flow may send per round: the device MTU, 1500 for point-to-point
    /// (`CheckConfig`; `SetQuantum` overrides).
    pub quantum: u32,
    /// `Interval` of each flow's CoDel. Default 100 ms.
    pub interval: Duration,
    /// `Target` of each flow's CoDel. Default 5 ms.
    pub target: Duration,
    /// `CoDelQueueDisc::MinBytes` of each flow's CoDel (its own default, 1500).
    pub min_bytes: u32,
}

impl Default for FqCoDelParams {
    fn default() -> Self {
        FqCoDelParams {
            limit_packets: 10240,
            flows: 1024,
            drop_batch_size: 64,
            quantum: 1500,
            interval: Duration::from_millis(100),
            target: Duration::from_millis(5),
            min_bytes: 1500,
        }
    }
}

/// `FqCoDelFlow::FlowStatus`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlowStatus {
    Inactive,
    NewFlow,
    OldFlow,
}

/// One flow queue (`FqCoDelFlow` and its child `CoDelQueueDisc`).
struct Flow<T> {
    bucket: u32,
    deficit: i32,
    status: FlowStatus,
    fifo: Fifo<T>,
    codel: CoDelState,
}

/// An unused bucket in `FqCoDel::index`.
const NO_FLOW: u32 = u32::MAX;

/// `ns3::FqCoDelQueueDisc`.
pub struct FqCoDel<T> {
    params: FqCoDelParams,
    /// Flow queues in creation order (ns-3's queue disc classes).
    flows: Vec<Flow<T>>,
    /// Bucket → index in `flows` (`m_flowsIndices`), `NO_FLOW` if the
    /// bucket has none yet: one entry per bucket (`flows` ≤ 65,536, checked
    /// with the scenario), looked up on every packet.
    index: Vec<u32>,
    new_flows: VecDeque<usize>,
    old_flows: VecDeque<usize>,
    packets: usize,
    bytes: u64,
    stats: Stats,
    dropped: Vec<Dropped<T>>,
    scratch: Vec<Item<T>>,
    /// A flow's CoDel keeps a packet it dequeues at once with nothing queued
    /// behind it (see [`QueueDisc::pass_through`]).
    lone_packet_kept: bool,
}

impl<T> FqCoDel<T> {
    pub fn new(params: FqCoDelParams) -> Self {
        assert!(params.flows > 0, "FQ-CoDel needs at least one flow queue");
        assert!(params.quantum > 0, "the quantum parameter cannot be null");
        let mut q = FqCoDel {
            lone_packet_kept: false,
            index: vec![NO_FLOW; params.flows as usize],
            params,
            flows: Vec::new(),
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
            packets: 0,
            bytes: 0,
            stats: Stats::default(),
            dropped: Vec::new(),
            scratch: Vec::new(),
        };
        q.lone_packet_kept = CoDelState::new(&q.codel_params()).keeps_lone_packet();
        q
    }

    fn codel_params(&self) -> CoDelParams {
        CoDelParams {
            limit: super::Limit::Packets(self.params.limit_packets),
            min_bytes: self.params.min_bytes,
            interval: self.params.interval,
            target: self.params.target,
        }
    }

    /// The flow queue a hash goes to.
    pub fn bucket(&self, flow_hash: u32) -> u32 {
        let flows = self.params.flows;
        if flows.is_power_of_two() {
            // The same remainder without a division (1024 flows by default).
            flow_hash & (flows - 1)
        } else {
            flow_hash % flows
        }
    }

    fn flow(&self, bucket: u32) -> Option<&Flow<T>> {
        let i = *self.index.get(bucket as usize)?;
        (i != NO_FLOW).then(|| &self.flows[i as usize])
    }

    /// Status of flow queue `bucket` (inactive if never used).
    pub fn flow_status(&self, bucket: u32) -> FlowStatus {
        self.flow(bucket).map_or(FlowStatus::Inactive, |f| f.status)
    }

    /// Deficit of flow queue `bucket`, if it exists.
    pub fn deficit(&self, bucket: u32) -> Option<i32> {
        self.flow(bucket).map(|f| f.deficit)
    }

    /// Packets queued in flow queue `bucket`.
    pub fn flow_len(&self, bucket: u32) -> usize {
        self.flow(bucket).map_or(0, |f| f.fifo.len())
    }

    /// Buckets on the new list, head first.
    pub fn new_list(&self) -> Vec<u32> {
        self.new_flows
            .iter()
            .map(|&i| self.flows[i].bucket)
            .collect()
    }

    /// Buckets on the old list, head first.
    pub fn old_list(&self) -> Vec<u32> {
        self.old_flows
            .iter()
            .map(|&i| self.flows[i].bucket)
            .collect()
    }

    /// `FqCoDelDrop`: drop from the head of the fattest flow.
    fn drop_from_fat_flow(&mut self, now: Time) {
        let mut max_backlog = 0u64;
        let mut fat = 0usize;
        for (i, f) in self.flows.iter().enumerate() {
            if f.fifo.bytes() > max_backlog {
                max_backlog = f.fifo.bytes();
                fat = i;
            }
        }
        // Our goal is to drop half of this fat flow's backlog.
        let threshold = max_backlog >> 1;
        let mut len = 0u64;
        let mut count = 0u32;
        loop {
            // Taken straight from the flow's internal queue, bypassing its CoDel.
            let Some(item) = self.flows[fat].fifo.pop() else {
                break;
            };
            self.packets -= 1;
            self.bytes -= u64::from(item.bytes);
            self.stats.dequeued(item.bytes);
            self.stats.dropped_after(DropReason::Overlimit, item.bytes);
            len += u64::from(item.bytes);
            self.dropped.push(Dropped {
                item,
                reason: DropReason::Overlimit,
                at: now,
            });
            count += 1;
            if !(count < self.params.drop_batch_size && len < threshold) {
                break;
            }
        }
    }
}

impl<T> FqCoDel<T> {
    /// The flow queue of `flow_hash`, created on first use, activated (put
    /// on the new list with a quantum of deficit) if it was inactive: the
    /// first half of `DoEnqueue`.
    #[inline(always)]
    fn activate(&mut self, flow_hash: u32) -> usize {
        let bucket = self.bucket(flow_hash);
        let idx = match self.index[bucket as usize] {
            NO_FLOW => {
                let codel = CoDelState::new(&self.codel_params());
                self.flows.push(Flow {
                    bucket,
                    deficit: 0,
                    status: FlowStatus::Inactive,
                    fifo: Fifo::default(),
                    codel,
                });
                let idx = self.flows.len() - 1;
                self.index[bucket as usize] = idx as u32;
                idx
            }
            i => i as usize,
        };
        let flow = &mut self.flows[idx];
        if flow.status == FlowStatus::Inactive {
            flow.status = FlowStatus::NewFlow;
            flow.deficit = self.params.quantum as i32;
            self.new_flows.push_back(idx);
        }
        idx
    }

    /// `DoDequeue`'s choice of a flow: heads with no deficit left get a
    /// quantum more and go to the tail of the old list; the first head with
    /// a positive deficit (new list first) is chosen. `None`: both lists empty.
    #[inline(always)]
    fn next_flow(&mut self) -> Option<usize> {
        let quantum = self.params.quantum as i32;
        while let Some(&f) = self.new_flows.front() {
            let flow = &mut self.flows[f];
            if flow.deficit > 0 {
                return Some(f);
            }
            flow.deficit += quantum;
            flow.status = FlowStatus::OldFlow;
            self.new_flows.pop_front();
            self.old_flows.push_back(f);
        }
        while let Some(&f) = self.old_flows.front() {
            let flow = &mut self.flows[f];
            if flow.deficit > 0 {
                return Some(f);
            }
            flow.deficit += quantum;
            self.old_flows.pop_front();
            self.old_flows.push_back(f);
        }
        None
    }

    /// The chosen flow `f` had no packet: a new flow moves to the old list
    /// (ns-3 always does; Linux only when the old list is not empty), an old
    /// one becomes inactive.
    #[inline(always)]
    fn retire(&mut self, f: usize) {
        // The new list is non-empty exactly when `f` came from it.
        if !self.new_flows.is_empty() {
            self.flows[f].status = FlowStatus::OldFlow;
            self.old_flows.push_back(f);
            self.new_flows.pop_front();
        } else {
            self.flows[f].status = FlowStatus::Inactive;
            self.old_flows.pop_front();
        }
    }
}

impl<T> FqCoDel<T> {
    /// The end of `pass_through`: flow `idx`'s CoDel keeps the lone packet of
    /// `bytes` (and leaves its dropping state), which is charged to the flow's
    /// deficit and counted as dequeued.
    #[inline(always)]
    fn keep_lone_packet(&mut self, idx: usize, bytes: u32) -> bool {
        let flow = &mut self.flows[idx];
        flow.codel.keep_lone_packet();
        flow.deficit -= bytes as i32;
        self.stats.dequeued(bytes);
        true
    }
}

impl<T> QueueDisc<T> for FqCoDel<T> {
    fn enqueue(&mut self, now: Time, mut item: Item<T>) -> Result<(), Dropped<T>> {
        self.stats.received(item.bytes);
        let idx = self.activate(item.flow_hash);
        let flow = &mut self.flows[idx];
        // The flow's CoDelQueueDisc::DoEnqueue, with MaxSize = this queue disc's.
        if flow.fifo.len() as u64 + 1 > u64::from(self.params.limit_packets) {
            self.stats
                .dropped_before(DropReason::ChildOverlimit, item.bytes);
            return Err(Dropped {
                item,
                reason: DropReason::ChildOverlimit,
                at: now,
            });
        }
        item.enqueued_at = now;
        self.stats.enqueued(item.bytes);
        self.packets += 1;
        self.bytes += u64::from(item.bytes);
        flow.fifo.push(item);
        // DoEnqueue: GetCurrentSize() > GetMaxSize() → FqCoDelDrop.
        if self.packets > self.params.limit_packets as usize {
            self.drop_from_fat_flow(now);
        }
        Ok(())
    }

    fn dequeue(&mut self, now: Time) -> Option<Item<T>> {
        loop {
            // No flow found to dequeue a packet: `?`.
            let f = self.next_flow()?;
            let flow = &mut self.flows[f];
            let item = if flow.fifo.len() == 0 {
                // CoDel's DoDequeue of an empty queue only leaves the dropping state.
                flow.codel.leave_dropping();
                None
            } else {
                flow.codel.dequeue(now, &mut flow.fifo, &mut self.scratch)
            };
            for d in self.scratch.drain(..) {
                self.packets -= 1;
                self.bytes -= u64::from(d.bytes);
                self.stats.dequeued(d.bytes);
                self.stats
                    .dropped_after(DropReason::ChildTargetExceeded, d.bytes);
                self.dropped.push(Dropped {
                    item: d,
                    reason: DropReason::ChildTargetExceeded,
                    at: now,
                });
            }
            let Some(item) = item else {
                self.retire(f);
                continue;
            };
            // IncreaseDeficit(item->GetSize() * -1).
            flow.deficit -= item.bytes as i32;
            self.packets -= 1;
            self.bytes -= u64::from(item.bytes);
            self.stats.dequeued(item.bytes);
            return Some(item);
        }
    }

    /// `enqueue` then `dequeue` of `item` at `now` into the empty queue disc,
    /// without storing it: the packet is accepted (the limit is at least one
    /// packet), its flow activated, and the DRR rotation run as `dequeue`
    /// runs it, every flow chosen before the packet's own being empty; the
    /// packet's CoDel sees a sojourn of 0 with no bytes behind it, which is
    /// below target (or under `MinBytes`), so it is kept and CoDel leaves
    /// the dropping state. Declined (nothing changed) when the queue disc
    /// is not empty, its limit is 0, or its CoDel's target and `MinBytes`
    /// are both 0 (then CoDel could drop the lone packet).
    fn pass_through(&mut self, _now: Time, item: &Item<T>) -> bool {
        if self.packets != 0 || self.params.limit_packets == 0 || !self.lone_packet_kept {
            return false;
        }
        self.stats.received(item.bytes);
        let idx = self.activate(item.flow_hash);
        self.stats.enqueued(item.bytes);
        // `dequeue`'s rotation (`next_flow`, `retire`) with every flow chosen
        // before the packet's own empty. New list: a head without deficit gets
        // a quantum and goes to the old list; a head with deficit is chosen,
        // found empty and goes to the old list too.
        let quantum = self.params.quantum as i32;
        while let Some(&f) = self.new_flows.front() {
            let flow = &mut self.flows[f];
            if flow.deficit > 0 {
                if f == idx {
                    return self.keep_lone_packet(idx, item.bytes);
                }
                flow.codel.leave_dropping();
            } else {
                flow.deficit += quantum;
            }
            flow.status = FlowStatus::OldFlow;
            self.new_flows.pop_front();
            self.old_flows.push_back(f);
        }
        // Old list (the packet's flow is on it now): a head without deficit
        // gets a quantum and goes to the tail; one with deficit is chosen, and
        // found empty it becomes inactive.
        while let Some(&f) = self.old_flows.front() {
            let flow = &mut self.flows[f];
            if flow.deficit <= 0 {
                flow.deficit += quantum;
                self.old_flows.pop_front();
                self.old_flows.push_back(f);
            } else if f == idx {
                return self.keep_lone_packet(idx, item.bytes);
            } else {
                flow.codel.leave_dropping();
                flow.status = FlowStatus::Inactive;
                self.old_flows.pop_front();
            }
        }
        unreachable!("the packet's flow is on the new or the old list")
    }

    fn len_packets(&self) -> usize {
        self.packets
    }

    fn len_bytes(&self) -> u64 {
        self.bytes
    }

    fn stats(&self) -> &Stats {
        &self.stats
    }

    #[inline]
    fn drain_drops(&mut self) -> Vec<Dropped<T>> {
        if self.dropped.is_empty() {
            // Keep the buffer: most passes drop nothing.
            return Vec::new();
        }
        std::mem::take(&mut self.dropped)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fq(limit: u32, batch: u32) -> FqCoDel<u32> {
        FqCoDel::new(FqCoDelParams {
            limit_packets: limit,
            drop_batch_size: batch,
            ..FqCoDelParams::default()
        })
    }

    fn enq(q: &mut FqCoDel<u32>, now: Time, id: u32, bytes: u32, flow: u32) {
        q.enqueue(now, Item::new(id, bytes).with_flow(flow))
            .unwrap();
    }

    fn drain_at(q: &mut FqCoDel<u32>, now: Time) -> Vec<u32> {
        std::iter::from_fn(|| q.dequeue(now).map(|i| i.payload)).collect()
    }

    #[test]
    fn fq_codel_drr_shares_bytes_per_round() {
        // Flow A (hash 1): 4 × 1500 B, ids 0..4; flow B (hash 2): 12 × 500 B, ids
        // 100..112; quantum 1500; all at t = 0 (sojourn 0: CoDel never drops).
        let mut q = fq(10240, 64);
        for k in 0..4 {
            enq(&mut q, Time::ZERO, k, 1500, 1);
        }
        for k in 0..12 {
            enq(&mut q, Time::ZERO, 100 + k, 500, 2);
        }
        assert_eq!(q.new_list(), vec![1, 2]);
        // By hand (deficits after each dequeue):
        //  1: new head A (1500) → A0, A = 0.
        //  2: A ≤ 0 → +1500, to old [A]; new head B (1500) → B0, B = 1000.
        //  3, 4: B1 (500), B2 (0).
        //  5: B ≤ 0 → +1500, to old [A, B]; old head A (1500) → A1, A = 0.
        //  6: A ≤ 0 → +1500, rotate [B, A]; B → B3 (1000); 7, 8: B4, B5 (0).
        //  9: B → +1500, rotate [A, B]; A → A2 (0). 10–12: B6, B7, B8.
        // 13: A3. 14–16: B9, B10, B11. Each round: 1500 B of each flow.
        let order = drain_at(&mut q, Time::ZERO);
        assert_eq!(
            order,
            vec![0, 100, 101, 102, 1, 103, 104, 105, 2, 106, 107, 108, 3, 109, 110, 111]
        );
        // 17th dequeue: B (0) → +1500, rotate [A, B]; A (1500) is empty and came from
        // the old list → inactive; then B likewise; nothing left.
        assert_eq!(q.dequeue(Time::ZERO), None);
        assert_eq!(q.flow_status(1), FlowStatus::Inactive);
        assert_eq!(q.flow_status(2), FlowStatus::Inactive);
        assert!(q.old_list().is_empty() && q.new_list().is_empty());
        assert_eq!((q.deficit(1), q.deficit(2)), (Some(1500), Some(1500)));
    }

    #[test]
    fn fq_codel_new_flows_go_first_and_an_emptied_new_flow_turns_old() {
        let mut q = fq(10240, 64);
        // Flow A (hash 1) backlogged with 500 B packets, ids 0..10.
        for k in 0..10 {
            enq(&mut q, Time::ZERO, k, 500, 1);
        }
        // A: 1500 → 1000 → 500 → 0 over A0..A2; 4th: A to old with +1500, A3 (1000).
        assert_eq!(drain_n(&mut q, 4), vec![0, 1, 2, 3]);
        assert_eq!((q.new_list(), q.old_list()), (vec![], vec![1]));
        // Flow C (hash 3) sends one 500 B packet: a new flow, served before backlogged A.
        enq(&mut q, Time::ZERO, 300, 500, 3);
        assert_eq!(drain_n(&mut q, 1), vec![300]);
        // Next: C heads the new list with deficit 1000 but is empty: it moves to the
        // old list behind A (not inactive); A (1000) then sends A4 (500).
        assert_eq!(drain_n(&mut q, 1), vec![4]);
        assert_eq!(q.flow_status(3), FlowStatus::OldFlow);
        assert_eq!(q.old_list(), vec![1, 3]);
        // C's next packet finds C still active: no new-flow priority, it waits behind
        // A: A5 (A 500 → 0), then A (0) gets +1500 and rotates behind C; C2 goes.
        enq(&mut q, Time::ZERO, 301, 500, 3);
        assert_eq!(q.new_list(), Vec::<u32>::new());
        assert_eq!(drain_n(&mut q, 2), vec![5, 301]);
        // C (500) heads the old list but is empty: inactive, dropped from the list;
        // A (1500) sends A6.
        assert_eq!(drain_n(&mut q, 1), vec![6]);
        assert_eq!(q.flow_status(3), FlowStatus::Inactive);
        // Now a packet of C makes it a new flow again and it goes first.
        enq(&mut q, Time::ZERO, 302, 500, 3);
        assert_eq!(q.flow_status(3), FlowStatus::NewFlow);
        assert_eq!(drain_n(&mut q, 2), vec![302, 7]);
    }

    #[test]
    fn fq_codel_emptied_new_flow_turns_old_even_when_no_flow_is_old() {
        // Where ns-3 departs from Linux: C (hash 3) and D (hash 4), one 500 B packet
        // each, both new, no old flow.
        let mut q = fq(10240, 64);
        enq(&mut q, Time::ZERO, 300, 500, 3);
        enq(&mut q, Time::ZERO, 400, 500, 4);
        // 1st dequeue: C0 (C deficit 1000). 2nd: C heads the new list, empty. ns-3
        // moves it to the old list (Linux would drop it from the lists because the
        // old list is empty); the new list still has D: D0.
        assert_eq!(drain_n(&mut q, 2), vec![300, 400]);
        assert_eq!(q.flow_status(3), FlowStatus::OldFlow);
        assert_eq!((q.new_list(), q.old_list()), (vec![4], vec![3]));
        // So C's next packet gets no new-flow priority: D (new, deficit 1000, empty)
        // moves to old behind C, then C (old, 1000) sends C1.
        enq(&mut q, Time::ZERO, 301, 500, 3);
        assert_eq!(q.flow_status(3), FlowStatus::OldFlow);
        assert_eq!(q.old_list(), vec![3]);
        assert_eq!(drain_n(&mut q, 1), vec![301]);
        assert_eq!(q.old_list(), vec![3, 4]);
    }

    fn drain_n(q: &mut FqCoDel<u32>, n: usize) -> Vec<u32> {
        (0..n)
            .filter_map(|_| q.dequeue(Time::ZERO).map(|i| i.payload))
            .collect()
    }

    #[test]
    fn fq_codel_overlimit_drops_half_the_fattest_flow() {
        // Limit 10 packets. A (hash 1): 6 × 1500 B = 9000 B; B (hash 2): 4 × 500 B.
        let mut q = fq(10, 64);
        for k in 0..6 {
            enq(&mut q, Time::ZERO, k, 1500, 1);
        }
        for k in 0..4 {
            enq(&mut q, Time::ZERO, 100 + k, 500, 2);
        }
        assert!(q.drain_drops().is_empty());
        // An 11th packet (for B) is accepted, then 11 > 10: the fat flow is A (9000 B),
        // threshold 9000 >> 1 = 4500; drop A's head until 4500 B are gone:
        // 1500, 3000 (< 4500, go on), 4500 (stop). Three packets.
        enq(&mut q, Time::ZERO, 104, 500, 2);
        let d: Vec<(u32, DropReason)> = q
            .drain_drops()
            .into_iter()
            .map(|d| (d.item.payload, d.reason))
            .collect();
        assert_eq!(
            d,
            vec![
                (0, DropReason::Overlimit),
                (1, DropReason::Overlimit),
                (2, DropReason::Overlimit)
            ]
        );
        assert_eq!((q.len_packets(), q.flow_len(1), q.flow_len(2)), (8, 3, 5));
        assert_eq!(q.stats().dropped(DropReason::Overlimit), (3, 4500));
        // With DropBatchSize 2 the same overflow drops two packets only.
        let mut q = fq(10, 2);
        for k in 0..6 {
            enq(&mut q, Time::ZERO, k, 1500, 1);
        }
        for k in 0..5 {
            enq(&mut q, Time::ZERO, 100 + k, 500, 2);
        }
        assert_eq!(q.drain_drops().len(), 2);
        assert_eq!(q.flow_len(1), 4);
    }

    #[test]
    fn fq_codel_fat_flow_ties_go_to_the_first_created_and_one_flow_cannot_hold_more_than_the_limit()
    {
        // A (hash 5, created first) and B (hash 6) hold 2000 B each; limit 4.
        let mut q = fq(4, 64);
        enq(&mut q, Time::ZERO, 0, 1000, 5);
        enq(&mut q, Time::ZERO, 100, 1000, 6);
        enq(&mut q, Time::ZERO, 1, 1000, 5);
        enq(&mut q, Time::ZERO, 101, 1000, 6);
        // A fifth packet (flow C): B is not strictly fatter than A, so A loses its head;
        // threshold 1000: one packet of 1000 B reaches it.
        enq(&mut q, Time::ZERO, 200, 100, 7);
        let d: Vec<u32> = q
            .drain_drops()
            .into_iter()
            .map(|d| d.item.payload)
            .collect();
        assert_eq!(d, vec![0]);
        // A single flow holding the whole limit refuses one more (its CoDel's own
        // MaxSize = 4 packets): a child overlimit drop, the queue disc stays at 4.
        let mut q = fq(4, 64);
        for k in 0..4 {
            enq(&mut q, Time::ZERO, k, 1500, 1);
        }
        let e = q
            .enqueue(Time::ZERO, Item::new(4, 1500).with_flow(1))
            .unwrap_err();
        assert_eq!(e.reason, DropReason::ChildOverlimit);
        assert_eq!(
            e.reason.ns3_name(),
            "(Dropped by child queue disc) Overlimit drop"
        );
        assert_eq!(q.len_packets(), 4);
        assert!(q.drain_drops().is_empty());
    }

    #[test]
    fn fq_codel_flow_queue_runs_codel_and_is_charged_only_for_what_it_sends() {
        // One flow, 12 × 1500 B at t = 0. As in CoDel alone: at 10 ms (unit 9765) the
        // sojourn goes above target, first_above = 9765 + 97656 = 107421; at unit 107422
        // the head is dropped and the next one sent.
        let mut q = fq(10240, 64);
        for k in 0..12 {
            enq(&mut q, Time::ZERO, k, 1500, 9);
        }
        assert_eq!(q.dequeue(Time(10_000_000)).map(|i| i.payload), Some(0));
        assert_eq!(q.deficit(9), Some(0));
        assert_eq!(q.dequeue(Time(107_422 << 10)).map(|i| i.payload), Some(2));
        let d = q.drain_drops();
        assert_eq!(
            (d.len(), d[0].item.payload, d[0].reason),
            (1, 1, DropReason::ChildTargetExceeded)
        );
        // Deficit 0 → +1500 (to old) → −1500 for packet 2 only: 0.
        assert_eq!(q.deficit(9), Some(0));
        assert_eq!(q.len_packets(), 9);
        let s = q.stats();
        assert_eq!((s.dequeued_packets, s.sent_packets()), (3, 2));
        assert_eq!(s.dropped(DropReason::ChildTargetExceeded), (1, 1500));
    }

    #[test]
    fn fq_codel_defaults_are_ns3s() {
        let p = FqCoDelParams::default();
        assert_eq!(
            (p.limit_packets, p.flows, p.drop_batch_size, p.quantum),
            (10240, 1024, 64, 1500)
        );
        assert_eq!(
            (p.interval, p.target),
            (Duration::from_millis(100), Duration::from_millis(5))
        );
        // Buckets: hash % Flows.
        let q: FqCoDel<()> = FqCoDel::new(p);
        assert_eq!(q.bucket(1024 + 7), 7);
    }

    /// Everything `pass_through` may touch, for comparing two queue discs.
    fn state(q: &FqCoDel<u32>) -> String {
        let flows: Vec<String> = q
            .flows
            .iter()
            .map(|f| {
                format!(
                    "{} {} {:?} {} {:?}",
                    f.bucket,
                    f.deficit,
                    f.status,
                    f.fifo.len(),
                    f.codel
                )
            })
            .collect();
        format!(
            "{flows:?} new {:?} old {:?} {} {} {:?}",
            q.new_flows, q.old_flows, q.packets, q.bytes, q.stats
        )
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 96, ..Default::default() })]

        /// `pass_through` changes the state exactly as `enqueue` then `dequeue`
        /// of the same packet (the reference), whatever came before: bursts
        /// that build queues (so CoDel enters its dropping state), few flows
        /// (so empty flows stay on the lists), packets of any size.
        #[test]
        fn pass_through_is_enqueue_then_dequeue(
            ops in proptest::collection::vec((0u8..4, 0u64..40_000, 40u32..3000, 0u32..5), 1..300),
            target_us in proptest::sample::select(vec![0u64, 1, 5000]),
            min_bytes in proptest::sample::select(vec![0u32, 1500]),
        ) {
            let params = FqCoDelParams {
                flows: 4,
                target: Duration::from_micros(target_us),
                min_bytes,
                ..FqCoDelParams::default()
            };
            let mut reference: FqCoDel<u32> = FqCoDel::new(params.clone());
            let mut fast: FqCoDel<u32> = FqCoDel::new(params);
            let mut now = Time::ZERO;
            let mut passed = 0;
            for (id, &(kind, dt_us, bytes, flow)) in ops.iter().enumerate() {
                now += Duration::from_micros(dt_us);
                let item = Item::new(id as u32, bytes).with_flow(flow);
                match kind {
                    // Offer a packet the way the link does: straight through if
                    // the discipline can, else stored and the queue run once.
                    0 | 1 => {
                        let through = fast.pass_through(now, &item);
                        if through {
                            passed += 1;
                            proptest::prop_assert!(reference.is_empty());
                        } else {
                            let _ = fast.enqueue(now, item.clone());
                            let _ = fast.dequeue(now);
                        }
                        let _ = reference.enqueue(now, item);
                        let got = reference.dequeue(now).map(|i| i.payload);
                        if through {
                            proptest::prop_assert_eq!(got, Some(id as u32));
                        }
                    }
                    // Build a queue: store without dequeuing.
                    2 => {
                        let _ = fast.enqueue(now, item.clone());
                        let _ = reference.enqueue(now, item);
                    }
                    _ => {
                        let _ = fast.dequeue(now);
                        let _ = reference.dequeue(now);
                    }
                }
                fast.drain_drops();
                reference.drain_drops();
                proptest::prop_assert_eq!(state(&fast), state(&reference));
            }
            // A target under one CoDel time unit with no MinBytes: never passed.
            if target_us < 2 && min_bytes == 0 {
                proptest::prop_assert_eq!(passed, 0);
            }
        }
    }
}
