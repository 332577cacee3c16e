//! ns-2.35's `Agent/TCP/Vegas` (`tcp/tcp-vegas.cc`, `VegasTcpAgent`): the
//! `vegas` controller under the `ns2` profile (docs/stack-profiles.md, "The
//! ns2 profile"). A different algorithm from vegas.rs (ns-3/Linux), so its
//! own file.
//!
//! Rules taken from `VegasTcpAgent::recv` (window in packets, as ns-2's
//! `cwnd_` and sequence numbers are):
//! * Fine-grained RTT (`VegasTcpAgent::output` times every packet): each new
//!   ACK's sample, from the acknowledged packet if it was sent once, is
//!   summed into the round (`v_sumRTT_`, `v_cntRTT_`) and lowers
//!   `v_baseRTT_`, *after* the round decision of that ACK.
//! * Once per RTT, when the ACK covers the marked packet `v_begseq_`: rtt =
//!   mean of the round's samples (else the time since the mark); baseRTT =
//!   rtt if smaller or if at most one packet was sent in the round;
//!   `actual = rttLen/rtt`, `expect = (t_seqno_ − last_ack_)/baseRTT`,
//!   `delta = int((expect − actual)·baseRTT + 0.5)`; then mark `t_seqno_`.
//! * Slow start (cwnd < ssthresh): `v_inc_flag_` toggles every round, growth
//!   (1 packet per ACK) only in every other round; there, delta > γ ends slow
//!   start: ssthresh = 2, cwnd −= cwnd/8 (≥ 2).
//! * Congestion avoidance: delta > β: cwnd −= 1 (≥ 2); delta < α: add
//!   1/cwnd (of the decision's cwnd) per ACK for the round; else hold.
//! * Per ACK: a slow-start increment stops once cwnd ≥ ssthresh; an increment
//!   is applied only while cwnd − (t_seqno_ − last_ack_) ≤ 2.
//! * Loss (dupack branch): ns-2 Vegas's own duplicate-ACK handling is the
//!   recovery tcp/recovery/vegas_ns2.rs (its fine-grained retransmission,
//!   the cut to `v_newcwnd_`, the inflation and the deflation with ssthresh
//!   2). Under the `sack` recovery (Sack1) the cut comes from `ssthresh`
//!   here (2 if window() ≤ 3, else win − win>>2) and leaving recovery sets
//!   ssthresh = 2 ("vegas ssthresh is used only during slow-start").
//!   Timeout (`VegasTcpAgent::timeout`): `slowdown` with
//!   CLOSE_SSTHRESH_HALF, ssthresh = max(⌊window()/2⌋, 2), then cwnd =
//!   `v_slowstart_` 2 packets.
//! * Opening (`set_initial_window`, `VegasTcpAgent::output`, `recv`): with
//!   `syn_` and `delay_growth_` cwnd_ is 1 and the pseudo-SYN (packet 0) a
//!   full packet; its ACK, seen with last_ack_ −1, leaves cwnd_ at 1 and is
//!   the first round (rttLen 1, delta 0: `v_inc_flag_` 1 → 0, no growth;
//!   `v_baseRTT_` = `firstrecv_`; packet 0's own sample is skipped, its
//!   `v_sendtime_` being 0); the next new ACK (last_ack_ 0) sets cwnd_ =
//!   `windowInit_` before its round. vtlab's handshake is the pseudo-SYN
//!   (the sender pads the SYN to a full packet under `ns2`).

use super::reno::reno_ssthresh;
use super::vegas::PARAMS as PARAMS_VEGAS;
use super::{param, CongestionOps, ConnInfo, CwndEvent, Params, Profile, Window};
use crate::engine::{Duration, Time};
use crate::tcp::CaState;
use std::collections::VecDeque;

/// At most this many packets past the oldest unacknowledged one are timed
/// (ns-2 keeps `window_` of them, `v_maxwnd_`); beyond, none is.
const MAX_TIMED: u64 = 1 << 20;

