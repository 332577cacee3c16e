//! TCP endpoints, sans-IO: they never read a clock or touch a link; the
//! simulation passes time in and collects the packets they emit.

pub mod cc;
mod config;
mod receiver;
mod rtt;
mod sender;

pub use config::{TcpConfig, TcpSpec};
pub use receiver::{Receiver, ReceiverStats};
pub use rtt::RttEstimator;
pub use sender::{CaState, Sender, SenderStats};
