//! vtlab-core: a deterministic packet-level simulator of TCP congestion
//! control over the links vehicles use (power-line charging cables, 802.11,
//! LTE).
//!
//! A scenario spec (JSON/TOML, see [`spec`]) is resolved into a [`Scenario`]
//! and checked into a [`Plan`], which [`run_plan`] simulates with a seed; the result is tables of flows and
//! links and optional sampled traces ([`metrics`]).

#[cfg(target_os = "linux")]
pub mod emu;
pub mod engine;
pub mod metrics;
pub mod net;
pub mod sim;
pub mod spec;
pub mod tcp;

pub use metrics::{CaptureReport, RunResult};
pub use sim::{Capture, CaptureError, CaptureRequest, Hooks, Plan, RunOptions};
pub use spec::{Scenario, SpecError};

/// The crate version, carried by every result row.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Check a resolved scenario and run it with `seed`.
pub fn run(scenario: &Scenario, seed: u64, options: RunOptions) -> Result<RunResult, SpecError> {
    Ok(run_plan(&spec::plan(scenario)?, seed, options))
}

/// Run a checked plan with `seed` (see [`spec::plan`]).
pub fn run_plan(plan: &Plan, seed: u64, options: RunOptions) -> RunResult {
    sim::Simulation::new(plan, seed, options).run()
}

/// As [`run_plan`], with [`Hooks`] (interruption, a trace sink); `None` when
/// a hook stopped the run.
pub fn run_plan_with(
    plan: &Plan,
    seed: u64,
    options: RunOptions,
    hooks: Hooks<'_>,
) -> Option<RunResult> {
    sim::Simulation::new(plan, seed, options).run_with(hooks)
}

/// As [`run_plan_with`], writing the packet captures `capture` asks for. The
/// request is checked (names, directory) before the first event.
pub fn run_plan_captured(
    plan: &Plan,
    seed: u64,
    options: RunOptions,
    capture: &CaptureRequest,
    hooks: Hooks<'_>,
) -> Result<Option<RunResult>, SpecError> {
    let capture = Capture::open(plan, capture)?;
    Ok(sim::Simulation::new(plan, seed, options)
        .with_capture(capture)
        .run_with(hooks))
}

/// Resolve a spec given as JSON text and run it.
pub fn run_spec_json(
    spec_json: &str,
    seed: u64,
    options: RunOptions,
) -> Result<RunResult, SpecError> {
    run(&spec::resolve_json(spec_json)?, seed, options)
}

/// Longest channel series [`channel_series`] produces: one hour of TTIs.
pub const MAX_SERIES_MS: u64 = 3_600_000;

/// Per-TTI output of a cellular direction's channel model, as a run with
/// `seed` sees it: the same random stream as the simulation's direction.
#[derive(Clone, Debug, Default)]
pub struct ChannelSeries {
    /// TTI end, ms (the time its transport block is delivered).
    pub time_ms: Vec<u64>,
    pub bytes: Vec<u32>,
    pub lost: Vec<bool>,
    pub rsrp_dbm: Vec<f64>,
    pub sinr_db: Vec<f64>,
    pub cqi: Vec<u8>,
    pub itbs: Vec<u8>,
}

/// The channel model's output for `n_ms` TTIs of the cellular direction of
/// `link` leaving node `from` in `scenario` (e.g. `lte`, `enb` for the
/// downlink of `lte-cabin`). Errors name the argument.
pub fn channel_series(
    scenario: &Scenario,
    link: &str,
    from: &str,
    n_ms: u64,
    seed: u64,
) -> Result<ChannelSeries, SpecError> {
    use net::cellular::{channel::Channel, CapacityConf};
    if !(1..=MAX_SERIES_MS).contains(&n_ms) {
        return Err(SpecError::new(
            "n_ms",
            format!("{n_ms} is outside [1, {MAX_SERIES_MS}] ms (one hour)"),
        ));
    }
    spec::plan(scenario)?;
    let l = scenario
        .links
        .iter()
        .find(|l| l.name == link)
        .ok_or_else(|| {
            let names: Vec<&str> = scenario.links.iter().map(|l| l.name.as_str()).collect();
            SpecError::new(
                "link",
                format!("no link '{link}' (links: {})", names.join(", ")),
            )
        })?;
    let (cap, to) = if l.a == from {
        (&l.capacity_ab, &l.b)
    } else if l.b == from {
        (&l.capacity_ba, &l.a)
    } else {
        return Err(SpecError::new(
            "from",
            format!(
                "'{from}' is not an end of link '{link}' ({} or {})",
                l.a, l.b
            ),
        ));
    };
    let Some(CapacityConf::Model { channel, .. }) = cap else {
        return Err(SpecError::new(
            "from",
            format!("the direction {from}->{to} of '{link}' has no channel model"),
        ));
    };
    let label = format!("capacity/{link}/{from}->{to}");
    let mut ch = Channel::new(channel, engine::RngStream::for_component(seed, &label));
    let n = n_ms as usize;
    let mut s = ChannelSeries {
        time_ms: Vec::with_capacity(n),
        bytes: Vec::with_capacity(n),
        lost: Vec::with_capacity(n),
        rsrp_dbm: Vec::with_capacity(n),
        sinr_db: Vec::with_capacity(n),
        cqi: Vec::with_capacity(n),
        itbs: Vec::with_capacity(n),
    };
    for k in 1..=n_ms {
        let t = ch.next_tti();
        s.time_ms.push(k);
        s.bytes.push(t.bytes);
        s.lost.push(t.lost);
        s.rsrp_dbm.push(t.rsrp_dbm);
        s.sinr_db.push(t.sinr_db);
        s.cqi.push(t.cqi);
        s.itbs.push(t.itbs);
    }
    Ok(s)
}
