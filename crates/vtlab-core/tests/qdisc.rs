//! A root queue disc in front of a link's device queue, with ns-3's flow
//! control: cases computed by hand, and one measured with ns-3.44 itself.

use serde_json::{json, Value};
use vtlab_core::metrics::RunResult;
use vtlab_core::spec::resolve_value;
use vtlab_core::{run, RunOptions};

fn run_json(spec: Value, seed: u64, events: bool) -> RunResult {
    let opts = RunOptions {
        events,
        ..Default::default()
    };
    run(&resolve_value(spec).unwrap(), seed, opts).unwrap()
}

/// a —(100 Mbit/s, 1 ms)— r —(1 Mbit/s, 1 ms, device queue of 2)— b; one
/// 100 kB transfer a → b, no timestamps (1500 B packets, no fragmentation).
fn bottleneck(qdisc: Value) -> Value {
    json!({
        "preset": "custom",
        "nodes": ["a", "r", "b"],
        "links": [
            {"name": "fast", "a": "a", "b": "r", "rate": "100Mbps", "delay": "1ms"},
            {"name": "slow", "a": "r", "b": "b", "rate": "1Mbps", "delay": "1ms", "queue_packets": 2},
        ],
        "flows": [{"src": "a", "dst": "b", "bytes": "100kB"}],
        "tcp": {"timestamps": false},
        "qdisc": qdisc,
    })
}

fn drops(r: &RunResult, n: usize) -> Vec<(u64, String)> {
    let e = r.events.as_ref().unwrap();
    e.event
        .iter()
        .zip(&e.seq)
        .zip(&e.detail)
        .filter(|((k, _), _)| **k == "drop")
        .map(|((_, seq), d)| (*seq, d.clone()))
        .take(n)
        .collect()
}

#[test]
fn the_device_queue_stops_the_qdisc_and_the_qdisc_limit_drops_the_rest() {
    // IW = 10 segments reach r 0.12 ms apart; the slow link needs 12 ms per
    // packet. Segment 0 is dequeued at once and transmitted; 1 and 2 fill the
    // 2-packet device queue, which stops the queue disc; 3, 4 and 5 wait in
    // pfifo_fast (limit 3); 6 to 9 find GetCurrentSize() >= MaxSize and are
    // dropped by the queue disc, never by the device.
    let r = run_json(
        bottleneck(json!({"kind": "pfifo_fast", "limit": 3})),
        1,
        true,
    );
    let d = drops(&r, 4);
    let expected: Vec<u64> = (6..10).map(|k| k * 1460).collect();
    assert_eq!(d.iter().map(|x| x.0).collect::<Vec<_>>(), expected);
    assert!(d.iter().all(|x| x.1 == "queue data on slow r->b"), "{d:?}");
    let slow = r.links.iter().find(|l| l.direction == "r->b").unwrap();
    assert_eq!(slow.qdisc, "pfifo_fast");
    // Every drop on the slow link is the queue disc's: the device never overflows.
    assert_eq!(slow.qdisc_drops_limit, slow.drops_queue);
    assert!(slow.drops_queue >= 4);
    assert_eq!(slow.qdisc_drops_aqm, 0);
    assert!(r.flows[0].completed);
}

