//! One direction of a full-duplex point-to-point link: a drop-tail transmit
//! queue feeding a transmitter of fixed rate, a propagation delay, and a loss
//! model at the receiving end.
//!
//! Speed through structure (after htsim's queue/pipe): a packet's transmission
//! start and arrival times are fixed when it is enqueued, because the queue is
//! FIFO and the rate constant. The direction keeps its packets in one FIFO in
//! arrival order and needs a single pending event: the arrival of its head.
//! Events therefore scale with links, not with packets in flight, and there
//! is no separate "transmission complete" event.
//!
//! Queue semantics follow ns-3's `PointToPointNetDevice` with a `DropTailQueue`:
//! the packet being transmitted has left the queue, the limit counts waiting
//! packets only, and a packet that finds the queue full is dropped.
//!
//! A cellular direction is the same structure with another server: instead of
//! a constant rate, a capacity schedule (delivery opportunities from a trace or
//! the channel model, [`crate::net::cellular`]) fixes each packet's departure
//! when it is enqueued, and its queue limit counts every packet not yet gone
//! (mahimahi's semantics), in packets and optionally in bytes.
//! Shared media (an 802.11 DCF channel) cannot be a pair of FIFO directions:
//! they are link families ([`crate::net::family`]). See docs/architecture.md.

use std::collections::VecDeque;

use crate::engine::{Duration, RngStream, Time};
use crate::net::cellular::CapacityConf;
use crate::net::qdisc::dql::{Dql, DqlParams};
use crate::net::qdisc::{Item, Qdisc, QdiscConf, QueueDisc, Stats as QdiscStats};
use crate::net::{LossModel, NodeId, Packet};

/// Static parameters of a link direction.
#[derive(Clone, Debug)]
pub struct LinkParams {
    pub rate_bps: u64,
    pub delay: Duration,
    /// Maximum number of packets waiting for the transmitter.
    pub queue_packets: u32,
    /// Maximum bytes (IP packets plus framing) waiting, if limited.
    pub queue_bytes: Option<u64>,
    /// Link-layer bytes added to each IP packet (2 for ns-3's PPP header).
    pub framing_bytes: u32,
    /// Largest IP packet the link carries unfragmented.
    pub mtu_bytes: u32,
}

impl LinkParams {
    /// Serialisation time of a frame of `bytes` bytes, rounded to the nearest ns.
    pub fn tx_time(&self, bytes: u32) -> Duration {
        let bits = u128::from(bytes) * 8;
        let rate = u128::from(self.rate_bps);
        Duration(((bits * 1_000_000_000 + rate / 2) / rate) as u64)
    }
}

/// Counters of one link direction.
#[derive(Clone, Debug, Default)]
pub struct LinkDirStats {
    /// Packets that reached the far end (not lost to link errors).
    pub packets_carried: u64,
    pub bytes_carried: u64,
    pub drops_queue: u64,
    /// Packets lost at the receiving end: the loss model, or a failed
    /// cellular transport block (counted in `drops_harq` too).
    pub drops_link_error: u64,
    /// Packets lost because their cellular transport block failed every HARQ
    /// attempt (channel model only).
    pub drops_harq: u64,
}

#[derive(Clone, Copy, Debug)]
struct Slot {
    tx_start: Time,
    /// When its last bit has been sent (it no longer counts as queued).
    tx_end: Time,
    arrival: Time,
    /// Bytes accepted up to and including this packet.
    cum_bytes: u64,
    /// Lost in a failed cellular transport block.
    harq_lost: bool,
    packet: Packet,
}

/// ns-3's `QueueDisc::m_quota`: most packets one `Run` hands to the device.
const QDISC_QUOTA: u32 = 64;

