//! Issue 29's cases of scenario errors, each with the message it gives now
//! (the one it gave before in the comment): the field as the user wrote it,
//! numbers in a readable form, missing fields by path, and contradictions
//! refused naming both sides.

use serde_json::{json, Value};
use vtlab_core::spec::{plan, resolve_value, Scenario};

/// The error of resolving then planning `spec`, as the CLI prints it after
/// `error: `.
fn err(spec: Value) -> String {
    match resolve_value(spec).and_then(|s| plan(&s).map(drop)) {
        Ok(()) => panic!("accepted"),
        Err(e) => e.to_string(),
    }
}

fn ok(spec: Value) -> Scenario {
    let s = resolve_value(spec).unwrap();
    plan(&s).unwrap();
    s
}

fn custom(extra: Value) -> Value {
    let mut spec = json!({
        "preset": "custom",
        "nodes": ["a", "b"],
        "links": [{"a": "a", "b": "b", "rate": "1Mbps", "delay": "1ms"}],
        "flows": [{"src": "a", "dst": "b", "bytes": 1000}],
    });
    for (k, v) in extra.as_object().unwrap() {
        spec[k] = v.clone();
    }
    spec
}

// -- the field as the user wrote it -----------------------------------------------------

#[test]
fn preset_rates_and_delays_name_the_preset_field() {
    // Before: "links[1].rate_bps: 100000000000000 is outside [...]".
    assert_eq!(
        err(json!({"preset": "v2g", "plc_rate": 1e14})),
        "plc_rate: 100000000000000 is outside [1, 10000000000000] bit/s"
    );
    // Before: "links[0].delay_ns: 100000000000000 is outside [0, 86400000000000] ns".
    assert_eq!(
        err(json!({"preset": "station", "wan_delay": 1e5})),
        "wan_delay: 100000 s is outside [0, 86400 s] (at most one day)"
    );
    // Before: "links[0].framing_bytes: 70000 is outside [0, 65535] bytes".
    assert_eq!(
        err(json!({"preset": "wired-wireless", "framing_bytes": 70000})),
        "framing_bytes: 70000 is outside [0, 65535] bytes"
    );
    // Before: "links[0].rate_bps: ..." and "links[0].delay_ns: ...".
    let mut spec = custom(json!({}));
    spec["links"][0]["rate"] = json!(1e14);
    assert!(err(spec).starts_with("links[0].rate: 100000000000000 is outside"));
    let mut spec = custom(json!({}));
    spec["links"][0]["delay"] = json!(1e5);
    assert!(err(spec).starts_with("links[0].delay: 100000 s is outside"));
}

#[test]
fn staggered_starts_name_stagger_and_cannot_overflow() {
    // 20 × 10⁴ s = 2·10⁵ s, beyond a day. Before: "flows[20].start_ns: ...".
    assert_eq!(
        err(json!({"preset": "station", "stagger": 1e4})),
        "stagger: ev21's transfer start (20 × stagger) is 200000 s, after the latest start \
         accepted (86400 s, one day)"
    );
    // 999 × 10¹⁸ ns overflows 64 bits (before: a panic in a debug build, a
    // wrapped start in a release build).
    assert_eq!(
        err(json!({"preset": "station", "vehicles": 1000, "stagger": 1e9})),
        "stagger: ev1000's transfer start (999 × stagger) is after the latest start accepted \
         (86400 s, one day)"
    );
    // Sessions start at session.start + i × stagger. Before: "sessions[2].start_ns: ...".
    let e = err(json!({"preset": "station", "vehicles": 3, "stagger": 5e4,
        "session": {"start": 1}}));
    assert!(
        e.starts_with("stagger: ev3's session start (session.start + 2 × stagger) is 100001 s"),
        "{e}"
    );
    // Before: "flows[2].start_ns: ...".
    assert_eq!(
        err(json!({"preset": "wired-wireless", "groups": [{"flows": 3, "stagger": 1e5}]})),
        "groups[0].stagger: the group's last start (start + 2 × stagger) is 200000 s, after \
         the latest start accepted (86400 s, one day)"
    );
    // Before: "flows[0].start_ns: ...".
    let mut spec = custom(json!({}));
    spec["flows"][0]["start"] = json!(1e5);
    assert!(err(spec).starts_with("flows[0].start: flows[0]'s start is 100000 s, after"));
}

