//! SACK-based loss recovery (RFC 6675) with optional Proportional Rate
//! Reduction (RFC 6937).
//!
//! A scoreboard of SACKed, lost and retransmitted segments gives `pipe` (the
//! bytes in flight) and `NextSeg()`. Recovery starts on the duplicate-ACK
//! threshold or when the head is deemed lost (`IsLost`); during recovery
//! segments go out while cwnd − pipe ≥ 1 MSS in `NextSeg()` order, the first
//! lost one at once whatever the window (RFC 6675 §5 step 4.3); cwnd is held
//! at ssthresh, or set on every ACK by PRR when `prr` is on. After a timeout
//! every un-SACKed segment is resent, lowest first, in slow start.
//!
//! With RACK (`tcp.rack`, RFC 8985 §6, `tcp/rack.rs`) the scoreboard's lost
//! marks come from RACK's timing instead of `IsLost` (Linux since 4.18 runs
//! RACK alone); the sender then starts recovery once any segment is marked
//! lost, and the first lost segment goes out first.

use super::{enter_fast_recovery, NewAck, RackScan, RecoveryOps, SackUpdate};
use crate::engine::Time;
use crate::net::Packet;
use crate::tcp::conn::Conn;
use crate::tcp::prr::Prr;
use crate::tcp::rack::{Deliveries, Rack};
use crate::tcp::scoreboard::{Next, Scoreboard};
use crate::tcp::state::CaState;

#[derive(Clone, Debug)]
pub(crate) struct Sack {
    sb: Scoreboard,
    /// PRR state while in recovery with `prr` on.
    prr: Option<Prr>,
    /// ns-3 `m_isRetransDataAcked` for the ACK being processed: a partial ACK
    /// in recovery that cumulatively acknowledges retransmitted data.
    retx_acked: bool,
    /// RACK loss detection, when on (it replaces `IsLost`).
    rack: Option<Rack>,
    /// A partial ACK has been seen in this recovery (ns-3's
    /// `!m_isFirstPartialAck`).
    partial_ack_seen: bool,
}

impl Sack {
    pub fn new(ns3_pipe: bool) -> Self {
        Sack {
            sb: Scoreboard::new().with_ns3_pipe(ns3_pipe),
            prr: None,
            retx_acked: false,
            rack: None,
            partial_ack_seen: false,
        }
    }

    /// Detect losses with RACK instead of RFC 6675 `IsLost`.
    pub fn with_rack(mut self, on: bool) -> Self {
        self.rack = on.then(Rack::default);
        self
    }

    /// Put a segment on the wire and on the scoreboard; PRR counts it.
    fn transmit(&mut self, c: &mut Conn, now: Time, seq: u64, len: u64, out: &mut Vec<Packet>) {
        if seq < c.snd_max {
            self.sb.mark_retransmitted(seq, now);
        } else {
            self.sb.on_new_data(seq, len, now);
        }
        if let Some(prr) = self.prr.as_mut() {
            prr.on_send(len);
        }
        c.transmit(now, seq, len, out);
    }

    fn send_new_segment(&mut self, c: &mut Conn, now: Time, len: u64, out: &mut Vec<Packet>) {
        self.transmit(c, now, c.snd_max, len, out);
        c.snd_max += len;
        c.snd_nxt = c.snd_max;
    }

    fn retransmit_head(&mut self, c: &mut Conn, now: Time, out: &mut Vec<Packet>) {
        if c.snd_max > c.snd_una {
            let len = self.sb.len_at(c.snd_una);
            if len > 0 {
                self.transmit(c, now, c.snd_una, len, out);
            }
        }
    }

    /// PRR's cwnd for an ACK in recovery that delivered `delivered` bytes:
    /// ns-3's `TcpPrrRecovery::DoRecovery` (counting `dupack`s as ns-3 does)
    /// or RFC 6937's.
    fn prr_update(&mut self, c: &mut Conn, delivered: u64, dupack: bool) {
        let pipe = self.sb.pipe();
        let Some(prr) = self.prr.as_mut() else { return };
        if c.b.ns3_prr {
            let safe = self.retx_acked;
            let (ssthresh, mss) = (c.w.ssthresh, c.cfg.mss);
            if let Some(cwnd) = prr.on_ack_ns3(delivered, pipe, ssthresh, mss, dupack, safe) {
                c.w.cwnd = cwnd;
            }
        } else {
            c.w.cwnd = prr.on_ack(delivered, pipe, c.w.ssthresh, c.cfg.mss);
        }
    }
}

impl RecoveryOps for Sack {
    fn bytes_in_flight(&self, _c: &Conn) -> u64 {
        self.sb.pipe()
    }

