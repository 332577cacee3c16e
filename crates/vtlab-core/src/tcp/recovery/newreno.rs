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
        c.w.cwnd = c.w.ssthresh + u64::from(c.dupacks) * c.cfg.mss;
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
        c.w.cwnd = c.w.cwnd.saturating_sub(a.newly);
        if a.newly >= c.cfg.mss {
            c.w.cwnd += c.cfg.mss;
        }
        c.w.cwnd = c.w.cwnd.max(c.cfg.mss);
        let restart_timer = !self.partial_ack_seen;
        self.partial_ack_seen = true;
        restart_timer
    }

    fn on_timeout(&mut self, c: &mut Conn) {
        self.partial_ack_seen = false;
        c.snd_nxt = c.snd_una;
    }
}
