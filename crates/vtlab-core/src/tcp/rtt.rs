//! Round-trip time estimation and the retransmission timeout, RFC 6298.
//!
//! `rto = max(srtt + max(G, 4·rttvar), rto_min)`, capped at `rto_max`; the
//! first sample sets `srtt = R`, `rttvar = R/2`; later samples update rttvar
//! with the old srtt, then srtt (gains 1/4 and 1/8). Before any sample the RTO
//! is `rto_initial`. Backoff doubles the RTO (capped) and is cleared by the
//! next sample. G is the clock granularity (ns-3: 1 ms).
//!
//! Under the `ns2` profile the srtt, rttvar and RTO arithmetic is ns-2's
//! integer-tick timer instead ([`Ns2Rtt`], G then being `tcpTick_`); the
//! minimum and latest samples stay exact.

use super::ns2_rtt::Ns2Rtt;
use crate::engine::{Duration, Time};

#[derive(Clone, Debug)]
pub struct RttEstimator {
    srtt_ns: Option<f64>,
    rttvar_ns: f64,
    rto: Duration,
    rto_initial: Duration,
    min_rtt: Option<Duration>,
    latest: Option<Duration>,
    rto_min: Duration,
    rto_max: Duration,
    granularity: Duration,
    ns2: Option<Ns2Rtt>,
}

impl RttEstimator {
    pub fn new(
        rto_initial: Duration,
        rto_min: Duration,
        rto_max: Duration,
        granularity: Duration,
    ) -> Self {
        RttEstimator {
            srtt_ns: None,
            rttvar_ns: 0.0,
            rto: rto_initial.min(rto_max),
            rto_initial: rto_initial.min(rto_max),
            min_rtt: None,
            latest: None,
            rto_min,
            rto_max,
            granularity,
            ns2: None,
        }
    }

    /// ns-2's integer-tick timer with `tcpTick_` = the granularity
    /// (`TcpAgent::rtt_init`; the initial RTO is `rtxcur_init_`).
    pub fn ns2_ticks(mut self) -> Self {
        self.ns2 = Some(Ns2Rtt::new(self.granularity, self.rto_initial));
        self
    }

    /// Feed the sample of a segment sent at `sent`: ns-2's timer counts the
    /// tick phase of the send time; RFC 6298 ignores it.
    pub fn sample_sent(&mut self, sent: Time, r: Duration) {
        if let Some(n) = self.ns2.as_mut() {
            n.sample(sent, r);
        }
        self.sample(r);
    }

    /// Feed one valid sample; recomputes the RTO (which clears any backoff).
    pub fn sample(&mut self, r: Duration) {
        let r_ns = r.as_nanos() as f64;
        match self.srtt_ns {
            None => {
                self.srtt_ns = Some(r_ns);
                self.rttvar_ns = r_ns / 2.0;
            }
            Some(srtt) => {
                self.rttvar_ns = 0.75 * self.rttvar_ns + 0.25 * (srtt - r_ns).abs();
                self.srtt_ns = Some(0.875 * srtt + 0.125 * r_ns);
            }
        }
        self.min_rtt = Some(self.min_rtt.map_or(r, |m| m.min(r)));
        self.latest = Some(r);
        self.rto = self.computed_rto();
    }

    fn computed_rto(&self) -> Duration {
        if let Some(n) = &self.ns2 {
            return n.timeout(self.rto_min, self.rto_max);
        }
        let srtt = self.srtt_ns.unwrap_or(0.0);
        let var = (4.0 * self.rttvar_ns).max(self.granularity.as_nanos() as f64);
        let rto = Duration((srtt + var).round() as u64);
        rto.max(self.rto_min).min(self.rto_max)
    }

    /// Recompute the RTO from srtt and rttvar, dropping any backoff (ns-3
    /// `NewAck`, `SendEmptyPacket`); before the first sample, back to the
    /// initial RTO (ns-3 computes 1.001 s there: its initial estimate of 1 s
    /// plus the 1 ms granularity; RFC 6298 §2.1 says 1 s). ns-2's timer
    /// also ends its backoff count (`t_backoff_ = 1`).
    pub fn clear_backoff(&mut self) {
        if let Some(n) = self.ns2.as_mut() {
            n.end_backoff();
        }
        self.rto = if self.srtt_ns.is_some() {
            self.computed_rto()
        } else {
            self.rto_initial
        };
    }

