//! Typed events: what they report on a scenario whose first losses are known
//! by hand, that change traces are exact, and that observing changes nothing.

use serde_json::json;
use vtlab_core::metrics::EventLog;
use vtlab_core::spec::resolve_value;
use vtlab_core::{run, RunOptions, Scenario};

/// a —(100 Mbit/s, 1 ms)— r —(1 Mbit/s, 1 ms, 2 waiting packets)— b; one
/// 100 kB transfer a → b, no timestamps (1500 B packets, no fragmentation),
/// no queue disc (the device queue alone).
fn bottleneck() -> Scenario {
    resolve_value(json!({
        "preset": "custom",
        "nodes": ["a", "r", "b"],
        "links": [
            {"name": "fast", "a": "a", "b": "r", "rate": "100Mbps", "delay": "1ms"},
            {"name": "slow", "a": "r", "b": "b", "rate": "1Mbps", "delay": "1ms", "queue_packets": 2},
        ],
        "flows": [{"src": "a", "dst": "b", "bytes": "100kB"}],
        "tcp": {"timestamps": false},
        "qdisc": "none",
    }))
    .unwrap()
}

fn events_of(s: &Scenario) -> EventLog {
    let opts = RunOptions {
        events: true,
        ..Default::default()
    };
    run(s, 1, opts).unwrap().events.unwrap()
}

#[test]
fn the_initial_window_overflows_the_bottleneck_queue_as_computed_by_hand() {
    // IW = 10 segments of 1460 B leave back to back after the handshake. On the
    // fast link they are 1502 B × 8 / 100 Mbit/s = 0.12 ms apart; the slow link
    // needs 12 ms per packet, so the first is in transmission, the next two wait
    // and the fourth to tenth (seq 3·1460 … 9·1460) find the queue full.
    let e = events_of(&bottleneck());
    let drops: Vec<(u64, &str)> = e
        .event
        .iter()
        .zip(&e.seq)
        .zip(&e.detail)
        .filter(|((k, _), _)| **k == "drop")
        .map(|((_, seq), d)| (*seq, d.as_str()))
        .take(7)
        .collect();
    let expected: Vec<u64> = (3..10).map(|k| k * 1460).collect();
    assert_eq!(drops.iter().map(|d| d.0).collect::<Vec<_>>(), expected);
    assert!(
        drops.iter().all(|d| d.1 == "queue data on slow r->b"),
        "{drops:?}"
    );
    // The first retransmission repairs the first hole (seq 4380), and the sender
    // went through recovery (SACK recovery, the ns3 profile's default).
    let first_retx = e.event.iter().position(|k| *k == "retransmit").unwrap();
    assert_eq!(e.seq[first_retx], 4380);
    assert!(e
        .event
        .iter()
        .zip(&e.ca_state)
        .any(|(k, s)| *k == "state" && *s == "recovery"));
    // Time order.
    assert!(e.time_ns.windows(2).all(|w| w[0] <= w[1]));
}

#[test]
fn change_traces_are_exact_and_match_the_window_events() {
    let s = bottleneck();
    let opts = RunOptions {
        trace: true,
        trace_changes: true,
        events: true,
    };
    let r = run(&s, 1, opts).unwrap();
    let (t, e) = (r.trace.unwrap(), r.events.unwrap());
    // One row at the start, then one per input that changed window or state.
    let mut change_times: Vec<f64> = Vec::new();
    for (i, k) in e.event.iter().enumerate() {
        if (*k == "window" || *k == "state") && change_times.last() != Some(&e.time_s[i]) {
            change_times.push(e.time_s[i]);
        }
    }
    assert_eq!(t.time_s.len(), change_times.len() + 1);
    assert_eq!(&t.time_s[1..], &change_times[..]);
    // Every row's window is the one the last event at that time reports.
    let last_cwnd_at = |time: f64| {
        let i = e.time_s.iter().rposition(|x| *x == time).unwrap();
        e.cwnd_bytes[i]
    };
    for (time, cwnd) in t.time_s.iter().zip(&t.cwnd_bytes).skip(1) {
        assert_eq!(*cwnd, last_cwnd_at(*time));
    }
}

#[test]
fn observing_changes_no_result() {
    let s = resolve_value(json!({"preset": "v2g", "bytes": "2MB", "loss": {"mean_loss": "5%"}}))
        .unwrap();
    let plain = run(&s, 4, RunOptions::default()).unwrap();
    let all = RunOptions {
        trace: true,
        trace_changes: true,
        events: true,
    };
    let observed = run(&s, 4, all).unwrap();
    assert_eq!(plain.flows, observed.flows);
    assert_eq!(plain.links, observed.links);
    assert_eq!(plain.events_processed, observed.events_processed);
    let e = observed.events.unwrap();
    // Every RTO the flow row counts is an event; every retransmission too.
    let count = |k: &str| e.event.iter().filter(|x| **x == k).count() as u64;
    assert_eq!(count("rto"), plain.flows[0].rto_count);
    assert_eq!(count("retransmit"), plain.flows[0].retransmissions);
    let drops = plain.flows[0].drops_link_error + plain.flows[0].drops_queue;
    assert_eq!(count("drop"), drops);
}
