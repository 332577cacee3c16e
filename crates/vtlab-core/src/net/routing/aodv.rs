//! AODV, the ad hoc on-demand distance vector protocol (RFC 3561), with the
//! rules and defaults of ns-3.44's `aodv` module: route requests flooded with
//! an expanding ring search, replies by the destination or by an intermediate
//! node with a fresh route (and a gratuitous reply to the destination), route
//! errors to precursors, HELLO messages, route lifetimes refreshed by use,
//! sequence numbers, and a buffer of packets awaiting a route.
//!
//! One [`Aodv`] is the protocol at one station. It knows stations by their
//! index on the medium ([`Addr`]) and nothing of the MAC: the medium calls it
//! when a packet needs a next hop ([`Aodv::send`], [`Aodv::relay`]), when a
//! control message arrives ([`Aodv::receive`]), when the MAC gave up on a
//! frame to a neighbour ([`Aodv::link_failed`]) and at its deadline
//! ([`Aodv::on_timer`]); the protocol leaves what the medium must send or
//! drop in [`Aodv::out`]. Broadcasts are sent after a jitter of 0–10 whole
//! milliseconds drawn from the station's own random stream, as ns-3 does.
//!
//! Left out (docs/wifi.md): RREP-ACK and the blacklist of unidirectional
//! links (links are symmetric on a medium whose stations share one radio
//! configuration), local repair (ns-3 has none either), and RERR rate limits
//! beyond ns-3's 10 per second.

use std::collections::VecDeque;

use crate::engine::{Duration, RngStream, Time};

/// A station's index on its medium.
pub type Addr = u16;
/// The broadcast address of a medium.
pub const BROADCAST: Addr = u16::MAX;

/// ns-3.44 `aodv::RoutingProtocol` defaults.
pub const HELLO_INTERVAL: Duration = Duration::from_secs(1);
pub const ALLOWED_HELLO_LOSS: u64 = 2;
pub const ACTIVE_ROUTE_TIMEOUT: Duration = Duration::from_secs(3);
pub const NODE_TRAVERSAL_TIME: Duration = Duration::from_millis(40);
/// 2 · NODE_TRAVERSAL_TIME · NET_DIAMETER.
pub const NET_TRAVERSAL_TIME: Duration = Duration::from_millis(2_800);
/// 2 · NET_TRAVERSAL_TIME.
pub const PATH_DISCOVERY_TIME: Duration = Duration::from_millis(5_600);
/// Lifetime a destination gives its route in a reply: ns-3's MyRouteTimeout,
/// 2 · max(PATH_DISCOVERY_TIME, ACTIVE_ROUTE_TIMEOUT).
pub const MY_ROUTE_TIMEOUT: Duration = Duration::from_millis(11_200);
/// How long an invalidated route is kept (its sequence number with it): ns-3's
/// DeletePeriod, 5 · max(ACTIVE_ROUTE_TIMEOUT, HELLO_INTERVAL).
pub const DELETE_PERIOD: Duration = Duration::from_secs(15);
pub const NET_DIAMETER: u16 = 35;
pub const TTL_START: u16 = 1;
pub const TTL_INCREMENT: u16 = 2;
pub const TTL_THRESHOLD: u16 = 7;
pub const TIMEOUT_BUFFER: u64 = 2;
/// Route requests with TTL = NET_DIAMETER before giving up.
pub const RREQ_RETRIES: u16 = 2;
/// Route requests, and route errors, a station sends per second.
pub const RATE_LIMIT: u32 = 10;
/// Packets awaiting a route, and how long each may wait.
pub const MAX_QUEUE_LEN: usize = 64;
pub const MAX_QUEUE_TIME: Duration = Duration::from_secs(30);
/// Largest jitter of a broadcast, whole milliseconds.
const JITTER_MS: u64 = 10;
/// Largest delay of the first HELLO, whole milliseconds.
const HELLO_START_MS: u64 = 100;

/// IP (20 B) and UDP (8 B) headers of a control packet.
const UDP_IP_BYTES: u32 = 28;

