//! Discrete-event machinery: integer time, a deterministic scheduler and
//! per-component random streams.

mod rng;
mod scheduler;
mod time;

pub use rng::{RngStream, StreamId};
pub use scheduler::Scheduler;
pub use time::{Duration, Time};
