//! The shared medium at run time: the PHY of every station (energy, the frame
//! it is locked onto, SINR per constant-interference chunk) and its DCF MAC.
//!
//! The medium is a link family ([`LinkFamily`]) whose sites are the stations.
//! Its two kinds of events: the end of a station's transmission (`on_tx_end`,
//! at most one pending per station) and one timer per station (`on_timer`:
//! backoff expiry, SIFS response, CTS/ACK timeout; the earliest is reported by
//! `deadline`). Every method leaves what the simulation must do in the
//! [`Outbox`]: packets delivered to a node's IP layer, packets dropped (a full
//! interface queue; the retry limit or the error model at IP as link losses),
//! transmissions to end and stations whose deadline may have changed.
//!
//! Simplifications (docs/wifi.md): signals reach every station at once (the
//! propagation delay, under 2 µs within carrier-sense range, is left out, so
//! stations whose backoff ends in the same slot collide, as they do in ns-3
//! where the delay is shorter than a slot); no rate adaptation; no fragmentation.

use std::collections::VecDeque;

use super::phy::{dbm_to_mw, frame_duration, header_duration, noise_dbm};
use super::{
    ErrorDirection, ErrorFrames, ErrorPlacement, MediumConf, Mobility, Reception, WifiConf,
};
use crate::engine::{Duration, RngStream, Time};
use crate::net::family::{DropCause, LinkFamily, Outbox, SiteStats};
use crate::net::routing::aodv::{Aodv, Msg, BROADCAST};
use crate::net::routing::Routing;
use crate::net::{LossModel, NodeId, Packet};

mod relay;

/// 802.11 control frame sizes, bytes (FCS included).
const ACK_BYTES: u32 = 14;
const CTS_BYTES: u32 = 14;
const RTS_BYTES: u32 = 20;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Rts,
    Cts,
    Data,
    Ack,
}

#[derive(Clone, Copy, Debug)]
struct Frame {
    kind: Kind,
    src: u16,
    dst: u16,
    bytes: u32,
    rate_kbps: u32,
    /// The duration field (NAV) it carries.
    nav: Duration,
    /// MAC sequence number (data), for duplicate detection.
    seq: u32,
    body: Option<Body>,
}

/// What a data frame carries.
#[derive(Clone, Copy, Debug)]
enum Body {
    /// An IP packet that entered the medium at station `origin` and leaves
    /// it at station `target` (under static routes, the next hop).
    Ip {
        packet: Packet,
        origin: u16,
        target: u16,
    },
    /// An AODV control message: its slot in [`Medium::ctl`].
    Ctl(u32),
}

/// A transmission in the air.
#[derive(Clone, Copy, Debug)]
struct Tx {
    frame: Frame,
    /// Hit by the sender's outgoing error model: every receiver fails it.
    corrupt: bool,
}

/// The frame a station's PHY is locked onto.
#[derive(Clone, Copy, Debug)]
struct Rx {
    from: u16,
    power_mw: f64,
    /// Rate of the frame's body (the header goes at the basic rate).
    rate_kbps: u32,
    /// End of the preamble and PHY header (sent at the header rate).
    header_end: Time,
    /// Start of the chunk not yet accounted.
    last: Time,
    /// ln of the probability that every bit so far was received.
    log_ok: f64,
}

/// The initiator side of a frame exchange.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Exchange {
    /// Nothing in progress: contending (if there is a frame or a backoff) or idle.
    Idle,
    /// Own RTS or data frame in the air.
    Sending(Kind),
    /// Waiting for a CTS or an ACK.
    Awaiting(Kind),
    /// CTS received: the data frame goes out a SIFS later.
    DataAfterCts,
}

