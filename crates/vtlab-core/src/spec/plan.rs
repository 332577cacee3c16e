//! From a resolved [`Scenario`] to the engine's [`Plan`]: the scenario's
//! contract checked once ([`Scenario::validate`]), then every name looked up
//! once into an index, in five steps: links, media, flows, sessions and the
//! horizon. This is the only way to build a plan, so the engine never sees an
//! unchecked value and no lookup can fall back silently on a default.

use super::{Scenario, SpecError, StepConf};
use crate::engine::{Duration, Time};
use crate::net::{LinkParams, NodeId};
use crate::sim::plan::{
    path, shortest_path_routes, AirHop, FlowRole, Plan, PlannedFlow, PlannedLink, PlannedMedium,
    PlannedSession,
};
use crate::tcp::cc::{self, CcDescriptor};
use crate::tcp::TcpConfig;

/// Without a `stop`, a run ends at the latest flow start plus one day of
/// simulated time (ns); flows not done by then end with `abort_reason =
/// "horizon"`. Together with the bounds of [`Scenario::validate`] (starts and
/// delays ≤ one day, stop ≤ 30 days, TCP timers ≤ one hour) this keeps every
/// simulated time below 10¹⁶ ns, far from the 2⁶⁴ ns (584 years) where u64
/// time would overflow: time cannot saturate.
pub const DEFAULT_HORIZON_NS: u64 = 86_400_000_000_000;
/// Default event budget of a run (about 100 s of engine time at 10⁷ events/s);
/// flows not done when it is spent end with `abort_reason = "event_budget"`.
pub const DEFAULT_MAX_EVENTS: u64 = 1_000_000_000;

/// Check `scenario` and build the plan the engine runs.
pub fn plan(scenario: &Scenario) -> Result<Plan, SpecError> {
    scenario.validate()?;
    let links = links(scenario);
    let mut dirs: Vec<(NodeId, NodeId)> = links
        .iter()
        .flat_map(|l| [(l.a, l.b), (l.b, l.a)])
        .collect();
    let (media, air) = media(scenario, &mut dirs);
    let routes = shortest_path_routes(scenario.nodes.len(), &dirs);
    let connected = |a: NodeId, b: NodeId| {
        path(&routes, &dirs, a, b).is_some() && path(&routes, &dirs, b, a).is_some()
    };
    let mut flows = flows(scenario, &connected)?;
    let sessions = sessions(scenario, &connected, &mut flows)?;
    let (horizon, horizon_reason) = horizon(scenario, &flows);
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
        max_output_bytes: scenario.output_budget(),
        message_output_bytes: scenario.message_output_bytes(),
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

/// A node's index (every name has been checked against the node list).
fn node(scenario: &Scenario, name: &str) -> NodeId {
    NodeId(
        scenario
            .nodes
            .iter()
            .position(|n| n == name)
            .unwrap_or_default() as u32,
    )
}

/// A connection's congestion control (its name has been checked).
fn controller(tcp: &TcpConfig, path: &str) -> Result<&'static CcDescriptor, SpecError> {
    cc::lookup(&tcp.cc).ok_or_else(|| super::tcp::unknown_cc(&format!("{path}.tcp.cc"), &tcp.cc))
}

/// The point-to-point links, both directions of each.
fn links(scenario: &Scenario) -> Vec<PlannedLink> {
    scenario
        .links
        .iter()
        .map(|l| PlannedLink {
            name: l.name.clone(),
            a: node(scenario, &l.a),
            b: node(scenario, &l.b),
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
        })
        .collect()
}

