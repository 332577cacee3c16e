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
    fn slow_start_bound_below_ssthresh() {
        // pipe 4 segments under ssthresh 10: at most delivered + 1 MSS.
        let mut p = Prr::enter(20_000);
        assert_eq!(p.on_ack(2000, 4000, 10_000, 1000), 4000 + 3000);
        // Never above ssthresh.
        let mut p = Prr::enter(20_000);
        assert_eq!(p.on_ack(9000, 9500, 10_000, 1000), 10_000);
    }
}
