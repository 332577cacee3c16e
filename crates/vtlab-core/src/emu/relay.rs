//! The links of an emulated path, advanced by the caller's clock: frames go
//! in at one end of a way, come out at the other, and every decision on the
//! way is recorded. No I/O here ([`super::driver`] reads and writes the TAP
//! devices), so the tests drive it with a made-up clock.
//!
//! A frame becomes a [`Packet`] whose `ip_bytes` is the frame less its
//! Ethernet header (the link adds its own framing, as in the simulation) and
//! whose `seq` is the frame's id, which maps back to the frame's bytes.

use std::collections::HashMap;

use super::Path;
use crate::engine::{Scheduler, Time};
use crate::metrics::LinkResult;
use crate::net::link::{Arrival, Enqueued, TcOut};
use crate::net::qdisc::hash::FiveTuple;
use crate::net::qdisc::Item;
use crate::net::{LinkDir, Packet, PacketKind};
use crate::sim::{dir_row, link_dirs, Plan};

/// Bytes of the Ethernet header a TAP frame starts with (no FCS).
pub const ETHERNET_HEADER: usize = 14;

/// The ways through the path, by index: 0 toward the near end (the flow's
/// receiver), 1 back toward the far end.
pub const WAYS: [&str; 2] = ["far->near", "near->far"];

/// What happened to a frame on one link direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    /// It reached the direction's far end.
    Delivered,
    /// The loss model (or a failed cellular transport block) lost it.
    Lost,
    /// The device queue or the queue disc was full.
    Queue,
    /// The queue disc's AQM dropped it.
    Aqm,
}

impl Fate {
    pub fn name(self) -> &'static str {
        match self {
            Fate::Delivered => "delivered",
            Fate::Lost => "lost",
            Fate::Queue => "queue",
            Fate::Aqm => "aqm",
        }
    }
}

/// One decision: frame `frame` (counted from 0 per way, in the order the
/// frames entered it) met `fate` on direction `dir` at `time`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decision {
    pub time: Time,
    pub way: u8,
    pub frame: u64,
    pub dir: u32,
    pub fate: Fate,
}

#[derive(Clone, Copy, Debug)]
enum Ev {
    Arrival(u32),
    DeviceDequeue(u32),
    QdiscWake(u32),
}

struct Frame {
    way: u8,
    index: u64,
    hash: u32,
    bytes: Vec<u8>,
}

/// A path direction's counters: its link row and the most packets it held
/// waiting (device queue and queue disc together).
#[derive(Clone, Debug)]
pub struct Counter {
    pub row: LinkResult,
    pub queue_max: usize,
}

pub struct Relay {
    sched: Scheduler<Ev>,
    links: Vec<LinkDir>,
    names: Vec<(String, String)>,
    path: Path,
    /// Each direction's way and position on it (`None`: not on the path).
    place: Vec<Option<(u8, usize)>>,
    frames: HashMap<u64, Frame>,
    next_id: u64,
    entered: [u64; 2],
    queue_max: Vec<usize>,
    tc_out: TcOut,
    record: bool,
    decisions: Vec<Decision>,
    delivered: Vec<(u8, Time, Vec<u8>)>,
}

impl Relay {
    /// The links of `path` (from [`Path::of`] on `plan`) for seed `seed`;
    /// with `record`, every decision is kept for [`Relay::take_decisions`].
    pub fn new(plan: &Plan, path: Path, seed: u64, record: bool) -> Relay {
        let (links, names) = link_dirs(plan, seed);
        let mut place = vec![None; links.len()];
        for (w, hops) in path.ways.iter().enumerate() {
            for (k, &d) in hops.iter().enumerate() {
                place[d as usize] = Some((w as u8, k));
            }
        }
        Relay {
            sched: Scheduler::new(),
            queue_max: vec![0; links.len()],
            links,
            names,
            path,
            place,
            frames: HashMap::new(),
            next_id: 0,
            entered: [0; 2],
            tc_out: TcOut::default(),
            record,
            decisions: Vec::new(),
            delivered: Vec::new(),
        }
    }

    /// Frames that entered way `w` so far.
    pub fn entered(&self, w: usize) -> u64 {
        self.entered[w]
    }

