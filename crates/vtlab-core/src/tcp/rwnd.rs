//! Receive-window control: what window a receiver advertises beyond "the
//! buffer less the out-of-order bytes". A general mechanism (a receiver may
//! cap or adapt its advertised window); ARWND (Hu et al., adaptive receive
//! window from the RTT ratio) is one controller of it.
//!
//! ## ARWND, as vtlab reads it
//! The paper gives the idea and a flowchart that is a figure; the thresholds
//! are not in its text, so each is a parameter (defaults defended in
//! docs/cellular.md):
//!
//! * The receiver measures the RTT from the timestamps echoed in data
//!   segments (as Linux's `tcp_rcv_rtt_measure_ts`: now − TSecr of a segment
//!   that advances `rcv_nxt`), and keeps γ = R_m / R_t ([`RttRatio`], R_m over
//!   `rm_window`).
//! * Once per R_t (the latest RTT) it updates the window W (after a change,
//!   once per two R_t: a new window shows in the RTT one round trip later, and
//!   acting on samples taken under the old one makes W oscillate):
//!   - γ ≥ `gamma_high` (queues nearly empty): grow, `W ← W + λ·W` (`mode =
//!     window`: λ times the growth of a standard receiver, whose auto-tuning
//!     doubles the window every round trip, so λ = 1 is Linux's pace and 3
//!     quadruples it) or `W ← W + λ·MSS` (`mode = increment`);
//!   - R_t > `rtt_multiple`·R_m (the delay has grown to an unacceptable
//!     level): shrink, `W ← γ·W`;
//!   - otherwise keep W ("will not decrease the window unless the RTT is
//!     larger than a reasonable value").
//! * W stays within [`min_bytes`, receive buffer]; it starts at `initial_bytes`.
//!
//! Requires timestamps (the spec layer refuses ARWND without them).

use serde::{Deserialize, Serialize};

use crate::engine::{Duration, Time};
use crate::tcp::rtt_ratio::RttRatio;

/// How ARWND grows the window.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GrowthMode {
    /// W ← W + λ·W per update (λ times a standard receiver's doubling).
    Window,
    /// W ← W + λ·MSS per update.
    Increment,
}

/// ARWND's parameters (resolved and checked by the spec layer).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArwndConf {
    pub lambda: f64,
    pub gamma_high: f64,
    pub rtt_multiple: f64,
    pub rm_window_ns: u64,
    pub initial_bytes: u64,
    pub min_bytes: u64,
    pub mode: GrowthMode,
}

/// Which receive-window control a receiver runs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "control", rename_all = "lowercase", deny_unknown_fields)]
pub enum RwndConf {
    /// Advertise the buffer less the out-of-order bytes (every stack's default).
    #[default]
    Fixed,
    /// Adaptive receive window from the RTT ratio (Hu et al.).
    Arwnd(ArwndConf),
}

impl RwndConf {
    pub fn is_fixed(&self) -> bool {
        matches!(self, RwndConf::Fixed)
    }
}

/// The runtime state of a receive-window controller.
#[derive(Clone, Debug)]
pub enum RwndControl {
    Fixed,
    Arwnd(Arwnd),
}

impl RwndControl {
    pub fn new(conf: &RwndConf, mss: u64, buffer: u64) -> Self {
        match conf {
            RwndConf::Fixed => RwndControl::Fixed,
            RwndConf::Arwnd(c) => RwndControl::Arwnd(Arwnd::new(c.clone(), mss, buffer)),
        }
    }

    /// An RTT sample measured by the receiver at `now`.
    pub fn on_rtt(&mut self, now: Time, rtt: Duration) {
        if let RwndControl::Arwnd(a) = self {
            a.on_rtt(now, rtt);
        }
    }

    /// The window to advertise, given what the buffer allows.
    pub fn window(&self, buffer_allows: u64) -> u64 {
        match self {
            RwndControl::Fixed => buffer_allows,
            RwndControl::Arwnd(a) => buffer_allows.min(a.window),
        }
    }
}

#[derive(Clone, Debug)]
pub struct Arwnd {
    conf: ArwndConf,
    mss: u64,
    max: u64,
    ratio: RttRatio,
    window: u64,
    next_update: Option<Time>,
    /// Updates that grew, shrank or kept the window.
    pub grows: u64,
    pub shrinks: u64,
}

impl Arwnd {
    fn new(conf: ArwndConf, mss: u64, buffer: u64) -> Self {
        let max = buffer.max(conf.min_bytes);
        Arwnd {
            ratio: RttRatio::new(Duration(conf.rm_window_ns)),
            window: conf.initial_bytes.clamp(conf.min_bytes, max),
            mss,
            max,
            conf,
            next_update: None,
            grows: 0,
            shrinks: 0,
        }
    }

