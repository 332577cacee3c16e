//! Scenarios: what users write (specs, with units and defaults) and what the
//! engine runs (a resolved [`Scenario`], explicit and in base units).
//!
//! A spec is a JSON/TOML object whose `preset` field picks a topology builder:
//! `"custom"` (explicit nodes, links and flows) or a named preset such as
//! `"v2g"`. Every error names the field path and the allowed values.

pub mod cellular;
pub mod loss;
mod lte_cabin;
mod plan;
pub mod qdisc;
pub mod session;
mod station;
pub mod tcp;
pub mod units;
mod v2g;
mod vanet_chain;
pub mod wifi;
mod wired_wireless;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeSet;
use std::fmt;

use crate::net::cellular::CapacityConf;
use crate::net::qdisc::dql::DqlParams;
use crate::net::qdisc::QdiscConf;
use crate::net::wifi::MediumConf;
use crate::net::LossConf;
use crate::tcp::cc::Profile;
use crate::tcp::TcpConfig;
pub use loss::{LossKind, LossSpec};
pub use plan::{
    plan, DEFAULT_HORIZON_NS, DEFAULT_MAX_EVENTS, MAX_EVENTS, MAX_STOP_NS, MAX_TIME_NS,
    RATE_RANGE_BPS,
};
pub use qdisc::{BqlField, QdiscField, QdiscKind, QdiscSpec};
pub use session::{SessionConf, SessionSpec, StepConf};
pub use tcp::TcpSpec;
use units::{Bytes, Dur, Rate};

pub use lte_cabin::LteCabinSpec;
pub use station::StationSpec;
pub use v2g::V2gSpec;
pub use vanet_chain::VanetChainSpec;
pub use wired_wireless::{FlowGroup, WiredWirelessSpec};

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

/// Most stations on one medium: the routes are computed over every pair in
/// range (up to 128·127 hops), and each frame costs O(stations) work.
pub const MAX_STATIONS: usize = 128;

/// Every preset, by name.
pub const PRESETS: &[&str] = &[
    "custom",
    "lte-cabin",
    "station",
    "v2g",
    "vanet-chain",
    "wired-wireless",
];

/// Deserialize `value` as `T`, turning serde's error into a [`SpecError`]
/// whose path is `prefix` plus the path inside `value`.
fn from_value<T: DeserializeOwned>(value: serde_json::Value, prefix: &str) -> Result<T, SpecError> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let inner = e.path().to_string();
        let path = match (prefix.is_empty(), inner.as_str()) {
            (_, ".") => prefix.to_string(),
            (true, _) => inner,
            (false, _) => format!("{prefix}.{inner}"),
        };
        SpecError::new(path, e.into_inner().to_string())
    })
}

/// Build the resolved scenario from a spec given as JSON text.
pub fn resolve_json(spec_json: &str) -> Result<Scenario, SpecError> {
    let value: serde_json::Value = serde_json::from_str(spec_json)
        .map_err(|e| SpecError::new("", format!("the scenario is not valid JSON: {e}")))?;
    resolve_value(value)
}

/// Build the resolved scenario from a spec object.
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
    let rest = serde_json::Value::Object(map);
    match preset.as_str() {
        "custom" => from_value::<CustomSpec>(rest, "")?.resolve(),
        "v2g" => from_value::<V2gSpec>(rest, "")?.resolve(),
        "station" => from_value::<StationSpec>(rest, "")?.resolve(),
        "lte-cabin" => from_value::<LteCabinSpec>(rest, "")?.resolve(),
        "wired-wireless" => from_value::<WiredWirelessSpec>(rest, "")?.resolve(),
        "vanet-chain" => from_value::<VanetChainSpec>(rest, "")?.resolve(),
        other => Err(SpecError::new(
            "preset",
            format!("unknown preset '{other}' (allowed: {})", PRESETS.join(", ")),
        )),
    }
}

