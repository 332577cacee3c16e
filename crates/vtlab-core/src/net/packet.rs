//! The simulated packet: a small `Copy` value, never heap-allocated.

use crate::engine::Time;

/// Index of a node in the topology.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(pub u32);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PacketKind {
    /// Connection request, sender to receiver.
    Syn,
    /// Connection accept, receiver to sender; carries the receive window.
    SynAck,
    /// Payload bytes `[seq, seq + len)`, sender to receiver.
    Data,
    /// Cumulative acknowledgement, receiver to sender.
    Ack,
}

/// A TCP/IP packet of one flow. Sequence numbers are absolute byte offsets
/// of the transfer (the simulation never wraps them).
#[derive(Clone, Copy, Debug)]
pub struct Packet {
    pub flow: u32,
    pub dst: NodeId,
    pub kind: PacketKind,
    /// First payload byte (Data).
    pub seq: u64,
    /// Payload bytes (Data).
    pub len: u32,
    /// Next byte expected by the receiver (Ack, SynAck).
    pub ack: u64,
    /// Receive window advertised by the receiver, bytes (Ack, SynAck).
    pub rwnd: u64,
    /// Timestamp value: the send time (RFC 7323 TSval).
    pub ts_val: Time,
    /// Timestamp echo (RFC 7323 TSecr).
    pub ts_ecr: Time,
    /// IP packet size in bytes: payload plus TCP/IP headers. Links add framing.
    pub ip_bytes: u32,
}

impl Packet {
    /// Whether this packet travels from the flow's sender to its receiver.
    pub fn toward_receiver(&self) -> bool {
        matches!(self.kind, PacketKind::Syn | PacketKind::Data)
    }
}
