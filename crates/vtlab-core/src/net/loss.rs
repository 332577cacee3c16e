//! Loss models, applied to each packet as it arrives at the receiving end of
//! a link direction. Every model owns its random stream.
//!
//! * `none`
//! * `bernoulli`: each packet is lost independently with probability `mean_loss`.
//! * `burst`: ns-3's `BurstErrorModel`, reproduced exactly, quirks included.
//!   Every packet draws U(0,1). If U < `burst_start` a new burst begins: its size S
//!   is drawn uniformly from `burst_min..=burst_max`, the counter is set to 1 and
//!   the packet is lost (it counts toward the burst). Otherwise the packet is lost
//!   while the counter is below the current burst size, the counter then advancing.
//!   A burst may therefore restart inside a burst. A drawn size of 0 (only when
//!   `burst_min` is 0) loses nothing and ends the burst in progress, as in ns-3.
//!   Mean loss rate: L = 1 − E[(1 − p)^S] (see [`burst_mean_loss`]); users may give
//!   L as `mean_loss` and the burst-start probability p is solved from it.
//! * `gilbert-elliott`: a two-state Markov chain (Good, Bad) with a loss
//!   probability per state; sojourns are exponential in time or geometric in packets.
//! * `replay`: the packets at the given positions are lost (0 is the first packet
//!   this loss point sees, every fragment counting as one), no others: another
//!   simulator's loss decisions fed to vtlab (paired replay), or a scripted test.
//!
//! Source for `burst`: ns-3 `src/network/utils/error-model.cc`, `BurstErrorModel::DoCorrupt`.

use serde::{Deserialize, Serialize};

use crate::engine::{RngStream, Time};

/// How Gilbert-Elliott state sojourns are measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Sojourn {
    /// Exponentially distributed durations; `mean_good`/`mean_bad` in seconds.
    #[default]
    Time,
    /// Geometrically distributed packet counts; `mean_good`/`mean_bad` in packets.
    Packets,
}

/// A validated loss model with every parameter explicit (the canonical form
/// stored in resolved scenarios and hashed).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "model", rename_all = "kebab-case", deny_unknown_fields)]
pub enum LossConf {
    None,
    Bernoulli {
        mean_loss: f64,
    },
    Burst {
        burst_start: f64,
        burst_min: u32,
        burst_max: u32,
        /// The stationary mean loss rate implied by the three above.
        mean_loss: f64,
    },
    GilbertElliott {
        sojourn: Sojourn,
        mean_good: f64,
        mean_bad: f64,
        loss_good: f64,
        loss_bad: f64,
    },
    /// Positions (from 0, strictly increasing) of the packets to lose.
    Replay {
        drops: Vec<u64>,
    },
}

/// Burst sizes uniform on `min..=max`.
#[derive(Clone, Copy, Debug)]
struct UniformSizes {
    min: u32,
    max: u32,
}

impl UniformSizes {
    fn new(min: u32, max: u32) -> Self {
        UniformSizes { min, max }
    }

    /// Stationary loss rate for burst-start probability `p`.
    fn mean_loss(&self, p: f64) -> f64 {
        burst_mean_loss(p, self.min, self.max)
    }

    /// Solve `mean_loss(p) = l` for p by bisection (the map is increasing).
    fn start_prob_for_mean_loss(&self, l: f64) -> f64 {
        if l <= 0.0 {
            return 0.0;
        }
        let (mut lo, mut hi) = (0.0_f64, 1.0_f64);
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if self.mean_loss(mid) < l {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        0.5 * (lo + hi)
    }
}

/// Stationary mean loss rate of ns-3's burst model with start probability `p`
/// and sizes uniform on `min..=max`.
///
/// A packet is lost iff some packet j ≥ 0 places back started a burst, no
/// burst started since, and that burst's size exceeds j:
/// L = Σ_j p (1−p)^j P(S > j) = Σ_s P(S = s) (1 − (1−p)^s) = 1 − E[(1−p)^S].
/// For sizes 1..4 and small p, L ≈ 2.5 p; p = 0.0204 gives L ≈ 0.0500.
pub fn burst_mean_loss(p: f64, min: u32, max: u32) -> f64 {
    let q = 1.0 - p;
    let n = f64::from(max - min + 1);
    let e_qs: f64 = (min..=max).map(|s| q.powi(s as i32)).sum::<f64>() / n;
    1.0 - e_qs
}

/// Inverse of [`burst_mean_loss`] in p.
pub fn burst_start_for_mean_loss(mean_loss: f64, min: u32, max: u32) -> f64 {
    UniformSizes::new(min, max).start_prob_for_mean_loss(mean_loss)
}

/// The state machine of ns-3's `BurstErrorModel::DoCorrupt`.
#[derive(Clone, Copy, Debug)]
pub struct BurstMachine {
    start: f64,
    counter: u32,
    current: u32,
}

impl BurstMachine {
    pub fn new(start: f64) -> Self {
        BurstMachine {
            start,
            counter: 0,
            current: 0,
        }
    }

