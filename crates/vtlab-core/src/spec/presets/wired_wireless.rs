//! The wired + wireless path of the loss-differentiation study (Martignon et
//! al., Fig. 1): senders S behind a wired link to a base station N, then a
//! lossy wireless link to the receivers D.
//!
//! ```text
//! S —(wired: C_SN, T_SN)— N —(wireless: C_ND, T_ND, loss toward D)— D
//! ```
//!
//! Every flow runs S → D through both links (each flow has its own sender and
//! receiver endpoints on the shared S and D nodes). Flows come in groups, each
//! with its own congestion control, count, transfer size and start stagger, so
//! one preset covers a single transfer, n LP + m NewReno competitors, and
//! hundreds of short transfers one after another. Queues hold the bandwidth-
//! delay product by default, as in the study: ⌈min(C_SN, C_ND) · 2(T_SN + T_ND)
//! / (1500 B · 8)⌉ packets, at least 2 and at most 10⁶ (the largest queue).

use serde::Deserialize;

use super::common::{delay, rate, Common, Wired, DEFAULT_TRANSFER_BYTES};
use crate::spec::tcp::resolve_over;
use crate::spec::units::{Bytes, Dur, Rate};
use crate::spec::{BqlField, FlowConf, QdiscField, Scenario, SpecError};
use crate::spec::{LossKind, LossSpec, TcpSpec};

/// A group of identical flows.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowGroup {
    /// Name prefix of the group's flows (default: the congestion control).
    pub name: Option<String>,
    /// Congestion control (default: the top-level `tcp.cc`).
    pub cc: Option<String>,
    /// Number of flows (default 1).
    pub flows: Option<u32>,
    /// Transfer size per flow (default: the top-level `bytes`).
    pub bytes: Option<Bytes>,
    /// First start time (default 0) and the gap between starts (default 0).
    pub start: Option<Dur>,
    pub stagger: Option<Dur>,
    /// TCP settings of this group over the top-level `tcp`.
    pub tcp: Option<TcpSpec>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WiredWirelessSpec {
    pub bytes: Option<Bytes>,
    pub wired_rate: Option<Rate>,
    pub wired_delay: Option<Dur>,
    pub wireless_rate: Option<Rate>,
    pub wireless_delay: Option<Dur>,
    /// Queue limit of every link direction (default: the bandwidth-delay product).
    pub queue_packets: Option<u32>,
    pub framing_bytes: Option<u32>,
    /// Root queue disc of every link direction: a name (none, pfifo_fast,
    /// fq_codel, codel, red, pie) or a table of attributes (default: the TCP
    /// profile's; fq_codel for ns3, as stock ns-3.44 installs).
    pub qdisc: Option<QdiscField>,
    /// Byte queue limits on every device queue (needs a qdisc; default off).
    pub bql: Option<BqlField>,
    pub mtu: Option<Bytes>,
    /// Loss on the wireless link toward D (default model: bernoulli).
    pub loss: Option<LossSpec>,
    /// Loss on the wireless link toward N (default: none).
    pub reverse_loss: Option<LossSpec>,
    pub tcp: Option<TcpSpec>,
    /// Flow groups (default: one flow with the top-level settings).
    pub groups: Option<Vec<FlowGroup>>,
    pub stop: Option<Dur>,
    pub trace_interval: Option<Dur>,
    /// Event budget of one run (default: [`crate::spec::DEFAULT_MAX_EVENTS`]).
    pub max_events: Option<u64>,
    /// Output budget of one run (default: [`crate::spec::DEFAULT_MAX_OUTPUT_BYTES`]).
    pub max_output_bytes: Option<Bytes>,
}

/// Bandwidth-delay product in 1500-byte packets, within [2, 10⁶] (the
/// largest queue, [`super::common::check_queue`]).
fn bdp_packets(rate_bps: u64, rtt_ns: u64) -> u32 {
    let bits = u128::from(rate_bps) * u128::from(rtt_ns) / 1_000_000_000;
    bits.div_ceil(1500 * 8).clamp(2, 1_000_000) as u32
}

impl FlowGroup {
    /// The group's flows (`path` names it), after the top-level `tcp` and
    /// `bytes`, each started before `common`'s stop.
    fn flows(
        &self,
        path: &str,
        common: &Common,
        default_bytes: u64,
    ) -> Result<Vec<FlowConf>, SpecError> {
        let tcp = common.tcp;
        let mut own = self.tcp.clone().unwrap_or_default();
        if let Some(cc) = &self.cc {
            own.cc = Some(cc.clone());
        }
        let tcp_path = format!("{path}.tcp");
        let tcp = resolve_over(tcp, Some(&own), &tcp_path, "tcp").map_err(|mut e| {
            if self.cc.is_some() && e.path == format!("{tcp_path}.cc") {
                e.path = format!("{path}.cc");
            }
            e
        })?;
        let count = self.flows.unwrap_or(1);
        if !(1..=100_000).contains(&count) {
            return Err(SpecError::new(
                format!("{path}.flows"),
                format!("{count} is outside [1, 100000]"),
            ));
        }
        let bytes = match self.bytes {
            Some(Bytes(0)) => {
                return Err(SpecError::new(
                    format!("{path}.bytes"),
                    "must be at least 1 byte".into(),
                ))
            }
            Some(b) => b.0,
            None => default_bytes,
        };
        let prefix = self.name.clone().unwrap_or_else(|| tcp.cc.clone());
        let start = self.start.map_or(0, |d| d.0);
        common.check_start(&format!("{path}.start"), "the group's start", Some(start))?;
        let stagger = self.stagger.map_or(0, |d| d.0);
        let last = u64::from(count - 1);
        let what = format!("the group's last start (start + {last} × stagger)");
        let at = last.checked_mul(stagger).and_then(|o| o.checked_add(start));
        common.check_start(&format!("{path}.stagger"), &what, at)?;
        Ok((0..count)
            .map(|i| FlowConf {
                name: format!("{prefix}-{}", i + 1),
                src: "s".into(),
                dst: "d".into(),
                bytes,
                start_ns: start + u64::from(i) * stagger,
                tcp: tcp.clone(),
            })
            .collect())
    }
}

