//! 802.11 media as users write them ([`WifiSpec`] for the radio and MAC,
//! [`MediumSpec`] for a medium of a `custom` scenario), resolved onto
//! explicit [`WifiConf`]s.

use serde::{Deserialize, Serialize};

use super::loss::{LossKind, LossSpec, MAX_SOJOURN};
use super::units::{Bytes, Dur, Fraction, Rate};
use super::{SpecError, Validate};
use crate::engine::Num;
use crate::net::routing::Routing;
use crate::net::wifi::{
    not_a_rate, ErrorDirection, ErrorFrames, ErrorPlacement, MediumConf, Mobility, Propagation,
    Reception, Standard, WifiConf,
};
use crate::net::{LossConf, Sojourn};

/// Mean length of an error burst of the on-off model when only its rate is
/// given: 50 ms (the study does not say; docs/wifi.md).
pub const DEFAULT_ERROR_BURST_NS: u64 = 50_000_000;
/// Longest mean error burst: one day.
pub const MAX_ERROR_BURST_NS: u64 = 86_400_000_000_000;

/// Radio and MAC settings; unset fields keep the defaults of the preset (ns-2's
/// wireless defaults, [`WifiConf::ns2_defaults`]).
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct WifiSpec {
    /// `b` (default), `a` or `g`; sets rates, slot, SIFS and CW unless given.
    pub standard: Option<Standard>,
    /// Data rate (default the standard's lowest: 1 Mbit/s for b, 6 for a/g).
    pub rate: Option<Rate>,
    /// Rate of RTS, CTS and ACK (default the standard's lowest).
    pub control_rate: Option<Rate>,
    pub short_preamble: Option<bool>,
    pub slot: Option<Dur>,
    pub sifs: Option<Dur>,
    pub cw_min: Option<u32>,
    pub cw_max: Option<u32>,
    /// RTS/CTS before every data frame (`true`, default) or never (`false`).
    pub rts: Option<bool>,
    /// Or: RTS/CTS before data frames longer than this many MAC bytes.
    pub rts_threshold: Option<Bytes>,
    pub short_retry_limit: Option<u32>,
    pub long_retry_limit: Option<u32>,
    /// One retry counter per frame instead (ns-3.44's `FrameRetryLimit`).
    pub frame_retry_limit: Option<u32>,
    /// Reset an RTS-set NAV when no reception follows (ns-3; default false, ns-2).
    pub rts_nav_reset: Option<bool>,
    /// Interface queue, packets (default 50).
    pub ifq: Option<u32>,
    /// Drop a packet queued longer than this (ns-3's `WifiMacQueue::MaxDelay`,
    /// 500 ms there); default: no limit, as ns-2.
    pub queue_lifetime: Option<Dur>,
    pub mac_overhead: Option<Bytes>,
    pub mtu: Option<Bytes>,
    pub tx_power_dbm: Option<f64>,
    pub rx_sensitivity_dbm: Option<f64>,
    pub cca_threshold_dbm: Option<f64>,
    /// Signals weaker than this are ignored entirely (default: the CCA threshold).
    pub discard_below_dbm: Option<f64>,
    pub noise_figure_db: Option<f64>,
    pub reception: Option<ReceptionSpec>,
    pub propagation: Option<PropagationSpec>,
    /// The two-state on-off error model on every node's incoming and outgoing
    /// traffic: the share of time in the lossy state (default 0)...
    pub error_rate: Option<Fraction>,
    /// ... and the mean length of a lossy period (default 50 ms).
    pub error_burst: Option<Dur>,
    /// Or any loss model (replaces `error_rate`/`error_burst`).
    pub error: Option<LossSpec>,
    /// `mac` (default: the MAC retries a hit frame) or `ip`.
    pub error_placement: Option<ErrorPlacement>,
    /// `all` (default) or `data`.
    pub error_frames: Option<ErrorFrames>,
    /// `both` (default) or `incoming`: which of a node's error models act.
    pub error_direction: Option<ErrorDirection>,
}