#[test]
fn wifi_fields_are_named_as_written() {
    // Before: "wifi.data_rate_kbps: 3000 kbit/s is not an 802.11b rate ...".
    assert_eq!(
        err(json!({"preset": "vanet-chain", "wifi": {"rate": "3Mbps"}})),
        "wifi.rate: 3000 kbit/s is not an 802.11b rate (allowed, Mbit/s: 1, 2, 5.5, 11)"
    );
    // 5.5005 Mbit/s used to be truncated to 5500 kbit/s and run as 5.5 Mbit/s.
    assert_eq!(
        err(json!({"preset": "vanet-chain", "wifi": {"rate": "5.5005Mbps"}})),
        "wifi.rate: 5500500 bit/s is not an 802.11b rate (allowed, Mbit/s: 1, 2, 5.5, 11)"
    );
    // Before: "wifi.ifq_packets: 0 is outside [1, 1000000]".
    assert_eq!(
        err(json!({"preset": "vanet-chain", "ifq": 0})),
        "ifq: 0 is outside [1, 1000000]"
    );
    assert_eq!(
        err(json!({"preset": "vanet-chain", "wifi": {"ifq": 0}})),
        "wifi.ifq: 0 is outside [1, 1000000]"
    );
    // Before: "tcp.mss: ..." and "tcp.dupack_threshold: ...".
    assert_eq!(
        err(json!({"preset": "vanet-chain", "segment": 0})),
        "segment: 0 is outside [1, 65495] bytes"
    );
    assert_eq!(
        err(json!({"preset": "vanet-chain", "dupack": 0})),
        "dupack: 0 is outside [1, 1000]"
    );
    // Before: "wifi.propagation: invalid type: string \"x\", expected f64" (the
    // tagged model lost the path) and "wifi.reception: missing field `sinr_db`".
    let e = err(json!({"preset": "vanet-chain", "wifi": {"propagation":
        {"model": "friis", "frequency_hz": "x", "system_loss": 1}}}));
    assert!(
        e.starts_with("wifi.propagation.frequency_hz: invalid type"),
        "{e}"
    );
    assert_eq!(
        err(json!({"preset": "vanet-chain", "wifi": {"reception": {"model": "threshold"}}})),
        "wifi.reception.sinr_db: missing (required for model 'threshold')"
    );
    let e = err(json!({"preset": "vanet-chain", "wifi": {"reception":
        {"model": "threshold", "sinr_db": 10, "height_m": 1}}}));
    assert!(
        e.starts_with("wifi.reception.height_m: unknown field"),
        "{e}"
    );
    // 1e-300 of the time in error: lossless periods of 5·10²⁹⁸ s. Before:
    // "wifi.error_rate.mean_good: 5000…(299 digits) is not a valid mean sojourn".
    assert_eq!(
        err(json!({"preset": "vanet-chain", "error_rate": 1e-300})),
        "error_rate: 1e-300 leaves lossless periods longer than 10⁹ s with error_burst \
         50000000 ns; raise error_rate or lower error_burst"
    );
    // A radio that cannot reach the next car. Before: "flows: flow 'tcp' has no
    // path between its source and destination".
    let e = err(json!({"preset": "vanet-chain", "wifi": {"tx_power_dbm": 0}}));
    assert!(
        e.starts_with("spacing_m: v0 and v1 (200 m apart) do not receive each other"),
        "{e}"
    );
    assert!(e.contains("wifi.tx_power_dbm") && e.contains("wifi.rx_sensitivity_dbm"));
}

#[test]
fn lte_cabin_fields_are_named_as_written() {
    // Before: "channel.speed_kmh: 600 is outside [0, 540] km/h".
    assert_eq!(
        err(json!({"preset": "lte-cabin", "speed_kmh": 600})),
        "speed_kmh: 600 is outside [0, 540] km/h"
    );
    // Before: "links[1].capacity_ab.channel.share: ...".
    assert_eq!(
        err(json!({"preset": "lte-cabin", "channel": {"share": 2}})),
        "channel.share: must be in (0, 1], above 0 and at most 1 (got 2)"
    );
    // Before: "links[1].queue_bytes: 0 is outside [1, 68719476736] bytes".
    assert_eq!(
        err(json!({"preset": "lte-cabin", "buffer": 0})),
        "buffer: 0 is outside [1, 68719476736] bytes"
    );
    // Before: the top-level value silently replaced the channel's.
    assert_eq!(
        err(json!({"preset": "lte-cabin", "speed_kmh": 50, "channel": {"speed_kmh": 60}})),
        "speed_kmh: also set as channel.speed_kmh; give one of them"
    );
    // Before: "links[1].capacity_ab.channel: this channel never delivers ...".
    assert!(err(json!({"preset": "lte-cabin", "rsrp_dbm": -150}))
        .starts_with("rsrp_dbm: this channel never delivers anything"));
    assert!(
        err(json!({"preset": "lte-cabin", "channel": {"rsrp_dbm": -150}}))
            .starts_with("channel: this channel never delivers anything")
    );
    let e = err(json!({"preset": "lte-cabin", "rsrp_dbm": -90, "channel": {"distance_m": 500}}));
    assert!(
        e.starts_with("rsrp_dbm: also set as channel.distance_m"),
        "{e}"
    );
}

