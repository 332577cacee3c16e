//! ns-2's retransmission timer (`tcp/tcp.cc`: `TcpAgent::rtt_init`,
//! `rtt_update`, `rtt_timeout`, `rtt_backoff`), for the `ns2` profile.
//!
//! ns-2 keeps the smoothed RTT and its variation as integers in clock ticks
//! (`tcpTick_`, 10 ms in ns-2.35's defaults), scaled by 8 and by 4
//! (`T_SRTT_BITS` = 3, `T_RTTVAR_BITS` = 2):
//!
//! * a sample of τ seconds, from a packet sent at `sendtime`, is
//!   ⌊(τ + (sendtime mod tick)) / tick⌋ ticks, at least 1 (the tick phase of
//!   the send time counts: a coarse clock that ticked between send and ACK);
//! * the first sample sets srtt8 = 8·m and rttvar4 = 2·m (srtt = m,
//!   rttvar = m/2); later ones take δ = m − srtt8/8 (integer), srtt8 += δ,
//!   then rttvar4 += |δ| − rttvar4/4, each floored at 1;
//! * the current timeout `t_rtxcur_` = ((rttvar4·8 + srtt8) / 8) ticks
//!   (`rttvar_exp_` = 2: srtt + 4·rttvar, whole ticks), 3 s before a sample
//!   (`rtxcur_init_`);
//! * the armed timeout (`rtt_timeout`, `rfc2988_` on) is
//!   max(t_rtxcur_, minrto_)·backoff, capped at `maxrto_`, never below two
//!   ticks;
//! * `rtt_backoff` doubles the backoff while it is below 64 or the armed
//!   timeout is below `maxrto_`; past 8 it folds srtt into rttvar and zeroes
//!   srtt, so that the next sample starts the estimate afresh;
//! * the backoff returns to 1 when a timed packet is acknowledged
//!   (`newack`), i.e. with each valid sample.
//!
//! ns-2 adds a per-agent random `boot_time_` in [0, tick) to the send time
//! before taking its phase; vtlab takes 0 (the phase comes from the send time
//! alone), which keeps runs independent of an extra draw.

use crate::engine::{Duration, Time};

/// srtt8 and rttvar4 scaling (ns-2 `T_SRTT_BITS`, `T_RTTVAR_BITS`).
const SRTT_BITS: u32 = 3;
const RTTVAR_BITS: u32 = 2;
/// ns-2 `rttvar_exp_`: the timeout is srtt + 2^2·rttvar.
const RTTVAR_EXP: u32 = 2;

#[derive(Clone, Debug)]
pub struct Ns2Rtt {
    tick_ns: u64,
    /// 8·srtt in ticks (0: no estimate).
    srtt8: i64,
    /// 4·rttvar in ticks.
    rttvar4: i64,
    /// `t_rtxcur_`, ns.
    rtxcur_ns: u64,
    backoff: u64,
}

impl Ns2Rtt {
    /// `rtt_init` with `srtt_init_` 0 and `rttvar_init_` 12 s (ns-2.35
    /// defaults); `initial` is `rtxcur_init_`.
    pub fn new(tick: Duration, initial: Duration) -> Self {
        let tick_ns = tick.as_nanos().max(1);
        Ns2Rtt {
            tick_ns,
            srtt8: 0,
            rttvar4: ((12_000_000_000 / tick_ns) as i64) << RTTVAR_BITS,
            rtxcur_ns: initial.as_nanos(),
            backoff: 1,
        }
    }