/// The root queue disc of a direction and the flow control between it and
/// the device queue (ns-3's `TrafficControlLayer` and `NetDeviceQueue`).
struct TrafficControl {
    /// The queue disc holds slots of `packets`, so that it moves small items,
    /// not whole packets.
    qdisc: Qdisc<u32>,
    packets: PacketSlots,
    name: &'static str,
    /// The device queue stopped the queue disc (`m_stoppedByDevice`).
    stopped: bool,
    /// The start of transmission already reported for a wake (at most one
    /// pending: the next one).
    watching: Option<Time>,
    /// Byte queue limits (`QueueLimits` of the device queue), if installed.
    dql: Option<Dql>,
    /// Byte queue limits stopped the queue disc (`m_stoppedByQueueLimits`).
    stopped_by_limits: bool,
    /// Packets handed to the device queue, and of those reported to the
    /// byte queue limits as transmitted (dequeued by the device).
    handed: u64,
    completed: u64,
}

impl TrafficControl {
    fn is_stopped(&self) -> bool {
        self.stopped || self.stopped_by_limits
    }

    /// The device queue is full: stop the queue disc. Returns the time of a
    /// device-dequeue event to schedule, `next` (the next start of
    /// transmission), unless one is pending there or byte queue limits report
    /// every dequeue.
    fn stop(&mut self, next: Option<Time>) -> Option<Time> {
        self.stopped = true;
        let t = next.filter(|&t| self.watching != Some(t) && self.dql.is_none())?;
        self.watching = Some(t);
        Some(t)
    }
}

/// Packets held by a queue disc, in reusable slots: a queue disc's items
/// carry a slot number instead of the packet (about 24 bytes instead of
/// 170), which is most of what offering a packet to an empty queue disc and
/// taking it straight out again costs. Slots grow to the queue disc's peak
/// backlog, which its limit bounds.
#[derive(Default)]
struct PacketSlots {
    slots: Vec<Packet>,
    free: Vec<u32>,
}

impl PacketSlots {
    fn put(&mut self, p: Packet) -> u32 {
        match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = p;
                i
            }
            None => {
                self.slots.push(p);
                (self.slots.len() - 1) as u32
            }
        }
    }

    fn take(&mut self, i: u32) -> Packet {
        self.free.push(i);
        self.slots[i as usize]
    }
}

/// What a pass through the traffic-control layer did; the caller acts on it
/// and clears it.
#[derive(Debug, Default)]
pub struct TcOut {
    /// Packets handed to the device queue.
    pub sent_count: u64,
    /// Keep the packets handed to the device queue in `sent` (for captures).
    pub record_sent: bool,
    /// Packets handed to the device queue, in order, if `record_sent`.
    pub sent: Vec<Packet>,
    /// Packets the queue disc dropped, with whether the drop was an AQM
    /// decision (else a full queue).
    pub dropped: Vec<(Packet, bool)>,
    /// Schedule this direction's arrival event at this time.
    pub arrival: Option<Time>,
    /// Schedule a device-dequeue event for this direction at this time: the
    /// next start of transmission, which frees a slot of the stopped device
    /// queue ([`LinkDir::tc_wake`] then runs, as ns-3's `Wake`).
    pub tx_start: Option<Time>,
    /// The queue disc's own work done in the pass
    /// ([`QueueDisc::periodic_work`]: PIE's updates caught up).
    pub work: u64,
}

impl TcOut {
    pub fn is_empty(&self) -> bool {
        self.sent_count == 0
            && self.dropped.is_empty()
            && self.arrival.is_none()
            && self.tx_start.is_none()
    }
}

/// A packet [`LinkDir::tc_pass`] handed to the device queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Passed {
    /// What the device queue did with it.
    pub enqueued: Enqueued,
    /// Schedule a device-dequeue event for this direction at this time (the
    /// device queue is now full and stopped the queue disc).
    pub tx_start: Option<Time>,
}

pub use crate::net::cellular::ScheduleServer;

/// Outcome of offering a packet to a link direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Enqueued {
    /// Accepted; if `Some(t)`, the caller must schedule this direction's
    /// arrival event at `t` (the direction had nothing pending).
    Accepted(Option<Time>),
    /// Dropped: the queue was full.
    QueueFull,
}

