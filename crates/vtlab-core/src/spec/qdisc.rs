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
use super::{SpecError, Validate};
use crate::engine::{Duration, Num};
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

    /// The attributes kind `kind` takes.
    fn allowed(kind: QdiscKind) -> &'static [&'static str] {
        match kind {
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
        }
    }

    /// Fill in ns-3's defaults and validate; `mtu` is the link's IP MTU
    /// (FQ-CoDel's default quantum). `None` for kind `none`.
    pub fn resolve(&self, path: &str, mtu: u32) -> Result<Option<QdiscConf>, SpecError> {
        let field = |name: &str| format!("{path}.{name}");
        let allowed = Self::allowed(self.kind);
        if let Some(bad) = self.set_fields().iter().find(|n| !allowed.contains(n)) {
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
        let conf = match self.kind {
            QdiscKind::None => return Ok(None),
            QdiscKind::PfifoFast => QdiscConf::PfifoFast(PfifoFastParams {
                limit_packets: self
                    .limit
                    .unwrap_or(PfifoFastParams::default().limit_packets),
            }),
            QdiscKind::Codel => QdiscConf::CoDel(self.codel()),
            QdiscKind::FqCodel => QdiscConf::FqCoDel(self.fq_codel(mtu)),
            QdiscKind::Red => QdiscConf::Red(self.red()),
            QdiscKind::Pie => QdiscConf::Pie(self.pie()),
        };
        Attrs {
            path,
            written: Some(self),
        }
        .check(&conf)?;
        Ok(Some(conf))
    }

    /// The limit in the discipline's unit: packets unless `limit_bytes` is set.
    fn limit(&self, default: Limit) -> Limit {
        match (self.limit, self.limit_bytes) {
            (Some(p), _) => Limit::Packets(p),
            (None, Some(b)) => Limit::Bytes(narrow(Some(b), 0)),
            (None, None) => default,
        }
    }

    fn codel(&self) -> CoDelParams {
        let d = CoDelParams::default();
        CoDelParams {
            limit: self.limit(d.limit),
            min_bytes: narrow(self.min_bytes, d.min_bytes),
            interval: self.interval.map_or(d.interval, |x| Duration(x.0)),
            target: self.target.map_or(d.target, |x| Duration(x.0)),
        }
    }

    fn fq_codel(&self, mtu: u32) -> FqCoDelParams {
        let d = FqCoDelParams::default();
        FqCoDelParams {
            limit_packets: self.limit.unwrap_or(d.limit_packets),
            flows: self.flows.unwrap_or(d.flows),
            drop_batch_size: self.drop_batch.unwrap_or(d.drop_batch_size),
            quantum: narrow(self.quantum, mtu),
            interval: self.interval.map_or(d.interval, |x| Duration(x.0)),
            target: self.target.map_or(d.target, |x| Duration(x.0)),
            min_bytes: narrow(self.min_bytes, d.min_bytes),
        }
    }

    fn red(&self) -> RedParams {
        let d = RedParams::default();
        let max_p = self.max_p.map_or(1.0 / d.l_interm, |f| f.0);
        RedParams {
            limit: self.limit(d.limit),
            mean_pkt_size: narrow(self.mean_pkt_size, d.mean_pkt_size),
            wait: self.wait.unwrap_or(d.wait),
            gentle: self.gentle.unwrap_or(d.gentle),
            min_th: self.min_th.unwrap_or(d.min_th),
            max_th: self.max_th.unwrap_or(d.max_th),
            q_w: self.q_w.unwrap_or(d.q_w),
            l_interm: 1.0 / max_p,
            link_bandwidth_bps: self.link_bandwidth.map_or(d.link_bandwidth_bps, |r| r.0),
            link_delay: self.link_delay.map_or(d.link_delay, |x| Duration(x.0)),
            ared: self.ared.unwrap_or(d.ared),
            adapt_max_p: self.adapt_max_p.unwrap_or(d.adapt_max_p),
            interval: self.interval.map_or(d.interval, |x| Duration(x.0)),
            top: self.top.unwrap_or(d.top),
            bottom: self.bottom.unwrap_or(d.bottom),
            alpha: self.alpha.unwrap_or(d.alpha),
            beta: self.beta.unwrap_or(d.beta),
            rtt: self.rtt.map_or(d.rtt, |x| Duration(x.0)),
            ..d
        }
    }

    fn pie(&self) -> PieParams {
        let d = PieParams::default();
        PieParams {
            limit: self.limit(d.limit),
            mean_pkt_size: narrow(self.mean_pkt_size, d.mean_pkt_size),
            a: self.a.unwrap_or(d.a),
            b: self.b.unwrap_or(d.b),
            t_update: self.t_update.map_or(d.t_update, |x| Duration(x.0)),
            dq_threshold: narrow(self.dq_threshold, d.dq_threshold),
            q_delay_ref: self.delay_ref.map_or(d.q_delay_ref, |x| Duration(x.0)),
            max_burst: self.max_burst.map_or(d.max_burst, |x| Duration(x.0)),
            use_dq_rate_estimator: self.dq_rate_estimator.unwrap_or(d.use_dq_rate_estimator),
            use_cap_drop_adjustment: self
                .cap_drop_adjustment
                .unwrap_or(d.use_cap_drop_adjustment),
            use_derandomization: self.derandomization.unwrap_or(d.use_derandomization),
            ..d
        }
    }

    /// A byte attribute as written, where the conf stores it in 32 bits.
    fn written_bytes(&self, name: &str) -> Option<u64> {
        let v = match name {
            "limit_bytes" => self.limit_bytes,
            "min_bytes" => self.min_bytes,
            "quantum" => self.quantum,
            "mean_pkt_size" => self.mean_pkt_size,
            "dq_threshold" => self.dq_threshold,
            _ => None,
        };
        v.map(|b| b.0)
    }
}

