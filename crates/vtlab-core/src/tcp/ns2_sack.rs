//! ns-2.35's SACK sink (`Agent/TCPSink/Sack1`: `Sacker::append_ack` and its
//! `SackStack`, tcp/tcp-sink.cc), the receiver's SACK blocks under the `ns2`
//! profile (rule S8 in docs/stack-profiles.md).
//!
//! Each ACK carries at most `maxSackBlocks_` (3) blocks. The first is the
//! run of received data holding the packet just received, if that packet
//! lies above the cumulative ACK; then come the blocks of earlier ACKs, most
//! recent first, as they were reported (not regrown), each dropped for good
//! once the newest run covers it. A packet above the cumulative ACK pushes
//! its run onto that history (which keeps `maxSackBlocks_` entries); an ACK
//! with nothing held out of order empties it (`seqno >= maxseen_`).
//! `generateDSacks_` is false, so there are no D-SACK blocks.

use std::collections::BTreeMap;

/// ns-2's `maxSackBlocks_` (ns-default.tcl).
const NS2_MAX_SACK_BLOCKS: usize = 3;

#[derive(Clone, Debug, Default)]
pub(crate) struct Ns2Sacker {
    /// `SackStack`: blocks of earlier ACKs, most recent first, in bytes.
    stack: Vec<(u64, u64)>,
}

impl Ns2Sacker {
    /// The blocks of the ACK for the segment starting at `seg`, with
    /// everything below `rcv_nxt` received and the runs `held` above it
    /// (disjoint, not adjacent), written to `out`; returns how many.
    pub fn blocks(
        &mut self,
        seg: u64,
        rcv_nxt: u64,
        held: &BTreeMap<u64, u64>,
        out: &mut [(u64, u64)],
    ) -> usize {
        if held.is_empty() {
            self.stack.clear();
            return 0;
        }
        let limit = out.len().min(NS2_MAX_SACK_BLOCKS);
        // The held run holding the packet, if it lies above the cumulative
        // ACK; else [0, rcv_nxt): sack_left 0, not reported.
        let run = held
            .range(..=seg)
            .next_back()
            .filter(|&(_, &e)| seg >= rcv_nxt && e > seg)
            .map(|(&s, &e)| (s, e));
        let recent = run.unwrap_or((0, rcv_nxt));
        let mut n = 0;
        if let Some(block) = run {
            out[0] = block;
            n = 1;
        }
        let mut k = 0;
        while n < limit && k < self.stack.len() {
            let (l, r) = self.stack[k];
            if recent.0 <= l && recent.1 >= r {
                self.stack.remove(k);
                continue;
            }
            out[n] = (l, r);
            n += 1;
            k += 1;
        }
        if run.is_some() {
            self.stack.insert(0, recent);
            self.stack.truncate(NS2_MAX_SACK_BLOCKS);
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: u64 = 1000;

    /// Packets `[l, r)` held, as byte runs.
    fn held(runs: &[(u64, u64)]) -> BTreeMap<u64, u64> {
        runs.iter().map(|&(l, r)| (l * P, r * P)).collect()
    }

    fn ack(s: &mut Ns2Sacker, seg: u64, rcv_nxt: u64, runs: &[(u64, u64)]) -> Vec<(u64, u64)> {
        let mut out = [(0, 0); 4];
        let n = s.blocks(seg * P, rcv_nxt * P, &held(runs), &mut out);
        out[..n].iter().map(|&(l, r)| (l / P, r / P)).collect()
    }

    #[test]
    fn newest_run_first_then_earlier_blocks_as_reported() {
        // Sacker::append_ack, packets numbered from 0, 0 received (seqno 0).
        let mut s = Ns2Sacker::default();
        // 2 arrives (hole 1): first block [2,3); pushed.
        assert_eq!(ack(&mut s, 2, 1, &[(2, 3)]), [(2, 3)]);
        // 4 (hole 3): [4,5), then the history [2,3).
        assert_eq!(ack(&mut s, 4, 1, &[(2, 3), (4, 5)]), [(4, 5), (2, 3)]);
        // 6: [6,7), [4,5), [2,3): three blocks, maxSackBlocks_.
        let runs = [(2, 3), (4, 5), (6, 7)];
        assert_eq!(ack(&mut s, 6, 1, &runs), [(6, 7), (4, 5), (2, 3)]);
        // 8: [8,9), [6,7), [4,5); the stack (size 3) lost [2,3) at the push
        // before, so it is never reported again although still held.
        let runs = [(2, 3), (4, 5), (6, 7), (8, 9)];
        assert_eq!(ack(&mut s, 8, 1, &runs), [(8, 9), (6, 7), (4, 5)]);
        // 5 fills 5: its run [4,7) covers [6,7) and [4,5), which are popped;
        // [8,9) follows as it was reported.
        let runs = [(2, 3), (4, 7), (8, 9)];
        assert_eq!(ack(&mut s, 5, 1, &runs), [(4, 7), (8, 9)]);
    }

    #[test]
    fn a_packet_at_the_cumulative_ack_reports_only_history() {
        let mut s = Ns2Sacker::default();
        ack(&mut s, 2, 1, &[(2, 3)]);
        ack(&mut s, 5, 1, &[(2, 3), (5, 6)]);
        // 1 arrives: cumulative ACK to 3 (2 was held); old_seqno ≤ seqno:
        // no first block, recent = [0, 3), which covers [2,3) (popped);
        // [5,6) remains. Nothing is pushed.
        assert_eq!(ack(&mut s, 1, 3, &[(5, 6)]), [(5, 6)]);
        assert_eq!(s.stack, vec![(5 * P, 6 * P)]);
        // 3 and 4 arrive: cumulative ACK 6 ≥ maxseen_: the stack is reset.
        assert!(ack(&mut s, 4, 6, &[]).is_empty());
        assert!(s.stack.is_empty());
    }
}
