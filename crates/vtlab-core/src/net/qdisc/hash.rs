//! ns-3's flow hash of an IPv4 packet (`Ipv4QueueDiscItem::Hash`), which
//! FQ-CoDel uses to pick a flow queue: 32-bit MurmurHash3 (x86 variant, seed
//! `0x8BADF00D`, ns-3's `Hash32` through `Murmur3::GetHash32` after `clear`)
//! over 17 bytes: source and destination address, protocol, source and
//! destination port and the perturbation, all big-endian. The ports are 0 for
//! a fragment other than the first (`fragOffset != 0`).

/// ns-3's `Murmur3::SEED`.
const SEED: u32 = 0x8BAD_F00D;

/// The transport protocol number of TCP.
pub const PROTO_TCP: u8 = 6;

/// One direction of a transport connection, as the hash sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FiveTuple {
    pub src: [u8; 4],
    pub dst: [u8; 4],
    pub protocol: u8,
    pub src_port: u16,
    pub dst_port: u16,
}

impl FiveTuple {
    /// The other direction of the same connection.
    pub fn reversed(self) -> Self {
        FiveTuple {
            src: self.dst,
            dst: self.src,
            src_port: self.dst_port,
            dst_port: self.src_port,
            ..self
        }
    }

    /// `Ipv4QueueDiscItem::Hash(perturbation)` of a packet of this tuple;
    /// `first_fragment` is false for fragments after the first (their ports
    /// are not read, so they hash with ports 0).
    pub fn ns3_hash(&self, first_fragment: bool, perturbation: u32) -> u32 {
        let (sp, dp) = if first_fragment {
            (self.src_port, self.dst_port)
        } else {
            (0, 0)
        };
        let mut buf = [0u8; 17];
        buf[0..4].copy_from_slice(&self.src);
        buf[4..8].copy_from_slice(&self.dst);
        buf[8] = self.protocol;
        buf[9..11].copy_from_slice(&sp.to_be_bytes());
        buf[11..13].copy_from_slice(&dp.to_be_bytes());
        buf[13..17].copy_from_slice(&perturbation.to_be_bytes());
        murmur3::murmur3_32(&mut std::io::Cursor::new(&buf[..]), SEED)
            .expect("hashing an in-memory buffer cannot fail")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn murmur3_matches_the_reference_vectors() {
        // Published MurmurHash3_x86_32 vectors (SMHasher): "" with seed 0 is 0,
        // "" with seed 1 is 0x514E28B7.
        let h = |b: &[u8], seed| murmur3::murmur3_32(&mut std::io::Cursor::new(b), seed).unwrap();
        assert_eq!(h(b"", 0), 0);
        assert_eq!(h(b"", 1), 0x514E_28B7);
    }

    #[test]
    fn the_v2g_flow_hashes_are_ns3s() {
        // ns-3.44's own Hash32 over the buffer Ipv4QueueDiscItem::Hash builds
        // (a 10-line C++ program linked to libns3.44-core): SA 10.1.1.1:49153
        // → EVCC 10.1.2.2:50000, TCP, perturbation 0.
        let t = FiveTuple {
            src: [10, 1, 1, 1],
            dst: [10, 1, 2, 2],
            protocol: PROTO_TCP,
            src_port: 49153,
            dst_port: 50000,
        };
        assert_eq!(t.ns3_hash(true, 0), 3_983_493_527);
        assert_eq!(t.ns3_hash(false, 0), 624_228_184);
        assert_eq!(t.reversed().ns3_hash(true, 0), 2_117_356_694);
        assert_eq!(t.reversed().ns3_hash(false, 0), 337_803_258);
        // FQ-CoDel's 1024 buckets: the data's first and later fragments land
        // in different flow queues (407 and 856).
        assert_eq!((3_983_493_527u32 % 1024, 624_228_184u32 % 1024), (407, 856));
    }
}