/// What happened to the packet at the head when it reached the far end.
pub enum Arrival {
    Delivered(Packet),
    Lost(Packet),
}

pub struct LinkDir {
    pub name: String,
    pub from: NodeId,
    pub to: NodeId,
    pub params: LinkParams,
    loss: LossModel,
    fifo: VecDeque<Slot>,
    /// When the transmitter finishes the last accepted packet.
    busy_until: Time,
    /// Bytes accepted so far.
    cum_bytes: u64,
    /// `cum_bytes` of the last packet that left the FIFO.
    popped_bytes: u64,
    /// The capacity schedule of a cellular direction (`None`: constant rate).
    server: Option<ScheduleServer>,
    /// The root queue disc in front of the device queue, if any.
    tc: Option<Box<TrafficControl>>,
    /// Packets that have left the FIFO (reached the far end).
    popped: u64,
    pub stats: LinkDirStats,
}

impl LinkDir {
    pub fn new(
        name: String,
        from: NodeId,
        to: NodeId,
        params: LinkParams,
        loss: LossModel,
    ) -> Self {
        LinkDir {
            name,
            from,
            to,
            params,
            loss,
            fifo: VecDeque::with_capacity(128),
            busy_until: Time::ZERO,
            cum_bytes: 0,
            popped_bytes: 0,
            server: None,
            tc: None,
            popped: 0,
            stats: LinkDirStats::default(),
        }
    }

    /// Put a root queue disc in front of this (constant-rate) direction's
    /// device queue, with ns-3's flow control: the device queue stops the
    /// queue disc when it holds `queue_packets` (or cannot take one more
    /// MTU-sized frame within `queue_bytes`) and wakes it at the next start
    /// of transmission. `rng` feeds RED's and PIE's drop draws.
    pub fn with_qdisc(mut self, conf: &QdiscConf, rng: RngStream) -> Self {
        self.tc = Some(Box::new(TrafficControl {
            qdisc: Qdisc::new(conf, Time::ZERO, rng),
            packets: PacketSlots::default(),
            name: conf.name(),
            stopped: false,
            watching: None,
            dql: None,
            stopped_by_limits: false,
            handed: 0,
            completed: 0,
        }));
        self
    }

    /// Add byte queue limits to the flow control of the queue disc
    /// ([`LinkDir::with_qdisc`] first): ns-3's `DynamicQueueLimits`, fed the
    /// bytes (framing included) the device queue takes and hands to the
    /// transmitter; while they are over the limit the queue disc is stopped.
    pub fn with_bql(mut self, params: &DqlParams) -> Self {
        if let Some(tc) = self.tc.as_mut() {
            tc.dql = Some(Dql::new(params.clone(), Time::ZERO));
        }
        self
    }

    /// The current byte queue limit, if the direction has one.
    pub fn bql_limit(&self) -> Option<u32> {
        self.tc.as_ref()?.dql.as_ref().map(Dql::limit)
    }

    /// The queue disc's name and counters, if the direction has one.
    pub fn qdisc(&self) -> Option<(&'static str, &QdiscStats)> {
        self.tc.as_ref().map(|tc| (tc.name, tc.qdisc.stats()))
    }

    pub fn has_qdisc(&self) -> bool {
        self.tc.is_some()
    }