/// A byte attribute (or its default) in the 32 bits ns-3 stores it in; a
/// larger one saturates, and [`Attrs`] refuses it by the value as written.
fn narrow(v: Option<Bytes>, default: u32) -> u32 {
    v.map_or(default, |b| u32::try_from(b.0).unwrap_or(u32::MAX))
}

/// PIE's shortest update period (`t_update`): its controller runs once per
/// period however idle the queue, so the period bounds its work per
/// simulated second; Linux's `sch_pie` runs it on a jiffy timer (1 ms at
/// HZ = 1000), RFC 8033 recommends 15 ms.
pub const PIE_MIN_T_UPDATE: Duration = Duration(1_000_000);

/// The largest byte limit: a million full-size packets.
const MAX_LIMIT_BYTES: u64 = MAX_QDISC_PACKETS as u64 * 1500;

/// The checks of one queue disc's attributes, each error naming its field.
/// Checking what a spec resolved to, `written` is that spec: byte counts and
/// max_p are then checked as written (the conf stores byte counts in 32 bits
/// and max_p as its inverse).
struct Attrs<'a> {
    path: &'a str,
    written: Option<&'a QdiscSpec>,
}

impl Attrs<'_> {
    fn field(&self, name: &str) -> String {
        format!("{}.{name}", self.path)
    }

    fn count(&self, name: &str, x: u32, max: u32) -> Result<(), SpecError> {
        if x == 0 || x > max {
            return Err(SpecError::new(
                self.field(name),
                format!("must be between 1 and {max} (got {x})"),
            ));
        }
        Ok(())
    }

    fn bytes(&self, name: &str, x: u32, min: u64) -> Result<(), SpecError> {
        let x = self
            .written
            .and_then(|s| s.written_bytes(name))
            .unwrap_or(u64::from(x));
        let max = u64::from(u32::MAX);
        if x < min || x > max {
            return Err(SpecError::new(
                self.field(name),
                format!("must be between {min} and {max} bytes (got {x})"),
            ));
        }
        Ok(())
    }

    fn time(&self, name: &str, x: Duration) -> Result<(), SpecError> {
        if x.0 == 0 {
            return Err(SpecError::new(self.field(name), "must be positive".into()));
        }
        Ok(())
    }

    fn real(&self, name: &str, x: f64, lo: f64, hi: f64) -> Result<(), SpecError> {
        if !(x.is_finite() && x >= lo && x <= hi) {
            return Err(SpecError::new(
                self.field(name),
                format!(
                    "must be between {} and {} (got {})",
                    Num(lo),
                    Num(hi),
                    Num(x)
                ),
            ));
        }
        Ok(())
    }

    fn limit(&self, limit: Limit) -> Result<(), SpecError> {
        let bytes = match limit {
            Limit::Packets(n) => return self.count("limit", n, MAX_QDISC_PACKETS),
            Limit::Bytes(b) => self
                .written
                .and_then(|s| s.written_bytes("limit_bytes"))
                .unwrap_or(u64::from(b)),
        };
        if bytes == 0 || bytes > MAX_LIMIT_BYTES {
            return Err(SpecError::new(
                self.field("limit_bytes"),
                format!("must be between 1 and {MAX_LIMIT_BYTES} bytes (got {bytes})"),
            ));
        }
        Ok(())
    }

    /// RED's max_p, ns-3's 1/`LInterm`: in (0, 1].
    fn max_p(&self, l_interm: f64) -> Result<(), SpecError> {
        let Some(max_p) = self.written.and_then(|s| s.max_p) else {
            if l_interm.is_nan() || l_interm < 1.0 {
                return Err(SpecError::new(
                    self.field("max_p"),
                    format!("must be between 0 and 1 (got {})", Num(1.0 / l_interm)),
                ));
            }
            return Ok(());
        };
        self.real("max_p", max_p.0, 0.0, 1.0)?;
        if max_p.0 == 0.0 {
            return Err(SpecError::new(
                self.field("max_p"),
                "must be positive (ns-3 stores 1/max_p)".into(),
            ));
        }
        Ok(())
    }

    /// A RED threshold within [0, the queue's limit]. When the spec leaves
    /// the threshold at its default and sets the limit, the error names the
    /// limit.
    fn threshold(&self, name: &str, x: f64, limit: Limit) -> Result<(), SpecError> {
        let (limit_name, max) = match limit {
            Limit::Packets(n) => ("limit", f64::from(n)),
            Limit::Bytes(n) => ("limit_bytes", f64::from(n)),
        };
        if x.is_finite() && (0.0..=max).contains(&x) {
            return Ok(());
        }
        let default = self.written.filter(|s| match name {
            "min_th" => s.min_th.is_none(),
            _ => s.max_th.is_none(),
        });
        let (x, max) = (Num(x), Num(max));
        Err(match default {
            Some(_) if x.0 >= 0.0 => SpecError::new(
                self.field(limit_name),
                format!("{max} is below {name} ({x}, the default): RED's thresholds lie within the queue's limit; set {name}"),
            ),
            _ => SpecError::new(
                self.field(name),
                format!("must be between 0 and the queue's limit ({limit_name} = {max}) (got {x})"),
            ),
        })
    }

    fn red(&self, p: &RedParams) -> Result<(), SpecError> {
        self.limit(p.limit)?;
        self.threshold("min_th", p.min_th, p.limit)?;
        self.threshold("max_th", p.max_th, p.limit)?;
        if p.max_th < p.min_th {
            return Err(SpecError::new(
                self.field("max_th"),
                format!(
                    "must be at least min_th ({}; got {})",
                    Num(p.min_th),
                    Num(p.max_th)
                ),
            ));
        }
        self.max_p(p.l_interm)?;
        self.bytes("mean_pkt_size", p.mean_pkt_size, 1)?;
        self.real("q_w", p.q_w, f64::MIN_POSITIVE, 1.0)?;
        self.time("interval", p.interval)?;
        self.real("top", p.top, 0.0, 1.0)?;
        self.real("bottom", p.bottom, 0.0, 1.0)?;
        self.real("alpha", p.alpha, 0.0, 1.0)?;
        self.real("beta", p.beta, 0.0, 1.0)?;
        self.time("rtt", p.rtt)?;
        self.red_bounds(p)?;
        self.ared_overrides()
    }

    /// maxP is adapted within [bottom, top]: `top` may not be below the
    /// bottom in use (given, or automatic when 0). The error names the one
    /// the spec gives (`top` when both or neither).
    fn red_bounds(&self, p: &RedParams) -> Result<(), SpecError> {
        let bottom = p.bottom_in_use();
        if p.top >= bottom {
            return Ok(());
        }
        let only_bottom = self
            .written
            .is_some_and(|s| s.bottom.is_some() && s.top.is_none());
        let name = if only_bottom { "bottom" } else { "top" };
        let bottom_is = if p.bottom == 0.0 {
            format!(
                "the automatic bottom, min(0.01, 8 · mean_pkt_size · rtt / link_bandwidth) = {}",
                Num(bottom)
            )
        } else {
            format!("bottom = {}", Num(bottom))
        };
        Err(SpecError::new(
            self.field(name),
            format!(
                "top = {} is below {bottom_is}: maxP is adapted between bottom and top",
                Num(p.top)
            ),
        ))
    }

    /// `ared = true` sets the thresholds and weight itself and always adapts
    /// maxP (ns-3 `RedQueueDisc::InitializeParams`): given values of those
    /// would be ignored.
    fn ared_overrides(&self) -> Result<(), SpecError> {
        let Some(s) = self.written.filter(|s| s.ared == Some(true)) else {
            return Ok(());
        };
        let ignored = [
            ("min_th", s.min_th.is_some()),
            ("max_th", s.max_th.is_some()),
            ("q_w", s.q_w.is_some()),
            ("adapt_max_p", s.adapt_max_p == Some(false)),
        ];
        match ignored.iter().find(|(_, given)| *given) {
            Some((name, _)) => Err(SpecError::new(
                self.field(name),
                "ared = true sets min_th, max_th and q_w automatically and adapts maxP; \
                 drop this setting or ared"
                    .into(),
            )),
            None => Ok(()),
        }
    }

    fn pie(&self, p: &PieParams) -> Result<(), SpecError> {
        self.limit(p.limit)?;
        self.bytes("mean_pkt_size", p.mean_pkt_size, 1)?;
        self.real("a", p.a, 0.0, 1e6)?;
        self.real("b", p.b, 0.0, 1e6)?;
        if p.t_update < PIE_MIN_T_UPDATE {
            return Err(SpecError::new(
                self.field("t_update"),
                format!(
                    "must be at least 1 ms (got {} ns): PIE runs an update every t_update, \
                     and Linux's runs on a timer of whole jiffies (1 ms or more)",
                    p.t_update.0
                ),
            ));
        }
        self.bytes("dq_threshold", p.dq_threshold, 1)?;
        self.time("delay_ref", p.q_delay_ref)
    }

    fn check(&self, conf: &QdiscConf) -> Result<(), SpecError> {
        match conf {
            QdiscConf::PfifoFast(p) => self.count("limit", p.limit_packets, MAX_QDISC_PACKETS),
            QdiscConf::CoDel(p) => {
                self.limit(p.limit)?;
                self.bytes("min_bytes", p.min_bytes, 0)?;
                self.time("interval", p.interval)?;
                self.time("target", p.target)
            }
            QdiscConf::FqCoDel(p) => {
                self.count("limit", p.limit_packets, MAX_QDISC_PACKETS)?;
                self.count("flows", p.flows, 65_536)?;
                self.count("drop_batch", p.drop_batch_size, 65_536)?;
                self.bytes("quantum", p.quantum, 1)?;
                self.time("interval", p.interval)?;
                self.time("target", p.target)?;
                self.bytes("min_bytes", p.min_bytes, 0)
            }
            QdiscConf::Red(p) => self.red(p),
            QdiscConf::Pie(p) => self.pie(p),
        }
    }
}

