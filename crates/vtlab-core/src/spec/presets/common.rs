//! What the presets share: the fields every preset has ([`Common`]: the
//! transfer size, the TCP settings and the run's stop, trace interval and
//! event budget), the per-link fields of the presets built from
//! point-to-point links ([`Wired`]), and the link template they fill.

use crate::engine::secs;
use crate::net::qdisc::dql::DqlParams;
use crate::net::qdisc::QdiscConf;
use crate::net::LossConf;
use crate::spec::qdisc::{check_bql, default_for_profile};
use crate::spec::scenario::{check_range, MAX_FRAMING_BYTES, MAX_TIME_NS, RATE_RANGE_BPS};
use crate::spec::units::{Bytes, Dur, Rate};
use crate::spec::{
    BqlField, FlowConf, LinkConf, LossKind, LossSpec, QdiscField, QdiscSpec, Scenario, SessionConf,
    SpecError, TcpSpec,
};
use crate::tcp::cc::Profile;
use crate::tcp::TcpConfig;

pub const DEFAULT_QUEUE_PACKETS: u32 = 100;
pub const DEFAULT_FRAMING_BYTES: u32 = 2;
pub const DEFAULT_MTU_BYTES: u32 = 1500;
pub const DEFAULT_TRACE_INTERVAL_NS: u64 = 10_000_000;
/// A preset's transfer size per flow unless it says otherwise (100 MB).
pub const DEFAULT_TRANSFER_BYTES: u64 = 100_000_000;

/// The fields every preset has, as its spec gives them.
pub(crate) struct Common<'a> {
    /// Transfer size per flow.
    pub bytes: Option<Bytes>,
    /// TCP settings of every flow.
    pub tcp: Option<&'a TcpSpec>,
    /// The run's end as the spec gives it...
    pub stop: Option<Dur>,
    /// ... and the preset's own default when it has one (ns).
    pub default_stop: Option<u64>,
    pub trace_interval: Option<Dur>,
    /// Event budget of one run (default: [`crate::spec::DEFAULT_MAX_EVENTS`]).
    pub max_events: Option<u64>,
    /// Output budget of one run (default: [`crate::spec::DEFAULT_MAX_OUTPUT_BYTES`]).
    pub max_output_bytes: Option<Bytes>,
}

impl Common<'_> {
    /// The transfer size per flow (`default` unless set), at least one byte.
    pub fn transfer_size(&self, default: u64) -> Result<u64, SpecError> {
        match self.bytes.map_or(default, |b| b.0) {
            0 => Err(SpecError::new("bytes", "must be at least 1 byte".into())),
            n => Ok(n),
        }
    }

    /// The TCP settings of every flow, resolved.
    pub fn tcp(&self) -> Result<TcpConfig, SpecError> {
        self.tcp.cloned().unwrap_or_default().resolve("tcp")
    }

    /// The run's end (ns): `stop`, else the preset's default, if any.
    pub fn stop_ns(&self) -> Option<u64> {
        self.stop.map(|d| d.0).or(self.default_stop)
    }

    /// A flow's or session's start (ns; `None`: beyond 2⁶⁴ ns), which the
    /// spec field `field` gives, `what` naming it in errors (e.g. "ev21's
    /// transfer start (20 × stagger)"):
    /// at most one day, and before the run's stop (one that starts at or
    /// after it would never run). An error names `field`, or `stop` when the
    /// spec gives the stop the start contradicts.
    pub fn check_start(
        &self,
        field: &str,
        what: &str,
        start: Option<u64>,
    ) -> Result<u64, SpecError> {
        let limit = secs(MAX_TIME_NS);
        let start = match start {
            Some(s) if s <= MAX_TIME_NS => s,
            Some(s) => {
                return Err(SpecError::new(
                    field,
                    format!(
                        "{what} is {}, after the latest start accepted ({limit}, one day)",
                        secs(s)
                    ),
                ))
            }
            None => {
                return Err(SpecError::new(
                    field,
                    format!("{what} is after the latest start accepted ({limit}, one day)"),
                ))
            }
        };
        match (self.stop, self.default_stop) {
            (Some(stop), _) if start >= stop.0 => Err(SpecError::new(
                "stop",
                format!(
                    "{} is not after {what}, {}: a flow or session that starts at \
                     or after the stop never runs",
                    secs(stop.0),
                    secs(start)
                ),
            )),
            (None, Some(stop)) if start >= stop => Err(SpecError::new(
                field,
                format!(
                    "{what} is {}, not before stop ({}, the default): a flow or \
                     session that starts at or after the stop never runs; set stop",
                    secs(start),
                    secs(stop)
                ),
            )),
            _ => Ok(start),
        }
    }

    /// Put the preset's parts together with the run settings and check the
    /// structure.
    pub fn assemble(
        &self,
        preset: &str,
        nodes: Vec<String>,
        links: Vec<LinkConf>,
        flows: Vec<FlowConf>,
        sessions: Vec<SessionConf>,
    ) -> Result<Scenario, SpecError> {
        let scenario = Scenario {
            preset: preset.into(),
            nodes,
            links,
            flows,
            stop_ns: self.stop_ns(),
            trace_interval_ns: self
                .trace_interval
                .map_or(DEFAULT_TRACE_INTERVAL_NS, |d| d.0),
            max_events: self.max_events,
            max_output_bytes: self.max_output_bytes.map(|b| b.0),
            media: Vec::new(),
            sessions,
            addresses: Vec::new(),
        };
        scenario.check_structure()?;
        Ok(scenario)
    }
}