    /// ns-3's `TrafficControlLayer::Send`: offer `item` to the queue disc,
    /// then run it. Outcomes are added to `out`.
    pub fn tc_send(&mut self, now: Time, item: Item<Packet>, out: &mut TcOut) {
        if let Some(passed) = self.tc_pass(now, item.payload, item.flow_hash, item.priority) {
            match passed.enqueued {
                Enqueued::Accepted(arrival) => {
                    out.arrival = out.arrival.or(arrival);
                    out.sent_count += 1;
                    if out.record_sent {
                        out.sent.push(item.payload);
                    }
                }
                Enqueued::QueueFull => out.dropped.push((item.payload, false)),
            }
            out.tx_start = passed.tx_start.or(out.tx_start);
            return;
        }
        let Some(mut tc) = self.tc.take() else {
            return;
        };
        let work = tc.qdisc.periodic_work();
        let small = Item {
            payload: tc.packets.put(item.payload),
            bytes: item.bytes,
            flow_hash: item.flow_hash,
            priority: item.priority,
            enqueued_at: item.enqueued_at,
        };
        if let Err(d) = tc.qdisc.enqueue(now, small) {
            let p = tc.packets.take(d.item.payload);
            out.dropped.push((p, d.reason.is_aqm()));
        }
        self.tc = Some(tc);
        self.tc_run(now, out);
        out.work += self.qdisc_work() - work;
    }

    /// [`LinkDir::tc_send`]'s fast path, for a packet (of `packet.ip_bytes`,
    /// flow hash and priority as given) that finds the queue disc empty and
    /// not stopped by the device: where the discipline can pass it straight
    /// through ([`QueueDisc::pass_through`]; byte queue limits take the
    /// general path), it goes to the device queue at once. `None`: nothing
    /// was done, call `tc_send`.
    #[inline]
    pub fn tc_pass(
        &mut self,
        now: Time,
        packet: Packet,
        flow_hash: u32,
        priority: u8,
    ) -> Option<Passed> {
        let tc = self.tc.as_mut()?;
        let item = Item::new(0u32, packet.ip_bytes)
            .with_flow(flow_hash)
            .with_priority(priority);
        if tc.is_stopped() || tc.dql.is_some() || !tc.qdisc.pass_through(now, &item) {
            return None;
        }
        let enqueued = self.enqueue(now, packet);
        let full = self.next_start_if_full(now);
        let tc = self.tc.as_mut()?;
        if let Enqueued::Accepted(_) = enqueued {
            tc.handed += 1;
        }
        let tx_start = full.and_then(|next| tc.stop(next));
        Some(Passed { enqueued, tx_start })
    }

    fn qdisc_work(&self) -> u64 {
        self.tc.as_ref().map_or(0, |tc| tc.qdisc.periodic_work())
    }

    /// The device dequeued a packet at `now` (it started transmitting):
    /// ns-3's `NetDeviceQueue::PacketDequeued` → `Wake`, which runs the
    /// queue disc only if the device had stopped it.
    pub fn tc_wake(&mut self, now: Time, out: &mut TcOut) {
        let work = self.qdisc_work();
        self.wake(now, out);
        out.work += self.qdisc_work() - work;
    }

    fn wake(&mut self, now: Time, out: &mut TcOut) {
        let Some(tc) = self.tc.as_mut() else {
            return;
        };
        if tc.watching == Some(now) {
            tc.watching = None;
        }
        let tc: &mut TrafficControl = tc;
        if let Some(dql) = tc.dql.as_mut() {
            // NotifyTransmittedBytes for the packet that started now, then
            // Wake through the queue limits if they had stopped the queue disc.
            while tc.completed < tc.handed {
                let idx = (tc.completed - self.popped) as usize;
                let Some(slot) = self.fifo.get(idx).filter(|s| s.tx_start <= now) else {
                    break;
                };
                dql.completed(now, slot.packet.ip_bytes + self.params.framing_bytes);
                tc.completed += 1;
            }
            if dql.available() >= 0 && std::mem::replace(&mut tc.stopped_by_limits, false) {
                self.tc_run(now, out);
            }
            self.watch_next_completion(out);
        }
        if self.device_full(now) {
            return;
        }
        let tc = self.tc.as_mut().expect("checked above");
        if std::mem::replace(&mut tc.stopped, false) {
            self.tc_run(now, out);
        }
    }