/// A control message (the sequence numbers are RFC 3561's).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Msg {
    Rreq {
        id: u32,
        hops: u16,
        ttl: u16,
        dst: Addr,
        dst_seq: u32,
        unknown_seq: bool,
        origin: Addr,
        origin_seq: u32,
    },
    /// A route reply; a HELLO is one with `dst == origin` and TTL 1.
    Rrep {
        hops: u16,
        ttl: u16,
        dst: Addr,
        dst_seq: u32,
        origin: Addr,
        lifetime: Duration,
    },
    /// Destinations no longer reachable, with their sequence numbers.
    Rerr { unreachable: Vec<(Addr, u32)> },
}

impl Msg {
    /// The control packet's IP size: ns-3's headers (a type byte, then RREQ
    /// 23 B, RREP 19 B, RERR 3 B + 8 B per destination) over UDP and IP.
    pub fn ip_bytes(&self) -> u32 {
        let body = match self {
            Msg::Rreq { .. } => 23,
            Msg::Rrep { .. } => 19,
            Msg::Rerr { unreachable } => 3 + 8 * unreachable.len() as u32,
        };
        UDP_IP_BYTES + 1 + body
    }
}

/// What the station's medium must do.
#[derive(Clone, Debug, PartialEq)]
pub enum Act<P> {
    /// Send a control message to a neighbour, or to all ([`BROADCAST`]).
    Send { msg: Msg, to: Addr },
    /// Send a packet that waited for its route.
    Data { packet: P, target: Addr, next: Addr },
    /// Drop a packet that waited: no route was found, it waited too long, or
    /// the buffer overflowed.
    Drop { packet: P },
}

/// Counters of one station's protocol.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AodvStats {
    /// Route requests this station started, and those it forwarded.
    pub rreq_sent: u64,
    pub rreq_forwarded: u64,
    pub rrep_sent: u64,
    pub rerr_sent: u64,
    pub hello_sent: u64,
    /// Link failures detected (MAC retry limit or HELLO loss).
    pub link_failures: u64,
    /// Route discoveries started (first request for a destination).
    pub discoveries: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Flag {
    Absent,
    Valid,
    Invalid,
    InSearch,
}

#[derive(Clone, Copy, Debug)]
struct Route {
    flag: Flag,
    next: Addr,
    hops: u16,
    seq: u32,
    valid_seq: bool,
    expires: Time,
    /// Neighbours that use this route (a medium has at most 128 stations).
    precursors: u128,
    /// Route requests sent with TTL = NET_DIAMETER.
    rreq_cnt: u16,
}

const NO_ROUTE: Route = Route {
    flag: Flag::Absent,
    next: BROADCAST,
    hops: 0,
    seq: 0,
    valid_seq: false,
    expires: Time::ZERO,
    precursors: 0,
    rreq_cnt: 0,
};

/// Sequence number `a` is newer than `b` (RFC 3561 §6.1, signed rollover).
fn newer(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}

/// The protocol at one station.
pub struct Aodv<P> {
    me: Addr,
    seq: u32,
    rreq_id: u32,
    routes: Vec<Route>,
    /// HELLO neighbours and when each expires.
    neighbours: Vec<Option<Time>>,
    /// (origin, id, until): requests already handled.
    seen: VecDeque<(Addr, u32, Time)>,
    pending: VecDeque<(P, Addr, Time)>,
    /// Each destination's route request timer.
    retry_at: Vec<Option<Time>>,
    rreq_count: u32,
    rerr_count: u32,
    /// The rate counters are cleared every second from the start.
    counts_reset_at: Time,
    /// Requests held back by the rate limit: (when, destination).
    deferred: Vec<(Time, Addr)>,
    hello_at: Time,
    last_bcast: Option<Time>,
    /// Next purge of expired neighbours (`None` once the list ran empty).
    purge_at: Option<Time>,
    /// Broadcasts waiting for their jitter: (when, message).
    delayed: Vec<(Time, Msg)>,
    rng: RngStream,
    pub out: Vec<Act<P>>,
    pub stats: AodvStats,
}

impl<P: Clone> Aodv<P> {
    /// The protocol at station `me` of `n`, starting at time 0: the first
    /// HELLO after 0–100 ms (ns-3), neighbours purged every HELLO interval.
    pub fn new(me: Addr, n: usize, mut rng: RngStream) -> Self {
        let hello_at = Time::ZERO + Duration::from_millis(rng.uniform_int(0, HELLO_START_MS));
        Aodv {
            me,
            seq: 0,
            rreq_id: 0,
            routes: vec![NO_ROUTE; n],
            neighbours: vec![None; n],
            seen: VecDeque::new(),
            pending: VecDeque::new(),
            retry_at: vec![None; n],
            rreq_count: 0,
            rerr_count: 0,
            counts_reset_at: Time::ZERO + Duration::from_secs(1),
            deferred: Vec::new(),
            hello_at,
            last_bcast: None,
            purge_at: Some(Time::ZERO + HELLO_INTERVAL),
            delayed: Vec::new(),
            rng,
            out: Vec::new(),
            stats: AodvStats::default(),
        }
    }

