//! Loss recovery, kept apart from the sender's common state machine as ns-3
//! keeps `TcpRecoveryOps` apart from `TcpSocketBase` (and the window laws in
//! `cc/`, its `TcpCongestionOps`).
//!
//! The sender detects duplicate and new ACKs, keeps the state Open /
//! Disorder / Recovery / Loss, the RTT and the retransmission timer; a
//! recovery decides what differs: how bytes in flight are counted, when the
//! head counts as lost, what entering recovery does, how a duplicate or a
//! partial ACK in recovery changes cwnd and what it resends, which ACK is
//! full, what a timeout resets, and what goes out next.
//!
//! * [`Tahoe`]: fast retransmit, then slow start from one segment, going back N.
//! * [`Reno`] (RFC 5681 §3.2): fast recovery with window inflation, left on
//!   the first new ACK.
//! * [`NewReno`] (RFC 6582): partial ACKs resend the next hole and deflate;
//!   only an ACK covering `recover` ends recovery.
//! * [`Sack`] (RFC 6675): a scoreboard, `pipe` and `NextSeg()`; cwnd held at
//!   ssthresh, or set by Proportional Rate Reduction (RFC 6937) when `prr` is on.
//!
//! Dispatch is static ([`AnyRecovery`], an enum, as `AnyCc` for controllers):
//! nothing is boxed on the per-ACK path.

mod newreno;
mod reno;
mod sack;
mod tahoe;

pub(crate) use newreno::NewReno;
pub(crate) use reno::Reno;
pub(crate) use sack::Sack;
pub(crate) use tahoe::Tahoe;

use crate::engine::{Duration, Time};
use crate::net::Packet;
use crate::tcp::behaviour::StackBehaviour;
use crate::tcp::conn::Conn;
use crate::tcp::state::CaState;
use crate::tcp::{Recovery, TcpConfig};

/// What the recovery learnt from an arriving ACK's SACK blocks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct SackUpdate {
    /// Bytes SACKed for the first time by this ACK.
    pub newly_sacked: u64,
    /// Bytes SACKed earlier that this ACK now acknowledges cumulatively.
    pub sacked_acked: u64,
}

/// What a RACK scan found (`RecoveryOps::rack_detect`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct RackScan {
    /// Segments newly marked lost.
    pub marked: u32,
    /// The longest wait until a segment sent before the reference would be
    /// lost, if any is still waiting (the reorder timer's delay).
    pub wait: Option<Duration>,
}

/// An ACK that advanced snd_una, as the recovery sees it (snd_una already
/// moved to the ACK's number).
#[derive(Clone, Copy, Debug)]
pub(crate) struct NewAck {
    /// Bytes newly acknowledged cumulatively.
    pub newly: u64,
    /// RFC 6937 DeliveredData: `newly` plus the newly SACKed bytes, less the
    /// bytes SACKed earlier that this ACK covers.
    pub delivered: u64,
    pub newly_sacked: u64,
    /// Whole segments acknowledged (acked bytes carried over between ACKs).
    pub segments: u32,
}

/// The loss-recovery interface (ns-3 `TcpRecoveryOps`, widened to what
/// differs between Tahoe, Reno, NewReno and SACK). The defaults are the
/// classic, scoreboard-less behaviour.
pub(crate) trait RecoveryOps {
    /// Bytes the sender believes are in the network: RFC 6675 `pipe` with
    /// SACK, RFC 5681 FlightSize otherwise (ns-3 `BytesInFlight`).
    fn bytes_in_flight(&self, c: &Conn) -> u64 {
        c.flight_size()
    }

    /// An ACK arrived at `now`, before the sender classifies it: record its
    /// cumulative acknowledgment `ack`, SACK `blocks` and echoed timestamp.
    fn on_ack_arrival(
        &mut self,
        _c: &Conn,
        _now: Time,
        _ack: u64,
        _blocks: &[(u64, u64)],
        _ts_ecr: Time,
    ) -> SackUpdate {
        SackUpdate::default()
    }

    /// RACK loss marking (SACK only): scan if a segment was delivered since
    /// the last scan, or always with `force` (the reorder timer).
    fn rack_detect(&mut self, _c: &mut Conn, _now: Time, _force: bool) -> RackScan {
        RackScan::default()
    }

    /// Whether any outstanding segment is marked lost (Linux lost_out > 0).
    fn any_lost(&self) -> bool {
        false
    }

    /// Segments marked lost and not SACKed (Linux lost_out, ns-3
    /// `TcpTxBuffer::GetLost` in segments), for recoveries that know.
    fn lost_segments(&self) -> u64 {
        0
    }

    /// Whether any outstanding segment is SACKed or marked lost (Linux
    /// left_out > 0: then Linux is in Disorder, not Open).
    fn left_out(&self) -> bool {
        false
    }

    /// Segments outstanding (Linux packets_out).
    fn packets_out(&self, c: &Conn) -> u64 {
        c.flight_size().div_ceil(c.cfg.mss)
    }

    /// Segments SACKed, for recoveries that know (RFC 5827's SACK rule).
    fn sacked_segments(&self) -> Option<u32> {
        None
    }