/// The shared media, and their hops between stations in range (appended to
/// the directions `dirs` the routes run over).
fn media(
    scenario: &Scenario,
    dirs: &mut Vec<(NodeId, NodeId)>,
) -> (Vec<PlannedMedium>, Vec<AirHop>) {
    let mut media = Vec::with_capacity(scenario.media.len());
    let mut air = Vec::new();
    for (i, m) in scenario.media.iter().enumerate() {
        let nodes: Vec<NodeId> = m.nodes.iter().map(|n| node(scenario, n)).collect();
        for (from, to) in crate::net::wifi::Medium::hops(m) {
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
    (media, air)
}

/// What decides a path over a shared medium, for a scenario that has one.
fn radio_hint(scenario: &Scenario) -> &'static str {
    if scenario.media.is_empty() {
        ""
    } else {
        " (over 802.11, stations are neighbours when each receives the other at or above \
         rx_sensitivity_dbm, given tx_power_dbm, the propagation model and their positions \
         at the start)"
    }
}

/// The bulk transfers, each with a path both ways.
fn flows(
    scenario: &Scenario,
    connected: &dyn Fn(NodeId, NodeId) -> bool,
) -> Result<Vec<PlannedFlow>, SpecError> {
    let mut flows = Vec::with_capacity(scenario.flows.len());
    for (i, f) in scenario.flows.iter().enumerate() {
        let (src, dst) = (node(scenario, &f.src), node(scenario, &f.dst));
        if !connected(src, dst) {
            return Err(SpecError::new(
                format!("flows[{i}]"),
                format!(
                    "flow '{}' has no path between its source and destination{}",
                    f.name,
                    radio_hint(scenario)
                ),
            ));
        }
        flows.push(PlannedFlow {
            name: f.name.clone(),
            src,
            dst,
            bytes: f.bytes,
            start: Time(f.start_ns),
            tcp: f.tcp.clone(),
            cc: controller(&f.tcp, &format!("flows[{i}]"))?,
            role: FlowRole::Bulk,
        });
    }
    Ok(flows)
}

/// The sessions, each with a path both ways; each runs as two flows
/// (requests and responses) appended to `flows`.
fn sessions(
    scenario: &Scenario,
    connected: &dyn Fn(NodeId, NodeId) -> bool,
    flows: &mut Vec<PlannedFlow>,
) -> Result<Vec<PlannedSession>, SpecError> {
    let mut sessions = Vec::with_capacity(scenario.sessions.len());
    for (i, c) in scenario.sessions.iter().enumerate() {
        let p = format!("sessions[{i}]");
        let (client, server) = (node(scenario, &c.client), node(scenario, &c.server));
        if !connected(client, server) {
            return Err(SpecError::new(
                p,
                format!(
                    "session '{}' has no path between its vehicle and charger{}",
                    c.name,
                    radio_hint(scenario)
                ),
            ));
        }
        let cc = controller(&c.tcp, &p)?;
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
        let (k, requests) = (i as u32, flows.len() as u32);
        let request_bytes = total(|s| s.request_bytes);
        flows.push(half(
            "requests",
            client,
            server,
            request_bytes,
            FlowRole::Requests(k),
        ));
        let response_bytes = total(|s| s.response_bytes);
        flows.push(half(
            "responses",
            server,
            client,
            response_bytes,
            FlowRole::Responses(k),
        ));
        sessions.push(PlannedSession {
            name: c.name.clone(),
            profile: c.profile.clone(),
            cc: c.tcp.cc.clone(),
            tcp_profile: c.tcp.profile.as_str(),
            steps: c.steps.clone(),
            abort_on_miss: c.abort_on_miss,
            retries: c.retries,
            processing: Duration(c.processing_ns),
            energy_step: c.energy_step,
            start: Time(c.start_ns),
            requests,
            responses: requests + 1,
        });
    }
    Ok(sessions)
}

/// When the run ends, and why: at `stop`, else a day after the last start.
fn horizon(scenario: &Scenario, flows: &[PlannedFlow]) -> (Time, &'static str) {
    let last_start = flows.iter().map(|f| f.start.0).max().unwrap_or(0);
    match scenario.stop_ns {
        Some(stop) => (Time(stop), "stop_time"),
        None => (Time(last_start + DEFAULT_HORIZON_NS), "horizon"),
    }
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
