//! Every run is bounded: a default horizon, an event budget, and the reason an
//! incomplete flow ended in its row.

use serde_json::json;
use vtlab_core::spec::{resolve_value, DEFAULT_HORIZON_NS};
use vtlab_core::{run, run_plan_with, spec, Hooks, RunOptions};

fn run_json(v: serde_json::Value) -> vtlab_core::RunResult {
    run(&resolve_value(v).unwrap(), 1, RunOptions::default()).unwrap()
}

#[test]
fn a_run_that_cannot_finish_ends_at_the_default_horizon() {
    // 1 bit/s: one 1514 B frame takes 12 112 s, so 1 MB (685 segments) would
    // need about 8·10⁶ s; the run stops one day after the start instead. (The
    // retry limits are lifted: with them a handshake at 1 bit/s would
    // time out first.)
    let r = run_json(json!({"preset": "v2g", "bytes": "1MB", "plc_rate": "1bps",
        "tcp": {"syn_retries": 30, "data_retries": 100, "syn_timeout": "60min", "rto_min": "60min",
                "rto_initial": "60min", "rto_max": "60min"}}));
    let f = &r.flows[0];
    assert!(!f.completed);
    assert_eq!(f.abort_reason, "horizon");
    assert_eq!(r.sim_time_s, DEFAULT_HORIZON_NS as f64 * 1e-9);
    assert!(f.completion_s.is_nan());
}

#[test]
fn every_packet_lost_fails_the_connection_attempt() {
    // Every SYN lost: ns-3's six SYNs (0, 3, 9, 21, 45, 93 s) and the last
    // timeout at 93 + 96 = 189 s. Linux's seven with its own (here the same
    // 3 s) timeout, doubled up to TCP_RTO_MAX = 120 s: waits of 3, 6, 12, 24,
    // 48, 96 and min(192, 120) s end at 309 s.
    for (profile, end_s) in [("ns3", 189.0), ("linux", 309.0)] {
        let r = run_json(json!({"preset": "v2g", "bytes": "10kB",
            "loss": {"model": "burst", "burst_start": 1}, "tcp": {"profile": profile}}));
        assert_eq!(r.flows[0].abort_reason, "syn_retries");
        assert_eq!(r.flows[0].goodput_bps, 0.0);
        assert_eq!(r.sim_time_s, end_s, "{profile}");
    }
}

#[test]
fn the_stop_time_and_the_event_budget_are_reported() {
    let r = run_json(json!({"preset": "v2g", "bytes": "100MB", "stop": "1s"}));
    assert_eq!(r.flows[0].abort_reason, "stop_time");
    assert_eq!(r.sim_time_s, 1.0);
    // 100 events cannot carry 100 MB: the budget ends the run, counted exactly.
    let r = run_json(json!({"preset": "v2g", "bytes": "100MB", "max_events": 100}));
    assert_eq!(r.flows[0].abort_reason, "event_budget");
    assert_eq!(
        r.events_processed, 101,
        "the event that overran the budget is counted"
    );
    let done = run_json(json!({"preset": "v2g", "bytes": "100kB"}));
    assert_eq!(
        (done.flows[0].completed, done.flows[0].abort_reason),
        (true, "")
    );
}

#[test]
fn an_interruption_stops_the_run_at_the_next_check() {
    let s = resolve_value(json!({"preset": "v2g", "bytes": "100MB"})).unwrap();
    let plan = spec::plan(&s).unwrap();
    let mut asked = 0;
    let mut stop_on_second = || {
        asked += 1;
        asked == 2
    };
    let hooks = Hooks {
        interrupted: Some(&mut stop_on_second),
        ..Hooks::default()
    };
    let r = run_plan_with(&plan, 1, RunOptions::default(), hooks);
    assert!(r.is_none());
    // Checks happen every CHECK_EVERY events: the first at event 65 536, the
    // second (which stops the run) at 131 072.
    assert_eq!(asked, 2);
}

#[test]
fn limits_are_checked() {
    let e = resolve_value(json!({"preset": "v2g", "max_events": 0}))
        .map(|s| spec::plan(&s).err())
        .unwrap()
        .unwrap();
    assert_eq!(e.path, "max_events");
    let e = resolve_value(json!({"preset": "v2g", "stop": "31536000s"}))
        .map(|s| spec::plan(&s).err())
        .unwrap();
    assert!(e.is_some_and(|e| e.path == "stop"));
}

#[test]
fn a_trace_sink_receives_the_whole_trace_in_bounded_batches() {
    use vtlab_core::metrics::Trace;
    use vtlab_core::sim::TRACE_BATCH;
    // 21 vehicles sampled every 1 ms for several seconds: well over one batch.
    let s = resolve_value(json!({"preset": "station", "bytes": "6MB",
        "trace_interval": "1ms"}))
    .unwrap();
    let plan = spec::plan(&s).unwrap();
    let traced = RunOptions {
        trace: true,
        ..Default::default()
    };
    let whole = vtlab_core::run_plan(&plan, 2, traced).trace.unwrap();
    assert!(whole.len() > 2 * TRACE_BATCH, "{}", whole.len());
    let mut batches: Vec<Trace> = Vec::new();
    let mut sink = |t: Trace| {
        batches.push(t);
        true
    };
    let hooks = Hooks {
        trace_sink: Some(&mut sink),
        ..Hooks::default()
    };
    let r = run_plan_with(&plan, 2, traced, hooks).unwrap();
    assert!(r.trace.is_none());
    assert!(batches.iter().all(|b| b.len() <= TRACE_BATCH + 21));
    let mut joined = Trace::default();
    for b in batches {
        joined.time_s.extend(b.time_s);
        joined.cwnd_bytes.extend(b.cwnd_bytes);
    }
    assert_eq!(joined.time_s, whole.time_s);
    assert_eq!(joined.cwnd_bytes, whole.cwnd_bytes);
}
