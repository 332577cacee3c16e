//! Queue disciplines as users write them ([`QdiscSpec`]), resolved into the
//! explicit [`QdiscConf`] a link direction runs in front of its device queue.
//!
//! A scenario names one either by kind alone (`qdisc = "fq_codel"`) or as a
//! table of ns-3 attributes (`qdisc = {kind = "red", min_th = 5, max_th = 15}`);
//! unset attributes take ns-3.44's defaults, except FQ-CoDel's quantum, which
//! ns-3 takes from the device MTU (the link's `mtu` here). When a preset
//! leaves `qdisc` unset, the TCP profile decides ([`default_for_profile`]).

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};

use super::units::{Bytes, Dur, Fraction, Rate};
use super::SpecError;
use crate::engine::Duration;
use crate::net::qdisc::dql::{DqlParams, DQL_MAX_LIMIT};
use crate::net::qdisc::{
    CoDelParams, FqCoDelParams, Limit, PfifoFastParams, PieParams, QdiscConf, RedParams,
};
use crate::tcp::cc::Profile;

/// Queue-discipline kinds, as named in scenarios.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum QdiscKind {
    /// No queue disc: packets go straight to the drop-tail device queue.
    None,
    PfifoFast,
    Codel,
    FqCodel,
    Red,
    Pie,
}

impl QdiscKind {
    pub const NAMES: &'static str = "none, pfifo_fast, fq_codel, codel, red, pie";

    fn name(self) -> &'static str {
        match self {
            QdiscKind::None => "none",
            QdiscKind::PfifoFast => "pfifo_fast",
            QdiscKind::Codel => "codel",
            QdiscKind::FqCodel => "fq_codel",
            QdiscKind::Red => "red",
            QdiscKind::Pie => "pie",
        }
    }
}

/// Most packets a queue disc may be configured to hold (a guard against
/// configurations that would exhaust memory; 1e6 full-size packets is 1.5 GB).
pub const MAX_QDISC_PACKETS: u32 = 1_000_000;

/// A queue disc as written by the user: a kind and the attributes that
/// belong to it ([`QdiscSpec::resolve`] rejects the others).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QdiscSpec {
    pub kind: QdiscKind,
    /// `MaxSize` in packets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
    /// `MaxSize` in bytes (codel, red, pie).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit_bytes: Option<Bytes>,
    // CoDel and FQ-CoDel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<Dur>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<Dur>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_bytes: Option<Bytes>,
    // FQ-CoDel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flows: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quantum: Option<Bytes>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drop_batch: Option<u32>,
    // RED and PIE.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_pkt_size: Option<Bytes>,
    // RED.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_th: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_th: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub q_w: Option<f64>,
    /// maxP, ns-3's 1/`LInterm`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_p: Option<Fraction>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gentle: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link_bandwidth: Option<Rate>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link_delay: Option<Dur>,
    /// Adaptive RED: automatic thresholds and weight, adapted maxP.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ared: Option<bool>,
    /// Adapt maxP (`AdaptMaxP`) with the thresholds given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adapt_max_p: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bottom: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alpha: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub beta: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rtt: Option<Dur>,
    // PIE.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub a: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub b: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub t_update: Option<Dur>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay_ref: Option<Dur>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_burst: Option<Dur>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dq_threshold: Option<Bytes>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dq_rate_estimator: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cap_drop_adjustment: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub derandomization: Option<bool>,
}

/// What scenarios accept: a kind name or a table.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(transparent)]
pub struct QdiscField(pub QdiscSpec);

impl<'de> Deserialize<'de> for QdiscField {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = QdiscSpec;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                write!(
                    f,
                    "a queue disc name ({}) or a table with `kind`",
                    QdiscKind::NAMES
                )
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<QdiscSpec, E> {
                let kind = QdiscKind::deserialize(de::value::StrDeserializer::<E>::new(s))
                    .map_err(|_| {
                        E::custom(format!(
                            "unknown queue disc '{s}' (allowed: {})",
                            QdiscKind::NAMES
                        ))
                    })?;
                Ok(QdiscSpec::of(kind))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<QdiscSpec, A::Error> {
                QdiscSpec::deserialize(de::value::MapAccessDeserializer::new(map))
            }
        }
        d.deserialize_any(V).map(QdiscField)
    }
}