    /// The earliest pending timer.
    pub fn deadline(&self) -> Option<Time> {
        let retries = self.retry_at.iter().flatten().copied();
        let delayed = self.delayed.iter().map(|d| d.0);
        let deferred = self.deferred.iter().map(|d| d.0);
        let pending = self.pending.front().map(|p| p.2 + MAX_QUEUE_TIME);
        retries
            .chain(delayed)
            .chain(deferred)
            .chain(
                [Some(self.hello_at), self.purge_at, pending]
                    .into_iter()
                    .flatten(),
            )
            .min()
    }

    /// A packet from this station for `target`: its next hop, or `None` when
    /// it now waits for a route (a discovery starts unless one is under way).
    pub fn send(&mut self, now: Time, packet: P, target: Addr) -> Option<Addr> {
        self.purge_routes(now);
        if let Some(next) = self.valid_next(target) {
            self.refresh(now, target, ACTIVE_ROUTE_TIMEOUT);
            self.refresh(now, next, ACTIVE_ROUTE_TIMEOUT);
            return Some(next);
        }
        self.expire_pending(now);
        if self.pending.len() >= MAX_QUEUE_LEN {
            // ns-3's RequestQueue drops its oldest packet.
            if let Some((old, _, _)) = self.pending.pop_front() {
                self.out.push(Act::Drop { packet: old });
            }
        }
        self.pending.push_back((packet, target, now));
        if self.routes[target as usize].flag != Flag::InSearch {
            self.stats.discoveries += 1;
            self.send_request(now, target);
        }
        None
    }

    /// A packet from `origin` for `target` that this station relays: its
    /// next hop, or `None` (the packet is dropped, and a route error goes
    /// back toward `origin` if the route is known but broken).
    pub fn relay(&mut self, now: Time, origin: Addr, target: Addr) -> Option<Addr> {
        self.purge_routes(now);
        let Some(next) = self.valid_next(target) else {
            let r = self.routes[target as usize];
            if r.flag != Flag::Absent && r.valid_seq {
                self.rerr_no_route(now, target, r.seq, origin);
            }
            return None;
        };
        for a in [origin, target, next] {
            self.refresh(now, a, ACTIVE_ROUTE_TIMEOUT);
        }
        if let Some(back) = self.valid_next(origin) {
            self.refresh(now, back, ACTIVE_ROUTE_TIMEOUT);
            self.neighbour_seen(now, back, ACTIVE_ROUTE_TIMEOUT);
        }
        self.neighbour_seen(now, next, ACTIVE_ROUTE_TIMEOUT);
        Some(next)
    }

    /// A packet from `origin` reached this station, its target.
    pub fn delivered(&mut self, now: Time, origin: Addr) {
        self.purge_routes(now);
        self.refresh(now, origin, ACTIVE_ROUTE_TIMEOUT);
        if let Some(back) = self.valid_next(origin) {
            self.refresh(now, back, ACTIVE_ROUTE_TIMEOUT);
            self.neighbour_seen(now, back, ACTIVE_ROUTE_TIMEOUT);
        }
    }

    /// The MAC dropped a frame to neighbour `next` at its retry limit.
    pub fn link_failed(&mut self, now: Time, next: Addr) {
        self.purge_routes(now);
        if self.neighbours[next as usize].is_some() {
            // ns-3 closes the neighbour and purges the list at once.
            self.neighbours[next as usize] = Some(Time::ZERO);
            self.purge_neighbours(now);
        }
    }