    /// Time of the next event, if any.
    pub fn next_event(&self) -> Option<Time> {
        self.sched.peek_time()
    }

    /// A frame enters way `w` at `now` (not before the last event run).
    pub fn offer(&mut self, now: Time, w: usize, bytes: Vec<u8>) {
        let now = now.max(self.sched.now());
        let id = self.next_id;
        self.next_id += 1;
        let index = self.entered[w];
        self.entered[w] += 1;
        let ip_bytes = bytes.len().saturating_sub(ETHERNET_HEADER) as u32;
        let hash = flow_hash(&bytes);
        let frame = Frame {
            way: w as u8,
            index,
            hash,
            bytes,
        };
        self.frames.insert(id, frame);
        let packet = Packet {
            flow: w as u32,
            dst: self.path.ends[w],
            kind: PacketKind::Data,
            seq: id,
            len: 0,
            ack: 0,
            rwnd: 0,
            ts_val: now,
            ts_ecr: Time::ZERO,
            ip_bytes,
            sack: Default::default(),
            sack_len: 0,
            frag_index: 0,
            frag_count: 1,
            piggyback: false,
            push: false,
        };
        self.send(now, self.path.ways[w][0], packet);
    }

    /// Run every event due at or before `now`, each at its own time.
    pub fn advance(&mut self, now: Time) {
        while self.sched.peek_time().is_some_and(|t| t <= now) {
            let Some((t, ev)) = self.sched.pop() else {
                return;
            };
            match ev {
                Ev::Arrival(d) => self.arrival(t, d),
                Ev::DeviceDequeue(d) => self.sched.schedule(t, Ev::QdiscWake(d)),
                Ev::QdiscWake(d) => {
                    let mut out = std::mem::take(&mut self.tc_out);
                    self.links[d as usize].tc_wake(t, &mut out);
                    self.after_tc(t, d, out);
                }
            }
        }
    }

    /// Frames that reached the end of their way since the last call, with
    /// their way and the time they reached it, in order.
    pub fn take_delivered(&mut self) -> std::vec::Drain<'_, (u8, Time, Vec<u8>)> {
        self.delivered.drain(..)
    }

    /// Decisions since the last call (with `record`), in time order.
    pub fn take_decisions(&mut self) -> std::vec::Drain<'_, Decision> {
        self.decisions.drain(..)
    }

    /// The (link, direction) names of direction `d`.
    pub fn dir_name(&self, d: u32) -> &(String, String) {
        &self.names[d as usize]
    }

    /// The counters of the path's directions, way 0's hops first.
    pub fn counters(&self) -> Vec<Counter> {
        self.path
            .ways
            .iter()
            .flatten()
            .map(|&d| {
                let (name, dir) = &self.names[d as usize];
                Counter {
                    row: dir_row(&self.links[d as usize], name, dir),
                    queue_max: self.queue_max[d as usize],
                }
            })
            .collect()
    }

    fn send(&mut self, now: Time, d: u32, p: Packet) {
        let link = &mut self.links[d as usize];
        if link.has_qdisc() {
            let hash = self.frames.get(&p.seq).map_or(0, |f| f.hash);
            let mut out = std::mem::take(&mut self.tc_out);
            link.tc_send(now, Item::new(p, p.ip_bytes).with_flow(hash), &mut out);
            self.after_tc(now, d, out);
        } else {
            match link.enqueue(now, p) {
                Enqueued::Accepted(Some(t)) => self.sched.schedule(t, Ev::Arrival(d)),
                Enqueued::Accepted(None) => {}
                Enqueued::QueueFull => self.decide(now, d, &p, Fate::Queue),
            }
        }
        let backlog = self.links[d as usize].backlog(now);
        let max = &mut self.queue_max[d as usize];
        *max = (*max).max(backlog);
    }

    /// Act on a pass through direction `d`'s queue disc (as the simulation's
    /// `after_tc`).
    fn after_tc(&mut self, now: Time, d: u32, mut out: TcOut) {
        out.sent_count = 0;
        if let Some(t) = out.arrival.take() {
            self.sched.schedule(t, Ev::Arrival(d));
        }
        if let Some(t) = out.tx_start.take() {
            self.sched.schedule(t, Ev::DeviceDequeue(d));
        }
        let dropped: Vec<(Packet, bool)> = out.dropped.drain(..).collect();
        self.tc_out = out;
        for (p, aqm) in dropped {
            let fate = if aqm { Fate::Aqm } else { Fate::Queue };
            self.decide(now, d, &p, fate);
        }
    }

    fn arrival(&mut self, t: Time, d: u32) {
        let (fate, next) = self.links[d as usize].arrive(t);
        if let Some(n) = next {
            self.sched.schedule(n, Ev::Arrival(d));
        }
        match fate {
            Some(Arrival::Delivered(p)) => {
                self.decide(t, d, &p, Fate::Delivered);
                let Some((w, k)) = self.place[d as usize] else {
                    return;
                };
                match self.path.ways[w as usize].get(k + 1) {
                    Some(&next) => self.send(t, next, p),
                    None => {
                        if let Some(f) = self.frames.remove(&p.seq) {
                            self.delivered.push((w, t, f.bytes));
                        }
                    }
                }
            }
            Some(Arrival::Lost(p)) => self.decide(t, d, &p, Fate::Lost),
            None => {}
        }
    }

    /// Record `fate` of the frame of `p` on direction `d`; a frame that did
    /// not get through is forgotten.
    fn decide(&mut self, time: Time, d: u32, p: &Packet, fate: Fate) {
        let frame = if fate == Fate::Delivered {
            self.frames.get(&p.seq).map(|f| (f.way, f.index))
        } else {
            self.frames.remove(&p.seq).map(|f| (f.way, f.index))
        };
        if let (true, Some((way, frame))) = (self.record, frame) {
            self.decisions.push(Decision {
                time,
                way,
                frame,
                dir: d,
                fate,
            });
        }
    }
}

