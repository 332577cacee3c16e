//! Reno fast recovery (RFC 5681 §3.2): on the `dupack_threshold`-th
//! duplicate ACK, retransmit the head, ssthresh from the controller and
//! cwnd = ssthresh + 3·MSS (one MSS per duplicate ACK received), inflated by
//! one MSS per further duplicate ACK; the first new ACK, partial or not, ends
//! recovery with cwnd = ssthresh (step 6). No `recover` guard: a loss in the
//! next window can start a new recovery at once.

use super::{enter_fast_recovery, retransmit_head, RecoveryOps};
use crate::engine::Time;
use crate::net::Packet;
use crate::tcp::conn::Conn;

#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Reno;

impl RecoveryOps for Reno {
    fn guards_recover(&self) -> bool {
        false
    }

    fn enter(&mut self, c: &mut Conn, now: Time, _newly_sacked: u64, out: &mut Vec<Packet>) {
        let flight = c.flight_size();
        enter_fast_recovery(c, now, flight);
        c.w.cwnd = c.w.ssthresh + u64::from(c.dupacks) * c.cfg.mss;
        retransmit_head(c, now, out);
    }

    /// Any new ACK ends Reno's recovery.
    fn is_full_ack(&self, _c: &Conn, _ack: u64) -> bool {
        true
    }
}
