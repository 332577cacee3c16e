//! Where the nodes are and how much power reaches one from another:
//! constant-velocity mobility and three path-loss models with ns-2/ns-3
//! parameters.

use serde::{Deserialize, Serialize};

use crate::engine::{Num, Time};

/// Speed of light, m/s (ns-3's `ConstantSpeedPropagationDelayModel`).
pub const SPEED_OF_LIGHT: f64 = 299_792_458.0;

/// A node moving at constant velocity: position `(x, y)` m at time 0,
/// velocity `(vx, vy)` m/s.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Mobility {
    pub x_m: f64,
    pub y_m: f64,
    #[serde(default)]
    pub vx_mps: f64,
    #[serde(default)]
    pub vy_mps: f64,
}

impl Mobility {
    pub fn position(&self, t: Time) -> (f64, f64) {
        let s = t.as_secs_f64();
        (self.x_m + self.vx_mps * s, self.y_m + self.vy_mps * s)
    }

    /// Distance to `other` at time `t`, m.
    pub fn distance(&self, other: &Mobility, t: Time) -> f64 {
        let (a, b) = (self.position(t), other.position(t));
        (a.0 - b.0).hypot(a.1 - b.1)
    }
}

/// A path-loss model. Antenna gains are 0 dBi (ns-2's `Gt_ = Gr_ = 1`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "model", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Propagation {
    /// Free space: Pr = Pt·λ² / ((4πd)²·L).
    Friis { frequency_hz: f64, system_loss: f64 },
    /// ns-2's `TwoRayGround` (and ns-3's `TwoRayGroundPropagationLossModel`):
    /// Friis up to the crossover distance 4π·ht·hr/λ, beyond it
    /// Pr = Pt·ht²·hr² / (d⁴·L). Both antennas at `height_m`.
    TwoRayGround {
        frequency_hz: f64,
        system_loss: f64,
        height_m: f64,
    },
    /// ns-3's `LogDistancePropagationLossModel`: loss = L0 + 10·n·log10(d/d0)
    /// beyond d0 (L0 below it).
    LogDistance {
        exponent: f64,
        reference_distance_m: f64,
        reference_loss_db: f64,
    },
}

impl Propagation {
    /// ns-2's defaults: two-ray ground at 914 MHz, L = 1, antennas 1.5 m high.
    pub const NS2: Propagation = Propagation::TwoRayGround {
        frequency_hz: 914e6,
        system_loss: 1.0,
        height_m: 1.5,
    };

    /// Received power in dBm at distance `d` m for `tx_dbm` transmitted.
    pub fn rx_power_dbm(&self, tx_dbm: f64, d: f64) -> f64 {
        match *self {
            Propagation::Friis {
                frequency_hz,
                system_loss,
            } => tx_dbm - friis_loss_db(frequency_hz, system_loss, d),
            Propagation::TwoRayGround {
                frequency_hz,
                system_loss,
                height_m,
            } => {
                let lambda = SPEED_OF_LIGHT / frequency_hz;
                let crossover = 4.0 * std::f64::consts::PI * height_m * height_m / lambda;
                if d <= crossover {
                    tx_dbm - friis_loss_db(frequency_hz, system_loss, d)
                } else {
                    let h4 = height_m.powi(4);
                    let gain = h4 / (d.powi(4) * system_loss);
                    tx_dbm + 10.0 * gain.log10()
                }
            }
            Propagation::LogDistance {
                exponent,
                reference_distance_m,
                reference_loss_db,
            } => {
                if d <= reference_distance_m {
                    tx_dbm - reference_loss_db
                } else {
                    tx_dbm
                        - reference_loss_db
                        - 10.0 * exponent * (d / reference_distance_m).log10()
                }
            }
        }
    }