/// A rate in the whole kbit/s the MAC works in; `path` names it in the
/// error for one that is not (no 802.11 rate is).
fn kbps(path: String, rate: Option<Rate>, standard: Standard) -> Result<Option<u32>, SpecError> {
    let Some(Rate(bps)) = rate else {
        return Ok(None);
    };
    match u32::try_from(bps / 1_000) {
        Ok(k) if bps % 1_000 == 0 => Ok(Some(k)),
        _ => Err(SpecError::new(
            path,
            format!("{bps} bit/s is {}", not_a_rate(standard)),
        )),
    }
}

/// The spec's name of a resolved field that the spec writes differently
/// (`data_rate_kbps` is `rate`): errors name what the user wrote.
fn spec_field(resolved: &str) -> &str {
    match resolved {
        "data_rate_kbps" => "rate",
        "control_rate_kbps" => "control_rate",
        "slot_ns" => "slot",
        "sifs_ns" => "sifs",
        "rts_threshold_bytes" => "rts_threshold",
        "ifq_packets" => "ifq",
        "queue_lifetime_ns" => "queue_lifetime",
        "mac_overhead_bytes" => "mac_overhead",
        "mtu_bytes" => "mtu",
        other => other,
    }
}

impl WifiSpec {
    /// Resolve onto `base`; `path` prefixes error paths.
    pub fn resolve(&self, base: WifiConf, path: &str) -> Result<WifiConf, SpecError> {
        let mut w = base;
        if let Some(standard) = self.standard {
            set_standard(&mut w, standard);
        }
        self.apply_mac(&mut w, path)?;
        self.apply_radio(&mut w, path)?;
        w.error = self.error_model(path)?;
        if let Some(p) = self.error_placement {
            w.error_placement = p;
        }
        if let Some(f) = self.error_frames {
            w.error_frames = f;
        }
        if let Some(d) = self.error_direction {
            w.error_direction = d;
        }
        w.check()
            .map_err(|(f, m)| SpecError::new(format!("{path}.{}", spec_field(&f)), m))?;
        Ok(w)
    }

    /// Rates, timing, RTS/CTS, retries and queue.
    fn apply_mac(&self, w: &mut WifiConf, path: &str) -> Result<(), SpecError> {
        let field = |f: &str| format!("{path}.{f}");
        let standard = w.standard;
        set(
            &mut w.data_rate_kbps,
            kbps(field("rate"), self.rate, standard)?,
        );
        let control = kbps(field("control_rate"), self.control_rate, standard)?;
        set(&mut w.control_rate_kbps, control);
        set(&mut w.short_preamble, self.short_preamble);
        set(&mut w.slot_ns, self.slot.map(|d| d.0));
        set(&mut w.sifs_ns, self.sifs.map(|d| d.0));
        set(&mut w.cw_min, self.cw_min);
        set(&mut w.cw_max, self.cw_max);
        match (self.rts, self.rts_threshold) {
            (Some(_), Some(_)) => {
                return Err(SpecError::new(
                    field("rts_threshold"),
                    "give either rts (on/off) or rts_threshold, not both".into(),
                ))
            }
            (Some(true), None) => w.rts_threshold_bytes = 0,
            (Some(false), None) => w.rts_threshold_bytes = 65_535,
            (None, Some(b)) => {
                w.rts_threshold_bytes = u32::try_from(b.0).map_err(|_| {
                    SpecError::new(
                        field("rts_threshold"),
                        format!("{} is outside [0, 65535] bytes", b.0),
                    )
                })?
            }
            (None, None) => {}
        }
        set(&mut w.short_retry_limit, self.short_retry_limit);
        set(&mut w.long_retry_limit, self.long_retry_limit);
        if let Some(n) = self.frame_retry_limit {
            w.frame_retry_limit = Some(n);
        }
        set(&mut w.rts_nav_reset, self.rts_nav_reset);
        set(&mut w.ifq_packets, self.ifq);
        if let Some(d) = self.queue_lifetime {
            w.queue_lifetime_ns = Some(d.0);
        }
        let small = |name: &str, b: Bytes| {
            u32::try_from(b.0)
                .map_err(|_| SpecError::new(field(name), format!("{} bytes is too large", b.0)))
        };
        if let Some(b) = self.mac_overhead {
            w.mac_overhead_bytes = small("mac_overhead", b)?;
        }
        if let Some(b) = self.mtu {
            w.mtu_bytes = small("mtu", b)?;
        }
        Ok(())
    }

