//! vtlab-core: a deterministic packet-level simulator of TCP congestion
//! control over the links vehicles use (power-line charging cables, 802.11,
//! LTE).
//!
//! A scenario spec (JSON/TOML, see [`spec`]) is resolved into a [`Scenario`],
//! which [`run`] simulates with a seed; the result is tables of flows and
//! links and optional sampled traces ([`metrics`]).

pub mod engine;
pub mod metrics;
pub mod net;
pub mod sim;
pub mod spec;
pub mod tcp;

pub use metrics::RunResult;
pub use sim::RunOptions;
pub use spec::{Scenario, SpecError};

/// The crate version, carried by every result row.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Run a resolved scenario with `seed`.
pub fn run(scenario: &Scenario, seed: u64, options: RunOptions) -> Result<RunResult, SpecError> {
    scenario.validate()?;
    let sim = sim::Simulation::new(scenario, seed, options);
    if let Some(flow) = sim.unreachable_flow() {
        return Err(SpecError::new(
            "flows",
            format!("flow '{flow}' has no path between its source and destination"),
        ));
    }
    Ok(sim.run())
}

/// Resolve a spec given as JSON text and run it.
pub fn run_spec_json(
    spec_json: &str,
    seed: u64,
    options: RunOptions,
) -> Result<RunResult, SpecError> {
    run(&spec::resolve_json(spec_json)?, seed, options)
}