/// What one round's decision asks each ACK of the round to add.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Incr {
    None,
    /// Slow start: one packet per ACK (`v_incr_ = 1`).
    Packet,
    /// Congestion avoidance: `v_incr_ = 1/cwnd_` of the decision's cwnd
    /// (here, in bytes), MSS²/cwnd bytes per ACK with the remainder carried.
    PerCwnd(u64),
}

#[derive(Clone, Debug)]
pub struct VegasNs2 {
    alpha: i64,
    beta: i64,
    gamma: i64,
    /// `v_begseq_`, packets; `v_begtime_`.
    beg_seq: u64,
    beg_time: Option<Time>,
    /// `v_sumRTT_`, `v_cntRTT_`, seconds.
    sum_rtt: f64,
    cnt_rtt: u32,
    /// `v_baseRTT_`, seconds (None until the first sample).
    base_rtt: Option<f64>,
    /// This ACK's sample, folded in after the round decision.
    pending: Option<f64>,
    inc_flag: bool,
    incr: Incr,
    /// Remainder of MSS²/cwnd (bytes·bytes/cwnd), so no fraction is lost.
    carry: u64,
    /// Whether the sender is in recovery (the dupack branch ran).
    recovering: bool,
    /// `v_sendtime_`, `v_transmits_`: the last send time and the number of
    /// transmissions of packets `first_timed`, `first_timed + 1`, ….
    sent: VecDeque<(Time, u32)>,
    first_timed: u64,
    /// `windowInit_` (the sender's initial window), set on the first new
    /// ACK after the pseudo-SYN's; cwnd is 1 packet until then.
    window_init: Option<u64>,
}

impl VegasNs2 {
    pub fn new(params: &Params) -> Self {
        let get = |n| param(PARAMS_VEGAS, params, n, Profile::Ns2).round() as i64;
        VegasNs2 {
            alpha: get("alpha"),
            beta: get("beta"),
            gamma: get("gamma"),
            beg_seq: 0,
            beg_time: None,
            sum_rtt: 0.0,
            cnt_rtt: 0,
            base_rtt: None,
            pending: None,
            inc_flag: true,
            incr: Incr::None,
            carry: 0,
            recovering: false,
            sent: VecDeque::new(),
            first_timed: 0,
            window_init: None,
        }
    }

    /// The pseudo-SYN's ACK (the handshake's end): cwnd_ 1 packet
    /// (`set_initial_window`), `v_baseRTT_` = `firstrecv_` (the handshake's
    /// sample), and its round: rtt = its round trip, rttLen = 1, so baseRTT
    /// = rtt and delta = 0; in slow start `v_inc_flag_` toggles (to 0: no
    /// growth), in avoidance v_incr_ is 0 (1/cwnd_ = 1 reaches ssthresh_);
    /// `v_begseq_` = t_seqno_, the next packet, `v_begtime_` = now.
    fn open(&mut self, info: &ConnInfo, w: &mut Window) {
        self.window_init = Some(w.cwnd);
        w.cwnd = info.mss;
        self.base_rtt = info.min_rtt.map(|d| d.as_secs_f64()).filter(|&r| r > 0.0);
        if w.in_slow_start() {
            self.inc_flag = !self.inc_flag;
        }
        self.incr = Incr::None;
        self.beg_seq = info.snd_nxt / info.mss;
        self.beg_time = Some(info.now);
    }