#[test]
fn a_top_level_tcp_error_names_the_top_level_tcp() {
    // Before: "flows[0].tcp.mss: 0 is outside [1, 65495] bytes".
    assert_eq!(
        err(custom(json!({"tcp": {"mss": 0}}))),
        "tcp.mss: 0 is outside [1, 65495] bytes"
    );
    // A flow's own setting keeps its own path.
    let mut spec = custom(json!({"tcp": {"mss": 1000}}));
    spec["flows"][0]["tcp"] = json!({"mss": 0});
    assert_eq!(err(spec), "flows[0].tcp.mss: 0 is outside [1, 65495] bytes");
    // Before: "groups[0].tcp.cc: unknown congestion control 'nope' ...".
    let e = err(json!({"preset": "wired-wireless", "groups": [{"cc": "nope"}]}));
    assert!(
        e.starts_with("groups[0].cc: unknown congestion control 'nope'"),
        "{e}"
    );
}

#[test]
fn durations_of_the_top_level_tcp_survive_the_merge() {
    // The merge of a preset's tcp with a flow's or a session's went through
    // JSON, where a duration is written in ns and read back in seconds:
    // rto_min = "5ms" became 5·10⁶ s and was refused ("flows[0].tcp.rto_min:
    // 5000000000000000 ns is above the maximum ..."), 1 ns became 1 s.
    let mut spec = custom(json!({"tcp": {"rto_min": "5ms"}}));
    spec["flows"][0]["tcp"] = json!({"mss": 500});
    let s = ok(spec);
    assert_eq!(
        (s.flows[0].tcp.rto_min_ns, s.flows[0].tcp.mss),
        (5_000_000, 500)
    );
    let s = ok(json!({"preset": "v2g", "tcp": {"clock_granularity": "1ns"}, "session": {}}));
    assert_eq!(s.sessions[0].tcp.clock_granularity_ns, 1);
    let s = ok(
        json!({"preset": "wired-wireless", "tcp": {"rto_min": "1ms"},
        "groups": [{"tcp": {"mss": 1000}}]}),
    );
    assert_eq!(s.flows[0].tcp.rto_min_ns, 1_000_000);
}

#[test]
fn the_default_queue_of_wired_wireless_saturates_instead_of_wrapping() {
    // Both rates 10 Tbit/s, RTT 2 · (2 576 970 978 + 10 000) ns = 5 153 961 956 ns:
    // 10¹³ · 5.153961956 bit = 5.153961956·10¹³ bit, / 12 000 bit per packet =
    // 4 294 968 296.67 → 4 294 968 297 packets = 2³² + 1001. The u32 cast
    // made that a queue of 1001 packets, silently; now the default stops at
    // the largest queue, 10⁶ packets.
    let s = ok(json!({"preset": "wired-wireless", "wired_rate": 1e13,
        "wireless_rate": 1e13, "wired_delay": "2576970978ns"}));
    assert_eq!(s.links[0].queue_packets, 1_000_000);
    // 10 Tbit/s at the default 100.02 ms: 8.3·10⁷ packets (before: refused as
    // "queue_packets: 83350000 is outside [1, 1000000] packets", a field not written).
    let s = ok(json!({"preset": "wired-wireless", "wired_rate": 1e13, "wireless_rate": 1e13}));
    assert_eq!(s.links[0].queue_packets, 1_000_000);
}