/// The per-link fields of the presets built from point-to-point links.
pub(crate) struct Wired<'a> {
    /// Transmit-queue limit of every link direction, packets.
    pub queue_packets: Option<u32>,
    pub framing_bytes: Option<u32>,
    /// IP MTU of every link (default 1500).
    pub mtu: Option<Bytes>,
    /// Root queue disc of every link direction (default: the TCP profile's).
    pub qdisc: Option<&'a QdiscField>,
    /// Byte queue limits on every device queue (needs a qdisc; default off).
    pub bql: Option<&'a BqlField>,
    /// Loss toward the receivers on the lossy link...
    pub loss: Option<&'a LossSpec>,
    /// ... and back (default: none).
    pub reverse_loss: Option<&'a LossSpec>,
}

impl Wired<'_> {
    /// The template of every link, its queue disc by `tcp`'s profile unless set.
    pub fn template(&self, tcp: Option<&TcpSpec>) -> Result<LinkTemplate, SpecError> {
        LinkTemplate::new(self.queue_packets, self.framing_bytes, self.mtu)?
            .with_qdisc(self.qdisc, tcp)?
            .with_bql(self.bql)
    }

    /// The lossy direction's model (`kind` unless the spec names one) and
    /// the reverse direction's.
    pub fn losses(&self, kind: LossKind) -> Result<(LossConf, LossConf), SpecError> {
        let loss = self.loss.cloned().unwrap_or_default();
        let reverse = self.reverse_loss.cloned().unwrap_or_default();
        Ok((
            loss.resolve_or("loss", kind)?,
            reverse.resolve_or("reverse_loss", LossKind::None)?,
        ))
    }
}

/// The queue disc a preset's `qdisc` field names, or its TCP profile's default.
pub(crate) fn qdisc_or_default(field: Option<&QdiscField>, tcp: Option<&TcpSpec>) -> QdiscSpec {
    match field {
        Some(q) => q.0.clone(),
        None => default_for_profile(tcp.and_then(|t| t.profile).unwrap_or(Profile::Ns3)),
    }
}

/// Per-link settings shared by every link a preset builds.
pub(crate) struct LinkTemplate {
    queue_packets: u32,
    framing_bytes: u32,
    mtu_bytes: u32,
    qdisc: Option<QdiscConf>,
    bql: Option<DqlParams>,
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
            framing_bytes: check_framing("framing_bytes", framing)?,
            mtu_bytes: check_mtu("mtu", mtu)?,
            qdisc: None,
            bql: None,
        })
    }

    /// Put the queue disc `field` names (else the profile's default, see
    /// [`default_for_profile`]) on every link of the template.
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
        self.bql = match field {
            Some(b) => b.resolve("bql")?,
            None => None,
        };
        check_bql(self.bql.as_ref(), self.qdisc.as_ref(), "bql")?;
        Ok(self)
    }

    /// A lossless link a–b, its rate and delay checked ([`rate`], [`delay`]).
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

/// A link's IP MTU (default 1500) within IPv4's [68, 65535] bytes.
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

/// A queue limit within [1, 1000000] packets.
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

/// A link-layer framing overhead (default 2 B) within [0, 65535] bytes.
pub(crate) fn check_framing(path: &str, framing: Option<u32>) -> Result<u32, SpecError> {
    let f = framing.unwrap_or(DEFAULT_FRAMING_BYTES);
    check_range(
        path.into(),
        u64::from(f),
        (0, u64::from(MAX_FRAMING_BYTES)),
        " bytes",
    )?;
    Ok(f)
}

/// A link rate a spec field gives (`default` unless set), within
/// [`RATE_RANGE_BPS`].
pub(crate) fn rate(path: &str, r: Option<Rate>, default: u64) -> Result<u64, SpecError> {
    let bps = r.map_or(default, |r| r.0);
    check_range(path.into(), bps, RATE_RANGE_BPS, " bit/s")?;
    Ok(bps)
}

/// A one-way delay a spec field gives (`default` unless set): at most one day.
pub(crate) fn delay(path: &str, d: Option<Dur>, default: u64) -> Result<u64, SpecError> {
    let ns = d.map_or(default, |d| d.0);
    if ns > MAX_TIME_NS {
        return Err(SpecError::new(
            path,
            format!(
                "{} is outside [0, {}] (at most one day)",
                secs(ns),
                secs(MAX_TIME_NS)
            ),
        ));
    }
    Ok(ns)
}