// ---- resolved scenario ---------------------------------------------------------

/// A point-to-point link, both directions.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LinkConf {
    pub name: String,
    pub a: String,
    pub b: String,
    pub rate_bps: u64,
    pub delay_ns: u64,
    pub queue_packets: u32,
    pub framing_bytes: u32,
    /// IP MTU; larger packets are fragmented at their source (IPv4).
    pub mtu_bytes: u32,
    /// Loss at the receiving end of the a→b direction.
    pub loss_ab: LossConf,
    /// Loss at the receiving end of the b→a direction.
    pub loss_ba: LossConf,
    /// Byte limit of each direction's queue (with framing), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_bytes: Option<u64>,
    /// A cellular a→b direction: its capacity schedule (`rate_bps` is then
    /// not used in that direction).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity_ab: Option<CapacityConf>,
    /// A cellular b→a direction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity_ba: Option<CapacityConf>,
    /// The root queue disc in front of each constant-rate direction's device
    /// queue (`None`: packets go straight to the drop-tail device queue).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qdisc: Option<QdiscConf>,
    /// Byte queue limits on each such direction's device queue (needs a qdisc).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bql: Option<DqlParams>,
}

/// A bulk transfer from `src` to `dst`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FlowConf {
    pub name: String,
    pub src: String,
    pub dst: String,
    pub bytes: u64,
    pub start_ns: u64,
    pub tcp: TcpConfig,
}

/// A fully resolved scenario: explicit, in base units, ready to run.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// The preset it was built from.
    pub preset: String,
    pub nodes: Vec<String>,
    pub links: Vec<LinkConf>,
    pub flows: Vec<FlowConf>,
    pub stop_ns: Option<u64>,
    pub trace_interval_ns: u64,
    /// The event budget, when the scenario sets one (else the default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_events: Option<u64>,
    /// Shared 802.11 media (nodes may also have point-to-point links).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub media: Vec<MediumConf>,
    /// Request/response sessions, each over one TCP connection.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sessions: Vec<SessionConf>,
    /// Each node's IPv4 address (what FQ-CoDel's flow hash reads), in node
    /// order; empty: 10.0.0.1, 10.0.0.2, ... A preset that mirrors an ns-3
    /// program sets the addresses that program assigns.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub addresses: Vec<[u8; 4]>,
}

impl Scenario {
    /// Canonical JSON: the input of the scenario hash.
    pub fn canonical_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// First 16 hex digits of the SHA-256 of the canonical JSON.
    pub fn hash(&self) -> String {
        let digest = Sha256::digest(self.canonical_json().as_bytes());
        digest.iter().take(8).map(|b| format!("{b:02x}")).collect()
    }