struct Station {
    /// (what, next hop or [`BROADCAST`], MAC sequence number, when it was queued).
    queue: VecDeque<(Body, u16, u32, Time)>,
    next_seq: u32,
    cw: u32,
    /// Backoff slots left; `None`: no backoff pending.
    backoff: Option<u32>,
    /// Since when the counter holds its value (slots count from here or from
    /// the end of the IFS, whichever is later).
    backoff_start: Time,
    short_retries: u32,
    long_retries: u32,
    /// Failures since the last ACK (ns-3's `staRetryCount`, which sets CW under
    /// `WifiConf::frame_retry_limit`).
    sta_retries: u32,
    exchange: Exchange,
    /// Whether the frame in service went with RTS/CTS.
    with_rts: bool,
    access_at: Option<Time>,
    timeout_at: Option<Time>,
    respond: Option<(Time, Frame)>,
    nav_until: Time,
    /// An RTS set the NAV: when to reset it, and the receptions started by then
    /// (`WifiConf::rts_nav_reset`).
    nav_reset: Option<(Time, u64)>,
    /// Receptions started (frames locked onto) so far.
    rx_starts: u64,
    /// PHY idle since (`None`: busy).
    idle_since: Option<Time>,
    /// End of the last CTS/ACK timeout: the IFS counts from here too.
    blocked_until: Time,
    /// The last frame locked onto failed: the next IFS is EIFS.
    eifs: bool,
    transmitting: bool,
    rx: Option<Rx>,
    /// Last sequence number received from each station (duplicate detection).
    last_seq: Vec<Option<u32>>,
    error_in: LossModel,
    error_out: LossModel,
    backoff_rng: RngStream,
    phy_rng: RngStream,
    stats: SiteStats,
}

pub struct Medium {
    name: String,
    /// Global node of each station.
    nodes: Vec<NodeId>,
    node_names: Vec<String>,
    conf: WifiConf,
    mobility: Vec<Mobility>,
    slot: Duration,
    sifs: Duration,
    difs: Duration,
    eifs: Duration,
    /// From the end of an own RTS/data frame to the CTS/ACK timeout.
    response_timeout: Duration,
    header: Duration,
    cts: Duration,
    ack: Duration,
    noise_mw: f64,
    rx_sensitivity_mw: f64,
    cca_mw: f64,
    /// Signals below this are discarded (`WifiConf::discard_below_dbm`).
    discard_mw: f64,
    stations: Vec<Station>,
    /// The transmission of each station, if any.
    air: Vec<Option<Tx>>,
    /// `power[s·n + r]`: mW station r receives while s transmits.
    power: Vec<f64>,
    /// Energy each station receives now, mW.
    energy: Vec<f64>,
    /// Every station has the same velocity: distances, hence powers, are fixed.
    rigid: bool,
    /// Whether `power` already holds station s's row (rigid media only).
    power_known: Vec<bool>,
    /// Stations transmitting now, in station order.
    on_air: Vec<usize>,
    out: Outbox,
    /// AODV at every station (`routing = "aodv"`), else empty.
    aodv: Vec<Aodv<Packet>>,
    /// Control messages in queues or in the air, by slot; free slots.
    ctl: Vec<Option<Msg>>,
    ctl_free: Vec<u32>,
}

impl Station {
    /// A station of `conf` named `name`, with its random streams for a run with
    /// `seed` (`wifi/<medium>/<kind>/<name>`: error models, backoff, PHY).
    fn new(conf: &MediumConf, name: &str, seed: u64) -> Self {
        let w = &conf.wifi;
        let n = conf.nodes.len();
        let stream = |kind: &str| {
            RngStream::for_component(seed, &format!("wifi/{}/{kind}/{name}", conf.name))
        };
        Station {
            queue: VecDeque::new(),
            next_seq: 0,
            cw: w.cw_min,
            backoff: None,
            backoff_start: Time::ZERO,
            short_retries: 0,
            long_retries: 0,
            sta_retries: 0,
            exchange: Exchange::Idle,
            with_rts: false,
            access_at: None,
            timeout_at: None,
            respond: None,
            nav_until: Time::ZERO,
            nav_reset: None,
            rx_starts: 0,
            idle_since: Some(Time::ZERO),
            blocked_until: Time::ZERO,
            eifs: false,
            transmitting: false,
            rx: None,
            last_seq: vec![None; n],
            error_in: LossModel::new(&w.error, stream("error-in")),
            error_out: LossModel::new(&w.error, stream("error-out")),
            backoff_rng: stream("backoff"),
            phy_rng: stream("phy"),
            stats: SiteStats::default(),
        }
    }
}

impl LinkFamily for Medium {
    type Conf = MediumConf;

