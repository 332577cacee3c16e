//! The TCP sender of a bulk transfer: connection set-up, transmission under
//! the congestion and receive windows, loss detection and recovery, and the
//! retransmission timer.
//!
//! Loss recovery is selectable (`TcpConfig::recovery`, cc-spec §1.4):
//! * `tahoe`: on the `dupack_threshold`-th duplicate ACK, retransmit, cwnd = 1
//!   segment and go back N in slow start (no fast recovery).
//! * `reno` (RFC 5681): fast retransmit, cwnd = ssthresh + 3·MSS inflated by one
//!   MSS per further duplicate ACK, recovery left on the first new ACK.
//! * `newreno` (RFC 6582): as Reno, but partial ACKs retransmit the next hole and
//!   deflate, and only an ACK covering `recover` ends recovery; the RTO is
//!   restarted only on the first partial ACK ("impatient").
//! * `sack` (RFC 6675): a scoreboard of SACKed, lost and retransmitted segments;
//!   recovery starts on the threshold or when the head is deemed lost; during
//!   recovery segments go out while cwnd − pipe ≥ 1 MSS in `NextSeg()` order;
//!   cwnd is held at ssthresh, or set by PRR (RFC 6937) when `prr` is on.
//!
//! Common to all: limited transmit (RFC 3042; in SACK form, new data while
//! cwnd − pipe ≥ 1 MSS), the retransmission timer of RFC 6298 (Karn's rule
//! unless timestamps give unambiguous samples), and after a timeout state
//! Loss: cwnd = 1 MSS, resend the unacknowledged (un-SACKed) data in slow
//! start; duplicate ACKs are ignored in Loss, as ns-3 does, and Loss ends once
//! everything outstanding at the timeout is acknowledged. Window laws belong to
//! the congestion controller.
//!
//! Sequence numbers are absolute byte offsets of the transfer, starting at 0.

use crate::engine::{Duration, Time};
use crate::net::{NodeId, Packet, PacketKind};
use std::collections::BTreeMap;

use crate::tcp::behaviour::StackBehaviour;
use crate::tcp::cc::{AnyCc, CongestionOps, ConnInfo, CwndEvent, LossCause, Window};
use crate::tcp::config::option_bytes;
use crate::tcp::prr::Prr;
use crate::tcp::scoreboard::{Next, Scoreboard};
use crate::tcp::{CaState, Recovery, RttEstimator, TcpConfig};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Idle,
    SynSent,
    Established,
}

/// Counters of one sender.
#[derive(Clone, Debug, Default)]
pub struct SenderStats {
    /// Data segments transmitted, retransmissions included.
    pub segments_sent: u64,
    pub retransmissions: u64,
    /// Retransmission-timer expiries (every expiry, backoff repeats included).
    pub rto_count: u64,
    pub fast_recoveries: u64,
    /// Entries into slow start after a loss (a timeout outside state Loss).
    pub slow_starts_after_loss: u64,
    pub syn_retransmissions: u64,
    /// Loss events (fast retransmits and first timeouts of a window).
    pub loss_events: u64,
    /// Their true causes, from the simulator's drop records.
    pub true_link_losses: u64,
    pub true_congestion_losses: u64,
    /// The controller's verdicts, for controllers that classify losses.
    pub predicted_link_losses: u64,
    pub predicted_congestion_losses: u64,
    /// Verdicts that matched the true cause.
    pub correct_predictions: u64,
    pub rtt_samples: u64,
    pub rtt_sum_s: f64,
    pub rtt_min: Option<Duration>,
    pub rtt_max: Option<Duration>,
}

