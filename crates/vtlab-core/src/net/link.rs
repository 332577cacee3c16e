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
//! Other media (an 802.11 DCF shared channel, a variable-capacity LTE link)
//! are further implementations of the same role: accept a packet now, report
//! when the next packet arrives at the far end. See docs/architecture.md.

use std::collections::VecDeque;

use crate::engine::{Duration, Time};
use crate::net::{LossModel, NodeId, Packet};

/// Static parameters of a link direction.
#[derive(Clone, Debug)]
pub struct LinkParams {
    pub rate_bps: u64,
    pub delay: Duration,
    /// Maximum number of packets waiting for the transmitter.
    pub queue_packets: u32,
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
    pub drops_link_error: u64,
}

#[derive(Clone, Copy, Debug)]
struct Slot {
    tx_start: Time,
    arrival: Time,
    packet: Packet,
}

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
            stats: LinkDirStats::default(),
        }
    }

    /// Packets waiting for the transmitter at `now` (not counting the one
    /// being transmitted).
    pub fn queue_len(&self, now: Time) -> usize {
        let started = self.fifo.partition_point(|s| s.tx_start <= now);
        self.fifo.len() - started
    }

    /// Offer a packet to the transmit queue at `now`.
    pub fn enqueue(&mut self, now: Time, packet: Packet) -> Enqueued {
        let busy = self.busy_until > now;
        if busy && self.queue_len(now) >= self.params.queue_packets as usize {
            self.stats.drops_queue += 1;
            return Enqueued::QueueFull;
        }
        let tx_start = self.busy_until.max(now);
        let frame = packet.ip_bytes + self.params.framing_bytes;
        self.busy_until = tx_start + self.params.tx_time(frame);
        let arrival = self.busy_until + self.params.delay;
        let was_idle = self.fifo.is_empty();
        self.fifo.push_back(Slot {
            tx_start,
            arrival,
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
                let slot = self.fifo.pop_front().map(|s| s.packet);
                slot.map(|p| {
                    if self.loss.drops(now) {
                        self.stats.drops_link_error += 1;
                        Arrival::Lost(p)
                    } else {
                        self.stats.packets_carried += 1;
                        self.stats.bytes_carried +=
                            u64::from(p.ip_bytes + self.params.framing_bytes);
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
}
