//! The variables of a sending connection and the primitive operations that
//! the sender's state machine and the loss recoveries share (as ns-3's
//! `TcpSocketState` is shared by `TcpSocketBase` and its `TcpRecoveryOps`):
//! asking the controller, changing state, the loss oracle, putting a segment
//! on the wire.

use std::collections::BTreeMap;

use crate::engine::{Duration, Time};
use crate::net::{NodeId, Packet, PacketKind};
use crate::tcp::behaviour::StackBehaviour;
use crate::tcp::cc::{AnyCc, CongestionOps, ConnInfo, CwndEvent, LossCause, Window};
use crate::tcp::config::option_bytes;
use crate::tcp::rate::RateEstimator;
use crate::tcp::state::CaState;
use crate::tcp::{RttEstimator, TcpConfig};

/// Which timer the sender's single timer is (Linux `icsk_pending`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum TimerKind {
    /// Retransmission timeout (or the SYN timer before the connection is up).
    #[default]
    Rto,
    /// Tail loss probe timeout (PTO, RFC 8985 §7; `ICSK_TIME_LOSS_PROBE`).
    Probe,
    /// RACK reorder timer (RFC 8985 §6.3; `ICSK_TIME_REO_TIMEOUT`).
    Reorder,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
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
    /// Every RTT sample, for percentiles.
    pub rtt_hist: crate::tcp::rtt_hist::RttHistogram,
    /// Tail loss probes sent (Linux TCPLossProbes).
    pub tlp_probes: u64,
    /// Probe episodes that found a loss and reduced cwnd (Linux
    /// TCPLossProbeRecovery).
    pub tlp_recoveries: u64,
    /// Segments RACK marked lost.
    pub rack_losses: u64,
    /// RACK reorder-timer expiries.
    pub reorder_timeouts: u64,
    /// Fast retransmits that only RFC 5827's lowered threshold allowed.
    pub early_retransmits: u64,
}

/// The connection as the sender and its recovery see it.
pub(crate) struct Conn {
    pub cfg: TcpConfig,
    /// Where the profile follows ns-3 or Linux.
    pub b: StackBehaviour,
    pub cc: AnyCc,
    pub flow: u32,
    /// The receiver's node.
    pub peer: NodeId,
    pub total: u64,
    pub phase: Phase,
    pub snd_una: u64,
    pub snd_nxt: u64,
    pub snd_max: u64,
    pub w: Window,
    pub ca_state: CaState,
    pub dupacks: u32,
    /// RFC 6582 `recover`, as an exclusive end (snd_max when set).
    pub recover: Option<u64>,
    pub rwnd: u64,
    pub rtt: RttEstimator,
    /// Pending timer deadline: retransmission (or SYN), probe or reorder timer.
    pub timer: Option<Time>,
    /// Which timer `timer` is.
    pub timer_kind: TimerKind,
    /// Linux timer management (TLP or RACK on): a retransmission of the head
    /// restarts the RTO from now unless the reorder timer is pending
    /// (`tcp_xmit_retransmit_queue`).
    pub head_rexmit_rearms: bool,
    /// Karn timing without timestamps: (end of the timed segment, send time).
    pub timed: Option<(u64, Time)>,
    /// Without timestamps under `rtt_every_segment`: ns-3's per-segment
    /// history instead of `timed`.
    pub rtt_history: Option<crate::tcp::rtt_history::RttHistory>,
    /// The loss oracle: why each data segment was last dropped, by sequence
    /// number, recorded by the simulation (see `Sender::record_drop`).
    pub drops: BTreeMap<u64, LossCause>,
    pub stats: SenderStats,
    /// RFC 7323 TS.Recent: the newest TSval of the peer's ACKs, echoed in
    /// our segments (the receiver measures the RTT from it, as Linux does).
    pub ts_recent: Time,
    /// Linux `tcp_cwnd_validate` state: whether sending was cwnd-limited in
    /// the current window, the most bytes out in it, and where it ends.
    pub cwnd_limited: bool,
    pub max_out: u64,
    pub cwnd_usage_seq: u64,
    /// Delivery-rate estimation, kept only for a controller that asks for
    /// it (`CongestionOps::has_cong_control`).
    pub rate: Option<RateEstimator>,
    pub pacing: Pacing,
    /// The controller sets cwnd in recovery too (BBR): the recoveries leave
    /// it alone (ns-3 skips `TcpRecoveryOps` when `HasCongControl`).
    pub cc_owns_cwnd: bool,
    /// ns-3: the next transmission after a timeout starts a new sending
    /// flight for the rate estimator (`BytesInFlight() == 0`: every segment
    /// is marked lost).
    pub rate_restart: bool,
}