#[test]
fn a_red_default_threshold_above_the_limit_names_the_limit() {
    // Before: "qdisc.min_th: must be between 0 and 1 (got 5)" (min_th not written).
    assert_eq!(
        err(json!({"preset": "v2g", "qdisc": {"kind": "red", "limit": 1}})),
        "qdisc.limit: 1 is below min_th (5, the default): RED's thresholds lie within the \
         queue's limit; set min_th"
    );
    assert_eq!(
        err(json!({"preset": "v2g", "qdisc": {"kind": "red", "limit": 10, "min_th": 11}})),
        "qdisc.min_th: must be between 0 and the queue's limit (limit = 10) (got 11)"
    );
}

#[test]
fn mobility_errors_name_the_coordinate() {
    let spec = custom(json!({
        "nodes": ["a", "b", "c"],
        "media": [{"nodes": ["b", "c"], "mobility": [{"x_m": 0, "y_m": 0}, {"x_m": 10, "y_m": -2e7}]}],
    }));
    // Before: "media[0].mobility[1]: positions (m) and velocities (m/s) must be finite ...".
    assert!(err(spec).starts_with("media[0].mobility[1].y_m: -20000000 is outside [-1e7, 1e7]"));
}

// -- readable numbers -------------------------------------------------------------------

#[test]
fn bounds_and_values_are_echoed_readably() {
    // Before: q_w's lower bound, f64::MIN_POSITIVE, in 310 characters
    // ("0.000…00022250738585072014").
    assert_eq!(
        err(json!({"preset": "v2g", "qdisc": {"kind": "red", "q_w": 0}})),
        "qdisc.q_w: must be between 2.2250738585072014e-308 and 1 (got 0)"
    );
    // Before: 1e300 in 301 digits.
    assert_eq!(
        err(json!({"preset": "vanet-chain", "speed_kmh": 1e300})),
        "speed_kmh: 1e300 is outside [0, 500] km/h"
    );
    assert_eq!(
        err(json!({"preset": "lte-cabin", "channel": {"carrier_hz": 1e300}})),
        "channel.carrier_hz: must be from 400000000 to 6000000000 Hz (got 1e300)"
    );
    let e = err(json!({"preset": "v2g", "tcp": {"cc": "cubic", "cc_params": {"beta": 1e300}}}));
    assert!(e.starts_with("tcp.cc_params.beta: 1e300 is outside"), "{e}");
    // No message of a hostile value runs long.
    for (field, v) in [
        ("speed_kmh", 1e300),
        ("spacing_m", -1e300),
        ("speed_kmh", -1e-300),
    ] {
        let e = err(json!({"preset": "vanet-chain", field: v}));
        assert!(e.len() < 100, "{e}");
    }
}

// -- missing fields by path -------------------------------------------------------------

#[test]
fn missing_fields_are_named_by_their_path() {
    // Before: "links[0]: missing field `delay`".
    let mut spec = custom(json!({}));
    spec["links"][0].as_object_mut().unwrap().remove("delay");
    assert_eq!(err(spec), "links[0].delay: missing (required)");
    // Before: "missing field `nodes`" with no path at all.
    let mut spec = custom(json!({}));
    spec.as_object_mut().unwrap().remove("nodes");
    assert_eq!(err(spec), "nodes: missing (required)");
    // Before: "session.steps[0]: missing field `response`".
    assert_eq!(
        err(json!({"preset": "v2g", "session": {"profile": "custom",
            "steps": [{"name": "A", "request": 10}]}})),
        "session.steps[0].response: missing (required)"
    );
    // Before: "qdisc: missing field `kind`".
    assert_eq!(
        err(json!({"preset": "v2g", "qdisc": {"limit": 10}})),
        "qdisc.kind: missing (required)"
    );
}

// -- contradictions ---------------------------------------------------------------------

