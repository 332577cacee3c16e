//! The medium's side of routing: the interface queue's intake, broadcasts,
//! and under AODV the hops inside the medium (a packet enters at one station
//! and leaves at its target; the stations between relay it) and the control
//! messages, which queue, contend, collide and get lost like any frame.

use super::{Body, Exchange, Medium};
use crate::engine::{RngStream, Time};
use crate::net::family::DropCause;
use crate::net::routing::aodv::{Act, Aodv, Msg};
use crate::net::routing::Routing;
use crate::net::wifi::{ErrorDirection, ErrorPlacement, MediumConf};
use crate::net::Packet;

/// AODV at every station of a medium under `routing = "aodv"` (none under
/// static routes), each drawing from its own stream `wifi/<medium>/aodv/<node>`.
pub(super) fn protocols(conf: &MediumConf, seed: u64) -> Vec<Aodv<Packet>> {
    let n = conf.nodes.len();
    match conf.routing {
        Routing::Static => Vec::new(),
        Routing::Aodv => (0..n)
            .map(|k| {
                let label = format!("wifi/{}/aodv/{}", conf.name, conf.nodes[k]);
                Aodv::new(k as u16, n, RngStream::for_component(seed, &label))
            })
            .collect(),
    }
}

impl Medium {
    /// The IP bytes a frame's body carries.
    pub(super) fn body_bytes(&self, body: &Body) -> u32 {
        match body {
            Body::Ip { packet, .. } => packet.ip_bytes,
            Body::Ctl(k) => self.ctl[*k as usize].as_ref().map_or(0, Msg::ip_bytes),
        }
    }

    /// An IP packet into station `s`'s interface queue for `next`: the error
    /// model at IP first (placement `ip`).
    pub(super) fn push_ip(&mut self, now: Time, s: usize, body: Body, next: u16) {
        let w_ip = self.conf.error_placement == ErrorPlacement::Ip
            && self.conf.error_direction == ErrorDirection::Both;
        if self.stations[s].queue.len() >= self.conf.ifq_packets as usize {
            // ns-3's `WifiMacQueue::Insert`: a full queue first sheds stale frames.
            self.drop_expired(now, s);
        }
        let st = &mut self.stations[s];
        if let (true, Body::Ip { packet, .. }) = (w_ip, body) {
            if st.error_out.drops(now) {
                st.stats.link_drops += 1;
                self.out.dropped.push((s, packet, DropCause::Link));
                return;
            }
        }
        self.push(now, s, body, next);
    }

    /// A frame body into station `s`'s interface queue (dropped if full),
    /// and the station's channel access.
    fn push(&mut self, now: Time, s: usize, body: Body, next: u16) {
        if self.stations[s].queue.len() >= self.conf.ifq_packets as usize {
            self.drop_expired(now, s); // (for IP packets done already by push_ip)
        }
        let st = &mut self.stations[s];
        if st.queue.len() >= self.conf.ifq_packets as usize {
            st.stats.queue_drops += 1;
            match body {
                Body::Ip { packet, .. } => self.out.dropped.push((s, packet, DropCause::Queue)),
                Body::Ctl(k) => self.free_ctl(k),
            }
            return;
        }
        let seq = st.next_seq;
        st.next_seq = st.next_seq.wrapping_add(1);
        st.queue.push_back((body, next, seq, now));
        let fresh = st.queue.len() == 1 && st.backoff.is_none() && st.exchange == Exchange::Idle;
        if fresh {
            if self.medium_idle(s, now) {
                // 802.11 §10.3.4.2: a frame that finds the medium idle needs no
                // backoff, only DIFS; counted from now, as ns-3.44 does
                // (`NeedBackoffUponAccess` starts the zero backoff at now + DIFS).
                let st = &mut self.stations[s];
                st.backoff = Some(0);
                st.backoff_start = now + self.difs;
            } else {
                // ... and one that finds it busy backs off.
                self.draw_backoff(s, now);
            }
        }
        self.schedule_access(s, now);
    }

