//! AODV's rules on hand-built networks: stations on a line, each hearing its
//! neighbours only, control messages delivered the instant they are sent (no
//! MAC). Expected times follow from ns-3's defaults (the constants of
//! `aodv.rs`) as each test derives them.

use super::aodv::*;
use crate::engine::{Duration, RngStream, Time};

const MS: u64 = 1_000_000;

fn ms(t: u64) -> Time {
    Time(t * MS)
}

/// Stations 0..n on a line; what they sent and did.
struct Line {
    st: Vec<Aodv<u32>>,
    /// Deliver HELLOs (else they are lost).
    hellos: bool,
    /// Nobody hears anybody.
    deaf: bool,
    /// (time, sender, message, to) of every control message sent.
    sent: Vec<(Time, usize, Msg, Addr)>,
    /// (time, station, packet, next) of packets released after discovery.
    data: Vec<(Time, usize, u32, Addr)>,
    /// (time, station, packet) of packets dropped.
    drops: Vec<(Time, usize, u32)>,
    /// (time, station) of every route request started (the timer instants).
    requests: Vec<(Time, usize)>,
}

impl Line {
    fn new(n: usize, hellos: bool) -> Self {
        let st = (0..n)
            .map(|k| Aodv::new(k as Addr, n, RngStream::for_component(7, &format!("t{k}"))))
            .collect();
        Line {
            st,
            hellos,
            deaf: false,
            sent: Vec::new(),
            data: Vec::new(),
            drops: Vec::new(),
            requests: Vec::new(),
        }
    }

    fn is_hello(msg: &Msg) -> bool {
        matches!(msg, Msg::Rrep { dst, origin, .. } if dst == origin)
    }

    /// Carry out what station `k` asked for (and, in turn, its neighbours).
    fn flush(&mut self, now: Time, k: usize) {
        let mut work = vec![k];
        while let Some(k) = work.pop() {
            for act in std::mem::take(&mut self.st[k].out) {
                match act {
                    Act::Send { msg, to } => {
                        self.sent.push((now, k, msg.clone(), to));
                        if self.deaf || (Line::is_hello(&msg) && !self.hellos) {
                            continue;
                        }
                        for r in [k.wrapping_sub(1), k + 1] {
                            let hears = r < self.st.len() && (to == BROADCAST || to == r as Addr);
                            if hears {
                                self.st[r].receive(now, k as Addr, msg.clone());
                                work.push(r);
                            }
                        }
                    }
                    Act::Data { packet, next, .. } => self.data.push((now, k, packet, next)),
                    Act::Drop { packet } => self.drops.push((now, k, packet)),
                }
            }
        }
    }

    /// Fire every station's timers up to `until`, in time order.
    fn run_until(&mut self, until: Time) {
        loop {
            let next = (0..self.st.len())
                .filter_map(|k| self.st[k].deadline().map(|t| (t, k)))
                .min();
            let Some((t, k)) = next.filter(|(t, _)| *t <= until) else {
                return;
            };
            let before = self.st[k].stats.rreq_sent;
            self.st[k].on_timer(t);
            if self.st[k].stats.rreq_sent > before {
                self.requests.push((t, k));
            }
            self.flush(t, k);
        }
    }

    fn send(&mut self, now: Time, k: usize, packet: u32, target: Addr) -> Option<Addr> {
        self.run_until(now);
        let before = self.st[k].stats.rreq_sent;
        let next = self.st[k].send(now, packet, target);
        if self.st[k].stats.rreq_sent > before {
            self.requests.push((now, k));
        }
        self.flush(now, k);
        next
    }

    /// (time, sender, TTL) of the route requests sent.
    fn rreqs(&self) -> Vec<(Time, usize, u16)> {
        self.sent
            .iter()
            .filter_map(|(t, k, m, _)| match m {
                Msg::Rreq { ttl, .. } => Some((*t, *k, *ttl)),
                _ => None,
            })
            .collect()
    }
}

#[test]
fn control_packet_sizes_are_rfc_3561s_over_udp_and_ip() {
    // RFC 3561 §5: RREQ 24 bytes, RREP 20, RERR 4 + 8 per destination; plus
    // UDP (8) and IPv4 (20) headers.
    let rreq = Msg::Rreq {
        id: 1,
        hops: 0,
        ttl: 1,
        dst: 2,
        dst_seq: 0,
        unknown_seq: true,
        origin: 0,
        origin_seq: 1,
    };
    let rrep = Msg::Rrep {
        hops: 0,
        ttl: 1,
        dst: 2,
        dst_seq: 0,
        origin: 0,
        lifetime: MY_ROUTE_TIMEOUT,
    };
    let rerr = |n: usize| Msg::Rerr {
        unreachable: vec![(1, 0); n],
    };
    assert_eq!(rreq.ip_bytes(), 24 + 28);
    assert_eq!(rrep.ip_bytes(), 20 + 28);
    assert_eq!(rerr(1).ip_bytes(), 12 + 28);
    assert_eq!(rerr(3).ip_bytes(), 28 + 28);
}

