//! The simulation: wires links, routes and TCP endpoints to the scheduler.
//!
//! Pending events are bounded by the number of link directions plus two
//! timers per flow: a link direction schedules only its head arrival, and a
//! timer that is pushed later (the RTO restarted on every ACK) is not
//! rescheduled; when its stale event fires it re-arms at the new deadline.

use std::collections::VecDeque;
use std::time::Instant;

use crate::engine::{Duration, RngStream, Scheduler, Time};
use crate::metrics::{FlowResult, LinkResult, RunResult, Trace};
use crate::net::link::{Arrival, Enqueued};
use crate::net::{LinkDir, LinkParams, LossModel, NodeId, Packet, PacketKind};
use crate::spec::Scenario;
use crate::tcp::cc::{self, LossCause};
use crate::tcp::{Receiver, Sender};

#[derive(Clone, Copy, Debug)]
enum Event {
    /// The head packet of link direction `usize` reaches the far end.
    Arrival(u32),
    SenderTimer(u32),
    ReceiverTimer(u32),
    FlowStart(u32),
    TraceSample,
}

struct Flow {
    name: String,
    cc: String,
    profile: &'static str,
    recovery: &'static str,
    src: NodeId,
    dst: NodeId,
    bytes: u64,
    start: Time,
    sender: Sender,
    receiver: Receiver,
    sender_timer_at: Option<Time>,
    receiver_timer_at: Option<Time>,
    drops_link_error: u64,
    drops_queue: u64,
    done: bool,
    /// Smallest MTU on the path toward the receiver / toward the sender.
    mtu_forward: u32,
    mtu_reverse: u32,
    /// IPv4 reassembly at the receiver's end (0) and the sender's end (1).
    reassembly: [Reassembly; 2],
}

/// Options of one run that do not change its results' identity.
#[derive(Clone, Copy, Debug, Default)]
pub struct RunOptions {
    pub trace: bool,
}

pub struct Simulation {
    sched: Scheduler<Event>,
    links: Vec<LinkDir>,
    link_names: Vec<(String, String)>,
    /// `routes[node][dst]`: the link direction leaving `node` toward `dst`.
    routes: Vec<Vec<Option<u32>>>,
    flows: Vec<Flow>,
    out: Vec<Packet>,
    trace: Option<Trace>,
    trace_interval: Duration,
    stop: Option<Time>,
    remaining: usize,
    packets: u64,
    hash: String,
    seed: u64,
}

