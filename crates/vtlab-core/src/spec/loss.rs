//! Loss models as users write them ([`LossSpec`]), resolved into the
//! explicit [`LossConf`] the network layer runs.

use serde::{Deserialize, Serialize};

use super::units::Fraction;
use super::{SpecError, Validate};
use crate::engine::Num;
use crate::net::loss::{burst_mean_loss, burst_start_for_mean_loss};
use crate::net::{LossConf, Sojourn};

/// Loss-model kinds, as named in scenarios.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum LossKind {
    #[default]
    None,
    Bernoulli,
    Burst,
    GilbertElliott,
    Replay,
}

/// A loss model as written by the user. Which fields apply depends on `model`;
/// [`LossSpec::resolve`] rejects fields that do not belong to the chosen model.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LossSpec {
    /// Unset: the default model of the link this spec applies to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<LossKind>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_loss: Option<Fraction>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst_start: Option<Fraction>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst_min: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst_max: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sojourn: Option<Sojourn>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_good: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_bad: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss_good: Option<Fraction>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss_bad: Option<Fraction>,
    /// `replay`: positions of the packets to lose (0 = the first packet).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drops: Option<Vec<u64>>,
}

const DEFAULT_BURST_MIN: u32 = 1;
const DEFAULT_BURST_MAX: u32 = 4;

impl LossSpec {
    /// The burst model of the V2G study with the given mean loss rate.
    pub fn burst_mean(mean_loss: f64) -> Self {
        LossSpec {
            model: Some(LossKind::Burst),
            mean_loss: Some(Fraction(mean_loss)),
            ..Default::default()
        }
    }

    /// Validate with `none` as the default model.
    pub fn resolve(&self, path: &str) -> Result<LossConf, SpecError> {
        self.resolve_or(path, LossKind::None)
    }

    /// Validate against the chosen model (or `default_model` if unset);
    /// `path` prefixes error messages.
    pub fn resolve_or(&self, path: &str, default_model: LossKind) -> Result<LossConf, SpecError> {
        let model = self.model.unwrap_or(default_model);
        let field = |name: &str| format!("{path}.{name}");
        self.check_fields(model, path)?;
        let conf = match model {
            LossKind::None => LossConf::None,
            LossKind::Bernoulli => LossConf::Bernoulli {
                mean_loss: self.mean_loss.map_or(0.0, |f| f.0),
            },
            LossKind::Burst => self.burst(path)?,
            LossKind::GilbertElliott => {
                let sojourn = self.sojourn.unwrap_or_default();
                let mean = |name: &str, v: Option<f64>| -> Result<f64, SpecError> {
                    let x = v.ok_or_else(|| {
                        SpecError::new(field(name), "required for model 'gilbert-elliott'".into())
                    })?;
                    check_sojourn(sojourn, x, &field(name))?;
                    Ok(x)
                };
                LossConf::GilbertElliott {
                    sojourn,
                    mean_good: mean("mean_good", self.mean_good)?,
                    mean_bad: mean("mean_bad", self.mean_bad)?,
                    loss_good: self.loss_good.map_or(0.0, |f| f.0),
                    loss_bad: self.loss_bad.map_or(1.0, |f| f.0),
                }
            }
            LossKind::Replay => LossConf::Replay {
                drops: self.drops.clone().ok_or_else(|| {
                    SpecError::new(field("drops"), "required for model 'replay'".into())
                })?,
            },
        };
        conf.validate(path)?;
        Ok(conf)
    }

    /// Refuse a field that `model` does not take.
    fn check_fields(&self, model: LossKind, path: &str) -> Result<(), SpecError> {
        let set: Vec<&str> = [
            ("mean_loss", self.mean_loss.is_some()),
            ("burst_start", self.burst_start.is_some()),
            ("burst_min", self.burst_min.is_some()),
            ("burst_max", self.burst_max.is_some()),
            ("sojourn", self.sojourn.is_some()),
            ("mean_good", self.mean_good.is_some()),
            ("mean_bad", self.mean_bad.is_some()),
            ("loss_good", self.loss_good.is_some()),
            ("loss_bad", self.loss_bad.is_some()),
            ("drops", self.drops.is_some()),
        ]
        .iter()
        .filter(|(_, present)| *present)
        .map(|(n, _)| *n)
        .collect();
        let allowed: &[&str] = match model {
            LossKind::None => &[],
            LossKind::Bernoulli => &["mean_loss"],
            LossKind::Burst => &["mean_loss", "burst_start", "burst_min", "burst_max"],
            LossKind::GilbertElliott => {
                &["sojourn", "mean_good", "mean_bad", "loss_good", "loss_bad"]
            }
            LossKind::Replay => &["drops"],
        };
        let Some(bad) = set.iter().find(|n| !allowed.contains(n)) else {
            return Ok(());
        };
        // A zero mean loss on the `none` model is harmless (the CLI's --loss 0).
        let zero_loss_on_none = model == LossKind::None
            && *bad == "mean_loss"
            && self.mean_loss.map(|f| f.0) == Some(0.0)
            && set.len() == 1;
        if zero_loss_on_none {
            return Ok(());
        }
        let model_name = serde_json::to_value(model)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        Err(super::foreign_field(
            format!("{path}.{bad}"),
            &format!("loss model '{model_name}'"),
            allowed,
        ))
    }