#[test]
fn a_three_station_line_finds_its_route_on_the_second_ring() {
    // HELLOs lost, so station 1 knows nothing of station 2. At 0 station 0
    // asks with TTL 1: station 1 hears it and may not forward it (TTL < 2).
    // The ring's timeout is 2 · NODE_TRAVERSAL_TIME · (TTL + TIMEOUT_BUFFER)
    // = 2 · 40 ms · 3 = 240 ms; then TTL 3 = 1 + TTL_INCREMENT reaches
    // station 2 through station 1, which answers with a reply that station 1
    // relays. Each broadcast leaves 0–10 ms after it is decided.
    let mut net = Line::new(3, false);
    assert_eq!(net.send(ms(0), 0, 7, 2), None);
    net.run_until(ms(1_000));
    assert_eq!(net.requests, [(ms(0), 0), (ms(240), 0)]);
    let rreqs = net.rreqs();
    assert_eq!(rreqs.len(), 3, "{rreqs:?}");
    let (t1, k1, ttl1) = rreqs[0];
    assert!(k1 == 0 && ttl1 == 1 && t1 <= ms(10));
    let (t2, k2, ttl2) = rreqs[1];
    assert!(k2 == 0 && ttl2 == 3 && (ms(240)..=ms(250)).contains(&t2));
    // Station 1 forwards it with one TTL less, within 10 ms.
    let (t3, k3, ttl3) = rreqs[2];
    assert!(k3 == 1 && ttl3 == 2 && t3 >= t2 && t3 <= t2 + Duration(10 * MS));
    // Station 2 answers at once, by unicast to station 1, which relays it.
    let replies: Vec<_> = net
        .sent
        .iter()
        .filter(|(_, _, m, _)| matches!(m, Msg::Rrep { .. }) && !Line::is_hello(m))
        .map(|(t, k, m, to)| (*t, *k, m.clone(), *to))
        .collect();
    let reply = Msg::Rrep {
        hops: 0,
        ttl: 2,
        dst: 2,
        dst_seq: 0,
        origin: 0,
        lifetime: MY_ROUTE_TIMEOUT,
    };
    let relayed = Msg::Rrep {
        hops: 1,
        ttl: 1,
        dst: 2,
        dst_seq: 0,
        origin: 0,
        lifetime: MY_ROUTE_TIMEOUT,
    };
    assert_eq!(replies, [(t3, 2, reply, 1), (t3, 1, relayed, 0)]);
    assert_eq!(
        (net.st[0].stats.rreq_sent, net.st[1].stats.rreq_forwarded),
        (2, 1)
    );
    // The waiting packet leaves for station 1 with the reply, and no third
    // request follows.
    assert_eq!(net.data, [(t3, 0, 7, 1)]);
    assert_eq!(net.st[0].send(ms(1_000), 8, 2), Some(1));
}

#[test]
fn an_unanswered_search_runs_the_whole_ring_then_drops_the_packet() {
    // A station alone: TTL 1, 3, 5, 7 with timeouts 2 · 40 ms · (TTL + 2) =
    // 240, 400, 560, 720 ms, then TTL = NET_DIAMETER (7 + 2 > TTL_THRESHOLD)
    // with NET_TRAVERSAL_TIME · 2^(k−1) = 2.8 s and 5.6 s for its k-th such
    // request; after RREQ_RETRIES = 2 of them the packet is dropped.
    // Requests at 0, 240, 640, 1200, 1920, 4720 ms; the drop at 10 320 ms.
    let mut net = Line::new(2, false);
    net.deaf = true;
    assert_eq!(net.send(ms(0), 0, 9, 1), None);
    net.run_until(ms(20_000));
    let at: Vec<Time> = net.requests.iter().map(|r| r.0).collect();
    let expected = [0, 240, 640, 1_200, 1_920, 4_720].map(ms);
    assert_eq!(at, expected);
    let ttls: Vec<u16> = net.rreqs().iter().map(|r| r.2).collect();
    assert_eq!(ttls, [1, 3, 5, 7, 35, 35]);
    assert_eq!(net.drops, [(ms(10_320), 0, 9)]);
}

