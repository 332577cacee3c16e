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
    /// SACK blocks `[start, end)` (Ack), the first `sack_len` of them valid.
    pub sack: [(u64, u64); MAX_SACK_BLOCKS],
    pub sack_len: u8,
}

/// SACK blocks an ACK can carry (RFC 2018: 4, or 3 with timestamps).
pub const MAX_SACK_BLOCKS: usize = 4;

impl Packet {
    /// Whether this packet travels from the flow's sender to its receiver.
    pub fn toward_receiver(&self) -> bool {
        matches!(self.kind, PacketKind::Syn | PacketKind::Data)
    }

    /// The valid SACK blocks.
    pub fn sack_blocks(&self) -> &[(u64, u64)] {
        &self.sack[..usize::from(self.sack_len)]
    }
}