    /// Powers, thresholds, reception and propagation.
    fn apply_radio(&self, w: &mut WifiConf, path: &str) -> Result<(), SpecError> {
        set(&mut w.tx_power_dbm, self.tx_power_dbm);
        set(&mut w.rx_sensitivity_dbm, self.rx_sensitivity_dbm);
        set(&mut w.cca_threshold_dbm, self.cca_threshold_dbm);
        if let Some(v) = self.discard_below_dbm {
            w.discard_below_dbm = Some(v);
        }
        set(&mut w.noise_figure_db, self.noise_figure_db);
        if let Some(r) = &self.reception {
            w.reception = r.resolve(&format!("{path}.reception"))?;
        }
        if let Some(p) = &self.propagation {
            w.propagation = p.resolve(&format!("{path}.propagation"))?;
        }
        Ok(())
    }

    /// The on-off model: Gilbert–Elliott in time, no loss in the good state,
    /// every frame lost in the bad one, bad a share `error_rate` of the time.
    fn error_model(&self, path: &str) -> Result<LossConf, SpecError> {
        let field = |f: &str| format!("{path}.{f}");
        if let Some(spec) = &self.error {
            if self.error_rate.is_some() || self.error_burst.is_some() {
                return Err(SpecError::new(
                    field("error"),
                    "give either error or error_rate/error_burst, not both".into(),
                ));
            }
            return spec.resolve(&field("error"));
        }
        let rate = self.error_rate.map_or(0.0, |f| f.0);
        if !(0.0..1.0).contains(&rate) {
            return Err(SpecError::new(
                field("error_rate"),
                format!("{} is outside [0, 1)", Num(rate)),
            ));
        }
        if rate == 0.0 {
            return Ok(LossConf::None);
        }
        let burst = self.error_burst.map_or(DEFAULT_ERROR_BURST_NS, |d| d.0);
        // Sojourns of at least 1 µs on average (the loss model's own bound).
        if !(1_000..=MAX_ERROR_BURST_NS).contains(&burst) {
            return Err(SpecError::new(
                field("error_burst"),
                format!("{burst} ns is outside [1 µs, 1 day]"),
            ));
        }
        let bad = burst as f64 * 1e-9;
        let good = bad * (1.0 - rate) / rate;
        if !(1e-6..=MAX_SOJOURN).contains(&good) {
            let (side, change) = if good < 1e-6 {
                ("shorter than 1 µs", "lower error_rate or raise error_burst")
            } else {
                ("longer than 10⁹ s", "raise error_rate or lower error_burst")
            };
            return Err(SpecError::new(
                field("error_rate"),
                format!(
                    "{} leaves lossless periods {side} with error_burst {burst} ns; {change}",
                    Num(rate)
                ),
            ));
        }
        LossSpec {
            model: Some(LossKind::GilbertElliott),
            sojourn: Some(Sojourn::Time),
            mean_bad: Some(bad),
            mean_good: Some(good),
            loss_good: Some(Fraction(0.0)),
            loss_bad: Some(Fraction(1.0)),
            ..Default::default()
        }
        .resolve(&field("error_rate"))
    }
}

/// Reception models, as named in scenarios.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReceptionKind {
    Threshold,
    DsssBer,
}

/// A reception model as written: `model` and its parameter (`sinr_db` for
/// `threshold`, `preamble_snr_db` for `dsss-ber`). A plain table rather than
/// a tagged enum, so that an error names the parameter.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ReceptionSpec {
    pub model: ReceptionKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sinr_db: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preamble_snr_db: Option<f64>,
}

