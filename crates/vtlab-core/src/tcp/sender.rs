//! The TCP sender of a bulk transfer: the state machine common to every loss
//! recovery. Connection set-up, transmission under the congestion and
//! receive windows, duplicate-ACK counting and the states Open / Disorder /
//! Recovery / Loss, RTT measurement and the retransmission timer.
//!
//! What differs between Tahoe, Reno, NewReno and SACK (entering recovery,
//! ACKs during recovery, bytes in flight, what to send next, what a timeout
//! resets) is delegated to the recovery (`tcp/recovery/`, selected by
//! `TcpConfig::recovery`); the window laws to the congestion controller
//! (`tcp/cc/`); where the profile follows ns-3 or Linux is read from its
//! `StackBehaviour`.
//!
//! Common to all: limited transmit (RFC 3042; in SACK form, new data while
//! cwnd − pipe ≥ 1 MSS), the retransmission timer of RFC 6298 (Karn's rule
//! unless timestamps give unambiguous samples), and after a timeout state
//! Loss: cwnd = 1 MSS, resend the unacknowledged (un-SACKed) data in slow
//! start; duplicate ACKs are ignored in Loss, as ns-3 does, and Loss ends once
//! everything outstanding at the timeout is acknowledged.
//!
//! Sequence numbers are absolute byte offsets of the transfer, starting at 0.

use std::collections::BTreeMap;

use crate::engine::{Duration, Time};
use crate::net::{NodeId, Packet, PacketKind};
use crate::tcp::behaviour::StackBehaviour;
use crate::tcp::cc::{AnyCc, CongestionOps, CwndEvent, LossCause, Window};
use crate::tcp::conn::{Conn, Phase};
use crate::tcp::recovery::{AnyRecovery, NewAck, RecoveryOps};
use crate::tcp::state::CaState;
use crate::tcp::{RttEstimator, TcpConfig};

pub use crate::tcp::conn::SenderStats;

pub struct Sender {
    c: Conn,
    rec: AnyRecovery,
    syn_timeout: Duration,
    syn_sent_at: Time,
    syn_retransmitted: bool,
    /// Retransmission timeouts since the last ACK of new data (ns-3 counts
    /// `m_dataRetrCount` down from `DataRetries`; Linux `icsk_retransmits`).
    rto_streak: u32,
    /// Why the sender gave up, if it did: `syn_retries` or `data_retries`.
    aborted: Option<&'static str>,
    /// Acked bytes not yet counted as whole segments (ns-3 `m_bytesAckedNotProcessed`).
    acked_remainder: u64,
}

impl Sender {
    pub fn new(mut cfg: TcpConfig, cc: AnyCc, flow: u32, peer: NodeId, total: u64) -> Self {
        // From here on `mss` is the payload of a full segment (options accounted).
        cfg.mss = cfg.segment_payload();
        let rtt = RttEstimator::new(
            Duration(cfg.rto_initial_ns),
            Duration(cfg.rto_min_ns),
            Duration(cfg.rto_max_ns),
            Duration(cfg.clock_granularity_ns),
        );
        let w = Window {
            cwnd: u64::from(cfg.initial_cwnd) * cfg.mss,
            ssthresh: cfg.initial_ssthresh.unwrap_or(u64::MAX),
        };
        let b = StackBehaviour::of(cfg.profile);
        Sender {
            rec: AnyRecovery::new(&cfg, &b),
            syn_timeout: Duration(cfg.syn_timeout_ns),
            syn_sent_at: Time::ZERO,
            syn_retransmitted: false,
            rto_streak: 0,
            aborted: None,
            acked_remainder: 0,
            c: Conn {
                b,
                rwnd: cfg.mss,
                cc,
                flow,
                peer,
                total,
                phase: Phase::Idle,
                snd_una: 0,
                snd_nxt: 0,
                snd_max: 0,
                w,
                ca_state: CaState::Open,
                dupacks: 0,
                recover: None,
                rtt,
                timer: None,
                timed: None,
                drops: BTreeMap::new(),
                stats: SenderStats::default(),
                ts_recent: Time::ZERO,
                cwnd_limited: false,
                max_out: 0,
                cwnd_usage_seq: 0,
                cfg,
            },
        }
    }

    // ---- observation -------------------------------------------------------