    /// Build a medium for a run with `seed` (each station's backoff, PHY and
    /// error models get their own random streams).
    fn build(conf: &MediumConf, nodes: Vec<NodeId>, seed: u64) -> Self {
        let w = &conf.wifi;
        let n = conf.nodes.len();
        let dur = |bytes, rate| frame_duration(w.standard, w.short_preamble, bytes, rate);
        let slot = Duration(w.slot_ns);
        let sifs = Duration(w.sifs_ns);
        let difs = sifs + slot + slot;
        let ack = dur(ACK_BYTES, w.control_rate_kbps);
        let header = header_duration(w.standard, w.short_preamble);
        let stations = conf
            .nodes
            .iter()
            .map(|name| Station::new(conf, name, seed))
            .collect();
        Medium {
            name: conf.name.clone(),
            nodes,
            node_names: conf.nodes.clone(),
            conf: w.clone(),
            mobility: conf.mobility.clone(),
            slot,
            sifs,
            difs,
            // EIFS = SIFS + ACK at the lowest rate + DIFS.
            eifs: sifs + dur(ACK_BYTES, w.standard.basic_rate_kbps()) + difs,
            // ns-3: SIFS + slot + the response's preamble and header.
            response_timeout: sifs + slot + header,
            header,
            cts: dur(CTS_BYTES, w.control_rate_kbps),
            ack,
            noise_mw: dbm_to_mw(noise_dbm(w.standard.bandwidth_hz(), w.noise_figure_db)),
            rx_sensitivity_mw: dbm_to_mw(w.rx_sensitivity_dbm),
            cca_mw: dbm_to_mw(w.cca_threshold_dbm),
            discard_mw: dbm_to_mw(w.discard_below_dbm.unwrap_or(w.cca_threshold_dbm)),
            stations,
            air: vec![None; n],
            power: vec![0.0; n * n],
            energy: vec![0.0; n],
            rigid: conf
                .mobility
                .windows(2)
                .all(|m| m[0].vx_mps == m[1].vx_mps && m[0].vy_mps == m[1].vy_mps),
            power_known: vec![false; n],
            on_air: Vec::with_capacity(n),
            out: Outbox::default(),
            aodv: relay::protocols(conf, seed),
            ctl: Vec::new(),
            ctl_free: Vec::new(),
        }
    }

    fn kind(_: &MediumConf) -> &'static str {
        "802.11"
    }

    fn conf_name(conf: &MediumConf) -> &str {
        &conf.name
    }

    fn mtu_bytes(conf: &MediumConf) -> u32 {
        conf.wifi.mtu_bytes
    }

    fn name(&self) -> &str {
        &self.name
    }

    fn sites(&self) -> usize {
        self.stations.len()
    }

    fn node(&self, station: usize) -> NodeId {
        self.nodes[station]
    }

    fn site_name(&self, station: usize) -> &str {
        &self.node_names[station]
    }

    fn stats(&self, station: usize) -> &SiteStats {
        &self.stations[station].stats
    }

    fn outbox(&mut self) -> &mut Outbox {
        &mut self.out
    }

    /// The station's earliest pending timer.
    fn deadline(&self, s: usize) -> Option<Time> {
        let st = &self.stations[s];
        let aodv = self.aodv.get(s).and_then(Aodv::deadline);
        [
            st.access_at,
            st.timeout_at,
            st.respond.map(|(t, _)| t),
            st.nav_reset.map(|(t, _)| t),
            aodv,
        ]
        .into_iter()
        .flatten()
        .min()
    }

    // ---- the interface to IP --------------------------------------------------

    /// Offer an IP packet at station `s` for neighbour `next` (under AODV:
    /// for station `next`, which the protocol finds the hops to).
    fn enqueue(&mut self, now: Time, s: usize, next: usize, packet: Packet) {
        if self.aodv.is_empty() {
            let body = Body::Ip {
                packet,
                origin: s as u16,
                target: next as u16,
            };
            self.push_ip(now, s, body, next as u16);
        } else {
            self.route_out(now, s, next as u16, packet);
        }
    }

    // ---- events ---------------------------------------------------------------

    /// Station `s`'s timer fired at `now` (stale calls do nothing).
    fn on_timer(&mut self, now: Time, s: usize) {
        if self
            .aodv
            .get(s)
            .and_then(Aodv::deadline)
            .is_some_and(|t| t <= now)
        {
            self.aodv[s].on_timer(now);
            self.act(now, s);
        }
        let st = &mut self.stations[s];
        if let Some((t, starts)) = st.nav_reset {
            if t == now {
                st.nav_reset = None;
                // No reception started since the RTS: its exchange failed.
                if st.rx_starts == starts && st.nav_until > now {
                    st.nav_until = now;
                    self.schedule_access(s, now);
                }
                self.out.timers.push(s);
                return;
            }
        }
        let st = &mut self.stations[s];
        if let Some((t, frame)) = st.respond {
            if t == now {
                st.respond = None;
                if st.exchange == Exchange::DataAfterCts {
                    st.exchange = Exchange::Sending(Kind::Data);
                }
                self.transmit(now, s, frame);
                return;
            }
        }
        if st.timeout_at == Some(now) {
            st.timeout_at = None;
            if st.rx.is_none() {
                self.exchange_failed(now, s);
            }
            // Otherwise a frame is arriving: its end decides (ns-3 waits for
            // a response whose preamble started in time).
            return;
        }
        if st.access_at == Some(now) {
            st.access_at = None;
            st.backoff = None;
            if st.queue.is_empty() {
                return; // post-backoff done
            }
            self.start_exchange(now, s);
        }
    }

    /// Station `s`'s transmission ends at `now`.
    fn on_tx_end(&mut self, now: Time, s: usize) {
        self.account_chunks(now);
        let Some(tx) = self.air[s].take() else {
            return;
        };
        self.recompute_energy();
        self.stations[s].transmitting = false;
        // Receptions of this frame end now (a lock lasts as long as its
        // frame), in station order.
        for r in 0..self.stations.len() {
            let done = self.stations[r].rx.is_some_and(|rx| rx.from as usize == s);
            if done {
                let rx = self.stations[r].rx.take().unwrap_or_else(|| unreachable!());
                self.finish_reception(now, r, rx, &tx);
            }
        }
        // The sender now waits for its response (a broadcast has none).
        if tx.frame.dst == BROADCAST {
            self.broadcast_sent(now, s);
        }
        let st = &mut self.stations[s];
        if let Exchange::Sending(kind) = st.exchange {
            st.exchange = Exchange::Awaiting(if kind == Kind::Rts {
                Kind::Cts
            } else {
                Kind::Ack
            });
            st.timeout_at = Some(now + self.response_timeout);
            self.out.timers.push(s);
        }
        self.update_carrier_sense(now);
    }
}

