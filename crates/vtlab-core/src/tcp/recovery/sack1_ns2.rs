//! ns-2.35's Sack1 (`Sack1TcpAgent`, tcp/tcp-sack1.cc, on the `ScoreBoardRQ`
//! of tcp/scoreboard-rq.cc and tcp/rq.cc): the `sack` recovery under the
//! `ns2` profile, rule by rule (docs/stack-profiles.md, rules S1–S8).
//!
//! ns-2 counts in packets; here packet n is the segment starting at byte
//! n·MSS (ns-2 numbers it n + 1, its packet 0 being the pseudo-SYN, so
//! `ReassemblyQueue::nexthole`'s reading of a hole at 0 as "none" never
//! concerns data). Where vtlab RFC 6675's `Sack` keeps a scoreboard of every
//! segment and derives `pipe`, Sack1 keeps:
//!
//! * the SACKed runs the receiver reported, merged (the reassembly queue),
//!   updated only by duplicate ACKs and by ACKs during fast recovery, and
//!   emptied by every other new ACK, at the end of recovery and by a timeout;
//! * `h_seqno_`, the lowest packet `GetNextRetran` may offer: each hole below
//!   the highest SACKed run goes out once per scoreboard;
//! * `pipe_`, an integer set when recovery starts (packets outstanding less
//!   `numdupacks_`), lowered by one for every ACK in recovery and once more
//!   for a partial ACK (`partial_ack_` false), raised by one for every packet
//!   `send_much` sends.
//!
//! Outside fast recovery `send_much` sends only new data (the scoreboard is
//! empty whenever it runs with no duplicate ACK pending), as
//! [`send_classic`] does.

use super::{enter_fast_recovery, retransmit_head, send_classic, NewAck, RecoveryOps, SackUpdate};
use crate::engine::Time;
use crate::net::Packet;
use crate::tcp::conn::Conn;
use crate::tcp::state::CaState;

/// The reassembly queue of `ScoreBoardRQ`: SACKed runs of packets
/// `[left, right)`, sorted, disjoint and not adjacent.
#[derive(Clone, Debug, Default)]
struct RqScoreBoard {
    runs: Vec<(u64, u64)>,
    /// `sack_min`: the first packet above the cumulative ACK at the last update.
    sack_min: u64,
    /// `h_seqno_` (None: ns-2's −1).
    h_seqno: Option<u64>,
    /// `changed_`: whether the last update changed the runs.
    changed: bool,
}

impl RqScoreBoard {
    /// Packets the runs hold (`ReassemblyQueue::total`).
    fn total(&self) -> u64 {
        self.runs.iter().map(|(l, r)| r - l).sum()
    }

    /// `ClearScoreBoard`: the runs and `h_seqno_` go; `sack_min` stays.
    fn clear(&mut self) {
        self.runs.clear();
        self.h_seqno = None;
    }

    /// `UpdateScoreBoard(last_ack_, tcph)` with `first_unacked` =
    /// last_ack_ + 1: drop what the cumulative ACK covers (`cleartonxt`,
    /// which counts as a change whenever runs were held), then add each
    /// block (`ReassemblyQueue::add`). Returns the packets newly SACKed.
    fn update(&mut self, first_unacked: u64, blocks: &[(u64, u64)]) -> u64 {
        self.changed = false;
        if self.sack_min < first_unacked {
            self.sack_min = first_unacked;
            if !self.runs.is_empty() {
                self.runs.retain(|&(_, r)| r > first_unacked);
                for run in &mut self.runs {
                    run.0 = run.0.max(first_unacked);
                }
                self.changed = true;
            }
        }
        let before = self.total();
        for &(l, r) in blocks.iter().filter(|(l, r)| l < r) {
            self.add(l, r);
        }
        let after = self.total();
        self.changed |= after != before;
        after - before
    }

    /// `ReassemblyQueue::add`: insert `[l, r)`, merging what it overlaps or touches.
    fn add(&mut self, mut l: u64, mut r: u64) {
        let mut merged = Vec::with_capacity(self.runs.len() + 1);
        for &(a, b) in &self.runs {
            if b < l || a > r {
                merged.push((a, b));
            } else {
                l = l.min(a);
                r = r.max(b);
            }
        }
        let at = merged.partition_point(|&(a, _)| a < l);
        merged.insert(at, (l, r));
        self.runs = merged;
    }

