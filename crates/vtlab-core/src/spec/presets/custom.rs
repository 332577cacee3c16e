//! The `custom` preset: explicit nodes, point-to-point links, 802.11 media
//! and flows. Top-level `bytes`, `tcp`, `qdisc` and `bql` are defaults for
//! every flow or link; a flow's or link's own fields override them.

use serde::Deserialize;

use super::common::DEFAULT_QUEUE_PACKETS;
use super::common::{check_framing, check_mtu, check_queue, delay, qdisc_or_default, rate, Common};
use crate::net::qdisc::dql::DqlParams;
use crate::spec::qdisc::check_bql;
use crate::spec::scenario::{check_range, MAX_QUEUE_BYTES};
use crate::spec::tcp::resolve_over;
use crate::spec::units::{Bytes, Dur, Rate};
use crate::spec::{cellular, wifi};
use crate::spec::{
    BqlField, FlowConf, LinkConf, LossKind, LossSpec, QdiscField, QdiscSpec, Scenario, SpecError,
    TcpSpec,
};

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
pub(super) struct CustomSpec {
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
    /// [`crate::spec::qdisc::default_for_profile`]).
    qdisc: Option<QdiscField>,
    /// Byte queue limits of every link (default: off).
    bql: Option<BqlField>,
    stop: Option<Dur>,
    trace_interval: Option<Dur>,
    max_events: Option<u64>,
    /// Output budget of one run (default: [`crate::spec::DEFAULT_MAX_OUTPUT_BYTES`]).
    max_output_bytes: Option<Bytes>,
}

/// The top-level queue disc and byte queue limits every link takes unless
/// it sets its own.
struct LinkDefaults {
    qdisc: QdiscSpec,
    bql: Option<DqlParams>,
}

impl LinkSpec {
    fn resolve(&self, i: usize, defaults: &LinkDefaults) -> Result<LinkConf, SpecError> {
        let p = format!("links[{i}]");
        let mtu_bytes = check_mtu(&format!("{p}.mtu"), self.mtu)?;
        let qdisc = match &self.qdisc {
            Some(q) => {
                if self.capacity_ab.is_some() && self.capacity_ba.is_some() {
                    return Err(SpecError::new(
                        format!("{p}.qdisc"),
                        "both directions are cellular; a queue disc runs only in \
                         front of a constant-rate direction"
                            .into(),
                    ));
                }
                q.0.resolve(&format!("{p}.qdisc"), mtu_bytes)?
            }
            None => defaults.qdisc.resolve("qdisc", mtu_bytes)?,
        };
        let bql = match &self.bql {
            Some(b) => {
                let bql = b.resolve(&format!("{p}.bql"))?;
                check_bql(bql.as_ref(), qdisc.as_ref(), &format!("{p}.bql"))?;
                bql
            }
            None => {
                check_bql(defaults.bql.as_ref(), qdisc.as_ref(), "bql")?;
                defaults.bql.clone()
            }
        };
        let loss = |spec: &Option<LossSpec>, field: &str| {
            let spec = spec.clone().unwrap_or_default();
            spec.resolve_or(&format!("{p}.{field}"), LossKind::None)
        };
        let capacity = |spec: &Option<cellular::CapacitySpec>, field: &str| {
            cellular::resolve_opt(spec.as_ref(), &format!("{p}.{field}"))
        };
        Ok(LinkConf {
            name: self.name.clone().unwrap_or_else(|| format!("link{i}")),
            a: self.a.clone(),
            b: self.b.clone(),
            rate_bps: self.rate_bps(&p)?,
            delay_ns: delay(&format!("{p}.delay"), Some(self.delay), 0)?,
            queue_packets: check_queue(
                &format!("{p}.queue_packets"),
                self.queue_packets.unwrap_or(DEFAULT_QUEUE_PACKETS),
            )?,
            framing_bytes: check_framing(&format!("{p}.framing_bytes"), self.framing_bytes)?,
            mtu_bytes,
            loss_ab: loss(&self.loss_ab, "loss_ab")?,
            loss_ba: loss(&self.loss_ba, "loss_ba")?,
            queue_bytes: self.queue_bytes(&p)?,
            capacity_ab: capacity(&self.capacity_ab, "capacity_ab")?,
            capacity_ba: capacity(&self.capacity_ba, "capacity_ba")?,
            qdisc,
            bql,
        })
    }

