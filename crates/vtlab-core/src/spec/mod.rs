//! Scenarios: what users write (specs, with units and defaults) and what the
//! engine runs (a resolved [`Scenario`], explicit and in base units).
//!
//! A spec is a JSON/TOML object whose `preset` field picks a topology builder
//! in `presets/`: `"custom"` (explicit nodes, links and flows) or a named
//! preset such as `"v2g"`. Each part of a spec (loss, qdisc, tcp, wifi,
//! cellular, session) has its module here, which resolves it and validates
//! the resolved part ([`Validate`]); [`plan`] checks the whole resolved
//! scenario once and builds what the engine runs. Every error names the
//! field path and the allowed values.

pub mod cellular;
pub mod loss;
mod plan;
mod presets;
pub mod qdisc;
mod scenario;
pub mod session;
pub mod tcp;
pub mod units;
pub mod wifi;

use serde::de::DeserializeOwned;
use std::fmt;

pub use loss::{LossKind, LossSpec};
pub use plan::{plan, DEFAULT_HORIZON_NS, DEFAULT_MAX_EVENTS};
pub use presets::{
    FlowGroup, LteCabinSpec, StationSpec, V2gSpec, VanetChainSpec, WiredWirelessSpec,
    DEFAULT_FRAMING_BYTES, DEFAULT_MTU_BYTES, DEFAULT_QUEUE_PACKETS, DEFAULT_TRACE_INTERVAL_NS,
    PRESETS,
};
pub use qdisc::{BqlField, QdiscField, QdiscKind, QdiscSpec};
pub use scenario::{
    FlowConf, LinkConf, Scenario, DEFAULT_MAX_OUTPUT_BYTES, MAX_EVENTS, MAX_STATIONS, MAX_STOP_NS,
    MAX_TIME_NS, OUTPUT_BYTES_RANGE, RATE_RANGE_BPS,
};
pub use session::{SessionConf, SessionSpec, StepConf};
pub use tcp::{merge_tcp, TcpSpec};

/// An invalid scenario: the field path and what is wrong with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecError {
    pub path: String,
    pub message: String,
}

impl From<crate::sim::CaptureError> for SpecError {
    fn from(e: crate::sim::CaptureError) -> Self {
        SpecError::new("pcap", e.0)
    }
}

impl SpecError {
    pub fn new(path: impl Into<String>, message: String) -> Self {
        SpecError {
            path: path.into(),
            message,
        }
    }
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

impl std::error::Error for SpecError {}

/// One part of the resolved scenario's contract: a resolved config type
/// checks its own values against their documented ranges, `path` naming it
/// in errors (`links[0].loss_ab`). Each implementation sits beside the spec
/// that resolves the type; the resolver calls it on what it builds (with the
/// spec's field path), and [`Scenario::validate`] calls every part's, once,
/// for [`plan`].
pub trait Validate {
    fn validate(&self, path: &str) -> Result<(), SpecError>;
}

/// The error for a field set on something it does not belong to: `what`
/// (e.g. "loss model 'burst'") lists `allowed` as its parameters.
pub(crate) fn foreign_field(path: String, what: &str, allowed: &[&str]) -> SpecError {
    let list = if allowed.is_empty() {
        "none".to_string()
    } else {
        allowed.join(", ")
    };
    SpecError::new(
        path,
        format!("not a parameter of {what} (its parameters: {list})"),
    )
}

/// Deserialize `value` as `T`, turning serde's error into a [`SpecError`]
/// whose path is `prefix` plus the path inside `value`. A missing field is
/// named in the path (`links[0].delay: missing`), not only in the message:
/// serde reports it at the table that lacks it.
pub(crate) fn from_value<T: DeserializeOwned>(
    value: serde_json::Value,
    prefix: &str,
) -> Result<T, SpecError> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let inner = e.path().to_string();
        let mut path = match (prefix.is_empty(), inner.as_str()) {
            (_, ".") => prefix.to_string(),
            (true, _) => inner,
            (false, _) => format!("{prefix}.{inner}"),
        };
        let mut message = e.into_inner().to_string();
        if let Some(field) = missing_field(&message) {
            path = if path.is_empty() {
                field.to_string()
            } else {
                format!("{path}.{field}")
            };
            message = "missing (required)".into();
        }
        SpecError::new(path, message)
    })
}

/// The field of serde's "missing field `x`" error (its wording is serde's
/// `Error::missing_field`).
fn missing_field(message: &str) -> Option<&str> {
    message
        .strip_prefix("missing field `")?
        .strip_suffix('`')
        .filter(|f| !f.contains('`'))
}

/// Build the resolved scenario from a spec given as JSON text.
pub fn resolve_json(spec_json: &str) -> Result<Scenario, SpecError> {
    let value: serde_json::Value = serde_json::from_str(spec_json)
        .map_err(|e| SpecError::new("", format!("the scenario is not valid JSON: {e}")))?;
    resolve_value(value)
}

