//! RACK, time-based loss detection (RFC 8985 §6), as Linux runs it
//! (`net/ipv4/tcp_recovery.c`): a segment is lost once a segment sent after
//! it has been delivered (cumulatively ACKed or SACKed) and RACK.rtt plus a
//! reordering window have passed since it was sent.
//!
//! * `advance` (Linux `tcp_rack_advance`), for every newly delivered segment:
//!   RACK.rtt = now − its last transmission, unless it was retransmitted and
//!   that is below min_rtt (the delivery may be the original's); the reference
//!   (RACK.xmit_ts, RACK.end_seq) moves to the most recently sent one.
//! * `reo_wnd` (Linux `tcp_rack_reo_wnd`): 0 while no reordering was seen and
//!   either a recovery is under way or at least DupThresh segments are SACKed;
//!   otherwise min(min_rtt / 4, srtt). (Linux widens it in steps on D-SACKs;
//!   vtlab's receiver sends none, so the step stays 1.)
//! * Reordering is seen (Linux `tcp_check_sack_reordering`) when a segment
//!   never retransmitted is delivered below the highest segment SACKed before.
//!
//! The scan itself is [`Scoreboard::rack_mark_lost`]; the reorder timer that
//! waits for the rest is the sender's.

use crate::engine::{Duration, Time};
use crate::tcp::scoreboard::{sent_after, Delivered, RackRef};

#[derive(Clone, Debug, Default)]
pub(crate) struct Rack {
    /// The reference, once a segment was delivered.
    reference: Option<RackRef>,
    /// A segment was delivered since the last scan (Linux `rack.advanced`).
    advanced: bool,
    /// Reordering was observed (Linux `tp->reord_seen`).
    reord_seen: bool,
}

/// What the newly delivered segments of one ACK tell RACK, gathered while the
/// scoreboard is updated and applied in Linux's order (SACKed segments in
/// `tcp_sacktag_write_queue`, then cumulatively acknowledged ones in
/// `tcp_clean_rtx_queue`; the last call sets RACK.rtt).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Deliveries {
    /// The most recently sent valid delivery: (xmit, end).
    newest: Option<(Time, u64)>,
    /// RACK.rtt of the highest valid SACKed segment: (end, rtt).
    sack_rtt: Option<(u64, Duration)>,
    /// RACK.rtt of the last valid cumulatively acknowledged segment.
    cum_rtt: Option<Duration>,
    /// Lowest start of a delivered segment never retransmitted.
    lowest_original: Option<u64>,
}

impl Deliveries {
    /// One delivered segment; `cumulative` when the cumulative ACK covers it.
    /// `min_rtt` is the connection's (before this ACK's sample), `ts_ecr` the
    /// ACK's echoed timestamp (zero without timestamps).
    pub fn add(
        &mut self,
        d: Delivered,
        cumulative: bool,
        now: Time,
        min_rtt: Option<Duration>,
        ts_ecr: Time,
    ) {
        if !d.ever_retx {
            self.lowest_original = Some(self.lowest_original.map_or(d.start, |l| l.min(d.start)));
        }
        // Linux tcp_skb_spurious_retrans: a retransmitted segment whose ACK
        // echoes a time before its retransmission was delivered by the original.
        if cumulative && d.ever_retx && ts_ecr > Time::ZERO && ts_ecr < d.xmit {
            return;
        }
        let rtt = now.since(d.xmit);
        if d.ever_retx && min_rtt.is_none_or(|m| rtt < m) {
            return; // ambiguous: perhaps the original was delivered
        }
        if cumulative {
            self.cum_rtt = Some(rtt);
        } else if self.sack_rtt.is_none_or(|(end, _)| d.end > end) {
            self.sack_rtt = Some((d.end, rtt));
        }
        if self
            .newest
            .is_none_or(|(t, e)| sent_after(d.xmit, d.end, t, e))
        {
            self.newest = Some((d.xmit, d.end));
        }
    }
}