    /// Structural checks every builder's output must pass.
    pub fn validate(&self) -> Result<(), SpecError> {
        if !self.addresses.is_empty() && self.addresses.len() != self.nodes.len() {
            return Err(SpecError::new(
                "addresses",
                format!(
                    "{} addresses for {} nodes (one per node, or none)",
                    self.addresses.len(),
                    self.nodes.len()
                ),
            ));
        }
        let mut names = BTreeSet::new();
        for (i, n) in self.nodes.iter().enumerate() {
            if n.is_empty() || !names.insert(n.as_str()) {
                return Err(SpecError::new(
                    format!("nodes[{i}]"),
                    format!("node names must be non-empty and unique ('{n}')"),
                ));
            }
        }
        let known = |path: String, n: &str| {
            if names.contains(n) {
                Ok(())
            } else {
                Err(SpecError::new(
                    path,
                    format!("unknown node '{n}' (nodes: {})", self.nodes.join(", ")),
                ))
            }
        };
        let mut link_names = BTreeSet::new();
        for (i, l) in self.links.iter().enumerate() {
            known(format!("links[{i}].a"), &l.a)?;
            known(format!("links[{i}].b"), &l.b)?;
            if l.a == l.b {
                return Err(SpecError::new(
                    format!("links[{i}].b"),
                    "a link must join two different nodes".into(),
                ));
            }
            if !link_names.insert(l.name.as_str()) {
                return Err(SpecError::new(
                    format!("links[{i}].name"),
                    format!("duplicate link name '{}'", l.name),
                ));
            }
            if l.queue_packets == 0 {
                return Err(SpecError::new(
                    format!("links[{i}].queue_packets"),
                    "0 is outside [1, 1000000]".into(),
                ));
            }
        }
        for (i, m) in self.media.iter().enumerate() {
            if !link_names.insert(m.name.as_str()) {
                return Err(SpecError::new(
                    format!("media[{i}].name"),
                    format!("duplicate link or medium name '{}'", m.name),
                ));
            }
            let mut on = BTreeSet::new();
            for (k, n) in m.nodes.iter().enumerate() {
                known(format!("media[{i}].nodes[{k}]"), n)?;
                if !on.insert(n.clone()) {
                    return Err(SpecError::new(
                        format!("media[{i}].nodes[{k}]"),
                        format!("node '{n}' is on this medium twice"),
                    ));
                }
            }
            if m.nodes.len() < 2 || m.nodes.len() > MAX_STATIONS {
                return Err(SpecError::new(
                    format!("media[{i}].nodes"),
                    format!("{} stations is outside [2, {MAX_STATIONS}]", m.nodes.len()),
                ));
            }
            if m.mobility.len() != m.nodes.len() {
                return Err(SpecError::new(
                    format!("media[{i}].mobility"),
                    format!(
                        "needs one entry per node ({} nodes, {} entries)",
                        m.nodes.len(),
                        m.mobility.len()
                    ),
                ));
            }
        }
        if self.flows.is_empty() && self.sessions.is_empty() {
            return Err(SpecError::new(
                "flows",
                "at least one flow or session is required".into(),
            ));
        }
        let mut flow_names = BTreeSet::new();
        for (i, f) in self.flows.iter().enumerate() {
            known(format!("flows[{i}].src"), &f.src)?;
            known(format!("flows[{i}].dst"), &f.dst)?;
            if f.src == f.dst {
                return Err(SpecError::new(
                    format!("flows[{i}].dst"),
                    "a flow's source and destination must differ".into(),
                ));
            }
            if f.bytes == 0 {
                return Err(SpecError::new(
                    format!("flows[{i}].bytes"),
                    "must be at least 1 byte".into(),
                ));
            }
            if !flow_names.insert(f.name.as_str()) {
                return Err(SpecError::new(
                    format!("flows[{i}].name"),
                    format!("duplicate flow name '{}'", f.name),
                ));
            }
        }
        let mut session_names = BTreeSet::new();
        for (i, c) in self.sessions.iter().enumerate() {
            known(format!("sessions[{i}].client"), &c.client)?;
            known(format!("sessions[{i}].server"), &c.server)?;
            if c.client == c.server {
                return Err(SpecError::new(
                    format!("sessions[{i}].server"),
                    "a session's client and server must differ".into(),
                ));
            }
            if !session_names.insert(c.name.as_str()) {
                return Err(SpecError::new(
                    format!("sessions[{i}].name"),
                    format!("duplicate session name '{}'", c.name),
                ));
            }
        }
        if self.trace_interval_ns == 0 {
            return Err(SpecError::new("trace_interval", "must be positive".into()));
        }
        Ok(())
    }
}

