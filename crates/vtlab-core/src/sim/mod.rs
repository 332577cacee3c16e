//! The simulation: wires links, shared media, routes and TCP endpoints to the
//! scheduler.
//!
//! Pending events are bounded by the number of link directions plus two
//! timers per flow (and two per site of a shared medium): a link direction
//! schedules only its head arrival, and a timer that is pushed later (the RTO
//! restarted on every ACK) is not rescheduled; when its stale event fires it
//! re-arms at the new deadline. Shared media of every link family are driven
//! through [`crate::net::family::LinkFamily`] alone.

#[cfg(test)]
mod bus_tests;
pub mod capture;
mod flow;
mod observe;
pub mod plan;
mod reassembly;
mod session;

use std::time::Instant;

use crate::engine::{Duration, RngStream, Scheduler, Time};
use crate::metrics::{
    row_output_bytes, EventLog, EventRow, LinkResult, MessageLog, RunResult, Trace, TraceRow,
};
use crate::net::family::{AnyFamily, DropCause, LinkFamily};
use crate::net::link::{Arrival, Enqueued, TcOut};
use crate::net::qdisc::hash::{FiveTuple, PROTO_TCP};
use crate::net::qdisc::{DropReason, Item, Stats as QdiscStats};
use crate::net::{LinkDir, LossModel, NodeId, Packet, PacketKind};
use crate::tcp::cc::LossCause;
use crate::tcp::option_bytes;
pub use capture::{Capture, CaptureError, CaptureRequest};
use flow::Flow;
use plan::FlowRole;
pub use plan::Plan;
use session::{AppAction, SessionApp};

/// How often (in events) an interruptible run asks whether to stop: about
/// every 5 ms of engine time at 10⁷ events/s.
pub const CHECK_EVERY: u64 = 1 << 16;

/// Trace rows handed to a trace sink at a time (a few MB).
pub const TRACE_BATCH: usize = 1 << 16;

/// Callbacks of a run (see [`Simulation::run_with`]).
#[derive(Default)]
pub struct Hooks<'a> {
    /// Asked every [`CHECK_EVERY`] events; `true` stops the run.
    pub interrupted: Option<&'a mut dyn FnMut() -> bool>,
    /// Receives the trace in batches; `false` stops the run.
    pub trace_sink: Option<&'a mut dyn FnMut(Trace) -> bool>,
}

#[derive(Clone, Copy, Debug)]
enum Event {
    /// The head packet of link direction `usize` reaches the far end.
    Arrival(u32),
    SenderTimer(u32),
    ReceiverTimer(u32),
    FlowStart(u32),
    TraceSample,
    /// The transmission that site `u32` of a shared medium (global index
    /// over the media) started ends.
    SiteTxEnd(u32),
    /// Site `u32`'s timer.
    SiteTimer(u32),
    /// Session `u32`'s application timer.
    SessionTimer(u32),
    /// Link direction `u32`'s device starts transmitting a packet while its
    /// queue disc is stopped (ns-3's device dequeue).
    DeviceDequeue(u32),
    /// Link direction `u32`'s device queue wakes its queue disc (ns-3's
    /// `NetDeviceQueue::Wake`, scheduled "now" by the device dequeue).
    QdiscWake(u32),
}

/// Where a packet was dropped: a link direction or a site of a shared
/// medium (global index).
#[derive(Clone, Copy, Debug)]
enum At {
    Dir(u32),
    Site(u32),
}

/// Options of one run that do not change its results' identity.
#[derive(Clone, Copy, Debug, Default)]
pub struct RunOptions {
    /// Record a trace of sender state.
    pub trace: bool,
    /// With `trace`: a row at every change of cwnd, ssthresh or congestion
    /// state (exact) instead of one every `trace_interval` (sampled).
    pub trace_changes: bool,
    /// Record typed events ([`crate::metrics::EventLog`]).
    pub events: bool,
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
    trace_changes: bool,
    events: Option<EventLog>,
    trace_interval: Duration,
    horizon: Time,
    horizon_reason: &'static str,
    max_events: u64,
    /// The queue discs' own work (PIE's updates, caught up lazily between
    /// packets), counted against `max_events` as the events ns-3 runs it in.
    qdisc_work: u64,
    /// The output budget, and what the sessions' message rows take of it.
    max_output_bytes: u64,
    message_output_bytes: u64,
    /// Trace rows handed to a trace sink so far.
    streamed_rows: u64,
    /// Why the run ended before every flow was done (`abort_reason` of the
    /// flows still running then).
    end_reason: &'static str,
    remaining: usize,
    packets: u64,
    hash: String,
    seed: u64,
    /// Packet captures, when asked for ([`Simulation::with_capture`]).
    capture: Option<Box<Capture>>,
    /// Shared media of any link family; their sites are numbered globally
    /// in medium order.
    media: Vec<AnyFamily>,
    /// Global site → (medium, site in it).
    sites: Vec<(u32, u32)>,
    /// Global index of each medium's first site.
    site_base: Vec<u32>,
    /// The timer event pending for each site (stale ones are ignored).
    site_timer_at: Vec<Option<Time>>,
    /// Link directions before the hops over media.
    p2p_dirs: u32,
    air: Vec<plan::AirHop>,
    /// Request/response sessions, their pending timer events, and the
    /// application's requests of the event being handled.
    sessions: Vec<SessionApp>,
    session_timer_at: Vec<Option<Time>>,
    actions: Vec<AppAction>,
    /// Scratch outcome of the traffic-control layer (kept for its buffers).
    tc_out: TcOut,
}