impl Medium {
    /// The hops the plan's routes may take over the medium: the stations in
    /// range under static routes; every pair under AODV, which finds the
    /// stations between them itself.
    pub fn hops(conf: &MediumConf) -> Vec<(usize, usize)> {
        match conf.routing {
            Routing::Static => Medium::neighbours(conf),
            Routing::Aodv => {
                let n = conf.nodes.len();
                (0..n)
                    .flat_map(|a| (0..n).filter(move |&b| b != a).map(move |b| (a, b)))
                    .collect()
            }
        }
    }

    /// Station pairs (from, to) that can receive each other at time 0, by
    /// received power against the sensitivity.
    pub fn neighbours(conf: &MediumConf) -> Vec<(usize, usize)> {
        let w = &conf.wifi;
        let n = conf.nodes.len();
        let mut out = Vec::new();
        for a in 0..n {
            for b in 0..n {
                if a != b {
                    let d = conf.mobility[a].distance(&conf.mobility[b], Time::ZERO);
                    if w.propagation.rx_power_dbm(w.tx_power_dbm, d) >= w.rx_sensitivity_dbm {
                        out.push((a, b));
                    }
                }
            }
        }
        out
    }

    /// Give station `s` a backoff of `slots` from time 0 (tests).
    #[cfg(test)]
    pub(crate) fn force_backoff(&mut self, s: usize, slots: u32) {
        self.stations[s].backoff = Some(slots);
    }

    // ---- PHY ------------------------------------------------------------------