impl Simulation {
    /// Build a run of a validated scenario with `seed`.
    pub fn new(scenario: &Scenario, seed: u64, options: RunOptions) -> Self {
        let node_index =
            |n: &str| NodeId(scenario.nodes.iter().position(|x| x == n).unwrap_or(0) as u32);
        let mut links = Vec::with_capacity(scenario.links.len() * 2);
        let mut link_names = Vec::new();
        for l in &scenario.links {
            let params = LinkParams {
                rate_bps: l.rate_bps,
                delay: Duration(l.delay_ns),
                queue_packets: l.queue_packets,
                framing_bytes: l.framing_bytes,
                mtu_bytes: l.mtu_bytes,
            };
            for (from, to, loss) in [(&l.a, &l.b, &l.loss_ab), (&l.b, &l.a, &l.loss_ba)] {
                let label = format!("loss/{}/{}->{}", l.name, from, to);
                let model = LossModel::new(loss, RngStream::for_component(seed, &label));
                links.push(LinkDir::new(
                    l.name.clone(),
                    node_index(from),
                    node_index(to),
                    params.clone(),
                    model,
                ));
                link_names.push((l.name.clone(), format!("{from}->{to}")));
            }
        }
        let routes = shortest_path_routes(scenario.nodes.len(), &links);
        let flows = scenario
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let (src, dst) = (node_index(&f.src), node_index(&f.dst));
                let desc = cc::lookup(&f.tcp.cc).unwrap_or(&cc::REGISTRY[0]);
                let sender = Sender::new(
                    f.tcp.clone(),
                    desc.build(&f.tcp.cc_params, f.tcp.profile),
                    i as u32,
                    dst,
                    f.bytes,
                );
                let receiver = Receiver::new(&f.tcp, i as u32, src, f.bytes);
                Flow {
                    name: f.name.clone(),
                    cc: f.tcp.cc.clone(),
                    profile: f.tcp.profile.as_str(),
                    recovery: f.tcp.recovery_name(),
                    src,
                    dst,
                    bytes: f.bytes,
                    start: Time(f.start_ns),
                    sender,
                    receiver,
                    sender_timer_at: None,
                    receiver_timer_at: None,
                    drops_link_error: 0,
                    drops_queue: 0,
                    done: false,
                    mtu_forward: path_mtu(&routes, &links, src, dst),
                    mtu_reverse: path_mtu(&routes, &links, dst, src),
                    reassembly: [Reassembly::default(); 2],
                }
            })
            .collect::<Vec<_>>();
        Simulation {
            sched: Scheduler::new(),
            links,
            link_names,
            routes,
            remaining: flows.len(),
            flows,
            out: Vec::with_capacity(64),
            trace: options.trace.then(Trace::default),
            trace_interval: Duration(scenario.trace_interval_ns),
            stop: scenario.stop_ns.map(Time),
            packets: 0,
            hash: scenario.hash(),
            seed,
        }
    }

    /// Whether every flow can reach its destination.
    pub fn unreachable_flow(&self) -> Option<&str> {
        self.flows
            .iter()
            .find(|f| !self.reachable(f.src, f.dst) || !self.reachable(f.dst, f.src))
            .map(|f| f.name.as_str())
    }

    fn reachable(&self, from: NodeId, to: NodeId) -> bool {
        let mut node = from;
        for _ in 0..=self.routes.len() {
            if node == to {
                return true;
            }
            match self.routes[node.0 as usize][to.0 as usize] {
                Some(d) => node = self.links[d as usize].to,
                None => return false,
            }
        }
        false
    }

    /// Run to completion (every flow done) or to the stop time.
    pub fn run(mut self) -> RunResult {
        let wall = Instant::now();
        for (i, f) in self.flows.iter().enumerate() {
            self.sched.schedule(f.start, Event::FlowStart(i as u32));
        }
        if self.trace.is_some() {
            self.sched.schedule(Time::ZERO, Event::TraceSample);
        }
        while let Some((now, event)) = self.sched.pop() {
            if self.stop.is_some_and(|s| now > s) {
                break;
            }
            self.handle(now, event);
            if self.remaining == 0 {
                break;
            }
        }
        let end = match self.stop {
            Some(s) if self.remaining > 0 => s,
            _ => self.sched.now(),
        };
        self.finish(end, wall.elapsed().as_secs_f64())
    }

    fn handle(&mut self, now: Time, event: Event) {
        match event {
            Event::Arrival(d) => {
                let (fate, next) = self.links[d as usize].arrive(now);
                if let Some(t) = next {
                    self.sched.schedule(t, Event::Arrival(d));
                }
                match fate {
                    Some(Arrival::Delivered(p)) => self.deliver(now, self.links[d as usize].to, p),
                    Some(Arrival::Lost(p)) => self.dropped(p, LossCause::Link),
                    None => {}
                }
            }
            Event::SenderTimer(f) => {
                let flow = &mut self.flows[f as usize];
                if flow.sender_timer_at != Some(now) {
                    return; // superseded by an earlier deadline
                }
                flow.sender_timer_at = None;
                flow.sender.on_timer(now, &mut self.out);
                self.flush(now, f, true);
            }
            Event::ReceiverTimer(f) => {
                let flow = &mut self.flows[f as usize];
                if flow.receiver_timer_at != Some(now) {
                    return;
                }
                flow.receiver_timer_at = None;
                flow.receiver.on_timer(now, &mut self.out);
                self.flush(now, f, false);
            }
            Event::FlowStart(f) => {
                self.flows[f as usize].sender.start(now, &mut self.out);
                self.flush(now, f, true);
            }
            Event::TraceSample => {
                self.sample(now);
                self.sched
                    .schedule(now + self.trace_interval, Event::TraceSample);
            }
        }
    }

    fn deliver(&mut self, now: Time, node: NodeId, p: Packet) {
        if p.dst != node {
            self.forward(now, node, p);
            return;
        }
        let f = p.flow;
        let flow = &mut self.flows[f as usize];
        if !flow.reassembly[usize::from(!p.toward_receiver())].accept(&p) {
            return;
        }
        if p.toward_receiver() {
            flow.receiver.on_packet(now, &p, &mut self.out);
            if !flow.done && flow.receiver.completed_at().is_some() {
                flow.done = true;
                self.remaining -= 1;
            }
            self.flush(now, f, false);
        } else {
            flow.sender.on_packet(now, &p, &mut self.out);
            self.flush(now, f, true);
        }
    }

    /// Send what an endpoint emitted and keep its timer event in step.
    fn flush(&mut self, now: Time, f: u32, from_sender: bool) {
        let mut out = std::mem::take(&mut self.out);
        let flow = &self.flows[f as usize];
        let (node, mtu) = if from_sender {
            (flow.src, flow.mtu_forward)
        } else {
            (flow.dst, flow.mtu_reverse)
        };
        for p in out.drain(..) {
            if p.ip_bytes <= mtu {
                self.forward(now, node, p);
            } else {
                for fragment in p.fragments(mtu) {
                    self.forward(now, node, fragment);
                }
            }
        }
        self.out = out;
        let flow = &mut self.flows[f as usize];
        let (deadline, armed, event) = if from_sender {
            (
                flow.sender.timer_deadline(),
                &mut flow.sender_timer_at,
                Event::SenderTimer(f),
            )
        } else {
            (
                flow.receiver.timer_deadline(),
                &mut flow.receiver_timer_at,
                Event::ReceiverTimer(f),
            )
        };
        if let Some(d) = deadline {
            if armed.is_none_or(|t| d < t) {
                *armed = Some(d);
                self.sched.schedule(d, event);
            }
        }
    }

    fn forward(&mut self, now: Time, node: NodeId, p: Packet) {
        let Some(d) = self.routes[node.0 as usize][p.dst.0 as usize] else {
            return; // unreachable destinations are rejected before the run
        };
        match self.links[d as usize].enqueue(now, p) {
            Enqueued::Accepted(schedule) => {
                self.packets += 1;
                if let Some(t) = schedule {
                    self.sched.schedule(t, Event::Arrival(d));
                }
            }
            Enqueued::QueueFull => self.dropped(p, LossCause::Congestion),
        }
    }

    /// Count a drop and, for data, tell the sender's loss oracle its cause.
    fn dropped(&mut self, p: Packet, cause: LossCause) {
        let flow = &mut self.flows[p.flow as usize];
        match cause {
            LossCause::Link => flow.drops_link_error += 1,
            LossCause::Congestion => flow.drops_queue += 1,
        }
        if p.kind == PacketKind::Data {
            flow.sender.record_drop(p.seq, cause);
        }
    }

    fn sample(&mut self, now: Time) {
        let Some(trace) = self.trace.as_mut() else {
            return;
        };
        for f in &self.flows {
            if f.done || now < f.start {
                continue;
            }
            let s = &f.sender;
            let w = s.window();
            trace.time_s.push(now.as_secs_f64());
            trace.flow.push(f.name.clone());
            trace.cwnd_bytes.push(w.cwnd);
            trace.ssthresh_bytes.push(if w.ssthresh == u64::MAX {
                f64::INFINITY
            } else {
                w.ssthresh as f64
            });
            trace.snd_una.push(s.snd_una());
            trace.snd_max.push(s.snd_max());
            trace
                .srtt_s
                .push(s.srtt().map_or(f64::NAN, |d| d.as_secs_f64()));
            trace.bytes_in_flight.push(s.flight_size());
            trace.ca_state.push(s.ca_state().as_str());
        }
    }

    fn finish(self, end: Time, wall_s: f64) -> RunResult {
        let flows = self
            .flows
            .iter()
            .map(|f| {
                let st = f.sender.stats();
                let completed_at = f.receiver.completed_at();
                let (elapsed, received) = match completed_at {
                    Some(t) => (t - f.start, f.bytes),
                    None => (end - f.start, f.receiver.bytes_received()),
                };
                let secs = elapsed.as_secs_f64();
                FlowResult {
                    flow: f.name.clone(),
                    cc: f.cc.clone(),
                    profile: f.profile,
                    recovery: f.recovery,
                    bytes: f.bytes,
                    completed: completed_at.is_some(),
                    goodput_bps: if secs > 0.0 {
                        received as f64 * 8.0 / secs
                    } else {
                        0.0
                    },
                    completion_s: completed_at.map_or(f64::NAN, |_| secs),
                    segments_sent: st.segments_sent,
                    retransmissions: st.retransmissions,
                    rto_count: st.rto_count,
                    fast_recoveries: st.fast_recoveries,
                    slow_starts_after_loss: st.slow_starts_after_loss,
                    drops_link_error: f.drops_link_error,
                    drops_queue: f.drops_queue,
                    rtt_min_s: st.rtt_min.map_or(f64::NAN, |d| d.as_secs_f64()),
                    rtt_mean_s: if st.rtt_samples > 0 {
                        st.rtt_sum_s / st.rtt_samples as f64
                    } else {
                        f64::NAN
                    },
                    rtt_max_s: st.rtt_max.map_or(f64::NAN, |d| d.as_secs_f64()),
                    loss_events: st.loss_events,
                    true_link_losses: st.true_link_losses,
                    true_congestion_losses: st.true_congestion_losses,
                    predicted_link_losses: st.predicted_link_losses,
                    predicted_congestion_losses: st.predicted_congestion_losses,
                    correct_predictions: st.correct_predictions,
                }
            })
            .collect();
        let links = self
            .links
            .iter()
            .zip(&self.link_names)
            .map(|(l, (name, dir))| LinkResult {
                link: name.clone(),
                direction: dir.clone(),
                packets_carried: l.stats.packets_carried,
                bytes_carried: l.stats.bytes_carried,
                drops_queue: l.stats.drops_queue,
                drops_link_error: l.stats.drops_link_error,
            })
            .collect();
        RunResult {
            scenario_hash: self.hash,
            seed: self.seed,
            version: crate::VERSION,
            flows,
            links,
            trace: self.trace,
            events: self.sched.events_processed(),
            packets: self.packets,
            sim_time_s: end.as_secs_f64(),
            wall_s,
        }
    }
}