/// The queue discs' flow key of an Ethernet frame: ns-3's hash of an IPv4
/// packet's 5-tuple (ports of TCP and UDP, 0 for later fragments); an IPv6
/// packet's addresses folded to 32 bits each; other frames (ARP) hash their
/// EtherType alone.
pub fn flow_hash(frame: &[u8]) -> u32 {
    let get = |a: usize, b: usize| frame.get(a..b);
    let ports = |at: usize, proto: u8| match (proto, get(at, at + 4)) {
        (6 | 17, Some(p)) => (
            u16::from_be_bytes([p[0], p[1]]),
            u16::from_be_bytes([p[2], p[3]]),
        ),
        _ => (0, 0),
    };
    let fold = |b: &[u8]| {
        let mut out = [0u8; 4];
        for (i, x) in b.iter().enumerate() {
            out[i % 4] ^= x;
        }
        out
    };
    let ethertype = get(12, 14).map_or(0, |e| u16::from_be_bytes([e[0], e[1]]));
    let (tuple, first) = match (ethertype, get(14, 54)) {
        (0x0800, Some(ip)) => {
            let ihl = usize::from(ip[0] & 0x0f) * 4;
            let first = u16::from_be_bytes([ip[6], ip[7]]) & 0x1fff == 0;
            let (src_port, dst_port) = ports(14 + ihl, ip[9]);
            let tuple = FiveTuple {
                src: [ip[12], ip[13], ip[14], ip[15]],
                dst: [ip[16], ip[17], ip[18], ip[19]],
                protocol: ip[9],
                src_port,
                dst_port,
            };
            (tuple, first)
        }
        (0x86dd, Some(ip)) => {
            let (src_port, dst_port) = ports(54, ip[6]);
            let tuple = FiveTuple {
                src: fold(&ip[8..24]),
                dst: fold(&ip[24..40]),
                protocol: ip[6],
                src_port,
                dst_port,
            };
            (tuple, true)
        }
        _ => {
            let e = ethertype.to_be_bytes();
            let tuple = FiveTuple {
                src: [e[0], e[1], 0, 0],
                dst: [0; 4],
                protocol: 0,
                src_port: 0,
                dst_port: 0,
            };
            (tuple, true)
        }
    };
    tuple.ns3_hash(first, 0)
}
