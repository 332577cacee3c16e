//! An ideal shared bus, the smallest link family (it exists to show what a
//! family needs). Frames go on the bus one at a time, in the order they were
//! offered (one FIFO for the whole bus), each taking its IP bytes at the bus
//! rate; every attached node hears a frame a fixed delay after its
//! transmission ends, the addressed next hop takes it up, and nothing is
//! lost. The end of a transmission is the site's transmission-end event; the
//! arrival at the next hop is that site's timer.

use std::collections::VecDeque;

use super::{LinkFamily, Outbox, SiteStats};
use crate::engine::{Duration, Time};
use crate::net::{NodeId, Packet};

/// One bus and its attached nodes (by name).
#[derive(Clone, Debug)]
pub struct BusConf {
    pub name: String,
    pub nodes: Vec<String>,
    pub rate_bps: u64,
    pub delay: Duration,
    pub mtu_bytes: u32,
}

pub struct Bus {
    conf: BusConf,
    nodes: Vec<NodeId>,
    /// Frames offered and not yet sent, in order: (site, next hop, packet).
    /// The head is on the bus.
    queue: VecDeque<(usize, usize, Packet)>,
    /// Frames sent and not yet heard, in order: (arrival, next hop, packet).
    flight: VecDeque<(Time, usize, Packet)>,
    stats: Vec<SiteStats>,
    out: Outbox,
}

impl Bus {
    /// Put the head frame on the bus at `now`.
    fn transmit(&mut self, now: Time) {
        if let Some(&(site, _, p)) = self.queue.front() {
            let ns = u64::from(p.ip_bytes) * 8 * 1_000_000_000 / self.conf.rate_bps;
            self.stats[site].frames_sent += 1;
            self.out.tx_end.push((site, now + Duration(ns)));
        }
    }
}

impl LinkFamily for Bus {
    type Conf = BusConf;

    fn build(conf: &BusConf, nodes: Vec<NodeId>, _seed: u64) -> Self {
        Bus {
            conf: conf.clone(),
            stats: vec![SiteStats::default(); nodes.len()],
            nodes,
            queue: VecDeque::new(),
            flight: VecDeque::new(),
            out: Outbox::default(),
        }
    }

    fn kind(_: &BusConf) -> &'static str {
        "bus"
    }

    fn conf_name(conf: &BusConf) -> &str {
        &conf.name
    }

    fn mtu_bytes(conf: &BusConf) -> u32 {
        conf.mtu_bytes
    }

    fn name(&self) -> &str {
        &self.conf.name
    }

    fn sites(&self) -> usize {
        self.nodes.len()
    }

    fn node(&self, site: usize) -> NodeId {
        self.nodes[site]
    }

    fn site_name(&self, site: usize) -> &str {
        &self.conf.nodes[site]
    }

    fn stats(&self, site: usize) -> &SiteStats {
        &self.stats[site]
    }

    fn outbox(&mut self) -> &mut Outbox {
        &mut self.out
    }

    /// The next frame for this site to hear (frames arrive in sending order).
    fn deadline(&self, site: usize) -> Option<Time> {
        self.flight.iter().find(|f| f.1 == site).map(|f| f.0)
    }

    fn enqueue(&mut self, now: Time, site: usize, next: usize, packet: Packet) {
        self.queue.push_back((site, next, packet));
        if self.queue.len() == 1 {
            self.transmit(now);
        }
    }

    fn on_tx_end(&mut self, now: Time, _site: usize) {
        let Some((site, next, p)) = self.queue.pop_front() else {
            return;
        };
        self.stats[site].packets_carried += 1;
        self.stats[site].bytes_carried += u64::from(p.ip_bytes);
        self.flight.push_back((now + self.conf.delay, next, p));
        self.out.timers.push(next);
        self.transmit(now);
    }

    /// Hand the site every frame for it that has arrived by `now`.
    fn on_timer(&mut self, now: Time, site: usize) {
        let mut i = 0;
        while let Some(&(at, next, p)) = self.flight.get(i) {
            if at > now {
                break;
            }
            if next == site {
                self.flight.remove(i);
                self.out.delivered.push((site, p));
            } else {
                i += 1;
            }
        }
    }
}