/// IPv4 reassembly of one flow direction at its destination.
///
/// Fragments of one flow direction follow one FIFO path, so they arrive in
/// order; a gap means a fragment was lost and the datagram is discarded. A
/// fragment must belong to the datagram being reassembled, identified (as by
/// the IPv4 identification) by its first payload byte and send time: losing the
/// tail of one packet and the head of the next loses both rather than splicing
/// them into one.
#[derive(Clone, Copy, Debug, Default)]
struct Reassembly {
    /// The datagram in progress and the next fragment index expected.
    partial: Option<((u64, Time), u16)>,
}

impl Reassembly {
    /// Take one arriving packet; `true` when a whole datagram is complete
    /// (always for an unfragmented packet).
    fn accept(&mut self, p: &Packet) -> bool {
        if p.frag_count <= 1 {
            return true;
        }
        let id = (p.seq, p.ts_val);
        match self.partial {
            _ if p.frag_index == 0 => {
                self.partial = Some((id, 1));
                false
            }
            Some((current, next)) if current == id && next == p.frag_index => {
                if p.frag_index + 1 == p.frag_count {
                    self.partial = None;
                    true
                } else {
                    self.partial = Some((id, next + 1));
                    false
                }
            }
            _ => {
                self.partial = None;
                false
            }
        }
    }
}

