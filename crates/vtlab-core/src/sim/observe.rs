//! Typed events, observed at the boundary of the sans-IO endpoints.
//!
//! The endpoints never know whether anyone listens: after every input a
//! sender handles (a packet, a timer, the start), the simulation compares
//! the sender's observable state with what it saw after the previous input
//! and emits an event for each change: congestion-state changes (slow start
//! and avoidance are state `open`; recovery entry/exit; `loss` after a
//! timeout), window changes (cwnd or ssthresh), retransmission-timer
//! expiries, tail loss probes, spurious timeouts (Eifel detection, RFC 3522:
//! the first ACK of new data after a timeout echoes a timestamp older than
//! the timeout),
//! retransmitted segments, and drops with their cause and link. With events
//! off, none of this runs: the cost is one branch per sender input.
//!
//! Traces in `changes` mode are the window events seen as rows of sender
//! state, so they are exact rather than sampled.

use crate::engine::Time;
use crate::metrics::{EventLog, EventRow, Trace, TraceRow};

use crate::net::{Packet, PacketKind};
use crate::tcp::{CaState, Sender};

/// What the observer saw after a sender's previous input.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Seen {
    cwnd: u64,
    ssthresh: u64,
    state: CaState,
    rto_count: u64,
    tlp_probes: u64,
    snd_max: u64,
    /// Time of the last timeout, until the next ACK of new data decides
    /// whether it was spurious.
    rto_at: Option<Time>,
}

impl Seen {
    pub(crate) fn of(s: &Sender) -> Self {
        let w = s.window();
        Seen {
            cwnd: w.cwnd,
            ssthresh: w.ssthresh,
            state: s.ca_state(),
            rto_count: s.stats().rto_count,
            tlp_probes: s.stats().tlp_probes,
            snd_max: s.snd_max(),
            rto_at: None,
        }
    }
}

pub(crate) fn ssthresh_value(ssthresh: u64) -> f64 {
    if ssthresh == u64::MAX {
        f64::INFINITY
    } else {
        ssthresh as f64
    }
}

/// A row of sender state at `now` (trace rows, sampled or on change).
pub(crate) fn trace_row(now: Time, flow: &str, s: &Sender) -> TraceRow {
    let w = s.window();
    TraceRow {
        time_s: now.as_secs_f64(),
        flow: flow.to_owned(),
        cwnd_bytes: w.cwnd,
        ssthresh_bytes: ssthresh_value(w.ssthresh),
        snd_una: s.snd_una(),
        snd_max: s.snd_max(),
        srtt_s: s.srtt().map_or(f64::NAN, |d| d.as_secs_f64()),
        flight_size_bytes: s.flight_size(),
        pipe_bytes: s.bytes_in_flight(),
        ca_state: s.ca_state().as_str(),
    }
}

fn event(
    now: Time,
    flow: &str,
    s: &Sender,
    kind: &'static str,
    seq: u64,
    detail: String,
) -> EventRow {
    let w = s.window();
    EventRow {
        time_s: now.as_secs_f64(),
        time_ns: now.0,
        flow: flow.to_owned(),
        event: kind,
        ca_state: s.ca_state().as_str(),
        cwnd_bytes: w.cwnd,
        ssthresh_bytes: ssthresh_value(w.ssthresh),
        seq,
        detail,
    }
}

/// An ACK is about to reach the sender: decide a pending spurious-timeout
/// question (Eifel: only with timestamps, on the first ACK of new data).
pub(crate) fn before_ack(
    seen: &mut Seen,
    now: Time,
    flow: &str,
    s: &Sender,
    p: &Packet,
    timestamps: bool,
    out: &mut EventLog,
) {
    let Some(rto_at) = seen.rto_at else { return };
    if p.kind != PacketKind::Ack || p.ack <= s.snd_una() {
        return;
    }
    seen.rto_at = None;
    if timestamps && p.ts_ecr < rto_at {
        let detail = format!("timeout at {:.6} s", rto_at.as_secs_f64());
        out.push(event(now, flow, s, "spurious_rto", s.snd_una(), detail));
    }
}