    fn on_ack_arrival(
        &mut self,
        c: &Conn,
        now: Time,
        ack: u64,
        blocks: &[(u64, u64)],
        ts_ecr: Time,
    ) -> SackUpdate {
        self.retx_acked = c.ca_state == CaState::Recovery
            && ack > c.snd_una
            && c.recover.is_some_and(|r| ack < r)
            && self.sb.retransmitted_below(ack);
        let Some(rack) = self.rack.as_mut() else {
            let sacked_acked = self.sb.on_cumulative_ack(ack.max(c.snd_una));
            let newly_sacked = self.sb.on_sack_blocks(blocks);
            self.sb.update_lost(c.cfg.dupack_threshold);
            return SackUpdate {
                newly_sacked,
                sacked_acked,
            };
        };
        // RACK: note what each newly delivered segment says; no IsLost.
        let prior_fack = self.sb.highest_sacked_end();
        let min_rtt = c.rtt.min_rtt();
        let mut d = Deliveries::default();
        let sacked_acked = self
            .sb
            .on_cumulative_ack_visit(ack.max(c.snd_una), |s| d.add(s, true, now, min_rtt, ts_ecr));
        let newly_sacked = self
            .sb
            .on_sack_blocks_visit(blocks, |s| d.add(s, false, now, min_rtt, ts_ecr));
        rack.on_deliveries(&d, prior_fack);
        SackUpdate {
            newly_sacked,
            sacked_acked,
        }
    }

    fn rack_detect(&mut self, c: &mut Conn, now: Time, force: bool) -> RackScan {
        let Some(rack) = self.rack.as_mut() else {
            return RackScan::default();
        };
        let advanced = rack.take_advanced();
        let Some(r) = rack.reference().filter(|_| advanced || force) else {
            return RackScan::default();
        };
        let in_recovery = matches!(c.ca_state, CaState::Recovery | CaState::Loss);
        let reo_wnd = rack.reo_wnd(
            in_recovery,
            self.sb.sacked_segments(),
            c.cfg.dupack_threshold,
            c.rtt.min_rtt(),
            c.rtt.srtt(),
        );
        let (marked, wait) = self.sb.rack_mark_lost(now, r, reo_wnd);
        c.stats.rack_losses += u64::from(marked);
        RackScan { marked, wait }
    }

    fn any_lost(&self) -> bool {
        self.sb.any_lost()
    }

    fn lost_segments(&self) -> u64 {
        self.sb.lost_segments() as u64
    }

    fn left_out(&self) -> bool {
        self.sb.left_out()
    }

    fn packets_out(&self, _c: &Conn) -> u64 {
        self.sb.packets_out() as u64
    }

    fn sacked_segments(&self) -> Option<u32> {
        Some(self.sb.sacked_segments() as u32)
    }

    fn head_sent_at(&self) -> Option<Time> {
        self.sb.head_sent_at()
    }

    fn send_probe(&mut self, c: &mut Conn, now: Time, out: &mut Vec<Packet>) -> Option<bool> {
        if let Some(len) = c.next_new_segment(false) {
            self.send_new_segment(c, now, len, out);
            return Some(false);
        }
        let seq = self.sb.last_seq()?;
        let len = self.sb.len_at(seq);
        self.transmit(c, now, seq, len, out);
        Some(true)
    }

    fn head_lost(&self) -> bool {
        self.sb.head_lost()
    }

    /// RFC 6675 §5 steps 4.1–4.3: RecoveryPoint = snd_max, cwnd = ssthresh
    /// (PRR then sets it per ACK, with RecoverFS the flight size of RFC 6937,
    /// or pipe as ns-3 `TcpPrrRecovery::EnterRecovery`), and the first lost
    /// segment goes out whatever the window: the head, or with RACK the
    /// lowest segment RACK marked lost (Linux `tcp_xmit_retransmit_queue`).
    fn enter(&mut self, c: &mut Conn, now: Time, newly_sacked: u64, out: &mut Vec<Packet>) {
        self.partial_ack_seen = false;
        let pipe = self.sb.pipe();
        enter_fast_recovery(c, now, pipe);
        if !c.cc_owns_cwnd {
            c.w.cwnd = c.w.ssthresh;
        }
        if c.cfg.prr && !c.cc_owns_cwnd {
            let recover_fs = if c.b.ns3_prr { pipe } else { c.flight_size() };
            self.prr = Some(Prr::enter(recover_fs));
            self.prr_update(c, newly_sacked, true);
        }
        match self.rack.as_ref().and(self.sb.first_unsent_lost()) {
            Some(seq) => {
                let len = self.sb.len_at(seq);
                self.transmit(c, now, seq, len, out);
            }
            None => self.retransmit_head(c, now, out),
        }
    }

    /// The scoreboard drives retransmissions; PRR sets cwnd. ns-3 runs
    /// `DoRecovery` on a duplicate ACK only if it updated the scoreboard.
    fn on_dupack(&mut self, c: &mut Conn, newly_sacked: u64) {
        if newly_sacked > 0 || !c.b.ns3_prr {
            self.prr_update(c, newly_sacked, true);
        }
    }

