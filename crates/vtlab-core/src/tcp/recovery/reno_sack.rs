//! NewReno without SACK as ns-3.44 runs it (`ns3` profile, switch
//! `StackBehaviour::reno_sack_marks`): not RFC 6582's FlightSize and window
//! inflation, but the SACK machinery of `TcpTxBuffer` fed with guesses.
//!
//! ns-3 keeps a flag triple (SACKed, lost, retransmitted) per sent segment
//! whether SACK is on or not. Without SACK the flags come from duplicate ACKs:
//!
//! * R1 `AddRenoSack`: each duplicate ACK in Disorder (limited transmit) and in
//!   Recovery, and the one that starts recovery, marks the first un-SACKed
//!   segment after the head as SACKed (`TcpSocketBase::DupAck`,
//!   `EnterRecovery`). The marks stay until a timeout (`ResetRenoSack`):
//!   going back to Open keeps them.
//! * R2 bytes in flight = sent − SACKed − lost + retransmitted
//!   (`TcpTxBuffer::BytesInFlight`); cwnd stays at ssthresh in recovery
//!   (`TcpClassicRecovery`), the marks do the inflation; ssthresh on entry
//!   comes from that count plus one segment (`EnterRecovery`).
//! * R3 a cumulative ACK that lands on a marked segment moves the mark on and
//!   marks the new head lost (`TcpTxBuffer::DiscardUpTo`): a lost head is sent
//!   again by the next transmission opportunity, in any state
//!   (`SendPendingData` → `NextSeg` rule 1).
//! * R4 a duplicate ACK in Disorder starts recovery below the threshold when
//!   the first marked segment from the head on is a lost one
//!   (`TcpTxBuffer::IsLost(m_highRxAckMark)`, RFC 6675 §5 step 2).
//! * R5 a partial ACK marks the head lost and resends it
//!   (`ProcessAck` → `MarkHeadAsLost`, `DoRetransmit`); the first one restarts
//!   the timer.
//! * R6 a timeout clears the marks and marks every sent segment lost
//!   (`ReTxTimeout` → `ResetRenoSack`, `SetSentListLost`): go-back-N through
//!   `NextSeg`, one segment per free window.
//! * R7 every timeout cuts ssthresh, from the count of R2 before it: ns-3
//!   keeps ssthresh in Loss when the head was resent (`IsHeadRetransmitted`),
//!   but asks after `SetSentListLost` has cleared every resent flag.
//!
//! Memory: one entry per segment in flight, at most the send buffer over the
//! MSS (plus one for a partly acknowledged segment).

use std::collections::VecDeque;

use super::{enter_fast_recovery, NewAck, RecoveryOps, SackUpdate};
use crate::engine::Time;
use crate::net::Packet;
use crate::tcp::conn::Conn;

/// One sent segment and its `TcpTxItem` flags.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Item {
    start: u64,
    len: u64,
    sacked: bool,
    lost: bool,
    retrans: bool,
}

/// Bytes of the sent list, and of its items with each flag, kept as the
/// list changes so that R2's count costs O(1) per call, not O(window).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Sums {
    sent: u64,
    sacked: u64,
    lost: u64,
    retrans: u64,
}

impl Sums {
    /// `bytes` of an item with these flags join (`add`) or leave the sums.
    fn count(&mut self, it: &Item, bytes: u64, add: bool) {
        let f = |sum: &mut u64, on: bool| {
            if on {
                *sum = if add { *sum + bytes } else { *sum - bytes };
            }
        };
        f(&mut self.sent, true);
        f(&mut self.sacked, it.sacked);
        f(&mut self.lost, it.lost);
        f(&mut self.retrans, it.retrans);
    }

    /// Set an item's flags, moving its bytes between the sums.
    fn flag(&mut self, it: &mut Item, sacked: bool, lost: bool, retrans: bool) {
        self.count(it, it.len, false);
        (it.sacked, it.lost, it.retrans) = (sacked, lost, retrans);
        self.count(it, it.len, true);
    }
}