#[test]
fn a_stop_before_a_start_is_refused() {
    // Before: accepted; the flow never ran (completed = false, stop_time).
    assert_eq!(
        err(json!({"preset": "v2g", "start": "2s", "stop": "1s"})),
        "stop: 1 s is not after the transfer's start, 2 s: a flow or session that starts at \
         or after the stop never runs"
    );
    assert!(err(json!({"preset": "v2g", "start": "1s", "stop": "1s"})).starts_with("stop: 1 s"));
    assert!(
        ok(json!({"preset": "v2g", "start": "1s", "stop": "1.001s"}))
            .stop_ns
            .is_some()
    );
    // Against a preset's default stop (lte-cabin: 60 s), the start is named.
    assert_eq!(
        err(json!({"preset": "lte-cabin", "start": "70s"})),
        "start: the flows' start is 70 s, not before stop (60 s, the default): a flow or \
         session that starts at or after the stop never runs; set stop"
    );
    // vanet-chain's flow starts at 1 s by default.
    assert!(err(json!({"preset": "vanet-chain", "stop": "0.5s"}))
        .starts_with("stop: 0.5 s is not after the flow's start, 1 s"));
    // The last of 21 vehicles starts at 20 × 2 ms = 40 ms.
    assert!(err(json!({"preset": "station", "stop": "40ms"}))
        .starts_with("stop: 0.04 s is not after ev21's transfer start (20 × stagger), 0.04 s"));
    assert!(
        err(json!({"preset": "v2g", "stop": "1s", "session": {"start": "5s"}}))
            .starts_with("stop: 1 s is not after the session's start, 5 s")
    );
    let mut spec = custom(json!({"stop": "1s"}));
    spec["flows"][0]["start"] = json!("3s");
    assert!(err(spec).starts_with("stop: 1 s is not after flows[0]'s start, 3 s"));
    assert!(err(json!({"preset": "wired-wireless", "stop": "10s",
        "groups": [{"flows": 2, "start": "1s", "stagger": "9s"}]}))
    .starts_with("stop: 10 s is not after the group's last start (start + 1 × stagger), 10 s"));
    // A resolved scenario is checked by the plan the same way.
    let mut s = resolve_value(json!({"preset": "v2g", "stop": "1s"})).unwrap();
    s.flows[0].start_ns = 2_000_000_000;
    assert_eq!(
        plan(&s).err().unwrap().to_string(),
        "stop: 1 s is not after flows[0].start_ns, 2 s: a flow or session that starts at or \
         after the stop never runs"
    );
}

#[test]
fn red_bounds_must_not_contradict() {
    // Before: accepted; maxP adapted within an empty range.
    assert_eq!(
        err(json!({"preset": "v2g", "qdisc": {"kind": "red", "top": 0.1, "bottom": 0.2}})),
        "qdisc.top: top = 0.1 is below bottom = 0.2: maxP is adapted between bottom and top"
    );
    // Only bottom given, above the default top 0.5: bottom is named.
    assert!(
        err(json!({"preset": "v2g", "qdisc": {"kind": "red", "bottom": 0.6}}))
            .starts_with("qdisc.bottom: top = 0.5 is below bottom = 0.6")
    );
    // bottom 0 is automatic: min(0.01, 8 · 500 B · 0.1 s / 100 kbit/s) = 0.004.
    assert_eq!(
        err(
            json!({"preset": "v2g", "qdisc": {"kind": "red", "top": 0.001,
            "link_bandwidth": "100kbps"}})
        ),
        "qdisc.top: top = 0.001 is below the automatic bottom, min(0.01, 8 · mean_pkt_size · \
         rtt / link_bandwidth) = 0.004: maxP is adapted between bottom and top"
    );
    // ARED sets the thresholds and the weight itself (ns-3 InitializeParams).
    for (field, value) in [
        ("min_th", json!(3)),
        ("q_w", json!(0.01)),
        ("adapt_max_p", json!(false)),
    ] {
        let mut q = json!({"kind": "red", "ared": true});
        q[field] = value;
        let e = err(json!({"preset": "v2g", "qdisc": q}));
        assert!(
            e.starts_with(&format!(
                "qdisc.{field}: ared = true sets min_th, max_th and q_w"
            )),
            "{e}"
        );
    }
    ok(json!({"preset": "v2g", "qdisc": {"kind": "red", "ared": true, "adapt_max_p": true}}));
    ok(json!({"preset": "v2g", "qdisc": {"kind": "red", "top": 0.2, "bottom": 0.2}}));
}

#[test]
fn recv_buffer_max_is_at_least_the_buffer_it_grows_from() {
    // The autotuning limit (tcp_rmem[2]) below its start (tcp_rmem[1],
    // recv_buffer = 131072 by default) is refused, naming the field.
    assert_eq!(
        err(custom(json!({"tcp": {"recv_buffer_max": 65536}}))),
        "tcp.recv_buffer_max: 65536 is outside [131072, 1099511627776] bytes (at least recv_buffer)"
    );
    // Unset, it is 32 MiB, or the buffer where that is larger.
    let s = ok(custom(json!({"tcp": {"recv_buffer": "64MiB"}})));
    assert_eq!(s.flows[0].tcp.recv_buffer_max, 64 << 20);
    let s = ok(custom(json!({})));
    assert_eq!(s.flows[0].tcp.recv_buffer_max, 32 << 20);
}