    /// Handle every timer due at `now`.
    pub fn on_timer(&mut self, now: Time) {
        self.purge_routes(now);
        self.expire_pending(now);
        let mut due: Vec<(Time, Msg)> = Vec::new();
        self.delayed.retain(|d| {
            let keep = d.0 > now;
            if !keep {
                due.push(d.clone());
            }
            keep
        });
        for (_, msg) in due {
            self.out.push(Act::Send { msg, to: BROADCAST });
        }
        if self.hello_at <= now {
            self.hello_timer(now);
        }
        if self.purge_at.is_some_and(|t| t <= now) {
            self.purge_neighbours(now);
        }
        let deferred: Vec<Addr> = self
            .deferred
            .iter()
            .filter(|d| d.0 <= now)
            .map(|d| d.1)
            .collect();
        self.deferred.retain(|d| d.0 > now);
        for dst in deferred {
            self.send_request(now, dst);
        }
        for dst in 0..self.retry_at.len() {
            if self.retry_at[dst].is_some_and(|t| t <= now) {
                self.retry_at[dst] = None;
                self.request_timer(now, dst as Addr);
            }
        }
    }

    /// A control message from neighbour `from`.
    pub fn receive(&mut self, now: Time, from: Addr, msg: Msg) {
        self.purge_routes(now);
        self.route_to_neighbour(now, from);
        match msg {
            Msg::Rreq { .. } => self.recv_request(now, from, msg),
            Msg::Rrep { dst, origin, .. } if dst == origin => self.recv_hello(now, msg),
            Msg::Rrep { .. } => self.recv_reply(now, from, msg),
            Msg::Rerr { unreachable } => self.recv_error(now, from, unreachable),
        }
    }

    // ---- the route table --------------------------------------------------------

    /// The next hop of a valid route to `dst`.
    fn valid_next(&self, dst: Addr) -> Option<Addr> {
        let r = &self.routes[dst as usize];
        (r.flag == Flag::Valid).then_some(r.next)
    }

    /// Expired valid routes become invalid for DELETE_PERIOD, then go
    /// (ns-3 purges its table at every lookup).
    fn purge_routes(&mut self, now: Time) {
        for r in &mut self.routes {
            if r.expires < now {
                match r.flag {
                    Flag::Valid => {
                        r.flag = Flag::Invalid;
                        r.expires = now + DELETE_PERIOD;
                    }
                    Flag::Invalid => *r = NO_ROUTE,
                    Flag::Absent | Flag::InSearch => {}
                }
            }
        }
    }

    /// A valid route to `dst` lives at least `lifetime` from now.
    fn refresh(&mut self, now: Time, dst: Addr, lifetime: Duration) {
        let r = &mut self.routes[dst as usize];
        if r.flag == Flag::Valid {
            r.rreq_cnt = 0;
            r.expires = r.expires.max(now + lifetime);
        }
    }

    /// Any message from `from` proves a one-hop route to it (ns-3
    /// `UpdateRouteToNeighbor`).
    fn route_to_neighbour(&mut self, now: Time, from: Addr) {
        let r = &mut self.routes[from as usize];
        let one_hop = r.flag == Flag::Valid && r.valid_seq && r.hops == 1;
        if one_hop {
            r.expires = r.expires.max(now + ACTIVE_ROUTE_TIMEOUT);
            return;
        }
        let (seq, expires) = if r.flag == Flag::Absent {
            (0, now + ACTIVE_ROUTE_TIMEOUT)
        } else {
            (r.seq, r.expires.max(now + ACTIVE_ROUTE_TIMEOUT))
        };
        *r = Route {
            flag: Flag::Valid,
            next: from,
            hops: 1,
            seq,
            valid_seq: false,
            expires,
            precursors: r.precursors,
            rreq_cnt: 0,
        };
    }

    /// Neighbour `n` is heard from for at least `lifetime`; a new one purges
    /// the list, which re-arms the purge an interval later (ns-3
    /// `Neighbors::Update`).
    fn neighbour_seen(&mut self, now: Time, n: Addr, lifetime: Duration) {
        let e = &mut self.neighbours[n as usize];
        let new = e.is_none();
        *e = Some(e.map_or(now + lifetime, |t| t.max(now + lifetime)));
        if new {
            self.purge_neighbours(now);
        }
    }