    fn transmit(&mut self, now: Time, s: usize, frame: Frame) {
        self.account_chunks(now);
        let n = self.stations.len();
        let w = &self.conf;
        let end = now + frame_duration(w.standard, w.short_preamble, frame.bytes, frame.rate_kbps);
        // Received powers: once for good when every station moves with the
        // same velocity (distances never change), else at every transmission.
        if !self.rigid || !self.power_known[s] {
            for r in 0..n {
                self.power[s * n + r] = if r == s {
                    0.0
                } else {
                    let d = self.mobility[s].distance(&self.mobility[r], now);
                    let p = dbm_to_mw(w.propagation.rx_power_dbm(w.tx_power_dbm, d));
                    if p < self.discard_mw {
                        0.0
                    } else {
                        p
                    }
                };
            }
            self.power_known[s] = true;
        }
        let hit = |f: &Frame| w.error_frames == ErrorFrames::All || f.kind == Kind::Data;
        let st = &mut self.stations[s];
        let corrupt = w.error_placement == ErrorPlacement::Mac
            && w.error_direction == ErrorDirection::Both
            && hit(&frame)
            && st.error_out.drops(now);
        st.transmitting = true;
        st.stats.frames_sent += 1;
        // Half duplex: sending aborts a reception (not counted as an rx error:
        // ns-3 drops such frames as TXING).
        st.rx = None;
        self.air[s] = Some(Tx { frame, corrupt });
        self.recompute_energy();
        let lock = self.conf.reception.lock_sinr();
        for r in 0..n {
            let p = self.power[s * n + r];
            let st = &mut self.stations[r];
            if r == s || st.transmitting || st.rx.is_some() || p < self.rx_sensitivity_mw {
                continue;
            }
            // SINR against the energy already on the air (this frame excluded).
            let others = (self.energy[r] - p).max(0.0);
            if p / (self.noise_mw + others) >= lock {
                st.rx_starts += 1;
                st.rx = Some(Rx {
                    from: s as u16,
                    power_mw: p,
                    rate_kbps: frame.rate_kbps,
                    header_end: now + self.header,
                    last: now,
                    log_ok: 0.0,
                });
            }
        }
        self.out.tx_end.push((s, end));
        self.update_carrier_sense(now);
    }

    /// Sum, at every station, the power of the transmissions on the air (in
    /// station order, so the float sums are the same on every machine).
    fn recompute_energy(&mut self) {
        let n = self.stations.len();
        self.on_air.clear();
        self.on_air
            .extend((0..n).filter(|&s| self.air[s].is_some()));
        for r in 0..n {
            self.energy[r] = self.on_air.iter().map(|&s| self.power[s * n + r]).sum();
        }
    }

    /// Add the chunk since each locked reception's last change, at the
    /// interference in force until `now`.
    fn account_chunks(&mut self, now: Time) {
        let reception = self.conf.reception;
        let header_rate = self.conf.standard.basic_rate_kbps();
        for r in 0..self.stations.len() {
            let energy = self.energy[r];
            let noise = self.noise_mw;
            let Some(rx) = self.stations[r].rx.as_mut() else {
                continue;
            };
            if now <= rx.last {
                continue;
            }
            let interference = (energy - rx.power_mw).max(0.0);
            let sinr = rx.power_mw / (noise + interference);
            let rate = rx.rate_kbps;
            // Header part at the basic rate, the rest at the frame's rate.
            let split = rx.header_end.clamp(rx.last, now);
            let header_bits = (split - rx.last).0 as f64 * f64::from(header_rate) * 1e-6;
            let body_bits = (now - split).0 as f64 * f64::from(rate) * 1e-6;
            rx.log_ok += reception.chunk_log_success(sinr, header_bits, header_rate)
                + reception.chunk_log_success(sinr, body_bits, rate);
            rx.last = now;
        }
    }

    fn finish_reception(&mut self, now: Time, r: usize, rx: Rx, tx: &Tx) {
        let w_mac = self.conf.error_placement == ErrorPlacement::Mac;
        let hit_frames = self.conf.error_frames;
        let st = &mut self.stations[r];
        let mut ok = !tx.corrupt
            && match self.conf.reception {
                Reception::Threshold { .. } => rx.log_ok == 0.0,
                Reception::DsssBer { .. } => st.phy_rng.uniform() < rx.log_ok.exp(),
            };
        if ok && w_mac && (hit_frames == ErrorFrames::All || tx.frame.kind == Kind::Data) {
            ok = !st.error_in.drops(now);
        }
        if !ok {
            st.stats.rx_errors += 1;
            st.eifs = true;
            self.response_missed(now, r);
            return;
        }
        st.eifs = false;
        self.received(now, r, tx.frame);
    }

    /// Whether station `r`'s PHY senses the medium busy.
    fn phy_busy(&self, r: usize) -> bool {
        let st = &self.stations[r];
        st.transmitting || st.rx.is_some() || self.energy[r] >= self.cca_mw
    }

    fn medium_idle(&self, s: usize, now: Time) -> bool {
        !self.phy_busy(s) && self.stations[s].nav_until <= now
    }

    /// Tell every MAC whose carrier sense changed.
    fn update_carrier_sense(&mut self, now: Time) {
        for r in 0..self.stations.len() {
            let busy = self.phy_busy(r);
            match (self.stations[r].idle_since, busy) {
                (Some(_), true) => {
                    self.freeze(now, r);
                    self.stations[r].idle_since = None;
                }
                (None, false) => {
                    self.stations[r].idle_since = Some(now);
                    self.schedule_access(r, now);
                }
                _ => {}
            }
        }
    }

