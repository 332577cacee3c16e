//! The V2G charging-cable preset (Park et al. 2019, Fig. 3): the server SA
//! behind a WAN link to the charger's controller SECC, and the HomePlug Green
//! PHY power-line link from the SECC to the vehicle's controller EVCC, the
//! bottleneck, with bursty impulse-noise losses toward the vehicle.
//!
//! SA —(500 Mbit/s, 0.9 ms)— SECC —(10 Mbit/s, 0.9 ms, loss toward EVCC)— EVCC
//!
//! One bulk transfer SA → EVCC. The default loss model is ns-3's burst model
//! with sizes 1..4, as in the study; `loss.mean_loss` is the mean loss rate
//! (the study's x-axis), converted to a burst-start probability.

use serde::Deserialize;

use super::common::{delay, rate, Common, Wired, DEFAULT_TRANSFER_BYTES};
use crate::spec::units::{Bytes, Dur, Rate};
use crate::spec::{BqlField, FlowConf, QdiscField, Scenario, SpecError};
use crate::spec::{LossKind, LossSpec, SessionSpec, TcpSpec};

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct V2gSpec {
    /// Transfer size (default 100 MB).
    pub bytes: Option<Bytes>,
    pub start: Option<Dur>,
    pub stop: Option<Dur>,
    pub wan_rate: Option<Rate>,
    pub wan_delay: Option<Dur>,
    pub plc_rate: Option<Rate>,
    pub plc_delay: Option<Dur>,
    /// Transmit-queue limit of every link direction, packets.
    pub queue_packets: Option<u32>,
    pub framing_bytes: Option<u32>,
    /// Root queue disc of every link direction: a name (none, pfifo_fast,
    /// fq_codel, codel, red, pie) or a table of attributes (default: the TCP
    /// profile's; fq_codel for ns3, as stock ns-3.44 installs).
    pub qdisc: Option<QdiscField>,
    /// Byte queue limits on every device queue (needs a qdisc; default off).
    pub bql: Option<BqlField>,
    /// IP MTU of every link (default 1500).
    pub mtu: Option<Bytes>,
    /// Loss on the PLC link toward the vehicle (default model: burst).
    pub loss: Option<LossSpec>,
    /// Loss on the PLC link toward the charger (default: none).
    pub reverse_loss: Option<LossSpec>,
    pub tcp: Option<TcpSpec>,
    pub trace_interval: Option<Dur>,
    /// Event budget of one run (default: [`crate::spec::DEFAULT_MAX_EVENTS`]).
    pub max_events: Option<u64>,
    /// Output budget of one run (default: [`crate::spec::DEFAULT_MAX_OUTPUT_BYTES`]).
    pub max_output_bytes: Option<Bytes>,
    /// A request/response session EVCC ↔ SECC (ISO 15118); with it the bulk
    /// transfer runs only if `bytes` is given.
    pub session: Option<SessionSpec>,
}

