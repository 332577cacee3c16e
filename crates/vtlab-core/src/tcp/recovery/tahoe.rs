//! Tahoe: on the `dupack_threshold`-th duplicate ACK, retransmit, cwnd = 1
//! segment and go back N in slow start; no fast recovery (Jacobson 1988, the
//! 4.3BSD-Tahoe behaviour; ns-2 `Agent/TCP`).

use super::{send_classic, RecoveryOps};
use crate::engine::Time;
use crate::net::Packet;
use crate::tcp::conn::Conn;
use crate::tcp::state::CaState;

#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Tahoe;

impl RecoveryOps for Tahoe {
    /// Fast retransmit as after a timeout: ssthresh from the controller,
    /// state Loss with cwnd = 1 MSS, and everything from snd_una resent in
    /// slow start. Tahoe never is in state Recovery, so the in-recovery
    /// hooks keep their defaults and are not reached.
    fn enter(&mut self, c: &mut Conn, now: Time, _newly_sacked: u64, out: &mut Vec<Packet>) {
        let flight = c.flight_size();
        c.loss_event(now, flight);
        c.recover = Some(c.snd_max);
        c.set_state(now, CaState::Loss, flight);
        c.w.cwnd = c.cfg.mss;
        c.dupacks = 0;
        c.timed = None;
        c.stats.slow_starts_after_loss += 1;
        c.snd_nxt = c.snd_una;
        send_classic(c, now, out);
    }
}