impl WiredWirelessSpec {
    pub fn resolve(self) -> Result<Scenario, SpecError> {
        let wired_rate = rate("wired_rate", self.wired_rate, 10_000_000)?;
        let wired_delay = delay("wired_delay", self.wired_delay, 50_000_000)?;
        let wireless_rate = rate("wireless_rate", self.wireless_rate, 10_000_000)?;
        let wireless_delay = delay("wireless_delay", self.wireless_delay, 10_000)?;
        let bdp = bdp_packets(
            wired_rate.min(wireless_rate),
            2 * (wired_delay + wireless_delay),
        );
        let common = Common {
            bytes: self.bytes,
            tcp: self.tcp.as_ref(),
            stop: self.stop,
            default_stop: None,
            trace_interval: self.trace_interval,
            max_events: self.max_events,
            max_output_bytes: self.max_output_bytes,
        };
        let wired = Wired {
            queue_packets: Some(self.queue_packets.unwrap_or(bdp)),
            framing_bytes: self.framing_bytes,
            mtu: self.mtu,
            qdisc: self.qdisc.as_ref(),
            bql: self.bql.as_ref(),
            loss: self.loss.as_ref(),
            reverse_loss: self.reverse_loss.as_ref(),
        };
        let t = wired.template(self.tcp.as_ref())?;
        let wired_link = t.link("wired", "s", "n", wired_rate, wired_delay);
        let mut wireless = t.link("wireless", "n", "d", wireless_rate, wireless_delay);
        (wireless.loss_ab, wireless.loss_ba) = wired.losses(LossKind::Bernoulli)?;
        let default_bytes = common.transfer_size(DEFAULT_TRANSFER_BYTES)?;
        let one = [FlowGroup::default()];
        let groups = self.groups.as_deref().unwrap_or(&one);
        if groups.is_empty() {
            return Err(SpecError::new(
                "groups",
                "at least one flow group is required".into(),
            ));
        }
        let mut flows = Vec::new();
        for (g, group) in groups.iter().enumerate() {
            let path = format!("groups[{g}]");
            flows.extend(group.flows(&path, &common, default_bytes)?);
        }
        let nodes = vec!["s".into(), "n".into(), "d".into()];
        common.assemble(
            "wired-wireless",
            nodes,
            vec![wired_link, wireless],
            flows,
            Vec::new(),
        )
    }
}

#[cfg(test)]
mod tests {
    use crate::net::LossConf;
    use crate::spec::resolve_value;
    use serde_json::json;

    #[test]
    fn defaults_follow_the_study() {
        let s = resolve_value(json!({"preset": "wired-wireless", "loss": {"mean_loss": 0.01}}))
            .unwrap();
        // BDP: 10 Mbit/s × 2 × 50.01 ms = 1 000 200 bit → 84 packets of 1500 B.
        assert_eq!(s.links[0].queue_packets, 84);
        assert_eq!(s.links[1].loss_ab, LossConf::Bernoulli { mean_loss: 0.01 });
        assert_eq!(s.flows.len(), 1);
        assert_eq!(s.flows[0].name, "newreno-1");
    }

    #[test]
    fn groups_make_competing_and_sequential_flows() {
        let s = resolve_value(json!({"preset": "wired-wireless", "bytes": "1MB", "groups": [
            {"cc": "newreno-lp", "flows": 3},
            {"cc": "newreno", "flows": 2, "tcp": {"recovery": "newreno"}},
            {"name": "short", "cc": "newreno", "flows": 4, "bytes": "10KB", "start": "10s", "stagger": "2s"},
        ]}))
        .unwrap();
        assert_eq!(s.flows.len(), 9);
        assert_eq!(s.flows[4].name, "newreno-2");
        assert_eq!(s.flows[3].tcp.recovery, crate::tcp::Recovery::NewReno);
        assert_eq!(s.flows[8].name, "short-4");
        assert_eq!(s.flows[8].start_ns, 16_000_000_000);
        assert_eq!(s.flows[8].bytes, 10_000);
        let e = resolve_value(json!({"preset": "wired-wireless", "groups": [{"cc": "nope"}]}))
            .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("groups[0].cc: unknown congestion control 'nope'"),
            "{e}"
        );
    }
}