    /// Neighbours not heard for ALLOWED_HELLO_LOSS HELLO intervals (or whose
    /// frames the MAC gave up on) are lost links; the purge repeats an HELLO
    /// interval after the last one while the list is not empty (ns-3
    /// `Neighbors::Purge`).
    fn purge_neighbours(&mut self, now: Time) {
        if self.neighbours.iter().all(Option::is_none) {
            self.purge_at = None;
            return;
        }
        let lost: Vec<Addr> = (0..self.neighbours.len())
            .filter(|&k| self.neighbours[k].is_some_and(|t| t < now))
            .map(|k| k as Addr)
            .collect();
        for &k in &lost {
            self.neighbours[k as usize] = None;
        }
        for k in lost {
            self.stats.link_failures += 1;
            self.break_link(now, k);
        }
        self.purge_at = Some(now + HELLO_INTERVAL);
    }

    // ---- sending ----------------------------------------------------------------

    /// Queue a broadcast after a jitter of 0–10 whole ms.
    fn broadcast(&mut self, now: Time, msg: Msg) {
        let jitter = Duration::from_millis(self.rng.uniform_int(0, JITTER_MS));
        self.delayed.push((now + jitter, msg));
    }

    fn reset_counts(&mut self, now: Time) {
        while self.counts_reset_at <= now {
            self.rreq_count = 0;
            self.rerr_count = 0;
            self.counts_reset_at += Duration::from_secs(1);
        }
    }

    /// Send a route request for `dst` (ns-3 `SendRequest`): the expanding
    /// ring's next TTL, and the timer of the next attempt.
    fn send_request(&mut self, now: Time, dst: Addr) {
        self.reset_counts(now);
        if self.rreq_count >= RATE_LIMIT {
            let at = self.counts_reset_at + Duration::from_micros(100);
            self.deferred.push((at, dst));
            return;
        }
        self.rreq_count += 1;
        let r = &mut self.routes[dst as usize];
        let ttl = match r.flag {
            Flag::Absent => TTL_START,
            Flag::InSearch if r.hops + TTL_INCREMENT > TTL_THRESHOLD => NET_DIAMETER,
            Flag::InSearch => r.hops + TTL_INCREMENT,
            Flag::Valid | Flag::Invalid => (r.hops + TTL_INCREMENT).min(NET_DIAMETER),
        };
        if r.flag == Flag::Absent {
            *r = NO_ROUTE;
        }
        if ttl == NET_DIAMETER {
            r.rreq_cnt += 1;
        }
        let (dst_seq, unknown_seq) = (r.seq, !r.valid_seq);
        r.hops = ttl;
        r.flag = Flag::InSearch;
        r.expires = now + PATH_DISCOVERY_TIME;
        let timeout = if ttl < NET_DIAMETER {
            NODE_TRAVERSAL_TIME.saturating_mul(2 * (u64::from(ttl) + TIMEOUT_BUFFER))
        } else {
            NET_TRAVERSAL_TIME.saturating_mul(1 << (r.rreq_cnt - 1).min(16))
        };
        self.seq = self.seq.wrapping_add(1);
        self.rreq_id = self.rreq_id.wrapping_add(1);
        self.seen
            .push_back((self.me, self.rreq_id, now + PATH_DISCOVERY_TIME));
        self.last_bcast = Some(now);
        self.stats.rreq_sent += 1;
        let msg = Msg::Rreq {
            id: self.rreq_id,
            hops: 0,
            ttl,
            dst,
            dst_seq,
            unknown_seq,
            origin: self.me,
            origin_seq: self.seq,
        };
        self.broadcast(now, msg);
        self.retry_at[dst as usize] = Some(now + timeout);
    }

    /// The request timer for `dst` fired (ns-3 `RouteRequestTimerExpire`).
    fn request_timer(&mut self, now: Time, dst: Addr) {
        if self.valid_next(dst).is_some() {
            self.send_pending(dst);
            return;
        }
        let r = self.routes[dst as usize];
        if r.rreq_cnt >= RREQ_RETRIES || r.flag != Flag::InSearch {
            self.routes[dst as usize] = NO_ROUTE;
            self.drop_pending(dst);
            return;
        }
        self.send_request(now, dst);
    }

    fn send_pending(&mut self, dst: Addr) {
        let Some(next) = self.valid_next(dst) else {
            return;
        };
        let mut rest = VecDeque::with_capacity(self.pending.len());
        for (packet, target, at) in self.pending.drain(..) {
            if target == dst {
                self.out.push(Act::Data {
                    packet,
                    target,
                    next,
                });
            } else {
                rest.push_back((packet, target, at));
            }
        }
        self.pending = rest;
    }