impl Simulation {
    /// Build a run of a checked plan with `seed`.
    pub fn new(plan: &Plan, seed: u64, options: RunOptions) -> Self {
        let (links, link_names) = link_dirs(plan, seed);
        let flows: Vec<Flow> = five_tuples(plan)
            .into_iter()
            .enumerate()
            .map(|(i, tuple)| Flow::new(plan, i, tuple, seed))
            .collect();
        let media: Vec<AnyFamily> = plan
            .media
            .iter()
            .map(|m| AnyFamily::build(&m.conf, m.nodes.clone(), seed))
            .collect();
        let mut sites = Vec::new();
        let mut site_base = Vec::with_capacity(media.len());
        for (i, m) in media.iter().enumerate() {
            site_base.push(sites.len() as u32);
            sites.extend((0..m.sites()).map(|k| (i as u32, k as u32)));
        }
        let sessions: Vec<SessionApp> = plan
            .sessions
            .iter()
            .map(|c| SessionApp::new(c.clone()))
            .collect();
        let bulk = flows.iter().filter(|f| f.role == FlowRole::Bulk).count();
        Simulation {
            session_timer_at: vec![None; sessions.len()],
            remaining: bulk + sessions.len(),
            sessions,
            actions: Vec::new(),
            tc_out: TcOut::default(),
            site_timer_at: vec![None; sites.len()],
            media,
            sites,
            site_base,
            p2p_dirs: (plan.links.len() * 2) as u32,
            air: plan.air.clone(),
            sched: Scheduler::new(),
            links,
            link_names,
            routes: plan.routes.clone(),
            flows,
            out: Vec::with_capacity(64),
            trace: options.trace.then(Trace::default),
            trace_changes: options.trace && options.trace_changes,
            events: options.events.then(EventLog::default),
            trace_interval: plan.trace_interval,
            horizon: plan.horizon,
            horizon_reason: plan.horizon_reason,
            max_events: plan.max_events,
            qdisc_work: 0,
            max_output_bytes: plan.max_output_bytes,
            message_output_bytes: plan.message_output_bytes,
            streamed_rows: 0,
            end_reason: "",
            packets: 0,
            hash: plan.hash.clone(),
            seed,
            capture: None,
        }
    }

    /// Write packet captures (opened with [`Capture::open`] for this plan).
    pub fn with_capture(mut self, capture: Capture) -> Self {
        self.capture = Some(Box::new(capture));
        self.tc_out.record_sent = true;
        self
    }

    /// Run to completion (every flow done), to the horizon (the scenario's
    /// stop time or the default horizon) or until the event budget is spent.
    pub fn run(mut self) -> RunResult {
        let wall = Instant::now();
        let end = self
            .run_loop(&mut Hooks::default())
            .unwrap_or(self.sched.now());
        self.finish(end, wall.elapsed().as_secs_f64())
    }

    /// As [`Simulation::run`], with hooks: `interrupted` is asked every
    /// [`CHECK_EVERY`] events whether to stop (Ctrl-C), and `trace_sink` receives
    /// the trace in batches of [`TRACE_BATCH`] rows as it grows (so a trace of
    /// any length needs bounded memory; the result then holds no trace). `None`
    /// if the run was interrupted or a sink returned false.
    pub fn run_with(mut self, mut hooks: Hooks<'_>) -> Option<RunResult> {
        let wall = Instant::now();
        let end = self.run_loop(&mut hooks)?;
        if let Some(sink) = hooks.trace_sink.as_mut() {
            let rest = self.trace.take().unwrap_or_default();
            if !rest.is_empty() && !sink(rest) {
                return None;
            }
        }
        Some(self.finish(end, wall.elapsed().as_secs_f64()))
    }