#[test]
fn a_broken_link_sends_a_route_error_to_the_precursor() {
    // The route of the first test, then one packet relayed by station 1 (it
    // now counts station 2 as a neighbour). At 2 s the MAC of station 1 gives
    // up on station 2: station 1 invalidates its routes through 2 and tells
    // station 0, its only precursor, by unicast; station 0's next packet
    // starts a new search with TTL = last hop count (2) + TTL_INCREMENT = 4.
    let mut net = Line::new(3, false);
    net.send(ms(0), 0, 7, 2);
    net.run_until(ms(1_000));
    assert_eq!(net.st[1].relay(ms(1_000), 0, 2), Some(2));
    net.run_until(ms(2_000));
    net.st[1].link_failed(ms(2_000), 2);
    net.flush(ms(2_000), 1);
    let rerr = Msg::Rerr {
        unreachable: vec![(2, 0)],
    };
    assert!(
        net.sent.contains(&(ms(2_000), 1, rerr, 0)),
        "{:?}",
        net.sent
    );
    assert_eq!(net.st[1].relay(ms(2_000), 0, 2), None);
    assert_eq!(net.send(ms(2_000), 0, 8, 2), None);
    net.run_until(ms(2_020));
    let from_0: Vec<u16> = net
        .rreqs()
        .iter()
        .filter(|r| r.1 == 0)
        .map(|r| r.2)
        .collect();
    assert_eq!(from_0, [1, 3, 4]);
}

#[test]
fn a_neighbour_silent_for_two_hello_intervals_is_lost_at_the_next_purge() {
    // Station 1 hears station 0's HELLO at 50 ms: a neighbour until 50 ms +
    // ALLOWED_HELLO_LOSS · HELLO_INTERVAL = 2.05 s. A new neighbour purges the
    // list at once, which re-arms the purge every HELLO_INTERVAL from then:
    // 1.05 s, 2.05 s (not yet expired: the expiry must have passed), 3.05 s,
    // where the loss shows.
    let mut net = Line::new(2, false);
    let hello = Msg::Rrep {
        hops: 0,
        ttl: 1,
        dst: 0,
        dst_seq: 0,
        origin: 0,
        lifetime: Duration::from_secs(2),
    };
    net.run_until(ms(50));
    net.st[1].receive(ms(50), 0, hello);
    net.run_until(ms(3_049));
    assert_eq!(net.st[1].stats.link_failures, 0);
    net.run_until(ms(3_050));
    assert_eq!(net.st[1].stats.link_failures, 1);
}

#[test]
fn a_station_that_just_broadcast_skips_its_hello() {
    // ns-3 `HelloTimerExpire`: a broadcast since the last HELLO replaces it,
    // and the next HELLO is one interval after that broadcast.
    let mut a: Aodv<u32> = Aodv::new(0, 3, RngStream::for_component(7, "h"));
    let first = a.deadline().unwrap_or(Time::ZERO);
    // The first HELLO is due within 100 ms of the start.
    assert!(first <= ms(100));
    a.send(first, 1, 2);
    let hellos_before = a.stats.hello_sent;
    a.on_timer(first);
    assert_eq!(a.stats.hello_sent, hellos_before);
}

#[test]
fn the_buffer_of_packets_awaiting_a_route_drops_its_oldest() {
    // ns-3's RequestQueue: 64 packets; the 65th pushes out the first.
    let mut a: Aodv<u32> = Aodv::new(0, 2, RngStream::for_component(7, "q"));
    for p in 0..=MAX_QUEUE_LEN as u32 {
        assert_eq!(a.send(ms(1), p, 1), None);
    }
    let drops: Vec<_> = a
        .out
        .iter()
        .filter_map(|x| match x {
            Act::Drop { packet } => Some(*packet),
            _ => None,
        })
        .collect();
    assert_eq!(drops, [0]);
}

#[test]
fn a_route_error_is_passed_on_even_for_a_route_already_invalid() {
    // Station 1 relays 0's route to 3 through 2 (0 is its precursor). Each
    // RERR from 2 naming 3 goes on to 0 by unicast, the second one too,
    // though the first already invalidated the route (ns-3 `RecvError` takes
    // every entry through the sender, whatever its state).
    let mut a: Aodv<u32> = Aodv::new(1, 4, RngStream::for_component(7, "e"));
    let rreq = Msg::Rreq {
        id: 1,
        hops: 0,
        ttl: 5,
        dst: 3,
        dst_seq: 0,
        unknown_seq: true,
        origin: 0,
        origin_seq: 1,
    };
    a.receive(ms(10), 0, rreq);
    let rrep = Msg::Rrep {
        hops: 1,
        ttl: 3,
        dst: 3,
        dst_seq: 4,
        origin: 0,
        lifetime: MY_ROUTE_TIMEOUT,
    };
    a.receive(ms(20), 2, rrep);
    a.out.clear();
    let rerr = Msg::Rerr {
        unreachable: vec![(3, 5)],
    };
    a.receive(ms(30), 2, rerr.clone());
    a.receive(ms(40), 2, rerr.clone());
    let sent: Vec<_> = a
        .out
        .iter()
        .filter(|x| matches!(x, Act::Send { .. }))
        .collect();
    let to_0 = Act::Send { msg: rerr, to: 0 };
    assert_eq!(sent, [&to_0, &to_0]);
    assert_eq!(a.relay(ms(50), 0, 3), None);
}
