//! ns-2.35 Vegas's own loss handling (`VegasTcpAgent::recv`, `timeout`,
//! `vegas_expire` in tcp/tcp-vegas.cc): the recovery of the `vegas`
//! controller under the `ns2` profile, whatever `tcp.recovery` says but
//! `sack` (ns-2's Vegas agent has no SACK). Rules V8–V12 in
//! docs/stack-profiles.md.
//!
//! There is no recovery state: duplicate ACKs are counted (`dupacks_`, the
//! sender's `dupacks`) and any new ACK ends what they started, as in Reno.
//! "Third" below is `numdupacks_`, the `dupack_threshold` (3 by default).
//!
//! * A fine-grained timeout `v_timeout_` = (v_sa_/4 + v_sd_)/2 · 17/16
//!   follows each sample of a packet sent once (v_sa_ 8·srtt, v_sd_ 4·mdev,
//!   in seconds as ns-2's doubles; first set from the pseudo-SYN's round
//!   trip: v_sa_ = 8t, v_sd_ = t).
//! * A duplicate ACK retransmits the first unacknowledged packet when it is
//!   the third, or when that packet has been out for `v_timeout_` or longer
//!   (`vegas_expire`), unless a timeout came last and the ACKs have not
//!   passed `recover_` (`bug_fix_`). Then: `v_worried_` = 2, `v_timeout_`
//!   doubles if the packet had been resent before (else grows by 1/8), the
//!   coarse timer is backed off and restarted (`reset_rtx_timer(1)`), and
//!   the window is cut only if it has not changed since the packet was sent
//!   (`t_cwnd_changed_` < its send time): `v_newcwnd_` = 2 if window() ≤ 3,
//!   window()/2 if the packet had been resent, else window() − window()/4;
//!   cwnd = `v_newcwnd_` + dupacks. `dupacks_` becomes 3 if the packet had
//!   been sent once. ssthresh is not touched.
//! * Each further duplicate past the third adds a packet to cwnd; nothing is
//!   sent on the first two duplicates (`send_much` waits for dupacks_ 0 or ≥ 3).
//! * A new ACK after more than three duplicates deflates cwnd to
//!   `v_newcwnd_` (if above it) and sets ssthresh 2; on the two new ACKs
//!   after a retransmission (`v_worried_`) the new first unacknowledged
//!   packet is resent at once if it has been out for `v_timeout_`.
//! * A timeout (the sender goes back N): `t_cwnd_changed_` = now,
//!   `v_newcwnd_` 0, and no fast retransmit until the ACKs pass `recover_`.

use std::collections::VecDeque;

use super::{send_window, RecoveryOps, SackUpdate};
use crate::engine::Time;
use crate::net::{Packet, PacketKind};
use crate::tcp::conn::Conn;

/// At most this many packets past the first unacknowledged one keep a send
/// record (ns-2 keeps `window_` of them); beyond, none does.
const MAX_RECORDS: u64 = 1 << 20;

#[derive(Clone, Debug, Default)]
pub(crate) struct VegasNs2Recovery {
    /// `v_sendtime_`, `v_transmits_` of packets `first`, `first + 1`, ….
    sent: VecDeque<(Time, u32)>,
    first: u64,
    /// `v_sa_`, `v_sd_`, `v_timeout_` in seconds; None before the first ACK
    /// (`firstrecv_` < 0, `v_timeout_` 1000 s).
    fine: Option<(f64, f64, f64)>,
    /// `v_worried_`.
    worried: u32,
    /// `t_cwnd_changed_`.
    cwnd_changed: Option<Time>,
    /// `v_newcwnd_`, packets.
    newcwnd: u64,
    /// `last_cwnd_action_ == CWND_ACTION_TIMEOUT`.
    after_timeout: bool,
    /// The time of the ACK being processed, and whether, as a duplicate, it
    /// found the first unacknowledged packet expired.
    now: Time,
    expired: bool,
    /// A packet `v_worried_` found expired on a new ACK, sent at the next
    /// `send` (which follows at once).
    worried_resend: Option<u64>,
}

impl VegasNs2Recovery {
    fn record(&self, pkt: u64) -> Option<(Time, u32)> {
        let idx = pkt.checked_sub(self.first)?;
        self.sent.get(idx as usize).copied()
    }

