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
//! Loss recovery for short exchanges, each behind its switch (defaults per
//! profile in `StackBehaviour`, resolved in `TcpConfig`): the Tail Loss Probe
//! (RFC 8985 §7, Linux `tcp_schedule_loss_probe`, `tcp_send_loss_probe`,
//! `tcp_process_tlp_ack`), RACK (RFC 8985 §6, in the SACK recovery and
//! `tcp/rack.rs`, with its reorder timer), RFC 5827 early retransmit, and the
//! RTO re-armed from the head's transmission (`tcp_rearm_rto`). The probe and
//! reorder timers share the one timer with the RTO, as Linux's `icsk_pending`
//! does (`Conn::timer_kind`). docs/tcp-model.md, "Loss recovery for short
//! exchanges".
//!
//! Sequence numbers are absolute byte offsets of the transfer, starting at 0.

use std::collections::BTreeMap;

use crate::engine::{Duration, Time};
use crate::net::{NodeId, Packet, PacketKind};
use crate::tcp::behaviour::StackBehaviour;
use crate::tcp::cc::{AnyCc, CongestionOps, CwndEvent, LossCause, Profile, Window};
use crate::tcp::conn::{Conn, Pacing, Phase, TimerKind};
use crate::tcp::rate::RateEstimator;
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
    /// The passive end's handshake, until the ACK that completes it arrives
    /// ([`StackBehaviour::synack_rtt_sample`]): when its first SYN-ACK went
    /// out, when its last did, and whether a duplicate SYN made it send
    /// another.
    syn_ack_at: Option<Time>,
    syn_ack_last: Time,
    syn_ack_retransmitted: bool,
    /// Retransmission timeouts since the last ACK of new data (ns-3 counts
    /// `m_dataRetrCount` down from `DataRetries`; Linux `icsk_retransmits`).
    rto_streak: u32,
    /// When `user_timeout` drops the connection: set at the first timeout since
    /// the last ACK of new data to `user_timeout` after the head was sent (Linux
    /// `retrans_stamp`), but after that timeout; cleared by an ACK of new data.
    user_at: Option<Time>,
    /// Why the sender gave up, if it did: `syn_retries`, `data_retries` or
    /// `user_timeout`.
    aborted: Option<&'static str>,
    /// Acked bytes not yet counted as whole segments (ns-3 `m_bytesAckedNotProcessed`).
    acked_remainder: u64,
    /// The loss-detection switches, resolved from the configuration.
    tlp: bool,
    rack: bool,
    early_retransmit: bool,
    rto_from_head: bool,
    /// The open tail-loss-probe episode: snd_nxt when the probe went out
    /// (Linux `tlp_high_seq`), snd_una then (for the loss oracle), and whether
    /// the probe was a retransmission (`tlp_retrans`).
    tlp_high: Option<u64>,
    tlp_una: u64,
    tlp_retrans: bool,
    /// The RTT sample of the ACK being processed (for `cong_control`).
    ack_rtt: Option<Duration>,
}

/// Linux TCP_TIMEOUT_MIN: the probe timeout's allowance with more than one
/// segment out, and the reorder timer's slack.
const TIMEOUT_MIN: Duration = Duration::from_millis(2);

/// The sender's RTT estimator: RFC 6298's, or ns-2's integer-tick timer
/// under the `ns2` profile.
fn rtt_estimator(cfg: &TcpConfig) -> RttEstimator {
    let rtt = RttEstimator::new(
        Duration(cfg.rto_initial_ns),
        Duration(cfg.rto_min_ns),
        Duration(cfg.rto_max_ns),
        Duration(cfg.clock_granularity_ns),
    );
    if cfg.profile == Profile::Ns2 {
        rtt.ns2_ticks()
    } else {
        rtt
    }
}

/// The header bytes each segment adds on the wire: ns-2's
/// `VegasTcpAgent::output` sends `packetSize_` bytes as they are, with no
/// `headersize()` (`TcpAgent::output` adds it), so a `vegas` sender under
/// `ns2` adds none.
fn wire_header_bytes(cfg: &TcpConfig, b: &StackBehaviour) -> u64 {
    if b.is_vegas_agent(&cfg.cc) {
        0
    } else {
        cfg.header_bytes
    }
}