impl Rack {
    /// Apply one ACK's deliveries; `prior_fack` is the end of the highest
    /// segment SACKed before this ACK.
    pub fn on_deliveries(&mut self, d: &Deliveries, prior_fack: Option<u64>) {
        if let (Some(low), Some(fack)) = (d.lowest_original, prior_fack) {
            if low < fack {
                self.reord_seen = true;
            }
        }
        let Some(rtt) = d.cum_rtt.or(d.sack_rtt.map(|(_, r)| r)) else {
            return;
        };
        self.advanced = true;
        let (xmit, end) = d.newest.unwrap_or_default();
        match self.reference.as_mut() {
            Some(r) => {
                r.rtt = rtt;
                if sent_after(xmit, end, r.xmit, r.end) {
                    r.xmit = xmit;
                    r.end = end;
                }
            }
            None => self.reference = Some(RackRef { xmit, end, rtt }),
        }
    }

    /// Whether a segment was delivered since the last scan; clears the flag
    /// (Linux `tcp_rack_mark_lost` scans only then).
    pub fn take_advanced(&mut self) -> bool {
        std::mem::take(&mut self.advanced)
    }

    pub fn reference(&self) -> Option<RackRef> {
        self.reference
    }

    /// RACK.rtt, zero before any delivery.
    pub fn rtt(&self) -> Duration {
        self.reference.map_or(Duration::ZERO, |r| r.rtt)
    }

    /// The reordering window (Linux `tcp_rack_reo_wnd`).
    pub fn reo_wnd(
        &self,
        in_recovery: bool,
        sacked_segments: usize,
        dupthresh: u32,
        min_rtt: Option<Duration>,
        srtt: Option<Duration>,
    ) -> Duration {
        if !self.reord_seen && (in_recovery || sacked_segments >= dupthresh as usize) {
            return Duration::ZERO;
        }
        match (min_rtt, srtt) {
            (Some(m), Some(s)) => Duration(m.as_nanos() / 4).min(s),
            _ => Duration::ZERO,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Time {
        Time(x * 1_000_000)
    }

    fn seg(start: u64, xmit_ms: u64, ever_retx: bool) -> Delivered {
        Delivered {
            start,
            end: start + 1000,
            xmit: ms(xmit_ms),
            ever_retx,
        }
    }

    #[test]
    fn the_reference_is_the_most_recently_sent_delivery() {
        let mut r = Rack::default();
        let mut d = Deliveries::default();
        let min = Some(Duration::from_millis(10));
        d.add(seg(2000, 20, false), false, ms(40), min, Time::ZERO);
        d.add(seg(1000, 25, false), false, ms(40), min, Time::ZERO);
        r.on_deliveries(&d, None);
        let rf = r.reference().unwrap();
        assert_eq!((rf.xmit, rf.end), (ms(25), 2000));
        // RACK.rtt from the highest SACKed segment (Linux's last call).
        assert_eq!(rf.rtt, Duration::from_millis(20));
        assert!(r.take_advanced());
        assert!(!r.take_advanced());
    }

    #[test]
    fn a_retransmission_delivered_within_min_rtt_is_ambiguous() {
        let mut r = Rack::default();
        let mut d = Deliveries::default();
        // Resent at 30 ms, delivered at 35 ms: 5 ms < min_rtt 10 ms.
        d.add(
            seg(0, 30, true),
            true,
            ms(35),
            Some(Duration::from_millis(10)),
            Time::ZERO,
        );
        r.on_deliveries(&d, None);
        assert!(r.reference().is_none());
        assert!(!r.take_advanced());
    }

    #[test]
    fn reordering_widens_the_window() {
        let mut r = Rack::default();
        let (min, srtt) = (
            Some(Duration::from_millis(8)),
            Some(Duration::from_millis(10)),
        );
        assert_eq!(r.reo_wnd(false, 1, 3, min, srtt), Duration::from_millis(2));
        assert_eq!(r.reo_wnd(false, 3, 3, min, srtt), Duration::ZERO);
        assert_eq!(r.reo_wnd(true, 0, 3, min, srtt), Duration::ZERO);
        // An original delivered below the highest SACKed segment: reordering.
        let mut d = Deliveries::default();
        d.add(seg(0, 20, false), true, ms(40), min, Time::ZERO);
        r.on_deliveries(&d, Some(3000));
        assert_eq!(r.reo_wnd(true, 5, 3, min, srtt), Duration::from_millis(2));
    }
}
