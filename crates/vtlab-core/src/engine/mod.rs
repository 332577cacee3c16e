//! Discrete-event machinery: integer time, a deterministic scheduler and
//! per-component random streams (and [`Num`], how messages echo numbers).

mod num;
mod rng;
mod scheduler;
mod time;

pub use num::{secs, Num};
pub use rng::{RngStream, StreamId};
pub use scheduler::Scheduler;
pub use time::{Duration, Time};