    /// The fine-grained sample of the ACK that makes `last_ack_plus_1` the
    /// first unacknowledged packet (`VegasTcpAgent::recv`: now − the acked
    /// packet's send time, if it was sent once), and the entries of the
    /// packets it acknowledges dropped.
    fn own_sample(&mut self, now: Time, last_ack_plus_1: u64) -> Option<f64> {
        let acked = last_ack_plus_1.checked_sub(1)?;
        let idx = acked.checked_sub(self.first_timed)?;
        let sample = match self.sent.get(idx as usize) {
            Some(&(at, 1)) => Some(now.since(at).as_secs_f64()),
            _ => None,
        };
        let drop = (last_ack_plus_1 - self.first_timed).min(self.sent.len() as u64);
        self.sent.drain(..drop as usize);
        self.first_timed = last_ack_plus_1;
        sample
    }

    /// The fine-grained RTT update of `VegasTcpAgent::recv` for a sample.
    fn fold_pending(&mut self) {
        if let Some(r) = self.pending.take() {
            self.sum_rtt += r;
            self.cnt_rtt += 1;
            if r > 0.0 {
                self.base_rtt = Some(self.base_rtt.map_or(r, |b| b.min(r)));
            }
        }
    }

    /// The once-per-RTT section of `VegasTcpAgent::recv`.
    fn round(&mut self, info: &ConnInfo, w: &mut Window, t_seqno: u64, outstanding: u64) {
        let mss = info.mss;
        let rtt = if self.cnt_rtt > 0 {
            self.sum_rtt / f64::from(self.cnt_rtt)
        } else {
            let since = self.beg_time.map(|t| info.now.since(t).as_secs_f64());
            since.or(self.pending).unwrap_or(0.0)
        };
        self.sum_rtt = 0.0;
        self.cnt_rtt = 0;
        let rtt_len = t_seqno.saturating_sub(self.beg_seq);
        if rtt > 0.0 {
            let base = match self.base_rtt {
                Some(b) if rtt >= b && rtt_len > 1 => b,
                _ => rtt,
            };
            self.base_rtt = Some(base);
            let actual = rtt_len as f64 / rtt;
            let expect = outstanding as f64 / base;
            let delta = ((expect - actual) * base + 0.5) as i64;
            if w.in_slow_start() {
                self.inc_flag = !self.inc_flag;
                self.incr = if !self.inc_flag {
                    Incr::None
                } else if delta > self.gamma {
                    w.ssthresh = 2 * mss;
                    w.cwnd = (w.cwnd - w.cwnd / 8).max(2 * mss);
                    Incr::None
                } else {
                    Incr::Packet
                };
            } else if delta > self.beta {
                w.cwnd = w.cwnd.saturating_sub(mss).max(2 * mss);
                self.incr = Incr::None;
            } else if delta < self.alpha {
                self.incr = Incr::PerCwnd(w.cwnd.max(1));
            } else {
                self.incr = Incr::None;
            }
        }
        self.beg_seq = t_seqno;
        self.beg_time = Some(info.now);
    }
}

impl CongestionOps for VegasNs2 {
    /// The dupack branch of `VegasTcpAgent::recv`: `v_newcwnd_`.
    fn ssthresh(&mut self, info: &ConnInfo, w: &Window, _bytes_in_flight: u64) -> u64 {
        let win = w.cwnd.min(info.rwnd) / info.mss;
        let win = if win <= 3 { 2 } else { win - (win >> 2) };
        win * info.mss
    }

    fn pkts_acked(&mut self, info: &ConnInfo, _w: &Window, _segs: u32, _rtt: Option<Duration>) {
        self.fold_pending();
        self.pending = self.own_sample(info.now, info.snd_una / info.mss);
    }

    /// `VegasTcpAgent::output`: the send time and one more transmission.
    fn on_transmit(&mut self, now: Time, seq: u64, mss: u64) {
        let Some(idx) = (seq / mss.max(1)).checked_sub(self.first_timed) else {
            return;
        };
        if idx >= MAX_TIMED {
            return;
        }
        let idx = idx as usize;
        if self.sent.len() <= idx {
            self.sent.resize(idx + 1, (now, 0));
        }
        self.sent[idx] = (now, self.sent[idx].1 + 1);
    }

