//! From a resolved [`Scenario`] to the engine's [`Plan`]: every name looked up
//! once, every value checked against its documented range. This is the only
//! way to build a plan, so the engine never sees an unchecked value and no
//! lookup can fall back silently on a default.

use super::loss::check_loss;
use super::tcp::check_config;
use super::{Scenario, SpecError};
use crate::engine::{Duration, Time};
use crate::net::{LinkParams, NodeId};
use crate::sim::plan::{path, shortest_path_routes, Plan, PlannedFlow, PlannedLink};
use crate::tcp::cc;

/// Link rates, bit/s: at least 1 bit/s, at most 10 Tbit/s.
pub const RATE_RANGE_BPS: (u64, u64) = (1, 10_000_000_000_000);
/// Longest propagation delay, start time or stop time accepted (one day, ns):
/// keeps every sum of simulated times far from the 2⁶⁴ ns limit.
pub const MAX_TIME_NS: u64 = 86_400_000_000_000;
/// Largest link-layer framing overhead per packet, bytes.
pub const MAX_FRAMING_BYTES: u32 = 65_535;

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
        check_range(p("rate_bps"), l.rate_bps, RATE_RANGE_BPS, " bit/s")?;
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
                framing_bytes: l.framing_bytes,
                mtu_bytes: l.mtu_bytes,
            },
            loss_ab: l.loss_ab.clone(),
            loss_ba: l.loss_ba.clone(),
        });
    }
    let dirs: Vec<(NodeId, NodeId)> = links
        .iter()
        .flat_map(|l| [(l.a, l.b), (l.b, l.a)])
        .collect();
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
        });
    }
    if let Some(stop) = scenario.stop_ns {
        check_range("stop".into(), stop, (1, MAX_TIME_NS), " ns")?;
    }
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
        flows,
        routes,
        stop: scenario.stop_ns.map(Time),
        trace_interval: Duration(scenario.trace_interval_ns),
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