/// Pacing state (only with a controller that sets a pacing rate).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Pacing {
    /// Bytes per second; None: no pacing.
    pub rate: Option<f64>,
    /// No transmission from the send loops before this time.
    pub next: Time,
    /// A send loop stopped for pacing: the sender's timer wakes it at `next`.
    pub blocked: bool,
    /// Linux earliest-departure-time pacing (`tcp_wstamp_ns`,
    /// `tcp_update_skb_after_send`); else ns-3's pacing timer.
    pub edt: bool,
    /// ns-3 `IsPacingEnabled` without `PaceInitialWindow`: no pacing until
    /// more than the initial window has been sent.
    pub skip_initial_window: bool,
}

impl Conn {
    /// After a send attempt (Linux `tcp_cwnd_validate`): `limited` when cwnd
    /// stopped it. The record lasts a window of data (until snd_una passes
    /// where it began), so one cwnd-limited moment per round trip counts.
    pub fn cwnd_validate(&mut self, limited: bool, out: u64) {
        if self.snd_una >= self.cwnd_usage_seq
            || limited
            || (!self.cwnd_limited && out > self.max_out)
        {
            self.max_out = out;
            self.cwnd_usage_seq = self.snd_max;
            self.cwnd_limited = limited;
        }
    }

    /// Linux `tcp_is_cwnd_limited`: cwnd-limited in this window, or in slow
    /// start below twice the most that was out.
    pub fn is_cwnd_limited(&self) -> bool {
        self.cwnd_limited || (self.w.in_slow_start() && self.w.cwnd < 2 * self.max_out)
    }

    /// Whether pacing holds a transmission back at `now` (then the send
    /// loop stops and the sender's timer wakes it at `pacing.next`).
    pub fn pacing_holds(&mut self, now: Time) -> bool {
        if self.pacing.rate.is_none() || !self.pacing_active() || self.pacing.next <= now {
            return false;
        }
        self.pacing.blocked = true;
        true
    }

    fn pacing_active(&self) -> bool {
        !self.pacing.skip_initial_window
            || self.snd_max > u64::from(self.cfg.initial_cwnd) * self.cfg.mss
    }

    /// A segment of `len` bytes leaves at `now`: the next release time.
    /// ns-3 (`SendDataPacket`): if the pacing timer is not running, it runs
    /// for len / rate. Linux EDT (`tcp_update_skb_after_send`): the departure
    /// stamp moves on by len / rate, less up to half of that for time the
    /// flow lagged behind its schedule.
    fn on_paced_send(&mut self, now: Time, len: u64) {
        let Some(rate) = self.pacing.rate.filter(|r| *r > 0.0) else {
            return;
        };
        if !self.pacing_active() {
            return;
        }
        let gap = Duration((len as f64 * 1e9 / rate) as u64);
        if self.pacing.edt {
            let prior = self.pacing.next;
            let stamp = prior.max(now);
            let credit = stamp.since(prior);
            let gap = Duration(gap.0 - (gap.0 / 2).min(credit.0));
            self.pacing.next = stamp + gap;
        } else if self.pacing.next <= now {
            self.pacing.next = now + gap;
        }
    }

    /// RFC 5681 FlightSize: bytes sent and not cumulatively acknowledged.
    pub fn flight_size(&self) -> u64 {
        self.snd_max - self.snd_una
    }

    /// What the controller may read; `in_flight` is the recovery's
    /// bytes-in-flight estimate (pipe with SACK, FlightSize otherwise).
    pub fn info(&self, now: Time, in_flight: u64) -> ConnInfo {
        ConnInfo {
            now,
            mss: self.cfg.mss,
            snd_una: self.snd_una,
            snd_nxt: self.snd_nxt,
            snd_max: self.snd_max,
            bytes_in_flight: in_flight,
            srtt: self.rtt.srtt(),
            min_rtt: self.rtt.min_rtt(),
            ca_state: self.ca_state,
            profile: self.cfg.profile,
            rwnd: self.rwnd,
        }
    }

    /// Change the congestion state, telling the controller first.
    pub fn set_state(&mut self, now: Time, new: CaState, in_flight: u64) {
        if new != self.ca_state {
            let info = self.info(now, in_flight);
            self.cc.congestion_state_set(&info, &mut self.w, new);
            self.ca_state = new;
        }
    }

    pub fn cwnd_event(&mut self, now: Time, event: CwndEvent, in_flight: u64) {
        let info = self.info(now, in_flight);
        self.cc.cwnd_event(&info, &mut self.w, event);
    }

    /// Hand `segments` acknowledged segments to the controller (`pkts_acked`).
    pub fn pkts_acked(&mut self, now: Time, segments: u32, rtt: Option<Duration>, in_flight: u64) {
        let info = self.info(now, in_flight);
        self.cc.pkts_acked(&info, &self.w, segments, rtt);
    }