    fn drop_pending(&mut self, dst: Addr) {
        let out = &mut self.out;
        self.pending.retain(|(packet, target, _)| {
            if *target == dst {
                out.push(Act::Drop {
                    packet: packet.clone(),
                });
            }
            *target != dst
        });
    }

    fn expire_pending(&mut self, now: Time) {
        while self
            .pending
            .front()
            .is_some_and(|p| p.2 + MAX_QUEUE_TIME <= now)
        {
            if let Some((packet, _, _)) = self.pending.pop_front() {
                self.out.push(Act::Drop { packet });
            }
        }
    }

    /// ns-3 `HelloTimerExpire`: a HELLO unless this station broadcast
    /// something since the last one, and the next one an interval after
    /// that broadcast.
    fn hello_timer(&mut self, now: Time) {
        let offset = match self.last_bcast.take() {
            Some(t) => now - t,
            None => {
                self.stats.hello_sent += 1;
                let msg = Msg::Rrep {
                    hops: 0,
                    ttl: 1,
                    dst: self.me,
                    dst_seq: self.seq,
                    origin: self.me,
                    lifetime: HELLO_INTERVAL.saturating_mul(ALLOWED_HELLO_LOSS),
                };
                self.broadcast(now, msg);
                Duration::ZERO
            }
        };
        self.hello_at = now + Duration(HELLO_INTERVAL.0.saturating_sub(offset.0));
    }

    /// A unicast control message to `to` (a neighbour).
    fn unicast(&mut self, msg: Msg, to: Addr) {
        self.out.push(Act::Send { msg, to });
    }

    /// Send `unreachable` to the precursors: unicast to a single one, else
    /// broadcast (ns-3 `SendRerrMessage`, 10 per second at most).
    fn send_error(&mut self, now: Time, unreachable: Vec<(Addr, u32)>, precursors: u128) {
        self.reset_counts(now);
        if precursors == 0 || unreachable.is_empty() || self.rerr_count >= RATE_LIMIT {
            return;
        }
        let msg = Msg::Rerr { unreachable };
        if precursors.count_ones() == 1 {
            let p = precursors.trailing_zeros() as Addr;
            let Some(next) = self.valid_next(p) else {
                return;
            };
            self.rerr_count += 1;
            self.stats.rerr_sent += 1;
            self.unicast(msg, next);
        } else {
            self.rerr_count += 1;
            self.stats.rerr_sent += 1;
            self.broadcast(now, msg);
        }
    }

    /// Destinations whose table entry, in any state, goes through `next`, with
    /// their sequence numbers (ns-3 `GetListOfDestinationWithNextHop`: an
    /// entry already invalid or searching counts too).
    fn through(&self, next: Addr) -> Vec<(Addr, u32)> {
        (0..self.routes.len())
            .filter(|&d| {
                let r = &self.routes[d];
                r.flag != Flag::Absent && r.next == next
            })
            .map(|d| (d as Addr, self.routes[d].seq))
            .collect()
    }

    fn invalidate(&mut self, now: Time, dsts: &[(Addr, u32)]) {
        for &(d, _) in dsts {
            let r = &mut self.routes[d as usize];
            if r.flag == Flag::Valid {
                r.flag = Flag::Invalid;
                r.expires = now + DELETE_PERIOD;
            }
        }
    }

    /// The link to neighbour `next` broke (ns-3
    /// `SendRerrWhenBreaksLinkToNextHop`).
    fn break_link(&mut self, now: Time, next: Addr) {
        let r = self.routes[next as usize];
        if r.flag == Flag::Absent {
            return;
        }
        let mut precursors = r.precursors;
        let mut unreachable = vec![(next, r.seq)];
        for (d, seq) in self.through(next) {
            if d != next {
                precursors |= self.routes[d as usize].precursors;
                unreachable.push((d, seq));
            }
        }
        self.send_error(now, unreachable.clone(), precursors);
        self.invalidate(now, &unreachable);
    }

    /// A packet for `dst` could not be relayed (ns-3
    /// `SendRerrWhenNoRouteToForward`): a RERR toward `origin`.
    fn rerr_no_route(&mut self, now: Time, dst: Addr, seq: u32, origin: Addr) {
        self.reset_counts(now);
        if self.rerr_count >= RATE_LIMIT {
            return;
        }
        if let Some(next) = self.valid_next(origin) {
            self.rerr_count += 1;
            self.stats.rerr_sent += 1;
            self.unicast(
                Msg::Rerr {
                    unreachable: vec![(dst, seq)],
                },
                next,
            );
        }
    }