impl QdiscSpec {
    /// A kind with every attribute at its default.
    pub fn of(kind: QdiscKind) -> Self {
        QdiscSpec {
            kind,
            limit: None,
            limit_bytes: None,
            target: None,
            interval: None,
            min_bytes: None,
            flows: None,
            quantum: None,
            drop_batch: None,
            mean_pkt_size: None,
            min_th: None,
            max_th: None,
            q_w: None,
            max_p: None,
            gentle: None,
            wait: None,
            link_bandwidth: None,
            link_delay: None,
            ared: None,
            adapt_max_p: None,
            top: None,
            bottom: None,
            alpha: None,
            beta: None,
            rtt: None,
            a: None,
            b: None,
            t_update: None,
            delay_ref: None,
            max_burst: None,
            dq_threshold: None,
            dq_rate_estimator: None,
            cap_drop_adjustment: None,
            derandomization: None,
        }
    }

    fn set_fields(&self) -> Vec<&'static str> {
        [
            ("limit", self.limit.is_some()),
            ("limit_bytes", self.limit_bytes.is_some()),
            ("target", self.target.is_some()),
            ("interval", self.interval.is_some()),
            ("min_bytes", self.min_bytes.is_some()),
            ("flows", self.flows.is_some()),
            ("quantum", self.quantum.is_some()),
            ("drop_batch", self.drop_batch.is_some()),
            ("mean_pkt_size", self.mean_pkt_size.is_some()),
            ("min_th", self.min_th.is_some()),
            ("max_th", self.max_th.is_some()),
            ("q_w", self.q_w.is_some()),
            ("max_p", self.max_p.is_some()),
            ("gentle", self.gentle.is_some()),
            ("wait", self.wait.is_some()),
            ("link_bandwidth", self.link_bandwidth.is_some()),
            ("link_delay", self.link_delay.is_some()),
            ("ared", self.ared.is_some()),
            ("adapt_max_p", self.adapt_max_p.is_some()),
            ("top", self.top.is_some()),
            ("bottom", self.bottom.is_some()),
            ("alpha", self.alpha.is_some()),
            ("beta", self.beta.is_some()),
            ("rtt", self.rtt.is_some()),
            ("a", self.a.is_some()),
            ("b", self.b.is_some()),
            ("t_update", self.t_update.is_some()),
            ("delay_ref", self.delay_ref.is_some()),
            ("max_burst", self.max_burst.is_some()),
            ("dq_threshold", self.dq_threshold.is_some()),
            ("dq_rate_estimator", self.dq_rate_estimator.is_some()),
            ("cap_drop_adjustment", self.cap_drop_adjustment.is_some()),
            ("derandomization", self.derandomization.is_some()),
        ]
        .into_iter()
        .filter(|(_, set)| *set)
        .map(|(n, _)| n)
        .collect()
    }

    /// Validate and fill in ns-3's defaults; `mtu` is the link's IP MTU
    /// (FQ-CoDel's default quantum). `None` for kind `none`.
    pub fn resolve(&self, path: &str, mtu: u32) -> Result<Option<QdiscConf>, SpecError> {
        let field = |name: &str| format!("{path}.{name}");
        let allowed: &[&str] = match self.kind {
            QdiscKind::None => &[],
            QdiscKind::PfifoFast => &["limit"],
            QdiscKind::Codel => &["limit", "limit_bytes", "target", "interval", "min_bytes"],
            QdiscKind::FqCodel => &[
                "limit",
                "target",
                "interval",
                "min_bytes",
                "flows",
                "quantum",
                "drop_batch",
            ],
            QdiscKind::Red => &[
                "limit",
                "limit_bytes",
                "mean_pkt_size",
                "min_th",
                "max_th",
                "q_w",
                "max_p",
                "gentle",
                "wait",
                "link_bandwidth",
                "link_delay",
                "ared",
                "adapt_max_p",
                "interval",
                "top",
                "bottom",
                "alpha",
                "beta",
                "rtt",
            ],
            QdiscKind::Pie => &[
                "limit",
                "limit_bytes",
                "mean_pkt_size",
                "a",
                "b",
                "t_update",
                "delay_ref",
                "max_burst",
                "dq_threshold",
                "dq_rate_estimator",
                "cap_drop_adjustment",
                "derandomization",
            ],
        };
        let set = self.set_fields();
        if let Some(bad) = set.iter().find(|n| !allowed.contains(n)) {
            return Err(super::foreign_field(
                field(bad),
                &format!("queue disc '{}'", self.kind.name()),
                allowed,
            ));
        }
        if self.limit.is_some() && self.limit_bytes.is_some() {
            return Err(SpecError::new(
                field("limit_bytes"),
                "give the limit in packets (limit) or in bytes (limit_bytes), not both".into(),
            ));
        }
        let count = |name: &str, v: Option<u32>, default: u32, max: u32| {
            let x = v.unwrap_or(default);
            if x == 0 || x > max {
                return Err(SpecError::new(
                    field(name),
                    format!("must be between 1 and {max} (got {x})"),
                ));
            }
            Ok(x)
        };
        let bytes = |name: &str, v: Option<Bytes>, default: u32, min: u64| {
            let x = v.map_or(u64::from(default), |b| b.0);
            let max = u64::from(u32::MAX);
            if x < min || x > max {
                return Err(SpecError::new(
                    field(name),
                    format!("must be between {min} and {max} bytes (got {x})"),
                ));
            }
            Ok(x as u32)
        };
        let time = |name: &str, v: Option<Dur>, default: Duration| {
            let x = v.map_or(default, |d| Duration(d.0));
            if x.0 == 0 {
                return Err(SpecError::new(field(name), "must be positive".into()));
            }
            Ok(x)
        };
        let real = |name: &str, v: Option<f64>, default: f64, lo: f64, hi: f64| {
            let x = v.unwrap_or(default);
            if !(x.is_finite() && x >= lo && x <= hi) {
                return Err(SpecError::new(
                    field(name),
                    format!("must be between {lo} and {hi} (got {x})"),
                ));
            }
            Ok(x)
        };
        // A limit in the discipline's unit, packets unless `limit_bytes` is set.
        let limit = |default: Limit| -> Result<Limit, SpecError> {
            match (self.limit, self.limit_bytes) {
                (Some(p), _) => Ok(Limit::Packets(count(
                    "limit",
                    Some(p),
                    1,
                    MAX_QDISC_PACKETS,
                )?)),
                (None, Some(b)) => {
                    let max = u64::from(MAX_QDISC_PACKETS) * 1500;
                    if b.0 == 0 || b.0 > max {
                        return Err(SpecError::new(
                            field("limit_bytes"),
                            format!("must be between 1 and {max} bytes (got {})", b.0),
                        ));
                    }
                    Ok(Limit::Bytes(b.0 as u32))
                }
                (None, None) => Ok(default),
            }
        };
        Ok(Some(match self.kind {
            QdiscKind::None => return Ok(None),
            QdiscKind::PfifoFast => {
                let d = PfifoFastParams::default();
                QdiscConf::PfifoFast(PfifoFastParams {
                    limit_packets: count("limit", self.limit, d.limit_packets, MAX_QDISC_PACKETS)?,
                })
            }
            QdiscKind::Codel => {
                let d = CoDelParams::default();
                QdiscConf::CoDel(CoDelParams {
                    limit: limit(d.limit)?,
                    min_bytes: bytes("min_bytes", self.min_bytes, d.min_bytes, 0)?,
                    interval: time("interval", self.interval, d.interval)?,
                    target: time("target", self.target, d.target)?,
                })
            }
            QdiscKind::FqCodel => {
                let d = FqCoDelParams::default();
                QdiscConf::FqCoDel(FqCoDelParams {
                    limit_packets: count("limit", self.limit, d.limit_packets, MAX_QDISC_PACKETS)?,
                    flows: count("flows", self.flows, d.flows, 65_536)?,
                    drop_batch_size: count(
                        "drop_batch",
                        self.drop_batch,
                        d.drop_batch_size,
                        65_536,
                    )?,
                    quantum: bytes("quantum", self.quantum, mtu, 1)?,
                    interval: time("interval", self.interval, d.interval)?,
                    target: time("target", self.target, d.target)?,
                    min_bytes: bytes("min_bytes", self.min_bytes, d.min_bytes, 0)?,
                })
            }
            QdiscKind::Red => {
                let d = RedParams::default();
                let limit = limit(d.limit)?;
                let max_size = match limit {
                    Limit::Packets(n) | Limit::Bytes(n) => f64::from(n),
                };
                let min_th = real("min_th", self.min_th, d.min_th, 0.0, max_size)?;
                let max_th = real("max_th", self.max_th, d.max_th, 0.0, max_size)?;
                if max_th < min_th {
                    return Err(SpecError::new(
                        field("max_th"),
                        format!("must be at least min_th ({min_th}; got {max_th})"),
                    ));
                }
                let max_p = real("max_p", self.max_p.map(|f| f.0), 1.0 / d.l_interm, 0.0, 1.0)?;
                if max_p == 0.0 {
                    return Err(SpecError::new(
                        field("max_p"),
                        "must be positive (ns-3 stores 1/max_p)".into(),
                    ));
                }
                QdiscConf::Red(RedParams {
                    limit,
                    mean_pkt_size: bytes("mean_pkt_size", self.mean_pkt_size, d.mean_pkt_size, 1)?,
                    wait: self.wait.unwrap_or(d.wait),
                    gentle: self.gentle.unwrap_or(d.gentle),
                    min_th,
                    max_th,
                    q_w: real("q_w", self.q_w, d.q_w, f64::MIN_POSITIVE, 1.0)?,
                    l_interm: 1.0 / max_p,
                    link_bandwidth_bps: self.link_bandwidth.map_or(d.link_bandwidth_bps, |r| r.0),
                    link_delay: self.link_delay.map_or(d.link_delay, |x| Duration(x.0)),
                    ared: self.ared.unwrap_or(d.ared),
                    adapt_max_p: self.adapt_max_p.unwrap_or(d.adapt_max_p),
                    interval: time("interval", self.interval, d.interval)?,
                    top: real("top", self.top, d.top, 0.0, 1.0)?,
                    bottom: real("bottom", self.bottom, d.bottom, 0.0, 1.0)?,
                    alpha: real("alpha", self.alpha, d.alpha, 0.0, 1.0)?,
                    beta: real("beta", self.beta, d.beta, 0.0, 1.0)?,
                    rtt: time("rtt", self.rtt, d.rtt)?,
                    ..d
                })
            }
            QdiscKind::Pie => {
                let d = PieParams::default();
                QdiscConf::Pie(PieParams {
                    limit: limit(d.limit)?,
                    mean_pkt_size: bytes("mean_pkt_size", self.mean_pkt_size, d.mean_pkt_size, 1)?,
                    a: real("a", self.a, d.a, 0.0, 1e6)?,
                    b: real("b", self.b, d.b, 0.0, 1e6)?,
                    t_update: time("t_update", self.t_update, d.t_update)?,
                    dq_threshold: bytes("dq_threshold", self.dq_threshold, d.dq_threshold, 1)?,
                    q_delay_ref: time("delay_ref", self.delay_ref, d.q_delay_ref)?,
                    max_burst: self.max_burst.map_or(d.max_burst, |x| Duration(x.0)),
                    use_dq_rate_estimator: self
                        .dq_rate_estimator
                        .unwrap_or(d.use_dq_rate_estimator),
                    use_cap_drop_adjustment: self
                        .cap_drop_adjustment
                        .unwrap_or(d.use_cap_drop_adjustment),
                    use_derandomization: self.derandomization.unwrap_or(d.use_derandomization),
                    ..d
                })
            }
        }))
    }
}