    /// A loss event of the first unacknowledged segment: sets ssthresh from
    /// the controller. A controller that asks for the loss oracle gets the
    /// true cause right before `ssthresh`; the event and, for classifying
    /// controllers, the verdict are counted.
    pub fn loss_event(&mut self, now: Time, in_flight: u64) {
        self.drops = self.drops.split_off(&self.snd_una);
        let truth = self.drops.get(&self.snd_una).copied();
        self.loss_event_with(now, in_flight, truth);
    }

    /// A loss event found after the lost data was acknowledged (a tail loss
    /// probe that repaired a loss): the true cause is that of the first
    /// segment recorded dropped in `[from, to)`.
    pub fn loss_event_in(&mut self, now: Time, in_flight: u64, from: u64, to: u64) {
        let truth = self.drops.range(from..to).next().map(|(_, c)| *c);
        self.drops = self.drops.split_off(&self.snd_una);
        self.loss_event_with(now, in_flight, truth);
    }

    fn loss_event_with(&mut self, now: Time, in_flight: u64, truth: Option<LossCause>) {
        if self.cc.wants_loss_oracle() {
            self.cc.on_loss_oracle(truth);
        }
        let info = self.info(now, in_flight);
        self.w.ssthresh = self.cc.ssthresh(&info, &self.w, in_flight);
        let s = &mut self.stats;
        s.loss_events += 1;
        match truth.map(LossCause::signal) {
            Some(LossCause::Link) => s.true_link_losses += 1,
            Some(_) => s.true_congestion_losses += 1,
            None => {}
        }
        if let Some(verdict) = self.cc.loss_verdict() {
            match verdict.signal() {
                LossCause::Link => s.predicted_link_losses += 1,
                _ => s.predicted_congestion_losses += 1,
            }
            if truth.map(LossCause::signal) == Some(verdict.signal()) {
                s.correct_predictions += 1;
            }
        }
    }

    /// The RTT sample of an ACK echoing timestamp `ts_ecr` (a send time):
    /// exact, or in whole milliseconds of a millisecond clock as ns-3
    /// measures it ([`StackBehaviour::ts_clock_ms`]).
    pub fn ts_rtt(&self, now: Time, ts_ecr: Time) -> Duration {
        if !self.b.ts_clock_ms {
            return now - ts_ecr;
        }
        const MS: u64 = 1_000_000;
        match (now.0 / MS).saturating_sub(ts_ecr.0 / MS) {
            0 => Duration(1_000), // ns-3 EstimateRtt: "approximating to 1us"
            ms => Duration(ms * MS),
        }
    }

    pub fn packet(&self, now: Time, kind: PacketKind, seq: u64, len: u32) -> Packet {
        Packet {
            flow: self.flow,
            dst: self.peer,
            kind,
            seq,
            len,
            ack: 0,
            rwnd: 0,
            ts_val: now,
            ts_ecr: if self.cfg.timestamps {
                self.ts_recent
            } else {
                Time::ZERO
            },
            ip_bytes: len + self.cfg.header_bytes as u32 + option_bytes(self.cfg.timestamps, 0),
            sack: Default::default(),
            sack_len: 0,
            frag_index: 0,
            frag_count: 1,
            piggyback: false,
            push: false,
        }
    }

    /// Put the data segment `[seq, seq + len)` on the wire: counters, Karn's
    /// timing, the retransmission timer. The caller advances snd_nxt/snd_max
    /// and keeps its own records (a scoreboard) of what was sent.
    pub fn transmit(&mut self, now: Time, seq: u64, len: u64, out: &mut Vec<Packet>) {
        self.stats.segments_sent += 1;
        self.cc.on_transmit(now, seq, self.cfg.mss);
        if let Some(h) = self.rtt_history.as_mut() {
            h.on_send(now, seq, len, seq < self.snd_max);
        }
        if seq < self.snd_max {
            self.stats.retransmissions += 1;
            // Karn: a retransmission makes the timed segment's sample ambiguous.
            self.timed = None;
            if self.head_rexmit_rearms
                && seq == self.snd_una
                && self.timer_kind != TimerKind::Reorder
            {
                self.set_rto_timer(now);
            }
        } else if !self.cfg.timestamps && self.timed.is_none() && self.rtt_history.is_none() {
            self.timed = Some((seq + len, now));
        }
        if self.timer.is_none() {
            self.set_rto_timer(now);
        }
        if self.rate.is_some() {
            let start = self.flight_size() == 0 || std::mem::take(&mut self.rate_restart);
            if let Some(rate) = self.rate.as_mut() {
                rate.on_send(now, seq, len, start);
            }
            self.on_paced_send(now, len);
        }
        let mut p = self.packet(now, PacketKind::Data, seq, len as u32);
        p.push = seq + len >= self.total;
        out.push(p);
    }