    pub fn stats(&self) -> &SenderStats {
        &self.c.stats
    }
    pub fn timer_deadline(&self) -> Option<Time> {
        self.c.timer
    }
    /// Why the sender gave up the connection (`syn_retries`: no SYN-ACK after
    /// the allowed SYN retransmissions; `data_retries`: the allowed consecutive
    /// retransmission timeouts passed without an ACK of new data), if it did.
    pub fn aborted(&self) -> Option<&'static str> {
        self.aborted
    }
    pub fn is_done(&self) -> bool {
        self.c.phase == Phase::Established && self.c.snd_una >= self.c.total
    }
    pub fn window(&self) -> Window {
        self.c.w
    }
    pub fn ca_state(&self) -> CaState {
        self.c.ca_state
    }
    pub fn snd_una(&self) -> u64 {
        self.c.snd_una
    }
    pub fn snd_max(&self) -> u64 {
        self.c.snd_max
    }
    pub fn srtt(&self) -> Option<Duration> {
        self.c.rtt.srtt()
    }
    pub fn rto(&self) -> Duration {
        self.c.rtt.rto()
    }
    /// RFC 5681 FlightSize: bytes sent and not cumulatively acknowledged.
    pub fn flight_size(&self) -> u64 {
        self.c.flight_size()
    }

    /// Bytes the sender believes are in the network: RFC 6675 `pipe` with
    /// SACK, FlightSize otherwise (ns-3 `BytesInFlight`).
    pub fn bytes_in_flight(&self) -> u64 {
        self.rec.bytes_in_flight(&self.c)
    }

    /// The simulation reports that the data segment starting at `seq` was
    /// dropped, and why (the oracle's input; no real sender has it).
    pub fn record_drop(&mut self, seq: u64, cause: LossCause) {
        if seq >= self.c.snd_una {
            self.c.drops.insert(seq, cause);
        }
    }

    fn set_state(&mut self, now: Time, new: CaState) {
        let in_flight = self.bytes_in_flight();
        self.c.set_state(now, new, in_flight);
    }

    /// `pkts_acked` then `increase_window` for `segments` acknowledged segments.
    fn grow(&mut self, now: Time, segments: u32, rtt: Option<Duration>) {
        let info = self.c.info(now, self.bytes_in_flight());
        self.c.cc.pkts_acked(&info, &self.c.w, segments, rtt);
        if !self.c.b.cwnd_validation || self.c.is_cwnd_limited() {
            self.c.cc.increase_window(&info, &mut self.c.w, segments);
        }
    }

    /// `pkts_acked` alone, with the SRTT (ns-3 counts duplicate ACKs so).
    fn pkts_acked_srtt(&mut self, now: Time, segments: u32) {
        let in_flight = self.bytes_in_flight();
        let srtt = self.c.rtt.srtt();
        self.c.pkts_acked(now, segments, srtt, in_flight);
    }

    // ---- inputs --------------------------------------------------------------

    /// Open the connection (send the SYN).
    pub fn start(&mut self, now: Time, out: &mut Vec<Packet>) {
        self.c.phase = Phase::SynSent;
        self.send_syn(now, out);
    }

    /// The application writes `bytes` more (a two-way connection's messages;
    /// a bulk transfer has all of its bytes from the start). Sends what the
    /// windows allow at once: small segments are not held back (no Nagle, as
    /// ns-3's `TcpNoDelay` default).
    pub fn write(&mut self, now: Time, bytes: u64, out: &mut Vec<Packet>) {
        self.c.total += bytes;
        self.send_data(now, out);
    }

    /// Bytes the application has written so far.
    pub fn written(&self) -> u64 {
        self.c.total
    }

    /// Whether the connection is established (the SYN-ACK arrived).
    pub fn is_established(&self) -> bool {
        self.c.phase == Phase::Established
    }

    /// The passive end of a two-way connection: the peer's SYN arrived at
    /// `now`, so this direction may send once it has data. There is no RTT
    /// sample yet (the initial RTO applies) and the peer's window is `rwnd`.
    pub fn accept(&mut self, now: Time, rwnd: u64) {
        if self.c.phase == Phase::Idle && self.aborted.is_none() {
            self.c.rwnd = rwnd;
            self.c.phase = Phase::Established;
            let in_flight = self.bytes_in_flight();
            self.c.cwnd_event(now, CwndEvent::TxStart, in_flight);
        }
    }

    fn send_syn(&mut self, now: Time, out: &mut Vec<Packet>) {
        self.syn_sent_at = now;
        self.c.timer = Some(now + self.syn_timeout);
        out.push(self.c.packet(now, PacketKind::Syn, 0, 0));
    }

    /// A packet of this flow arrived at the sender.
    pub fn on_packet(&mut self, now: Time, p: &Packet, out: &mut Vec<Packet>) {
        if matches!(p.kind, PacketKind::SynAck | PacketKind::Ack) {
            self.c.ts_recent = self.c.ts_recent.max(p.ts_val);
        }
        match p.kind {
            PacketKind::SynAck => self.on_syn_ack(now, p, out),
            PacketKind::Ack => self.on_ack(now, p, out),
            PacketKind::Syn | PacketKind::Data => {}
        }
    }

    /// The timer fired at `now` (the simulation calls this only at or after
    /// [`Sender::timer_deadline`]).
    pub fn on_timer(&mut self, now: Time, out: &mut Vec<Packet>) {
        match self.c.timer {
            Some(t) if t <= now => {}
            _ => return,
        }
        match self.c.phase {
            Phase::Idle => self.c.timer = None,
            Phase::SynSent => {
                if self.c.stats.syn_retransmissions >= u64::from(self.c.cfg.syn_retries()) {
                    // ns-3 SendEmptyPacket with m_synCount == 0 / Linux
                    // tcp_write_timeout: the connection attempt fails.
                    self.give_up("syn_retries");
                    return;
                }
                // ns-3 ConnTimeout: retransmit the SYN, doubling the timeout.
                self.c.stats.syn_retransmissions += 1;
                self.syn_retransmitted = true;
                self.syn_timeout = self.syn_timeout.saturating_mul(2);
                if self.c.b.syn_backoff_capped {
                    self.syn_timeout = self.syn_timeout.min(Duration(self.c.cfg.rto_max_ns));
                }
                self.send_syn(now, out);
            }
            Phase::Established => self.on_rto(now, out),
        }
    }

    fn on_syn_ack(&mut self, now: Time, p: &Packet, out: &mut Vec<Packet>) {
        if self.c.phase != Phase::SynSent {
            return;
        }
        let sample = if self.c.cfg.timestamps {
            Some(now - p.ts_ecr)
        } else if !self.syn_retransmitted {
            Some(now - self.syn_sent_at)
        } else {
            None
        };
        if let Some(r) = sample {
            self.take_rtt_sample(r);
        }
        self.c.rwnd = p.rwnd;
        self.c.phase = Phase::Established;
        self.c.timer = None;
        let in_flight = self.bytes_in_flight();
        self.c.cwnd_event(now, CwndEvent::TxStart, in_flight);
        self.send_data(now, out);
    }

    fn take_rtt_sample(&mut self, r: Duration) {
        self.c.rtt.sample(r);
        let s = &mut self.c.stats;
        s.rtt_samples += 1;
        s.rtt_hist.add(r);
        s.rtt_sum_s += r.as_secs_f64();
        s.rtt_min = Some(s.rtt_min.map_or(r, |m| m.min(r)));
        s.rtt_max = Some(s.rtt_max.map_or(r, |m| m.max(r)));
    }

    fn on_ack(&mut self, now: Time, p: &Packet, out: &mut Vec<Packet>) {
        if self.c.phase != Phase::Established {
            return;
        }
        self.c.rwnd = p.rwnd;
        let ack = p.ack.min(self.c.snd_max);
        let sacked = self
            .rec
            .on_ack_arrival(&self.c, now, ack, p.sack_blocks(), p.ts_ecr);
        if ack > self.c.snd_una {
            // RFC 6937 DeliveredData: the advance of snd_una plus the newly SACKed
            // bytes, less the bytes SACKed earlier that this ACK now covers.
            let delivered = ack - self.c.snd_una + sacked.newly_sacked - sacked.sacked_acked;
            self.on_new_ack(now, p, ack, delivered, sacked.newly_sacked, out);
        } else if ack == self.c.snd_una && self.c.snd_max > self.c.snd_una {
            self.on_dupack(now, sacked.newly_sacked, out);
        }
        self.send_data(now, out);
    }

    fn on_new_ack(
        &mut self,
        now: Time,
        p: &Packet,
        ack: u64,
        delivered: u64,
        newly_sacked: u64,
        out: &mut Vec<Packet>,
    ) {
        let newly = ack - self.c.snd_una;
        let sample = if self.c.cfg.timestamps {
            Some(now - p.ts_ecr)
        } else {
            match self.c.timed {
                Some((end, sent)) if ack >= end => {
                    self.c.timed = None;
                    Some(now - sent)
                }
                _ => None,
            }
        };
        if let Some(r) = sample {
            self.take_rtt_sample(r);
        }
        let mss = self.c.cfg.mss;
        self.rto_streak = 0;
        self.c.snd_una = ack;
        self.c.snd_nxt = self.c.snd_nxt.max(ack);
        self.acked_remainder += newly;
        let segments = (self.acked_remainder / mss) as u32;
        self.acked_remainder %= mss;
        let a = NewAck {
            newly,
            delivered,
            newly_sacked,
            segments,
        };
        let mut restart_timer = true;

        match self.c.ca_state {
            CaState::Recovery if self.rec.is_full_ack(&self.c, ack) => {
                // Full ACK (RFC 6582 §3.2 step 3, option 2 as ns-3; RFC 6675
                // end of recovery), or any new ACK for Reno (RFC 5681 §3.2
                // step 6): deflate to ssthresh.
                self.exit_recovery(now);
                // As ns-3 (ProcessAck) and Linux: the ACK that ends recovery also
                // grows the window from its new value, cwnd = ssthresh.
                self.grow(now, segments, self.c.rtt.srtt());
            }
            CaState::Recovery => {
                restart_timer = self.rec.on_partial_ack(&mut self.c, now, &a, out);
            }
            CaState::Open | CaState::Disorder
                if self.c.b.sack_ack_is_dupack && newly_sacked > 0 =>
            {
                restart_timer = self.on_sacking_new_ack(now, &a, out);
            }
            CaState::Loss | CaState::Open | CaState::Disorder => {
                self.on_new_ack_outside_recovery(now, ack, &a, sample);
            }
        }

        if self.c.snd_una >= self.c.snd_max {
            self.c.timer = None;
        } else if restart_timer {
            if self.c.b.new_ack_clears_backoff {
                self.c.rtt.clear_backoff();
            }
            self.c.timer = Some(now + self.c.rtt.rto());
        }
    }

    /// ns-3 (`sack_ack_is_dupack`): an ACK that SACKs new data is a duplicate
    /// ACK even if it also advances snd_una: the dupack counter grows (not
    /// reset), Open becomes Disorder, recovery may start; cwnd does not grow
    /// (IncreaseWindow runs only in Open), PktsAcked gets the segments beyond
    /// the earlier dupacks. Returns whether the retransmission timer is
    /// restarted (not unless recovery starts).
    fn on_sacking_new_ack(&mut self, now: Time, a: &NewAck, out: &mut Vec<Packet>) -> bool {
        let old_dupacks = self.c.dupacks;
        self.c.dupacks += 1;
        if self.c.ca_state == CaState::Open {
            self.set_state(now, CaState::Disorder);
        }
        let may_enter = self.c.recover.is_none_or(|r| self.c.snd_una >= r);
        if (self.c.dupacks == self.c.cfg.dupack_threshold && may_enter) || self.rec.head_lost() {
            self.rec.enter(&mut self.c, now, a.delivered, out);
            if a.segments >= 1 {
                self.rec.do_recovery(&mut self.c, a.delivered);
            }
            self.pkts_acked_srtt(now, 1);
            true
        } else {
            if a.segments >= old_dupacks {
                self.pkts_acked_srtt(now, a.segments - old_dupacks);
            }
            false
        }
    }

    /// A new ACK in Open, Disorder or Loss: the controller grows the window.
    fn on_new_ack_outside_recovery(
        &mut self,
        now: Time,
        ack: u64,
        a: &NewAck,
        sample: Option<Duration>,
    ) {
        let mss = self.c.cfg.mss;
        self.c.dupacks = 0;
        let rtt = if self.c.b.pkts_acked_gets_srtt {
            self.c.rtt.srtt()
        } else {
            sample
        };
        let in_loss = self.c.ca_state == CaState::Loss;
        let left_loss = in_loss && self.c.recover.is_none_or(|r| ack >= r);
        // ns-3 ProcessAck: the ACK that ends Loss counts only the
        // segments above the recovery point (ack − m_recover). Below
        // it, ns-3's cwnd grows as if only the newly delivered data
        // counted: a cumulative ACK that covers data SACKed before the
        // timeout adds one segment, not the whole span (observed in
        // ns-3.44 traces; Cubic's byte-counting slow start would
        // otherwise jump to cwnd ≈ span and burst it).
        let segments = match (self.c.recover, left_loss) {
            _ if !self.c.b.loss_exit_counts_above_recover => a.segments,
            (Some(r), true) => ((ack - r) / mss) as u32,
            (_, false) if in_loss => a.segments.min((a.delivered / mss).max(1) as u32),
            _ => a.segments,
        };
        self.grow(now, segments, rtt);
        if self.c.ca_state == CaState::Disorder || left_loss {
            self.set_state(now, CaState::Open);
        }
    }

    fn exit_recovery(&mut self, now: Time) {
        self.c.w.cwnd = self.c.w.ssthresh;
        self.c.dupacks = 0;
        self.rec.on_exit();
        self.set_state(now, CaState::Open);
        let in_flight = self.bytes_in_flight();
        self.c.cwnd_event(now, CwndEvent::CompleteCwr, in_flight);
    }

    fn on_dupack(&mut self, now: Time, newly_sacked: u64, out: &mut Vec<Packet>) {
        if self.c.b.dupack_feeds_controller {
            self.pkts_acked_srtt(now, 1);
        }
        match self.c.ca_state {
            CaState::Open | CaState::Disorder => {
                self.c.dupacks += 1;
                // RFC 6582 §3.2 step 1 (and RFC 6675's RecoveryPoint): enter
                // only if the ACK covers more than `recover`, the highest byte
                // sent; `recover` is kept as an exclusive end (snd_max), hence
                // >=. As ns-3 (highRxAck >= m_recover). Reno has no such guard.
                let may_enter = !self.rec.guards_recover()
                    || self.c.recover.is_none_or(|r| self.c.snd_una >= r);
                let threshold = self.c.dupacks >= self.c.cfg.dupack_threshold;
                if (threshold || self.rec.head_lost()) && may_enter {
                    self.rec.enter(&mut self.c, now, newly_sacked, out);
                } else if self.c.ca_state == CaState::Open {
                    self.set_state(now, CaState::Disorder);
                }
            }
            CaState::Recovery => {
                self.c.dupacks += 1;
                self.rec.on_dupack(&mut self.c, newly_sacked);
            }
            CaState::Loss => {}
        }
    }

    fn give_up(&mut self, reason: &'static str) {
        self.aborted = Some(reason);
        self.c.phase = Phase::Idle;
        self.c.timer = None;
    }

    fn on_rto(&mut self, now: Time, out: &mut Vec<Packet>) {
        if self.rto_streak >= self.c.cfg.data_retries() {
            // ns-3 ReTxTimeout with m_dataRetrCount == 0 / Linux
            // tcp_write_timeout past tcp_retries2: drop the connection.
            self.give_up("data_retries");
            return;
        }
        self.rto_streak += 1;
        self.c.stats.rto_count += 1;
        // Reduce ssthresh only on the first timeout for this window: not when the
        // head was already resent since an earlier timeout (RFC 5681 §3.1, ns-3).
        let head_resent = self.c.ca_state == CaState::Loss && self.rec.head_resent(&self.c);
        let in_flight = self.bytes_in_flight();
        if !head_resent {
            self.c.loss_event(now, in_flight);
        }
        if self.c.ca_state != CaState::Loss {
            self.c.stats.slow_starts_after_loss += 1;
        }
        self.c.cwnd_event(now, CwndEvent::Loss, in_flight);
        self.c.set_state(now, CaState::Loss, in_flight);
        self.c.w.cwnd = self.c.cfg.mss;
        self.c.recover = Some(self.c.snd_max);
        self.c.dupacks = 0;
        self.c.timed = None;
        self.c.rtt.back_off();
        self.rec.on_timeout(&mut self.c, now);
        self.c.timer = None;
        self.send_data(now, out);
    }

    // ---- output --------------------------------------------------------------

    /// Send as much as the windows and the send buffer allow.
    fn send_data(&mut self, now: Time, out: &mut Vec<Packet>) {
        if self.c.phase == Phase::Established {
            let before = out.len();
            self.rec.send(&mut self.c, now, out);
            if self.c.b.cwnd_validation {
                // Linux tests cwnd first (tcp_cwnd_test before tcp_snd_wnd_test):
                // no room for another segment under cwnd means cwnd-limited,
                // whatever else also held the sender back. As tcp_write_xmit,
                // validate only when something was sent or cwnd stopped it.
                let limited = self.bytes_in_flight() + self.c.cfg.mss > self.c.w.cwnd;
                if limited || out.len() > before {
                    let flight = self.c.flight_size();
                    self.c.cwnd_validate(limited, flight);
                }
            }
        }
    }
}

#[cfg(test)]
#[path = "sender_tests.rs"]
mod tests;