// ---- the custom preset -----------------------------------------------------------

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct LinkSpec {
    name: Option<String>,
    a: String,
    b: String,
    /// Required unless both directions are cellular.
    rate: Option<Rate>,
    delay: Dur,
    queue_packets: Option<u32>,
    /// Byte limit of each direction's queue.
    queue_bytes: Option<Bytes>,
    framing_bytes: Option<u32>,
    mtu: Option<Bytes>,
    loss_ab: Option<LossSpec>,
    loss_ba: Option<LossSpec>,
    /// A cellular a→b direction (trace or channel model).
    capacity_ab: Option<cellular::CapacitySpec>,
    capacity_ba: Option<cellular::CapacitySpec>,
    /// This link's queue disc (default: the top-level `qdisc`).
    qdisc: Option<QdiscField>,
    /// This link's byte queue limits (default: the top-level `bql`).
    bql: Option<BqlField>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FlowSpec {
    name: Option<String>,
    src: String,
    dst: String,
    bytes: Option<Bytes>,
    start: Option<Dur>,
    tcp: Option<TcpSpec>,
}

/// Explicit topology. Top-level `bytes` and `tcp` are defaults for every flow;
/// a flow's own `tcp` fields override them.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CustomSpec {
    nodes: Vec<String>,
    #[serde(default)]
    links: Vec<LinkSpec>,
    /// Shared 802.11 media.
    #[serde(default)]
    media: Vec<wifi::MediumSpec>,
    flows: Vec<FlowSpec>,
    bytes: Option<Bytes>,
    tcp: Option<TcpSpec>,
    /// Queue disc of every link (default: the TCP profile's, see
    /// [`qdisc::default_for_profile`]).
    qdisc: Option<QdiscField>,
    /// Byte queue limits of every link (default: off).
    bql: Option<BqlField>,
    stop: Option<Dur>,
    trace_interval: Option<Dur>,
    max_events: Option<u64>,
}

pub const DEFAULT_QUEUE_PACKETS: u32 = 100;
pub const DEFAULT_FRAMING_BYTES: u32 = 2;
pub const DEFAULT_MTU_BYTES: u32 = 1500;
pub const DEFAULT_TRACE_INTERVAL_NS: u64 = 10_000_000;

/// Overlay `over` on `base`: fields set in `over` win.
pub fn merge_tcp(base: Option<&TcpSpec>, over: Option<&TcpSpec>) -> Result<TcpSpec, SpecError> {
    let to_map = |s: Option<&TcpSpec>| -> serde_json::Map<String, serde_json::Value> {
        match s.and_then(|s| serde_json::to_value(s).ok()) {
            Some(serde_json::Value::Object(m)) => m,
            _ => serde_json::Map::new(),
        }
    };
    let mut merged = to_map(base);
    for (k, v) in to_map(over) {
        if !v.is_null() {
            merged.insert(k, v);
        }
    }
    from_value(serde_json::Value::Object(merged), "tcp")
}

/// Per-link settings shared by every link a preset builds.
pub(crate) struct LinkTemplate {
    queue_packets: u32,
    framing_bytes: u32,
    mtu_bytes: u32,
    qdisc: Option<QdiscConf>,
    bql: Option<DqlParams>,
}

/// Byte queue limits live in the device queue's flow control with a queue
/// disc, as ns-3 installs them (`TrafficControlHelper::SetQueueLimits`).
fn check_bql(
    bql: Option<DqlParams>,
    qdisc: &Option<QdiscConf>,
    path: &str,
) -> Result<Option<DqlParams>, SpecError> {
    if bql.is_some() && qdisc.is_none() {
        return Err(SpecError::new(
            path,
            "byte queue limits need a queue disc (qdisc is none)".into(),
        ));
    }
    Ok(bql)
}

/// The queue disc a preset's `qdisc` field names, or its TCP profile's default.
fn qdisc_or_default(field: Option<&QdiscField>, tcp: Option<&TcpSpec>) -> QdiscSpec {
    match field {
        Some(q) => q.0.clone(),
        None => qdisc::default_for_profile(tcp.and_then(|t| t.profile).unwrap_or(Profile::Ns3)),
    }
}