/// Smallest MTU along the route from `from` to `to`. Packets are fragmented
/// once, at their source, to fit it (routers do not refragment).
fn path_mtu(routes: &[Vec<Option<u32>>], links: &[LinkDir], from: NodeId, to: NodeId) -> u32 {
    let mut mtu = u32::MAX;
    let mut node = from;
    for _ in 0..routes.len() {
        if node == to {
            break;
        }
        match routes[node.0 as usize][to.0 as usize] {
            Some(d) => {
                let l = &links[d as usize];
                mtu = mtu.min(l.params.mtu_bytes);
                node = l.to;
            }
            None => break,
        }
    }
    mtu
}

/// Next-hop table by breadth-first search from every destination over reversed
/// links: fewest hops, ties broken by link order (deterministic).
fn shortest_path_routes(n_nodes: usize, links: &[LinkDir]) -> Vec<Vec<Option<u32>>> {
    let mut routes = vec![vec![None; n_nodes]; n_nodes];
    for dst in 0..n_nodes {
        let mut seen = vec![false; n_nodes];
        seen[dst] = true;
        let mut queue = VecDeque::from([dst]);
        while let Some(v) = queue.pop_front() {
            // Every link direction u→v gives u a route to dst through it.
            for (d, l) in links.iter().enumerate() {
                let (u, to) = (l.from.0 as usize, l.to.0 as usize);
                if to == v && !seen[u] {
                    seen[u] = true;
                    routes[u][dst] = Some(d as u32);
                    queue.push_back(u);
                }
            }
        }
    }
    routes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::PacketKind;

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
        }
    }

    #[test]
    fn reassembly_completes_whole_datagrams_only() {
        let mut r = Reassembly::default();
        assert!(r.accept(&fragment(0, 1, 0, 1)), "unfragmented");
        assert!(!r.accept(&fragment(0, 1, 0, 2)));
        assert!(r.accept(&fragment(0, 1, 1, 2)));
        // A lost first fragment: the second alone is discarded.
        assert!(!r.accept(&fragment(1460, 2, 1, 2)));
    }

    #[test]
    fn reassembly_never_splices_two_datagrams() {
        // Tail of datagram A and head of datagram B lost: A's head and B's tail
        // arrive back to back and must not make a datagram.
        let mut r = Reassembly::default();
        assert!(!r.accept(&fragment(0, 10, 0, 2)));
        assert!(!r.accept(&fragment(1460, 11, 1, 2)));
        // A retransmission of the same bytes is a different datagram too.
        assert!(!r.accept(&fragment(0, 10, 0, 2)));
        assert!(!r.accept(&fragment(0, 99, 1, 2)));
        // And the next whole datagram still goes through.
        assert!(!r.accept(&fragment(2920, 12, 0, 2)));
        assert!(r.accept(&fragment(2920, 12, 1, 2)));
    }
}
