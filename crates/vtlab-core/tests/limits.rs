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
    // timeout at 93 + 96 = 189 s. Linux's seven with its 1 s first timeout
    // (TCP_TIMEOUT_INIT), doubled (below TCP_RTO_MAX = 120 s): SYNs at 0, 1,
    // 3, 7, 15, 31 and 63 s, the last timeout at 63 + 64 = 127 s.
    for (profile, end_s) in [("ns3", 189.0), ("linux", 127.0)] {
        let r = run_json(json!({"preset": "v2g", "bytes": "10kB",
            "loss": {"model": "burst", "burst_start": 1}, "tcp": {"profile": profile}}));
        assert_eq!(r.flows[0].abort_reason, "syn_retries");
        assert_eq!(r.flows[0].goodput_bps, 0.0);
        // Seconds from nanoseconds: equal up to the last bit of the f64.
        assert!(
            (r.sim_time_s - end_s).abs() < 1e-9,
            "{profile}: {}",
            r.sim_time_s
        );
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

/// A v2g session of one custom step repeated `n` times, with an output budget.
fn session_of(n: u32, budget: &str) -> serde_json::Value {
    json!({"preset": "v2g", "max_output_bytes": budget, "session": {"profile": "custom",
        "steps": [{"name": "X", "request": 40, "response": 60, "repeats": n}]}})
}

#[test]
fn the_sessions_message_rows_must_fit_the_output_budget_before_the_run() {
    // A message row kept in memory counts 32 B for each of its 3 identity and
    // 8 own values: 352 B. 1 MiB = 1 048 576 B holds 2978 rows (1 048 256 B),
    // not 2979 (1 048 608 B).
    let plan = |v| resolve_value(v).and_then(|s| spec::plan(&s));
    assert!(plan(session_of(2978, "1MiB")).is_ok());
    let e = plan(session_of(2979, "1MiB")).err().unwrap();
    assert_eq!(e.path, "max_output_bytes");
    assert!(
        e.message.starts_with("2979 exchanges in 1 session(s)") && e.message.contains("1048608"),
        "{e}"
    );
    // The budget itself: 1 MiB to 1 TiB.
    let e = plan(session_of(1, "1000kB")).err().unwrap();
    assert_eq!(
        e.to_string(),
        "max_output_bytes: 1000000 is outside [1048576, 1099511627776] bytes"
    );
}

#[test]
fn traces_end_the_run_at_the_output_budget() {
    use vtlab_core::metrics::Trace;
    // One flow sampled every 10 ms from 0 (one row per sample). Kept in memory a
    // trace row counts 32 B for each of 3 + 10 values, 416 B: 1 MiB holds 2520
    // rows (1 048 320 B); the sample that adds row 2521, at 25.2 s, ends the run.
    let s = resolve_value(json!({"preset": "v2g", "max_output_bytes": "1MiB"})).unwrap();
    let plan = spec::plan(&s).unwrap();
    let traced = RunOptions {
        trace: true,
        ..Default::default()
    };
    let r = vtlab_core::run_plan(&plan, 1, traced);
    assert_eq!(r.trace.as_ref().unwrap().len(), 2521);
    assert_eq!(r.flows[0].abort_reason, "output_budget");
    assert_eq!((r.sim_time_s * 1e3).round(), 25_200.0);
    // Streamed to a file a row counts 8 B a value, 104 B: 1 MiB holds 10 082
    // rows (1 048 528 B), the 10 083rd (at 100.82 s) ends the run; the 100 MB
    // transfer (about 85 s at 10 Mbit/s) completes first.
    let mut rows = 0;
    let mut sink = |t: Trace| {
        rows += t.len();
        true
    };
    let hooks = Hooks {
        trace_sink: Some(&mut sink),
        ..Hooks::default()
    };
    let streamed = run_plan_with(&plan, 1, traced, hooks).unwrap();
    assert_eq!(streamed.flows[0].abort_reason, "");
    assert!(rows < 10_083, "{rows}");
    let s = resolve_value(json!({"preset": "v2g", "max_output_bytes": "1MiB", "bytes": "200MB"}))
        .unwrap();
    let mut rows = 0;
    let mut sink = |t: Trace| {
        rows += t.len();
        true
    };
    let hooks = Hooks {
        trace_sink: Some(&mut sink),
        ..Hooks::default()
    };
    let r = run_plan_with(&spec::plan(&s).unwrap(), 1, traced, hooks).unwrap();
    assert_eq!((rows, r.flows[0].abort_reason), (10_083, "output_budget"));
    assert_eq!((r.sim_time_s * 1e3).round(), 100_820.0);
}

#[test]
fn typed_events_end_the_run_at_the_output_budget() {
    // An event row counts 32 B for each of 3 + 9 values, 384 B: 1 MiB holds 2730
    // rows (1 048 320 B). Losses of 5 % over 100 MB make far more; the run ends
    // after the scheduler event whose rows pass the budget (a few rows at most).
    let s = resolve_value(json!({"preset": "v2g", "max_output_bytes": "1MiB",
        "loss": {"mean_loss": "5%"}}))
    .unwrap();
    let opts = RunOptions {
        events: true,
        ..Default::default()
    };
    let r = run(&s, 1, opts).unwrap();
    let rows = r.events.unwrap().len();
    assert_eq!(r.flows[0].abort_reason, "output_budget");
    assert!((2731..2731 + 16).contains(&rows), "{rows}");
}