    fn increase_window(&mut self, info: &ConnInfo, w: &mut Window, segments_acked: u32) {
        // recv: `if (last_ack_ == 0 && delay_growth_) cwnd_ = initial_window()`
        // on the first new ACK after the pseudo-SYN's, before its round.
        if let Some(init) = self.window_init.take() {
            w.cwnd = init;
        }
        if segments_acked == 0 {
            return;
        }
        let mss = info.mss;
        // ns-2 numbers packets from 0 and ACKs the last one received:
        // last_ack_ + 1 = snd_una/MSS, t_seqno_ = snd_nxt/MSS.
        let last_ack_plus_1 = info.snd_una / mss;
        let t_seqno = info.snd_nxt.div_ceil(mss).max(last_ack_plus_1);
        let outstanding = t_seqno + 1 - last_ack_plus_1;
        if last_ack_plus_1 > self.beg_seq {
            self.round(info, w, t_seqno, outstanding);
        }
        if self.incr == Incr::Packet && !w.in_slow_start() {
            self.incr = Incr::None;
        }
        if self.incr != Incr::None && w.cwnd <= (outstanding + 2) * mss {
            w.cwnd += match self.incr {
                Incr::PerCwnd(d) => {
                    let num = mss * mss + self.carry;
                    self.carry = num % d;
                    num / d
                }
                _ => mss,
            };
        }
        self.fold_pending();
    }

    /// Leaving recovery: cwnd is `v_newcwnd_` (the sender's deflation) and
    /// ssthresh_ = 2.
    fn congestion_state_set(&mut self, info: &ConnInfo, w: &mut Window, new: CaState) {
        if new == CaState::Recovery {
            self.recovering = true;
        } else if new == CaState::Open && self.recovering {
            self.recovering = false;
            w.ssthresh = 2 * info.mss;
        } else if new == CaState::Loss {
            self.recovering = false;
        }
    }

    /// `VegasTcpAgent::timeout`: `slowdown(CLOSE_SSTHRESH_HALF)` on every
    /// timeout; the handshake's end is the pseudo-SYN's ACK.
    fn cwnd_event(&mut self, info: &ConnInfo, w: &mut Window, event: CwndEvent) {
        match event {
            CwndEvent::Loss => {
                w.ssthresh = reno_ssthresh(Profile::Ns2, info, w, info.bytes_in_flight);
            }
            CwndEvent::TxStart => self.open(info, w),
            CwndEvent::CompleteCwr => {}
        }
    }

    /// `VegasTcpAgent::timeout`: cwnd_ = `v_slowstart_` (2) after the
    /// restart.
    fn loss_window_segments(&self) -> u64 {
        2
    }
}

#[cfg(test)]
mod tests {
    use super::super::reno::test_support::{info, window};
    use super::*;

    /// The study's (and ns-default.tcl's) v_alpha_ 1, v_beta_ 3, v_gamma_ 1.
    fn vegas() -> VegasNs2 {
        let p: Params = [("alpha", 1.0), ("beta", 3.0), ("gamma", 1.0)]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        VegasNs2::new(&p)
    }

    #[test]
    fn unset_parameters_take_ns_default_tcl() {
        // ns-default.tcl: Agent/TCP/Vegas set v_alpha_ 1, v_beta_ 3,
        // v_gamma_ 1 (Linux's tcp_vegas.c has 2, 4, 1); a value given wins.
        let cc = VegasNs2::new(&Params::new());
        assert_eq!((cc.alpha, cc.beta, cc.gamma), (1, 3, 1));
        let p: Params = [("beta".to_string(), 5.0)].into_iter().collect();
        let cc = VegasNs2::new(&p);
        assert_eq!((cc.alpha, cc.beta, cc.gamma), (1, 5, 1));
    }