#[test]
fn byte_queue_limits_keep_the_device_queue_short() {
    // The same burst with a 100-packet device queue, which alone would take
    // it all, and byte queue limits (ns-3's DynamicQueueLimits, limit 0 at the
    // start). Segment 0: queued 1502 B, Available = 0 − 1502 < 0: stopped; its
    // dequeue completes 1502 B with nothing in progress (starved): limit
    // 1502, Available 1502, woken. Segment 1 queued: Available 0, not
    // stopped; segment 2 queued: −1502, stopped. So 1 and 2 wait in the
    // device, 3 to 5 fill pfifo_fast (limit 3), and 6 to 9 are dropped by the
    // queue disc, as with a 2-packet device queue.
    let mut spec = bottleneck(json!({"kind": "pfifo_fast", "limit": 3}));
    spec["links"][1]["queue_packets"] = json!(100);
    spec["links"][1]["bql"] = json!(true); // the slow link only
    let r = run_json(spec.clone(), 1, true);
    let d = drops(&r, 4);
    let expected: Vec<u64> = (6..10).map(|k| k * 1460).collect();
    assert_eq!(d.iter().map(|x| x.0).collect::<Vec<_>>(), expected);
    assert!(r.flows[0].completed);
    // Without the limits the device queue takes the whole window: no drop.
    spec["links"][1]["bql"] = json!(false);
    let r = run_json(spec, 1, true);
    assert_eq!(r.flows[0].drops_queue + r.flows[0].drops_aqm, 0);
    // Limits without a queue disc are refused.
    let e = resolve_value(json!({"preset": "v2g", "qdisc": "none", "bql": true})).unwrap_err();
    assert_eq!(
        e.to_string(),
        "bql: byte queue limits need a queue disc (qdisc is none)"
    );
}

#[test]
fn without_a_qdisc_the_same_burst_overflows_the_device_queue() {
    // The same burst into the 2-packet device queue alone: 3 to 9 are dropped.
    let r = run_json(bottleneck(json!("none")), 1, true);
    let d = drops(&r, 7);
    let expected: Vec<u64> = (3..10).map(|k| k * 1460).collect();
    assert_eq!(d.iter().map(|x| x.0).collect::<Vec<_>>(), expected);
    let slow = r.links.iter().find(|l| l.direction == "r->b").unwrap();
    assert_eq!((slow.qdisc, slow.qdisc_enqueued), ("none", 0));
}

#[test]
fn codel_drops_are_aqm_drops() {
    // A 1000-packet CoDel in bytes (1.5 MB) never fills; a 100 kB flight over
    // a 1 Mbit/s link stands ~0.8 s in the queue disc (far above the 5 ms
    // target for more than the 100 ms interval), so CoDel drops, and those
    // drops are AQM drops, not queue drops.
    let mut spec = bottleneck(json!("codel"));
    spec["tcp"]["recv_buffer"] = json!("100kB");
    spec["flows"][0]["bytes"] = json!("1MB");
    let r = run_json(spec, 1, true);
    let f = &r.flows[0];
    assert!(f.completed);
    assert!(f.drops_aqm > 0, "{f:?}");
    assert_eq!(f.drops_queue, 0);
    let slow = r.links.iter().find(|l| l.direction == "r->b").unwrap();
    assert_eq!(slow.qdisc_drops_aqm, f.drops_aqm);
    let d = drops(&r, 1);
    assert_eq!(d[0].1, "aqm data on slow r->b");
    // The loss oracle sees them as congestion.
    assert_eq!(f.true_link_losses, 0);
}

#[test]
fn stock_fq_codel_on_the_v2g_cable_matches_ns3() {
    // ns-3.44, validation/ns3/v2g.cc --qdisc=default (the FqCoDel root queue
    // disc Ipv4AddressHelper installs, flow control with the 100-packet device
    // queue), TcpNewReno, no loss, 100 MB, --run=1..6 (all identical):
    // goodput 9504094.184 bit/s, 23 retransmissions, 23 fast recoveries, no
    // RTO, 23 packets dropped by the queue disc ("Target exceeded drop").
    let r = run_json(json!({"preset": "v2g", "bytes": "100MB"}), 1, false);
    let f = &r.flows[0];
    assert_eq!(f.profile, "ns3");
    assert_eq!(
        (f.retransmissions, f.fast_recoveries, f.rto_count),
        (23, 23, 0)
    );
    assert_eq!((f.drops_aqm, f.drops_queue), (23, 0));
    // Within 0.001 % (vtlab's handshake is 16 B shorter: no window-scale and
    // SACK-permitted options, docs/validation.md).
    let rel = (f.goodput_bps - 9_504_094.184).abs() / 9_504_094.184;
    assert!(rel < 1e-5, "{} ({rel})", f.goodput_bps);
    let plc = r
        .links
        .iter()
        .find(|l| l.direction == "secc->evcc")
        .unwrap();
    assert_eq!((plc.qdisc, plc.qdisc_drops_aqm), ("fq_codel", 23));
}