    fn on_partial_ack(
        &mut self,
        c: &mut Conn,
        now: Time,
        a: &NewAck,
        out: &mut Vec<Packet>,
    ) -> bool {
        if c.b.ns3_prr {
            // ns-3 ProcessAck: an ACK that also SACKs new data is a duplicate
            // ACK first (DupAck → DoRecovery), then a partial ACK (DoRecovery
            // again, if it covers a whole segment).
            if a.newly_sacked > 0 {
                self.prr_update(c, a.delivered, true);
            }
            if a.segments >= 1 {
                self.prr_update(c, a.delivered, false);
            }
        } else {
            self.prr_update(c, a.delivered, false);
        }
        if c.b.partial_ack_retransmits && !self.sb.head_retransmitted() {
            // ns-3 ProcessAck → DoRetransmit: NextSeg() without the
            // recovery-only rule, whatever cwnd allows: the first lost
            // segment not yet retransmitted, else new data, else the head.
            match (
                self.sb.first_unsent_lost(),
                c.next_new_segment(c.b.rwnd_bounds_pipe),
            ) {
                (Some(seq), _) => {
                    let len = self.sb.len_at(seq);
                    self.transmit(c, now, seq, len, out);
                }
                (None, Some(len)) => self.send_new_segment(c, now, len, out),
                (None, None) => self.retransmit_head(c, now, out),
            }
        }
        let first = !std::mem::replace(&mut self.partial_ack_seen, true);
        first || !c.b.timer_restart_first_partial_ack_only
    }

    fn do_recovery(&mut self, c: &mut Conn, delivered: u64) {
        self.prr_update(c, delivered, false);
    }

    fn on_exit(&mut self) {
        self.prr = None;
    }

    /// ns-3 (`every_timeout_cuts_ssthresh`): never, as `IsHeadRetransmitted`
    /// is asked after `SetSentListLost` cleared the flags.
    fn head_resent(&self, c: &Conn) -> bool {
        !c.b.every_timeout_cuts_ssthresh && self.sb.head_retransmitted()
    }

    /// Every un-SACKed segment is lost and eligible for retransmission again;
    /// with RACK, except segments other than the head sent less than RACK.rtt
    /// ago (Linux `tcp_timeout_mark_lost`).
    fn on_timeout(&mut self, _c: &mut Conn, now: Time) {
        self.prr = None;
        match self.rack.as_ref() {
            Some(rack) => {
                let rtt = rack.rtt();
                self.sb.on_timeout_sparing(|xmit| now.since(xmit) < rtt);
            }
            None => self.sb.on_timeout(),
        }
    }