    /// With byte queue limits every device dequeue is reported: ask for an
    /// event at the start of the next packet not yet reported.
    fn watch_next_completion(&mut self, out: &mut TcOut) {
        let Some(tc) = self.tc.as_mut() else {
            return;
        };
        if tc.dql.is_none() || tc.watching.is_some() || tc.completed >= tc.handed {
            return;
        }
        let idx = (tc.completed - self.popped) as usize;
        if let Some(t) = self.fifo.get(idx).map(|s| s.tx_start) {
            tc.watching = Some(t);
            out.tx_start = Some(t);
        }
    }

    /// Whether the device queue could not take one more MTU-sized packet
    /// (`Queue::WouldOverflow(1, mtu)`).
    #[inline]
    fn device_full(&self, now: Time) -> bool {
        let frame = u64::from(self.params.mtu_bytes + self.params.framing_bytes);
        self.over_limit(now, frame)
    }

    /// Whether the queue at `now` holds `queue_packets` packets or could not
    /// take `frame` more bytes within `queue_bytes`.
    #[inline]
    fn over_limit(&self, now: Time, frame: u64) -> bool {
        // The FIFO's whole contents bound what is queued at `now` (a search
        // for the first packet still queued is needed only near the limits).
        let may_be_full = self.fifo.len() >= self.params.queue_packets as usize;
        let held_bytes = self.cum_bytes - self.popped_bytes;
        let may_overflow = self
            .params
            .queue_bytes
            .is_some_and(|b| held_bytes + frame > b);
        (may_be_full && self.queue_len(now) >= self.params.queue_packets as usize)
            || (may_overflow
                && self
                    .params
                    .queue_bytes
                    .is_some_and(|b| self.queue_bytes(now) + frame > b))
    }

    /// ns-3's `QueueDisc::Run`: hand packets to the device until the queue
    /// disc is empty, the device queue stops it, or the quota is used.
    fn tc_run(&mut self, now: Time, out: &mut TcOut) {
        let Some(mut tc) = self.tc.take() else {
            return;
        };
        let mut quota = QDISC_QUOTA;
        while !tc.is_stopped() {
            let item = tc.qdisc.dequeue(now);
            for d in tc.qdisc.drain_drops() {
                let p = tc.packets.take(d.item.payload);
                out.dropped.push((p, d.reason.is_aqm()));
            }
            let Some(item) = item else {
                break;
            };
            let packet = tc.packets.take(item.payload);
            self.hand_to_device(&mut tc, now, packet, out);
            // `Transmit` returns false when the queue disc is empty or stopped.
            if tc.qdisc.is_empty() || tc.is_stopped() {
                break;
            }
            quota -= 1;
            if quota == 0 {
                break;
            }
        }
        self.tc = Some(tc);
        self.watch_next_completion(out);
    }

    /// Hand `packet`, just dequeued from the queue disc, to the device queue
    /// (ns-3's `QueueDisc::Transmit`), and stop the queue disc if the device
    /// queue is now full (asking for a wake at its next start of transmission).
    fn hand_to_device(
        &mut self,
        tc: &mut TrafficControl,
        now: Time,
        packet: Packet,
        out: &mut TcOut,
    ) {
        match self.enqueue(now, packet) {
            Enqueued::Accepted(arrival) => {
                out.arrival = out.arrival.or(arrival);
                out.sent_count += 1;
                if out.record_sent {
                    out.sent.push(packet);
                }
                tc.handed += 1;
                // NotifyQueuedBytes.
                if let Some(dql) = tc.dql.as_mut() {
                    dql.queued(packet.ip_bytes + self.params.framing_bytes);
                    tc.stopped_by_limits |= dql.available() < 0;
                }
            }
            // Cannot happen: the device stops the queue disc before it is full.
            Enqueued::QueueFull => out.dropped.push((packet, false)),
        }
        if let Some(t) = self.next_start_if_full(now).and_then(|next| tc.stop(next)) {
            out.tx_start = Some(t);
        }
    }