    /// The event loop; returns the end time, or `None` when interrupted.
    fn run_loop(&mut self, hooks: &mut Hooks<'_>) -> Option<Time> {
        let capture = self.capture.is_some();
        for (i, f) in self.flows.iter().enumerate() {
            // A session's response direction is opened by the request direction's SYN.
            if !matches!(f.role, FlowRole::Responses(_)) {
                self.sched.schedule(f.start, Event::FlowStart(i as u32));
            }
        }
        if self.trace.is_some() && !self.trace_changes {
            self.sched.schedule(Time::ZERO, Event::TraceSample);
        }
        // Sites with timers from the start (a routing protocol's HELLOs; a
        // medium under static routes has none).
        for g in 0..self.sites.len() as u32 {
            self.arm_site(g);
        }
        let streaming = hooks.trace_sink.is_some() && self.trace.is_some();
        let watch_output = self.trace.is_some() || self.events.is_some() || capture;
        while let Some((now, event)) = self.sched.pop() {
            if now > self.horizon {
                self.end_reason = self.horizon_reason;
                return Some(self.horizon);
            }
            let n = self.sched.events_processed();
            if n + self.qdisc_work > self.max_events {
                self.end_reason = "event_budget";
                return Some(now);
            }
            if n % CHECK_EVERY == 0 && hooks.interrupted.as_mut().is_some_and(|f| f()) {
                return None;
            }
            // Captures cost one predictable branch per event when off: the
            // handlers are compiled with and without the capture hooks.
            if capture {
                self.handle::<true>(now, event);
            } else {
                self.handle::<false>(now, event);
            }
            if streaming && self.trace.as_ref().is_some_and(|t| t.len() >= TRACE_BATCH) {
                let batch = std::mem::take(self.trace.as_mut()?);
                self.streamed_rows += batch.len() as u64;
                if !hooks.trace_sink.as_mut().is_some_and(|sink| sink(batch)) {
                    return None;
                }
            }
            if self.remaining == 0 {
                return Some(self.sched.now());
            }
            if watch_output && self.output_bytes(streaming) > self.max_output_bytes {
                self.end_reason = "output_budget";
                return Some(now);
            }
        }
        self.end_reason = "stalled";
        Some(self.sched.now())
    }

    fn handle<const CAPTURE: bool>(&mut self, now: Time, event: Event) {
        match event {
            Event::Arrival(d) => self.arrival::<CAPTURE>(now, d),
            Event::SenderTimer(f) => {
                let flow = &mut self.flows[f as usize];
                if flow.sender_timer_at != Some(now) {
                    return; // superseded by an earlier deadline
                }
                flow.sender_timer_at = None;
                flow.sender.on_timer(now, &mut self.out);
                self.flush::<CAPTURE>(now, f, true);
            }
            Event::ReceiverTimer(f) => {
                let flow = &mut self.flows[f as usize];
                if flow.receiver_timer_at != Some(now) {
                    return;
                }
                flow.receiver_timer_at = None;
                flow.receiver.on_timer(now, &mut self.out);
                self.flush::<CAPTURE>(now, f, false);
            }
            Event::FlowStart(f) => {
                let flow = &mut self.flows[f as usize];
                flow.sender.start(now, &mut self.out);
                if let (true, Some(t)) = (self.trace_changes, self.trace.as_mut()) {
                    t.push(observe::trace_row(now, &flow.name, &flow.sender));
                }
                self.flush::<CAPTURE>(now, f, true);
            }
            Event::TraceSample => {
                self.sample(now);
                self.sched
                    .schedule(now + self.trace_interval, Event::TraceSample);
            }
            Event::SiteTxEnd(g) => {
                let (m, k) = self.sites[g as usize];
                self.media[m as usize].on_tx_end(now, k as usize);
                self.drain_medium::<CAPTURE>(now, m);
            }
            Event::SessionTimer(k) => {
                if self.session_timer_at[k as usize] != Some(now) {
                    return; // superseded
                }
                self.session_timer_at[k as usize] = None;
                let mut actions = std::mem::take(&mut self.actions);
                self.sessions[k as usize].on_timer(now, &mut actions);
                self.act::<CAPTURE>(now, k, actions);
            }
            Event::DeviceDequeue(d) => self.sched.schedule(now, Event::QdiscWake(d)),
            Event::QdiscWake(d) => {
                self.links[d as usize].tc_wake(now, &mut self.tc_out);
                self.after_tc::<CAPTURE>(now, d);
            }
            Event::SiteTimer(g) => {
                if self.site_timer_at[g as usize] != Some(now) {
                    return; // superseded
                }
                self.site_timer_at[g as usize] = None;
                let (m, k) = self.sites[g as usize];
                self.media[m as usize].on_timer(now, k as usize);
                self.arm_site(g);
                self.drain_medium::<CAPTURE>(now, m);
            }
        }
    }

    /// The head packet of link direction `d` reaches the far end.
    fn arrival<const CAPTURE: bool>(&mut self, now: Time, d: u32) {
        let (fate, next) = self.links[d as usize].arrive(now);
        if let Some(t) = next {
            self.sched.schedule(t, Event::Arrival(d));
        }
        match fate {
            Some(Arrival::Delivered(p)) => {
                if let (true, Some(c)) = (CAPTURE, self.capture.as_mut()) {
                    c.delivered(now, d, &p);
                }
                self.deliver::<CAPTURE>(now, self.links[d as usize].to, p)
            }
            Some(Arrival::Lost(p)) => self.dropped::<CAPTURE>(now, At::Dir(d), p, LossCause::Link),
            None => {}
        }
    }