    /// `GetNextRetran` (through `ReassemblyQueue::nexthole`): from
    /// max(`h_seqno_`, `sack_min`), the first packet not SACKed that has a
    /// SACKed run above it; None when no run lies above. `h_seqno_` moves
    /// up to what it returns.
    fn next_retran(&mut self) -> Option<u64> {
        let seq = self.h_seqno.map_or(self.sack_min, |h| h.max(self.sack_min));
        self.h_seqno = Some(seq);
        let mut runs = self.runs.iter().skip_while(|&&(_, r)| r < seq);
        let hole = match runs.next() {
            Some(&(l, _)) if l > seq => seq,
            Some(&(_, r)) => {
                runs.next()?;
                r
            }
            None => return None,
        };
        self.h_seqno = Some(hole);
        Some(hole)
    }

    /// `MarkRetran`: `h_seqno_` passes a packet sent again.
    fn mark_retran(&mut self, seq: u64) {
        if self.h_seqno.is_none_or(|h| seq >= h) {
            self.h_seqno = Some(seq + 1);
        }
    }
}

#[derive(Clone, Debug, Default)]
pub(crate) struct Sack1Ns2 {
    sb: RqScoreBoard,
    /// `pipe_`, in packets (ns-2's int, which may fall below zero).
    pipe: i64,
    /// `timeout_`: a timeout and no new ACK since (duplicates are ignored).
    timeout: bool,
}

/// Byte ranges as packet ranges: a block `[s, e)` covers packets s/MSS to
/// ⌈e/MSS⌉ (the transfer's last packet may be short); nothing beyond
/// `snd_max` counts (a block there would offer unsent data for resending).
fn packets(blocks: &[(u64, u64)], mss: u64, snd_max: u64) -> Vec<(u64, u64)> {
    blocks
        .iter()
        .map(|&(s, e)| (s / mss, e.min(snd_max).div_ceil(mss)))
        .collect()
}

impl Sack1Ns2 {
    /// Transmit packet `seq` (a number) again.
    fn resend(&mut self, c: &mut Conn, now: Time, seq: u64, out: &mut Vec<Packet>) {
        let start = seq * c.cfg.mss;
        let len = c.cfg.mss.min(c.snd_max - start);
        self.sb.mark_retran(seq);
        c.transmit(now, start, len, out);
    }
}

impl RecoveryOps for Sack1Ns2 {
    /// pipe_ during fast recovery; FlightSize otherwise.
    fn bytes_in_flight(&self, c: &Conn) -> u64 {
        if c.ca_state == CaState::Recovery {
            self.pipe.max(0) as u64 * c.cfg.mss
        } else {
            c.flight_size()
        }
    }

    /// `Sack1TcpAgent::recv` before the window logic. In fast recovery every
    /// ACK lowers pipe_; a partial ACK lowers it again and, as a duplicate,
    /// updates the scoreboard; an old ACK does nothing else. Outside it, a
    /// new ACK empties the scoreboard and ends `timeout_`; a duplicate
    /// updates it unless a timeout came since the last new ACK.
    fn on_ack_arrival(
        &mut self,
        c: &Conn,
        _now: Time,
        ack: u64,
        blocks: &[(u64, u64)],
        _ts_ecr: Time,
    ) -> SackUpdate {
        let mss = c.cfg.mss;
        let first_unacked = ack.div_ceil(mss);
        self.sb.changed = false;
        let mut newly = 0;
        if c.ca_state == CaState::Recovery {
            self.pipe -= 1;
            let full = c.recover.is_some_and(|r| ack >= r);
            if ack > c.snd_una && !full {
                self.pipe -= 1;
            }
            if ack >= c.snd_una && !full {
                newly = self
                    .sb
                    .update(first_unacked, &packets(blocks, mss, c.snd_max));
            }
        } else if ack > c.snd_una {
            self.sb.clear();
            self.timeout = false;
        } else if ack == c.snd_una && !self.timeout {
            newly = self
                .sb
                .update(first_unacked, &packets(blocks, mss, c.snd_max));
        }
        SackUpdate {
            newly_sacked: newly * mss,
            sacked_acked: 0,
        }
    }

    /// A duplicate ACK counts toward `numdupacks_` only if it changed the
    /// scoreboard (`CheckUpdate`).
    fn counts_dupack(&self) -> bool {
        self.sb.changed
    }

