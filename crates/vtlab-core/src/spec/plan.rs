//! From a resolved [`Scenario`] to the engine's [`Plan`]: every name looked up
//! once, every value checked against its documented range. This is the only
//! way to build a plan, so the engine never sees an unchecked value and no
//! lookup can fall back silently on a default.

use super::loss::check_loss;
use super::tcp::check_config;
use super::{Scenario, SpecError, StepConf};
use crate::engine::{Duration, Time};
use crate::net::cellular::trace::MAX_TRACE_MS;
use crate::net::cellular::{channel, CapacityConf};
use crate::net::{LinkParams, NodeId};
use crate::sim::plan::{
    path, shortest_path_routes, AirHop, FlowRole, Plan, PlannedFlow, PlannedLink, PlannedMedium,
    PlannedSession,
};
use crate::tcp::cc;

/// Link rates, bit/s: at least 1 bit/s, at most 10 Tbit/s.
pub const RATE_RANGE_BPS: (u64, u64) = (1, 10_000_000_000_000);
/// Longest propagation delay, start time or stop time accepted (one day, ns):
/// keeps every sum of simulated times far from the 2⁶⁴ ns limit.
pub const MAX_TIME_NS: u64 = 86_400_000_000_000;
/// Largest link-layer framing overhead per packet, bytes.
pub const MAX_FRAMING_BYTES: u32 = 65_535;
/// Latest `stop` accepted: 30 days of simulated time (ns).
pub const MAX_STOP_NS: u64 = 30 * 86_400_000_000_000;
/// Without a `stop`, a run ends at the latest flow start plus one day of
/// simulated time (ns); flows not done by then end with `abort_reason =
/// "horizon"`. Together with the bounds above (starts and delays ≤ one day,
/// stop ≤ 30 days, TCP timers ≤ one hour) this keeps every simulated time
/// below 10¹⁶ ns, far from the 2⁶⁴ ns (584 years) where u64 time would
/// overflow: time cannot saturate.
pub const DEFAULT_HORIZON_NS: u64 = 86_400_000_000_000;
/// Default event budget of a run (about 100 s of engine time at 10⁷ events/s);
/// flows not done when it is spent end with `abort_reason = "event_budget"`.
pub const DEFAULT_MAX_EVENTS: u64 = 1_000_000_000;
/// Largest event budget a scenario may set.
pub const MAX_EVENTS: u64 = 1_000_000_000_000;

/// Largest byte limit of a queue: 64 GiB (the limit is a bound, the memory
/// used is what the traffic puts in the queue).
pub const MAX_QUEUE_BYTES: u64 = 1 << 36;

/// Check a cellular direction's capacity: trace values (already parsed) and
/// the channel model's fields, and refuse a channel that can never deliver.
fn check_capacity(cap: &CapacityConf, path: &str) -> Result<(), SpecError> {
    match cap {
        CapacityConf::Trace {
            opportunity_bytes,
            times_ms,
            ..
        } => {
            let ok = !times_ms.is_empty()
                && times_ms.windows(2).all(|w| w[0] <= w[1])
                && times_ms[times_ms.len() - 1] > 0
                && times_ms[times_ms.len() - 1] <= MAX_TRACE_MS;
            if !ok {
                return Err(SpecError::new(
                    format!("{path}.times_ms"),
                    format!(
                        "must be non-decreasing times in [0, {MAX_TRACE_MS}] ms with a positive last one"
                    ),
                ));
            }
            check_range(
                format!("{path}.opportunity_bytes"),
                u64::from(*opportunity_bytes),
                (1, 1_000_000),
                " bytes",
            )
        }
        CapacityConf::Model { channel } => {
            channel
                .check()
                .map_err(|(field, msg)| SpecError::new(format!("{path}.channel.{field}"), msg))?;
            if channel::never_delivers(channel) {
                return Err(SpecError::new(
                    format!("{path}.channel"),
                    "this channel never delivers anything: its SINR gives CQI 0 and nothing \
                     (fading, shadowing) varies it; raise rsrp_dbm or lower the distance, \
                     noise or interference"
                        .into(),
                ));
            }
            Ok(())
        }
    }
}

fn check_range(path: String, v: u64, (lo, hi): (u64, u64), unit: &str) -> Result<(), SpecError> {
    if (lo..=hi).contains(&v) {
        Ok(())
    } else {
        Err(SpecError::new(
            path,
            format!("{v} is outside [{lo}, {hi}]{unit}"),
        ))
    }
}

