//! HyStart (hybrid slow start): leave slow start before the first loss when
//! ACKs of a round keep arriving as a train for longer than the path's
//! propagation delay, or when the round's RTT rises clearly above the
//! minimum. A shared module: any controller that owns a `delay_min` can use
//! it (CUBIC does).
//!
//! Sources: S. Ha, I. Rhee, "Taming the elephants: new TCP slow start",
//! Computer Networks 55 (2011); Linux `net/ipv4/tcp_cubic.c` (`hystart_update`,
//! `bictcp_hystart_reset`); ns-3 `src/internet/model/tcp-cubic.cc`
//! (`HystartUpdate`, `HystartReset`); restated in docs/congestion-control.md, '`cubic`'.
//!
//! A round starts when the ACK passes `end_seq` (the highest sequence sent at
//! the previous round start). On each RTT sample, in slow start, once cwnd is
//! at least `low_window` (16) segments:
//! * ACK train: an ACK within `ack_delta` (2 ms) of the previous one extends
//!   the train; if the train has lasted longer than a threshold since the
//!   round started, exit;
//! * delay: the round's minimum RTT over its first `min_samples` (8)
//!   samples; if it exceeds `delay_min + thresh`, exit.
//!
//! Exit means `ssthresh = cwnd`. The `on_sample` hook sees the window
//! read-only, so it reports the exit and the caller applies it (CUBIC does so
//! at the next `increase_window`, which the sender calls right after
//! `pkts_acked` on the same ACK).
//!
//! Profiles (the switches of [`HyStartBehaviour`]):
//! * linux: µs clock; train threshold `delay_min/2` (no pacing, so the
//!   kernel's `hystart_ack_delay` term is 0); delay threshold
//!   `clamp(delay_min/8, 4 ms, 16 ms)`; the round minimum keeps updating
//!   after the 8th sample; runs while `cwnd < ssthresh`; the round check is
//!   part of each sample; `found` stops detection until reset on Loss.
//! * ns3: train threshold `delay_min`; delay threshold
//!   `clamp(delay_min, 4 ms, 1000 ms)` (`HyStartDelayMin`/`Max`); the round
//!   minimum freezes after `min_samples`; runs while
//!   `low_window·MSS ≤ cwnd ≤ ssthresh`; the round check is done in slow
//!   start by `IncreaseWindow` ([`HyStart::on_slow_start_ack`]).
//!
//! Parameters (read from the host controller's `ParamSpec`s, see [`PARAMS`]):
//! `hystart` (on/off), `hystart_detect` (1 train, 2 delay, 3 both),
//! `hystart_low_window`, `hystart_min_samples`, `hystart_ack_delta` (ms),
//! `hystart_delay_min` and `hystart_delay_max` (ms, the threshold clamp).

use super::jiffies::{time_usecs, usecs};
use super::{param, ConnInfo, ParamSpec, Params, Profile, ProfileBehaviour, Window};
use crate::engine::{Duration, Time};