    /// A round edge (mark at packet 0) reached by the ACK of packet 0, with
    /// 11 packets sent (t_seqno_ 11, last_ack_ 0: 11 outstanding, rttLen 11),
    /// baseRTT 100 ms and the round's samples averaging `mean` seconds.
    fn end_round(cc: &mut VegasNs2, w: &mut Window, mean: f64) {
        cc.base_rtt = Some(0.1);
        cc.beg_seq = 0;
        cc.sum_rtt = 2.0 * mean;
        cc.cnt_rtt = 2;
        let mut i = info(Profile::Ns2);
        i.snd_una = 1_000;
        i.snd_nxt = 11_000;
        cc.increase_window(&i, w, 1);
        assert_eq!(cc.beg_seq, 11, "next mark t_seqno_");
    }

    #[test]
    fn avoidance_regions_in_packets() {
        // VegasTcpAgent::recv, congestion avoidance, cwnd 10 packets:
        // expect = 11/0.1 = 110 pkt/s.
        // rtt 0.1: actual 110, delta = int(0·0.1 + 0.5) = 0 < α → v_incr_ =
        // 1/10 packet = 100 B, applied now (10 − 11 ≤ 2) → 10 100 B.
        let mut cc = vegas();
        let mut w = window(10, 5);
        end_round(&mut cc, &mut w, 0.1);
        assert_eq!(w.cwnd, 10_100);
        // rtt 0.15: actual 73.3, delta = int(3.67 + 0.5) = 4 > β → −1 packet.
        let mut cc = vegas();
        let mut w = window(10, 5);
        end_round(&mut cc, &mut w, 0.15);
        assert_eq!((w.cwnd, cc.incr), (9_000, Incr::None));
        // rtt 0.12: actual 91.7, delta = int(1.83 + 0.5) = 2 in [α, β]: hold.
        let mut cc = vegas();
        let mut w = window(10, 5);
        end_round(&mut cc, &mut w, 0.12);
        assert_eq!(w.cwnd, 10_000);
    }

    #[test]
    fn a_per_cwnd_increment_carries_its_remainder() {
        // v_incr_ = 1/cwnd_ = 1/3 packet per ACK (a double in ns-2): three
        // ACKs add one whole packet, 333 + 333 + 334 B.
        let mut cc = vegas();
        cc.incr = Incr::PerCwnd(3_000);
        cc.beg_seq = 100;
        let mut w = window(10, 5);
        let mut i = info(Profile::Ns2);
        i.snd_una = 1_000;
        i.snd_nxt = 11_000;
        for want in [10_333, 10_666, 11_000] {
            cc.increase_window(&i, &mut w, 1);
            assert_eq!(w.cwnd, want);
        }
    }

    #[test]
    fn slow_start_grows_every_other_round_and_exits_past_gamma() {
        // v_inc_flag_ starts at 1 and toggles per round: round 1 holds.
        let mut cc = vegas();
        let mut w = window(4, 100);
        end_round(&mut cc, &mut w, 0.1);
        assert_eq!((w.cwnd, cc.incr), (4_000, Incr::None));
        // Round 2 (flag 1), delta 0 ≤ γ: v_incr_ = 1, +1 packet now (4 − 11
        // ≤ 2) and on each ACK of the round.
        end_round(&mut cc, &mut w, 0.1);
        assert_eq!((w.cwnd, cc.incr), (5_000, Incr::Packet));
        // Round 3 holds; round 4 with rtt 0.15 (delta 4 > γ): ssthresh_ = 2,
        // cwnd_ −= cwnd_/8: 16 packets → 14.
        end_round(&mut cc, &mut w, 0.1);
        assert_eq!(cc.incr, Incr::None);
        w.cwnd = 16_000;
        end_round(&mut cc, &mut w, 0.15);
        assert_eq!((w.cwnd, w.ssthresh, cc.incr), (14_000, 2_000, Incr::None));
    }