    /// When the first outstanding segment was last (re)transmitted.
    fn head_sent_at(&self) -> Option<Time> {
        None
    }

    /// A tail loss probe (Linux `tcp_send_loss_probe`): one new segment if the
    /// receive window allows, whatever cwnd says, else the highest outstanding
    /// segment again. Returns whether the probe was a retransmission, or None
    /// if nothing went out.
    fn send_probe(&mut self, _c: &mut Conn, _now: Time, _out: &mut Vec<Packet>) -> Option<bool> {
        None
    }

    /// Whether the first unacknowledged segment is deemed lost without the
    /// duplicate-ACK threshold (RFC 6675 `IsLost`).
    fn head_lost(&self) -> bool {
        false
    }

    /// Whether a new recovery may start only once snd_una passes the previous
    /// `recover` (RFC 6582 §3.2 step 1, RFC 6675 §5 RecoveryPoint).
    fn guards_recover(&self) -> bool {
        true
    }

    /// The loss is detected by duplicate ACKs (in Open or Disorder): set
    /// ssthresh, the state and cwnd, and retransmit.
    fn enter(&mut self, c: &mut Conn, now: Time, newly_sacked: u64, out: &mut Vec<Packet>);

    /// A duplicate ACK in Recovery that SACKed `newly_sacked` bytes. Default:
    /// RFC 5681 §3.2 step 4, inflate cwnd by one MSS (one more segment left
    /// the network).
    fn on_dupack(&mut self, c: &mut Conn, _newly_sacked: u64) {
        if !c.cc_owns_cwnd {
            c.w.cwnd += c.cfg.mss;
        }
    }

    /// Whether a new ACK in Recovery ends it (RFC 6582 §3.2 step 3: it covers
    /// `recover`).
    fn is_full_ack(&self, c: &Conn, ack: u64) -> bool {
        ack >= c.recover.unwrap_or(0)
    }

    /// A new ACK in Recovery that does not end it. Returns whether the
    /// retransmission timer is to be restarted.
    fn on_partial_ack(
        &mut self,
        _c: &mut Conn,
        _now: Time,
        _a: &NewAck,
        _out: &mut Vec<Packet>,
    ) -> bool {
        true
    }

    /// The window update of ns-3 `TcpRecoveryOps::DoRecovery` for the
    /// cumulative part of the ACK that started recovery (see
    /// `StackBehaviour::sack_ack_is_dupack`).
    fn do_recovery(&mut self, _c: &mut Conn, _delivered: u64) {}

    /// Recovery ends (a full ACK).
    fn on_exit(&mut self) {}

    /// Whether the first unacknowledged segment was resent since the last
    /// timeout (then a repeated timeout does not reduce ssthresh again, RFC
    /// 5681 §3.1, as ns-3). Default: go-back-N has resent below snd_nxt.
    fn head_resent(&self, c: &Conn) -> bool {
        c.snd_una < c.snd_nxt.min(c.recover.unwrap_or(0))
    }

    /// A retransmission timeout at `now`, after the sender entered Loss with
    /// cwnd = 1 MSS. Default: go back N, resending from snd_una in slow start.
    fn on_timeout(&mut self, c: &mut Conn, _now: Time) {
        c.snd_nxt = c.snd_una;
    }

    /// Send what the windows and the send buffer allow.
    fn send(&mut self, c: &mut Conn, now: Time, out: &mut Vec<Packet>) {
        send_classic(c, now, out);
    }
}

/// One of the recoveries, chosen by `TcpConfig::recovery`.
#[derive(Clone, Debug)]
pub(crate) enum AnyRecovery {
    Tahoe(Tahoe),
    Reno(Reno),
    NewReno(NewReno),
    Sack(Sack),
}

impl AnyRecovery {
    pub fn new(cfg: &TcpConfig, b: &StackBehaviour) -> Self {
        match cfg.recovery {
            Recovery::Tahoe => AnyRecovery::Tahoe(Tahoe),
            Recovery::Reno => AnyRecovery::Reno(Reno),
            Recovery::NewReno => AnyRecovery::NewReno(NewReno::default()),
            Recovery::Sack => AnyRecovery::Sack(
                Sack::new(b.pipe_counts_sacked_retransmissions).with_rack(cfg.rack()),
            ),
        }
    }
}

macro_rules! each {
    ($self:expr, $r:ident => $e:expr) => {
        match $self {
            AnyRecovery::Tahoe($r) => $e,
            AnyRecovery::Reno($r) => $e,
            AnyRecovery::NewReno($r) => $e,
            AnyRecovery::Sack($r) => $e,
        }
    };
}

