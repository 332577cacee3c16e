//! IPv4 reassembly of one flow direction at its destination, as ns-3's
//! `Ipv4L3Protocol::ProcessFragment` does it: fragments are collected per
//! datagram in any order, a datagram is delivered when its last missing
//! fragment arrives, and an incomplete one is discarded
//! `FragmentExpirationTimeout` (30 s, also Linux's `ipfrag_time`) after its
//! first fragment arrived.
//!
//! Order matters once a queue disc sorts packets into flows: FQ-CoDel hashes a
//! later fragment with ports 0, so the fragments of one datagram travel in
//! different flow queues and may overtake each other.
//!
//! A datagram is identified (as by the IPv4 identification) by its first
//! payload byte and its send time: a retransmission of the same bytes is a
//! different datagram, and the head of one never completes the tail of another.

use std::collections::{BTreeMap, VecDeque};

use crate::engine::{Duration, Time};
use crate::net::Packet;

/// ns-3's `Ipv4L3Protocol::FragmentExpirationTimeout` default.
pub const FRAGMENT_TIMEOUT: Duration = Duration(30_000_000_000);

type DatagramId = (u64, Time);

#[derive(Clone, Debug)]
struct Partial {
    /// Bit `i` set: fragment `i` is in.
    got: Vec<u64>,
    missing: u16,
}

impl Partial {
    fn new(count: u16) -> Self {
        Partial {
            got: vec![0; usize::from(count).div_ceil(64)],
            missing: count,
        }
    }

    /// Record fragment `index`; false for a duplicate or an index beyond the
    /// datagram's count (not ours).
    fn add(&mut self, index: u16) -> bool {
        let (word, bit) = (usize::from(index / 64), index % 64);
        let Some(w) = self.got.get_mut(word) else {
            return false;
        };
        if *w & (1 << bit) != 0 {
            return false;
        }
        *w |= 1 << bit;
        self.missing -= 1;
        true
    }
}

/// The datagram whose fragments have so far come in order (0..`next`), kept
/// out of the map: the common case, every fragment in order, costs no map
/// operation.
#[derive(Clone, Copy, Debug)]
struct InOrder {
    id: DatagramId,
    next: u16,
    count: u16,
}

#[derive(Clone, Debug, Default)]
pub struct Reassembly {
    in_order: Option<InOrder>,
    /// Datagrams whose fragments came out of order.
    partial: BTreeMap<DatagramId, Partial>,
    /// Datagrams by the arrival of their first fragment, for expiry.
    started: VecDeque<(Time, DatagramId)>,
}

impl Reassembly {
    /// Take one packet arriving at `now`; `true` when it completes a whole
    /// datagram (always for an unfragmented packet).
    pub fn accept(&mut self, now: Time, p: &Packet) -> bool {
        if p.frag_count <= 1 {
            return true;
        }
        while let Some(&(t, id)) = self.started.front() {
            if now.since(t) < FRAGMENT_TIMEOUT {
                break;
            }
            self.started.pop_front();
            self.partial.remove(&id);
            if self.in_order.is_some_and(|r| r.id == id) {
                self.in_order = None;
            }
        }
        let id = (p.seq, p.ts_val);
        match self.in_order {
            Some(r) if r.id == id && r.count == p.frag_count && r.next == p.frag_index => {
                if r.next + 1 == r.count {
                    self.in_order = None;
                    return true;
                }
                self.in_order = Some(InOrder {
                    next: r.next + 1,
                    ..r
                });
                return false;
            }
            Some(r) if r.id == id => self.spill(),
            _ if p.frag_index == 0 && !self.partial.contains_key(&id) => {
                self.spill();
                self.started.push_back((now, id));
                self.in_order = Some(InOrder {
                    id,
                    next: 1,
                    count: p.frag_count,
                });
                return false;
            }
            _ => {}
        }
        let started = &mut self.started;
        let d = self.partial.entry(id).or_insert_with(|| {
            started.push_back((now, id));
            Partial::new(p.frag_count)
        });
        if !d.add(p.frag_index) || d.missing > 0 {
            return false;
        }
        self.partial.remove(&id);
        // Its expiry entry stays; removing an absent id later is harmless.
        true
    }

