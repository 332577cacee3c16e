//! The charging-station preset (Park et al. 2019, §3.2 and Fig. 5): N vehicles
//! charging at once, k of them sharing each 10 Mbit/s power-line segment, all
//! downloading from one server SA behind a WAN link and a switch.
//!
//! ```text
//! SA —(WAN 500 Mbit/s, 10 ms)— switch —(PLC segment j: 10 Mbit/s, 0.9 ms)— seg j
//!                                                         seg j —(access)— ev i  (k per segment)
//! ```
//!
//! The shared segment is modelled by its transmitter: all traffic toward the k
//! vehicles of a segment queues for one 10 Mbit/s drop-tail transmitter (and the
//! ACKs of the k vehicles for one in the other direction), then reaches each
//! vehicle over a fast, zero-delay access hop. That hop carries the vehicle's
//! own loss stream, so each vehicle's PLC path loses packets independently
//! while lost packets still consumed segment capacity. One bulk transfer
//! SA → ev i per vehicle, started `stagger` apart.

use serde::Deserialize;

use super::common::{delay, rate, Common, LinkTemplate, Wired, DEFAULT_TRANSFER_BYTES};
use crate::spec::units::{Bytes, Dur, Rate};
use crate::spec::{BqlField, FlowConf, LinkConf, QdiscField, Scenario, SpecError};
use crate::spec::{LossKind, LossSpec, SessionConf, SessionSpec, TcpSpec};

/// Rate of the access hop between a segment and a vehicle: fast enough never
/// to be a bottleneck (the segment is).
const ACCESS_RATE_BPS: u64 = 10_000_000_000;

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StationSpec {
    /// Number of vehicles (default 21).
    pub vehicles: Option<u32>,
    /// Vehicles sharing one PLC segment (default 3).
    pub vehicles_per_segment: Option<u32>,
    /// Transfer size per vehicle (default 100 MB).
    pub bytes: Option<Bytes>,
    /// Flow i (from 0) starts at i × stagger (default 2 ms).
    pub stagger: Option<Dur>,
    pub stop: Option<Dur>,
    pub wan_rate: Option<Rate>,
    pub wan_delay: Option<Dur>,
    pub plc_rate: Option<Rate>,
    pub plc_delay: Option<Dur>,
    pub queue_packets: Option<u32>,
    pub framing_bytes: Option<u32>,
    /// Root queue disc of every link direction: a name (none, pfifo_fast,
    /// fq_codel, codel, red, pie) or a table of attributes (default: the TCP
    /// profile's; fq_codel for ns3, as stock ns-3.44 installs).
    pub qdisc: Option<QdiscField>,
    /// Byte queue limits on every device queue (needs a qdisc; default off).
    pub bql: Option<BqlField>,
    pub mtu: Option<Bytes>,
    /// Loss toward each vehicle on its PLC path, each with its own stream
    /// (default model: burst).
    pub loss: Option<LossSpec>,
    /// Loss from each vehicle toward its segment (default: none).
    pub reverse_loss: Option<LossSpec>,
    pub tcp: Option<TcpSpec>,
    pub trace_interval: Option<Dur>,
    /// Event budget of one run (default: [`crate::spec::DEFAULT_MAX_EVENTS`]).
    pub max_events: Option<u64>,
    /// Output budget of one run (default: [`crate::spec::DEFAULT_MAX_OUTPUT_BYTES`]).
    pub max_output_bytes: Option<Bytes>,
    /// A request/response session per vehicle with the charger (`switch`),
    /// started `stagger` apart like the transfers; with it the bulk transfers
    /// (background traffic) run only if `bytes` is given.
    pub session: Option<SessionSpec>,
}

/// The station's layout: how many vehicles, how many per segment.
struct Layout {
    vehicles: u32,
    per_segment: u32,
    segments: u32,
}

impl StationSpec {
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

    fn layout(&self) -> Result<Layout, SpecError> {
        let vehicles = self.vehicles.unwrap_or(21);
        if !(1..=1000).contains(&vehicles) {
            return Err(SpecError::new(
                "vehicles",
                format!("{vehicles} is outside [1, 1000]"),
            ));
        }
        let per_segment = self.vehicles_per_segment.unwrap_or(3);
        if !(1..=1000).contains(&per_segment) {
            return Err(SpecError::new(
                "vehicles_per_segment",
                format!("{per_segment} is outside [1, 1000]"),
            ));
        }
        Ok(Layout {
            vehicles,
            per_segment,
            segments: vehicles.div_ceil(per_segment),
        })
    }

    /// The nodes and links up to the segments: SA, the switch, the WAN and
    /// one PLC link per segment.
    fn backbone(
        &self,
        t: &LinkTemplate,
        segments: u32,
    ) -> Result<(Vec<String>, Vec<LinkConf>), SpecError> {
        let mut nodes = vec!["sa".to_string(), "switch".to_string()];
        let mut links = vec![t.link(
            "wan",
            "sa",
            "switch",
            rate("wan_rate", self.wan_rate, 500_000_000)?,
            delay("wan_delay", self.wan_delay, 10_000_000)?,
        )];
        let plc_rate = rate("plc_rate", self.plc_rate, 10_000_000)?;
        let plc_delay = delay("plc_delay", self.plc_delay, 900_000)?;
        for j in 1..=segments {
            nodes.push(format!("seg{j}"));
            links.push(t.link(
                format!("plc{j}"),
                "switch",
                format!("seg{j}"),
                plc_rate,
                plc_delay,
            ));
        }
        Ok((nodes, links))
    }