/// Byte queue limits as written: `bql = true` (ns-3's `DynamicQueueLimits`
/// defaults) or a table `{hold_time = "1s", min_limit = 0, max_limit = ...}`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(transparent)]
pub struct BqlField(pub Option<BqlSpec>);

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BqlSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hold_time: Option<Dur>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_limit: Option<Bytes>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_limit: Option<Bytes>,
}

impl<'de> Deserialize<'de> for BqlField {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Option<BqlSpec>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                write!(
                    f,
                    "true, false, or a table of hold_time, min_limit, max_limit"
                )
            }
            fn visit_bool<E: de::Error>(self, b: bool) -> Result<Self::Value, E> {
                Ok(b.then(BqlSpec::default))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                BqlSpec::deserialize(de::value::MapAccessDeserializer::new(map)).map(Some)
            }
        }
        d.deserialize_any(V).map(BqlField)
    }
}

impl BqlField {
    /// Check and fill in ns-3's defaults; `None` when off.
    pub fn resolve(&self, path: &str) -> Result<Option<DqlParams>, SpecError> {
        let Some(b) = &self.0 else {
            return Ok(None);
        };
        let d = DqlParams::default();
        let limit = |name: &str, v: Option<Bytes>, default: u32| {
            let x = v.map_or(u64::from(default), |b| b.0);
            if x > u64::from(DQL_MAX_LIMIT) {
                return Err(SpecError::new(
                    format!("{path}.{name}"),
                    format!("must be at most {DQL_MAX_LIMIT} bytes (got {x})"),
                ));
            }
            Ok(x as u32)
        };
        let params = DqlParams {
            hold_time: b.hold_time.map_or(d.hold_time, |t| Duration(t.0)),
            min_limit: limit("min_limit", b.min_limit, d.min_limit)?,
            max_limit: limit("max_limit", b.max_limit, d.max_limit)?,
        };
        if params.min_limit > params.max_limit {
            return Err(SpecError::new(
                format!("{path}.max_limit"),
                format!(
                    "must be at least min_limit ({} bytes; got {})",
                    params.min_limit, params.max_limit
                ),
            ));
        }
        Ok(Some(params))
    }
}