impl ReceptionSpec {
    fn resolve(&self, path: &str) -> Result<Reception, SpecError> {
        let given = [
            ("sinr_db", self.sinr_db),
            ("preamble_snr_db", self.preamble_snr_db),
        ];
        Ok(match self.model {
            ReceptionKind::Threshold => {
                let [sinr_db] = model_params(path, "threshold", &given, ["sinr_db"])?;
                Reception::Threshold { sinr_db }
            }
            ReceptionKind::DsssBer => {
                let [preamble_snr_db] =
                    model_params(path, "dsss-ber", &given, ["preamble_snr_db"])?;
                Reception::DsssBer { preamble_snr_db }
            }
        })
    }
}

/// Path-loss models, as named in scenarios.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PropagationKind {
    Friis,
    TwoRayGround,
    LogDistance,
}

/// A path-loss model as written: `model` and its parameters (all required:
/// friis `frequency_hz`, `system_loss`; two-ray-ground those and
/// `height_m`; log-distance `exponent`, `reference_distance_m`,
/// `reference_loss_db`).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PropagationSpec {
    pub model: PropagationKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frequency_hz: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_loss: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub height_m: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exponent: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_distance_m: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_loss_db: Option<f64>,
}

impl PropagationSpec {
    fn resolve(&self, path: &str) -> Result<Propagation, SpecError> {
        let given = [
            ("frequency_hz", self.frequency_hz),
            ("system_loss", self.system_loss),
            ("height_m", self.height_m),
            ("exponent", self.exponent),
            ("reference_distance_m", self.reference_distance_m),
            ("reference_loss_db", self.reference_loss_db),
        ];
        Ok(match self.model {
            PropagationKind::Friis => {
                let wanted = ["frequency_hz", "system_loss"];
                let [frequency_hz, system_loss] = model_params(path, "friis", &given, wanted)?;
                Propagation::Friis {
                    frequency_hz,
                    system_loss,
                }
            }
            PropagationKind::TwoRayGround => {
                let wanted = ["frequency_hz", "system_loss", "height_m"];
                let [frequency_hz, system_loss, height_m] =
                    model_params(path, "two-ray-ground", &given, wanted)?;
                Propagation::TwoRayGround {
                    frequency_hz,
                    system_loss,
                    height_m,
                }
            }
            PropagationKind::LogDistance => {
                let wanted = ["exponent", "reference_distance_m", "reference_loss_db"];
                let [exponent, reference_distance_m, reference_loss_db] =
                    model_params(path, "log-distance", &given, wanted)?;
                Propagation::LogDistance {
                    exponent,
                    reference_distance_m,
                    reference_loss_db,
                }
            }
        })
    }
}

/// The parameters `wanted` of model `model` from those `given`: each one
/// required, any other refused.
fn model_params<const N: usize>(
    path: &str,
    model: &str,
    given: &[(&str, Option<f64>)],
    wanted: [&str; N],
) -> Result<[f64; N], SpecError> {
    if let Some((bad, _)) = given
        .iter()
        .find(|(name, v)| v.is_some() && !wanted.contains(name))
    {
        return Err(super::foreign_field(
            format!("{path}.{bad}"),
            &format!("model '{model}'"),
            &wanted,
        ));
    }
    let mut out = [0.0; N];
    for (slot, name) in out.iter_mut().zip(wanted) {
        *slot = given
            .iter()
            .find(|(n, _)| *n == name)
            .and_then(|(_, v)| *v)
            .ok_or_else(|| {
                SpecError::new(
                    format!("{path}.{name}"),
                    format!("missing (required for model '{model}')"),
                )
            })?;
    }
    Ok(out)
}

/// Overwrite `slot` with `value` when it is given.
fn set<T>(slot: &mut T, value: Option<T>) {
    if let Some(v) = value {
        *slot = v;
    }
}