/// HyStart's parameters, to be listed in the host controller's PARAMS.
pub const PARAMS: [ParamSpec; 7] = [
    ParamSpec {
        name: "hystart",
        default_ns3: 1.0,
        default_linux: 1.0,
        default_ns2: None,
        min: 0.0,
        max: 1.0,
        doc: "hybrid slow start on (1) or off (0)",
        integer: true,
        at_most: None,
    },
    ParamSpec {
        name: "hystart_detect",
        default_ns3: 3.0,
        default_linux: 3.0,
        default_ns2: None,
        min: 1.0,
        max: 3.0,
        doc: "HyStart detectors: 1 ACK train, 2 delay increase, 3 both",
        integer: true,
        at_most: None,
    },
    ParamSpec {
        name: "hystart_low_window",
        default_ns3: 16.0,
        default_linux: 16.0,
        default_ns2: None,
        min: 0.0,
        max: 1e6,
        doc: "HyStart runs only once cwnd reaches this many segments",
        integer: true,
        at_most: None,
    },
    ParamSpec {
        name: "hystart_min_samples",
        default_ns3: 8.0,
        default_linux: 8.0,
        default_ns2: None,
        min: 1.0,
        max: 255.0,
        doc: "RTT samples per round before the delay detector may fire",
        integer: true,
        at_most: None,
    },
    ParamSpec {
        name: "hystart_ack_delta",
        default_ns3: 2.0,
        default_linux: 2.0,
        default_ns2: None,
        min: 0.0,
        max: 1000.0,
        doc: "largest ACK spacing (ms) that still counts as an ACK train",
        integer: false,
        at_most: None,
    },
    ParamSpec {
        name: "hystart_delay_min",
        default_ns3: 4.0,
        default_linux: 4.0,
        default_ns2: None,
        min: 0.0,
        max: 10000.0,
        doc: "lower clamp (ms) of the delay-increase threshold",
        integer: false,
        at_most: Some("hystart_delay_max"),
    },
    ParamSpec {
        name: "hystart_delay_max",
        default_ns3: 1000.0,
        default_linux: 16.0,
        default_ns2: None,
        min: 0.0,
        max: 10000.0,
        doc: "upper clamp (ms) of the delay-increase threshold (Linux 16 ms, ns-3 1000 ms)",
        integer: false,
        at_most: None,
    },
];

const FOUND_TRAIN: u8 = 1;
const FOUND_DELAY: u8 = 2;

/// Where HyStart follows ns-3 (`tcp-cubic.cc`) or Linux (`tcp_cubic.c`);
/// see the module documentation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HyStartBehaviour {
    /// The round check is part of each sample (Linux `hystart_update`);
    /// ns-3 does it in slow start in `IncreaseWindow`
    /// ([`HyStart::on_slow_start_ack`]).
    pub round_check_in_sample: bool,
    /// The detectors of Linux `hystart_update`: µs clock, train threshold
    /// `delay_min/2`, delay threshold `clamp(delay_min/8, …)`, the round
    /// minimum updating after the `min_samples`th sample, running while
    /// `cwnd < ssthresh`, any detector that fired stopping detection until
    /// reset. ns-3 `HystartUpdate`: train threshold `delay_min`, delay
    /// threshold `clamp(delay_min, …)`, the round minimum frozen after
    /// `min_samples`, running while `low_window·MSS ≤ cwnd ≤ ssthresh`.
    pub kernel_detectors: bool,
}

impl ProfileBehaviour for HyStartBehaviour {
    const NS3: Self = HyStartBehaviour {
        round_check_in_sample: false,
        kernel_detectors: false,
    };
    const LINUX: Self = HyStartBehaviour {
        round_check_in_sample: true,
        kernel_detectors: true,
    };
}

#[derive(Clone, Debug)]
pub struct HyStart {
    b: HyStartBehaviour,
    enabled: bool,
    detect: u8,
    low_window: u64,
    min_samples: u32,
    ack_delta: Duration,
    thresh_min: Duration,
    thresh_max: Duration,
    /// Detectors that fired (bits FOUND_TRAIN, FOUND_DELAY).
    found: u8,
    round_start: Option<Time>,
    last_ack: Option<Time>,
    end_seq: u64,
    curr_rtt: Option<Duration>,
    sample_cnt: u32,
}

impl HyStart {
    /// Build from the host's parameter specs (which must include [`PARAMS`]).
    pub fn new(specs: &[ParamSpec], params: &Params, profile: Profile) -> Self {
        let get = |name| param(specs, params, name, profile);
        let ms = |v: f64| Duration::from_nanos((v * 1e6).round() as u64);
        HyStart {
            b: HyStartBehaviour::of(profile),
            enabled: get("hystart") >= 0.5,
            detect: get("hystart_detect") as u8 & (FOUND_TRAIN | FOUND_DELAY),
            low_window: get("hystart_low_window") as u64,
            min_samples: get("hystart_min_samples") as u32,
            ack_delta: ms(get("hystart_ack_delta")),
            thresh_min: ms(get("hystart_delay_min")),
            thresh_max: ms(get("hystart_delay_max")),
            found: 0,
            round_start: None,
            last_ack: None,
            end_seq: 0,
            curr_rtt: None,
            sample_cnt: 0,
        }
    }

    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// Whether a detector has fired since the last [`HyStart::restart`].
    pub fn found(&self) -> bool {
        self.found != 0
    }