    pub fn window(&self) -> u64 {
        self.window
    }

    fn on_rtt(&mut self, now: Time, rtt: Duration) {
        self.ratio.sample(now, rtt);
        if self.next_update.is_some_and(|t| now < t) {
            return;
        }
        self.next_update = Some(now + rtt);
        let (Some(gamma), Some(rm)) = (self.ratio.gamma(), self.ratio.min_rtt()) else {
            return;
        };
        let c = &self.conf;
        let w = self.window as f64;
        let new = if gamma >= c.gamma_high {
            self.grows += 1;
            match c.mode {
                GrowthMode::Window => w * (1.0 + c.lambda),
                GrowthMode::Increment => w + c.lambda * self.mss as f64,
            }
        } else if rtt.0 as f64 > c.rtt_multiple * rm.0 as f64 {
            self.shrinks += 1;
            w * gamma
        } else {
            w
        };
        let old = self.window;
        self.window = (new.floor() as u64).clamp(c.min_bytes, self.max);
        if self.window != old {
            // A new window shows in the RTT one round trip later: the next
            // update waits for samples taken under it (two R_t from now).
            self.next_update = Some(now + rtt + rtt);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conf(mode: GrowthMode) -> ArwndConf {
        ArwndConf {
            lambda: 2.0,
            gamma_high: 0.8,
            rtt_multiple: 2.0,
            rm_window_ns: 10_000_000_000,
            initial_bytes: 64_000,
            min_bytes: 4_000,
            mode,
        }
    }

    fn ms(x: u64) -> Duration {
        Duration(x * 1_000_000)
    }

    /// A scripted RTT sequence. After a change the next update waits two
    /// R_t (the new window shows in the RTT one round trip later); without
    /// a change it comes one R_t later.
    #[test]
    fn grows_holds_and_shrinks_by_the_rtt_ratio() {
        let mut c = RwndControl::new(&RwndConf::Arwnd(conf(GrowthMode::Window)), 1000, 1_000_000);
        let w = |c: &RwndControl| c.window(u64::MAX);
        assert_eq!(w(&c), 64_000);
        // t = 0: 80 ms, γ = 1 ≥ 0.8: 64 000 × (1 + 2) = 192 000; next update at 160 ms.
        c.on_rtt(Time(0), ms(80));
        assert_eq!(w(&c), 192_000);
        // t = 100 ms is before it: no change.
        c.on_rtt(Time(ms(100).0), ms(80));
        assert_eq!(w(&c), 192_000);
        // t = 160 ms: 90 ms, γ = 80/90 = 0.889 ≥ 0.8: 576 000; next at 340 ms.
        c.on_rtt(Time(ms(160).0), ms(90));
        assert_eq!(w(&c), 576_000);
        // t = 340 ms: 120 ms, γ = 0.667, but 120 ≤ 2 × 80: hold; next at 460 ms.
        c.on_rtt(Time(ms(340).0), ms(120));
        assert_eq!(w(&c), 576_000);
        // t = 460 ms: 200 ms > 160 ms, γ = 0.4: 576 000 × 0.4 = 230 400.
        c.on_rtt(Time(ms(460).0), ms(200));
        assert_eq!(w(&c), 230_400);
        // The buffer caps the window: 1 000 000 B.
        for i in 0..10 {
            c.on_rtt(Time(ms(1000 + 200 * i).0), ms(80));
        }
        assert_eq!(w(&c), 1_000_000);
        // What the buffer allows (less out-of-order bytes) caps it too.
        assert_eq!(c.window(5_000), 5_000);
    }

    #[test]
    fn increment_mode_adds_lambda_segments() {
        let mut c = RwndControl::new(
            &RwndConf::Arwnd(conf(GrowthMode::Increment)),
            1000,
            1_000_000,
        );
        // 64 000 + 2 × 1000 = 66 000.
        c.on_rtt(Time(0), ms(80));
        assert_eq!(c.window(u64::MAX), 66_000);
    }

    #[test]
    fn never_below_the_minimum() {
        let mut c = RwndControl::new(&RwndConf::Arwnd(conf(GrowthMode::Window)), 1000, 1_000_000);
        c.on_rtt(Time(0), ms(10));
        // At 20 ms, R_t = 1000 ms ≫ 2 × 10 ms, γ = 0.01: 192 000 × 0.01 = 1920 → min 4000.
        c.on_rtt(Time(ms(20).0), ms(1000));
        assert_eq!(c.window(u64::MAX), 4_000);
    }
}
