//! RTT samples without timestamps as ns-3.44 takes them (`ns3` profile,
//! `StackBehaviour::rtt_every_segment`): `TcpSocketBase::m_history` holds one
//! entry per transmitted segment (`UpdateRttHistory`), and every ACK that
//! covers the oldest entry gives a sample from that entry's send time unless
//! it was retransmitted (Karn), then drops the entries it covers
//! (`EstimateRtt`); a timeout empties it (`ReTxTimeout`). BSD and ns-2 time
//! one segment per round trip instead (`Conn::timed`).
//!
//! Memory: one entry per segment in flight, at most the send buffer over the
//! MSS.

use std::collections::VecDeque;

use crate::engine::{Duration, Time};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Entry {
    start: u64,
    end: u64,
    sent: Time,
    retx: bool,
}

#[derive(Clone, Debug, Default)]
pub struct RttHistory {
    entries: VecDeque<Entry>,
}

impl RttHistory {
    /// `UpdateRttHistory`: a new segment is appended; a retransmission marks
    /// the entry it starts in and sets its end to the retransmission's.
    pub fn on_send(&mut self, now: Time, seq: u64, len: u64, retransmission: bool) {
        if !retransmission {
            self.entries.push_back(Entry {
                start: seq,
                end: seq + len,
                sent: now,
                retx: false,
            });
        } else if let Some(e) = self
            .entries
            .iter_mut()
            .find(|e| seq >= e.start && seq < e.end)
        {
            e.retx = true;
            e.end = seq + len;
        }
    }

    /// `EstimateRtt` for an ACK of `ack`: the sample, if any.
    pub fn on_ack(&mut self, now: Time, ack: u64) -> Option<Duration> {
        let sample = self
            .entries
            .front()
            .filter(|e| !e.retx && ack >= e.end)
            .map(|e| now - e.sent);
        while self.entries.front().is_some_and(|e| e.end <= ack) {
            self.entries.pop_front();
        }
        sample.filter(|d| d.0 > 0)
    }

    /// `ReTxTimeout`: `m_history.clear()`.
    pub fn clear(&mut self) {
        self.entries.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn every_ack_covering_the_oldest_segment_is_a_sample() {
        // Segments [0,1000) at 0 ms, [1000,2000) at 1 ms, [2000,3000) at 2 ms.
        let mut h = RttHistory::default();
        for i in 0..3 {
            h.on_send(Time(i * MS), i * 1000, 1000, false);
        }
        // ACK 1000 at 10 ms: 10 − 0 ms; ACK 3000 at 13 ms covers two entries,
        // the sample is from the oldest (1 ms): 12 ms (EstimateRtt uses front()).
        assert_eq!(h.on_ack(Time(10 * MS), 1000), Some(Duration(10 * MS)));
        assert_eq!(h.on_ack(Time(13 * MS), 3000), Some(Duration(12 * MS)));
        assert_eq!(h.on_ack(Time(14 * MS), 3000), None, "nothing left");
    }

    #[test]
    fn karn_and_the_timeout() {
        let mut h = RttHistory::default();
        h.on_send(Time(0), 0, 1000, false);
        h.on_send(Time(MS), 1000, 1000, false);
        // The head resent at 5 ms: its entry is marked, no sample from it; the
        // ACK still drops it, and the next ACK samples segment 2 (sent at 1 ms).
        h.on_send(Time(5 * MS), 0, 1000, true);
        assert_eq!(h.on_ack(Time(9 * MS), 1000), None);
        assert_eq!(h.on_ack(Time(10 * MS), 2000), Some(Duration(9 * MS)));
        // After a timeout nothing sent before it is timed (ReTxTimeout clears
        // m_history; a resend finds no entry to mark).
        h.on_send(Time(11 * MS), 2000, 1000, false);
        h.clear();
        h.on_send(Time(20 * MS), 2000, 1000, true);
        assert_eq!(h.on_ack(Time(30 * MS), 3000), None);
    }
}