/// The queue disc a profile installs when the scenario names none: what
/// stock ns-3.44 puts on every point-to-point device
/// (`Ipv4AddressHelper::Assign` → `TrafficControlHelper::Default`: FQ-CoDel)
/// for `ns3`; none for `linux` (Linux's own default is also fq_codel, but
/// under byte queue limits that keep the device queue short, which vtlab
/// does not model; see docs/queue-discs.md).
pub fn default_for_profile(profile: Profile) -> QdiscSpec {
    match profile {
        Profile::Ns3 => QdiscSpec::of(QdiscKind::FqCodel),
        Profile::Linux => QdiscSpec::of(QdiscKind::None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(v: serde_json::Value) -> Result<QdiscSpec, String> {
        serde_json::from_value::<QdiscField>(v)
            .map(|f| f.0)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn a_name_gives_ns3_defaults_and_the_quantum_is_the_mtu() {
        let q = parse(json!("fq_codel"))
            .unwrap()
            .resolve("qdisc", 1500)
            .unwrap();
        let Some(QdiscConf::FqCoDel(p)) = q else {
            panic!("{q:?}")
        };
        // FqCoDelQueueDisc: MaxSize 10240p, Flows 1024, DropBatchSize 64,
        // Target 5 ms, Interval 100 ms; quantum = PointToPoint MTU 1500.
        assert_eq!(
            (p.limit_packets, p.flows, p.drop_batch_size, p.quantum),
            (10240, 1024, 64, 1500)
        );
        assert_eq!((p.target.0, p.interval.0), (5_000_000, 100_000_000));
        assert_eq!(
            parse(json!("none")).unwrap().resolve("q", 1500).unwrap(),
            None
        );
    }

    #[test]
    fn tables_set_attributes_and_reject_foreign_ones() {
        let q =
            parse(json!({"kind": "red", "min_th": 10, "max_th": 20, "max_p": 0.1, "limit": 50}))
                .unwrap()
                .resolve("qdisc", 1500)
                .unwrap();
        let Some(QdiscConf::Red(p)) = q else {
            panic!("{q:?}")
        };
        assert_eq!((p.min_th, p.max_th, p.l_interm), (10.0, 20.0, 10.0));
        assert_eq!(p.limit, Limit::Packets(50));
        let e = parse(json!({"kind": "codel", "flows": 8}))
            .unwrap()
            .resolve("qdisc", 1500)
            .unwrap_err();
        assert_eq!(e.path, "qdisc.flows");
        assert!(
            e.message.contains("not a parameter of queue disc 'codel'"),
            "{e}"
        );
        let e = parse(json!({"kind": "red", "min_th": 20, "max_th": 10}))
            .unwrap()
            .resolve("qdisc", 1500)
            .unwrap_err();
        assert_eq!(e.path, "qdisc.max_th");
        let e = parse(json!({"kind": "pfifo_fast", "limit": 0}))
            .unwrap()
            .resolve("qdisc", 1500)
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "qdisc.limit: must be between 1 and 1000000 (got 0)"
        );
    }

    #[test]
    fn resolved_confs_carry_the_kind_as_scenarios_write_it() {
        for name in ["pfifo_fast", "codel", "fq_codel", "red", "pie"] {
            let conf = parse(json!(name))
                .unwrap()
                .resolve("q", 1500)
                .unwrap()
                .unwrap();
            assert_eq!(conf.name(), name);
            let v = serde_json::to_value(&conf).unwrap();
            assert_eq!(v["kind"], name);
            let back: QdiscConf = serde_json::from_value(v).unwrap();
            assert_eq!(back, conf);
        }
    }

    #[test]
    fn byte_queue_limits_are_a_switch_or_a_table() {
        let b = |v| {
            serde_json::from_value::<BqlField>(v)
                .unwrap()
                .resolve("bql")
        };
        assert_eq!(b(json!(false)).unwrap(), None);
        assert_eq!(b(json!(true)).unwrap(), Some(DqlParams::default()));
        let p = b(json!({"hold_time": "2s", "min_limit": 3000}))
            .unwrap()
            .unwrap();
        assert_eq!(
            (p.hold_time.0, p.min_limit, p.max_limit),
            (2_000_000_000, 3000, DQL_MAX_LIMIT)
        );
        let e = b(json!({"min_limit": 5000, "max_limit": 4000})).unwrap_err();
        assert_eq!(e.path, "bql.max_limit");
    }

    #[test]
    fn unknown_names_and_fields_are_named() {
        let e = parse(json!("fq-codel")).unwrap_err();
        assert!(e.contains("unknown queue disc 'fq-codel'"), "{e}");
        let e = parse(json!({"kind": "pie", "tupdate": "15ms"})).unwrap_err();
        assert!(e.contains("unknown field `tupdate`"), "{e}");
    }
}