/// ns-3's sent list without SACK, and NewReno's recovery on it.
#[derive(Clone, Debug, Default)]
pub(crate) struct RenoSack {
    items: VecDeque<Item>,
    sums: Sums,
    /// Start of the segment the last `AddRenoSack` marked (`m_highestSack`);
    /// None after a reset.
    highest_sack: Option<u64>,
    /// A partial ACK was seen in this recovery (`!m_isFirstPartialAck`).
    partial_ack_seen: bool,
}

impl RenoSack {
    /// R2: sent − SACKed − lost + retransmitted, in bytes.
    fn pipe(&self) -> u64 {
        debug_assert_eq!(self.sums, self.recount(), "the kept sums drifted");
        let s = &self.sums;
        (s.sent + s.retrans).saturating_sub(s.sacked + s.lost)
    }

    /// The sums counted afresh from the list (debug builds check the kept ones).
    fn recount(&self) -> Sums {
        let mut sums = Sums::default();
        for it in &self.items {
            sums.count(it, it.len, true);
        }
        sums
    }

    /// R1 `AddRenoSack`: mark the first un-SACKed segment after the head.
    fn add_reno_sack(&mut self) {
        if let Some(it) = self.items.iter_mut().skip(1).find(|it| !it.sacked) {
            self.sums.flag(it, true, it.lost, it.retrans);
            self.highest_sack = Some(it.start);
        }
    }

    /// `MarkHeadAsLost`: the head is neither SACKed nor counted as resent.
    fn mark_head_lost(&mut self) {
        if let Some(h) = self.items.front_mut() {
            self.sums.flag(h, false, true, false);
        }
    }

    /// R3 `DiscardUpTo(ack)`.
    fn discard_up_to(&mut self, ack: u64) {
        while let Some(h) = self.items.front().filter(|h| h.start + h.len <= ack) {
            self.sums.count(h, h.len, false);
            self.items.pop_front();
        }
        if let Some(h) = self.items.front_mut().filter(|h| h.start < ack) {
            self.sums.count(h, ack - h.start, false);
            h.len -= ack - h.start;
            h.start = ack;
        }
        if let Some(h) = self.items.front_mut().filter(|h| h.sacked) {
            self.sums.flag(h, false, h.lost, h.retrans);
            self.add_reno_sack();
            self.mark_head_lost();
        }
        if self.highest_sack.is_some_and(|s| s <= ack) {
            self.highest_sack = None;
        }
    }

    /// `NextSeg` rule 1 without SACK: the first segment marked lost and
    /// neither SACKed nor resent.
    fn first_lost(&self) -> Option<Item> {
        if self.sums.lost == 0 {
            return None;
        }
        self.items
            .iter()
            .find(|it| it.lost && !it.sacked && !it.retrans)
            .copied()
    }

    fn transmit(&mut self, c: &mut Conn, now: Time, seq: u64, len: u64, out: &mut Vec<Packet>) {
        if seq < c.snd_max {
            if let Some(it) = self.items.iter_mut().find(|it| it.start == seq) {
                self.sums.flag(it, it.sacked, it.lost, true);
            }
        } else {
            let it = Item {
                start: seq,
                len,
                sacked: false,
                lost: false,
                retrans: false,
            };
            self.sums.count(&it, len, true);
            self.items.push_back(it);
        }
        c.transmit(now, seq, len, out);
        c.snd_nxt = seq + len;
    }

    /// `DoRetransmit`: the first lost segment, else the head.
    fn retransmit(&mut self, c: &mut Conn, now: Time, out: &mut Vec<Packet>) {
        let it = self.first_lost().or(self.items.front().copied());
        if let Some(it) = it {
            self.transmit(c, now, it.start, it.len, out);
        }
    }
}

impl RecoveryOps for RenoSack {
    fn bytes_in_flight(&self, _c: &Conn) -> u64 {
        self.pipe()
    }

    fn on_ack_arrival(
        &mut self,
        c: &Conn,
        _now: Time,
        ack: u64,
        _blocks: &[(u64, u64)],
        _ts_ecr: Time,
    ) -> SackUpdate {
        if ack > c.snd_una {
            self.discard_up_to(ack);
        }
        SackUpdate::default()
    }