impl V2gSpec {
    fn common(&self) -> Common<'_> {
        Common {
            bytes: self.bytes,
            tcp: self.tcp.as_ref(),
            stop: self.stop,
            default_stop: None,
            trace_interval: self.trace_interval,
            max_events: self.max_events,
            max_output_bytes: self.max_output_bytes,
        }
    }

    fn wired(&self) -> Wired<'_> {
        Wired {
            queue_packets: self.queue_packets,
            framing_bytes: self.framing_bytes,
            mtu: self.mtu,
            qdisc: self.qdisc.as_ref(),
            bql: self.bql.as_ref(),
            loss: self.loss.as_ref(),
            reverse_loss: self.reverse_loss.as_ref(),
        }
    }

    pub fn resolve(self) -> Result<Scenario, SpecError> {
        let (common, wired) = (self.common(), self.wired());
        let t = wired.template(self.tcp.as_ref())?;
        let wan = t.link(
            "wan",
            "sa",
            "secc",
            rate("wan_rate", self.wan_rate, 500_000_000)?,
            delay("wan_delay", self.wan_delay, 900_000)?,
        );
        let mut plc = t.link(
            "plc",
            "secc",
            "evcc",
            rate("plc_rate", self.plc_rate, 10_000_000)?,
            delay("plc_delay", self.plc_delay, 900_000)?,
        );
        (plc.loss_ab, plc.loss_ba) = wired.losses(LossKind::Burst)?;
        let mut sessions = Vec::new();
        if let Some(s) = &self.session {
            let c = s.resolve("session", "session", "evcc", "secc", self.tcp.as_ref())?;
            let what = "the session's start";
            common.check_start("session.start", what, Some(c.start_ns))?;
            sessions.push(c);
        }
        let mut flows = Vec::new();
        if sessions.is_empty() || self.bytes.is_some() {
            let start = self.start.map_or(0, |d| d.0);
            flows.push(FlowConf {
                name: "evcc".into(),
                src: "sa".into(),
                dst: "evcc".into(),
                bytes: common.transfer_size(DEFAULT_TRANSFER_BYTES)?,
                start_ns: common.check_start("start", "the transfer's start", Some(start))?,
                tcp: common.tcp()?,
            });
        }
        let nodes = vec!["sa".into(), "secc".into(), "evcc".into()];
        let mut scenario = common.assemble("v2g", nodes, vec![wan, plc], flows, sessions)?;
        // validation/ns3/v2g.cc's addresses (what FQ-CoDel hashes): SA on the
        // WAN 10.1.1.0/24, SECC and EVCC on the PLC 10.1.2.0/24.
        scenario.addresses = vec![[10, 1, 1, 1], [10, 1, 2, 1], [10, 1, 2, 2]];
        Ok(scenario)
    }
}

#[cfg(test)]
mod tests {
    use crate::net::LossConf;
    use crate::spec::resolve_value;
    use serde_json::json;

    #[test]
    fn defaults_are_the_study_setup() {
        let s = resolve_value(json!({"preset": "v2g"})).unwrap();
        assert_eq!(s.nodes, ["sa", "secc", "evcc"]);
        assert_eq!(s.links[0].rate_bps, 500_000_000);
        assert_eq!(s.links[1].rate_bps, 10_000_000);
        assert_eq!(s.links[1].delay_ns, 900_000);
        assert_eq!(s.flows[0].bytes, 100_000_000);
        assert_eq!(s.flows[0].tcp.mss, 1460);
        assert_eq!(s.flows[0].tcp.recv_buffer, 131_072);
        assert_eq!(
            s.links[1].loss_ab,
            LossConf::Burst {
                burst_start: 0.0,
                burst_min: 1,
                burst_max: 4,
                mean_loss: 0.0
            }
        );
    }

    #[test]
    fn mean_loss_becomes_a_burst_start_probability() {
        let s = resolve_value(json!({"preset": "v2g", "loss": {"mean_loss": "5%"}})).unwrap();
        let LossConf::Burst {
            burst_start,
            mean_loss,
            ..
        } = s.links[1].loss_ab
        else {
            panic!()
        };
        assert!((burst_start - 0.0204).abs() < 1e-4);
        assert!((mean_loss - 0.05).abs() < 1e-12);
    }

    #[test]
    fn zero_bytes_names_the_field() {
        let e = resolve_value(json!({"preset": "v2g", "bytes": 0})).unwrap_err();
        assert_eq!(e.to_string(), "bytes: must be at least 1 byte");
    }

    #[test]
    fn overrides_apply() {
        let s = resolve_value(json!({
            "preset": "v2g", "plc_rate": "5Mbps", "wan_delay": "10ms", "bytes": "1MB",
            "loss": {"model": "bernoulli", "mean_loss": 0.01}, "tcp": {"delayed_ack": false},
        }))
        .unwrap();
        assert_eq!(s.links[1].rate_bps, 5_000_000);
        assert_eq!(s.links[0].delay_ns, 10_000_000);
        assert_eq!(s.flows[0].bytes, 1_000_000);
        assert_eq!(s.links[1].loss_ab, LossConf::Bernoulli { mean_loss: 0.01 });
        assert!(!s.flows[0].tcp.delayed_ack);
    }
}