    /// Start a new round now (`bictcp_hystart_reset`, ns-3 `HystartReset`).
    pub fn reset_round(&mut self, info: &ConnInfo) {
        self.round_start = Some(info.now);
        self.last_ack = Some(info.now);
        self.end_seq = info.snd_max;
        self.curr_rtt = None;
        self.sample_cnt = 0;
    }

    /// Forget an earlier exit and start a new round (on Loss).
    pub fn restart(&mut self, info: &ConnInfo) {
        self.found = 0;
        self.reset_round(info);
    }

    /// ns-3 only: in slow start, an ACK past `end_seq` starts a new round
    /// (`IncreaseWindow`). Linux does this inside [`HyStart::on_sample`].
    pub fn on_slow_start_ack(&mut self, info: &ConnInfo) {
        if !self.b.round_check_in_sample && self.enabled && info.snd_una > self.end_seq {
            self.reset_round(info);
        }
    }

    /// Feed one RTT sample (`delay`) with the host's current `delay_min`
    /// (already updated with this sample). Returns true when slow start
    /// should end now (the caller sets ssthresh = cwnd).
    pub fn on_sample(
        &mut self,
        info: &ConnInfo,
        w: &Window,
        delay: Duration,
        delay_min: Duration,
    ) -> bool {
        if !self.enabled {
            return false;
        }
        if self.b.kernel_detectors {
            self.linux_update(info, w, delay, delay_min)
        } else {
            self.ns3_update(info, w, delay, delay_min)
        }
    }

    fn linux_update(
        &mut self,
        info: &ConnInfo,
        w: &Window,
        delay: Duration,
        dmin: Duration,
    ) -> bool {
        if self.found != 0 || !w.in_slow_start() {
            return false;
        }
        if self.b.round_check_in_sample
            && (info.snd_una > self.end_seq || self.round_start.is_none())
        {
            self.reset_round(info);
        }
        if w.cwnd / info.mss < self.low_window {
            return false;
        }
        let now = time_usecs(info.now);
        let dmin_us = usecs(dmin);
        if self.detect & FOUND_TRAIN != 0 {
            let last = self.last_ack.map_or(0, time_usecs);
            if now.saturating_sub(last) <= usecs(self.ack_delta) {
                self.last_ack = Some(info.now);
                let threshold = dmin_us >> 1;
                let start = self.round_start.map_or(0, time_usecs);
                if now.saturating_sub(start) > threshold {
                    self.found |= FOUND_TRAIN;
                }
            }
        }
        if self.detect & FOUND_DELAY != 0 {
            let delay_us = usecs(delay);
            let curr = self.curr_rtt.map_or(u64::MAX, usecs).min(delay_us);
            self.curr_rtt = Some(Duration::from_micros(curr));
            if self.sample_cnt < self.min_samples {
                self.sample_cnt += 1;
            } else {
                let lo = usecs(self.thresh_min);
                let thresh = (dmin_us >> 3).clamp(lo, usecs(self.thresh_max).max(lo));
                if curr > dmin_us + thresh {
                    self.found |= FOUND_DELAY;
                }
            }
        }
        self.found != 0
    }

