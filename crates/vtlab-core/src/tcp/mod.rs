//! TCP endpoints, sans-IO: they never read a clock or touch a link; the
//! simulation passes time in and collects the packets they emit.

mod autotune;
mod behaviour;
pub mod cc;
mod config;
mod conn;
mod delack;
mod ns2_rtt;
mod ns2_sack;
mod prr;
mod rack;
pub mod rate;
mod receiver;
mod recovery;
mod rtt;
pub mod rtt_hist;
mod rtt_history;
pub mod rtt_ratio;
pub mod rwnd;
mod scoreboard;
mod sender;
mod state;

pub use config::{option_bytes, TcpConfig, NS2_WINDOW_PACKETS};
pub use receiver::{Receiver, ReceiverStats};
pub use rtt::RttEstimator;
pub use sender::{Sender, SenderStats};
pub use state::{CaState, Recovery};
