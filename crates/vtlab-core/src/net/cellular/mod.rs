//! A cellular (LTE) link direction: capacity given per millisecond, by a trace
//! or by a channel model, and a deep per-user buffer at the sender's side.

pub mod channel;
pub mod tables;