    /// Keep site `g`'s timer event at its earliest deadline.
    fn arm_site(&mut self, g: u32) {
        let (m, k) = self.sites[g as usize];
        if let Some(d) = self.media[m as usize].deadline(k as usize) {
            let armed = &mut self.site_timer_at[g as usize];
            if armed.is_none_or(|t| d < t) {
                *armed = Some(d);
                self.sched.schedule(d, Event::SiteTimer(g));
            }
        }
    }

    /// Act on what medium `m` left in its outbox, until it is empty
    /// (delivering a packet can enqueue another on the same medium).
    fn drain_medium<const CAPTURE: bool>(&mut self, now: Time, m: u32) {
        let base = self.site_base[m as usize];
        loop {
            let mut out = std::mem::take(self.media[m as usize].outbox());
            if out.is_empty() {
                *self.media[m as usize].outbox() = out; // keep its buffers
                return;
            }
            for (k, end) in out.tx_end.drain(..) {
                self.sched.schedule(end, Event::SiteTxEnd(base + k as u32));
            }
            for k in out.timers.drain(..) {
                self.arm_site(base + k as u32);
            }
            for (k, p, cause) in out.dropped.drain(..) {
                let cause = match cause {
                    DropCause::Queue => LossCause::Congestion,
                    DropCause::Link => LossCause::Link,
                };
                self.dropped::<CAPTURE>(now, At::Site(base + k as u32), p, cause);
            }
            for (k, p) in out.delivered.drain(..) {
                let node = self.media[m as usize].node(k);
                self.deliver::<CAPTURE>(now, node, p);
            }
            // Hand the (now empty) buffers back unless delivering filled new ones.
            let outbox = self.media[m as usize].outbox();
            if outbox.is_empty() {
                *outbox = out;
            }
        }
    }

    fn deliver<const CAPTURE: bool>(&mut self, now: Time, node: NodeId, p: Packet) {
        if p.dst != node {
            self.forward::<CAPTURE>(now, node, p);
            return;
        }
        let f = p.flow;
        let flow = &mut self.flows[f as usize];
        if !flow.reassembly[usize::from(!p.toward_receiver())].accept(now, &p) {
            return;
        }
        if p.piggyback {
            // The acknowledgement riding on this segment first, as TCP
            // processes a segment's ACK field before its data.
            if let Some(partner) = self.partner(f) {
                self.deliver_to_sender::<CAPTURE>(now, p.piggybacked_ack(partner));
            }
        }
        if p.toward_receiver() {
            if let Some(partner) = self.partner(f) {
                // Linux's receiver compares idle gaps with its end's RTO.
                let rto = self.flows[partner as usize].sender.rto();
                self.flows[f as usize].receiver.set_local_rto(rto);
            }
            let flow = &mut self.flows[f as usize];
            flow.receiver.on_packet(now, &p, &mut self.out);
            let received = flow.receiver.bytes_received();
            match flow.role {
                FlowRole::Bulk => {
                    if !flow.done && flow.receiver.completed_at().is_some() {
                        flow.done = true;
                        self.remaining -= 1;
                    }
                    self.flush::<CAPTURE>(now, f, false);
                }
                FlowRole::Requests(k) | FlowRole::Responses(k) => {
                    // The receiver decides on its ACK before the application
                    // reads and answers (ns-3 `ReceivedData` then
                    // `SendPendingData`; Linux in softirq, the application
                    // later); an answer then carries a delayed ACK.
                    self.flush::<CAPTURE>(now, f, false);
                    let mut actions = std::mem::take(&mut self.actions);
                    let app = &mut self.sessions[k as usize];
                    if matches!(self.flows[f as usize].role, FlowRole::Requests(_)) {
                        if p.kind == PacketKind::Syn {
                            let rwnd = self.flows[f as usize].receiver.advertised_window();
                            let responses = app.plan.responses;
                            self.flows[responses as usize].sender.accept(now, rwnd);
                        }
                        app.on_requests(now, received, &mut actions);
                    } else {
                        app.on_responses(now, received, &mut actions);
                    }
                    self.act::<CAPTURE>(now, k, actions);
                }
            }
        } else {
            self.deliver_to_sender::<CAPTURE>(now, p);
        }
    }