/// After a sender input: emit the events its changes imply (when `events`
/// is given) and the trace row of a window or state change (when `trace` is
/// given). `sent` holds the packets the input emitted.
pub(crate) fn after_input(
    seen: &mut Seen,
    now: Time,
    flow: &str,
    s: &Sender,
    sent: &[Packet],
    events: Option<&mut EventLog>,
    trace: Option<&mut Trace>,
) {
    let prev = *seen;
    let cur = Seen::of(s);
    let timed_out = cur.rto_count > prev.rto_count;
    let state_changed = cur.state != prev.state;
    let window_changed = cur.cwnd != prev.cwnd || cur.ssthresh != prev.ssthresh;
    if let Some(log) = events {
        if timed_out {
            log.push(event(now, flow, s, "rto", s.snd_una(), String::new()));
        }
        if cur.tlp_probes > prev.tlp_probes {
            let seq = sent
                .iter()
                .find(|p| p.kind == PacketKind::Data && p.frag_index == 0)
                .map_or(s.snd_una(), |p| p.seq);
            log.push(event(now, flow, s, "tlp", seq, String::new()));
        }
        if state_changed {
            let from = prev.state.as_str().to_owned();
            log.push(event(now, flow, s, "state", s.snd_una(), from));
        }
        for p in sent {
            if p.kind == PacketKind::Data && p.frag_index == 0 && p.seq < prev.snd_max {
                log.push(event(now, flow, s, "retransmit", p.seq, String::new()));
            }
        }
        if window_changed {
            log.push(event(now, flow, s, "window", s.snd_una(), String::new()));
        }
    }
    if let Some(rows) = trace {
        if window_changed || state_changed {
            rows.push(trace_row(now, flow, s));
        }
    }
    *seen = Seen {
        rto_at: if timed_out { Some(now) } else { prev.rto_at },
        ..cur
    };
}

/// A packet of `flow` was dropped on link direction `direction`.
pub(crate) fn drop_event(
    now: Time,
    flow: &str,
    s: &Sender,
    p: &Packet,
    cause: &str,
    direction: &str,
) -> EventRow {
    let (kind, seq) = match p.kind {
        PacketKind::Data => ("data", p.seq),
        PacketKind::Ack => ("ack", p.ack),
        PacketKind::Syn => ("syn", 0),
        PacketKind::SynAck => ("syn-ack", 0),
    };
    event(
        now,
        flow,
        s,
        "drop",
        seq,
        format!("{cause} {kind} on {direction}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::NodeId;
    use crate::tcp::cc::{self, Params, Profile};
    use crate::tcp::TcpConfig;

    fn sender() -> Sender {
        let cfg = TcpConfig::defaults(Profile::Ns3);
        let cc = cc::lookup("newreno")
            .unwrap()
            .build(&Params::new(), Profile::Ns3);
        Sender::new(cfg, cc, 0, NodeId(1), 10_000)
    }

    fn ack(ack: u64, ts_ecr_ms: u64) -> Packet {
        Packet {
            flow: 0,
            dst: NodeId(0),
            kind: PacketKind::Ack,
            seq: 0,
            len: 0,
            ack,
            rwnd: 65_535,
            ts_val: Time(0),
            ts_ecr: Time(ts_ecr_ms * 1_000_000),
            ip_bytes: 52,
            sack: Default::default(),
            sack_len: 0,
            frag_index: 0,
            frag_count: 1,
            piggyback: false,
            push: false,
        }
    }

    #[test]
    fn eifel_detects_a_spurious_timeout_from_the_echoed_timestamp() {
        // RFC 3522: after a timeout at t = 5 s, the first ACK of new data echoes
        // the timestamp of the segment it acknowledges. An echo from before 5 s
        // acknowledges the original transmission: the timeout was spurious.
        let s = sender();
        let now = Time(5_200_000_000);
        for (echo_ms, timestamps, spurious) in [
            (4_900, true, true),
            (5_100, true, false),
            (4_900, false, false),
        ] {
            let mut seen = Seen::of(&s);
            seen.rto_at = Some(Time(5_000_000_000));
            let mut log = EventLog::default();
            before_ack(
                &mut seen,
                now,
                "f",
                &s,
                &ack(1460, echo_ms),
                timestamps,
                &mut log,
            );
            assert_eq!(
                log.event == vec!["spurious_rto"],
                spurious,
                "{echo_ms} {timestamps}"
            );
            assert_eq!(seen.rto_at, None, "the question is decided once");
        }
        // A duplicate ACK (no new data) leaves the question open.
        let mut seen = Seen::of(&s);
        seen.rto_at = Some(Time(5_000_000_000));
        let mut log = EventLog::default();
        before_ack(&mut seen, now, "f", &s, &ack(0, 4_900), true, &mut log);
        assert!(log.is_empty() && seen.rto_at.is_some());
    }
}