    /// The burst model: sizes, and the start probability given or solved
    /// from the mean loss.
    fn burst(&self, path: &str) -> Result<LossConf, SpecError> {
        let field = |name: &str| format!("{path}.{name}");
        let burst_min = self.burst_min.unwrap_or(DEFAULT_BURST_MIN);
        let burst_max = self.burst_max.unwrap_or(DEFAULT_BURST_MAX);
        check_burst_sizes(burst_min, burst_max, &field("burst_max"))?;
        let burst_start = match (self.mean_loss, self.burst_start) {
            (Some(_), Some(_)) => {
                return Err(SpecError::new(
                    field("burst_start"),
                    "give either mean_loss or burst_start, not both".to_string(),
                ))
            }
            (None, Some(p)) => p.0,
            (m, None) => {
                let l = check_prob(&field("mean_loss"), m.map_or(0.0, |f| f.0), true)?;
                checked_burst_start(l, burst_min, burst_max, &field("mean_loss"))?
            }
        };
        Ok(LossConf::Burst {
            burst_start,
            burst_min,
            burst_max,
            mean_loss: burst_mean_loss(burst_start, burst_min, burst_max),
        })
    }
}

/// Largest burst size of the burst model.
pub const MAX_BURST: u32 = 10_000;

/// Burst sizes `min..=max` must satisfy max ≥ max(1, min) and max ≤ [`MAX_BURST`].
pub fn check_burst_sizes(burst_min: u32, burst_max: u32, path: &str) -> Result<(), SpecError> {
    if burst_max < burst_min.max(1) || burst_max > MAX_BURST {
        Err(SpecError::new(
            path,
            format!("{burst_max} is outside [max(1, burst_min = {burst_min}), {MAX_BURST}]"),
        ))
    } else {
        Ok(())
    }
}

/// The burst-start probability giving mean loss `l`, with every input checked
/// (the one place these rules live for scenarios and the Python helpers).
pub fn checked_burst_start(
    l: f64,
    burst_min: u32,
    burst_max: u32,
    path: &str,
) -> Result<f64, SpecError> {
    check_burst_sizes(burst_min, burst_max, "burst_max")?;
    let max_l = burst_mean_loss(1.0, burst_min, burst_max);
    if !(0.0..1.0).contains(&l) {
        return Err(SpecError::new(
            path,
            format!("{} is outside [0, 1)", Num(l)),
        ));
    }
    if l >= max_l {
        return Err(SpecError::new(
            path,
            format!(
                "{} is not reachable with burst sizes {burst_min}..{burst_max} \
                 (the mean loss must be below {})",
                Num(l),
                Num(max_l)
            ),
        ));
    }
    Ok(burst_start_for_mean_loss(l, burst_min, burst_max))
}

/// The mean loss rate of burst-start probability `p`, with every input checked.
pub fn checked_mean_loss(p: f64, burst_min: u32, burst_max: u32) -> Result<f64, SpecError> {
    check_burst_sizes(burst_min, burst_max, "burst_max")?;
    if !(0.0..=1.0).contains(&p) {
        return Err(SpecError::new("p", format!("{} is outside [0, 1]", Num(p))));
    }
    Ok(burst_mean_loss(p, burst_min, burst_max))
}

/// Shortest mean Gilbert-Elliott sojourn in time, seconds (1 µs: shorter
/// states are indistinguishable from independent losses at any rate vtlab
/// models, and would make the state machine step once per nanosecond).
pub const MIN_SOJOURN_S: f64 = 1e-6;
/// Longest mean sojourn, in seconds or packets.
pub const MAX_SOJOURN: f64 = 1e9;

fn check_sojourn(sojourn: Sojourn, x: f64, path: &str) -> Result<(), SpecError> {
    let (lo, unit) = match sojourn {
        Sojourn::Time => (MIN_SOJOURN_S, "seconds"),
        Sojourn::Packets => (1.0, "packets"),
    };
    if x.is_finite() && (lo..=MAX_SOJOURN).contains(&x) {
        Ok(())
    } else {
        Err(SpecError::new(
            path,
            format!(
                "{} is not a valid mean sojourn (allowed: [{}, {}] {unit})",
                Num(x),
                Num(lo),
                Num(MAX_SOJOURN)
            ),
        ))
    }
}