    /// An acknowledgement (or SYN-ACK) reaches its flow's sender.
    fn deliver_to_sender<const CAPTURE: bool>(&mut self, now: Time, p: Packet) {
        let f = p.flow;
        let flow = &mut self.flows[f as usize];
        if let Some(log) = self.events.as_mut() {
            let ts = flow.timestamps;
            observe::before_ack(&mut flow.seen, now, &flow.name, &flow.sender, &p, ts, log);
        }
        flow.sender.on_packet(now, &p, &mut self.out);
        self.flush::<CAPTURE>(now, f, true);
        if let FlowRole::Requests(k) = self.flows[f as usize].role {
            if p.kind == PacketKind::SynAck && self.flows[f as usize].sender.is_established() {
                // A two-way connection's client completes the handshake with
                // a pure ACK (ns-3 `ProcessSynSent`) before its first request;
                // it travels as the response direction's acknowledgement.
                let responses = self.sessions[k as usize].plan.responses;
                self.flows[responses as usize]
                    .receiver
                    .ack_now(now, &mut self.out);
                self.flush::<CAPTURE>(now, responses, false);
                let mut actions = std::mem::take(&mut self.actions);
                self.sessions[k as usize].on_connected(now, &mut actions);
                self.act::<CAPTURE>(now, k, actions);
            }
        }
    }

    /// The other direction of a session's connection.
    fn partner(&self, f: u32) -> Option<u32> {
        match self.flows[f as usize].role {
            FlowRole::Bulk => None,
            FlowRole::Requests(k) => Some(self.sessions[k as usize].plan.responses),
            FlowRole::Responses(k) => Some(self.sessions[k as usize].plan.requests),
        }
    }

    /// Carry out what session `k`'s application asked for, keep its timer
    /// event in step, and wind the session up when it ended.
    fn act<const CAPTURE: bool>(&mut self, now: Time, k: u32, mut actions: Vec<AppAction>) {
        let (requests, responses) = {
            let c = &self.sessions[k as usize].plan;
            (c.requests, c.responses)
        };
        for a in actions.drain(..) {
            let (f, bytes) = match a {
                AppAction::Request(b) => (requests, b),
                AppAction::Response(b) => (responses, b),
            };
            self.flows[f as usize]
                .sender
                .write(now, bytes, &mut self.out);
            self.flush::<CAPTURE>(now, f, true);
        }
        self.actions = actions;
        let app = &self.sessions[k as usize];
        if app.is_ended() {
            self.end_session(k);
            return;
        }
        if let Some(d) = app.deadline() {
            let armed = &mut self.session_timer_at[k as usize];
            if armed.is_none_or(|t| d < t) {
                *armed = Some(d);
                self.sched.schedule(d, Event::SessionTimer(k));
            }
        }
    }

    /// Session `k` ended: both directions stop, and it no longer holds the run.
    fn end_session(&mut self, k: u32) {
        let (requests, responses) = {
            let c = &self.sessions[k as usize].plan;
            (c.requests, c.responses)
        };
        if self.flows[requests as usize].done {
            return;
        }
        for f in [requests, responses] {
            let flow = &mut self.flows[f as usize];
            flow.done = true;
            flow.sender.close();
        }
        self.remaining -= 1;
    }