    /// After a timeout, once a new ACK came (`timeout_` false), a duplicate
    /// that changed the scoreboard counts: below `numdupacks_`, `singledup_`'s
    /// `send_one` sends (the sender's limited transmit).
    fn counts_dupack_in_loss(&self) -> bool {
        self.sb.changed
    }

    /// `Sack1TcpAgent::recv` ends recovery with `newack` alone, no `opencwnd`.
    fn grows_on_recovery_exit(&self) -> bool {
        false
    }

    /// `dupack_action` (its `bug_fix_` guard is the sender's,
    /// `recover_guard_one_past`), `sack_action`: recover_ = maxseq_, pipe_ = maxseq_ −
    /// highest_ack_ − numdupacks_ (`oldCode_` and `LimTransmitFix_` false),
    /// the timer restarted and the timed packet forgotten
    /// (`reset_rtx_timer(1,0)`), ssthresh_ and cwnd_ halved
    /// (`slowdown(CLOSE_SSTHRESH_HALF|CLOSE_CWND_HALF)`: the controller's
    /// ssthresh, cwnd = ssthresh), the first unacknowledged packet marked
    /// and resent outside pipe_.
    fn enter(&mut self, c: &mut Conn, now: Time, _newly_sacked: u64, out: &mut Vec<Packet>) {
        let mss = c.cfg.mss;
        let outstanding = (c.snd_max - c.snd_una).div_ceil(mss);
        self.pipe = outstanding as i64 - i64::from(c.cfg.dupack_threshold);
        let flight = c.flight_size();
        enter_fast_recovery(c, now, flight);
        if !c.cc_owns_cwnd {
            c.w.cwnd = c.w.ssthresh;
        }
        c.timed = None;
        c.set_rto_timer(now);
        self.sb.mark_retran(c.snd_una / mss);
        retransmit_head(c, now, out);
    }

    /// A duplicate in recovery: pipe_ fell on arrival; no window inflation.
    fn on_dupack(&mut self, _c: &mut Conn, _newly_sacked: u64) {}

    /// A partial ACK (`partial_ack_` false): the timer restarted with the
    /// backoff it had (`newtimer`), then the backoff ends (`t_backoff_ = 1`).
    /// No retransmission here: `send_much` fills the pipe.
    fn on_partial_ack(
        &mut self,
        c: &mut Conn,
        now: Time,
        _a: &NewAck,
        _out: &mut Vec<Packet>,
    ) -> bool {
        c.set_rto_timer(now);
        c.rtt.clear_backoff();
        false
    }

    /// A full ACK: `ClearScoreBoard`.
    fn on_exit(&mut self) {
        self.sb.clear();
    }

    /// `Sack1TcpAgent::timeout`: `ClearScoreBoard`, `timeout_` set, then
    /// `TcpAgent::timeout`: go back N from the first unacknowledged packet.
    fn on_timeout(&mut self, c: &mut Conn, _now: Time) {
        self.sb.clear();
        self.timeout = true;
        c.snd_nxt = c.snd_una;
    }

    /// `Sack1TcpAgent::send_much`. In fast recovery, while pipe_ < int(cwnd_):
    /// the packet `GetNextRetran` offers if it lies within highest_ack_ +
    /// `wnd_`, else a new packet if that lies within it too; each one sent
    /// raises pipe_. Outside recovery, new data within min(cwnd_, wnd_).
    fn send(&mut self, c: &mut Conn, now: Time, out: &mut Vec<Packet>) {
        if c.ca_state != CaState::Recovery {
            send_classic(c, now, out);
            return;
        }
        let mss = c.cfg.mss;
        while self.pipe < (c.w.cwnd / mss) as i64 && c.snd_una < c.total {
            if c.pacing_holds(now) {
                break;
            }
            match self.sb.next_retran() {
                Some(seq) if (seq + 1) * mss <= c.snd_una + c.rwnd => {
                    self.resend(c, now, seq, out);
                }
                Some(_) => break,
                None => {
                    let Some(len) = c.next_new_segment(false) else {
                        break;
                    };
                    c.transmit(now, c.snd_max, len, out);
                    c.snd_max += len;
                    c.snd_nxt = c.snd_max;
                }
            }
            self.pipe += 1;
        }
    }
}

#[cfg(test)]
mod tests;
