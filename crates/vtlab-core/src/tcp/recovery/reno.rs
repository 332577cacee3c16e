//! Reno fast recovery (RFC 5681 §3.2): on the `dupack_threshold`-th
//! duplicate ACK, retransmit the head, ssthresh from the controller and
//! cwnd = ssthresh + 3·MSS (one MSS per duplicate ACK received), inflated by
//! one MSS per further duplicate ACK; the first new ACK, partial or not, ends
//! recovery with cwnd = ssthresh (step 6). No `recover` guard: a loss in the
//! next window can start a new recovery at once, except under the `ns2`
//! profile: ns-2's Reno (`RenoTcpAgent::dupack_action` with `bug_fix_`, on by
//! default) retransmits fast only once the ACKs pass `recover_`, the highest
//! packet sent at the previous fast retransmit or timeout.

use super::{enter_fast_recovery, retransmit_head, RecoveryOps};
use crate::engine::Time;
use crate::net::Packet;
use crate::tcp::conn::Conn;

#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Reno {
    /// ns-2's `bug_fix_` (`StackBehaviour::reno_guards_recover`).
    pub(crate) guards_recover: bool,
}

impl RecoveryOps for Reno {
    fn guards_recover(&self) -> bool {
        self.guards_recover
    }

    fn enter(&mut self, c: &mut Conn, now: Time, _newly_sacked: u64, out: &mut Vec<Packet>) {
        let flight = c.flight_size();
        enter_fast_recovery(c, now, flight);
        if !c.cc_owns_cwnd {
            c.w.cwnd = c.w.ssthresh + u64::from(c.dupacks) * c.cfg.mss;
        }
        retransmit_head(c, now, out);
    }

    /// Any new ACK ends Reno's recovery.
    fn is_full_ack(&self, _c: &Conn, _ack: u64) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::recovery::test_support::{conn, sent, MSS, T};
    use crate::tcp::state::CaState;

    #[test]
    fn inflation_and_exit_on_any_new_ack() {
        // Segments 0..10 outstanding, cwnd 10 segments; the third duplicate ACK.
        let mut c = conn(10, 10);
        c.dupacks = 3;
        c.ca_state = CaState::Disorder;
        let mut out = vec![];
        let mut r = Reno::default();
        r.enter(&mut c, T, 0, &mut out);
        // RFC 5681 §3.2 steps 2–3: ssthresh = FlightSize / 2 = 5 segments, the
        // head resent, cwnd = ssthresh + 3·SMSS = 8 segments.
        assert_eq!(c.ca_state, CaState::Recovery);
        assert_eq!((c.w.cwnd, c.w.ssthresh), (8 * MSS, 5 * MSS));
        assert_eq!(sent(&mut out), vec![0]);
        assert_eq!(c.stats.fast_recoveries, 1);
        // Step 4: one SMSS per further duplicate ACK. At cwnd 11 segments the
        // window passes the 10 outstanding ones and new segment 10 goes out
        // (step 5).
        for _ in 0..3 {
            r.on_dupack(&mut c, 0);
        }
        assert_eq!(c.w.cwnd, 11 * MSS);
        r.send(&mut c, T, &mut out);
        assert_eq!(sent(&mut out), vec![10]);
        // Step 6: the next ACK of new data ends recovery, even below `recover`
        // (10 segments); and a new recovery needs no snd_una ≥ recover.
        assert!(r.is_full_ack(&c, MSS));
        assert!(!r.guards_recover());
        // ns-2 RenoTcpAgent::dupack_action, bug_fix_ true: `recovered` =
        // highest_ack_ > recover_; otherwise the third duplicate ACK does
        // nothing. The ns2 profile's Reno keeps the guard.
        let b = crate::tcp::behaviour::StackBehaviour::NS2;
        let r = Reno {
            guards_recover: b.reno_guards_recover,
        };
        assert!(r.guards_recover());
    }
}
