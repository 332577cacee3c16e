//! Packets, loss models, links and link families.

pub mod cellular;
pub mod family;
pub mod link;
pub mod loss;
mod packet;
pub mod qdisc;
pub mod routing;
pub mod wifi;

pub use link::{LinkDir, LinkDirStats, LinkParams};
pub use loss::{LossConf, LossModel, Sojourn};
pub use packet::{NodeId, Packet, PacketKind, IP_HEADER_BYTES, MAX_SACK_BLOCKS};