impl RecoveryOps for AnyRecovery {
    fn bytes_in_flight(&self, c: &Conn) -> u64 {
        each!(self, r => r.bytes_in_flight(c))
    }
    fn on_ack_arrival(
        &mut self,
        c: &Conn,
        now: Time,
        ack: u64,
        blocks: &[(u64, u64)],
        ts_ecr: Time,
    ) -> SackUpdate {
        each!(self, r => r.on_ack_arrival(c, now, ack, blocks, ts_ecr))
    }
    fn rack_detect(&mut self, c: &mut Conn, now: Time, force: bool) -> RackScan {
        each!(self, r => r.rack_detect(c, now, force))
    }
    fn any_lost(&self) -> bool {
        each!(self, r => r.any_lost())
    }
    fn lost_segments(&self) -> u64 {
        each!(self, r => r.lost_segments())
    }
    fn left_out(&self) -> bool {
        each!(self, r => r.left_out())
    }
    fn packets_out(&self, c: &Conn) -> u64 {
        each!(self, r => r.packets_out(c))
    }
    fn sacked_segments(&self) -> Option<u32> {
        each!(self, r => r.sacked_segments())
    }
    fn head_sent_at(&self) -> Option<Time> {
        each!(self, r => r.head_sent_at())
    }
    fn send_probe(&mut self, c: &mut Conn, now: Time, out: &mut Vec<Packet>) -> Option<bool> {
        each!(self, r => r.send_probe(c, now, out))
    }
    fn head_lost(&self) -> bool {
        each!(self, r => r.head_lost())
    }
    fn guards_recover(&self) -> bool {
        each!(self, r => r.guards_recover())
    }
    fn enter(&mut self, c: &mut Conn, now: Time, newly_sacked: u64, out: &mut Vec<Packet>) {
        each!(self, r => r.enter(c, now, newly_sacked, out))
    }
    fn on_dupack(&mut self, c: &mut Conn, newly_sacked: u64) {
        each!(self, r => r.on_dupack(c, newly_sacked))
    }
    fn is_full_ack(&self, c: &Conn, ack: u64) -> bool {
        each!(self, r => r.is_full_ack(c, ack))
    }
    fn on_partial_ack(
        &mut self,
        c: &mut Conn,
        now: Time,
        a: &NewAck,
        out: &mut Vec<Packet>,
    ) -> bool {
        each!(self, r => r.on_partial_ack(c, now, a, out))
    }
    fn do_recovery(&mut self, c: &mut Conn, delivered: u64) {
        each!(self, r => r.do_recovery(c, delivered))
    }
    fn on_exit(&mut self) {
        each!(self, r => r.on_exit())
    }
    fn head_resent(&self, c: &Conn) -> bool {
        each!(self, r => r.head_resent(c))
    }
    fn on_timeout(&mut self, c: &mut Conn, now: Time) {
        each!(self, r => r.on_timeout(c, now))
    }
    fn send(&mut self, c: &mut Conn, now: Time, out: &mut Vec<Packet>) {
        each!(self, r => r.send(c, now, out))
    }
}

/// The part of a fast retransmit common to Reno, NewReno and SACK: ssthresh
/// from the controller for `in_flight` (ns-3 passes BytesInFlight; Linux
/// controllers read cwnd), `recover` = snd_max (RFC 6582 §3.2 step 2),
/// state Recovery.
pub(crate) fn enter_fast_recovery(c: &mut Conn, now: Time, in_flight: u64) {
    c.loss_event(now, in_flight);
    c.recover = Some(c.snd_max);
    c.set_state(now, CaState::Recovery, in_flight);
    c.stats.fast_recoveries += 1;
}

/// Resend the first unacknowledged segment (at most one MSS), if any.
pub(crate) fn retransmit_head(c: &mut Conn, now: Time, out: &mut Vec<Packet>) {
    let len = c.cfg.mss.min(c.snd_max - c.snd_una);
    if len > 0 {
        c.transmit(now, c.snd_una, len, out);
    }
}

/// Classic sending: new data (or go-back-N resends after a timeout) while
/// `snd_nxt − snd_una` is below min(cwnd, rwnd), with the limited-transmit
/// allowance of RFC 3042 (one segment per duplicate ACK, two at most); no
/// runt segments mid-transfer, no splitting a segment to fit the window
/// unless nothing is in flight.
pub(crate) fn send_classic(c: &mut Conn, now: Time, out: &mut Vec<Packet>) {
    let mss = c.cfg.mss;
    let limited = if c.ca_state == CaState::Disorder && c.cfg.limited_transmit {
        u64::from(c.dupacks.min(2)) * mss
    } else {
        0
    };
    let wnd = (c.w.cwnd + limited).min(c.rwnd);
    let data_end = c.total.min(c.snd_una + c.cfg.send_buffer);
    loop {
        let outstanding = c.snd_nxt - c.snd_una;
        if outstanding >= wnd || c.snd_nxt >= data_end {
            break;
        }
        let len = mss.min(data_end - c.snd_nxt);
        let is_tail = c.snd_nxt + len >= c.total;
        // Sender-side silly-window avoidance: no runt segments mid-transfer,
        // and no splitting a segment to fit the window unless nothing is in flight.
        if (len < mss && !is_tail) || (len > wnd - outstanding && outstanding > 0) {
            break;
        }
        if c.pacing_holds(now) {
            break;
        }
        c.transmit(now, c.snd_nxt, len, out);
        c.snd_nxt += len;
        c.snd_max = c.snd_max.max(c.snd_nxt);
    }
}

#[cfg(test)]
pub(crate) mod test_support;