    // ---- DCF ------------------------------------------------------------------

    /// When the IFS before the backoff ends, given the current idle period.
    fn ifs_end(&self, s: usize) -> Option<Time> {
        let st = &self.stations[s];
        let idle = st.idle_since?;
        let ifs = if st.eifs { self.eifs } else { self.difs };
        Some(idle.max(st.nav_until).max(st.blocked_until) + ifs)
    }

    fn contending(&self, s: usize) -> bool {
        let st = &self.stations[s];
        st.exchange == Exchange::Idle
            && st.respond.is_none()
            && (!st.queue.is_empty() || st.backoff.is_some())
    }

    /// (Re)compute when station `s` gets the medium, if it is contending and
    /// its PHY is idle.
    fn schedule_access(&mut self, s: usize, now: Time) {
        let at = if self.contending(s) {
            self.ifs_end(s).map(|ifs_end| {
                let st = &self.stations[s];
                let slots = u64::from(st.backoff.unwrap_or(0));
                let start = ifs_end.max(st.backoff_start);
                (start + self.slot.saturating_mul(slots)).max(now)
            })
        } else {
            None
        };
        let st = &mut self.stations[s];
        if st.access_at != at {
            st.access_at = at;
            self.out.timers.push(s);
        }
    }

    /// The medium turned busy at `now`: count the idle slots elapsed and
    /// freeze the rest. A station whose access falls exactly now keeps it
    /// (both send in the same slot and collide).
    fn freeze(&mut self, now: Time, s: usize) {
        if self.stations[s].access_at == Some(now) {
            return;
        }
        let ifs_end = self.ifs_end(s);
        let slot = self.slot;
        let st = &mut self.stations[s];
        st.access_at = None;
        if let (Some(bo), Some(ifs_end)) = (st.backoff, ifs_end) {
            let start = ifs_end.max(st.backoff_start);
            if now > start {
                let elapsed = (now - start).0 / slot.0;
                st.backoff = Some(bo - bo.min(elapsed as u32));
            }
            st.backoff_start = st.backoff_start.max(now);
        }
    }

    /// Drop the frames queued at station `s` for longer than the queue lifetime
    /// (`WifiConf::queue_lifetime_ns`), except the one being sent: ns-3's
    /// `WifiMacQueue` removes expired MPDUs that are not in flight. They count as
    /// queue drops.
    pub(super) fn drop_expired(&mut self, now: Time, s: usize) {
        let Some(lifetime) = self.conf.queue_lifetime_ns else {
            return;
        };
        let first = usize::from(self.stations[s].exchange != Exchange::Idle);
        // Frames are queued in time order: the expired ones are a prefix.
        while let Some(&(body, _, _, at)) = self.stations[s].queue.get(first) {
            if at + Duration(lifetime) > now {
                break;
            }
            let st = &mut self.stations[s];
            st.queue.remove(first);
            st.stats.queue_drops += 1;
            match body {
                Body::Ip { packet, .. } => self.out.dropped.push((s, packet, DropCause::Queue)),
                Body::Ctl(k) => self.free_ctl(k),
            }
        }
    }

    fn draw_backoff(&mut self, s: usize, now: Time) {
        let st = &mut self.stations[s];
        st.backoff = Some(st.backoff_rng.uniform_int(0, u64::from(st.cw)) as u32);
        st.backoff_start = now;
    }

    fn start_exchange(&mut self, now: Time, s: usize) {
        // ns-3's `FrameExchangeManager::StartTransmission` drops the frames whose
        // lifetime has passed before it picks one; with none left it releases the
        // medium and draws a new backoff.
        self.drop_expired(now, s);
        if self.stations[s].queue.is_empty() {
            self.draw_backoff(s, now);
            self.schedule_access(s, now);
            return;
        }
        let w = &self.conf;
        let st = &mut self.stations[s];
        let Some(&(body, next, seq, _)) = st.queue.front() else {
            return;
        };
        let bytes = self.body_bytes(&body) + w.mac_overhead_bytes;
        let data = frame_duration(w.standard, w.short_preamble, bytes, w.data_rate_kbps);
        let st = &mut self.stations[s];
        st.with_rts = next != BROADCAST && bytes > w.rts_threshold_bytes;
        let frame = if st.with_rts {
            st.exchange = Exchange::Sending(Kind::Rts);
            Frame {
                kind: Kind::Rts,
                src: s as u16,
                dst: next,
                bytes: RTS_BYTES,
                rate_kbps: w.control_rate_kbps,
                nav: self.sifs.saturating_mul(3) + self.cts + data + self.ack,
                seq,
                body: None,
            }
        } else {
            st.exchange = Exchange::Sending(Kind::Data);
            self.data_frame(s, body, next, seq)
        };
        self.transmit(now, s, frame);
    }