impl LinkTemplate {
    /// Validate a preset's `queue_packets`, `framing_bytes` and `mtu` fields.
    pub(crate) fn new(
        queue: Option<u32>,
        framing: Option<u32>,
        mtu: Option<Bytes>,
    ) -> Result<Self, SpecError> {
        Ok(LinkTemplate {
            queue_packets: check_queue("queue_packets", queue.unwrap_or(DEFAULT_QUEUE_PACKETS))?,
            framing_bytes: framing.unwrap_or(DEFAULT_FRAMING_BYTES),
            mtu_bytes: check_mtu("mtu", mtu)?,
            qdisc: None,
            bql: None,
        })
    }

    /// Put the queue disc `field` names (else the profile's default, see
    /// [`qdisc::default_for_profile`]) on every link of the template.
    pub(crate) fn with_qdisc(
        mut self,
        field: Option<&QdiscField>,
        tcp: Option<&TcpSpec>,
    ) -> Result<Self, SpecError> {
        self.qdisc = qdisc_or_default(field, tcp).resolve("qdisc", self.mtu_bytes)?;
        Ok(self)
    }

    /// Byte queue limits (`bql`) on every link of the template; after
    /// [`LinkTemplate::with_qdisc`].
    pub(crate) fn with_bql(mut self, field: Option<&BqlField>) -> Result<Self, SpecError> {
        let bql = match field {
            Some(b) => b.resolve("bql")?,
            None => None,
        };
        self.bql = check_bql(bql, &self.qdisc, "bql")?;
        Ok(self)
    }

    /// A lossless link a–b.
    pub(crate) fn link(
        &self,
        name: impl Into<String>,
        a: impl Into<String>,
        b: impl Into<String>,
        rate_bps: u64,
        delay_ns: u64,
    ) -> LinkConf {
        LinkConf {
            name: name.into(),
            a: a.into(),
            b: b.into(),
            rate_bps,
            delay_ns,
            queue_packets: self.queue_packets,
            framing_bytes: self.framing_bytes,
            mtu_bytes: self.mtu_bytes,
            loss_ab: LossConf::None,
            loss_ba: LossConf::None,
            queue_bytes: None,
            capacity_ab: None,
            capacity_ba: None,
            qdisc: self.qdisc.clone(),
            bql: self.bql.clone(),
        }
    }
}

impl Scenario {
    /// Put a preset's parts together and validate the result.
    pub(crate) fn assemble(
        preset: &str,
        nodes: Vec<String>,
        links: Vec<LinkConf>,
        flows: Vec<FlowConf>,
        stop: Option<Dur>,
        trace_interval: Option<Dur>,
        max_events: Option<u64>,
    ) -> Result<Scenario, SpecError> {
        Self::assemble_with_sessions(
            preset,
            nodes,
            links,
            flows,
            Vec::new(),
            stop,
            trace_interval,
            max_events,
        )
    }

    /// [`Scenario::assemble`] with request/response sessions.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn assemble_with_sessions(
        preset: &str,
        nodes: Vec<String>,
        links: Vec<LinkConf>,
        flows: Vec<FlowConf>,
        sessions: Vec<SessionConf>,
        stop: Option<Dur>,
        trace_interval: Option<Dur>,
        max_events: Option<u64>,
    ) -> Result<Scenario, SpecError> {
        let scenario = Scenario {
            preset: preset.into(),
            nodes,
            links,
            flows,
            stop_ns: stop.map(|d| d.0),
            trace_interval_ns: trace_interval.map_or(DEFAULT_TRACE_INTERVAL_NS, |d| d.0),
            max_events,
            media: Vec::new(),
            sessions,
            addresses: Vec::new(),
        };
        scenario.validate()?;
        Ok(scenario)
    }
}

/// A preset's per-flow transfer size (default 100 MB), at least one byte.
pub(crate) fn transfer_size(bytes: Option<Bytes>) -> Result<u64, SpecError> {
    match bytes.map_or(100_000_000, |b| b.0) {
        0 => Err(SpecError::new("bytes", "must be at least 1 byte".into())),
        n => Ok(n),
    }
}