/// Check `scenario` and build the plan the engine runs.
pub fn plan(scenario: &Scenario) -> Result<Plan, SpecError> {
    scenario.validate()?;
    let node = |name: &str| -> NodeId {
        // validate() has checked every name against the node list.
        NodeId(
            scenario
                .nodes
                .iter()
                .position(|n| n == name)
                .unwrap_or_default() as u32,
        )
    };
    let mut links = Vec::with_capacity(scenario.links.len());
    for (i, l) in scenario.links.iter().enumerate() {
        let p = |f: &str| format!("links[{i}].{f}");
        if l.capacity_ab.is_none() || l.capacity_ba.is_none() {
            check_range(p("rate_bps"), l.rate_bps, RATE_RANGE_BPS, " bit/s")?;
        }
        for (field, cap) in [
            ("capacity_ab", &l.capacity_ab),
            ("capacity_ba", &l.capacity_ba),
        ] {
            if let Some(cap) = cap {
                check_capacity(cap, &p(field))?;
            }
        }
        if let Some(b) = l.queue_bytes {
            check_range(p("queue_bytes"), b, (1, MAX_QUEUE_BYTES), " bytes")?;
        }
        check_range(p("delay_ns"), l.delay_ns, (0, MAX_TIME_NS), " ns")?;
        check_range(
            p("framing_bytes"),
            u64::from(l.framing_bytes),
            (0, u64::from(MAX_FRAMING_BYTES)),
            " bytes",
        )?;
        check_range(
            p("mtu_bytes"),
            u64::from(l.mtu_bytes),
            (68, 65_535),
            " bytes (IPv4)",
        )?;
        check_loss(&l.loss_ab, &p("loss_ab"))?;
        check_loss(&l.loss_ba, &p("loss_ba"))?;
        links.push(PlannedLink {
            name: l.name.clone(),
            a: node(&l.a),
            b: node(&l.b),
            params: LinkParams {
                rate_bps: l.rate_bps,
                delay: Duration(l.delay_ns),
                queue_packets: l.queue_packets,
                queue_bytes: l.queue_bytes,
                framing_bytes: l.framing_bytes,
                mtu_bytes: l.mtu_bytes,
            },
            loss_ab: l.loss_ab.clone(),
            loss_ba: l.loss_ba.clone(),
            capacity_ab: l.capacity_ab.clone(),
            capacity_ba: l.capacity_ba.clone(),
            qdisc: l.qdisc.clone(),
            bql: l.bql.clone(),
        });
    }
    let mut dirs: Vec<(NodeId, NodeId)> = links
        .iter()
        .flat_map(|l| [(l.a, l.b), (l.b, l.a)])
        .collect();
    let mut media = Vec::with_capacity(scenario.media.len());
    let mut air = Vec::new();
    for (i, m) in scenario.media.iter().enumerate() {
        let p = |f: &str| format!("media[{i}].{f}");
        m.wifi
            .check()
            .map_err(|(field, msg)| SpecError::new(p(&format!("wifi.{field}")), msg))?;
        check_loss(&m.wifi.error, &p("wifi.error"))?;
        for (k, mob) in m.mobility.iter().enumerate() {
            let finite = [mob.x_m, mob.y_m, mob.vx_mps, mob.vy_mps]
                .iter()
                .all(|v| v.is_finite() && v.abs() <= 1e7);
            if !finite {
                return Err(SpecError::new(
                    p(&format!("mobility[{k}]")),
                    "positions (m) and velocities (m/s) must be finite and within ±1e7".into(),
                ));
            }
        }
        let nodes: Vec<NodeId> = m.nodes.iter().map(|n| node(n)).collect();
        for (from, to) in crate::net::wifi::Medium::neighbours(m) {
            dirs.push((nodes[from], nodes[to]));
            air.push(AirHop {
                medium: i as u32,
                from: from as u32,
                to: to as u32,
            });
        }
        media.push(PlannedMedium {
            conf: crate::net::family::FamilyConf::Wifi(m.clone()),
            nodes,
        });
    }
    let routes = shortest_path_routes(scenario.nodes.len(), &dirs);
    let mut flows = Vec::with_capacity(scenario.flows.len());
    for (i, f) in scenario.flows.iter().enumerate() {
        let p = format!("flows[{i}]");
        let (src, dst) = (node(&f.src), node(&f.dst));
        if path(&routes, &dirs, src, dst).is_none() || path(&routes, &dirs, dst, src).is_none() {
            return Err(SpecError::new(
                "flows",
                format!(
                    "flow '{}' has no path between its source and destination",
                    f.name
                ),
            ));
        }
        check_range(format!("{p}.start_ns"), f.start_ns, (0, MAX_TIME_NS), " ns")?;
        check_config(&f.tcp, &format!("{p}.tcp"))?;
        let cc =
            cc::lookup(&f.tcp.cc).ok_or_else(|| unknown_cc(&format!("{p}.tcp.cc"), &f.tcp.cc))?;
        flows.push(PlannedFlow {
            name: f.name.clone(),
            src,
            dst,
            bytes: f.bytes,
            start: Time(f.start_ns),
            tcp: f.tcp.clone(),
            cc,
            role: FlowRole::Bulk,
        });
    }
    let mut sessions = Vec::with_capacity(scenario.sessions.len());
    for (i, c) in scenario.sessions.iter().enumerate() {
        let p = format!("sessions[{i}]");
        let (client, server) = (node(&c.client), node(&c.server));
        if path(&routes, &dirs, client, server).is_none()
            || path(&routes, &dirs, server, client).is_none()
        {
            return Err(SpecError::new(
                p,
                format!(
                    "session '{}' has no path between its vehicle and charger",
                    c.name
                ),
            ));
        }
        check_range(format!("{p}.start_ns"), c.start_ns, (0, MAX_TIME_NS), " ns")?;
        check_config(&c.tcp, &format!("{p}.tcp"))?;
        let cc =
            cc::lookup(&c.tcp.cc).ok_or_else(|| unknown_cc(&format!("{p}.tcp.cc"), &c.tcp.cc))?;
        let k = i as u32;
        let total = |bytes: fn(&StepConf) -> u64| -> u64 {
            c.steps
                .iter()
                .map(|s| bytes(s).saturating_mul(u64::from(s.repeats)))
                .fold(0, u64::saturating_add)
        };
        let half = |suffix: &str, src, dst, bytes, role| PlannedFlow {
            name: format!("{}/{suffix}", c.name),
            src,
            dst,
            bytes,
            start: Time(c.start_ns),
            tcp: c.tcp.clone(),
            cc,
            role,
        };
        let requests = flows.len() as u32;
        flows.push(half(
            "requests",
            client,
            server,
            total(|s| s.request_bytes),
            FlowRole::Requests(k),
        ));
        flows.push(half(
            "responses",
            server,
            client,
            total(|s| s.response_bytes),
            FlowRole::Responses(k),
        ));
        sessions.push(PlannedSession {
            name: c.name.clone(),
            profile: c.profile.clone(),
            cc: c.tcp.cc.clone(),
            tcp_profile: c.tcp.profile.as_str(),
            steps: c.steps.clone(),
            abort_on_miss: c.abort_on_miss,
            processing: Duration(c.processing_ns),
            energy_step: c.energy_step,
            start: Time(c.start_ns),
            requests,
            responses: requests + 1,
        });
    }
    let mut names = std::collections::BTreeSet::new();
    for f in &flows {
        if !names.insert(f.name.as_str()) {
            return Err(SpecError::new(
                "sessions",
                format!("flow name '{}' is used twice (a session's flows are <session>/requests and <session>/responses)", f.name),
            ));
        }
    }
    if let Some(stop) = scenario.stop_ns {
        check_range("stop".into(), stop, (1, MAX_STOP_NS), " ns")?;
    }
    if let Some(n) = scenario.max_events {
        check_range("max_events".into(), n, (1, MAX_EVENTS), " events")?;
    }
    let last_start = flows.iter().map(|f| f.start.0).max().unwrap_or(0);
    let (horizon, horizon_reason) = match scenario.stop_ns {
        Some(stop) => (Time(stop), "stop_time"),
        None => (Time(last_start + DEFAULT_HORIZON_NS), "horizon"),
    };
    check_range(
        "trace_interval".into(),
        scenario.trace_interval_ns,
        (1, MAX_TIME_NS),
        " ns",
    )?;
    Ok(Plan {
        hash: scenario.hash(),
        nodes: scenario.nodes.clone(),
        links,
        media,
        air,
        flows,
        sessions,
        routes,
        dirs,
        horizon,
        horizon_reason,
        max_events: scenario.max_events.unwrap_or(DEFAULT_MAX_EVENTS),
        trace_interval: Duration(scenario.trace_interval_ns),
        addresses: if scenario.addresses.is_empty() {
            (1..=scenario.nodes.len() as u32)
                .map(|i| [10, 0, (i >> 8) as u8, i as u8])
                .collect()
        } else {
            scenario.addresses.clone()
        },
    })
}