    /// `None` if the device queue has room; else `Some` of the next start of
    /// transmission (of the first packet still queued), if any.
    #[inline]
    fn next_start_if_full(&self, now: Time) -> Option<Option<Time>> {
        if !self.device_full(now) {
            return None;
        }
        let first = self.first_queued(now);
        Some(self.fifo.get(first).map(|s| s.tx_start))
    }

    /// Serve this direction from a capacity schedule instead of its rate.
    pub fn with_schedule(mut self, server: ScheduleServer) -> Self {
        self.server = Some(server);
        self
    }

    /// Serve this direction from a cellular capacity (a trace or the channel
    /// model, which draws from `rng`) instead of its rate.
    pub fn with_capacity(self, conf: &CapacityConf, rng: RngStream) -> Self {
        self.with_schedule(conf.server(rng))
    }

    /// Index of the first packet still queued at `now`: for a constant rate,
    /// the first not yet being transmitted (ns-3's device queue); for a
    /// schedule, the first not yet gone (mahimahi's queue).
    fn first_queued(&self, now: Time) -> usize {
        if self.server.is_some() {
            self.fifo.partition_point(|s| s.tx_end <= now)
        } else {
            self.fifo.partition_point(|s| s.tx_start <= now)
        }
    }

    /// Packets queued at `now` (see [`LinkDir::first_queued`]).
    pub fn queue_len(&self, now: Time) -> usize {
        self.fifo.len() - self.first_queued(now)
    }

    /// Packets waiting at `now` in the device queue and the queue disc
    /// together (the queue's high-water mark the emulator reports).
    pub fn backlog(&self, now: Time) -> usize {
        self.queue_len(now) + self.tc.as_ref().map_or(0, |tc| tc.qdisc.len_packets())
    }

    /// Bytes (with framing) queued at `now`.
    pub fn queue_bytes(&self, now: Time) -> u64 {
        match self.first_queued(now) {
            0 => self.cum_bytes - self.popped_bytes,
            i => self.cum_bytes - self.fifo[i - 1].cum_bytes,
        }
    }

    /// Offer a packet to the transmit queue at `now`.
    pub fn enqueue(&mut self, now: Time, packet: Packet) -> Enqueued {
        let frame = packet.ip_bytes + self.params.framing_bytes;
        let busy = self.server.is_some() || self.busy_until > now;
        let full = busy && self.over_limit(now, u64::from(frame));
        if full {
            self.stats.drops_queue += 1;
            return Enqueued::QueueFull;
        }
        let (tx_start, tx_end, harq_lost) = match &mut self.server {
            None => {
                let start = self.busy_until.max(now);
                (start, start + self.params.tx_time(frame), false)
            }
            Some(server) => {
                let s = server.serve(now, frame);
                (s.start, s.end, s.lost)
            }
        };
        self.busy_until = tx_end;
        self.cum_bytes += u64::from(frame);
        let arrival = tx_end + self.params.delay;
        let was_idle = self.fifo.is_empty();
        self.fifo.push_back(Slot {
            tx_start,
            tx_end,
            arrival,
            cum_bytes: self.cum_bytes,
            harq_lost,
            packet,
        });
        Enqueued::Accepted(was_idle.then_some(arrival))
    }