#[test]
fn the_linux_profile_installs_no_qdisc_and_a_scenario_overrides_either() {
    let r = run_json(
        json!({"preset": "v2g", "bytes": "1MB", "tcp": {"profile": "linux"}}),
        1,
        false,
    );
    assert!(r.links.iter().all(|l| l.qdisc == "none"));
    let r = run_json(
        json!({"preset": "v2g", "bytes": "1MB", "tcp": {"profile": "linux"}, "qdisc": "pie"}),
        1,
        false,
    );
    assert!(r.links.iter().all(|l| l.qdisc == "pie"));
    let r = run_json(
        json!({"preset": "v2g", "bytes": "1MB", "qdisc": "none"}),
        1,
        false,
    );
    assert!(r.links.iter().all(|l| l.qdisc == "none"));
}

#[test]
fn bad_qdiscs_are_rejected_with_the_field() {
    let e = resolve_value(json!({"preset": "v2g", "qdisc": "sfq"})).unwrap_err();
    assert_eq!(e.path, "qdisc");
    assert!(e.message.contains("unknown queue disc 'sfq'"), "{e}");
    let e = resolve_value(json!({"preset": "station", "qdisc": {"kind": "fq_codel", "flows": 0}}))
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "qdisc.flows: must be between 1 and 65536 (got 0)"
    );
    let e = resolve_value(json!({"preset": "lte-cabin", "qdisc": "codel"})).unwrap_err();
    assert!(e.message.contains("unknown field `qdisc`"), "{e}");
}

#[test]
fn pie_updates_count_against_the_event_budget() {
    // With a = b = 0 PIE's drop probability stays 0: it is a 25-packet FIFO
    // whatever its update period, so the packets (and the scheduler's events)
    // of both runs are the same and only the number of updates differs: one
    // per millisecond while the queue is busy, against none at 1000 s after
    // the first one at 0.
    let pie = |t_update: &str| json!({"kind": "pie", "a": 0, "b": 0, "t_update": t_update});
    let often = run_json(bottleneck(pie("1ms")), 1, false);
    let rarely = run_json(bottleneck(pie("1000s")), 1, false);
    assert_eq!(often.flows[0].completion_s, rarely.flows[0].completion_s);
    let counters = |r: &RunResult| -> Vec<(u64, u64, u64, u64)> {
        r.links
            .iter()
            .map(|l| {
                (
                    l.drops_queue,
                    l.qdisc_enqueued,
                    l.qdisc_drops_limit,
                    l.qdisc_drops_aqm,
                )
            })
            .collect()
    };
    assert_eq!(counters(&often), counters(&rarely));
    assert!(
        counters(&often).iter().any(|c| c.2 > 0),
        "the queue overflows"
    );
    // 100 kB through 1 Mbit/s keeps the queue busy about 0.8 s: hundreds of
    // updates that change the queue delay, so none can be skipped.
    let updates = often.events_processed - rarely.events_processed;
    assert!((500..=1200).contains(&updates), "{updates}");
    // The budget counts them: just enough completes, one fewer does not.
    let budget = |n: u64| {
        let mut spec = bottleneck(pie("1ms"));
        spec["max_events"] = json!(n);
        run_json(spec, 1, false).flows[0].abort_reason
    };
    assert_eq!(budget(often.events_processed), "");
    assert_eq!(budget(often.events_processed - 1), "event_budget");
    assert_eq!(budget(rarely.events_processed), "event_budget");
}
