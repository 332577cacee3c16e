//! The resolved scenario ([`Scenario`], [`LinkConf`], [`FlowConf`]) and its
//! contract: [`Scenario::validate`] checks the structure (names, references)
//! and then every part through its [`Validate`] implementation, each beside
//! the spec that resolves it (loss, qdisc, tcp, wifi, cellular, session).

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeSet;

use super::session::SessionConf;
use super::{SpecError, Validate};
use crate::engine::secs;
use crate::metrics::{row_output_bytes, MessageRow};
use crate::net::cellular::CapacityConf;
use crate::net::qdisc::dql::DqlParams;
use crate::net::qdisc::QdiscConf;
use crate::net::wifi::MediumConf;
use crate::net::LossConf;
use crate::tcp::TcpConfig;

/// Link rates, bit/s: at least 1 bit/s, at most 10 Tbit/s.
pub const RATE_RANGE_BPS: (u64, u64) = (1, 10_000_000_000_000);
/// Longest propagation delay, start time or stop time accepted (one day, ns):
/// keeps every sum of simulated times far from the 2⁶⁴ ns limit.
pub const MAX_TIME_NS: u64 = 86_400_000_000_000;
/// Largest link-layer framing overhead per packet, bytes.
pub const MAX_FRAMING_BYTES: u32 = 65_535;
/// Latest `stop` accepted: 30 days of simulated time (ns).
pub const MAX_STOP_NS: u64 = 30 * 86_400_000_000_000;
/// Largest event budget a scenario may set.
pub const MAX_EVENTS: u64 = 1_000_000_000_000;
/// Output budgets a scenario may set: 1 MiB to 1 TiB.
pub const OUTPUT_BYTES_RANGE: (u64, u64) = (1 << 20, 1 << 40);
/// Default output budget of a run: 1 GiB.
pub const DEFAULT_MAX_OUTPUT_BYTES: u64 = 1 << 30;
/// Largest byte limit of a queue: 64 GiB (the limit is a bound, the memory
/// used is what the traffic puts in the queue).
pub const MAX_QUEUE_BYTES: u64 = 1 << 36;
/// Most stations on one medium: the routes are computed over every pair in
/// range (up to 128·127 hops), and each frame costs O(stations) work.
pub const MAX_STATIONS: usize = 128;

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
    /// The output budget, bytes, when the scenario sets one (else the default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_bytes: Option<u64>,
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

/// `v` within `[lo, hi]`, else an error naming the range and `unit`.
pub(crate) fn check_range(
    path: String,
    v: u64,
    (lo, hi): (u64, u64),
    unit: &str,
) -> Result<(), SpecError> {
    if (lo..=hi).contains(&v) {
        Ok(())
    } else {
        Err(SpecError::new(
            path,
            format!("{v} is outside [{lo}, {hi}]{unit}"),
        ))
    }
}

/// The node names, to check references against.
struct Nodes<'a> {
    list: &'a [String],
    names: BTreeSet<&'a str>,
}