/// Most packet positions a `replay` loss model may list.
pub const MAX_REPLAY_DROPS: usize = 10_000_000;

fn check_drops(drops: &[u64], path: &str) -> Result<(), SpecError> {
    if drops.len() > MAX_REPLAY_DROPS {
        return Err(SpecError::new(
            path,
            format!("{} positions; at most {MAX_REPLAY_DROPS}", drops.len()),
        ));
    }
    if let Some(i) = (1..drops.len()).find(|&i| drops[i] <= drops[i - 1]) {
        return Err(SpecError::new(
            format!("{path}[{i}]"),
            format!(
                "{} does not follow {}: positions must be strictly increasing",
                drops[i],
                drops[i - 1]
            ),
        ));
    }
    Ok(())
}

/// A probability in [0, 1] (or [0, 1) when `upper_open`), with the hint
/// that percentages are accepted.
fn check_prob(path: &str, x: f64, upper_open: bool) -> Result<f64, SpecError> {
    let ok = x >= 0.0 && if upper_open { x < 1.0 } else { x <= 1.0 };
    if ok {
        Ok(x)
    } else {
        let range = if upper_open { "[0, 1)" } else { "[0, 1]" };
        Err(SpecError::new(
            path,
            format!("{} is outside {range} (write 0.05 or \"5%\")", Num(x)),
        ))
    }
}

impl Validate for LossConf {
    fn validate(&self, path: &str) -> Result<(), SpecError> {
        let prob = |name: &str, x: f64, upper_open: bool| {
            check_prob(&format!("{path}.{name}"), x, upper_open).map(drop)
        };
        match *self {
            LossConf::None => Ok(()),
            LossConf::Bernoulli { mean_loss } => prob("mean_loss", mean_loss, true),
            LossConf::Burst {
                burst_start,
                burst_min,
                burst_max,
                ..
            } => {
                check_burst_sizes(burst_min, burst_max, &format!("{path}.burst_max"))?;
                prob("burst_start", burst_start, false)
            }
            LossConf::GilbertElliott {
                sojourn,
                mean_good,
                mean_bad,
                loss_good,
                loss_bad,
            } => {
                check_sojourn(sojourn, mean_good, &format!("{path}.mean_good"))?;
                check_sojourn(sojourn, mean_bad, &format!("{path}.mean_bad"))?;
                prob("loss_good", loss_good, false)?;
                prob("loss_bad", loss_bad, false)
            }
            LossConf::Replay { ref drops } => check_drops(drops, &format!("{path}.drops")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replay_positions_are_required_and_strictly_increasing() {
        let spec = |drops: Option<Vec<u64>>| LossSpec {
            model: Some(LossKind::Replay),
            drops,
            ..Default::default()
        };
        assert_eq!(
            spec(Some(vec![2, 5])).resolve("loss").unwrap(),
            LossConf::Replay { drops: vec![2, 5] }
        );
        let e = spec(None).resolve("loss").unwrap_err();
        assert_eq!(e.path, "loss.drops");
        let e = spec(Some(vec![2, 5, 5])).resolve("loss").unwrap_err();
        assert_eq!(e.path, "loss.drops[2]");
        assert!(e.message.contains("strictly increasing"), "{}", e.message);
        let e = LossSpec {
            mean_loss: Some(Fraction(0.1)),
            ..spec(Some(vec![1]))
        }
        .resolve("loss")
        .unwrap_err();
        assert_eq!(e.path, "loss.mean_loss");
    }

    #[test]
    fn spec_errors_name_the_field() {
        let e = LossSpec::burst_mean(1.5).resolve("loss").unwrap_err();
        assert_eq!(e.path, "loss.mean_loss");
        assert!(e.message.contains("outside [0, 1)"));
        let e = LossSpec {
            model: Some(LossKind::Bernoulli),
            burst_min: Some(2),
            ..Default::default()
        }
        .resolve("plc.loss")
        .unwrap_err();
        assert_eq!(e.path, "plc.loss.burst_min");
        assert!(e.message.contains("its parameters: mean_loss"));
        let e = LossSpec {
            model: Some(LossKind::GilbertElliott),
            ..Default::default()
        }
        .resolve("l")
        .unwrap_err();
        assert_eq!(e.path, "l.mean_good");
        // Zero mean loss on the lossless model is accepted (the CLI's --loss 0).
        let none_zero = LossSpec {
            model: Some(LossKind::None),
            mean_loss: Some(Fraction(0.0)),
            ..Default::default()
        };
        assert_eq!(none_zero.resolve("l").unwrap(), LossConf::None);
    }
}