    fn ns3_update(&mut self, info: &ConnInfo, w: &Window, delay: Duration, dmin: Duration) -> bool {
        if w.cwnd > w.ssthresh || w.cwnd < self.low_window * info.mss {
            return false;
        }
        if self.found & self.detect != 0 {
            return false;
        }
        let now = info.now;
        if let Some(last) = self.last_ack {
            if now - last <= self.ack_delta {
                self.last_ack = Some(now);
                let start = self.round_start.unwrap_or(now);
                if now - start > dmin && self.detect & FOUND_TRAIN != 0 {
                    self.found |= FOUND_TRAIN;
                }
            }
        }
        if self.sample_cnt < self.min_samples {
            self.curr_rtt = Some(self.curr_rtt.map_or(delay, |c| c.min(delay)));
            self.sample_cnt += 1;
        } else {
            let thresh = dmin.clamp(self.thresh_min, self.thresh_max.max(self.thresh_min));
            let curr = self.curr_rtt.unwrap_or(Duration::ZERO);
            if curr > dmin + thresh && self.detect & FOUND_DELAY != 0 {
                self.found |= FOUND_DELAY;
            }
        }
        self.found & self.detect != 0
    }
}

#[cfg(test)]
mod tests {
    use super::super::reno::test_support::{info, window};
    use super::*;

    fn hystart(profile: Profile, detect: f64) -> HyStart {
        let mut p = Params::new();
        p.insert("hystart_detect".into(), detect);
        HyStart::new(&PARAMS, &p, profile)
    }

    fn at(i: &ConnInfo, ms: u64) -> ConnInfo {
        let mut i = *i;
        i.now = Time(ms * 1_000_000);
        i
    }

    const D: fn(u64) -> Duration = Duration::from_millis;

    #[test]
    fn ack_train_exits_after_half_delay_min_on_linux_and_delay_min_on_ns3() {
        // delay_min 10 ms; the round starts at t = 100 ms; ACKs every 1 ms
        // (≤ 2 ms: a train). Linux exits once the train is older than 5 ms
        // (t = 106), ns-3 once it is older than 10 ms (t = 111).
        for (profile, exit_ms) in [(Profile::Linux, 106), (Profile::Ns3, 111)] {
            let mut h = hystart(profile, 1.0);
            let mut i = at(&info(profile), 100);
            i.snd_max = 50_000;
            h.reset_round(&i);
            let w = window(20, u64::MAX);
            let mut fired = None;
            for t in 101..=120 {
                if h.on_sample(&at(&i, t), &w, D(10), D(10)) {
                    fired = Some(t);
                    break;
                }
            }
            assert_eq!(fired, Some(exit_ms), "{profile:?}");
            assert!(h.found());
        }
    }

    #[test]
    fn spaced_acks_are_not_a_train() {
        // ACKs 3 ms apart (> 2 ms) never extend the train.
        let mut h = hystart(Profile::Linux, 1.0);
        let mut i = at(&info(Profile::Linux), 0);
        i.snd_max = 50_000;
        h.reset_round(&i);
        let w = window(20, u64::MAX);
        for k in 1..20 {
            assert!(!h.on_sample(&at(&i, 3 * k), &w, D(10), D(10)));
        }
    }

    #[test]
    fn delay_increase_exits_after_the_minimum_samples() {
        // delay_min 40 ms. Linux threshold clamp(40/8 = 5 ms, 4, 16) = 5 ms:
        // exit once the round minimum exceeds 45 ms. ns-3 threshold
        // clamp(40 ms, 4 ms, 1000 ms) = 40 ms: exit above 80 ms.
        // Samples 10 ms apart (no train). The first 8 samples only fill the
        // round minimum; the 9th checks it.
        let w = window(20, u64::MAX);
        // Linux: 8 samples of 46 ms → minimum 46 > 45 → exit on the 9th.
        let mut h = hystart(Profile::Linux, 2.0);
        let mut i = at(&info(Profile::Linux), 0);
        i.snd_max = 50_000;
        h.reset_round(&i);
        for k in 1..=8 {
            assert!(!h.on_sample(&at(&i, 10 * k), &w, D(46), D(40)));
        }
        assert!(h.on_sample(&at(&i, 90), &w, D(46), D(40)));
        // 45 ms exactly is not above the threshold.
        let mut h = hystart(Profile::Linux, 2.0);
        h.reset_round(&i);
        for k in 1..=12 {
            assert!(!h.on_sample(&at(&i, 10 * k), &w, D(45), D(40)));
        }
        // ns-3: 46 ms is far below 80 ms; 81 ms exits.
        let mut h = hystart(Profile::Ns3, 2.0);
        let mut i = at(&info(Profile::Ns3), 0);
        i.snd_max = 50_000;
        h.reset_round(&i);
        for k in 1..=12 {
            assert!(!h.on_sample(&at(&i, 10 * k), &w, D(46), D(40)));
        }
        let mut h = hystart(Profile::Ns3, 2.0);
        h.reset_round(&i);
        for k in 1..=8 {
            assert!(!h.on_sample(&at(&i, 10 * k), &w, D(81), D(40)));
        }
        assert!(h.on_sample(&at(&i, 90), &w, D(81), D(40)));
    }

