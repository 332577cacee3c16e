//! Every error names a field as the user wrote it. For each preset, every
//! field of every table of its spec (found from serde's own list of a
//! table's fields: the "unknown field, expected one of ..." error of a probe)
//! is given hostile values one at a time; resolving and then planning the
//! spec must either succeed or fail with an error whose path is that field
//! (or a part of it), or another field of the spec, with a message that
//! names the field (or the table it is in) beside it. No error may name a resolved field (`links[1].rate_bps`,
//! `flows[2].start_ns`, `wifi.data_rate_kbps`) or nothing.

use std::collections::BTreeSet;
use std::fmt::Write;

use serde_json::{json, Value};
use vtlab_core::spec::{plan, resolve_value, SpecError};

/// One step of a path into a spec.
#[derive(Clone, Debug)]
enum Seg {
    Key(String),
    Idx(usize),
}

/// A path as errors write it: `links[0].rate`.
fn show(path: &[Seg]) -> String {
    let mut s = String::new();
    for seg in path {
        match seg {
            Seg::Key(k) if s.is_empty() => s.push_str(k),
            Seg::Key(k) => write!(s, ".{k}").unwrap(),
            Seg::Idx(i) => write!(s, "[{i}]").unwrap(),
        }
    }
    s
}

/// `v` with the value at `path` replaced by `x` (the tables and lists on the
/// way must exist, the last key is created).
fn set(v: &Value, path: &[Seg], x: Value) -> Value {
    let Some(last) = path.last() else {
        return x;
    };
    let mut out = v.clone();
    let mut at = &mut out;
    for seg in &path[..path.len() - 1] {
        at = match seg {
            Seg::Key(k) => &mut at[k.as_str()],
            Seg::Idx(i) => &mut at[*i],
        };
    }
    match last {
        Seg::Key(k) => at[k.as_str()] = x,
        Seg::Idx(i) => at[*i] = x,
    }
    out
}

fn get<'a>(v: &'a Value, path: &[Seg]) -> &'a Value {
    path.iter().fold(v, |at, seg| match seg {
        Seg::Key(k) => &at[k.as_str()],
        Seg::Idx(i) => &at[*i],
    })
}

fn key(path: &[Seg], k: &str) -> Vec<Seg> {
    let mut p = path.to_vec();
    p.push(Seg::Key(k.into()));
    p
}

/// Resolve, then plan: the first error.
fn check(spec: &Value) -> Result<(), SpecError> {
    plan(&resolve_value(spec.clone())?).map(drop)
}

/// The fields of the table at `path` in `spec` (which must resolve): serde
/// lists them when the table holds an unknown one.
fn fields(spec: &Value, path: &[Seg]) -> Option<Vec<String>> {
    let table = get(spec, path).as_object()?.clone();
    let mut probe = table;
    probe.insert("zz_probe".into(), json!(1));
    let e = check(&set(spec, path, Value::Object(probe))).err()?;
    if e.path != show(&key(path, "zz_probe")) || !e.message.starts_with("unknown field") {
        return None;
    }
    let expected = e.message.split_once("expected")?.1;
    Some(
        expected
            .split('`')
            .skip(1)
            .step_by(2)
            .map(String::from)
            .collect(),
    )
}

/// Values a table field is tried with, when it is one: each must leave the
/// spec valid, so that its own fields can be probed.
fn table_bases(name: &str) -> Vec<Value> {
    match name {
        "qdisc" => ["pfifo_fast", "codel", "fq_codel", "red", "pie"]
            .map(|k| json!({"kind": k}))
            .to_vec(),
        "loss" | "reverse_loss" | "loss_ab" | "loss_ba" | "error" => vec![
            json!({"model": "bernoulli"}),
            json!({"model": "burst"}),
            json!({"model": "gilbert-elliott", "mean_good": 1, "mean_bad": 0.1}),
            json!({"model": "replay", "drops": [3]}),
        ],
        "reception" => vec![
            json!({"model": "threshold", "sinr_db": 10}),
            json!({"model": "dsss-ber", "preamble_snr_db": 4}),
        ],
        // ns-2's two-ray ground at 914 MHz, and models that reach as far.
        "propagation" => vec![
            json!({"model": "friis", "frequency_hz": 914e6, "system_loss": 1}),
            json!({"model": "two-ray-ground", "frequency_hz": 914e6, "system_loss": 1,
                   "height_m": 1.5}),
            json!({"model": "log-distance", "exponent": 2, "reference_distance_m": 1,
                   "reference_loss_db": 40}),
        ],
        "rwnd" => vec![json!({"control": "arwnd"})],
        "capacity_down" | "capacity_up" | "capacity_ab" | "capacity_ba" => {
            vec![json!({"model": {}}), json!({"trace_ms": [1, 2, 2, 5]})]
        }
        "session" => vec![
            json!({}),
            json!({"profile": "custom", "steps": [{"name": "A", "request": 100,
                   "response": 200, "repeats": 2}]}),
        ],
        "bql" => vec![json!({})],
        _ => vec![json!({})],
    }
}

