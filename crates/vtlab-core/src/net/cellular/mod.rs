//! A cellular (LTE) link direction: capacity given per millisecond, by a trace
//! or by a channel model, and a deep per-user buffer at the sender's side.

pub mod schedule;
pub mod trace;

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::engine::RngStream;
use schedule::{OpportunitySource, TraceSource};

/// Where one cellular direction's capacity comes from (resolved, checked by
/// the spec layer).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum CapacityConf {
    /// A mahimahi trace: opportunity times in ms (repeated with the last
    /// timestamp as period), each of `opportunity_bytes` bytes.
    Trace {
        /// Where it came from (a file name, or "inline"): documentation only.
        source: String,
        opportunity_bytes: u32,
        times_ms: Arc<[u64]>,
    },
}

impl CapacityConf {
    /// The opportunity source of one run; `rng` is the direction's own stream
    /// (used by the channel model).
    pub fn source(&self, _rng: RngStream) -> Box<dyn OpportunitySource> {
        match self {
            CapacityConf::Trace {
                opportunity_bytes,
                times_ms,
                ..
            } => Box::new(TraceSource::new(times_ms.clone(), *opportunity_bytes)),
        }
    }
}