    /// Check the parameters; `Err((field, message))`.
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        let positive = |field: &'static str, v: f64, hi: f64| {
            if v.is_finite() && v > 0.0 && v <= hi {
                Ok(())
            } else {
                Err((field, format!("{} is outside (0, {}]", Num(v), Num(hi))))
            }
        };
        match *self {
            Propagation::Friis {
                frequency_hz,
                system_loss,
            } => {
                positive("frequency_hz", frequency_hz, 1e12)?;
                at_least_one(system_loss)
            }
            Propagation::TwoRayGround {
                frequency_hz,
                system_loss,
                height_m,
            } => {
                positive("frequency_hz", frequency_hz, 1e12)?;
                positive("height_m", height_m, 1e4)?;
                at_least_one(system_loss)
            }
            Propagation::LogDistance {
                exponent,
                reference_distance_m,
                reference_loss_db,
            } => {
                positive("exponent", exponent, 10.0)?;
                positive("reference_distance_m", reference_distance_m, 1e6)?;
                if reference_loss_db.is_finite() && (0.0..=300.0).contains(&reference_loss_db) {
                    Ok(())
                } else {
                    Err((
                        "reference_loss_db",
                        format!("{} is outside [0, 300] dB", Num(reference_loss_db)),
                    ))
                }
            }
        }
    }
}

fn at_least_one(system_loss: f64) -> Result<(), (&'static str, String)> {
    if system_loss.is_finite() && (1.0..=1e6).contains(&system_loss) {
        Ok(())
    } else {
        Err((
            "system_loss",
            format!("{} is outside [1, 1e6]", Num(system_loss)),
        ))
    }
}

/// Free-space loss in dB (distance floored at 1 cm, where the formula would
/// give gain).
fn friis_loss_db(frequency_hz: f64, system_loss: f64, d: f64) -> f64 {
    let lambda = SPEED_OF_LIGHT / frequency_hz;
    let d = d.max(0.01);
    let ratio = lambda / (4.0 * std::f64::consts::PI * d);
    -10.0 * (ratio * ratio / system_loss).log10()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ns-2's Pt_ = 0.28183815 W = 24.5 dBm.
    const PT_DBM: f64 = 24.5;

    #[test]
    fn two_ray_matches_ns2_thresholds() {
        // ns-2: RXThresh_ 3.652e-10 W is the power at 250 m and CSThresh_
        // 1.559e-11 W at 550 m with Pt 0.28183815 W, ht = hr = 1.5 m, L = 1:
        // Pr = Pt·ht²·hr²/d⁴ = 0.28183815·5.0625/250⁴ = 3.6526e-10 W.
        let p = Propagation::NS2;
        let w = |dbm: f64| 10f64.powf(dbm / 10.0) / 1000.0;
        let at250 = w(p.rx_power_dbm(PT_DBM, 250.0));
        assert!((at250 / 3.652e-10 - 1.0).abs() < 2e-3, "{at250}");
        let at550 = w(p.rx_power_dbm(PT_DBM, 550.0));
        assert!((at550 / 1.559e-11 - 1.0).abs() < 2e-3, "{at550}");
        // 200 m: 8.918e-10 W = −60.50 dBm.
        assert!((p.rx_power_dbm(PT_DBM, 200.0) + 60.50).abs() < 0.01);
    }

    #[test]
    fn two_ray_is_friis_below_the_crossover() {
        // Crossover at 914 MHz, 1.5 m: 4π·2.25/0.328 = 86.2 m.
        let p = Propagation::NS2;
        let friis = Propagation::Friis {
            frequency_hz: 914e6,
            system_loss: 1.0,
        };
        assert_eq!(p.rx_power_dbm(0.0, 50.0), friis.rx_power_dbm(0.0, 50.0));
        // Friis at 50 m, λ = 0.32800 m: 20·log10(4π·50/0.328) = 65.65 dB.
        assert!((friis.rx_power_dbm(0.0, 50.0) + 65.65).abs() < 0.01);
    }

    #[test]
    fn log_distance_by_hand() {
        // ns-3 defaults: n = 3, d0 = 1 m, L0 = 46.6777 dB; at 100 m: 46.6777 + 60.
        let p = Propagation::LogDistance {
            exponent: 3.0,
            reference_distance_m: 1.0,
            reference_loss_db: 46.6777,
        };
        assert!((p.rx_power_dbm(20.0, 100.0) - (20.0 - 106.6777)).abs() < 1e-9);
    }

    #[test]
    fn positions_move_with_time() {
        let a = Mobility {
            x_m: 0.0,
            y_m: 0.0,
            vx_mps: 5.0,
            vy_mps: 0.0,
        };
        let b = Mobility {
            x_m: 200.0,
            y_m: 0.0,
            vx_mps: 5.0,
            vy_mps: 0.0,
        };
        assert_eq!(a.position(Time(2_000_000_000)), (10.0, 0.0));
        assert!((a.distance(&b, Time(7_000_000_000)) - 200.0).abs() < 1e-9);
    }
}
