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
    /// IPv4 fragmentation: this is fragment `frag_index` of `frag_count`
    /// (1 for an unfragmented packet); `ip_bytes` is the fragment's size.
    pub frag_index: u16,
    pub frag_count: u16,
    /// A data segment of a two-way connection that also carries the
    /// acknowledgement of the opposite direction (`ack`, `rwnd`, the SACK
    /// blocks and `ts_ecr` are then that ACK's): the receiving end hands it
    /// to both its receiver and its sender ([`Packet::piggybacked_ack`]).
    pub piggyback: bool,
    /// PSH (Data): the segment ends the data the application had written
    /// when it was sent (Linux marks the last segment of each write). Linux's
    /// receiver acknowledges such a short segment as soon as the application
    /// reads it, outside interactive mode ([`crate::tcp::Receiver`]).
    pub push: bool,
}

/// Bytes of the IPv4 header repeated in every fragment.
pub const IP_HEADER_BYTES: u32 = 20;

/// SACK blocks an ACK can carry (RFC 2018: 4, or 3 with timestamps).
pub const MAX_SACK_BLOCKS: usize = 4;

impl Packet {
    /// Whether this packet travels from the flow's sender to its receiver.
    pub fn toward_receiver(&self) -> bool {
        matches!(self.kind, PacketKind::Syn | PacketKind::Data)
    }

    /// Split into IPv4 fragments that fit `mtu` (RFC 791: fragment payloads
    /// are multiples of 8 bytes except the last). Unfragmented if it fits.
    pub fn fragments(&self, mtu: u32) -> impl Iterator<Item = Packet> + '_ {
        let payload = self.ip_bytes.saturating_sub(IP_HEADER_BYTES);
        let per_fragment = ((mtu.saturating_sub(IP_HEADER_BYTES)) / 8 * 8).max(8);
        let count = if self.ip_bytes <= mtu {
            1
        } else {
            payload.div_ceil(per_fragment)
        };
        (0..count).map(move |i| {
            let mut f = *self;
            if count > 1 {
                f.ip_bytes = IP_HEADER_BYTES + per_fragment.min(payload - i * per_fragment);
            }
            f.frag_index = i as u16;
            f.frag_count = count as u16;
            f
        })
    }

    /// The acknowledgement a piggybacking data segment carries, as the ACK of
    /// the opposite half-connection `flow` (sent to the segment's destination).
    pub fn piggybacked_ack(&self, flow: u32) -> Packet {
        Packet {
            flow,
            kind: PacketKind::Ack,
            seq: 0,
            len: 0,
            piggyback: false,
            ..*self
        }
    }

    /// The valid SACK blocks.
    pub fn sack_blocks(&self) -> &[(u64, u64)] {
        &self.sack[..usize::from(self.sack_len)]
    }
}