    /// `rtt_update` for a packet sent at `sent` and acknowledged `tao` later;
    /// ends any backoff (`newack`).
    pub fn sample(&mut self, sent: Time, tao: Duration) {
        let tickoff = sent.0 % self.tick_ns;
        let m = ((tao.as_nanos() + tickoff) / self.tick_ns).max(1) as i64;
        if self.srtt8 != 0 {
            let mut delta = m - (self.srtt8 >> SRTT_BITS);
            self.srtt8 += delta;
            if self.srtt8 <= 0 {
                self.srtt8 = 1;
            }
            delta = delta.abs() - (self.rttvar4 >> RTTVAR_BITS);
            self.rttvar4 += delta;
            if self.rttvar4 <= 0 {
                self.rttvar4 = 1;
            }
        } else {
            self.srtt8 = m << SRTT_BITS;
            self.rttvar4 = m << (RTTVAR_BITS - 1);
        }
        let shift = RTTVAR_EXP + (SRTT_BITS - RTTVAR_BITS);
        let ticks = ((self.rttvar4 << shift) + self.srtt8) >> SRTT_BITS;
        self.rtxcur_ns = ticks as u64 * self.tick_ns;
        self.backoff = 1;
    }

    /// `rtt_timeout`: the timeout the timer is armed with.
    pub fn timeout(&self, min: Duration, max: Duration) -> Duration {
        let base = self.rtxcur_ns.max(min.as_nanos());
        let t = base.saturating_mul(self.backoff).min(max.as_nanos());
        Duration(t.max(2 * self.tick_ns))
    }

    /// `t_backoff_ = 1` without a sample (Sack1's partial ACK).
    pub fn end_backoff(&mut self) {
        self.backoff = 1;
    }

    /// `rtt_backoff`.
    pub fn back_off(&mut self, min: Duration, max: Duration) {
        if self.backoff < 64 || self.timeout(min, max) < max {
            self.backoff = self.backoff.saturating_mul(2);
        }
        if self.backoff > 8 {
            self.rttvar4 += self.srtt8 >> SRTT_BITS;
            self.srtt8 = 0;
        }
    }

    /// The smoothed RTT in whole ticks, if there is an estimate.
    pub fn srtt(&self) -> Option<Duration> {
        (self.srtt8 != 0).then(|| Duration((self.srtt8 >> SRTT_BITS) as u64 * self.tick_ns))
    }