    /// R4 `IsLost(HighACK)`: from the head on, the first segment that is
    /// marked lost or SACKed is a lost one (never past the highest mark).
    fn head_lost(&self) -> bool {
        let (Some(h), Some(high)) = (self.items.front(), self.highest_sack) else {
            return false;
        };
        if h.start >= high {
            return false;
        }
        self.items
            .iter()
            .find(|it| it.lost || it.sacked)
            .is_some_and(|it| it.lost)
    }

    fn on_limited_transmit(&mut self, c: &mut Conn) {
        if c.cfg.limited_transmit {
            self.add_reno_sack();
        }
    }

    /// `EnterRecovery`: R1 mark, head lost, ssthresh for R2's count plus one
    /// segment, cwnd = ssthresh (`TcpClassicRecovery`), resend the head.
    fn enter(&mut self, c: &mut Conn, now: Time, _newly_sacked: u64, out: &mut Vec<Packet>) {
        self.add_reno_sack();
        self.mark_head_lost();
        let in_flight = self.pipe() + c.cfg.mss;
        enter_fast_recovery(c, now, in_flight);
        self.partial_ack_seen = false;
        if !c.cc_owns_cwnd {
            c.w.cwnd = c.w.ssthresh;
        }
        if let Some(h) = self.items.front().copied() {
            self.transmit(c, now, h.start, h.len, out);
        }
    }

    /// R1 in Recovery; cwnd unchanged (`TcpClassicRecovery::DoRecovery`
    /// inflates only the traced `m_cWndInfl`).
    fn on_dupack(&mut self, _c: &mut Conn, _newly_sacked: u64) {
        self.add_reno_sack();
    }

    /// R5.
    fn on_partial_ack(
        &mut self,
        c: &mut Conn,
        now: Time,
        _a: &NewAck,
        out: &mut Vec<Packet>,
    ) -> bool {
        self.mark_head_lost();
        self.retransmit(c, now, out);
        let restart_timer = !self.partial_ack_seen;
        self.partial_ack_seen = true;
        restart_timer
    }

    fn on_exit(&mut self) {
        self.partial_ack_seen = false;
    }

    /// R7: `IsHeadRetransmitted` after `SetSentListLost`, always false.
    fn head_resent(&self, _c: &Conn) -> bool {
        false
    }

    /// R6.
    fn on_timeout(&mut self, c: &mut Conn, _now: Time) {
        self.highest_sack = None;
        for it in &mut self.items {
            it.sacked = false;
            it.lost = true;
            it.retrans = false;
        }
        let sent = self.sums.sent;
        self.sums = Sums {
            sent,
            sacked: 0,
            lost: sent,
            retrans: 0,
        };
        c.snd_nxt = c.snd_una;
    }

    /// `SendPendingData`: while min(cwnd, rwnd) leaves a segment over the
    /// count of R2, a lost segment (R3, R6) or else a new one.
    fn send(&mut self, c: &mut Conn, now: Time, out: &mut Vec<Packet>) {
        let mss = c.cfg.mss;
        loop {
            if c.w.cwnd.min(c.rwnd) < self.pipe() + mss {
                break;
            }
            // rwnd bounds the count in flight only (`Window()`), as in
            // `Sack::send`: a test of the sent span against rwnd (NextSeg rule
            // 2) fed by vtlab's window, which shrinks by the out-of-order
            // bytes held, sent less than ns-3 (paired replay, docs/validation.md).
            let next = match self.first_lost() {
                Some(it) => Some((it.start, it.len)),
                None => c.next_new_segment(true).map(|len| (c.snd_max, len)),
            };
            let Some((seq, len)) = next else { break };
            if c.pacing_holds(now) {
                break;
            }
            self.transmit(c, now, seq, len, out);
            c.snd_max = c.snd_max.max(seq + len);
        }
    }
}

#[cfg(test)]
#[path = "reno_sack_tests.rs"]
mod tests;