pub struct Sender {
    cfg: TcpConfig,
    /// Where the profile follows ns-3 or Linux.
    b: StackBehaviour,
    cc: AnyCc,
    flow: u32,
    /// The receiver's node.
    peer: NodeId,
    total: u64,
    phase: Phase,
    syn_timeout: Duration,
    syn_sent_at: Time,
    syn_retransmitted: bool,
    snd_una: u64,
    snd_nxt: u64,
    snd_max: u64,
    w: Window,
    ca_state: CaState,
    dupacks: u32,
    /// RFC 6582 `recover`, as an exclusive end (snd_max when set).
    recover: Option<u64>,
    partial_ack_seen: bool,
    rwnd: u64,
    rtt: RttEstimator,
    /// Pending retransmission (or SYN) timer deadline.
    timer: Option<Time>,
    /// Karn timing without timestamps: (end of the timed segment, send time).
    timed: Option<(u64, Time)>,
    /// Acked bytes not yet counted as whole segments (ns-3 `m_bytesAckedNotProcessed`).
    acked_remainder: u64,
    /// SACK scoreboard (recovery `sack` only).
    sb: Option<Scoreboard>,
    /// PRR state while in SACK recovery with `prr` on.
    prr: Option<Prr>,
    /// ns-3 `m_isRetransDataAcked` for the ACK being processed: a partial ACK
    /// in recovery that cumulatively acknowledges retransmitted data.
    retx_acked: bool,
    /// The loss oracle: why each data segment was last dropped, by sequence
    /// number, recorded by the simulation (see [`Sender::record_drop`]).
    drops: BTreeMap<u64, LossCause>,
    pub stats: SenderStats,
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
            b,
            syn_timeout: Duration(cfg.syn_timeout_ns),
            rwnd: cfg.mss,
            cc,
            flow,
            peer,
            total,
            phase: Phase::Idle,
            syn_sent_at: Time::ZERO,
            syn_retransmitted: false,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            w,
            ca_state: CaState::Open,
            dupacks: 0,
            recover: None,
            partial_ack_seen: false,
            rtt,
            timer: None,
            timed: None,
            acked_remainder: 0,
            sb: (cfg.recovery == Recovery::Sack).then(|| {
                Scoreboard::new(cfg.mss).with_ns3_pipe(b.pipe_counts_sacked_retransmissions)
            }),
            prr: None,
            retx_acked: false,
            drops: BTreeMap::new(),
            stats: SenderStats::default(),
            cfg,
        }
    }

    // ---- observation -------------------------------------------------------

    pub fn timer_deadline(&self) -> Option<Time> {
        self.timer
    }
    pub fn is_done(&self) -> bool {
        self.phase == Phase::Established && self.snd_una >= self.total
    }
    pub fn window(&self) -> Window {
        self.w
    }
    pub fn ca_state(&self) -> CaState {
        self.ca_state
    }
    pub fn snd_una(&self) -> u64 {
        self.snd_una
    }
    pub fn snd_max(&self) -> u64 {
        self.snd_max
    }
    pub fn srtt(&self) -> Option<Duration> {
        self.rtt.srtt()
    }
    pub fn rto(&self) -> Duration {
        self.rtt.rto()
    }
    /// RFC 5681 FlightSize: bytes sent and not cumulatively acknowledged.
    pub fn flight_size(&self) -> u64 {
        self.snd_max - self.snd_una
    }

    /// Bytes the sender believes are in the network: RFC 6675 `pipe` with
    /// SACK, FlightSize otherwise (ns-3 `BytesInFlight`).
    pub fn bytes_in_flight(&self) -> u64 {
        match &self.sb {
            Some(sb) => sb.pipe(),
            None => self.flight_size(),
        }
    }

    fn info(&self, now: Time) -> ConnInfo {
        ConnInfo {
            now,
            mss: self.cfg.mss,
            snd_una: self.snd_una,
            snd_nxt: self.snd_nxt,
            snd_max: self.snd_max,
            bytes_in_flight: self.bytes_in_flight(),
            srtt: self.rtt.srtt(),
            min_rtt: self.rtt.min_rtt(),
            ca_state: self.ca_state,
            profile: self.cfg.profile,
            loss_cause: None,
        }
    }

    /// The simulation reports that the data segment starting at `seq` was
    /// dropped, and why (the oracle's input; no real sender has it).
    pub fn record_drop(&mut self, seq: u64, cause: LossCause) {
        if seq >= self.snd_una {
            self.drops.insert(seq, cause);
        }
    }

    /// ssthresh for a loss event of the first unacknowledged segment: asks the
    /// controller (passing the oracle's truth in `ConnInfo::loss_cause`) and
    /// accounts the event and, for classifying controllers, the verdict.
    fn loss_event_ssthresh(&mut self, now: Time, in_flight: u64) -> u64 {
        self.drops = self.drops.split_off(&self.snd_una);
        let truth = self.drops.get(&self.snd_una).copied();
        let mut info = self.info(now);
        info.loss_cause = truth;
        let ssthresh = self.cc.ssthresh(&info, &self.w, in_flight);
        let s = &mut self.stats;
        s.loss_events += 1;
        match truth {
            Some(LossCause::Link) => s.true_link_losses += 1,
            Some(LossCause::Congestion) => s.true_congestion_losses += 1,
            None => {}
        }
        if let Some(verdict) = self.cc.loss_verdict() {
            match verdict {
                LossCause::Link => s.predicted_link_losses += 1,
                LossCause::Congestion => s.predicted_congestion_losses += 1,
            }
            if truth == Some(verdict) {
                s.correct_predictions += 1;
            }
        }
        ssthresh
    }

    fn set_state(&mut self, now: Time, new: CaState) {
        if new != self.ca_state {
            let info = self.info(now);
            self.cc.congestion_state_set(&info, &mut self.w, new);
            self.ca_state = new;
        }
    }

    // ---- inputs --------------------------------------------------------------

    /// Open the connection (send the SYN).
    pub fn start(&mut self, now: Time, out: &mut Vec<Packet>) {
        self.phase = Phase::SynSent;
        self.send_syn(now, out);
    }

    fn send_syn(&mut self, now: Time, out: &mut Vec<Packet>) {
        self.syn_sent_at = now;
        self.timer = Some(now + self.syn_timeout);
        out.push(self.packet(now, PacketKind::Syn, 0, 0));
    }

    /// A packet of this flow arrived at the sender.
    pub fn on_packet(&mut self, now: Time, p: &Packet, out: &mut Vec<Packet>) {
        match p.kind {
            PacketKind::SynAck => self.on_syn_ack(now, p, out),
            PacketKind::Ack => self.on_ack(now, p, out),
            PacketKind::Syn | PacketKind::Data => {}
        }
    }

    /// The timer fired at `now` (the simulation calls this only at or after
    /// [`Sender::timer_deadline`]).
    pub fn on_timer(&mut self, now: Time, out: &mut Vec<Packet>) {
        match self.timer {
            Some(t) if t <= now => {}
            _ => return,
        }
        match self.phase {
            Phase::Idle => self.timer = None,
            Phase::SynSent => {
                // ns-3 ConnTimeout: retransmit the SYN, doubling the timeout.
                self.stats.syn_retransmissions += 1;
                self.syn_retransmitted = true;
                self.syn_timeout = self.syn_timeout.saturating_mul(2);
                self.send_syn(now, out);
            }
            Phase::Established => self.on_rto(now, out),
        }
    }

    fn on_syn_ack(&mut self, now: Time, p: &Packet, out: &mut Vec<Packet>) {
        if self.phase != Phase::SynSent {
            return;
        }
        let sample = if self.cfg.timestamps {
            Some(now - p.ts_ecr)
        } else if !self.syn_retransmitted {
            Some(now - self.syn_sent_at)
        } else {
            None
        };
        if let Some(r) = sample {
            self.take_rtt_sample(r);
        }
        self.rwnd = p.rwnd;
        self.phase = Phase::Established;
        self.timer = None;
        let info = self.info(now);
        self.cc.cwnd_event(&info, &mut self.w, CwndEvent::TxStart);
        self.send_data(now, out);
    }

    fn take_rtt_sample(&mut self, r: Duration) {
        self.rtt.sample(r);
        let s = &mut self.stats;
        s.rtt_samples += 1;
        s.rtt_sum_s += r.as_secs_f64();
        s.rtt_min = Some(s.rtt_min.map_or(r, |m| m.min(r)));
        s.rtt_max = Some(s.rtt_max.map_or(r, |m| m.max(r)));
    }

    fn on_ack(&mut self, now: Time, p: &Packet, out: &mut Vec<Packet>) {
        if self.phase != Phase::Established {
            return;
        }
        self.rwnd = p.rwnd;
        let ack = p.ack.min(self.snd_max);
        let mut newly_sacked = 0;
        let mut sacked_acked = 0;
        self.retx_acked = self.ca_state == CaState::Recovery
            && ack > self.snd_una
            && self.recover.is_some_and(|r| ack < r)
            && self
                .sb
                .as_ref()
                .is_some_and(|sb| sb.retransmitted_below(ack));
        if let Some(sb) = self.sb.as_mut() {
            sacked_acked = sb.on_cumulative_ack(ack.max(self.snd_una));
            newly_sacked = sb.on_sack_blocks(p.sack_blocks());
            sb.update_lost(self.cfg.dupack_threshold);
        }
        if ack > self.snd_una {
            // RFC 6937 DeliveredData: the advance of snd_una plus the newly SACKed
            // bytes, less the bytes SACKed earlier that this ACK now covers.
            let delivered = ack - self.snd_una + newly_sacked - sacked_acked;
            self.on_new_ack(now, p, ack, delivered, newly_sacked, out);
        } else if ack == self.snd_una && self.snd_max > self.snd_una {
            self.on_dupack(now, newly_sacked, out);
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
        let newly = ack - self.snd_una;
        let sample = if self.cfg.timestamps {
            Some(now - p.ts_ecr)
        } else {
            match self.timed {
                Some((end, sent)) if ack >= end => {
                    self.timed = None;
                    Some(now - sent)
                }
                _ => None,
            }
        };
        if let Some(r) = sample {
            self.take_rtt_sample(r);
        }
        self.snd_una = ack;
        self.snd_nxt = self.snd_nxt.max(ack);
        self.acked_remainder += newly;
        let segments = (self.acked_remainder / self.cfg.mss) as u32;
        self.acked_remainder %= self.cfg.mss;
        let mut restart_timer = true;

        match self.ca_state {
            CaState::Recovery => {
                let recover = self.recover.unwrap_or(0);
                if ack >= recover || self.cfg.recovery == Recovery::Reno {
                    // Full ACK (RFC 6582 step 3, option 2 as ns-3; RFC 6675 end of
                    // recovery), or any new ACK for Reno: deflate to ssthresh.
                    self.exit_recovery(now);
                    // As ns-3 (ProcessAck) and Linux: the ACK that ends recovery also
                    // grows the window from its new value, cwnd = ssthresh.
                    let info = self.info(now);
                    self.cc
                        .pkts_acked(&info, &self.w, segments, self.rtt.srtt());
                    self.cc.increase_window(&info, &mut self.w, segments);
                } else if self.sb.is_some() && self.b.ns3_prr {
                    // ns-3 ProcessAck: an ACK that also SACKs new data is a
                    // duplicate ACK first (DupAck → DoRecovery), then a partial
                    // ACK (DoRecovery again, if it covers a whole segment).
                    if newly_sacked > 0 {
                        self.prr_update_ns3(delivered, true);
                    }
                    if segments >= 1 {
                        self.prr_update_ns3(delivered, false);
                    }
                    // ns-3 ProcessAck (partial ACK): unless the new head was
                    // already retransmitted, DoRetransmit() sends, whatever
                    // cwnd allows, NextSeg() without the recovery-only rule:
                    // the first lost segment not yet retransmitted, else new
                    // data, else the head again.
                    if self.b.partial_ack_retransmits
                        && self.sb.as_ref().is_some_and(|sb| !sb.head_retransmitted())
                    {
                        let lost = self.sb.as_ref().and_then(|sb| sb.first_unsent_lost());
                        match (lost, self.next_new_segment()) {
                            (Some(seq), _) => {
                                let len = self.sb.as_ref().map_or(0, |sb| sb.len_at(seq));
                                self.transmit(now, seq, len, out);
                            }
                            (None, Some(len)) => {
                                self.transmit(now, self.snd_max, len, out);
                                self.snd_max += len;
                                self.snd_nxt = self.snd_max;
                            }
                            (None, None) => self.retransmit_head(now, out),
                        }
                    }
                } else if self.sb.is_some() {
                    // SACK: the scoreboard drives retransmissions; PRR sets cwnd.
                    self.prr_update(delivered);
                } else {
                    // Partial ACK (step 4): retransmit the next hole, deflate by the
                    // amount acknowledged, add back one MSS if at least one was acked.
                    self.retransmit_head(now, out);
                    self.w.cwnd = self.w.cwnd.saturating_sub(newly);
                    if newly >= self.cfg.mss {
                        self.w.cwnd += self.cfg.mss;
                    }
                    self.w.cwnd = self.w.cwnd.max(self.cfg.mss);
                    restart_timer = !self.partial_ack_seen;
                    self.partial_ack_seen = true;
                }
            }
            CaState::Open | CaState::Disorder
                if self.b.sack_ack_is_dupack && newly_sacked > 0 && self.sb.is_some() =>
            {
                // ns-3 (RFC 6675 §2/§5): an ACK that SACKs new data is a
                // duplicate ACK even if it also advances snd_una: the dupack
                // counter grows (not reset), Open becomes Disorder, recovery may
                // start; cwnd does not grow (IncreaseWindow runs only in Open),
                // PktsAcked gets the segments beyond the earlier dupacks, and
                // the retransmission timer is left alone.
                let old_dupacks = self.dupacks;
                self.dupacks += 1;
                if self.ca_state == CaState::Open {
                    self.set_state(now, CaState::Disorder);
                }
                let may_enter = self.recover.is_none_or(|r| self.snd_una >= r);
                let head_lost = self.sb.as_ref().is_some_and(|sb| sb.head_lost());
                if (self.dupacks == self.cfg.dupack_threshold && may_enter) || head_lost {
                    self.enter_recovery(now, delivered, out);
                    if segments >= 1 {
                        self.prr_update_ns3(delivered, false);
                    }
                    let info = self.info(now);
                    self.cc.pkts_acked(&info, &self.w, 1, self.rtt.srtt());
                } else {
                    restart_timer = false;
                    if segments >= old_dupacks {
                        let info = self.info(now);
                        self.cc
                            .pkts_acked(&info, &self.w, segments - old_dupacks, self.rtt.srtt());
                    }
                }
            }
            CaState::Loss | CaState::Open | CaState::Disorder => {
                self.dupacks = 0;
                let info = self.info(now);
                let rtt = if self.b.pkts_acked_gets_srtt {
                    self.rtt.srtt()
                } else {
                    sample
                };
                let left_loss =
                    self.ca_state == CaState::Loss && self.recover.is_none_or(|r| ack >= r);
                // ns-3 ProcessAck: the ACK that ends Loss counts only the
                // segments above the recovery point (ack − m_recover). Below
                // it, ns-3's cwnd grows as if only the newly delivered data
                // counted: a cumulative ACK that covers data SACKed before the
                // timeout adds one segment, not the whole span (observed in
                // ns-3.44 traces; Cubic's byte-counting slow start would
                // otherwise jump to cwnd ≈ span and burst it).
                let ns3 = self.b.loss_exit_counts_above_recover;
                let segments = match (ns3, left_loss, self.recover) {
                    (true, true, Some(r)) => ((ack - r) / self.cfg.mss) as u32,
                    (true, false, _) if self.ca_state == CaState::Loss => {
                        segments.min((delivered / self.cfg.mss).max(1) as u32)
                    }
                    _ => segments,
                };
                self.cc.pkts_acked(&info, &self.w, segments, rtt);
                self.cc.increase_window(&info, &mut self.w, segments);
                if self.ca_state == CaState::Disorder || left_loss {
                    self.set_state(now, CaState::Open);
                }
            }
        }

        if self.snd_una >= self.snd_max {
            self.timer = None;
        } else if restart_timer {
            if self.b.new_ack_clears_backoff {
                // ns-3 NewAck recomputes m_rto from srtt/rttvar whenever it restarts
                // the timer, dropping any backoff without a new RTT sample (RFC 6298
                // keeps the backoff until a valid sample; the linux profile does).
                self.rtt.clear_backoff();
            }
            self.timer = Some(now + self.rtt.rto());
        }
    }

    fn exit_recovery(&mut self, now: Time) {
        self.w.cwnd = self.w.ssthresh;
        self.dupacks = 0;
        self.prr = None;
        self.set_state(now, CaState::Open);
        let info = self.info(now);
        self.cc
            .cwnd_event(&info, &mut self.w, CwndEvent::CompleteCwr);
    }

    /// ns3 profile: PRR as ns-3.44 `TcpPrrRecovery::DoRecovery` computes it.
    fn prr_update_ns3(&mut self, delivered: u64, dupack: bool) {
        let pipe = self.bytes_in_flight();
        let safe = self.retx_acked;
        if let Some(prr) = self.prr.as_mut() {
            if let Some(c) =
                prr.on_ack_ns3(delivered, pipe, self.w.ssthresh, self.cfg.mss, dupack, safe)
            {
                self.w.cwnd = c;
            }
        }
    }

    /// PRR: cwnd for an ACK that delivered `delivered` bytes during recovery.
    fn prr_update(&mut self, delivered: u64) {
        let pipe = self.bytes_in_flight();
        if let Some(prr) = self.prr.as_mut() {
            self.w.cwnd = prr.on_ack(delivered, pipe, self.w.ssthresh, self.cfg.mss);
        }
    }

    fn on_dupack(&mut self, now: Time, newly_sacked: u64, out: &mut Vec<Packet>) {
        if self.b.dupack_feeds_controller {
            // ns-3 feeds every duplicate ACK to the controller as one segment
            // with the current SRTT.
            let info = self.info(now);
            self.cc.pkts_acked(&info, &self.w, 1, self.rtt.srtt());
        }
        match self.ca_state {
            CaState::Open | CaState::Disorder => {
                self.dupacks += 1;
                // RFC 6582 step 1 (and RFC 6675's RecoveryPoint): enter only if the
                // ACK covers more than `recover`, the highest byte sent; `recover`
                // is kept as an exclusive end (snd_max), hence >=. As ns-3
                // (highRxAck >= m_recover). Classic Reno has no such guard.
                let may_enter = self.cfg.recovery == Recovery::Reno
                    || self.recover.is_none_or(|r| self.snd_una >= r);
                let head_lost = self.sb.as_ref().is_some_and(|sb| sb.head_lost());
                if (self.dupacks >= self.cfg.dupack_threshold || head_lost) && may_enter {
                    match self.cfg.recovery {
                        Recovery::Tahoe => self.tahoe_fast_retransmit(now, out),
                        _ => self.enter_recovery(now, newly_sacked, out),
                    }
                } else if self.ca_state == CaState::Open {
                    self.set_state(now, CaState::Disorder);
                }
            }
            CaState::Recovery => {
                self.dupacks += 1;
                if self.sb.is_some() && self.b.ns3_prr {
                    // ns-3 calls DupAck (and so DoRecovery) only for an ACK
                    // that updated the scoreboard.
                    if newly_sacked > 0 {
                        self.prr_update_ns3(newly_sacked, true);
                    }
                } else if self.sb.is_some() {
                    self.prr_update(newly_sacked);
                } else {
                    // Inflate: one more segment has left the network.
                    self.w.cwnd += self.cfg.mss;
                }
            }
            CaState::Loss => {}
        }
    }

    fn enter_recovery(&mut self, now: Time, newly_sacked: u64, out: &mut Vec<Packet>) {
        // ns-3 passes BytesInFlight (pipe with SACK); Linux controllers use cwnd.
        let in_flight = self.bytes_in_flight();
        self.w.ssthresh = self.loss_event_ssthresh(now, in_flight);
        self.recover = Some(self.snd_max);
        self.set_state(now, CaState::Recovery);
        self.partial_ack_seen = false;
        self.stats.fast_recoveries += 1;
        if self.sb.is_some() {
            self.w.cwnd = self.w.ssthresh;
            if self.cfg.prr && self.b.ns3_prr {
                // ns-3 TcpPrrRecovery::EnterRecovery: RecoverFS = pipe.
                self.prr = Some(Prr::enter(in_flight));
                self.prr_update_ns3(newly_sacked, true);
            } else if self.cfg.prr {
                self.prr = Some(Prr::enter(self.flight_size()));
                self.prr_update(newly_sacked);
            }
            // RFC 6675 (4.3): the first lost segment goes out whatever the window.
            self.retransmit_head(now, out);
        } else {
            self.w.cwnd = self.w.ssthresh + u64::from(self.dupacks) * self.cfg.mss;
            self.retransmit_head(now, out);
        }
    }

    /// Tahoe: retransmit and restart from one segment in slow start, going back N.
    fn tahoe_fast_retransmit(&mut self, now: Time, out: &mut Vec<Packet>) {
        let flight = self.flight_size();
        self.w.ssthresh = self.loss_event_ssthresh(now, flight);
        self.recover = Some(self.snd_max);
        self.set_state(now, CaState::Loss);
        self.w.cwnd = self.cfg.mss;
        self.dupacks = 0;
        self.timed = None;
        self.stats.slow_starts_after_loss += 1;
        self.snd_nxt = self.snd_una;
        self.send_data(now, out);
    }

    fn on_rto(&mut self, now: Time, out: &mut Vec<Packet>) {
        self.stats.rto_count += 1;
        // Reduce ssthresh only on the first timeout for this window: not when the
        // head was already resent since an earlier timeout (RFC 5681 §3.1, ns-3).
        let head_resent = self.ca_state == CaState::Loss
            && match &self.sb {
                Some(sb) => sb.head_retransmitted(),
                None => self.snd_una < self.snd_nxt.min(self.recover.unwrap_or(0)),
            };
        if !head_resent {
            let in_flight = self.bytes_in_flight();
            self.w.ssthresh = self.loss_event_ssthresh(now, in_flight);
        }
        if self.ca_state != CaState::Loss {
            self.stats.slow_starts_after_loss += 1;
        }
        let info = self.info(now);
        self.cc.cwnd_event(&info, &mut self.w, CwndEvent::Loss);
        self.set_state(now, CaState::Loss);
        self.w.cwnd = self.cfg.mss;
        self.recover = Some(self.snd_max);
        self.dupacks = 0;
        self.partial_ack_seen = false;
        self.timed = None;
        self.prr = None;
        self.rtt.back_off();
        match self.sb.as_mut() {
            // Resend every un-SACKed segment, lowest first, in slow start.
            Some(sb) => sb.on_timeout(),
            // Go back N: resend from the first unacknowledged byte in slow start.
            None => self.snd_nxt = self.snd_una,
        }
        self.timer = None;
        self.send_data(now, out);
    }

    // ---- output --------------------------------------------------------------

    fn packet(&self, now: Time, kind: PacketKind, seq: u64, len: u32) -> Packet {
        Packet {
            flow: self.flow,
            dst: self.peer,
            kind,
            seq,
            len,
            ack: 0,
            rwnd: 0,
            ts_val: now,
            ts_ecr: Time::ZERO,
            ip_bytes: len + self.cfg.header_bytes as u32 + option_bytes(self.cfg.timestamps, 0),
            sack: Default::default(),
            sack_len: 0,
            frag_index: 0,
            frag_count: 1,
        }
    }

    fn transmit(&mut self, now: Time, seq: u64, len: u64, out: &mut Vec<Packet>) {
        let is_retransmission = seq < self.snd_max;
        self.stats.segments_sent += 1;
        if is_retransmission {
            self.stats.retransmissions += 1;
            // Karn: a retransmission makes the timed segment's sample ambiguous.
            self.timed = None;
        } else if !self.cfg.timestamps && self.timed.is_none() {
            self.timed = Some((seq + len, now));
        }
        if let Some(sb) = self.sb.as_mut() {
            if is_retransmission {
                sb.mark_retransmitted(seq);
            } else {
                sb.on_new_data(seq, len);
            }
        }
        if let Some(prr) = self.prr.as_mut() {
            prr.on_send(len);
        }
        if self.timer.is_none() {
            self.timer = Some(now + self.rtt.rto());
        }
        out.push(self.packet(now, PacketKind::Data, seq, len as u32));
    }

    fn retransmit_head(&mut self, now: Time, out: &mut Vec<Packet>) {
        let len = match &self.sb {
            Some(sb) if self.snd_max > self.snd_una => sb.len_at(self.snd_una),
            _ => self.cfg.mss.min(self.snd_max - self.snd_una),
        };
        if len > 0 {
            self.transmit(now, self.snd_una, len, out);
        }
    }

    /// Send as much as the windows and the send buffer allow.
    fn send_data(&mut self, now: Time, out: &mut Vec<Packet>) {
        if self.phase != Phase::Established {
            return;
        }
        if self.sb.is_some() {
            self.send_data_sack(now, out);
        } else {
            self.send_data_classic(now, out);
        }
    }

    /// Length of the next new segment, if the send buffer and the receive
    /// window allow one: full-sized except the transfer's tail.
    fn next_new_segment(&self) -> Option<u64> {
        let data_end = self.total.min(self.snd_una + self.cfg.send_buffer);
        if self.snd_max >= data_end {
            return None;
        }
        let len = self.cfg.mss.min(data_end - self.snd_max);
        let is_tail = self.snd_max + len >= self.total;
        // ns-3 (AvailableWindow) compares the peer's window with pipe, which
        // the SACK sender checks in send_data_sack.
        let ns3_sack = self.b.rwnd_bounds_pipe && self.sb.is_some();
        let fits_rwnd = ns3_sack
            || self.snd_max + len <= self.snd_una + self.rwnd
            || self.snd_max == self.snd_una;
        ((len == self.cfg.mss || is_tail) && fits_rwnd).then_some(len)
    }

    /// SACK-based sending (RFC 6675): while cwnd − pipe ≥ 1 MSS, the next
    /// segment by `NextSeg()` in recovery, the first lost one after a timeout,
    /// new data otherwise.
    fn send_data_sack(&mut self, now: Time, out: &mut Vec<Packet>) {
        let mss = self.cfg.mss;
        loop {
            let Some(sb) = self.sb.as_ref() else { return };
            let wnd = if self.b.rwnd_bounds_pipe {
                self.w.cwnd.min(self.rwnd)
            } else {
                self.w.cwnd
            };
            if wnd < sb.pipe() + mss {
                break;
            }
            let new_len = self.next_new_segment();
            let next = match self.ca_state {
                CaState::Recovery => sb.next_seg(new_len.is_some()),
                CaState::Loss => sb
                    .first_unsent_lost()
                    .map(Next::Retransmit)
                    .or(new_len.map(|_| Next::NewData)),
                CaState::Open | CaState::Disorder => new_len.map(|_| Next::NewData),
            };
            match (next, new_len) {
                (Some(Next::Retransmit(seq)), _) => {
                    let len = sb.len_at(seq);
                    self.transmit(now, seq, len, out);
                }
                (Some(Next::NewData), Some(len)) => {
                    self.transmit(now, self.snd_max, len, out);
                    self.snd_max += len;
                    self.snd_nxt = self.snd_max;
                }
                _ => break,
            }
        }
    }

    /// Classic sending: new data (or go-back-N resends after a timeout) while
    /// `snd_nxt − snd_una` is below min(cwnd, rwnd), with the limited-transmit
    /// allowance; no runt segments mid-transfer, no splitting a segment to fit
    /// the window unless nothing is in flight.
    fn send_data_classic(&mut self, now: Time, out: &mut Vec<Packet>) {
        let mss = self.cfg.mss;
        let limited = if self.ca_state == CaState::Disorder && self.cfg.limited_transmit {
            u64::from(self.dupacks.min(2)) * mss
        } else {
            0
        };
        let wnd = (self.w.cwnd + limited).min(self.rwnd);
        let data_end = self.total.min(self.snd_una + self.cfg.send_buffer);
        loop {
            let outstanding = self.snd_nxt - self.snd_una;
            if outstanding >= wnd || self.snd_nxt >= data_end {
                break;
            }
            let len = mss.min(data_end - self.snd_nxt);
            let is_tail = self.snd_nxt + len >= self.total;
            // Sender-side silly-window avoidance: no runt segments mid-transfer,
            // and no splitting a segment to fit the window unless nothing is in flight.
            if (len < mss && !is_tail) || (len > wnd - outstanding && outstanding > 0) {
                break;
            }
            self.transmit(now, self.snd_nxt, len, out);
            self.snd_nxt += len;
            self.snd_max = self.snd_max.max(self.snd_nxt);
        }
    }
}

#[cfg(test)]
#[path = "sender_tests.rs"]
mod tests;