    fn data_frame(&self, s: usize, body: Body, next: u16, seq: u32) -> Frame {
        Frame {
            kind: Kind::Data,
            src: s as u16,
            dst: next,
            bytes: self.body_bytes(&body) + self.conf.mac_overhead_bytes,
            rate_kbps: self.conf.data_rate_kbps,
            // A broadcast is not acknowledged.
            nav: if next == BROADCAST {
                Duration::ZERO
            } else {
                self.sifs + self.ack
            },
            seq,
            body: Some(body),
        }
    }

    /// A frame station `r` received correctly.
    fn received(&mut self, now: Time, r: usize, f: Frame) {
        let to_me = f.dst as usize == r || f.dst == BROADCAST;
        let st = &mut self.stations[r];
        if !to_me {
            if now + f.nav > st.nav_until {
                st.nav_until = now + f.nav;
                if f.kind == Kind::Rts && self.conf.rts_nav_reset {
                    // 802.11 §10.3.2.4 as ns-3 does it: reset the NAV if no
                    // reception starts within 2·SIFS + CTS + the PHY header +
                    // 2 slots (ns-3 counts the header twice).
                    let delay = self.sifs.saturating_mul(2)
                        + self.cts
                        + self.header
                        + self.slot.saturating_mul(2);
                    st.nav_reset = Some((now + delay, st.rx_starts));
                    self.out.timers.push(r);
                }
            }
            self.response_missed(now, r);
            return;
        }
        match f.kind {
            Kind::Data => self.received_data(now, r, f),
            Kind::Rts => {
                // CTS only if the NAV is idle and nothing else is under way.
                if st.nav_until <= now && st.respond.is_none() && st.exchange == Exchange::Idle {
                    let cts = Frame {
                        kind: Kind::Cts,
                        src: r as u16,
                        dst: f.src,
                        bytes: CTS_BYTES,
                        rate_kbps: self.conf.control_rate_kbps,
                        nav: Duration(f.nav.0.saturating_sub((self.sifs + self.cts).0)),
                        seq: f.seq,
                        body: None,
                    };
                    st.respond = Some((now + self.sifs, cts));
                    self.out.timers.push(r);
                }
                self.response_missed(now, r);
            }
            Kind::Cts if st.exchange == Exchange::Awaiting(Kind::Cts) => {
                st.timeout_at = None;
                if self.conf.frame_retry_limit.is_none() {
                    // 802.11: a CTS resets the short retry counter (ns-3.44's
                    // per-frame counter goes on).
                    st.short_retries = 0;
                }
                st.exchange = Exchange::DataAfterCts;
                let (body, next, seq, _) =
                    st.queue.front().copied().unwrap_or_else(|| unreachable!());
                let data = self.data_frame(r, body, next, seq);
                self.stations[r].respond = Some((now + self.sifs, data));
                self.out.timers.push(r);
            }
            Kind::Ack if st.exchange == Exchange::Awaiting(Kind::Ack) => {
                st.timeout_at = None;
                if let Some((Body::Ctl(k), _, _, _)) = st.queue.pop_front() {
                    self.free_ctl(k);
                }
                let st = &mut self.stations[r];
                st.short_retries = 0;
                st.long_retries = 0;
                st.sta_retries = 0;
                st.cw = self.conf.cw_min;
                st.exchange = Exchange::Idle;
                self.draw_backoff(r, now);
                self.out.timers.push(r);
            }
            _ => self.response_missed(now, r),
        }
    }

