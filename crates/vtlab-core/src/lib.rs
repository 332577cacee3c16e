//! vtlab-core: a deterministic packet-level simulator of TCP congestion
//! control over the links vehicles use (power-line charging cables, 802.11,
//! LTE).
//!
//! A scenario spec (JSON/TOML, see [`spec`]) is resolved into a [`Scenario`]
//! and checked into a [`Plan`], which [`run_plan`] simulates with a seed; the result is tables of flows and
//! links and optional sampled traces ([`metrics`]).

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