    #[test]
    fn increments_wait_while_cwnd_runs_ahead_of_what_is_outstanding() {
        // cwnd_ − (t_seqno_ − last_ack_) = 14 − 11 = 3 > 2: no increment.
        let mut cc = vegas();
        let mut w = window(14, 5);
        end_round(&mut cc, &mut w, 0.1);
        assert_eq!(cc.incr, Incr::PerCwnd(14_000));
        assert_eq!(w.cwnd, 14_000);
    }

    #[test]
    fn a_sample_counts_after_the_decision_of_its_ack() {
        // recv: the round uses v_sumRTT_/v_cntRTT_ from earlier ACKs (0.1 s,
        // delta 0), then this ACK's 50 ms sample lowers v_baseRTT_ and
        // opens the next round's sum.
        // VegasTcpAgent::output timed packet 0 at 0; its ACK at 50 ms.
        let mut cc = vegas();
        let mut w = window(10, 5);
        cc.on_transmit(Time::ZERO, 0, 1_000);
        let mut i = info(Profile::Ns2);
        i.now = Time(50_000_000);
        i.snd_una = 1_000;
        cc.pkts_acked(&i, &w, 1, None);
        end_round(&mut cc, &mut w, 0.1);
        assert_eq!(w.cwnd, 10_100);
        assert_eq!((cc.base_rtt, cc.cnt_rtt), (Some(0.05), 1));
    }

    #[test]
    fn every_packet_sent_once_is_timed_and_a_resent_one_is_not() {
        // VegasTcpAgent::output records v_sendtime_ and ++v_transmits_ per
        // packet; recv samples now − v_sendtime_[seqno] only if
        // v_transmits_ == 1. Packets 0, 1, 2 at 0, 10, 20 ms; 1 resent at
        // 30 ms.
        let mut cc = vegas();
        let w = window(10, 5);
        for (ms, pkt) in [(0, 0), (10, 1), (20, 2), (30, 1)] {
            cc.on_transmit(Time(ms * 1_000_000), pkt * 1_000, 1_000);
        }
        let mut i = info(Profile::Ns2);
        // ACK of packet 0 at 100 ms: 0.1 s.
        i.now = Time(100_000_000);
        i.snd_una = 1_000;
        cc.pkts_acked(&i, &w, 1, None);
        assert_eq!(cc.pending, Some(0.1));
        // ACK of packet 1 (sent twice) at 110 ms: no sample; the first is
        // folded in (v_cntRTT_ 1).
        i.now = Time(110_000_000);
        i.snd_una = 2_000;
        cc.pkts_acked(&i, &w, 1, None);
        assert_eq!((cc.pending, cc.cnt_rtt), (None, 1));
        // ACK of packet 2 at 150 ms: 0.13 s; acknowledged entries dropped.
        i.now = Time(150_000_000);
        i.snd_una = 3_000;
        cc.pkts_acked(&i, &w, 1, None);
        assert!((cc.pending.unwrap() - 0.13).abs() < 1e-12);
        assert_eq!((cc.sent.len(), cc.first_timed), (0, 3));
    }