    /// Each vehicle's start offset (`i × stagger`, from 0), checked for the
    /// last vehicle's transfer and session: the latest of each.
    fn starts(&self, common: &Common, vehicles: u32) -> Result<Vec<u64>, SpecError> {
        let stagger = self.stagger.map_or(2_000_000, |d| d.0);
        let last = u64::from(vehicles - 1);
        let offset = last.checked_mul(stagger);
        if self.session.is_none() || self.bytes.is_some() {
            let what = format!("ev{vehicles}'s transfer start ({last} × stagger)");
            common.check_start("stagger", &what, offset)?;
        }
        if let Some(spec) = &self.session {
            let first = spec.start.map_or(0, |d| d.0);
            common.check_start("session.start", "ev1's session start", Some(first))?;
            let at = offset.and_then(|o| o.checked_add(first));
            let what = format!("ev{vehicles}'s session start (session.start + {last} × stagger)");
            common.check_start("stagger", &what, at)?;
        }
        Ok((0..u64::from(vehicles)).map(|i| i * stagger).collect())
    }

    pub fn resolve(self) -> Result<Scenario, SpecError> {
        let layout = self.layout()?;
        let (common, wired) = (self.common(), self.wired());
        let t = wired.template(self.tcp.as_ref())?;
        let (loss, reverse_loss) = wired.losses(LossKind::Burst)?;
        let tcp = common.tcp()?;
        let bytes = common.transfer_size(DEFAULT_TRANSFER_BYTES)?;
        let bulk = self.session.is_none() || self.bytes.is_some();
        let starts = self.starts(&common, layout.vehicles)?;
        let (mut nodes, mut links) = self.backbone(&t, layout.segments)?;
        let mut flows = Vec::with_capacity(layout.vehicles as usize);
        let mut sessions: Vec<SessionConf> = Vec::new();
        for i in 1..=layout.vehicles {
            let ev = format!("ev{i}");
            let segment = (i - 1) / layout.per_segment + 1;
            nodes.push(ev.clone());
            let mut access = t.link(
                format!("access{i}"),
                format!("seg{segment}"),
                ev.clone(),
                ACCESS_RATE_BPS,
                0,
            );
            (access.loss_ab, access.loss_ba) = (loss.clone(), reverse_loss.clone());
            links.push(access);
            let start_ns = starts[(i - 1) as usize];
            if let Some(spec) = &self.session {
                let mut c = spec.resolve("session", &ev, &ev, "switch", self.tcp.as_ref())?;
                c.start_ns += start_ns;
                sessions.push(c);
            }
            if bulk {
                let tcp = tcp.clone();
                let (src, name) = ("sa".into(), ev.clone());
                flows.push(FlowConf {
                    name,
                    src,
                    dst: ev,
                    bytes,
                    start_ns,
                    tcp,
                });
            }
        }
        let mut scenario = common.assemble("station", nodes, links, flows, sessions)?;
        // The addresses validation/ns3/v2g.cc assigns (what FQ-CoDel hashes):
        // the WAN in 10.1.1.0/24, one /30 per PLC segment in 10.2.0.0/16 and
        // per access hop in 10.3.0.0/16, the far end taking host 2.
        let host2 = |net: u32, k: u32| (net + 4 * k + 2).to_be_bytes();
        scenario.addresses = [[10, 1, 1, 1], [10, 1, 1, 2]]
            .into_iter()
            .chain((0..layout.segments).map(|j| host2(0x0a02_0000, j)))
            .chain((0..layout.vehicles).map(|i| host2(0x0a03_0000, i)))
            .collect();
        Ok(scenario)
    }
}

#[cfg(test)]
mod tests {
    use crate::spec::resolve_value;
    use serde_json::json;

    #[test]
    fn twenty_one_vehicles_on_seven_segments() {
        let s = resolve_value(json!({"preset": "station"})).unwrap();
        assert_eq!(s.flows.len(), 21);
        assert_eq!(
            s.links.iter().filter(|l| l.name.starts_with("plc")).count(),
            7
        );
        let ev4 = s.links.iter().find(|l| l.b == "ev4").unwrap();
        assert_eq!(ev4.a, "seg2");
        assert_eq!(s.flows[3].start_ns, 6_000_000);
        assert_eq!(s.links[0].delay_ns, 10_000_000);
    }

    #[test]
    fn uneven_last_segment_and_errors() {
        let s =
            resolve_value(json!({"preset": "station", "vehicles": 5, "vehicles_per_segment": 2}))
                .unwrap();
        assert_eq!(
            s.links.iter().filter(|l| l.name.starts_with("plc")).count(),
            3
        );
        let e = resolve_value(json!({"preset": "station", "vehicles": 0})).unwrap_err();
        assert_eq!(e.to_string(), "vehicles: 0 is outside [1, 1000]");
        let e = resolve_value(json!({"preset": "station", "loss": {"mean_loss": 2}})).unwrap_err();
        assert_eq!(e.path, "loss.mean_loss");
    }
}