    /// Exponential backoff after an expiry.
    pub fn back_off(&mut self) {
        if let Some(n) = self.ns2.as_mut() {
            n.back_off(self.rto_min, self.rto_max);
            self.rto = n.timeout(self.rto_min, self.rto_max);
            return;
        }
        self.rto = Duration(self.rto.as_nanos().saturating_mul(2)).min(self.rto_max);
    }

    pub fn rto(&self) -> Duration {
        self.rto
    }
    pub fn srtt(&self) -> Option<Duration> {
        if let Some(n) = &self.ns2 {
            return n.srtt();
        }
        self.srtt_ns.map(|s| Duration(s.round() as u64))
    }
    pub fn rttvar(&self) -> Duration {
        if let Some(n) = &self.ns2 {
            return n.rttvar();
        }
        Duration(self.rttvar_ns.round() as u64)
    }
    pub fn min_rtt(&self) -> Option<Duration> {
        self.min_rtt
    }
    pub fn latest(&self) -> Option<Duration> {
        self.latest
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn est() -> RttEstimator {
        RttEstimator::new(
            Duration::from_secs(1),
            Duration::from_secs(1),
            Duration::from_secs(60),
            Duration::from_millis(1),
        )
    }

    #[test]
    fn initial_rto_before_samples() {
        assert_eq!(est().rto(), Duration::from_secs(1));
    }

    #[test]
    fn rfc6298_arithmetic() {
        let mut e = RttEstimator::new(
            Duration::from_secs(1),
            Duration::from_millis(200),
            Duration::from_secs(60),
            Duration::from_millis(1),
        );
        e.sample(Duration::from_millis(100));
        // srtt 100, rttvar 50, rto = 100 + 200 = 300 ms.
        assert_eq!(e.srtt(), Some(Duration::from_millis(100)));
        assert_eq!(e.rttvar(), Duration::from_millis(50));
        assert_eq!(e.rto(), Duration::from_millis(300));
        e.sample(Duration::from_millis(300));
        // rttvar = 0.75·50 + 0.25·|100−300| = 87.5; srtt = 0.875·100 + 0.125·300 = 125.
        assert_eq!(e.rttvar(), Duration::from_micros(87_500));
        assert_eq!(e.srtt(), Some(Duration::from_millis(125)));
        assert_eq!(e.rto(), Duration::from_millis(475));
        assert_eq!(e.min_rtt(), Some(Duration::from_millis(100)));
    }

    #[test]
    fn minimum_and_granularity_apply() {
        let mut e = est();
        e.sample(Duration::from_millis(4));
        assert_eq!(e.rto(), Duration::from_secs(1));
        let mut e = RttEstimator::new(
            Duration::from_secs(1),
            Duration(0),
            Duration::from_secs(60),
            Duration::from_millis(1),
        );
        for _ in 0..200 {
            e.sample(Duration::from_millis(10));
        }
        // rttvar decays toward 0; G keeps the variance term at 1 ms.
        assert_eq!(e.rto(), Duration::from_millis(11));
    }

    #[test]
    fn backoff_doubles_caps_and_clears_on_sample() {
        let mut e = est();
        e.sample(Duration::from_millis(100));
        e.back_off();
        assert_eq!(e.rto(), Duration::from_secs(2));
        for _ in 0..10 {
            e.back_off();
        }
        assert_eq!(e.rto(), Duration::from_secs(60));
        e.sample(Duration::from_millis(100));
        assert_eq!(e.rto(), Duration::from_secs(1));
    }

    #[test]
    fn clearing_the_backoff_before_a_sample_restores_the_initial_rto() {
        // est(): initial RTO 1 s. Two expiries back it off to 4 s; clearing
        // (an ACK without a valid sample, Karn) returns to 1 s, not 4 s.
        let mut e = est();
        e.back_off();
        e.back_off();
        assert_eq!(e.rto(), Duration::from_secs(4));
        e.clear_backoff();
        assert_eq!(e.rto(), Duration::from_secs(1));
    }
}