pub(crate) fn unknown_cc(path: &str, name: &str) -> SpecError {
    SpecError::new(
        path,
        format!(
            "unknown congestion control '{name}' (allowed: {})",
            cc::names().join(", ")
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::{LossConf, Sojourn};
    use crate::spec::resolve_value;
    use serde_json::json;

    /// a —— b —— c, one flow a → c.
    fn chain() -> Scenario {
        resolve_value(json!({
            "preset": "custom",
            "nodes": ["a", "b", "c"],
            "links": [
                {"a": "a", "b": "b", "rate": "10Mbps", "delay": "1ms"},
                {"a": "b", "b": "c", "rate": "1Mbps", "delay": "2ms"},
            ],
            "flows": [{"src": "a", "dst": "c", "bytes": 1000}],
        }))
        .unwrap()
    }

    fn err(s: &Scenario) -> String {
        plan(s).err().map(|e| e.to_string()).unwrap_or_default()
    }

    #[test]
    fn names_are_looked_up_once_into_indices_and_routes() {
        let p = plan(&chain()).unwrap();
        let f = &p.flows[0];
        assert_eq!((f.src, f.dst), (NodeId(0), NodeId(2)));
        assert_eq!(f.cc.name, "newreno");
        // Directions: 0 = a→b, 1 = b→a, 2 = b→c, 3 = c→b.
        let dirs = &p.dirs;
        assert_eq!(
            path(&p.routes, dirs, NodeId(0), NodeId(2)),
            Some(vec![0, 2])
        );
        assert_eq!(
            path(&p.routes, dirs, NodeId(2), NodeId(0)),
            Some(vec![3, 1])
        );
        assert_eq!(p.hash(), chain().hash());
    }

    #[test]
    fn a_zero_rate_is_refused_not_divided_by() {
        let mut s = chain();
        s.links[1].rate_bps = 0;
        assert!(
            err(&s).starts_with("links[1].rate_bps: 0 is outside [1, 10000000000000] bit/s"),
            "{}",
            err(&s)
        );
    }

    #[test]
    fn an_unknown_algorithm_is_an_error_not_the_first_registry_entry() {
        let mut s = chain();
        s.flows[0].tcp.cc = "no-such-cc".into();
        assert!(err(&s).starts_with("flows[0].tcp.cc: unknown congestion control 'no-such-cc'"));
        let mut s = chain();
        s.flows[0].tcp.cc = "bic".into();
        s.flows[0].tcp.cc_params.insert("smooth_part".into(), -1.0);
        assert!(
            err(&s).starts_with("flows[0].tcp.cc_params."),
            "{}",
            err(&s)
        );
    }

    #[test]
    fn an_unknown_node_is_an_error_not_node_zero() {
        let mut s = chain();
        s.flows[0].dst = "z".into();
        assert!(
            err(&s).starts_with("flows[0].dst: unknown node 'z'"),
            "{}",
            err(&s)
        );
    }

    #[test]
    fn framing_sojourns_and_times_are_bounded() {
        let mut s = chain();
        s.links[0].framing_bytes = u32::MAX;
        assert!(err(&s).starts_with("links[0].framing_bytes: 4294967295 is outside [0, 65535]"));
        let mut s = chain();
        s.links[0].loss_ab = LossConf::GilbertElliott {
            sojourn: Sojourn::Time,
            mean_good: 1e-12,
            mean_bad: 0.1,
            loss_good: 0.0,
            loss_bad: 1.0,
        };
        assert!(
            err(&s).starts_with(
                "links[0].loss_ab.mean_good: 0.000000000001 is not a valid mean sojourn"
            ),
            "{}",
            err(&s)
        );
        let mut s = chain();
        s.links[0].delay_ns = u64::MAX;
        assert!(err(&s).starts_with("links[0].delay_ns:"), "{}", err(&s));
        let mut s = chain();
        s.flows[0].tcp.rto_max_ns = u64::MAX;
        assert!(err(&s).starts_with("flows[0].tcp.rto_max:"), "{}", err(&s));
    }

    #[test]
    fn sojourn_floor_applies_to_user_specs_too() {
        let e = resolve_value(json!({
            "preset": "v2g",
            "loss": {"model": "gilbert-elliott", "mean_good": 1e-12, "mean_bad": 0.1}
        }))
        .unwrap_err();
        assert_eq!(e.path, "loss.mean_good");
        assert!(
            e.message
                .contains("allowed: [0.000001, 1000000000] seconds"),
            "{e}"
        );
    }
}