    /// The byte limit of each direction's queue, if any.
    fn queue_bytes(&self, p: &str) -> Result<Option<u64>, SpecError> {
        let Some(b) = self.queue_bytes else {
            return Ok(None);
        };
        let path = format!("{p}.queue_bytes");
        check_range(path, b.0, (1, MAX_QUEUE_BYTES), " bytes")?;
        Ok(Some(b.0))
    }

    /// The rate; 0 (unused) when both directions are cellular.
    fn rate_bps(&self, p: &str) -> Result<u64, SpecError> {
        match (self.rate, &self.capacity_ab, &self.capacity_ba) {
            (Some(r), _, _) => rate(&format!("{p}.rate"), Some(r), 0),
            (None, Some(_), Some(_)) => Ok(0),
            (None, _, _) => Err(SpecError::new(
                format!("{p}.rate"),
                "missing (required unless both directions are cellular: \
                 capacity_ab and capacity_ba)"
                    .into(),
            )),
        }
    }
}

impl CustomSpec {
    pub(super) fn resolve(self) -> Result<Scenario, SpecError> {
        let defaults = LinkDefaults {
            qdisc: qdisc_or_default(self.qdisc.as_ref(), self.tcp.as_ref()),
            bql: match &self.bql {
                Some(b) => b.resolve("bql")?,
                None => None,
            },
        };
        let links = self
            .links
            .iter()
            .enumerate()
            .map(|(i, l)| l.resolve(i, &defaults))
            .collect::<Result<Vec<_>, SpecError>>()?;
        let media = self
            .media
            .iter()
            .enumerate()
            .map(|(i, m)| m.resolve(i))
            .collect::<Result<Vec<_>, SpecError>>()?;
        let common = Common {
            bytes: self.bytes,
            tcp: self.tcp.as_ref(),
            stop: self.stop,
            default_stop: None,
            trace_interval: self.trace_interval,
            max_events: self.max_events,
            max_output_bytes: self.max_output_bytes,
        };
        let flows = self
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| self.flow(i, f, &common))
            .collect::<Result<Vec<_>, SpecError>>()?;
        let mut scenario = common.assemble("custom", self.nodes, links, flows, Vec::new())?;
        scenario.media = media;
        scenario.check_structure()?;
        Ok(scenario)
    }

    fn flow(&self, i: usize, f: &FlowSpec, common: &Common) -> Result<FlowConf, SpecError> {
        let p = format!("flows[{i}]");
        let bytes = f.bytes.or(self.bytes).ok_or_else(|| {
            SpecError::new(
                format!("{p}.bytes"),
                "required (or set a top-level `bytes`)".into(),
            )
        })?;
        let tcp = resolve_over(
            self.tcp.as_ref(),
            f.tcp.as_ref(),
            &format!("{p}.tcp"),
            "tcp",
        )?;
        Ok(FlowConf {
            name: f.name.clone().unwrap_or_else(|| format!("flow{i}")),
            src: f.src.clone(),
            dst: f.dst.clone(),
            bytes: bytes.0,
            start_ns: common.check_start(
                &format!("{p}.start"),
                &format!("flows[{i}]'s start"),
                Some(f.start.map_or(0, |d| d.0)),
            )?,
            tcp,
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::spec::{resolve_value, Scenario};
    use serde_json::json;

    fn err(v: serde_json::Value) -> String {
        resolve_value(v).unwrap_err().to_string()
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
}