pub(crate) fn check_mtu(path: &str, mtu: Option<Bytes>) -> Result<u32, SpecError> {
    let m = mtu.map_or(u64::from(DEFAULT_MTU_BYTES), |b| b.0);
    if (68..=65_535).contains(&m) {
        Ok(m as u32)
    } else {
        Err(SpecError::new(
            path,
            format!("{m} is outside [68, 65535] bytes (IPv4)"),
        ))
    }
}

pub(crate) fn check_queue(path: &str, q: u32) -> Result<u32, SpecError> {
    if (1..=1_000_000).contains(&q) {
        Ok(q)
    } else {
        Err(SpecError::new(
            path,
            format!("{q} is outside [1, 1000000] packets"),
        ))
    }
}

impl CustomSpec {
    fn resolve(self) -> Result<Scenario, SpecError> {
        let default_qdisc = qdisc_or_default(self.qdisc.as_ref(), self.tcp.as_ref());
        let default_bql = match &self.bql {
            Some(b) => b.resolve("bql")?,
            None => None,
        };
        let links = self
            .links
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let p = format!("links[{i}]");
                let mtu_bytes = check_mtu(&format!("{p}.mtu"), l.mtu)?;
                let qdisc = match &l.qdisc {
                    Some(q) => {
                        if l.capacity_ab.is_some() && l.capacity_ba.is_some() {
                            return Err(SpecError::new(
                                format!("{p}.qdisc"),
                                "both directions are cellular; a queue disc runs only in \
                                 front of a constant-rate direction"
                                    .into(),
                            ));
                        }
                        q.0.resolve(&format!("{p}.qdisc"), mtu_bytes)?
                    }
                    None => default_qdisc.resolve("qdisc", mtu_bytes)?,
                };
                let bql = match &l.bql {
                    Some(b) => {
                        check_bql(b.resolve(&format!("{p}.bql"))?, &qdisc, &format!("{p}.bql"))?
                    }
                    None => check_bql(default_bql.clone(), &qdisc, "bql")?,
                };
                Ok(LinkConf {
                    name: l.name.clone().unwrap_or_else(|| format!("link{i}")),
                    a: l.a.clone(),
                    b: l.b.clone(),
                    rate_bps: match (l.rate, &l.capacity_ab, &l.capacity_ba) {
                        (Some(r), _, _) => r.0,
                        (None, Some(_), Some(_)) => 0,
                        (None, _, _) => {
                            return Err(SpecError::new(
                                format!("{p}.rate"),
                                "missing (required unless both directions are cellular: \
                                 capacity_ab and capacity_ba)"
                                    .into(),
                            ))
                        }
                    },
                    delay_ns: l.delay.0,
                    queue_packets: check_queue(
                        &format!("{p}.queue_packets"),
                        l.queue_packets.unwrap_or(DEFAULT_QUEUE_PACKETS),
                    )?,
                    framing_bytes: l.framing_bytes.unwrap_or(DEFAULT_FRAMING_BYTES),
                    mtu_bytes,
                    loss_ab: l
                        .loss_ab
                        .clone()
                        .unwrap_or_default()
                        .resolve_or(&format!("{p}.loss_ab"), LossKind::None)?,
                    loss_ba: l
                        .loss_ba
                        .clone()
                        .unwrap_or_default()
                        .resolve_or(&format!("{p}.loss_ba"), LossKind::None)?,
                    queue_bytes: l.queue_bytes.map(|b| b.0),
                    capacity_ab: cellular::resolve_opt(
                        l.capacity_ab.as_ref(),
                        &format!("{p}.capacity_ab"),
                    )?,
                    capacity_ba: cellular::resolve_opt(
                        l.capacity_ba.as_ref(),
                        &format!("{p}.capacity_ba"),
                    )?,
                    qdisc,
                    bql,
                })
            })
            .collect::<Result<Vec<_>, SpecError>>()?;
        let flows = self
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let p = format!("flows[{i}]");
                let bytes = f.bytes.or(self.bytes).ok_or_else(|| {
                    SpecError::new(
                        format!("{p}.bytes"),
                        "required (or set a top-level `bytes`)".into(),
                    )
                })?;
                let tcp =
                    merge_tcp(self.tcp.as_ref(), f.tcp.as_ref())?.resolve(&format!("{p}.tcp"))?;
                Ok(FlowConf {
                    name: f.name.clone().unwrap_or_else(|| format!("flow{i}")),
                    src: f.src.clone(),
                    dst: f.dst.clone(),
                    bytes: bytes.0,
                    start_ns: f.start.map_or(0, |d| d.0),
                    tcp,
                })
            })
            .collect::<Result<Vec<_>, SpecError>>()?;
        let media = self
            .media
            .iter()
            .enumerate()
            .map(|(i, m)| m.resolve(i))
            .collect::<Result<Vec<_>, SpecError>>()?;
        let mut scenario = Scenario::assemble(
            "custom",
            self.nodes,
            links,
            flows,
            self.stop,
            self.trace_interval,
            self.max_events,
        )?;
        scenario.media = media;
        scenario.validate()?;
        Ok(scenario)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
    fn custom_topology_resolves_and_hashes_stably() {
        let spec = json!({
            "preset": "custom",
            "nodes": ["a", "b"],
            "links": [{"a": "a", "b": "b", "rate": "1Mbps", "delay": "10ms"}],
            "flows": [{"src": "a", "dst": "b", "bytes": "1MB"}],
        });
        let s = resolve_value(spec.clone()).unwrap();
        assert_eq!(s.links[0].rate_bps, 1_000_000);
        assert_eq!(s.flows[0].name, "flow0");
        assert_eq!(s.hash(), resolve_value(spec).unwrap().hash());
        assert_eq!(s.hash().len(), 16);
        // The resolved form round-trips.
        let back: Scenario = serde_json::from_str(&s.canonical_json()).unwrap();
        assert_eq!(back, s);
    }

    #[test]
    fn custom_topology_errors() {
        let base = |links: serde_json::Value, flows: serde_json::Value| json!({"preset": "custom", "nodes": ["a", "b"], "links": links, "flows": flows});
        let l = json!([{"a": "a", "b": "c", "rate": "1Mbps", "delay": 0}]);
        let f = json!([{"src": "a", "dst": "b", "bytes": 10}]);
        assert!(err(base(l, f.clone())).starts_with("links[0].b: unknown node 'c'"));
        let l = json!([{"a": "a", "b": "b", "rate": "1Mbps", "delay": 0}]);
        assert!(err(base(l.clone(), json!([]))).starts_with("flows: at least one flow"));
        let f2 = json!([{"src": "a", "dst": "b"}]);
        assert!(err(base(l, f2)).starts_with("flows[0].bytes: required"));
    }

    #[test]
    fn flow_tcp_overrides_top_level_tcp() {
        let spec = json!({
            "preset": "custom", "nodes": ["a", "b"],
            "links": [{"a": "a", "b": "b", "rate": "1Mbps", "delay": 0}],
            "tcp": {"mss": 1000, "delayed_ack": false},
            "bytes": 5000,
            "flows": [{"src": "a", "dst": "b", "tcp": {"mss": 500}}],
        });
        let s = resolve_value(spec).unwrap();
        assert_eq!(s.flows[0].tcp.mss, 500);
        assert!(!s.flows[0].tcp.delayed_ack);
    }

    #[test]
    fn loss_conf_round_trip() {
        let c = LossSpec::burst_mean(0.05).resolve("l").unwrap();
        let back: LossConf = serde_json::from_value(serde_json::to_value(&c).unwrap()).unwrap();
        assert_eq!(back, c);
    }
}