    #[test]
    fn the_pseudo_syns_ack_is_the_first_round_and_windowinit_follows() {
        // set_initial_window (syn_, delay_growth_): cwnd_ 1. The SYN, sent
        // at 0, is acknowledged at 100 ms: firstrecv_ = v_baseRTT_ = 0.1;
        // its round (rttLen 1, delta 0, slow start) toggles v_inc_flag_ 1 →
        // 0 (v_incr_ 0), marks v_begseq_ = t_seqno_ (vtlab's data packet 0)
        // and v_begtime_ = 0.1 s. windowInit_ 2, window_ 20.
        let mut cc = vegas();
        let mut w = window(2, 20);
        let mut i = info(Profile::Ns2);
        i.now = Time(100_000_000);
        i.min_rtt = Some(Duration::from_millis(100));
        cc.cwnd_event(&i, &mut w, CwndEvent::TxStart);
        assert_eq!((w.cwnd, cc.base_rtt, cc.beg_seq), (1_000, Some(0.1), 0));
        assert_eq!((cc.inc_flag, cc.incr), (false, Incr::None));
        // The one packet cwnd_ 1 lets go, sent at 100 ms, acknowledged at
        // 220 ms (last_ack_ 0): cwnd_ = windowInit_ 2, then the round:
        // v_cntRTT_ 0 → rtt = 0.22 − v_begtime_ 0.1 = 0.12; rttLen =
        // t_seqno_ − v_begseq_ = 1 → v_baseRTT_ = 0.12 although above 0.1;
        // expect = actual = 1/0.12 → delta 0 ≤ γ; v_inc_flag_ 0 → 1:
        // v_incr_ 1, applied (2 − 1 ≤ 2): cwnd_ 3; v_begseq_ = 1.
        cc.on_transmit(Time(100_000_000), 0, 1_000);
        i.now = Time(220_000_000);
        i.snd_una = 1_000;
        i.snd_nxt = 1_000;
        cc.pkts_acked(&i, &w, 1, None);
        cc.increase_window(&i, &mut w, 1);
        assert_eq!((w.cwnd, cc.incr, cc.beg_seq), (3_000, Incr::Packet, 1));
        // Its own sample (0.12 s, sent once) joins the next round's sum.
        assert!((cc.base_rtt.unwrap() - 0.12).abs() < 1e-12);
        assert_eq!(cc.cnt_rtt, 1);
        // Packets 1-3 go; the ACK of packet 1 (≥ v_begseq_) is the third
        // round: rtt 0.12, rttLen 4 − 1 = 3, 3 outstanding, delta 0;
        // v_inc_flag_ 1 → 0: no growth, and windowInit_ is not applied
        // again (last_ack_ is no longer 0): cwnd_ stays 3.
        i.snd_una = 2_000;
        i.snd_nxt = 4_000;
        cc.increase_window(&i, &mut w, 1);
        assert_eq!((w.cwnd, cc.incr, cc.beg_seq), (3_000, Incr::None, 4));
    }

    #[test]
    fn loss_cuts_a_quarter_then_ssthresh_two() {
        // Dupack branch: win = window() = min(cwnd_, window_); ≤ 3 → 2, else
        // win − win>>2: 8 → 6, 3 → 2, window_ 5 → 5 − 1 = 4.
        let mut cc = vegas();
        let i = info(Profile::Ns2);
        assert_eq!(cc.ssthresh(&i, &window(8, 100), 0), 6_000);
        assert_eq!(cc.ssthresh(&i, &window(3, 100), 0), 2_000);
        let mut capped = i;
        capped.rwnd = 5_000;
        assert_eq!(cc.ssthresh(&capped, &window(8, 100), 0), 4_000);
        // The first new ACK after recovery: cwnd_ = v_newcwnd_ (the sender's
        // deflation to 6), ssthresh_ = 2.
        let mut w = window(6, 6);
        cc.congestion_state_set(&i, &mut w, CaState::Recovery);
        cc.congestion_state_set(&i, &mut w, CaState::Open);
        assert_eq!((w.cwnd, w.ssthresh), (6_000, 2_000));
        // Open without a recovery leaves ssthresh alone.
        let mut w = window(6, 9);
        cc.congestion_state_set(&i, &mut w, CaState::Open);
        assert_eq!(w.ssthresh, 9_000);
        // timeout → slowdown(CLOSE_SSTHRESH_HALF): ⌊9/2⌋ = 4; 3 → 2.
        let mut w = window(9, 100);
        cc.cwnd_event(&i, &mut w, CwndEvent::Loss);
        assert_eq!(w.ssthresh, 4_000);
        let mut w = window(3, 100);
        cc.cwnd_event(&i, &mut w, CwndEvent::Loss);
        assert_eq!(w.ssthresh, 2_000);
    }
}