    /// While cwnd − pipe ≥ 1 MSS (cwnd bounded by rwnd as ns-3 with
    /// `rwnd_bounds_pipe`): in Recovery the segment `NextSeg()` chooses, in
    /// Loss the first lost one not yet resent, else new data.
    fn send(&mut self, c: &mut Conn, now: Time, out: &mut Vec<Packet>) {
        let mss = c.cfg.mss;
        loop {
            let wnd = if c.b.rwnd_bounds_pipe {
                c.w.cwnd.min(c.rwnd)
            } else {
                c.w.cwnd
            };
            if wnd < self.sb.pipe() + mss {
                break;
            }
            let new_len = c.next_new_segment(c.b.rwnd_bounds_pipe);
            let next = match c.ca_state {
                CaState::Recovery => self
                    .sb
                    .next_seg_with(new_len.is_some(), self.rack.is_some()),
                CaState::Loss => self
                    .sb
                    .first_unsent_lost()
                    .map(Next::Retransmit)
                    .or(new_len.map(|_| Next::NewData)),
                CaState::Open | CaState::Disorder => new_len.map(|_| Next::NewData),
            };
            if next.is_some() && c.pacing_holds(now) {
                break;
            }
            match (next, new_len) {
                (Some(Next::Retransmit(seq)), _) => {
                    let len = self.sb.len_at(seq);
                    self.transmit(c, now, seq, len, out);
                }
                (Some(Next::NewData), Some(len)) => self.send_new_segment(c, now, len, out),
                _ => break,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::behaviour::StackBehaviour;
    use crate::tcp::recovery::test_support::{conn, sent, MSS, T};

    /// Linux behaviour (RFC pipe and PRR), segments 0..10 sent through the
    /// recovery (so that its scoreboard holds them), then a duplicate ACK
    /// SACKing 1..4.
    fn ten_sent_then_sack_1_to_4(prr: bool) -> (Conn, Sack, Vec<Packet>) {
        let mut c = conn(0, 10);
        c.b = StackBehaviour::LINUX;
        c.cfg.prr = prr;
        let mut s = Sack::new(false);
        let mut out = vec![];
        s.send(&mut c, T, &mut out);
        assert_eq!(sent(&mut out), (0..10).collect::<Vec<_>>());
        assert_eq!(s.bytes_in_flight(&c), 10 * MSS);
        let u = s.on_ack_arrival(&c, T, 0, &[(MSS, 4 * MSS)], T);
        assert_eq!(
            u,
            SackUpdate {
                newly_sacked: 3 * MSS,
                sacked_acked: 0
            }
        );
        c.dupacks = 1;
        c.ca_state = CaState::Disorder;
        (c, s, out)
    }

    #[test]
    fn entry_pipe_and_next_seg_without_prr() {
        let (mut c, mut s, mut out) = ten_sent_then_sack_1_to_4(false);
        // RFC 6675 §4 IsLost: DupThresh = 3 segments SACKed above segment 0.
        // pipe = 10 sent − 3 SACKed − 1 lost = 6 segments.
        assert!(s.head_lost());
        assert_eq!(s.bytes_in_flight(&c), 6 * MSS);
        s.enter(&mut c, T, 3 * MSS, &mut out);
        // ssthresh = pipe / 2 = 3 segments (the NewReno law of the ns-3 model
        // halves bytes in flight), cwnd = ssthresh (§5 step 4.2); the head goes
        // out whatever the window (step 4.3), and nothing else (pipe 7 > 3).
        assert_eq!((c.w.cwnd, c.w.ssthresh), (3 * MSS, 3 * MSS));
        assert_eq!(sent(&mut out), vec![0]);
        s.send(&mut c, T, &mut out);
        assert!(out.is_empty());
        assert_eq!(s.bytes_in_flight(&c), 7 * MSS);
        // 5..10 SACKed as well: segment 4 is lost (5 SACKed above); pipe =
        // the retransmitted head only. cwnd stays at ssthresh (no PRR), so two
        // segments go out: NextSeg rule 1 (lost 4), then rule 2 (new data 10).
        let u = s.on_ack_arrival(&c, T, 0, &[(5 * MSS, 10 * MSS), (MSS, 4 * MSS)], T);
        assert_eq!(u.newly_sacked, 5 * MSS);
        s.on_dupack(&mut c, u.newly_sacked);
        assert_eq!(c.w.cwnd, 3 * MSS);
        assert_eq!(s.bytes_in_flight(&c), MSS);
        s.send(&mut c, T, &mut out);
        assert_eq!(sent(&mut out), vec![4, 10]);
    }

    #[test]
    fn prr_proportional_part() {
        let (mut c, mut s, mut out) = ten_sent_then_sack_1_to_4(true);
        s.enter(&mut c, T, 3 * MSS, &mut out);
        // RFC 6937: RecoverFS = FlightSize = 10 segments; pipe 6000 >
        // ssthresh 3000, so sndcnt = ⌈prr_delivered·ssthresh/RecoverFS⌉ −
        // prr_out = ⌈3000·3000/10 000⌉ − 0 = 900 and cwnd = pipe + 900.
        assert_eq!(c.w.cwnd, 6_900);
        assert_eq!(sent(&mut out), vec![0], "the head, whatever PRR allows");
        // One more segment (5) SACKed: prr_delivered 4000, prr_out 1000 (the
        // head); pipe = 1 (head) + 1 (segment 4, not lost: 1 SACKed above) +
        // 4 (6..9) = 6 segments: ⌈4000·3000/10 000⌉ − 1000 = 200 → cwnd 6200.
        let u = s.on_ack_arrival(&c, T, 0, &[(5 * MSS, 6 * MSS), (MSS, 4 * MSS)], T);
        s.on_dupack(&mut c, u.newly_sacked);
        assert_eq!(c.w.cwnd, 6_200);
    }

    #[test]
    fn timeout_resends_only_unsacked_segments() {
        let (mut c, mut s, mut out) = ten_sent_then_sack_1_to_4(false);
        // As the sender does on a timeout (state Loss; a 2-segment window to
        // show the skipping): every un-SACKed segment is lost again.
        c.ca_state = CaState::Loss;
        c.w.cwnd = 2 * MSS;
        s.on_timeout(&mut c, T);
        assert_eq!(s.bytes_in_flight(&c), 0);
        assert!(!s.head_resent(&c));
        s.send(&mut c, T, &mut out);
        assert_eq!(sent(&mut out), vec![0, 4], "1..4 were SACKed");
        assert!(s.head_resent(&c));
        // ns-3.44's ReTxTimeout calls SetSentListLost (every m_retrans =
        // false) before IsHeadRetransmitted, so under the ns3 behaviour the
        // head counts as not resent and a repeated timeout cuts ssthresh.
        c.b = StackBehaviour::NS3;
        assert!(!s.head_resent(&c));
    }
}