impl Validate for QdiscConf {
    fn validate(&self, path: &str) -> Result<(), SpecError> {
        Attrs {
            path,
            written: None,
        }
        .check(self)
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
    /// Fill in ns-3's defaults and validate; `None` when off.
    pub fn resolve(&self, path: &str) -> Result<Option<DqlParams>, SpecError> {
        let Some(b) = &self.0 else {
            return Ok(None);
        };
        let d = DqlParams::default();
        let limit = |name: &str, v: Option<Bytes>, default: u32| {
            dql_limit(
                &format!("{path}.{name}"),
                v.map_or(u64::from(default), |b| b.0),
            )
        };
        let params = DqlParams {
            hold_time: b.hold_time.map_or(d.hold_time, |t| Duration(t.0)),
            min_limit: limit("min_limit", b.min_limit, d.min_limit)?,
            max_limit: limit("max_limit", b.max_limit, d.max_limit)?,
        };
        params.validate(path)?;
        Ok(Some(params))
    }
}

/// A byte limit of DQL: at most [`DQL_MAX_LIMIT`].
fn dql_limit(path: &str, x: u64) -> Result<u32, SpecError> {
    if x > u64::from(DQL_MAX_LIMIT) {
        return Err(SpecError::new(
            path,
            format!("must be at most {DQL_MAX_LIMIT} bytes (got {x})"),
        ));
    }
    Ok(x as u32)
}

impl Validate for DqlParams {
    fn validate(&self, path: &str) -> Result<(), SpecError> {
        for (name, x) in [("min_limit", self.min_limit), ("max_limit", self.max_limit)] {
            dql_limit(&format!("{path}.{name}"), u64::from(x))?;
        }
        if self.min_limit > self.max_limit {
            return Err(SpecError::new(
                format!("{path}.max_limit"),
                format!(
                    "must be at least min_limit ({} bytes; got {})",
                    self.min_limit, self.max_limit
                ),
            ));
        }
        Ok(())
    }
}

/// Byte queue limits (validated) live in the device queue's flow control
/// with a queue disc, as ns-3 installs them
/// (`TrafficControlHelper::SetQueueLimits`).
pub(crate) fn check_bql(
    bql: Option<&DqlParams>,
    qdisc: Option<&QdiscConf>,
    path: &str,
) -> Result<(), SpecError> {
    let Some(b) = bql else {
        return Ok(());
    };
    b.validate(path)?;
    if qdisc.is_none() {
        return Err(SpecError::new(
            path,
            "byte queue limits need a queue disc (qdisc is none)".into(),
        ));
    }
    Ok(())
}

/// The queue disc a profile installs when the scenario names none: what
/// stock ns-3.44 puts on every point-to-point device
/// (`Ipv4AddressHelper::Assign` → `TrafficControlHelper::Default`: FQ-CoDel)
/// for `ns3`; none for `linux` (Linux's own default is also fq_codel, but
/// under byte queue limits that keep the device queue short, which vtlab
/// does not model; see docs/queue-discs.md). None for `ns2`: an ns-2
/// link's queue is its own (`DropTail` unless the script names another),
/// with nothing in front of it.
pub fn default_for_profile(profile: Profile) -> QdiscSpec {
    match profile {
        Profile::Ns3 => QdiscSpec::of(QdiscKind::FqCodel),
        Profile::Linux | Profile::Ns2 => QdiscSpec::of(QdiscKind::None),
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
