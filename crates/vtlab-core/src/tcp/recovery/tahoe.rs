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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::recovery::test_support::{conn, sent, MSS, T};

    #[test]
    fn fast_retransmit_goes_back_n_from_one_segment() {
        // Segments 0..10 outstanding, cwnd 10 segments; the third duplicate ACK.
        let mut c = conn(10, 10);
        c.dupacks = 3;
        c.ca_state = CaState::Disorder;
        let mut out = vec![];
        Tahoe.enter(&mut c, T, 0, &mut out);
        // ssthresh = FlightSize / 2 = 5 segments (RFC 5681 eq. 4, the NewReno
        // law); cwnd = one segment in state Loss; snd_nxt rewinds to snd_una
        // and only the head fits the window.
        assert_eq!(c.ca_state, CaState::Loss);
        assert_eq!((c.w.cwnd, c.w.ssthresh), (MSS, 5 * MSS));
        assert_eq!((c.recover, c.dupacks), (Some(10 * MSS), 0));
        assert_eq!(sent(&mut out), vec![0]);
        assert_eq!(c.stats.fast_recoveries, 0, "no fast recovery");
        assert_eq!(c.stats.slow_starts_after_loss, 1);
        // The head is acknowledged and slow start allows two segments: 1 and 2
        // go out again although the receiver may hold them (go back N).
        c.snd_una = MSS;
        c.w.cwnd = 2 * MSS;
        Tahoe.send(&mut c, T, &mut out);
        assert_eq!(sent(&mut out), vec![1, 2]);
    }
}