impl Sender {
    pub fn new(mut cfg: TcpConfig, cc: AnyCc, flow: u32, peer: NodeId, total: u64) -> Self {
        // From here on `mss` is the payload of a full segment (options accounted).
        cfg.mss = cfg.segment_payload();
        let rtt = rtt_estimator(&cfg);
        let w = Window {
            cwnd: u64::from(cfg.initial_cwnd) * cfg.mss,
            ssthresh: cfg.initial_ssthresh.unwrap_or(u64::MAX),
        };
        let b = StackBehaviour::of(cfg.profile);
        cfg.header_bytes = wire_header_bytes(&cfg, &b);
        let (tlp, rack) = (cfg.tlp(), cfg.rack());
        let (early_retransmit, rto_from_head) = (cfg.early_retransmit(), cfg.rto_from_head());
        // A rate-based controller (BBR): delivery-rate samples and pacing.
        let cc_owns_cwnd = cc.has_cong_control();
        let linux = cfg.profile == Profile::Linux;
        let rate = cc_owns_cwnd.then(|| RateEstimator::new(linux));
        let pacing = Pacing {
            edt: linux,
            skip_initial_window: !linux,
            ..Pacing::default()
        };
        Sender {
            ack_rtt: None,
            rec: AnyRecovery::new(&cfg, &b),
            tlp,
            rack,
            early_retransmit,
            rto_from_head,
            tlp_high: None,
            tlp_una: 0,
            tlp_retrans: false,
            syn_timeout: Duration(cfg.syn_timeout_ns),
            syn_sent_at: Time::ZERO,
            syn_retransmitted: false,
            syn_ack_at: None,
            syn_ack_last: Time::ZERO,
            syn_ack_retransmitted: false,
            rto_streak: 0,
            user_at: None,
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
                timer_kind: TimerKind::Rto,
                head_rexmit_rearms: tlp || rack,
                timed: None,
                rtt_history: (b.rtt_every_segment && !cfg.timestamps)
                    .then(crate::tcp::rtt_history::RttHistory::default),
                drops: BTreeMap::new(),
                stats: SenderStats::default(),
                ts_recent: Time::ZERO,
                cwnd_limited: false,
                max_out: 0,
                cwnd_usage_seq: 0,
                rate,
                pacing,
                cc_owns_cwnd,
                rate_restart: false,
                cfg,
            },
        }
    }

    // ---- observation -------------------------------------------------------

    pub fn stats(&self) -> &SenderStats {
        &self.c.stats
    }
    /// The next time the sender needs `on_timer`: its retransmission (or
    /// probe, reorder) timer, or the pacing release time when pacing held a
    /// transmission back.
    pub fn timer_deadline(&self) -> Option<Time> {
        let pace = self.c.pacing.blocked.then_some(self.c.pacing.next);
        let timer = match (self.c.timer, self.user_deadline()) {
            (Some(t), Some(u)) => Some(t.min(u)),
            (t, _) => t,
        };
        match (timer, pace) {
            (Some(t), Some(p)) => Some(t.min(p)),
            (t, p) => t.or(p),
        }
    }

    /// The pacing rate in force (bytes per second), if the controller paces.
    pub fn pacing_rate(&self) -> Option<f64> {
        self.c.pacing.rate
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
        if self.c.rate.is_some() {
            // ns-3 Send → CalculateAppLimited; Linux tcp_sendmsg →
            // tcp_rate_check_app_limited.
            let unsent = self.c.total - self.c.snd_max;
            let (mss, cwnd, in_flight) = (self.c.cfg.mss, self.c.w.cwnd, self.bytes_in_flight());
            if let Some(r) = self.c.rate.as_mut() {
                r.check_app_limited(unsent, mss, in_flight, cwnd);
            }
        }
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
    /// `now` and this end answered with a SYN-ACK, so this direction may send
    /// once it has data; the peer's window is `rwnd`. There is no RTT sample
    /// yet: with [`StackBehaviour::synack_rtt_sample`] the ACK completing the
    /// handshake gives one (Linux), else the initial RTO applies until the
    /// first data is acknowledged (ns-3 profile). A duplicate SYN (the peer
    /// lost the SYN-ACK) calls this again: the SYN-ACK was sent twice.
    pub fn accept(&mut self, now: Time, rwnd: u64) {
        self.syn_ack_last = now;
        if self.syn_ack_at.is_some() {
            self.syn_ack_retransmitted = true;
        }
        if self.c.phase == Phase::Idle && self.aborted.is_none() {
            if self.c.b.synack_rtt_sample {
                self.syn_ack_at = Some(now);
            }
            self.c.rwnd = rwnd;
            self.c.phase = Phase::Established;
            let in_flight = self.bytes_in_flight();
            self.c.cwnd_event(now, CwndEvent::TxStart, in_flight);
            self.take_pacing_rate();
        }
    }

    /// The controller's pacing rate, for a pacing controller.
    fn take_pacing_rate(&mut self) {
        if self.c.rate.is_some() {
            self.c.pacing.rate = self.c.cc.pacing_rate();
        }
    }

    /// The endpoint sent a pure ACK for the other direction of its
    /// connection. ns-3 recomputes the RTO there, dropping any backoff
    /// ([`StackBehaviour::pure_ack_clears_backoff`]); a timer already running
    /// keeps its deadline, the next one uses the new value.
    pub fn on_pure_ack_sent(&mut self) {
        if self.c.b.pure_ack_clears_backoff && self.c.phase == Phase::Established {
            self.c.rtt.clear_backoff();
        }
    }

    /// The application closed the connection (its session ended): nothing
    /// more is sent or retransmitted.
    pub fn close(&mut self) {
        self.c.phase = Phase::Idle;
        self.c.timer = None;
        self.c.pacing.blocked = false;
    }

    fn send_syn(&mut self, now: Time, out: &mut Vec<Packet>) {
        self.syn_sent_at = now;
        self.c.timer = Some(now + self.syn_timeout);
        self.c.timer_kind = TimerKind::Rto;
        let mut syn = self.c.packet(now, PacketKind::Syn, 0, 0);
        if self.c.b.is_vegas_agent(&self.c.cfg.cc) {
            // ns-2 `VegasTcpAgent::output` sends the pseudo-SYN (packet 0)
            // as a full packet.
            syn.ip_bytes += self.c.cfg.mss as u32;
        }
        out.push(syn);
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
        if self.c.pacing.blocked && self.c.pacing.next <= now {
            // ns-3 NotifyPacingPerformed / Linux's pacing timer: send on.
            self.c.pacing.blocked = false;
            self.send_data(now, out);
        }
        if self.user_deadline().is_some_and(|u| u <= now) {
            // Linux tcp_clamp_rto_to_user_timeout, then tcp_write_timeout.
            self.give_up("user_timeout");
            return;
        }
        match self.c.timer {
            Some(t) if t <= now => {}
            _ => return,
        }
        match self.c.phase {
            Phase::Idle => self.c.clear_timer(),
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
            Phase::Established => match self.c.timer_kind {
                TimerKind::Rto => self.on_rto(now, out),
                TimerKind::Probe => self.on_probe_timer(now, out),
                TimerKind::Reorder => self.on_reorder_timer(now, out),
            },
        }
    }

    fn on_syn_ack(&mut self, now: Time, p: &Packet, out: &mut Vec<Packet>) {
        if self.c.phase != Phase::SynSent {
            return;
        }
        let sample = if self.c.cfg.timestamps {
            Some(self.c.ts_rtt(now, p.ts_ecr))
        } else if !self.syn_retransmitted {
            Some(now - self.syn_sent_at)
        } else {
            None
        };
        if let Some(r) = sample {
            self.take_rtt_sample(now, r);
        }
        self.c.rwnd = p.rwnd;
        self.c.phase = Phase::Established;
        self.c.clear_timer();
        let in_flight = self.bytes_in_flight();
        self.c.cwnd_event(now, CwndEvent::TxStart, in_flight);
        self.take_pacing_rate();
        self.send_data(now, out);
    }

    /// The ACK completing the passive end's handshake arrived (Linux
    /// `tcp_synack_rtt_meas`): the time since the SYN-ACK if it was sent
    /// once; after a retransmitted SYN-ACK (Karn: `req->num_retrans`) the
    /// timestamp echo if timestamps are on (`tcp_ack_update_rtt` falls back
    /// to `rcv_tsecr`), which is the last SYN-ACK's: the client accepts the
    /// first SYN-ACK that reaches it and only retransmits its SYN, drawing
    /// another, while none has; else no sample.
    fn on_handshake_acked(&mut self, now: Time, sent: Time) {
        let sample = if !self.syn_ack_retransmitted {
            Some(now - sent)
        } else if self.c.cfg.timestamps {
            Some(self.c.ts_rtt(now, self.syn_ack_last))
        } else {
            None
        };
        if let Some(r) = sample {
            self.take_rtt_sample(now, r);
        }
    }

    fn take_rtt_sample(&mut self, now: Time, r: Duration) {
        self.c.rtt.sample_sent(Time(now.0.saturating_sub(r.0)), r);
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
        if let Some(sent) = self.syn_ack_at.take() {
            self.on_handshake_acked(now, sent);
        }
        // Linux FLAG_WIN_UPDATE for an ACK that does not advance: a larger window.
        let win_update = p.rwnd > self.c.rwnd;
        self.c.rwnd = p.rwnd;
        let ack = p.ack.min(self.c.snd_max);
        // For a rate-based controller: in flight and lost before the ACK.
        // An ACK below snd_una is old: neither stack runs cong_control on it
        // (ns-3 ReceivedAck returns, Linux tcp_ack goes to old_ack).
        let prior = (self.c.rate.is_some() && ack >= self.c.snd_una)
            .then(|| (self.bytes_in_flight(), self.rec.lost_segments()));
        let sacked = self
            .rec
            .on_ack_arrival(&self.c, now, ack, p.sack_blocks(), p.ts_ecr);
        let mut rate_delivered = 0;
        if let Some(r) = self.c.rate.as_mut() {
            rate_delivered = r.on_ack(now, ack.max(self.c.snd_una), p.sack_blocks());
            self.c.cc.on_ack_delivered(rate_delivered);
        }
        self.ack_rtt = None;
        let advanced = ack > self.c.snd_una;
        if self.tlp_high.is_some() {
            let pure_dupack = !advanced && !win_update && sacked.newly_sacked == 0;
            self.process_tlp_ack(now, ack, pure_dupack);
        }
        // RACK runs on the ACKs Linux calls dubious (tcp_ack_is_dubious):
        // duplicates, ACKs that SACK, and every ACK outside Open.
        let reorder_armed = self.rack
            && (!(advanced || win_update)
                || sacked.newly_sacked > 0
                || self.c.ca_state != CaState::Open)
            && self.rack_detect(now, false);
        if advanced {
            // RFC 6937 DeliveredData: the advance of snd_una plus the newly SACKed
            // bytes, less the bytes SACKed earlier that this ACK now covers.
            let delivered = ack - self.c.snd_una + sacked.newly_sacked - sacked.sacked_acked;
            self.on_new_ack(
                now,
                p,
                ack,
                delivered,
                sacked.newly_sacked,
                reorder_armed,
                out,
            );
        } else if ack == self.c.snd_una && self.c.snd_max > self.c.snd_una {
            self.on_dupack(now, sacked.newly_sacked, out);
        }
        if let Some((in_flight, lost)) = prior {
            self.cong_control(now, rate_delivered, in_flight, lost);
        }
        self.send_data(now, out);
    }

    /// ns-3 `ReceivedAck` → `GenerateSample`, `CongControl`; Linux
    /// `tcp_ack` → `tcp_rate_gen`, `tcp_cong_control`: the rate sample of
    /// this ACK to the controller, which sets cwnd and the pacing rate.
    /// Lost bytes: the change of the lost-marked count (ns-3 takes its
    /// absolute value, so lost segments acknowledged count too; Linux counts
    /// new marks only, here the increase).
    fn cong_control(&mut self, now: Time, delivered: u64, prior_in_flight: u64, prior_lost: u64) {
        let lost_now = self.rec.lost_segments();
        let lost = if self.c.cfg.profile == Profile::Linux {
            lost_now.saturating_sub(prior_lost)
        } else {
            lost_now.abs_diff(prior_lost)
        } * self.c.cfg.mss;
        let (min_rtt, rtt) = (self.c.rtt.min_rtt(), self.ack_rtt);
        let Some(r) = self.c.rate.as_mut() else {
            return;
        };
        let rs = r.gen_sample(delivered, lost, prior_in_flight, min_rtt, rtt);
        let rc = r.conn();
        let in_flight = self.bytes_in_flight();
        let info = self.c.info(now, in_flight);
        let act = self.c.cc.cong_control(&info, &mut self.c.w, &rc, &rs);
        if act.mark_app_limited {
            if let Some(r) = self.c.rate.as_mut() {
                r.set_app_limited(in_flight);
            }
        }
        self.take_pacing_rate();
    }

    /// Whether loss is evident without the duplicate-ACK count: with RACK any
    /// segment marked lost (Linux `tcp_time_to_recover`, lost_out > 0); else
    /// the head deemed lost by `IsLost`.
    fn loss_marked(&self) -> bool {
        if self.rack {
            self.rec.any_lost()
        } else {
            self.rec.head_lost()
        }
    }

    /// Start fast recovery: a new loss episode ends any probe episode (Linux
    /// `tcp_init_cwnd_reduction` clears `tlp_high_seq`).
    fn enter_recovery(&mut self, now: Time, delivered: u64, out: &mut Vec<Packet>) {
        self.tlp_high = None;
        self.rec.enter(&mut self.c, now, delivered, out);
    }

    /// RFC 5827 early retransmit: fewer than 4 segments outstanding (at least
    /// 2), no new segment that the data and the receive window allow, and
    /// outstanding − 1 duplicate ACKs (with SACK: that many segments SACKed).
    fn early_retransmit_due(&self) -> bool {
        if !self.early_retransmit {
            return false;
        }
        let old_seg = self.c.flight_size().div_ceil(self.c.cfg.mss);
        if !(2..4).contains(&old_seg) || self.c.next_new_segment(false).is_some() {
            return false;
        }
        let seen = match self.rec.sacked_segments() {
            Some(sacked) => sacked,
            None => self.c.dupacks,
        };
        u64::from(seen) >= old_seg - 1
    }

    #[allow(clippy::too_many_arguments)]
    fn on_new_ack(
        &mut self,
        now: Time,
        p: &Packet,
        ack: u64,
        delivered: u64,
        newly_sacked: u64,
        reorder_armed: bool,
        out: &mut Vec<Packet>,
    ) {
        let newly = ack - self.c.snd_una;
        let sample = self.ack_rtt_sample(now, p, ack);
        if let Some(r) = sample {
            self.take_rtt_sample(now, r);
        }
        self.ack_rtt = sample;
        let mss = self.c.cfg.mss;
        self.rto_streak = 0;
        self.user_at = None;
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
                self.after_recovery_exit(now, segments);
            }
            CaState::Recovery => {
                restart_timer = self.rec.on_partial_ack(&mut self.c, now, &a, out);
            }
            CaState::Open | CaState::Disorder
                if self.c.b.sack_ack_is_dupack && newly_sacked > 0 =>
            {
                restart_timer = self.on_sacking_new_ack(now, &a, out);
            }
            CaState::Open | CaState::Disorder
                if self.rack && self.rec.any_lost() && self.may_enter_recovery() =>
            {
                // RACK marked a loss on an ACK that advanced (Linux enters
                // recovery in tcp_fastretrans_alert, before any cwnd growth).
                self.c.dupacks = 0;
                self.enter_recovery(now, a.delivered, out);
            }
            CaState::Loss | CaState::Open | CaState::Disorder => {
                self.on_new_ack_outside_recovery(now, ack, &a, sample);
            }
        }

        self.timer_after_new_ack(now, restart_timer, reorder_armed);
    }

    /// As ns-3 (ProcessAck) and Linux, the ACK that ends recovery also grows
    /// the window from its new value, cwnd = ssthresh; where the recovery
    /// says not (ns-2's Sack1), the controller sees the ACK, the window stays.
    fn after_recovery_exit(&mut self, now: Time, segments: u32) {
        let srtt = self.c.rtt.srtt();
        if !self.rec.grows_on_recovery_exit() {
            let in_flight = self.bytes_in_flight();
            self.c.pkts_acked(now, segments, srtt, in_flight);
        } else {
            self.grow(now, segments, srtt);
        }
    }

    /// The RTT sample a new ACK of `ack` gives: from the timestamp echo, or
    /// from the timed segment once the ACK covers it (Karn: none otherwise).
    fn ack_rtt_sample(&mut self, now: Time, p: &Packet, ack: u64) -> Option<Duration> {
        if self.c.cfg.timestamps {
            return Some(self.c.ts_rtt(now, p.ts_ecr));
        }
        if let Some(h) = self.c.rtt_history.as_mut() {
            return h.on_ack(now, ack);
        }
        match self.c.timed {
            Some((end, sent)) if ack >= end => {
                self.c.timed = None;
                Some(now - sent)
            }
            _ => None,
        }
    }

    /// The retransmission timer after a new ACK: cleared when nothing is
    /// outstanding, else restarted if `restart` (the RTO, or with TLP or RACK
    /// a probe, unless RACK just armed the reorder timer).
    fn timer_after_new_ack(&mut self, now: Time, restart: bool, reorder_armed: bool) {
        if restart && self.c.b.new_ack_clears_backoff {
            // ns-3 `NewAck` recomputes m_rto even when the ACK leaves nothing
            // outstanding: a two-way connection's next message starts from the
            // unbacked-off RTO.
            self.c.rtt.clear_backoff();
        }
        if self.c.snd_una >= self.c.snd_max {
            self.c.clear_timer();
        } else if restart {
            if !(self.tlp || self.rack) {
                self.c.set_rto_timer(now);
            } else if !reorder_armed {
                // Linux tcp_set_xmit_timer (FLAG_SET_XMIT_TIMER), unless RACK
                // just armed the reorder timer: a probe if one may be
                // scheduled, else the RTO.
                if !self.schedule_loss_probe(now, true) {
                    self.rearm_rto(now);
                }
            }
        }
    }

    /// RFC 6582 §3.2 step 1 / RFC 6675 RecoveryPoint: a new recovery only once
    /// snd_una passes the previous `recover` (ns-2: by a packet, or nothing
    /// but the pseudo-SYN acknowledged; `recover_guard_one_past`).
    fn may_enter_recovery(&self) -> bool {
        let una = self.c.snd_una;
        self.c
            .recover
            .is_none_or(|r| match self.c.b.recover_guard_one_past {
                true => una > r || una == 0,
                false => una >= r,
            })
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
        let may_enter = self.may_enter_recovery();
        let threshold = !self.rack && self.c.dupacks == self.c.cfg.dupack_threshold;
        let early = !threshold && !self.loss_marked() && self.early_retransmit_due();
        if ((threshold || early) && may_enter) || self.loss_marked() {
            if early {
                self.c.stats.early_retransmits += 1;
            }
            self.enter_recovery(now, a.delivered, out);
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
        self.rec.on_new_ack_outside_recovery(&mut self.c);
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
        if self.c.cc_owns_cwnd {
            self.c.dupacks = 0;
            self.rec.on_exit();
            let in_flight = self.bytes_in_flight();
            if self.c.cfg.profile == Profile::Linux {
                // tcp_end_cwnd_reduction returns at once for a controller
                // with cong_control: no cwnd = ssthresh, no COMPLETE_CWR.
                self.set_state(now, CaState::Open);
            } else {
                // ns-3 ProcessAck: CwndEvent(COMPLETE_CWR) (BBR restores
                // cwnd), CongestionStateSet(OPEN), then cwnd = ssthresh, a
                // uint32_t: an ssthresh never set gives UINT32_MAX.
                self.c.cwnd_event(now, CwndEvent::CompleteCwr, in_flight);
                self.set_state(now, CaState::Open);
                self.c.w.cwnd = self.c.w.ssthresh.min(u64::from(u32::MAX));
            }
            return;
        }
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
            CaState::Open | CaState::Disorder if !self.rec.counts_dupack() => {}
            CaState::Open | CaState::Disorder => {
                self.c.dupacks += 1;
                // RFC 6582 §3.2 step 1 (and RFC 6675's RecoveryPoint): enter
                // only if the ACK covers more than `recover`, the highest byte
                // sent; `recover` is kept as an exclusive end (snd_max), hence
                // >=. As ns-3 (highRxAck >= m_recover). Reno has no such guard.
                let may_enter = !self.rec.guards_recover() || self.may_enter_recovery();
                // With RACK the count does not matter, only RACK's marks
                // (Linux since 4.18: tcp_time_to_recover).
                let threshold = !self.rack && self.c.dupacks >= self.c.cfg.dupack_threshold;
                let marked = self.loss_marked();
                let early = !threshold && !marked && self.early_retransmit_due();
                if (threshold || marked || early) && may_enter {
                    if early {
                        self.c.stats.early_retransmits += 1;
                    }
                    self.enter_recovery(now, newly_sacked, out);
                } else {
                    if self.c.ca_state == CaState::Open {
                        self.set_state(now, CaState::Disorder);
                    }
                    self.rec.on_limited_transmit(&mut self.c);
                }
            }
            CaState::Recovery => {
                self.c.dupacks += 1;
                self.rec.on_dupack(&mut self.c, newly_sacked);
            }
            // A duplicate the recovery counts in Loss (ns-2's Sack1) counts
            // below the threshold only: limited transmit, no fast retransmit
            // before `recover` (`bug_fix_`).
            CaState::Loss
                if self.rec.counts_dupack_in_loss()
                    && self.c.dupacks + 1 < self.c.cfg.dupack_threshold =>
            {
                self.c.dupacks += 1;
            }
            CaState::Loss => {}
        }
    }

    /// When `user_timeout` drops the connection, while it is open.
    fn user_deadline(&self) -> Option<Time> {
        let at = self.user_at?;
        (self.aborted.is_none() && self.c.phase == Phase::Established).then_some(at)
    }

    fn give_up(&mut self, reason: &'static str) {
        self.aborted = Some(reason);
        self.c.pacing.blocked = false;
        self.c.phase = Phase::Idle;
        self.c.clear_timer();
    }

    fn on_rto(&mut self, now: Time, out: &mut Vec<Packet>) {
        if self.rto_streak >= self.c.cfg.data_retries() {
            // ns-3 ReTxTimeout with m_dataRetrCount == 0 / Linux
            // tcp_write_timeout past tcp_retries2: drop the connection.
            self.give_up("data_retries");
            return;
        }
        self.rto_streak += 1;
        if let (None, Some(limit)) = (self.user_at, self.c.cfg.user_timeout_ns) {
            // From the head's send time; without per-segment times (no SACK
            // scoreboard), from when the expiring timer was armed, an RTO ago.
            // Never at or before this timeout (Linux clamps to one jiffy).
            let armed = Time(now.0.saturating_sub(self.c.rtt.rto().0));
            let stamp = self.rec.head_sent_at().unwrap_or(armed);
            self.user_at = Some((stamp + Duration(limit)).max(now + Duration(1)));
        }
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
        self.c.w.cwnd = self.c.cfg.mss * self.c.cc.loss_window_segments();
        // ns-3: every segment is lost now, BytesInFlight() == 0.
        self.c.rate_restart = self.c.rate.is_some() && self.c.cfg.profile == Profile::Ns3;
        self.c.recover = Some(self.c.snd_max);
        self.c.dupacks = 0;
        self.c.timed = None;
        if let Some(h) = self.c.rtt_history.as_mut() {
            h.clear();
        }
        self.c.rtt.back_off();
        self.rec.on_timeout(&mut self.c, now);
        // Linux tcp_enter_loss: a timeout ends any probe episode.
        self.tlp_high = None;
        self.c.clear_timer();
        self.send_data(now, out);
    }

    // ---- tail loss probe, RACK's reorder timer, the RTO re-armed -----------

    /// Linux `tcp_schedule_loss_probe`: arm the probe timeout if TLP is on,
    /// data is outstanding and the sender is in Open (Linux Open: nothing
    /// SACKed or marked lost). PTO = 2·SRTT plus the delayed-ACK allowance
    /// (`tcp_rto_min`, 200 ms) with one segment out, else plus 2 ms; 1 s
    /// (`rto_initial`, TCP_TIMEOUT_INIT) before any RTT sample; never later
    /// than the RTO would expire: an RTO from now when an ACK just advanced
    /// (`advancing`), else the time left to the RTO (`tcp_rto_delta_us`).
    fn schedule_loss_probe(&mut self, now: Time, advancing: bool) -> bool {
        if !self.tlp
            || self.c.flight_size() == 0
            || self.c.ca_state != CaState::Open
            || self.rec.left_out()
        {
            return false;
        }
        let mut timeout = match self.c.rtt.srtt() {
            Some(srtt) => {
                let allowance = if self.rec.packets_out(&self.c) == 1 {
                    Duration(self.c.cfg.tlp_delack_allowance_ns())
                } else {
                    TIMEOUT_MIN
                };
                srtt.saturating_mul(2) + allowance
            }
            None => Duration(self.c.cfg.rto_initial_ns),
        };
        let rto = self.c.rtt.rto();
        let rto_left = if advancing {
            Some(rto)
        } else {
            self.rto_delta(now, rto)
        };
        if let Some(left) = rto_left.filter(|d| d.0 > 0) {
            timeout = timeout.min(left);
        }
        self.c.timer = Some(now + timeout);
        self.c.timer_kind = TimerKind::Probe;
        true
    }

    /// Time left until the RTO would expire (Linux `tcp_rto_delta_us`): an RTO
    /// after the head's last transmission with `rto_from_head`, else an RTO
    /// from now. None if that time has passed.
    fn rto_delta(&self, now: Time, rto: Duration) -> Option<Duration> {
        match self.rec.head_sent_at() {
            Some(head) if self.rto_from_head => {
                let at = head + rto;
                (at > now).then(|| at - now)
            }
            _ => Some(rto),
        }
    }

    /// Linux `tcp_rearm_rto`: nothing outstanding stops the timer; otherwise
    /// the RTO, from now, or, when a probe or reorder timer held the timer and
    /// `rto_from_head` is on, an RTO after the head's last transmission (at
    /// least 1 µs ahead; Linux: one jiffy).
    fn rearm_rto(&mut self, now: Time) {
        if self.c.flight_size() == 0 {
            self.c.clear_timer();
            return;
        }
        let rto = self.c.rtt.rto();
        let at = match (self.c.timer_kind, self.rec.head_sent_at()) {
            (TimerKind::Probe | TimerKind::Reorder, Some(head)) if self.rto_from_head => {
                (head + rto).max(now + Duration::from_micros(1))
            }
            _ => now + rto,
        };
        self.c.timer = Some(at);
        self.c.timer_kind = TimerKind::Rto;
    }

    /// The probe timeout fired (Linux `tcp_send_loss_probe`): unless a probe
    /// is already out, send one new segment if the receive window allows
    /// (whatever cwnd says), else the highest outstanding segment again; then
    /// the RTO: from now after a probe, else re-armed as `rearm_rto` says.
    fn on_probe_timer(&mut self, now: Time, out: &mut Vec<Packet>) {
        if self.tlp_high.is_none() {
            if let Some(retransmission) = self.rec.send_probe(&mut self.c, now, out) {
                self.tlp_retrans = retransmission;
                self.tlp_high = Some(self.c.snd_max);
                self.tlp_una = self.c.snd_una;
                self.c.stats.tlp_probes += 1;
                // Linux clears icsk_pending so that the RTO restarts from now.
                self.c.timer_kind = TimerKind::Rto;
            }
        }
        self.rearm_rto(now);
    }

    /// Linux `tcp_process_tlp_ack`, for every ACK while a probe episode is
    /// open and the ACK reaches `tlp_high_seq`: a probe of new data ends the
    /// episode; an ACK beyond `tlp_high_seq` means the probe repaired a loss:
    /// ssthresh from the controller and cwnd = ssthresh (Linux passes through
    /// CWR at once: `tcp_init_cwnd_reduction`, `tcp_end_cwnd_reduction`); a
    /// pure duplicate ACK means the original and the probe both arrived. An
    /// ACK of exactly `tlp_high_seq` that advances decides nothing. (Linux
    /// also ends the episode on a D-SACK of the probe; vtlab's receiver sends
    /// no D-SACK.)
    fn process_tlp_ack(&mut self, now: Time, ack: u64, pure_dupack: bool) {
        let Some(high) = self.tlp_high else { return };
        if ack < high {
            return;
        }
        if !self.tlp_retrans || (ack == high && pure_dupack) {
            self.tlp_high = None;
        } else if ack > high {
            self.tlp_high = None;
            let in_flight = self.bytes_in_flight();
            self.c.loss_event_in(now, in_flight, self.tlp_una, high);
            if self.c.w.ssthresh < u64::MAX && !self.c.cc_owns_cwnd {
                self.c.w.cwnd = self.c.w.ssthresh;
            }
            self.c.cwnd_event(now, CwndEvent::CompleteCwr, in_flight);
            self.c.stats.tlp_recoveries += 1;
        }
    }

    /// RACK's scan; a wait still pending arms the reorder timer, that wait
    /// plus 2 ms but at most an RTO ahead (Linux `tcp_rack_mark_lost`).
    /// Returns whether it did.
    fn rack_detect(&mut self, now: Time, force: bool) -> bool {
        let scan = self.rec.rack_detect(&mut self.c, now, force);
        let Some(wait) = scan.wait.filter(|_| !force) else {
            return false;
        };
        let delay = (wait + TIMEOUT_MIN).min(self.c.rtt.rto());
        self.c.timer = Some(now + delay);
        self.c.timer_kind = TimerKind::Reorder;
        true
    }

    /// The reorder timer fired (Linux `tcp_rack_reo_timeout`): RACK marks the
    /// segments whose wait is over; if any, recovery starts (unless under
    /// way) and they are resent; then the RTO is re-armed.
    fn on_reorder_timer(&mut self, now: Time, out: &mut Vec<Packet>) {
        self.c.stats.reorder_timeouts += 1;
        let before = self.bytes_in_flight();
        let scan = self.rec.rack_detect(&mut self.c, now, true);
        if scan.marked > 0 || self.bytes_in_flight() != before {
            if self.c.ca_state != CaState::Recovery {
                // Linux then runs tcp_cwnd_reduction with one packet delivered.
                self.c.dupacks = 0;
                let mss = self.c.cfg.mss;
                self.enter_recovery(now, mss, out);
            }
            self.send_data(now, out);
        }
        if self.c.timer_kind != TimerKind::Rto {
            self.rearm_rto(now);
        }
    }

    // ---- output --------------------------------------------------------------

    /// Send as much as the windows and the send buffer allow.
    fn send_data(&mut self, now: Time, out: &mut Vec<Packet>) {
        if self.c.phase == Phase::Established {
            let before = out.len();
            let snd_max = self.c.snd_max;
            self.rec.send(&mut self.c, now, out);
            if (self.tlp || self.rack) && self.c.snd_max > snd_max {
                // New data went out (Linux tcp_event_new_data_sent, then
                // tcp_write_xmit): a pending probe gives way to the RTO, then
                // a probe is scheduled again if it may be.
                if self.c.timer_kind == TimerKind::Probe {
                    self.rearm_rto(now);
                }
                self.schedule_loss_probe(now, false);
            }
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

#[cfg(test)]
#[path = "tlp_tests.rs"]
mod tlp_tests;
