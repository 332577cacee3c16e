//! The RTT ratio γ = R_m / R_t of Hu et al. (ARWND and ACWND): R_m the
//! minimum RTT over a recent window of time, R_t the latest RTT sample.
//! γ close to 1 means the queues along the path are nearly empty; γ well
//! below 1 means they hold several RTTs' worth of data.
//!
//! R_m is a sliding-window minimum (monotone deque: amortised O(1) per
//! sample), so an old minimum expires and R_m follows a path whose base RTT
//! rises (a handover, a longer route).

use std::collections::VecDeque;

use crate::engine::{Duration, Time};

#[derive(Clone, Debug)]
pub struct RttRatio {
    window: Duration,
    /// (time, rtt) with increasing times and increasing rtts: the front is
    /// the minimum of the window.
    mins: VecDeque<(Time, Duration)>,
    latest: Option<Duration>,
}

impl RttRatio {
    /// R_m over the last `window` of time.
    pub fn new(window: Duration) -> Self {
        RttRatio {
            window,
            mins: VecDeque::with_capacity(16),
            latest: None,
        }
    }

    /// Add a sample taken at `now`.
    pub fn sample(&mut self, now: Time, rtt: Duration) {
        while self.mins.back().is_some_and(|&(_, r)| r >= rtt) {
            self.mins.pop_back();
        }
        self.mins.push_back((now, rtt));
        while self
            .mins
            .front()
            .is_some_and(|&(t, _)| t + self.window < now)
        {
            self.mins.pop_front();
        }
        self.latest = Some(rtt);
    }

    /// R_m: the minimum RTT of the window (after the last sample).
    pub fn min_rtt(&self) -> Option<Duration> {
        self.mins.front().map(|&(_, r)| r)
    }

    /// R_t: the latest sample.
    pub fn latest(&self) -> Option<Duration> {
        self.latest
    }

    /// γ = R_m / R_t in (0, 1], or `None` before the first sample.
    pub fn gamma(&self) -> Option<f64> {
        match (self.min_rtt(), self.latest) {
            (Some(m), Some(t)) if t.0 > 0 => Some(m.0 as f64 / t.0 as f64),
            (Some(_), Some(_)) => Some(1.0),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Duration {
        Duration(x * 1_000_000)
    }

    #[test]
    fn gamma_is_window_min_over_latest() {
        let mut r = RttRatio::new(ms(1000));
        assert_eq!(r.gamma(), None);
        r.sample(Time(0), ms(100));
        assert_eq!(r.gamma(), Some(1.0));
        r.sample(Time(ms(100).0), ms(80));
        r.sample(Time(ms(200).0), ms(160));
        // R_m = 80, R_t = 160: γ = 0.5.
        assert_eq!(r.gamma(), Some(0.5));
        // At 1.15 s the 80 ms sample (taken at 0.1 s) has left the 1 s window;
        // the window holds 160 (0.2 s) and 200 (1.15 s): R_m = 160, γ = 0.8.
        r.sample(Time(ms(1150).0), ms(200));
        assert_eq!(r.min_rtt(), Some(ms(160)));
        assert_eq!(r.gamma(), Some(0.8));
    }
}
