//! NewReno fast recovery (RFC 6582): as Reno, but a partial ACK (one below
//! `recover`) resends the next hole and deflates cwnd, and only a full ACK
//! ends recovery. The retransmission timer is restarted on the first partial
//! ACK only (RFC 6582 §3.2 step 4, the "Impatient" variant, as ns-3).

use super::{enter_fast_recovery, retransmit_head, NewAck, RecoveryOps};
use crate::engine::Time;
use crate::net::Packet;
use crate::tcp::conn::Conn;

#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct NewReno {
    /// A partial ACK was seen in this recovery.
    partial_ack_seen: bool,
}

impl RecoveryOps for NewReno {
    /// RFC 6582 §3.2 step 2: ssthresh, `recover` = snd_max, retransmit the
    /// head, cwnd = ssthresh + 3·MSS (one MSS per duplicate ACK received).
    fn enter(&mut self, c: &mut Conn, now: Time, _newly_sacked: u64, out: &mut Vec<Packet>) {
        let flight = c.flight_size();
        enter_fast_recovery(c, now, flight);
        self.partial_ack_seen = false;
        if !c.cc_owns_cwnd {
            c.w.cwnd = c.w.ssthresh + u64::from(c.dupacks) * c.cfg.mss;
        }
        retransmit_head(c, now, out);
    }

    /// RFC 6582 §3.2 step 4: resend the first unacknowledged segment, deflate
    /// cwnd by the bytes newly acknowledged and add back one MSS if at least
    /// one MSS was acknowledged (cwnd never below one MSS).
    fn on_partial_ack(
        &mut self,
        c: &mut Conn,
        now: Time,
        a: &NewAck,
        out: &mut Vec<Packet>,
    ) -> bool {
        retransmit_head(c, now, out);
        if !c.cc_owns_cwnd {
            c.w.cwnd = c.w.cwnd.saturating_sub(a.newly);
            if a.newly >= c.cfg.mss {
                c.w.cwnd += c.cfg.mss;
            }
            c.w.cwnd = c.w.cwnd.max(c.cfg.mss);
        }
        let restart_timer = !self.partial_ack_seen;
        self.partial_ack_seen = true;
        restart_timer
    }

    fn on_timeout(&mut self, c: &mut Conn, _now: Time) {
        self.partial_ack_seen = false;
        c.snd_nxt = c.snd_una;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::recovery::test_support::{conn, sent, MSS, T};
    use crate::tcp::state::CaState;

    fn partial(newly: u64) -> NewAck {
        NewAck {
            newly,
            delivered: newly,
            newly_sacked: 0,
            segments: (newly / MSS) as u32,
        }
    }

    #[test]
    fn partial_acks_resend_the_next_hole_and_deflate() {
        // Segments 0..10 outstanding, cwnd 10 segments; the third duplicate ACK.
        let mut c = conn(10, 10);
        c.dupacks = 3;
        c.ca_state = CaState::Disorder;
        let mut out = vec![];
        let mut r = NewReno::default();
        r.enter(&mut c, T, 0, &mut out);
        // RFC 6582 §3.2 step 2: recover = highest sent (exclusive end 10
        // segments), ssthresh 5, cwnd = 5 + 3 segments, head resent.
        assert_eq!(c.recover, Some(10 * MSS));
        assert_eq!((c.w.cwnd, c.w.ssthresh), (8 * MSS, 5 * MSS));
        assert_eq!(sent(&mut out), vec![0]);
        // A partial ACK of 3 segments (step 4): resend segment 3, deflate by
        // the 3 acknowledged and add back one SMSS: cwnd = 8 − 3 + 1 = 6
        // segments; the first partial ACK restarts the timer.
        c.snd_una = 3 * MSS;
        assert!(!r.is_full_ack(&c, 3 * MSS));
        assert!(r.on_partial_ack(&mut c, T, &partial(3 * MSS), &mut out));
        assert_eq!(c.w.cwnd, 6 * MSS);
        assert_eq!(sent(&mut out), vec![3]);
        // A partial ACK of 500 B, less than one SMSS: nothing added back,
        // cwnd = 6000 − 500; later partial ACKs leave the timer alone
        // ("Impatient").
        c.snd_una = 3 * MSS + 500;
        assert!(!r.on_partial_ack(&mut c, T, &partial(500), &mut out));
        assert_eq!(c.w.cwnd, 5_500);
        // Step 3: an ACK covering `recover` is full.
        assert!(r.is_full_ack(&c, 10 * MSS));
        // A timeout goes back N and re-arms the first-partial-ACK timer reset.
        r.on_timeout(&mut c, T);
        assert_eq!(c.snd_nxt, c.snd_una);
        assert!(r.on_partial_ack(&mut c, T, &partial(MSS), &mut out));
    }
}