impl Nodes<'_> {
    fn known(&self, path: String, n: &str) -> Result<(), SpecError> {
        if self.names.contains(n) {
            Ok(())
        } else {
            Err(SpecError::new(
                path,
                format!("unknown node '{n}' (nodes: {})", self.list.join(", ")),
            ))
        }
    }
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

    /// The whole contract: the structure, then every part's values, then the
    /// run's limits. [`super::plan`] calls it before it builds anything.
    pub fn validate(&self) -> Result<(), SpecError> {
        self.check_structure()?;
        for (i, l) in self.links.iter().enumerate() {
            l.validate(&format!("links[{i}]"))?;
        }
        for (i, m) in self.media.iter().enumerate() {
            m.validate(&format!("media[{i}]"))?;
        }
        for (i, f) in self.flows.iter().enumerate() {
            f.validate(&format!("flows[{i}]"))?;
        }
        for (i, c) in self.sessions.iter().enumerate() {
            c.validate(&format!("sessions[{i}]"))?;
        }
        self.check_flow_names()?;
        if let Some(stop) = self.stop_ns {
            check_range("stop".into(), stop, (1, MAX_STOP_NS), " ns")?;
            self.check_starts_before(stop)?;
        }
        if let Some(n) = self.max_events {
            check_range("max_events".into(), n, (1, MAX_EVENTS), " events")?;
        }
        if let Some(n) = self.max_output_bytes {
            check_range("max_output_bytes".into(), n, OUTPUT_BYTES_RANGE, " bytes")?;
        }
        self.check_message_rows()?;
        check_range(
            "trace_interval".into(),
            self.trace_interval_ns,
            (1, MAX_TIME_NS),
            " ns",
        )
    }

    /// The run's output budget, bytes.
    pub fn output_budget(&self) -> u64 {
        self.max_output_bytes.unwrap_or(DEFAULT_MAX_OUTPUT_BYTES)
    }

    /// Bytes of the sessions' message rows: one per exchange, kept in memory
    /// (known before the run: every exchange a session may make).
    pub fn message_output_bytes(&self) -> u64 {
        let exchanges: u64 = self
            .sessions
            .iter()
            .flat_map(|c| &c.steps)
            .map(|s| u64::from(s.repeats))
            .sum();
        exchanges * row_output_bytes(MessageRow::COLUMNS, true)
    }

    /// The sessions' message rows fit in the output budget.
    fn check_message_rows(&self) -> Result<(), SpecError> {
        let (bytes, budget) = (self.message_output_bytes(), self.output_budget());
        if bytes <= budget {
            return Ok(());
        }
        let row = row_output_bytes(MessageRow::COLUMNS, true);
        Err(SpecError::new(
            "max_output_bytes",
            format!(
                "{} exchanges in {} session(s) make as many message rows, {bytes} bytes \
                 in memory at {row} B a row, above the budget of {budget} bytes; raise \
                 max_output_bytes (the rows need about that much memory) or shorten the \
                 sessions",
                bytes / row,
                self.sessions.len(),
            ),
        ))
    }

    /// Names and references: what every preset's output must pass as it is
    /// assembled.
    pub(crate) fn check_structure(&self) -> Result<(), SpecError> {
        let nodes = self.check_nodes()?;
        let mut names = self.check_links(&nodes)?;
        self.check_media(&nodes, &mut names)?;
        self.check_flows(&nodes)?;
        self.check_sessions(&nodes)?;
        if self.trace_interval_ns == 0 {
            return Err(SpecError::new("trace_interval", "must be positive".into()));
        }
        Ok(())
    }

    fn check_nodes(&self) -> Result<Nodes<'_>, SpecError> {
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
        Ok(Nodes {
            list: &self.nodes,
            names,
        })
    }

    /// Link ends and names; returns the link names (media share them).
    fn check_links(&self, nodes: &Nodes) -> Result<BTreeSet<&str>, SpecError> {
        let mut names = BTreeSet::new();
        for (i, l) in self.links.iter().enumerate() {
            nodes.known(format!("links[{i}].a"), &l.a)?;
            nodes.known(format!("links[{i}].b"), &l.b)?;
            if l.a == l.b {
                return Err(SpecError::new(
                    format!("links[{i}].b"),
                    "a link must join two different nodes".into(),
                ));
            }
            if !names.insert(l.name.as_str()) {
                return Err(SpecError::new(
                    format!("links[{i}].name"),
                    format!("duplicate link name '{}'", l.name),
                ));
            }
        }
        Ok(names)
    }

    fn check_media<'a>(
        &'a self,
        nodes: &Nodes,
        names: &mut BTreeSet<&'a str>,
    ) -> Result<(), SpecError> {
        for (i, m) in self.media.iter().enumerate() {
            if !names.insert(m.name.as_str()) {
                return Err(SpecError::new(
                    format!("media[{i}].name"),
                    format!("duplicate link or medium name '{}'", m.name),
                ));
            }
            let mut on = BTreeSet::new();
            for (k, n) in m.nodes.iter().enumerate() {
                nodes.known(format!("media[{i}].nodes[{k}]"), n)?;
                if !on.insert(n.as_str()) {
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
        Ok(())
    }

    fn check_flows(&self, nodes: &Nodes) -> Result<(), SpecError> {
        if self.flows.is_empty() && self.sessions.is_empty() {
            return Err(SpecError::new(
                "flows",
                "at least one flow or session is required".into(),
            ));
        }
        let mut names = BTreeSet::new();
        for (i, f) in self.flows.iter().enumerate() {
            nodes.known(format!("flows[{i}].src"), &f.src)?;
            nodes.known(format!("flows[{i}].dst"), &f.dst)?;
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
            if !names.insert(f.name.as_str()) {
                return Err(SpecError::new(
                    format!("flows[{i}].name"),
                    format!("duplicate flow name '{}'", f.name),
                ));
            }
        }
        Ok(())
    }

    fn check_sessions(&self, nodes: &Nodes) -> Result<(), SpecError> {
        let mut names = BTreeSet::new();
        for (i, c) in self.sessions.iter().enumerate() {
            nodes.known(format!("sessions[{i}].client"), &c.client)?;
            nodes.known(format!("sessions[{i}].server"), &c.server)?;
            if c.client == c.server {
                return Err(SpecError::new(
                    format!("sessions[{i}].server"),
                    "a session's client and server must differ".into(),
                ));
            }
            if !names.insert(c.name.as_str()) {
                return Err(SpecError::new(
                    format!("sessions[{i}].name"),
                    format!("duplicate session name '{}'", c.name),
                ));
            }
        }
        Ok(())
    }

    /// Every flow and session starts before `stop`: one that starts at or
    /// after it would never run.
    fn check_starts_before(&self, stop: u64) -> Result<(), SpecError> {
        let flows = self.flows.iter().enumerate();
        let flows = flows.map(|(i, f)| (format!("flows[{i}].start_ns"), f.start_ns));
        let sessions = self.sessions.iter().enumerate();
        let sessions = sessions.map(|(i, c)| (format!("sessions[{i}].start_ns"), c.start_ns));
        match flows.chain(sessions).find(|(_, start)| *start >= stop) {
            Some((field, start)) => Err(SpecError::new(
                "stop",
                format!(
                    "{} is not after {field}, {}: a flow or session that starts at \
                     or after the stop never runs",
                    secs(stop),
                    secs(start)
                ),
            )),
            None => Ok(()),
        }
    }

    /// A session runs as two flows, `<session>/requests` and
    /// `<session>/responses`: no bulk flow may carry either name.
    fn check_flow_names(&self) -> Result<(), SpecError> {
        let halves = self.sessions.iter().flat_map(|c| {
            [
                format!("{}/requests", c.name),
                format!("{}/responses", c.name),
            ]
        });
        let mut names = BTreeSet::new();
        for name in self.flows.iter().map(|f| f.name.clone()).chain(halves) {
            if !names.insert(name.clone()) {
                return Err(SpecError::new(
                    "sessions",
                    format!("flow name '{name}' is used twice (a session's flows are <session>/requests and <session>/responses)"),
                ));
            }
        }
        Ok(())
    }
}

impl Validate for LinkConf {
    fn validate(&self, path: &str) -> Result<(), SpecError> {
        let p = |f: &str| format!("{path}.{f}");
        if self.queue_packets == 0 {
            return Err(SpecError::new(
                p("queue_packets"),
                "0 is outside [1, 1000000]".into(),
            ));
        }
        if self.capacity_ab.is_none() || self.capacity_ba.is_none() {
            check_range(p("rate_bps"), self.rate_bps, RATE_RANGE_BPS, " bit/s")?;
        }
        for (field, cap) in [
            ("capacity_ab", &self.capacity_ab),
            ("capacity_ba", &self.capacity_ba),
        ] {
            if let Some(cap) = cap {
                cap.validate(&p(field))?;
            }
        }
        if let Some(b) = self.queue_bytes {
            check_range(p("queue_bytes"), b, (1, MAX_QUEUE_BYTES), " bytes")?;
        }
        check_range(p("delay_ns"), self.delay_ns, (0, MAX_TIME_NS), " ns")?;
        check_range(
            p("framing_bytes"),
            u64::from(self.framing_bytes),
            (0, u64::from(MAX_FRAMING_BYTES)),
            " bytes",
        )?;
        check_range(
            p("mtu_bytes"),
            u64::from(self.mtu_bytes),
            (68, 65_535),
            " bytes (IPv4)",
        )?;
        self.loss_ab.validate(&p("loss_ab"))?;
        self.loss_ba.validate(&p("loss_ba"))?;
        if let Some(q) = &self.qdisc {
            q.validate(&p("qdisc"))?;
        }
        super::qdisc::check_bql(self.bql.as_ref(), self.qdisc.as_ref(), &p("bql"))
    }
}

impl Validate for FlowConf {
    fn validate(&self, path: &str) -> Result<(), SpecError> {
        check_range(
            format!("{path}.start_ns"),
            self.start_ns,
            (0, MAX_TIME_NS),
            " ns",
        )?;
        self.tcp.validate(&format!("{path}.tcp"))
    }
}