    // ---- receiving --------------------------------------------------------------

    /// Whether (origin, id) was handled within PATH_DISCOVERY_TIME; records it.
    fn duplicate(&mut self, now: Time, origin: Addr, id: u32) -> bool {
        while self.seen.front().is_some_and(|s| s.2 < now) {
            self.seen.pop_front();
        }
        if self.seen.iter().any(|s| s.0 == origin && s.1 == id) {
            return true;
        }
        self.seen.push_back((origin, id, now + PATH_DISCOVERY_TIME));
        false
    }

    /// The reverse route a request sets up toward its origin.
    fn reverse_route(&mut self, now: Time, from: Addr, origin: Addr, origin_seq: u32, hops: u16) {
        let life = NET_TRAVERSAL_TIME
            .saturating_mul(2)
            .0
            .saturating_sub(NODE_TRAVERSAL_TIME.0 * 2 * u64::from(hops));
        let r = &mut self.routes[origin as usize];
        if r.flag == Flag::Absent {
            *r = NO_ROUTE;
            r.expires = now + Duration(life);
        } else {
            r.expires = r.expires.max(now + Duration(life));
        }
        if !r.valid_seq || newer(origin_seq, r.seq) {
            r.seq = origin_seq;
        }
        r.valid_seq = true;
        r.flag = Flag::Valid;
        r.next = from;
        r.hops = hops;
    }

    fn recv_request(&mut self, now: Time, from: Addr, msg: Msg) {
        let Msg::Rreq {
            id,
            hops,
            ttl,
            dst,
            mut dst_seq,
            mut unknown_seq,
            origin,
            origin_seq,
        } = msg
        else {
            return;
        };
        if origin == self.me || self.duplicate(now, origin, id) {
            return;
        }
        let hops = hops + 1;
        self.reverse_route(now, from, origin, origin_seq, hops);
        let n = &mut self.routes[from as usize];
        n.seq = origin_seq;
        n.valid_seq = false;
        n.flag = Flag::Valid;
        n.hops = 1;
        n.next = from;
        n.expires = now + ACTIVE_ROUTE_TIMEOUT;
        let nb_life = HELLO_INTERVAL.saturating_mul(ALLOWED_HELLO_LOSS);
        self.neighbour_seen(now, from, nb_life);
        if dst == self.me {
            self.reply_as_destination(dst_seq, unknown_seq, origin);
            return;
        }
        let to_dst = self.routes[dst as usize];
        if to_dst.flag != Flag::Absent {
            if to_dst.next == from {
                return;
            }
            let fresh = unknown_seq || !newer(dst_seq, to_dst.seq);
            if fresh && to_dst.valid_seq {
                if to_dst.flag == Flag::Valid {
                    self.reply_as_intermediate(now, dst, origin);
                    return;
                }
                dst_seq = to_dst.seq;
                unknown_seq = false;
            }
        }
        if ttl < 2 {
            return;
        }
        self.last_bcast = Some(now);
        self.stats.rreq_forwarded += 1;
        let fwd = Msg::Rreq {
            id,
            hops,
            ttl: ttl - 1,
            dst,
            dst_seq,
            unknown_seq,
            origin,
            origin_seq,
        };
        self.broadcast(now, fwd);
    }

    fn reply_as_destination(&mut self, dst_seq: u32, unknown_seq: bool, origin: Addr) {
        if !unknown_seq && dst_seq == self.seq.wrapping_add(1) {
            self.seq = dst_seq;
        }
        let back = self.routes[origin as usize];
        self.stats.rrep_sent += 1;
        let msg = Msg::Rrep {
            hops: 0,
            ttl: back.hops,
            dst: self.me,
            dst_seq: self.seq,
            origin,
            lifetime: MY_ROUTE_TIMEOUT,
        };
        self.unicast(msg, back.next);
    }