    #[test]
    fn ns3_round_minimum_freezes_after_min_samples() {
        // 8 samples of 90 ms fill the minimum; a later 41 ms sample would
        // lower it under Linux, not under ns-3: ns-3 exits (90 > 80), Linux
        // (after 8 × 50 ms, then 41 ms: minimum 41 ≤ 45) does not.
        let w = window(20, u64::MAX);
        let mut h = hystart(Profile::Ns3, 2.0);
        let mut i = at(&info(Profile::Ns3), 0);
        i.snd_max = 50_000;
        h.reset_round(&i);
        for k in 1..=8 {
            h.on_sample(&at(&i, 10 * k), &w, D(90), D(40));
        }
        assert!(h.on_sample(&at(&i, 90), &w, D(41), D(40)));
        let mut h = hystart(Profile::Linux, 2.0);
        let mut i = at(&info(Profile::Linux), 0);
        i.snd_max = 50_000;
        h.reset_round(&i);
        for k in 1..=8 {
            h.on_sample(&at(&i, 10 * k), &w, D(50), D(40));
        }
        assert!(!h.on_sample(&at(&i, 90), &w, D(41), D(40)));
    }

    #[test]
    fn needs_the_low_window_and_slow_start() {
        // cwnd 15 < 16 segments: no detection even with a long train.
        for profile in [Profile::Linux, Profile::Ns3] {
            let mut h = hystart(profile, 3.0);
            let mut i = at(&info(profile), 0);
            i.snd_max = 50_000;
            h.reset_round(&i);
            for t in 1..50 {
                assert!(!h.on_sample(&at(&i, t), &window(15, u64::MAX), D(10), D(10)));
            }
            // Not in slow start (cwnd above ssthresh): nothing either.
            for t in 50..100 {
                assert!(!h.on_sample(&at(&i, t), &window(40, 20), D(10), D(10)));
            }
        }
    }

    #[test]
    fn a_new_round_starts_past_end_seq() {
        // Linux checks in on_sample, ns-3 in on_slow_start_ack.
        let w = window(20, u64::MAX);
        let mut h = hystart(Profile::Linux, 1.0);
        let mut i = at(&info(Profile::Linux), 0);
        i.snd_max = 10_000;
        h.reset_round(&i);
        let mut j = at(&i, 50);
        j.snd_una = 10_001;
        j.snd_max = 30_000;
        // A train cannot have started: the round is new and 0 ms old.
        assert!(!h.on_sample(&j, &w, D(10), D(10)));
        assert_eq!((h.end_seq, h.round_start), (30_000, Some(Time(50_000_000))));
        let mut h = hystart(Profile::Ns3, 1.0);
        h.reset_round(&i);
        h.on_slow_start_ack(&at(&i, 20));
        assert_eq!(h.round_start, Some(Time::ZERO), "ACK not past end_seq");
        h.on_slow_start_ack(&j);
        assert_eq!((h.end_seq, h.round_start), (30_000, Some(Time(50_000_000))));
    }

    #[test]
    fn disabled_never_fires() {
        let mut p = Params::new();
        p.insert("hystart".into(), 0.0);
        let mut h = HyStart::new(&PARAMS, &p, Profile::Linux);
        let i = info(Profile::Linux);
        h.reset_round(&i);
        for t in 1..100 {
            assert!(!h.on_sample(&at(&i, t), &window(40, u64::MAX), D(500), D(10)));
        }
    }
}