    /// Move the in-order datagram, if any, into the map (its expiry entry is
    /// already queued).
    fn spill(&mut self) {
        if let Some(r) = self.in_order.take() {
            let mut d = Partial::new(r.count);
            for i in 0..r.next {
                d.add(i);
            }
            self.partial.insert(r.id, d);
        }
    }

    /// Datagrams waiting for fragments.
    #[cfg(test)]
    fn pending(&self) -> usize {
        self.partial.len() + usize::from(self.in_order.is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::{NodeId, PacketKind};

    fn fragment(seq: u64, sent: u64, index: u16, count: u16) -> Packet {
        Packet {
            flow: 0,
            dst: NodeId(1),
            kind: PacketKind::Data,
            seq,
            len: 1460,
            ack: 0,
            rwnd: 0,
            ts_val: Time(sent),
            ts_ecr: Time::ZERO,
            ip_bytes: 1500,
            sack: Default::default(),
            sack_len: 0,
            frag_index: index,
            frag_count: count,
            piggyback: false,
            push: false,
        }
    }

    const T: Time = Time(0);

    #[test]
    fn reassembly_completes_whole_datagrams_only() {
        let mut r = Reassembly::default();
        assert!(r.accept(T, &fragment(0, 1, 0, 1)), "unfragmented");
        assert!(!r.accept(T, &fragment(0, 1, 0, 2)));
        assert!(r.accept(T, &fragment(0, 1, 1, 2)));
        // A lost first fragment: the second alone is not a datagram.
        assert!(!r.accept(T, &fragment(1460, 2, 1, 2)));
    }

    #[test]
    fn reassembly_never_splices_two_datagrams() {
        // Tail of datagram A and head of datagram B lost: A's head and B's tail
        // arrive back to back and must not make a datagram.
        let mut r = Reassembly::default();
        assert!(!r.accept(T, &fragment(0, 10, 0, 2)));
        assert!(!r.accept(T, &fragment(1460, 11, 1, 2)));
        // A retransmission of the same bytes is a different datagram too.
        assert!(!r.accept(T, &fragment(0, 99, 1, 2)));
        // And the next whole datagram still goes through.
        assert!(!r.accept(T, &fragment(2920, 12, 0, 2)));
        assert!(r.accept(T, &fragment(2920, 12, 1, 2)));
    }

    #[test]
    fn fragments_may_arrive_in_any_order_and_interleaved() {
        // FQ-CoDel serves later fragments (ports 0) from another flow queue:
        // B's tail, A's tail, A's head, B's head.
        let mut r = Reassembly::default();
        assert!(!r.accept(T, &fragment(1460, 2, 1, 2)));
        assert!(!r.accept(T, &fragment(0, 1, 1, 2)));
        assert!(r.accept(T, &fragment(0, 1, 0, 2)), "A complete");
        assert!(r.accept(T, &fragment(1460, 2, 0, 2)), "B complete");
        // A duplicate fragment does not complete anything twice.
        assert!(!r.accept(T, &fragment(2920, 3, 0, 3)));
        assert!(!r.accept(T, &fragment(2920, 3, 0, 3)));
        assert!(!r.accept(T, &fragment(2920, 3, 2, 3)));
        assert!(r.accept(T, &fragment(2920, 3, 1, 3)));
        assert_eq!(r.pending(), 0);
    }

    #[test]
    fn an_incomplete_datagram_expires_after_30_s() {
        let mut r = Reassembly::default();
        assert!(!r.accept(Time(0), &fragment(0, 1, 0, 2)));
        // 29.999999999 s later the tail still completes it ...
        let mut r2 = r.clone();
        assert!(r2.accept(Time(29_999_999_999), &fragment(0, 1, 1, 2)));
        // ... at 30 s it has been discarded (ns-3's FragmentExpirationTimeout).
        assert!(!r.accept(Time(30_000_000_000), &fragment(0, 1, 1, 2)));
    }
}