/// Every field below the table at `path` of `spec`, each with the spec it
/// is tried in (the table made valid around it).
fn explore(spec: &Value, path: &[Seg], out: &mut Vec<(Value, Vec<Seg>)>) {
    let Some(names) = fields(spec, path) else {
        return;
    };
    for name in names {
        let field = key(path, &name);
        out.push((spec.clone(), field.clone()));
        let current = get(spec, &field);
        if let Some(first) = current.as_array().and_then(|a| a.first()) {
            if first.is_object() {
                let mut element = field.clone();
                element.push(Seg::Idx(0));
                explore(spec, &element, out);
            }
            continue;
        }
        for base in table_bases(&name) {
            let merged = match (current.as_object(), base) {
                (Some(have), Value::Object(mut b)) if !have.is_empty() => {
                    b.extend(have.clone());
                    Value::Object(b)
                }
                (_, b) => b,
            };
            let with = set(spec, &field, merged);
            if check(&with).is_ok() {
                explore(&with, &field, out);
            }
        }
    }
}

/// The values every field is tried with: zero, negatives, tiny and huge
/// numbers (a day is 86 400 s; 10⁸ s is beyond it), the integer limits, and
/// strings of the same.
fn hostile() -> Vec<Value> {
    vec![
        json!(0),
        json!(1),
        json!(-1),
        json!(0.5),
        json!(1e8),
        json!(1e15),
        json!(4_294_967_295u64),
        json!(4_294_967_296u64),
        json!(u64::MAX),
        json!(1e300),
        json!(-1e300),
        json!(1e-300),
        json!("0"),
        json!("1e15"),
        json!("1e300"),
        json!("-1"),
        json!("150%"),
        json!("100000000s"),
        json!("1000Tbps"),
        json!(true),
    ]
}

/// The bases: each preset with every list holding one element to probe.
fn presets() -> Vec<Value> {
    let custom = json!({
        "preset": "custom",
        "nodes": ["a", "b", "c", "d"],
        "links": [{"a": "a", "b": "b", "rate": "1Mbps", "delay": "1ms"}],
        "media": [{"nodes": ["b", "c"], "mobility": [{"x_m": 0, "y_m": 0}, {"x_m": 10, "y_m": 0}]}],
        "flows": [{"src": "a", "dst": "c", "bytes": 1000}],
    });
    vec![
        json!({"preset": "v2g"}),
        json!({"preset": "station", "vehicles": 2}),
        json!({"preset": "lte-cabin"}),
        json!({"preset": "vanet-chain"}),
        json!({"preset": "wired-wireless", "groups": [{"flows": 2}]}),
        custom,
    ]
}

/// Fields each preset's exploration must reach (the probes find tables
/// behind kinds, models, lists and shortcuts).
fn explored(preset: &str) -> &'static [&'static str] {
    match preset {
        "v2g" => &[
            "plc_rate",
            "start",
            "session.start",
            "session.steps[0].repeats",
            "session.tcp.rto_min",
            "qdisc.top",
            "qdisc.t_update",
            "bql.max_limit",
            "loss.mean_good",
            "tcp.rwnd.lambda",
        ],
        "station" => &[
            "stagger",
            "vehicles",
            "session.cable_check",
            "reverse_loss.drops",
        ],
        "lte-cabin" => &[
            "buffer",
            "speed_kmh",
            "channel.share",
            "capacity_down.model.bler",
            "capacity_up.trace_ms",
            "radio_delay",
        ],
        "vanet-chain" => &[
            "ifq",
            "segment",
            "wifi.rate",
            "wifi.propagation.height_m",
            "wifi.reception.preamble_snr_db",
            "wifi.error.loss_bad",
        ],
        "wired-wireless" => &["groups[0].stagger", "groups[0].tcp.mss", "wired_delay"],
        _ => &[
            "links[0].rate",
            "links[0].capacity_ab.model.share",
            "links[0].qdisc.max_th",
            "media[0].wifi.cw_max",
            "media[0].mobility[0].x_m",
            "flows[0].start",
            "flows[0].tcp.rto_max",
        ],
    }
}

#[test]
fn every_error_names_a_field_the_user_wrote() {
    let mut bad = Vec::new();
    let mut tried = 0;
    for base in presets() {
        let preset = base["preset"].as_str().unwrap().to_owned();
        let mut found = Vec::new();
        explore(&base, &[], &mut found);
        // Every field and every table or list element on the way to one.
        let known: BTreeSet<String> = found
            .iter()
            .flat_map(|(_, p)| (1..=p.len()).map(|n| show(&p[..n])))
            .collect();
        for must in explored(&preset) {
            assert!(known.contains(*must), "{preset}: {must} not explored");
        }
        for (spec, field) in &found {
            let written = show(field);
            // The field's name and the table it is in (a message may name
            // `propagation` for any of its parameters).
            let names: Vec<&str> = field
                .iter()
                .rev()
                .filter_map(|s| match s {
                    Seg::Key(k) => Some(k.as_str()),
                    Seg::Idx(_) => None,
                })
                .take(2)
                .collect();
            for value in hostile() {
                tried += 1;
                let Err(e) = check(&set(spec, field, value.clone())) else {
                    continue;
                };
                let own = e.path == written
                    || e.path.starts_with(&format!("{written}."))
                    || e.path.starts_with(&format!("{written}["));
                let beside = known.contains(&e.path) && names.iter().any(|n| e.message.contains(n));
                if !own && !beside {
                    bad.push(format!("{preset}: {written} = {value} → {e}"));
                }
            }
        }
    }
    assert!(
        bad.is_empty(),
        "{} of {tried}:\n{}",
        bad.len(),
        bad.join("\n")
    );
}