    /// An intermediate station with a fresh route answers, and tells the
    /// destination the route to the origin (gratuitous reply, ns-3's default).
    fn reply_as_intermediate(&mut self, now: Time, dst: Addr, origin: Addr) {
        let (to_dst, to_origin) = (self.routes[dst as usize], self.routes[origin as usize]);
        self.routes[dst as usize].precursors |= 1 << to_origin.next;
        self.routes[origin as usize].precursors |= 1 << to_dst.next;
        let left = |r: &Route| Duration(r.expires.0.saturating_sub(now.0));
        self.stats.rrep_sent += 2;
        let reply = Msg::Rrep {
            hops: to_dst.hops,
            ttl: to_origin.hops,
            dst,
            dst_seq: to_dst.seq,
            origin,
            lifetime: left(&to_dst),
        };
        self.unicast(reply, to_origin.next);
        let gratuitous = Msg::Rrep {
            hops: to_origin.hops,
            ttl: to_dst.hops,
            dst: origin,
            dst_seq: to_origin.seq,
            origin: dst,
            lifetime: left(&to_origin),
        };
        self.unicast(gratuitous, to_dst.next);
    }

    fn recv_hello(&mut self, now: Time, msg: Msg) {
        let Msg::Rrep {
            dst,
            dst_seq,
            lifetime,
            ..
        } = msg
        else {
            return;
        };
        let nb_life = HELLO_INTERVAL.saturating_mul(ALLOWED_HELLO_LOSS);
        let r = &mut self.routes[dst as usize];
        r.expires = if r.flag == Flag::Absent {
            now + lifetime
        } else {
            r.expires.max(now + nb_life)
        };
        r.seq = dst_seq;
        r.valid_seq = true;
        r.flag = Flag::Valid;
        r.next = dst;
        r.hops = 1;
        self.neighbour_seen(now, dst, nb_life);
    }

    /// Whether a reply's route replaces the table's (RFC 3561 §6.7).
    fn better(&self, dst: Addr, seq: u32, hops: u16) -> bool {
        let r = &self.routes[dst as usize];
        r.flag == Flag::Absent
            || !r.valid_seq
            || newer(seq, r.seq)
            || (seq == r.seq && (r.flag != Flag::Valid || hops < r.hops))
    }

    fn recv_reply(&mut self, now: Time, from: Addr, msg: Msg) {
        let Msg::Rrep {
            hops,
            ttl,
            dst,
            dst_seq,
            origin,
            lifetime,
        } = msg
        else {
            return;
        };
        let hops = hops + 1;
        if self.better(dst, dst_seq, hops) {
            let r = &mut self.routes[dst as usize];
            *r = Route {
                flag: Flag::Valid,
                next: from,
                hops,
                seq: dst_seq,
                valid_seq: true,
                expires: now + lifetime,
                precursors: r.precursors,
                rreq_cnt: 0,
            };
        }
        if origin == self.me {
            self.retry_at[dst as usize] = None;
            self.send_pending(dst);
            return;
        }
        let to_origin = self.routes[origin as usize];
        if to_origin.flag != Flag::Valid {
            return;
        }
        self.refresh(now, origin, ACTIVE_ROUTE_TIMEOUT);
        if let Some(to_dst_next) = self.valid_next(dst) {
            self.routes[dst as usize].precursors |= 1 << to_origin.next;
            self.routes[to_dst_next as usize].precursors |= 1 << to_origin.next;
            self.routes[origin as usize].precursors |= 1 << to_dst_next;
            self.routes[to_origin.next as usize].precursors |= 1 << to_dst_next;
        }
        if ttl < 2 {
            return;
        }
        let fwd = Msg::Rrep {
            hops,
            ttl: ttl - 1,
            dst,
            dst_seq,
            origin,
            lifetime,
        };
        self.unicast(fwd, to_origin.next);
    }

    /// A route error from `from`: the listed destinations whose entry goes
    /// through `from` are invalid, and its precursors are told, whether or not
    /// the entry was still valid (ns-3 `RecvError`).
    fn recv_error(&mut self, now: Time, from: Addr, listed: Vec<(Addr, u32)>) {
        let through = self.through(from);
        let mut unreachable = Vec::new();
        let mut precursors = 0u128;
        for (d, seq) in listed {
            if through.iter().any(|&(t, _)| t == d) {
                precursors |= self.routes[d as usize].precursors;
                unreachable.push((d, seq));
            }
        }
        self.send_error(now, unreachable.clone(), precursors);
        self.invalidate(now, &unreachable);
    }
}