    /// rttvar in whole ticks.
    pub fn rttvar(&self) -> Duration {
        Duration((self.rttvar4 >> RTTVAR_BITS) as u64 * self.tick_ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TICK: Duration = Duration::from_millis(10);
    const MIN: Duration = Duration::from_millis(200);
    const MAX: Duration = Duration::from_secs(60);

    fn ms(v: u64) -> Time {
        Time(v * 1_000_000)
    }

    fn timer() -> Ns2Rtt {
        Ns2Rtt::new(TICK, Duration::from_secs(3))
    }

    #[test]
    fn before_a_sample_the_timeout_is_rtxcur_init() {
        // rtt_init: t_rtxcur_ = rtxcur_init_ = 3 s; rtt_timeout: 3 s ≥ minrto_,
        // backoff 1 → 3 s.
        assert_eq!(timer().timeout(MIN, MAX), Duration::from_secs(3));
        assert_eq!(timer().srtt(), None);
    }

    #[test]
    fn rtt_update_counts_whole_ticks_with_the_send_phase() {
        // Sent at 1.004 s (phase 4 ms), τ = 105 ms: ⌊(105 + 4)/10⌋ = 10 ticks.
        // First sample: srtt8 = 80, rttvar4 = 20 → srtt 100 ms, rttvar 50 ms;
        // t_rtxcur_ = ((20·8 + 80) >> 3) = 30 ticks = 300 ms.
        let mut t = timer();
        t.sample(ms(1004), Duration::from_millis(105));
        assert_eq!(t.srtt(), Some(Duration::from_millis(100)));
        assert_eq!(t.rttvar(), Duration::from_millis(50));
        assert_eq!(t.timeout(MIN, MAX), Duration::from_millis(300));
        // Sent at 2.007 s (phase 7 ms), τ = 105 ms: ⌊112/10⌋ = 11 ticks.
        // δ = 11 − 80/8 = 1; srtt8 = 81; |δ| − rttvar4/4 = 1 − 5 = −4;
        // rttvar4 = 16. t_rtxcur_ = (16·8 + 81) >> 3 = 209 >> 3 = 26 ticks.
        t.sample(ms(2007), Duration::from_millis(105));
        assert_eq!(t.srtt(), Some(Duration::from_millis(100)));
        assert_eq!(t.rttvar(), Duration::from_millis(40));
        assert_eq!(t.timeout(MIN, MAX), Duration::from_millis(260));
    }

    #[test]
    fn short_rtts_take_one_tick_and_the_minimum_rto() {
        // τ = 3 ms sent on a tick boundary: ⌊3/10⌋ = 0 → 1 tick (t_rtt_ < 1).
        // srtt8 = 8, rttvar4 = 2: t_rtxcur_ = (16 + 8) >> 3 = 3 ticks = 30 ms,
        // below minrto_ 200 ms → rtt_timeout gives 200 ms.
        let mut t = timer();
        t.sample(ms(500), Duration::from_millis(3));
        assert_eq!(t.srtt(), Some(Duration::from_millis(10)));
        assert_eq!(t.timeout(MIN, MAX), Duration::from_millis(200));
        // With minrto_ 0: 30 ms, above the two-tick floor of 20 ms.
        assert_eq!(t.timeout(Duration(0), MAX), Duration::from_millis(30));
    }

    #[test]
    fn timeout_is_never_below_two_ticks() {
        // rtt_timeout: timeout < 2·tcp_tick_ → 2·tcp_tick_. With
        // rtxcur_init_ 0 and minrto_ 0 the timeout would be 0: 20 ms.
        let t = Ns2Rtt::new(TICK, Duration(0));
        assert_eq!(t.timeout(Duration(0), MAX), Duration::from_millis(20));
    }

    #[test]
    fn backoff_doubles_then_clobbers_srtt_past_eight() {
        // From the 300 ms estimate above (srtt8 = 80, rttvar4 = 20).
        let mut t = timer();
        t.sample(ms(1004), Duration::from_millis(105));
        // 300 → 600 → 1200 → 2400 ms (backoff 2, 4, 8): srtt kept.
        for want in [600, 1200, 2400] {
            t.back_off(MIN, MAX);
            assert_eq!(t.timeout(MIN, MAX), Duration::from_millis(want));
        }
        assert_eq!(t.srtt(), Some(Duration::from_millis(100)));
        // Backoff 16 > 8: rttvar4 += srtt8 >> 3 = 20 + 10 = 30, srtt8 = 0.
        // t_rtxcur_ is not recomputed: 300 ms · 16 = 4.8 s.
        t.back_off(MIN, MAX);
        assert_eq!(t.srtt(), None);
        assert_eq!(t.rttvar(), Duration::from_millis(70));
        assert_eq!(t.timeout(MIN, MAX), Duration::from_millis(4800));
        // 9.6, 19.2, 38.4, then 76.8 s capped at maxrto_ 60 s.
        for want in [9600, 19_200, 38_400, 60_000, 60_000] {
            t.back_off(MIN, MAX);
            assert_eq!(t.timeout(MIN, MAX), Duration::from_millis(want));
        }
        // The next sample starts afresh (t_srtt_ == 0 branch) and ends the
        // backoff: τ = 200 ms on a tick boundary → 20 ticks, srtt8 = 160,
        // rttvar4 = 40, t_rtxcur_ = (320 + 160) >> 3 = 60 ticks = 600 ms.
        t.sample(ms(100_000), Duration::from_millis(200));
        assert_eq!(t.srtt(), Some(Duration::from_millis(200)));
        assert_eq!(t.timeout(MIN, MAX), Duration::from_millis(600));
    }

    #[test]
    fn the_minimum_applies_before_the_backoff() {
        // rfc2988_: minrto_ clamps t_rtxcur_ before the backoff multiplies:
        // 30 ms → 200 ms, ×2 = 400 ms (not max(60 ms, 200 ms) = 200 ms).
        let mut t = timer();
        t.sample(ms(500), Duration::from_millis(3));
        t.back_off(MIN, MAX);
        assert_eq!(t.timeout(MIN, MAX), Duration::from_millis(400));
    }
}