    /// Station `s`'s broadcast left the air: done, with no response to wait
    /// for (the window resets and a post-backoff follows, as after an ACK).
    pub(super) fn broadcast_sent(&mut self, now: Time, s: usize) {
        let st = &mut self.stations[s];
        st.exchange = Exchange::Idle;
        st.short_retries = 0;
        st.long_retries = 0;
        st.cw = self.conf.cw_min;
        if let Some((Body::Ctl(k), _, _, _)) = st.queue.pop_front() {
            self.free_ctl(k);
        }
        self.draw_backoff(s, now);
        self.out.timers.push(s);
    }

    pub(super) fn free_ctl(&mut self, k: u32) {
        self.ctl[k as usize] = None;
        self.ctl_free.push(k);
    }

    fn alloc_ctl(&mut self, msg: Msg) -> u32 {
        match self.ctl_free.pop() {
            Some(k) => {
                self.ctl[k as usize] = Some(msg);
                k
            }
            None => {
                self.ctl.push(Some(msg));
                (self.ctl.len() - 1) as u32
            }
        }
    }

    /// A packet enters the medium at station `s` for station `target`
    /// (AODV): out at once on a valid route, else it waits for one.
    pub(super) fn route_out(&mut self, now: Time, s: usize, target: u16, packet: Packet) {
        if let Some(next) = self.aodv[s].send(now, packet, target) {
            let body = Body::Ip {
                packet,
                origin: s as u16,
                target,
            };
            self.push_ip(now, s, body, next);
        }
        self.act(now, s);
    }

    /// An IP packet station `r` received: up to its node at its target (or
    /// under static routes), else relayed toward the target (AODV).
    pub(super) fn arrived(&mut self, now: Time, r: usize, body: Body) {
        let Body::Ip {
            packet,
            origin,
            target,
        } = body
        else {
            return;
        };
        if self.aodv.is_empty() {
            self.out.delivered.push((r, packet));
            return;
        }
        if usize::from(target) == r {
            self.aodv[r].delivered(now, origin);
            self.out.delivered.push((r, packet));
        } else if let Some(next) = self.aodv[r].relay(now, origin, target) {
            self.push_ip(now, r, body, next);
        } else {
            self.stations[r].stats.link_drops += 1;
            self.out.dropped.push((r, packet, DropCause::Link));
        }
        self.act(now, r);
    }

    /// A control message (slot `k`) from station `from` reached station `r`.
    pub(super) fn control_arrived(&mut self, now: Time, r: usize, from: u16, k: u32) {
        let Some(msg) = self.ctl[k as usize].clone() else {
            return;
        };
        if let Some(aodv) = self.aodv.get_mut(r) {
            aodv.receive(now, from, msg);
            self.act(now, r);
        }
    }

    /// Carry out what station `s`'s protocol asked for, and have its
    /// deadline looked at again.
    pub(super) fn act(&mut self, now: Time, s: usize) {
        let acts: Vec<Act<Packet>> = std::mem::take(&mut self.aodv[s].out);
        for a in acts {
            match a {
                Act::Send { msg, to } => {
                    let k = self.alloc_ctl(msg);
                    self.push(now, s, Body::Ctl(k), to);
                }
                Act::Data {
                    packet,
                    target,
                    next,
                } => {
                    let body = Body::Ip {
                        packet,
                        origin: s as u16,
                        target,
                    };
                    self.push_ip(now, s, body, next);
                }
                Act::Drop { packet } => {
                    self.stations[s].stats.link_drops += 1;
                    self.out.dropped.push((s, packet, DropCause::Link));
                }
            }
        }
        self.out.timers.push(s);
    }

    /// The protocol of station `s` (tests).
    #[cfg(test)]
    pub(crate) fn aodv(&self, s: usize) -> Option<&Aodv<Packet>> {
        self.aodv.get(s)
    }
}
