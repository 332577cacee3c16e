//! Proportional Rate Reduction, RFC 6937, with the slow-start reduction bound
//! (PRR-SSRB, the default of ns-3's `TcpPrrRecovery` and of Linux).
//!
//! During recovery, for every ACK: `prr_delivered += DeliveredData` (bytes newly
//! acknowledged cumulatively or by SACK); if `pipe > ssthresh` the sender may send
//! `⌈prr_delivered·ssthresh/RecoverFS⌉ − prr_out` (proportional part), otherwise
//! `min(ssthresh − pipe, max(prr_delivered − prr_out, DeliveredData) + MSS)`
//! (slow-start part); cwnd = pipe + sndcnt. RecoverFS is the flight size at entry.

#[derive(Clone, Debug)]
pub struct Prr {
    recover_fs: u64,
    delivered: u64,
    out: u64,
}

impl Prr {
    pub fn enter(flight_size: u64) -> Self {
        Prr {
            recover_fs: flight_size.max(1),
            delivered: 0,
            out: 0,
        }
    }

    /// cwnd for this ACK, given the bytes it delivered and the current pipe.
    pub fn on_ack(&mut self, delivered: u64, pipe: u64, ssthresh: u64, mss: u64) -> u64 {
        self.delivered += delivered;
        let sndcnt = if pipe > ssthresh {
            let target = (u128::from(self.delivered) * u128::from(ssthresh))
                .div_ceil(u128::from(self.recover_fs));
            (target as u64).saturating_sub(self.out)
        } else {
            let limit = self.delivered.saturating_sub(self.out).max(delivered) + mss;
            (ssthresh - pipe).min(limit)
        };
        pipe + sndcnt
    }

    /// ns-3.44 `TcpPrrRecovery::DoRecovery`, including its deviations from RFC
    /// 6937 (ns3 profile only): on a duplicate ACK (`dupack`, also the one that
    /// starts recovery) one MSS is added to DeliveredData while prr_delivered <
    /// RecoverFS, even with SACK; an ACK delivering nothing leaves cwnd alone
    /// (`None`); the proportional part multiplies prr_delivered by ssthresh in
    /// 32-bit unsigned arithmetic, which wraps once the product passes 2^32
    /// (then the target is far too small and nothing is sent until pipe falls
    /// to ssthresh); the reduction bound is PRR-CRB, with the extra MSS of
    /// PRR-SSRB only when the ACK cumulatively acknowledges retransmitted data
    /// (`safe`); `prr_delivered − prr_out` wraps when more was sent than
    /// delivered (the limit is then negative instead of DeliveredData); and one
    /// MSS may always go out before anything was sent in recovery.
    pub fn on_ack_ns3(
        &mut self,
        delivered: u64,
        pipe: u64,
        ssthresh: u64,
        mss: u64,
        dupack: bool,
        safe: bool,
    ) -> Option<u64> {
        let (rfs, ssth, pipe32, mss32) = (
            self.recover_fs as u32,
            ssthresh as u32,
            pipe as u32,
            mss as u32,
        );
        let mut d = delivered as u32;
        if dupack && (self.delivered as u32) < rfs {
            d = d.wrapping_add(mss32);
        }
        if d == 0 {
            return None;
        }
        self.delivered = u64::from((self.delivered as u32).wrapping_add(d));
        let (del, out) = (self.delivered as u32, self.out as u32);
        let mut sndcnt: i32 = if pipe32 > ssth {
            let target = (f64::from(del.wrapping_mul(ssth)) / f64::from(rfs.max(1))).ceil();
            (target - f64::from(out)) as i32
        } else {
            let mut limit = del.wrapping_sub(out).max(d) as i32;
            if safe {
                limit = limit.wrapping_add(mss32 as i32);
            }
            limit.min(ssth.wrapping_sub(pipe32) as i32)
        };
        sndcnt = sndcnt.max(if out > 0 { 0 } else { mss32 as i32 });
        Some(u64::from(pipe32.wrapping_add(sndcnt as u32)))
    }

    /// Bytes (re)transmitted during recovery.
    pub fn on_send(&mut self, bytes: u64) {
        self.out += bytes;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proportional_part_halves_the_sending_rate() {
        // RecoverFS 20 segments, ssthresh 10: one segment out per two delivered.
        let mut p = Prr::enter(20_000);
        let mut sent = 0;
        let mut pipe = 19_000;
        for _ in 0..10 {
            pipe -= 1000; // one segment delivered per ACK
            let cwnd = p.on_ack(1000, pipe, 10_000, 1000);
            let can = cwnd.saturating_sub(pipe);
            p.on_send(can);
            sent += can;
            pipe += can;
        }
        // ⌈10 000 · 10 000 / 20 000⌉ = 5000 bytes after 10 delivered segments.
        assert_eq!(sent, 5_000);
    }

    #[test]
    fn ns3_quirks() {
        let mss = 1000;
        // A duplicate ACK adds one MSS to DeliveredData while prr_delivered <
        // RecoverFS: 2000 · 5000 / 10 000 = 1000 → one segment per dupACK.
        let mut p = Prr::enter(10_000);
        assert_eq!(
            p.on_ack_ns3(1000, 9000, 5000, mss, true, false),
            Some(10_000)
        );
        // An ACK delivering nothing leaves cwnd alone.
        assert_eq!(p.on_ack_ns3(0, 9000, 5000, mss, false, false), None);
        // Nothing sent yet: one MSS may go out whatever the quota.
        let mut p = Prr::enter(100_000);
        assert_eq!(
            p.on_ack_ns3(10, 90_000, 50_000, mss, false, false),
            Some(91_000)
        );
        // prr_delivered · ssthresh wraps at 2^32: 70 000 · 70 000 = 4.9e9 →
        // 605 032 704 / 100 000 → 6051 − prr_out (1000) → cwnd = pipe + 5051,
        // not pipe + 48 000.
        let mut p = Prr::enter(100_000);
        p.on_send(1000);
        assert_eq!(
            p.on_ack_ns3(70_000, 90_000, 70_000, mss, false, false),
            Some(95_051)
        );
        // PRR-CRB below ssthresh; + MSS only on a "safe" ACK.
        let mut p = Prr::enter(20_000);
        p.on_send(1000);
        assert_eq!(
            p.on_ack_ns3(2000, 4000, 10_000, mss, false, false),
            Some(6000)
        );
        assert_eq!(
            p.on_ack_ns3(2000, 4000, 10_000, mss, false, true),
            Some(8000)
        );
        // prr_out > prr_delivered: the limit is negative (uint32 wrap), not
        // DeliveredData: nothing may go out.
        let mut p = Prr::enter(20_000);
        p.on_send(5000);
        assert_eq!(
            p.on_ack_ns3(1000, 4000, 10_000, mss, false, false),
            Some(4000)
        );
    }

    #[test]
    fn slow_start_bound_below_ssthresh() {
        // pipe 4 segments under ssthresh 10: at most delivered + 1 MSS.
        let mut p = Prr::enter(20_000);
        assert_eq!(p.on_ack(2000, 4000, 10_000, 1000), 4000 + 3000);
        // Never above ssthresh.
        let mut p = Prr::enter(20_000);
        assert_eq!(p.on_ack(9000, 9500, 10_000, 1000), 10_000);
    }
}