    /// One packet: `u` is its U(0,1) draw; `size` draws a burst size and is
    /// called only when a burst starts. Returns whether the packet is lost.
    pub fn on_packet(&mut self, u: f64, size: impl FnOnce() -> u32) -> bool {
        if u < self.start {
            self.current = size();
            if self.current == 0 {
                return false;
            }
            self.counter = 1;
            true
        } else if self.counter < self.current {
            self.counter += 1;
            true
        } else {
            false
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GeState {
    Good,
    Bad,
}

/// A loss model instance with its state and random stream.
#[derive(Clone, Debug)]
pub enum LossModel {
    None,
    Bernoulli {
        p: f64,
        rng: RngStream,
    },
    Burst {
        machine: BurstMachine,
        min: u32,
        max: u32,
        rng: RngStream,
    },
    GilbertElliott {
        conf: GeParams,
        state: GeState,
        /// Time-based sojourn: when the current state ends.
        next_switch: Time,
        initialised: bool,
        rng: RngStream,
    },
    Replay {
        drops: Vec<u64>,
        /// Index into `drops` of the next loss.
        next: usize,
        /// Packets seen so far.
        seen: u64,
    },
}

#[derive(Clone, Copy, Debug)]
pub struct GeParams {
    sojourn: Sojourn,
    mean_good: f64,
    mean_bad: f64,
    loss_good: f64,
    loss_bad: f64,
}

impl LossModel {
    pub fn new(conf: &LossConf, rng: RngStream) -> Self {
        match *conf {
            LossConf::None => LossModel::None,
            LossConf::Replay { ref drops } if drops.is_empty() => LossModel::None,
            LossConf::Replay { ref drops } => LossModel::Replay {
                drops: drops.clone(),
                next: 0,
                seen: 0,
            },
            LossConf::Bernoulli { mean_loss: 0.0 } => LossModel::None,
            LossConf::Bernoulli { mean_loss } => LossModel::Bernoulli { p: mean_loss, rng },
            LossConf::Burst {
                burst_start: 0.0, ..
            } => LossModel::None,
            LossConf::Burst {
                burst_start,
                burst_min,
                burst_max,
                ..
            } => LossModel::Burst {
                machine: BurstMachine::new(burst_start),
                min: burst_min,
                max: burst_max,
                rng,
            },
            LossConf::GilbertElliott {
                sojourn,
                mean_good,
                mean_bad,
                loss_good,
                loss_bad,
            } => LossModel::GilbertElliott {
                conf: GeParams {
                    sojourn,
                    mean_good,
                    mean_bad,
                    loss_good,
                    loss_bad,
                },
                state: GeState::Good,
                next_switch: Time::ZERO,
                initialised: false,
                rng,
            },
        }
    }

    /// Decide the fate of the packet arriving now: `true` means lost.
    pub fn drops(&mut self, now: Time) -> bool {
        match self {
            LossModel::None => false,
            LossModel::Replay { drops, next, seen } => {
                let position = *seen;
                *seen += 1;
                let lost = drops.get(*next) == Some(&position);
                *next += usize::from(lost);
                lost
            }
            LossModel::Bernoulli { p, rng } => rng.uniform() < *p,
            LossModel::Burst {
                machine,
                min,
                max,
                rng,
            } => {
                let u = rng.uniform();
                machine.on_packet(u, || {
                    rng.uniform_int(u64::from(*min), u64::from(*max)) as u32
                })
            }
            LossModel::GilbertElliott {
                conf,
                state,
                next_switch,
                initialised,
                rng,
            } => {
                let mean_of = |s: GeState| match s {
                    GeState::Good => conf.mean_good,
                    GeState::Bad => conf.mean_bad,
                };
                let other = |s: GeState| match s {
                    GeState::Good => GeState::Bad,
                    GeState::Bad => GeState::Good,
                };
                if !*initialised {
                    // Start in the stationary distribution so means are unbiased from t = 0.
                    let p_bad = conf.mean_bad / (conf.mean_good + conf.mean_bad);
                    *state = if rng.uniform() < p_bad {
                        GeState::Bad
                    } else {
                        GeState::Good
                    };
                    if conf.sojourn == Sojourn::Time {
                        // Exponential sojourns are memoryless: the residual is exponential too.
                        *next_switch = now + secs_to_duration(rng.exponential(mean_of(*state)));
                    }
                    *initialised = true;
                }
                match conf.sojourn {
                    Sojourn::Time => {
                        while now >= *next_switch {
                            *state = other(*state);
                            *next_switch += secs_to_duration(rng.exponential(mean_of(*state)));
                        }
                    }
                    Sojourn::Packets => {
                        if rng.uniform() < 1.0 / mean_of(*state) {
                            *state = other(*state);
                        }
                    }
                }
                let p = match state {
                    GeState::Good => conf.loss_good,
                    GeState::Bad => conf.loss_bad,
                };
                p > 0.0 && rng.uniform() < p
            }
        }
    }
}

fn secs_to_duration(s: f64) -> crate::engine::Duration {
    // At least 1 ns so that a run of zero-length sojourns cannot stall the loop.
    crate::engine::Duration(((s * 1e9).round() as u64).max(1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Duration;

    fn model(conf: LossConf, seed: u64) -> LossModel {
        LossModel::new(&conf, RngStream::for_component(seed, "t"))
    }

    /// The V2G study's burst model (sizes 1..=4) with mean loss rate `l`.
    fn burst_mean(l: f64) -> LossConf {
        LossConf::Burst {
            burst_start: burst_start_for_mean_loss(l, 1, 4),
            burst_min: 1,
            burst_max: 4,
            mean_loss: l,
        }
    }

    /// Loss fraction and mean burst (run) length over n packets spaced `gap` apart.
    fn measure(m: &mut LossModel, n: u64, gap: Duration) -> (f64, f64) {
        let (mut lost, mut runs, mut in_run) = (0u64, 0u64, false);
        let mut t = Time::ZERO;
        for _ in 0..n {
            let l = m.drops(t);
            if l {
                lost += 1;
                if !in_run {
                    runs += 1;
                }
            }
            in_run = l;
            t += gap;
        }
        (lost as f64 / n as f64, lost as f64 / runs.max(1) as f64)
    }

    #[test]
    fn burst_conversion_matches_the_issue_figures() {
        let l = burst_mean_loss(0.0204, 1, 4);
        assert!((l - 0.0500).abs() < 2e-4, "{l}");
        // Small p: L ≈ 2.5 p.
        assert!((burst_mean_loss(1e-4, 1, 4) / 1e-4 - 2.5).abs() < 1e-3);
        let p = burst_start_for_mean_loss(0.05, 1, 4);
        assert!((burst_mean_loss(p, 1, 4) - 0.05).abs() < 1e-12);
        assert!((p - 0.0204).abs() < 1e-4, "{p}");
        // Fixed size k: L = 1 − (1−p)^k.
        assert!((burst_mean_loss(0.1, 3, 3) - (1.0 - 0.9f64.powi(3))).abs() < 1e-12);
    }

    #[test]
    fn burst_mean_loss_over_a_million_packets() {
        for target in [0.0025, 0.01, 0.05] {
            let mut m = model(burst_mean(target), 11);
            let (l, _) = measure(&mut m, 1_000_000, Duration(1));
            assert!(
                (l - target).abs() < 0.05 * target + 2e-4,
                "target {target}: {l}"
            );
        }
    }

    #[test]
    fn burst_run_length_is_about_two_and_a_half() {
        // With restarts inside bursts, runs are slightly longer than E[S] = 2.5
        // (an overlapping restart extends the run).
        let mut m = model(burst_mean(0.01), 5);
        let (_, run) = measure(&mut m, 1_000_000, Duration(1));
        assert!((2.4..2.7).contains(&run), "{run}");
    }

    #[test]
    fn ns3_burst_semantics_case_by_case() {
        let mut m = BurstMachine::new(0.1);
        let step = |m: &mut BurstMachine, u: f64, size: u32| m.on_packet(u, || size);
        // A burst of 3 starting at packet 0: packets 0, 1, 2 lost; 3 passes.
        assert!(step(&mut m, 0.05, 3));
        assert!(step(&mut m, 0.5, 9));
        assert!(step(&mut m, 0.5, 9));
        assert!(!step(&mut m, 0.5, 9));
        // Restart inside a burst: size 4 started, after 2 losses a size-1 burst
        // restarts; the run ends right after the restarting packet.
        assert!(step(&mut m, 0.01, 4));
        assert!(step(&mut m, 0.9, 0));
        assert!(step(&mut m, 0.01, 1));
        assert!(!step(&mut m, 0.9, 0));
        // A size-0 draw loses nothing and cancels the burst in progress.
        assert!(step(&mut m, 0.01, 4));
        assert!(!step(&mut m, 0.01, 0));
        assert!(!step(&mut m, 0.9, 0));
        // U equal to the rate is not a burst start (strict <).
        let mut m = BurstMachine::new(0.5);
        assert!(!step(&mut m, 0.5, 2));
        // The size is drawn only when a burst starts.
        let mut m = BurstMachine::new(0.5);
        assert!(!m.on_packet(0.7, || panic!("size drawn without a burst start")));
    }

    #[test]
    fn real_burst_model_follows_the_scripted_machine() {
        // Replay the same stream by hand and compare decision by decision.
        let mut m = LossModel::new(
            &LossConf::Burst {
                burst_start: 0.2,
                burst_min: 1,
                burst_max: 4,
                mean_loss: burst_mean_loss(0.2, 1, 4),
            },
            RngStream::for_component(9, "s"),
        );
        let mut rng = RngStream::for_component(9, "s");
        let (mut counter, mut current) = (0u32, 0u32);
        for _ in 0..10_000 {
            let expected = if rng.uniform() < 0.2 {
                current = rng.uniform_int(1, 4) as u32;
                counter = 1;
                true
            } else if counter < current {
                counter += 1;
                true
            } else {
                false
            };
            assert_eq!(m.drops(Time::ZERO), expected);
        }
    }

    #[test]
    fn bernoulli_mean_and_runs() {
        let spec = LossConf::Bernoulli { mean_loss: 0.02 };
        let (l, run) = measure(&mut model(spec, 3), 1_000_000, Duration(1));
        assert!((l - 0.02).abs() < 0.001, "{l}");
        assert!((run - 1.0 / 0.98).abs() < 0.01, "{run}");
    }

    #[test]
    fn gilbert_elliott_time_sojourns() {
        // Good 1 s without loss, Bad 0.05 s with PER 0.5: L = 0.05/1.05 × 0.5.
        let spec = LossConf::GilbertElliott {
            sojourn: Sojourn::Time,
            mean_good: 1.0,
            mean_bad: 0.05,
            loss_good: 0.0,
            loss_bad: 0.5,
        };
        let (l, _) = measure(&mut model(spec, 4), 2_000_000, Duration::from_micros(500));
        let expected = 0.05 / 1.05 * 0.5;
        assert!((l - expected).abs() < 0.1 * expected, "{l} vs {expected}");
    }

    #[test]
    fn gilbert_elliott_packet_sojourns() {
        // Good 99 packets, Bad 1 packet with certain loss: L = 1/100, runs of ~1.
        let spec = LossConf::GilbertElliott {
            sojourn: Sojourn::Packets,
            mean_good: 99.0,
            mean_bad: 4.0,
            loss_good: 0.0,
            loss_bad: 1.0,
        };
        let (l, run) = measure(&mut model(spec, 4), 1_000_000, Duration(1));
        assert!((l - 4.0 / 103.0).abs() < 0.003, "{l}");
        assert!((run - 4.0).abs() < 0.3, "{run}");
    }

    #[test]
    fn replay_loses_exactly_the_listed_positions() {
        let mut m = model(
            LossConf::Replay {
                drops: vec![0, 3, 4],
            },
            1,
        );
        let got: Vec<bool> = (0..7).map(|_| m.drops(Time::ZERO)).collect();
        assert_eq!(got, [true, false, false, true, true, false, false]);
        let mut none = model(LossConf::Replay { drops: vec![] }, 1);
        assert!((0..100).all(|_| !none.drops(Time::ZERO)));
    }
}