    /// `VegasTcpAgent::output`: note each data packet put in `out` from `from` on.
    fn note_sent(&mut self, out: &[Packet], from: usize, mss: u64, now: Time) {
        for p in out[from..].iter().filter(|p| p.kind == PacketKind::Data) {
            let Some(idx) = (p.seq / mss).checked_sub(self.first) else {
                continue;
            };
            if idx >= MAX_RECORDS {
                continue;
            }
            let idx = idx as usize;
            if self.sent.len() <= idx {
                self.sent.resize(idx + 1, (now, 0));
            }
            self.sent[idx] = (now, self.sent[idx].1 + 1);
        }
    }

    fn timeout_s(&self) -> f64 {
        self.fine.map_or(1000.0, |(_, _, t)| t)
    }

    /// `vegas_expire`: packet `pkt` was last sent `v_timeout_` ago or more.
    fn expired(&self, pkt: u64, now: Time) -> bool {
        self.record(pkt)
            .is_some_and(|(at, _)| now.since(at).as_secs_f64() >= self.timeout_s())
    }

    /// The fine-grained update of `VegasTcpAgent::recv` for a sample `rtt`.
    fn sample(&mut self, rtt: f64) {
        let Some((sa, sd, _)) = self.fine.as_mut() else {
            return;
        };
        if rtt > 0.0 {
            let n = rtt - *sa / 8.0;
            *sa += n;
            *sd += n.abs() - *sd / 4.0;
            let t = (*sa / 4.0 + *sd) / 2.0;
            self.fine = Some((*sa, *sd, t + t / 16.0));
        }
    }

    /// A new ACK making `first_unacked` the first unacknowledged packet:
    /// its sample (the acknowledged packet, if sent once), the records it
    /// covers dropped, then the `v_worried_` check.
    fn on_new_ack(&mut self, c: &Conn, now: Time, first_unacked: u64) {
        let last = first_unacked.checked_sub(1).and_then(|p| self.record(p));
        if self.fine.is_none() {
            // firstrecv_: the time from the pseudo-SYN to its ACK (the
            // handshake's sample; if Karn left none, this ACK's).
            let own = last.map(|(at, _)| now.since(at));
            if let Some(t) = c.rtt.min_rtt().or(own).map(|d| d.as_secs_f64()) {
                self.fine = Some((8.0 * t, t, (2.0 * t + t) / 2.0));
            }
        }
        if let Some((at, 1)) = last {
            self.sample(now.since(at).as_secs_f64());
        }
        let drop = first_unacked
            .saturating_sub(self.first)
            .min(self.sent.len() as u64);
        self.sent.drain(..drop as usize);
        self.first = self.first.max(first_unacked);
        if self.worried > 0 {
            self.worried -= 1;
            if self.expired(first_unacked, now) {
                self.worried_resend = Some(first_unacked);
            } else {
                self.worried = 0;
            }
        }
    }

    /// The retransmission branch of the duplicate-ACK path.
    fn fast_retransmit(&mut self, c: &mut Conn, now: Time, out: &mut Vec<Packet>) {
        let mss = c.cfg.mss;
        let head = c.snd_una / mss;
        let (sent_at, transmits) = self.record(head).unwrap_or((Time::ZERO, 0));
        let win = c.w.cwnd.min(c.rwnd) / mss;
        self.after_timeout = false;
        c.recover = Some(c.snd_max);
        self.worried = ((c.snd_nxt - c.snd_una) / mss + 1).min(2) as u32;
        if let Some((_, _, t)) = self.fine.as_mut() {
            *t = if transmits > 1 {
                *t * 2.0
            } else {
                *t + *t / 8.0
            };
        }
        // The loss event for the controller's statistics and predictor;
        // ns-2 Vegas leaves ssthresh_ as it is.
        let ssthresh = c.w.ssthresh;
        c.loss_event(now, c.flight_size());
        c.w.ssthresh = ssthresh;
        c.stats.fast_recoveries += 1;
        if transmits > 0 && self.cwnd_changed.is_none_or(|t| t < sent_at) {
            self.newcwnd = match win {
                0..=3 => 2,
                _ if transmits > 1 => win >> 1,
                _ => win - (win >> 2),
            };
            c.w.cwnd = (self.newcwnd + u64::from(c.dupacks)) * mss;
            self.cwnd_changed = Some(now);
        }
        c.rtt.back_off();
        c.set_rto_timer(now);
        c.timed = None;
        self.resend(c, now, head, out);
        if transmits == 1 {
            c.dupacks = c.cfg.dupack_threshold;
        }
    }