    /// Arm the retransmission timer an RTO from now.
    pub fn set_rto_timer(&mut self, now: Time) {
        self.timer = Some(now + self.rtt.rto());
        self.timer_kind = TimerKind::Rto;
    }

    /// Stop the timer.
    pub fn clear_timer(&mut self) {
        self.timer = None;
        self.timer_kind = TimerKind::Rto;
    }

    /// Length of the next new segment, if the send buffer and the receive
    /// window allow one: full-sized except the transfer's tail. With
    /// `rwnd_checked`, the caller bounds its window by rwnd itself.
    pub fn next_new_segment(&self, rwnd_checked: bool) -> Option<u64> {
        let data_end = self.total.min(self.snd_una + self.cfg.send_buffer);
        if self.snd_max >= data_end {
            return None;
        }
        let len = self.cfg.mss.min(data_end - self.snd_max);
        let is_tail = self.snd_max + len >= self.total;
        let fits_rwnd = rwnd_checked
            || self.snd_max + len <= self.snd_una + self.rwnd
            || self.snd_max == self.snd_una;
        ((len == self.cfg.mss || is_tail) && fits_rwnd).then_some(len)
    }
}

#[cfg(test)]
mod pacing_tests {
    use crate::engine::{Duration, Time};
    use crate::tcp::rate::RateEstimator;
    use crate::tcp::recovery::test_support::{conn, MSS};

    fn us(x: u64) -> Time {
        Time::ZERO + Duration::from_micros(x)
    }

    /// ns-3 pacing timer: a segment of 1000 B at 1 000 000 B/s holds the
    /// next transmission for 1000 / 1e6 s = 1 ms; a transmission while the
    /// timer runs (a forced retransmission) does not extend it.
    #[test]
    fn pacing_gap_is_size_over_rate_ns3() {
        let mut c = conn(20, 100);
        c.rate = Some(RateEstimator::new(false));
        c.pacing.rate = Some(1e6);
        c.pacing.skip_initial_window = true;
        let mut out = Vec::new();
        c.transmit(us(0), 20 * MSS, MSS, &mut out);
        assert_eq!(c.pacing.next, us(1000));
        assert!(c.pacing_holds(us(999)));
        assert!(c.pacing.blocked);
        assert!(!c.pacing_holds(us(1000)));
        c.transmit(us(1000), 0, MSS / 2, &mut out);
        assert_eq!(c.pacing.next, us(1500), "500 B: 0.5 ms");
        c.transmit(us(1200), MSS, MSS, &mut out);
        assert_eq!(c.pacing.next, us(1500), "timer running: unchanged");
    }

    /// ns-3 without PaceInitialWindow: nothing is paced while no more than
    /// the initial window (10 segments) has been sent.
    #[test]
    fn ns3_does_not_pace_the_initial_window() {
        let mut c = conn(10, 100);
        c.rate = Some(RateEstimator::new(false));
        c.pacing.rate = Some(1e6);
        c.pacing.skip_initial_window = true;
        let mut out = Vec::new();
        c.transmit(us(0), 0, MSS, &mut out);
        assert!(!c.pacing_holds(us(1)));
        assert_eq!(c.pacing.next, us(0));
    }

    /// Linux EDT: each segment moves the departure stamp on by len / rate;
    /// after an idle period the stamp restarts at now and the first gap is
    /// cut by up to half (credit = 8 ms of lag ≥ 0.5 ms): 1 ms − 0.5 ms.
    #[test]
    fn linux_edt_gap_and_idle_credit() {
        let mut c = conn(20, 100);
        c.rate = Some(RateEstimator::new(true));
        c.pacing.rate = Some(1e6);
        c.pacing.edt = true;
        let mut out = Vec::new();
        c.transmit(us(0), 0, MSS, &mut out);
        assert_eq!(c.pacing.next, us(1000));
        c.transmit(us(1000), MSS, MSS, &mut out);
        assert_eq!(c.pacing.next, us(2000));
        c.transmit(us(10_000), 2 * MSS, MSS, &mut out);
        assert_eq!(c.pacing.next, us(10_500));
    }

    /// Without a rate estimator (every controller but BBR) nothing paces.
    #[test]
    fn no_pacing_without_a_pacing_controller() {
        let mut c = conn(20, 100);
        c.pacing.rate = Some(1e6);
        let mut out = Vec::new();
        c.transmit(us(0), 0, MSS, &mut out);
        assert_eq!(c.pacing.next, us(0));
    }
}