    /// Send what an endpoint emitted and keep its timer event in step.
    fn flush<const CAPTURE: bool>(&mut self, now: Time, f: u32, from_sender: bool) {
        let mut out = std::mem::take(&mut self.out);
        if from_sender && (self.events.is_some() || self.trace_changes) {
            let flow = &mut self.flows[f as usize];
            let trace = self.trace.as_mut().filter(|_| self.trace_changes);
            let (events, seen) = (self.events.as_mut(), &mut flow.seen);
            observe::after_input(seen, now, &flow.name, &flow.sender, &out, events, trace);
        }
        let flow = &mut self.flows[f as usize];
        if from_sender && !flow.done {
            if let Some(reason) = flow.sender.aborted() {
                flow.abort = Some(reason);
                match flow.role {
                    FlowRole::Bulk => {
                        flow.done = true;
                        self.remaining -= 1;
                    }
                    FlowRole::Requests(k) | FlowRole::Responses(k) => {
                        let app = &mut self.sessions[k as usize];
                        let step = app.current_step().to_owned();
                        app.end(now, reason, &step);
                        self.end_session(k);
                    }
                }
            }
        }
        if from_sender {
            self.piggyback(now, f, &mut out);
        } else if let Some(partner) = self.partner(f) {
            // A pure ACK leaves the endpoint whose sender is the other
            // direction of a two-way connection (a bulk flow has none: no scan).
            if out.iter().any(|p| p.kind == PacketKind::Ack) {
                self.flows[partner as usize].sender.on_pure_ack_sent();
            }
        }
        let flow = &self.flows[f as usize];
        let (node, mtu) = if from_sender {
            (flow.src, flow.mtu_forward)
        } else {
            (flow.dst, flow.mtu_reverse)
        };
        for p in out.drain(..) {
            if p.ip_bytes <= mtu {
                self.forward::<CAPTURE>(now, node, p);
            } else {
                for fragment in p.fragments(mtu) {
                    self.forward::<CAPTURE>(now, node, fragment);
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

    /// The data segments of a session direction carry the acknowledgement
    /// of the other direction, whose receiver is at the same end (one TCP
    /// connection: every segment has the ACK flag; a held delayed ACK is
    /// cancelled).
    fn piggyback(&mut self, now: Time, f: u32, out: &mut [Packet]) {
        let Some(partner) = self.partner(f) else {
            return;
        };
        let ts = self.flows[partner as usize].timestamps;
        for p in out.iter_mut().filter(|p| p.kind == PacketKind::Data) {
            let ack = self.flows[partner as usize].receiver.ack_for_data(now);
            p.piggyback = true;
            p.ack = ack.ack;
            p.rwnd = ack.rwnd;
            p.sack = ack.sack;
            p.sack_len = ack.sack_len;
            p.ts_ecr = ack.ts_ecr;
            // SACK blocks lengthen the header (the timestamps are already there).
            p.ip_bytes += option_bytes(ts, usize::from(ack.sack_len)) - option_bytes(ts, 0);
        }
    }

    fn forward<const CAPTURE: bool>(&mut self, now: Time, node: NodeId, p: Packet) {
        let Some(d) = self.routes[node.0 as usize][p.dst.0 as usize] else {
            return; // unreachable destinations are rejected before the run
        };
        if d >= self.p2p_dirs {
            let hop = self.air[(d - self.p2p_dirs) as usize];
            self.packets += 1;
            let medium = &mut self.media[hop.medium as usize];
            medium.enqueue(now, hop.from as usize, hop.to as usize, p);
            self.drain_medium::<CAPTURE>(now, hop.medium);
            return;
        }
        let (enqueued, tx_start) = if self.links[d as usize].has_qdisc() {
            let flow = &self.flows[p.flow as usize];
            let way = usize::from(!p.toward_receiver());
            let hash = flow.hashes[way][usize::from(p.frag_index > 0)];
            let Some(passed) = self.links[d as usize].tc_pass(now, p, hash, 0) else {
                let item = Item::new(p, p.ip_bytes).with_flow(hash);
                self.links[d as usize].tc_send(now, item, &mut self.tc_out);
                self.after_tc::<CAPTURE>(now, d);
                return;
            };
            (passed.enqueued, passed.tx_start)
        } else {
            (self.links[d as usize].enqueue(now, p), None)
        };
        match enqueued {
            Enqueued::Accepted(schedule) => {
                self.packets += 1;
                if let (true, Some(c)) = (CAPTURE, self.capture.as_mut()) {
                    c.sent(now, d, &p);
                }
                if let Some(t) = schedule {
                    self.sched.schedule(t, Event::Arrival(d));
                }
            }
            Enqueued::QueueFull => {
                self.dropped::<CAPTURE>(now, At::Dir(d), p, LossCause::Congestion)
            }
        }
        // After the arrival, as `after_tc` schedules them.
        if let Some(t) = tx_start {
            self.sched.schedule(t, Event::DeviceDequeue(d));
        }
    }

    /// Act on what a pass through direction `d`'s traffic-control layer did
    /// (`self.tc_out`), and clear it, keeping its buffers for the next pass.
    #[inline]
    fn after_tc<const CAPTURE: bool>(&mut self, now: Time, d: u32) {
        let out = &mut self.tc_out;
        self.qdisc_work += std::mem::take(&mut out.work);
        self.packets += std::mem::take(&mut out.sent_count);
        if let Some(t) = out.arrival.take() {
            self.sched.schedule(t, Event::Arrival(d));
        }
        if let Some(t) = self.tc_out.tx_start.take() {
            self.sched.schedule(t, Event::DeviceDequeue(d));
        }
        if let (true, Some(c)) = (CAPTURE, self.capture.as_mut()) {
            for p in &self.tc_out.sent {
                c.sent(now, d, p);
            }
        }
        self.tc_out.sent.clear();
        if self.tc_out.dropped.is_empty() {
            return;
        }
        let mut dropped = std::mem::take(&mut self.tc_out.dropped);
        for &(p, aqm) in &dropped {
            let cause = if aqm {
                LossCause::Aqm
            } else {
                LossCause::Congestion
            };
            self.dropped::<CAPTURE>(now, At::Dir(d), p, cause);
        }
        dropped.clear();
        self.tc_out.dropped = dropped;
    }

    /// Count a drop at `at` and, for data, tell the sender's loss oracle its
    /// cause.
    fn dropped<const CAPTURE: bool>(&mut self, now: Time, at: At, p: Packet, cause: LossCause) {
        if let (true, Some(c), At::Dir(d)) = (CAPTURE, self.capture.as_mut(), at) {
            c.dropped(d, &p, cause == LossCause::Link);
        }
        let flow = &mut self.flows[p.flow as usize];
        match cause {
            LossCause::Link => flow.drops_link_error += 1,
            LossCause::Congestion => flow.drops_queue += 1,
            LossCause::Aqm => flow.drops_aqm += 1,
        }
        if p.kind == PacketKind::Data {
            flow.sender.record_drop(p.seq, cause);
        }
        if let Some(log) = self.events.as_mut() {
            let direction = match at {
                At::Dir(d) => {
                    let (name, dir) = &self.link_names[d as usize];
                    format!("{name} {dir}")
                }
                At::Site(g) => {
                    let (m, k) = self.sites[g as usize];
                    let medium = &self.media[m as usize];
                    format!("{} {}", medium.name(), medium.site_name(k as usize))
                }
            };
            let cause = match cause {
                LossCause::Link => "link",
                LossCause::Congestion => "queue",
                LossCause::Aqm => "aqm",
            };
            log.push(observe::drop_event(
                now,
                &flow.name,
                &flow.sender,
                &p,
                cause,
                &direction,
            ));
        }
    }

    /// The run's output so far, as the output budget counts it: the
    /// sessions' message rows (set aside before the run), trace rows
    /// (`streaming`: handed to a file), typed events and capture bytes.
    fn output_bytes(&self, streaming: bool) -> u64 {
        let trace = self.trace.as_ref().map_or(0, |t| t.len() as u64) + self.streamed_rows;
        let events = self.events.as_ref().map_or(0, |e| e.len() as u64);
        self.message_output_bytes
            + trace * row_output_bytes(TraceRow::COLUMNS, !streaming)
            + events * row_output_bytes(EventRow::COLUMNS, true)
            + self.capture.as_ref().map_or(0, |c| c.bytes)
    }

    fn sample(&mut self, now: Time) {
        let Some(trace) = self.trace.as_mut() else {
            return;
        };
        for f in &self.flows {
            if f.done || now < f.start {
                continue;
            }
            trace.push(observe::trace_row(now, &f.name, &f.sender));
        }
    }

    fn finish(mut self, end: Time, wall_s: f64) -> RunResult {
        let capture = self.capture.take().map(|c| c.finish());
        let sessions: Vec<_> = self
            .sessions
            .iter()
            .map(|a| a.result(end, self.end_reason))
            .collect();
        let mut messages = MessageLog::default();
        for a in &mut self.sessions {
            for m in a.messages.drain(..) {
                messages.push(m);
            }
        }
        let flows = self
            .flows
            .iter()
            .map(|f| {
                // A session's directions complete with their session, and
                // end with it: an unfinished one's reason is theirs.
                let (completed_at, reason) = match f.role {
                    FlowRole::Bulk => (f.receiver.completed_at(), self.end_reason),
                    FlowRole::Requests(k) | FlowRole::Responses(k) => {
                        let s = &self.sessions[k as usize];
                        (
                            s.completed_at(),
                            s.abort_reason().unwrap_or(self.end_reason),
                        )
                    }
                };
                f.result(end, completed_at, reason)
            })
            .collect();
        let links = self.link_rows();
        RunResult {
            scenario_hash: self.hash,
            seed: self.seed,
            version: crate::VERSION,
            flows,
            links,
            sessions,
            messages,
            trace: self.trace,
            events: self.events,
            capture,
            events_processed: self.sched.events_processed() + self.qdisc_work,
            packets: self.packets,
            sim_time_s: end.as_secs_f64(),
            wall_s,
        }
    }

    /// One row per link direction, then one per site of each medium.
    fn link_rows(&self) -> Vec<LinkResult> {
        let dirs = self.links.iter().zip(&self.link_names);
        let sites = self
            .media
            .iter()
            .flat_map(|m| (0..m.sites()).map(move |k| site_row(m, k)));
        dirs.map(|(l, (name, dir))| dir_row(l, name, dir))
            .chain(sites)
            .collect()
    }
}

/// The row of link direction `l` (also the emulator's counters).
pub(crate) fn dir_row(l: &LinkDir, name: &str, dir: &str) -> LinkResult {
    let (qdisc, qs) = l.qdisc().unwrap_or(("none", &EMPTY_QDISC_STATS));
    let (limit, aqm) = qdisc_drops(qs);
    LinkResult {
        link: name.to_string(),
        direction: dir.to_string(),
        packets_carried: l.stats.packets_carried,
        bytes_carried: l.stats.bytes_carried,
        drops_queue: l.stats.drops_queue + limit,
        qdisc,
        qdisc_enqueued: qs.enqueued_packets,
        qdisc_drops_limit: limit,
        qdisc_drops_aqm: aqm,
        drops_link_error: l.stats.drops_link_error,
        drops_harq: l.stats.drops_harq,
        mac_frames_sent: 0,
        mac_retries: 0,
        mac_retry_drops: 0,
        mac_rx_errors: 0,
    }
}

/// The row of site `k` of medium `m`.
fn site_row(m: &AnyFamily, k: usize) -> LinkResult {
    let st = m.stats(k);
    LinkResult {
        link: m.name().to_string(),
        direction: m.site_name(k).to_string(),
        packets_carried: st.packets_carried,
        bytes_carried: st.bytes_carried,
        drops_queue: st.queue_drops,
        qdisc: "none",
        qdisc_enqueued: 0,
        qdisc_drops_limit: 0,
        qdisc_drops_aqm: 0,
        drops_link_error: st.link_drops,
        drops_harq: 0,
        mac_frames_sent: st.frames_sent,
        mac_retries: st.retries,
        mac_retry_drops: st.retry_drops,
        mac_rx_errors: st.rx_errors,
    }
}

/// The link directions of `plan` for a run with `seed`, with their (link,
/// direction) names. The simulation and the real-time driver
/// ([`crate::emu`]) both build their links here, so they draw from the same
/// random streams.
pub(crate) fn link_dirs(plan: &Plan, seed: u64) -> (Vec<LinkDir>, Vec<(String, String)>) {
    let mut links = Vec::with_capacity(plan.links.len() * 2);
    let mut names = Vec::with_capacity(plan.links.len() * 2);
    for (l, from, to) in plan.directions() {
        let (from_name, to_name) = (&plan.nodes[from.0 as usize], &plan.nodes[to.0 as usize]);
        let stream = |kind: &str| {
            let label = format!("{kind}/{}/{}->{}", l.name, from_name, to_name);
            RngStream::for_component(seed, &label)
        };
        let (loss, capacity) = if from == l.a {
            (&l.loss_ab, &l.capacity_ab)
        } else {
            (&l.loss_ba, &l.capacity_ba)
        };
        let model = LossModel::new(loss, stream("loss"));
        let mut dir = LinkDir::new(l.name.clone(), from, to, l.params.clone(), model);
        if let Some(cap) = capacity {
            dir = dir.with_capacity(cap, stream("capacity"));
        } else if let Some(q) = &l.qdisc {
            dir = dir.with_qdisc(q, stream("qdisc"));
            if let Some(b) = &l.bql {
                dir = dir.with_bql(b);
            }
        }
        links.push(dir);
        names.push((l.name.clone(), format!("{from_name}->{to_name}")));
    }
    (links, names)
}

static EMPTY_QDISC_STATS: QdiscStats = QdiscStats::EMPTY;

/// A queue disc's drops: (over its limit, by AQM).
fn qdisc_drops(stats: &QdiscStats) -> (u64, u64) {
    DropReason::ALL
        .iter()
        .map(|&r| (r, stats.dropped(r).0))
        .fold((0, 0), |(limit, aqm), (r, n)| {
            if r.is_aqm() {
                (limit, aqm + n)
            } else {
                (limit + n, aqm)
            }
        })
}

/// First ephemeral port of an ns-3 node (`Ipv4EndPointDemux::AllocateEphemeralPort`).
const FIRST_EPHEMERAL_PORT: u16 = 49153;
/// The server port of bulk transfers (`validation/ns3/v2g.cc`'s sink).
const BULK_PORT: u16 = 50000;
/// The SECC's TCP port of sessions (ISO 15118-2 leaves it to SDP; any
/// fixed value serves the hash).
const SESSION_PORT: u16 = 15118;

/// Each flow's transport 5-tuple toward its receiver: the nodes' addresses,
/// an ephemeral source port per opening node counted from 49153 in flow
/// order (as ns-3 allocates them to sockets opened in that order), and the
/// server's port. A session's response half is its request half reversed.
fn five_tuples(plan: &Plan) -> Vec<FiveTuple> {
    let mut next_port = vec![FIRST_EPHEMERAL_PORT; plan.nodes.len()];
    let mut tuples: Vec<FiveTuple> = Vec::with_capacity(plan.flows.len());
    for f in &plan.flows {
        let tuple = match f.role {
            FlowRole::Responses(_) => tuples
                .iter()
                .zip(&plan.flows)
                .find(|(_, g)| {
                    matches!(g.role, FlowRole::Requests(_)) && g.src == f.dst && g.dst == f.src
                })
                .map(|(t, _)| t.reversed()),
            _ => None,
        };
        let tuple = tuple.unwrap_or_else(|| {
            let port = &mut next_port[f.src.0 as usize];
            let src_port = *port;
            *port = port.wrapping_add(1).max(FIRST_EPHEMERAL_PORT);
            FiveTuple {
                src: plan.addresses[f.src.0 as usize],
                dst: plan.addresses[f.dst.0 as usize],
                protocol: PROTO_TCP,
                src_port,
                dst_port: if f.role == FlowRole::Bulk {
                    BULK_PORT
                } else {
                    SESSION_PORT
                },
            }
        });
        tuples.push(tuple);
    }
    tuples
}