    fn resend(&mut self, c: &mut Conn, now: Time, pkt: u64, out: &mut Vec<Packet>) {
        let start = pkt * c.cfg.mss;
        if start < c.snd_max {
            let from = out.len();
            c.transmit(now, start, c.cfg.mss.min(c.snd_max - start), out);
            self.note_sent(out, from, c.cfg.mss, now);
        }
    }
}

impl RecoveryOps for VegasNs2Recovery {
    fn on_ack_arrival(
        &mut self,
        c: &Conn,
        now: Time,
        ack: u64,
        _blocks: &[(u64, u64)],
        _ts_ecr: Time,
    ) -> SackUpdate {
        let mss = c.cfg.mss;
        self.now = now;
        self.expired = false;
        if ack > c.snd_una {
            self.on_new_ack(c, now, ack.div_ceil(mss));
        } else if ack == c.snd_una && c.snd_max > c.snd_una {
            self.expired = self.expired(c.snd_una / mss, now);
        }
        SackUpdate::default()
    }

    /// A duplicate whose first unacknowledged packet expired acts before
    /// the third (`vegas_expire` in the duplicate branch).
    fn head_lost(&self) -> bool {
        self.expired
    }

    /// ns-2 Vegas's own guard is the timeout one, in `enter`.
    fn guards_recover(&self) -> bool {
        false
    }

    /// The duplicate-ACK branch of `VegasTcpAgent::recv` for the
    /// `numdupacks_`-th (`dupack_threshold`) or a later duplicate, or an
    /// earlier one that found the packet expired.
    fn enter(&mut self, c: &mut Conn, now: Time, _newly_sacked: u64, out: &mut Vec<Packet>) {
        let n = c.cfg.dupack_threshold;
        if self.expired || c.dupacks == n {
            let passed = c.recover.is_none_or(|r| c.snd_una > r);
            if !self.after_timeout || passed {
                self.fast_retransmit(c, now, out);
            }
        } else if c.dupacks > n {
            c.w.cwnd += c.cfg.mss;
        }
    }

    /// A new ACK after more than `numdupacks_` duplicates: cwnd_ = `v_newcwnd_` if
    /// above it, and ssthresh_ 2 (before the window rules of the ACK).
    fn on_new_ack_outside_recovery(&mut self, c: &mut Conn) {
        let mss = c.cfg.mss;
        if c.dupacks > c.cfg.dupack_threshold && c.w.cwnd > self.newcwnd * mss {
            c.w.cwnd = self.newcwnd * mss;
            c.w.ssthresh = 2 * mss;
        }
    }

    /// `VegasTcpAgent::timeout` after the sender's restart: go back N.
    fn on_timeout(&mut self, c: &mut Conn, now: Time) {
        self.after_timeout = true;
        self.newcwnd = 0;
        self.cwnd_changed = Some(now);
        c.snd_nxt = c.snd_una;
    }

    /// The packet `v_worried_` found expired goes first (dupacks_ =
    /// `numdupacks_`); then `send_much` if dupacks_ is 0 or at least
    /// `numdupacks_` (the `dupack_threshold`, 3 by default), within min(cwnd_,
    /// `window_`) and without limited transmit.
    fn send(&mut self, c: &mut Conn, now: Time, out: &mut Vec<Packet>) {
        if let Some(pkt) = self.worried_resend.take() {
            c.dupacks = c.cfg.dupack_threshold;
            self.resend(c, now, pkt, out);
        }
        if c.dupacks == 0 || c.dupacks >= c.cfg.dupack_threshold {
            let from = out.len();
            send_window(c, now, out, 0);
            self.note_sent(out, from, c.cfg.mss, now);
        }
    }
}

#[cfg(test)]
mod tests;