    /// Handle this direction's arrival event at `now`: the head packet reaches
    /// the far end and meets the loss model. Returns the packet's fate and the
    /// time of the next arrival event to schedule, if any.
    pub fn arrive(&mut self, now: Time) -> (Option<Arrival>, Option<Time>) {
        let fate = match self.fifo.front() {
            Some(head) if head.arrival <= now => {
                let slot = self.fifo.pop_front();
                slot.map(|s| {
                    self.popped_bytes = s.cum_bytes;
                    self.popped += 1;
                    let p = s.packet;
                    if s.harq_lost || self.loss.drops(now) {
                        self.stats.drops_harq += u64::from(s.harq_lost);
                        self.stats.drops_link_error += 1;
                        Arrival::Lost(p)
                    } else {
                        self.stats.packets_carried += 1;
                        // IP bytes, as the 802.11 medium and the bus count them
                        // (docs/metrics.md): the framing is the link's, not the packet's.
                        self.stats.bytes_carried += u64::from(p.ip_bytes);
                        Arrival::Delivered(p)
                    }
                })
            }
            _ => None,
        };
        (fate, self.fifo.front().map(|s| s.arrival))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::PacketKind;

    fn pkt(ip_bytes: u32) -> Packet {
        Packet {
            flow: 0,
            dst: NodeId(1),
            kind: PacketKind::Data,
            seq: 0,
            len: ip_bytes - 40,
            ack: 0,
            rwnd: 0,
            ts_val: Time::ZERO,
            ts_ecr: Time::ZERO,
            ip_bytes,
            sack: Default::default(),
            sack_len: 0,
            frag_index: 0,
            frag_count: 1,
            piggyback: false,
            push: false,
        }
    }

    fn plc(queue: u32) -> LinkDir {
        LinkDir::new(
            "plc".into(),
            NodeId(0),
            NodeId(1),
            LinkParams {
                rate_bps: 10_000_000,
                delay: Duration::from_micros(900),
                queue_packets: queue,
                queue_bytes: None,
                framing_bytes: 2,
                mtu_bytes: 1500,
            },
            LossModel::None,
        )
    }

    #[test]
    fn frame_timing_is_exact() {
        let mut l = plc(100);
        // 1500 B IP + 2 B framing = 1502 B at 10 Mbit/s: 1.2016 ms, plus 0.9 ms.
        assert_eq!(l.params.tx_time(1502), Duration(1_201_600));
        assert_eq!(
            l.enqueue(Time(0), pkt(1500)),
            Enqueued::Accepted(Some(Time(2_101_600)))
        );
        // The second packet waits for the first: arrives one frame time later.
        assert_eq!(l.enqueue(Time(0), pkt(1500)), Enqueued::Accepted(None));
        let (fate, next) = l.arrive(Time(2_101_600));
        assert!(matches!(fate, Some(Arrival::Delivered(_))));
        assert_eq!(next, Some(Time(2_101_600 + 1_201_600)));
    }

    #[test]
    fn queue_limit_counts_waiting_packets_only() {
        let mut l = plc(2);
        // First goes straight to the transmitter; two wait; the fourth is dropped.
        for _ in 0..3 {
            assert!(matches!(
                l.enqueue(Time(0), pkt(1500)),
                Enqueued::Accepted(_)
            ));
        }
        assert_eq!(l.queue_len(Time(0)), 2);
        assert_eq!(l.enqueue(Time(0), pkt(1500)), Enqueued::QueueFull);
        assert_eq!(l.stats.drops_queue, 1);
        // Once the first transmission ends the second starts: room for one more.
        assert_eq!(l.queue_len(Time(1_201_600)), 1);
        assert!(matches!(
            l.enqueue(Time(1_201_600), pkt(1500)),
            Enqueued::Accepted(None)
        ));
    }

    #[test]
    fn fragments_fit_the_mtu() {
        // ns-3 with timestamps: 1460 B payload + 40 B headers + 12 B option =
        // 1512 B, split at MTU 1500 into 1500 B and 20 + 12 = 32 B.
        let sizes: Vec<u32> = pkt(1512).fragments(1500).map(|f| f.ip_bytes).collect();
        assert_eq!(sizes, vec![1500, 32]);
        let f: Vec<_> = pkt(1512).fragments(1500).collect();
        assert_eq!((f[1].frag_index, f[1].frag_count), (1, 2));
        // Payloads are multiples of 8 except the last: MTU 576 → 552 B per fragment.
        let sizes: Vec<u32> = pkt(1500).fragments(576).map(|f| f.ip_bytes).collect();
        assert_eq!(sizes, vec![572, 572, 396]);
        // A packet that fits is one "fragment".
        assert_eq!(pkt(1500).fragments(1500).count(), 1);
    }

    #[test]
    fn idle_transmitter_starts_at_enqueue_time() {
        let mut l = plc(1);
        l.enqueue(Time(0), pkt(1500));
        l.arrive(Time(2_101_600));
        assert_eq!(
            l.enqueue(Time(10_000_000), pkt(1500)),
            Enqueued::Accepted(Some(Time(12_101_600)))
        );
    }

    fn cellular(queue: u32, queue_bytes: Option<u64>, times_ms: &[u64]) -> LinkDir {
        use crate::net::cellular::schedule::{OpportunitySource, Server, TraceSource};
        let mut l = plc(queue);
        l.params.queue_bytes = queue_bytes;
        l.params.framing_bytes = 4;
        l.params.delay = Duration::from_millis(4);
        let src: Box<dyn OpportunitySource> = Box::new(TraceSource::new(times_ms.into(), 1504));
        l.with_schedule(ScheduleServer::Free(Server::new(src)))
    }

    #[test]
    fn cellular_queueing_delay_is_the_buffer_over_the_capacity() {
        // One 1504 B opportunity per ms (12.032 Mbit/s); 1500 B IP + 4 B framing
        // packets use one each. 10 packets offered at 0 leave at 1..10 ms and
        // arrive 4 ms later: the 10th waited 10 ms = 10 × 1504 B / 12.032 Mbit/s.
        let times: Vec<u64> = (1..=1000).collect();
        let mut l = cellular(100, None, &times);
        let mut arrivals = Vec::new();
        for _ in 0..10 {
            if let Enqueued::Accepted(Some(t)) = l.enqueue(Time(0), pkt(1500)) {
                arrivals.push(t);
            }
        }
        assert_eq!(arrivals, vec![Time(5_000_000)]);
        let mut t = Time(5_000_000);
        let mut got = Vec::new();
        loop {
            let (fate, next) = l.arrive(t);
            assert!(matches!(fate, Some(Arrival::Delivered(_))));
            got.push(t);
            match next {
                Some(n) => t = n,
                None => break,
            }
        }
        let want: Vec<Time> = (1..=10).map(|k| Time((k + 4) * 1_000_000)).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn cellular_queue_counts_every_packet_not_yet_gone_in_packets_and_bytes() {
        let times: Vec<u64> = (1..=1000).collect();
        // Packet limit 3: three accepted at 0 (leaving at 1, 2, 3 ms), the fourth dropped.
        let mut l = cellular(3, None, &times);
        for _ in 0..3 {
            assert!(matches!(
                l.enqueue(Time(0), pkt(1500)),
                Enqueued::Accepted(_)
            ));
        }
        assert_eq!(l.enqueue(Time(0), pkt(1500)), Enqueued::QueueFull);
        // At 1 ms the first has gone: room for one.
        assert_eq!(l.queue_len(Time(1_000_000)), 2);
        assert!(matches!(
            l.enqueue(Time(1_000_000), pkt(1500)),
            Enqueued::Accepted(_)
        ));
        // Byte limit 4000 B: two 1504 B frames fit (3008), a third (4512) does not.
        let mut b = cellular(100, Some(4000), &times);
        assert!(matches!(
            b.enqueue(Time(0), pkt(1500)),
            Enqueued::Accepted(_)
        ));
        assert!(matches!(
            b.enqueue(Time(0), pkt(1500)),
            Enqueued::Accepted(_)
        ));
        assert_eq!(b.queue_bytes(Time(0)), 3008);
        assert_eq!(b.enqueue(Time(0), pkt(1500)), Enqueued::QueueFull);
        // A small one still fits: 3008 + 104 ≤ 4000.
        assert!(matches!(
            b.enqueue(Time(0), pkt(100)),
            Enqueued::Accepted(_)
        ));
        assert_eq!(b.stats.drops_queue, 1);
    }
}