/// Build the resolved scenario from a spec object; a resolved scenario (what
/// `expand` prints, recognised by its `trace_interval_ns`) is taken as it is,
/// validated whole.
pub fn resolve_value(value: serde_json::Value) -> Result<Scenario, SpecError> {
    let serde_json::Value::Object(mut map) = value else {
        return Err(SpecError::new(
            "",
            "a scenario must be a table/object".into(),
        ));
    };
    let preset = match map.remove("preset") {
        None => {
            return Err(SpecError::new(
                "preset",
                format!("missing (allowed: {})", PRESETS.join(", ")),
            ))
        }
        Some(serde_json::Value::String(s)) => s,
        Some(other) => {
            return Err(SpecError::new(
                "preset",
                format!("expected a preset name, found {other}"),
            ))
        }
    };
    if map.contains_key("trace_interval_ns") {
        // The resolved form (what `expand` prints; a spec writes `trace_interval`):
        // taken as it is and checked whole, as `plan` checks every scenario.
        map.insert("preset".into(), serde_json::Value::String(preset));
        let scenario: Scenario = from_value(serde_json::Value::Object(map), "")?;
        scenario.validate()?;
        return Ok(scenario);
    }
    presets::resolve(&preset, serde_json::Value::Object(map))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::LossConf;
    use serde_json::json;

    fn err(v: serde_json::Value) -> String {
        resolve_value(v).unwrap_err().to_string()
    }

    #[test]
    fn preset_is_required_and_checked() {
        assert!(err(json!({})).starts_with(
            "preset: missing (allowed: custom, lte-cabin, station, v2g, vanet-chain, wired-wireless)"
        ));
        assert_eq!(
            err(json!({"preset": "v2x"})),
            "preset: unknown preset 'v2x' (allowed: custom, lte-cabin, station, v2g, vanet-chain, wired-wireless)"
        );
    }

    #[test]
    fn unknown_fields_are_named() {
        let e = err(json!({"preset": "v2g", "plc_rat": "10Mbps"}));
        assert!(e.contains("unknown field `plc_rat`"), "{e}");
        let e = err(json!({"preset": "v2g", "tcp": {"ccc": "newreno"}}));
        assert!(
            e.starts_with("tcp.ccc: unknown field `ccc`, expected one of `profile`, `cc`"),
            "{e}"
        );
    }

    #[test]
    fn an_unknown_profile_lists_the_allowed_ones() {
        let e = err(json!({"preset": "v2g", "tcp": {"profile": "ns1"}}));
        assert!(
            e.starts_with(
                "tcp.profile: unknown variant `ns1`, expected one of `ns3`, `linux`, `ns2`"
            ),
            "{e}"
        );
    }

    #[test]
    fn values_errors_carry_their_path() {
        let e = err(json!({"preset": "v2g", "plc_rate": "0Mbps"}));
        assert!(
            e.starts_with("plc_rate: rate '0Mbps' must be positive"),
            "{e}"
        );
        let e = err(json!({"preset": "v2g", "bytes": "abc"}));
        assert!(e.starts_with("bytes: invalid size 'abc'"), "{e}");
        let e = err(json!({"preset": "v2g", "loss": {"mean_loss": "150%"}}));
        assert!(
            e.starts_with("loss.mean_loss: 1.5 is outside [0, 1)"),
            "{e}"
        );
        let e = err(json!({"preset": "v2g", "tcp": {"cc": "foo"}}));
        assert!(
            e.starts_with("tcp.cc: unknown congestion control 'foo' (allowed: newreno"),
            "{e}"
        );
        let e = err(json!({"preset": "v2g", "tcp": {"cc_params": {"k": 3}}}));
        assert!(
            e.starts_with("tcp.cc_params.k: unknown parameter of 'newreno'"),
            "{e}"
        );
    }

    #[test]
    fn loss_conf_round_trip() {
        let c = LossSpec::burst_mean(0.05).resolve("l").unwrap();
        let back: LossConf = serde_json::from_value(serde_json::to_value(&c).unwrap()).unwrap();
        assert_eq!(back, c);
    }

    #[test]
    fn a_resolved_scenario_is_taken_as_it_is_and_checked_whole() {
        let resolved = resolve_value(json!({"preset": "v2g", "bytes": "200KB"})).unwrap();
        let text = resolved.canonical_json();
        let again = resolve_json(&text).unwrap();
        assert_eq!(again, resolved);
        assert_eq!(again.hash(), resolved.hash());
        // A value out of range is refused as in a spec, naming the field.
        let mut value: serde_json::Value = serde_json::from_str(&text).unwrap();
        value["trace_interval_ns"] = json!(0);
        assert!(err(value.clone()).starts_with("trace_interval: "));
        // A field the resolved form lacks is named.
        value["trace_interval_ns"] = json!(10_000_000);
        value["wan_rate"] = json!("1Mbps");
        assert!(err(value.clone()).starts_with("wan_rate: unknown field"));
        value.as_object_mut().unwrap().remove("wan_rate");
        value["links"][1]["rate_bps"] = json!(0);
        assert!(err(value).starts_with("links[1].rate_bps: 0 is outside"));
    }
}