    /// A data frame for station `r` that it received correctly: ACK it, and
    /// hand its packet up unless it is a duplicate.
    fn received_data(&mut self, now: Time, r: usize, f: Frame) {
        let st = &mut self.stations[r];
        // ACK a SIFS later whatever the medium (ns-3, 802.11 §10.3.2.9).
        let ack = Frame {
            kind: Kind::Ack,
            src: r as u16,
            dst: f.src,
            bytes: ACK_BYTES,
            rate_kbps: self.conf.control_rate_kbps,
            nav: Duration::ZERO,
            seq: f.seq,
            body: None,
        };
        // A broadcast is neither acknowledged nor retransmitted.
        let broadcast = f.dst == BROADCAST;
        if st.respond.is_none() && !broadcast {
            st.respond = Some((now + self.sifs, ack));
            self.out.timers.push(r);
        }
        let duplicate = !broadcast && st.last_seq[f.src as usize] == Some(f.seq);
        if !broadcast {
            st.last_seq[f.src as usize] = Some(f.seq);
        }
        match (duplicate, f.body) {
            (false, Some(Body::Ip { packet: p, .. })) => {
                let sender = &mut self.stations[f.src as usize].stats;
                sender.packets_carried += 1;
                sender.bytes_carried += u64::from(p.ip_bytes);
                let st = &mut self.stations[r];
                if self.conf.error_placement == ErrorPlacement::Ip && st.error_in.drops(now) {
                    st.stats.link_drops += 1;
                    self.out.dropped.push((r, p, DropCause::Link));
                } else if let Some(body) = f.body {
                    self.arrived(now, r, body);
                }
            }
            (false, Some(Body::Ctl(k))) => self.control_arrived(now, r, f.src, k),
            _ => {}
        }
        self.response_missed(now, r);
    }

    /// A frame ended at station `r` that was not its awaited response: if
    /// the timeout has already passed, the exchange failed.
    fn response_missed(&mut self, now: Time, r: usize) {
        let st = &self.stations[r];
        if matches!(st.exchange, Exchange::Awaiting(_)) && st.timeout_at.is_none() {
            self.exchange_failed(now, r);
        }
    }

    /// No CTS or ACK: count the attempt, grow the window, retry or drop.
    fn exchange_failed(&mut self, now: Time, s: usize) {
        let w = &self.conf;
        let st = &mut self.stations[s];
        let Exchange::Awaiting(kind) = st.exchange else {
            return;
        };
        st.exchange = Exchange::Idle;
        st.blocked_until = now;
        st.stats.retries += 1;
        let exhausted = if let Some(limit) = w.frame_retry_limit {
            // ns-3.44: one counter per frame, RTS and data attempts alike.
            st.short_retries += 1;
            st.short_retries >= limit
        } else if kind == Kind::Ack && st.with_rts {
            st.long_retries += 1;
            st.long_retries >= w.long_retry_limit
        } else {
            st.short_retries += 1;
            st.short_retries >= w.short_retry_limit
        };
        let mut lost_link = None;
        if exhausted {
            st.short_retries = 0;
            st.long_retries = 0;
            if let Some((body, next, _, _)) = st.queue.pop_front() {
                st.stats.retry_drops += 1;
                lost_link = Some(next);
                match body {
                    Body::Ip { packet, .. } => {
                        st.stats.link_drops += 1;
                        self.out.dropped.push((s, packet, DropCause::Link));
                    }
                    Body::Ctl(k) => self.free_ctl(k),
                }
            }
        }
        self.grow_cw(s, exhausted);
        self.draw_backoff(s, now);
        self.schedule_access(s, now);
        if let (Some(next), false) = (lost_link, self.aodv.is_empty()) {
            // AODV learns of the broken link from the MAC (ns-3's DroppedMpdu).
            self.aodv[s].link_failed(now, next);
            self.act(now, s);
        }
    }

    /// Station `s`'s contention window after a failed exchange (`exhausted`:
    /// the frame was dropped at its retry limit).
    fn grow_cw(&mut self, s: usize, exhausted: bool) {
        let w = &self.conf;
        let st = &mut self.stations[s];
        st.cw = match w.frame_retry_limit {
            // ns-3.44's `Txop::UpdateFailedCw`: CW follows the failures since
            // the last ACK, up to the limit, then starts over; a drop does not
            // reset it.
            Some(limit) if st.sta_retries < limit => {
                st.sta_retries += 1;
                let grown = if st.sta_retries >= 32 {
                    u64::MAX
                } else {
                    (u64::from(w.cw_min) + 1) << st.sta_retries
                };
                (grown.min(u64::from(w.cw_max) + 1) - 1) as u32
            }
            Some(_) => {
                st.sta_retries = 0;
                w.cw_min
            }
            None if exhausted => w.cw_min,
            None => (2 * st.cw + 1).min(w.cw_max),
        };
    }
}