/// A standard's timing, contention window and basic rates.
fn set_standard(w: &mut WifiConf, standard: Standard) {
    let (slot, sifs, cw_min, cw_max) = standard.timing();
    w.standard = standard;
    w.slot_ns = slot.0;
    w.sifs_ns = sifs.0;
    w.cw_min = cw_min;
    w.cw_max = cw_max;
    w.data_rate_kbps = standard.basic_rate_kbps();
    w.control_rate_kbps = standard.basic_rate_kbps();
    // ns-3's OFDM PHYs: the NIST/YANS models are not reproduced; the
    // threshold rule applies.
    if standard != Standard::B && matches!(w.reception, Reception::DsssBer { .. }) {
        w.reception = Reception::Threshold { sinr_db: 10.0 };
    }
}

impl Validate for WifiConf {
    /// The radio and MAC ranges (checked beside the model,
    /// [`WifiConf::check`]) and the error model.
    fn validate(&self, path: &str) -> Result<(), SpecError> {
        self.check()
            .map_err(|(f, m)| SpecError::new(format!("{path}.{f}"), m))?;
        self.error.validate(&format!("{path}.error"))
    }
}

impl Validate for MediumConf {
    /// The radio, and every station's position and velocity (node names and
    /// counts are [`super::Scenario::validate`]'s).
    fn validate(&self, path: &str) -> Result<(), SpecError> {
        self.wifi.validate(&format!("{path}.wifi"))?;
        for (k, mob) in self.mobility.iter().enumerate() {
            let values = [
                ("x_m", mob.x_m),
                ("y_m", mob.y_m),
                ("vx_mps", mob.vx_mps),
                ("vy_mps", mob.vy_mps),
            ];
            if let Some((name, v)) = values.iter().find(|(_, v)| !v.is_finite() || v.abs() > 1e7) {
                return Err(SpecError::new(
                    format!("{path}.mobility[{k}].{name}"),
                    format!(
                        "{} is outside [-1e7, 1e7]: positions (m) and velocities (m/s) must be \
                         finite and within ±1e7",
                        Num(*v)
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// A medium of a `custom` scenario.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MediumSpec {
    pub name: Option<String>,
    pub nodes: Vec<String>,
    /// One entry per node: `{x_m, y_m, vx_mps, vy_mps}`.
    pub mobility: Vec<Mobility>,
    pub wifi: Option<WifiSpec>,
    /// `static` (default) or `aodv`.
    pub routing: Option<String>,
}

/// A routing name as a scenario gives it; `path` names the field in the error.
pub fn routing(path: &str, name: Option<&str>) -> Result<Routing, SpecError> {
    name.map_or(Ok(Routing::Static), |n| {
        Routing::parse(n).map_err(|m| SpecError::new(path, m))
    })
}

impl MediumSpec {
    pub fn resolve(&self, i: usize) -> Result<MediumConf, SpecError> {
        let path = format!("media[{i}].wifi");
        let routing = routing(&format!("media[{i}].routing"), self.routing.as_deref())?;
        Ok(MediumConf {
            routing,
            name: self.name.clone().unwrap_or_else(|| format!("wifi{i}")),
            nodes: self.nodes.clone(),
            mobility: self.mobility.clone(),
            wifi: self
                .wifi
                .clone()
                .unwrap_or_default()
                .resolve(WifiConf::ns2_defaults(), &path)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::spec::{plan, resolve_value};
    use serde_json::json;

    /// Three cars on a street medium, a gateway wired to a server.
    fn street(mobility: serde_json::Value) -> serde_json::Value {
        json!({
            "preset": "custom",
            "nodes": ["a", "b", "gw", "server"],
            "media": [{"name": "street", "nodes": ["a", "b", "gw"], "mobility": mobility,
                       "wifi": {"standard": "g", "rate": "12Mbps", "rts": false}}],
            "links": [{"a": "gw", "b": "server", "rate": "100Mbps", "delay": "10ms"}],
            "flows": [{"src": "a", "dst": "server", "bytes": "1MB"}],
        })
    }

    #[test]
    fn a_custom_medium_routes_over_stations_in_range_then_links() {
        // a at 0 m, b at 200 m, gw at 400 m: a reaches gw through b (400 m is
        // beyond the 250 m receive range), then the wired link.
        let s = resolve_value(street(json!([{"x_m": 0, "y_m": 0}, {"x_m": 200, "y_m": 0},
            {"x_m": 400, "y_m": 0}])))
        .unwrap();
        let w = &s.media[0].wifi;
        assert_eq!(
            (w.data_rate_kbps, w.control_rate_kbps, w.slot_ns),
            (12_000, 6_000, 20_000)
        );
        let p = plan(&s).unwrap();
        // air hops after the one wired link's two directions: a<->b, b<->gw
        let hops: Vec<(u32, u32)> = p.air.iter().map(|h| (h.from, h.to)).collect();
        assert_eq!(hops, [(0, 1), (1, 0), (1, 2), (2, 1)]);
        let route = crate::sim::plan::path(
            &p.routes,
            &p.dirs,
            crate::net::NodeId(0),
            crate::net::NodeId(3),
        );
        assert_eq!(route.unwrap(), [2, 4, 0]);
    }

    #[test]
    fn custom_media_errors_name_the_field() {
        let e = resolve_value(street(json!([{"x_m": 0, "y_m": 0}]))).unwrap_err();
        assert_eq!(
            e.to_string(),
            "media[0].mobility: needs one entry per node (3 nodes, 1 entries)"
        );
        // gw 1 km away: no path for the flow
        let s = resolve_value(street(json!([{"x_m": 0, "y_m": 0}, {"x_m": 200, "y_m": 0},
            {"x_m": 1400, "y_m": 0}])))
        .unwrap();
        let e = plan(&s).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.contains("no path"), "{e}");
        let mut v =
            street(json!([{"x_m": 0, "y_m": 0}, {"x_m": 1, "y_m": 0}, {"x_m": 2, "y_m": 0}]));
        v["media"][0]["wifi"]["cw_max"] = json!(3);
        let e = resolve_value(v).unwrap_err().to_string();
        assert_eq!(e, "media[0].wifi.cw_max: 3 is outside [15, 65535]");
        let mut v =
            street(json!([{"x_m": 0, "y_m": 0}, {"x_m": 1, "y_m": 0}, {"x_m": 1e300, "y_m": 0}]));
        v["media"][0]["wifi"]["rts"] = json!(true);
        let s = resolve_value(v).unwrap();
        let e = plan(&s).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(
            e.starts_with("media[0].mobility[2].x_m: 1e300 is outside [-1e7, 1e7]"),
            "{e}"
        );
    }

    #[test]
    fn routing_is_static_or_aodv_and_aodv_routes_across_the_medium() {
        let far = json!([{"x_m": 0, "y_m": 0}, {"x_m": 200, "y_m": 0}, {"x_m": 400, "y_m": 0}]);
        let mut v = street(far.clone());
        v["media"][0]["routing"] = json!("ospf");
        let e = resolve_value(v).unwrap_err().to_string();
        assert_eq!(
            e,
            "media[0].routing: unknown routing \"ospf\" (allowed: static, aodv)"
        );
        // Under AODV the plan hands a packet from a to the gateway directly
        // (the protocol finds b between them): one hop over the medium.
        let mut v = street(far);
        v["media"][0]["routing"] = json!("aodv");
        let p = plan(&resolve_value(v).unwrap()).unwrap();
        let route = crate::sim::plan::path(
            &p.routes,
            &p.dirs,
            crate::net::NodeId(0),
            crate::net::NodeId(3),
        );
        let hops: Vec<_> = route
            .unwrap()
            .iter()
            .map(|&d| p.air_hop(d).is_some())
            .collect();
        assert_eq!(hops, [true, false]);
    }
}
