//! The in-cabin LTE preset (Hu et al.): a laptop in the car reaches a server
//! about 80 ms away through the car's LTE hotspot.
//!
//! laptop —(cabin Wi-Fi, 100 Mbit/s, 0.5 ms)— hotspot —(LTE: capacity per ms,
//! deep per-user buffer, 4 ms)— enb —(core, 1 Gbit/s, 35 ms)— server
//!
//! The LTE link's two directions are cellular: the downlink (enb → hotspot)
//! and the uplink (hotspot → enb) each get a capacity schedule, from the LTE
//! channel model (defaults: 10 MHz, RSRP −90 dBm, a static car) or from a
//! mahimahi trace. Their queues are the eNB's per-user buffer (downlink) and
//! the modem's (uplink), `buffer` bytes each. Flows: `down` (server →
//! laptop) and/or `up` (laptop → server), run until `stop` (default 60 s).
//!
//! ARWND's λ: unless the scenario sets `tcp.rwnd.lambda` / the ACWND
//! `lambda` parameter, the preset picks it from the car's speed and mean RSRP
//! (the paper's rule: 2–3 with a good channel or low speed, about 1 at high
//! speed): see [`lambda_for`].

use serde::Deserialize;

use super::common::{check_queue, delay, rate, Common, LinkTemplate};
use crate::net::cellular::channel::Direction;
use crate::net::cellular::CapacityConf;
use crate::spec::cellular::{self, CapacitySpec, ChannelSpec};
use crate::spec::scenario::{check_range, MAX_QUEUE_BYTES};
use crate::spec::tcp::RwndKind;
use crate::spec::units::{Bytes, Dur, Rate};
use crate::spec::{FlowConf, LinkConf, Scenario, SpecError, TcpSpec};
use crate::tcp::cc::Profile;

/// Send buffer of both ends (Linux `tcp_wmem` max, 4 MiB): never the limit.
pub const SEND_BUFFER: u64 = 4 << 20;
/// The receive window without ARWND (128 KiB): the "default" receiver whose
/// fixed window throttles a flow once the bandwidth-delay product exceeds it
/// (the paper's motivation, after Huang et al. 2013). A parameter
/// (`tcp.recv_buffer`); the reproduction sweeps it.
pub const DEFAULT_RWND: u64 = 128 << 10;
/// The buffer within which ARWND adapts the window (Linux `tcp_rmem` max, 6 MiB).
pub const ARWND_BUFFER: u64 = 6 << 20;
/// The run's end unless `stop` says otherwise: 60 s.
const DEFAULT_STOP_NS: u64 = 60_000_000_000;
/// The channel settings the preset also takes at its top level.
const CHANNEL_SHORTCUTS: [&str; 3] = ["speed_kmh", "rsrp_dbm", "distance_m"];

/// Which ends run ARWND and ACWND with `adaptive = true`.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum AdaptiveEnds {
    /// The laptop only (the paper modified the laptop's TCP stack, receiver
    /// and sender, and left the server alone).
    #[default]
    Laptop,
    /// Every receiver (ARWND) and every sender (ACWND).
    Both,
}

/// Which flows run.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Flows {
    #[default]
    Downlink,
    Uplink,
    Both,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LteCabinSpec {
    /// `downlink` (default), `uplink` or `both`.
    pub direction: Option<Flows>,
    /// Bytes per flow (default 10 GB: the run's `stop` ends it).
    pub bytes: Option<Bytes>,
    pub start: Option<Dur>,
    /// Default 60 s.
    pub stop: Option<Dur>,
    /// Vehicle speed, km/h (default 0), for both directions' channel model.
    pub speed_kmh: Option<f64>,
    /// Mean RSRP, dBm (default −90), or `distance_m` to the eNB instead.
    pub rsrp_dbm: Option<f64>,
    pub distance_m: Option<f64>,
    /// Further channel-model settings for both directions.
    pub channel: Option<ChannelSpec>,
    /// The downlink's capacity (replaces the model: e.g. a mahimahi trace).
    pub capacity_down: Option<CapacitySpec>,
    pub capacity_up: Option<CapacitySpec>,
    /// How the default uplink model is served: on request (`true`, the
    /// default: ns-3's scheduling request, buffer status report and grant
    /// timing), a table of that timing, or `false` (every TTI's capacity).
    pub uplink_grant: Option<cellular::GrantSpec>,
    /// Per-user buffer of each LTE direction, bytes (default 2 MB).
    pub buffer: Option<Bytes>,
    /// ... and in packets (default 100 000: the byte limit governs).
    pub buffer_packets: Option<u32>,
    pub core_rate: Option<Rate>,
    /// One-way core/WAN delay (default 35 ms: base RTT ≈ 80 ms).
    pub core_delay: Option<Dur>,
    /// One-way radio delay of the LTE link besides the TTI wait (default 4 ms).
    pub radio_delay: Option<Dur>,
    pub cabin_rate: Option<Rate>,
    pub cabin_delay: Option<Dur>,
    /// Queue of the wired and Wi-Fi hops, packets (default 1000).
    pub queue_packets: Option<u32>,
    pub mtu: Option<Bytes>,
    /// TCP (default profile linux, cc cubic).
    pub tcp: Option<TcpSpec>,
    /// Run the paper's "proposed algorithm" (default false): ARWND and ACWND
    /// at the ends `adaptive_ends` names.
    pub adaptive: Option<bool>,
    /// Where `adaptive` runs: `laptop` (default, the paper's placement: the
    /// laptop's receiver runs ARWND on the downlink, its sender ACWND on the
    /// uplink; the server is unmodified) or `both` (ARWND at every receiver,
    /// ACWND at every sender).
    pub adaptive_ends: Option<AdaptiveEnds>,
    pub trace_interval: Option<Dur>,
    pub max_events: Option<u64>,
    /// Output budget of one run (default: [`crate::spec::DEFAULT_MAX_OUTPUT_BYTES`]).
    pub max_output_bytes: Option<Bytes>,
}

/// λ from the car's speed (km/h) and mean RSRP (dBm), after the paper
/// (Sec. IV-B, V-C): 3 with a good channel at low speed (measured best at
/// RSRP −81 dBm), 2 with a poor channel (best at −110 dBm) or at moderate
/// speed, 1 at high speed. Thresholds (−95 dBm, 40 and 100 km/h) are
/// vtlab's, documented in docs/cellular.md.
pub fn lambda_for(speed_kmh: f64, rsrp_dbm: f64) -> f64 {
    if speed_kmh > 100.0 {
        1.0
    } else if rsrp_dbm >= -95.0 && speed_kmh <= 40.0 {
        3.0
    } else {
        2.0
    }
}

impl LteCabinSpec {
    pub fn resolve(self) -> Result<Scenario, SpecError> {
        let (links, channel) = self.links()?;
        let down_tcp = self.tcp_spec(&channel, Flows::Downlink)?;
        let up_tcp = self.tcp_spec(&channel, Flows::Uplink)?;
        let common = Common {
            bytes: self.bytes,
            tcp: Some(&down_tcp),
            stop: self.stop,
            default_stop: Some(DEFAULT_STOP_NS),
            trace_interval: self.trace_interval,
            max_events: self.max_events,
            max_output_bytes: self.max_output_bytes,
        };
        let bytes = common.transfer_size(10_000_000_000)?;
        let start = self.start.map_or(0, |d| d.0);
        let start = common.check_start("start", "the flows' start", Some(start))?;
        let mut flows = Vec::new();
        let dir = self.direction.unwrap_or_default();
        let ends = [
            ("down", "server", "laptop", Flows::Downlink),
            ("up", "laptop", "server", Flows::Uplink),
        ];
        for (name, src, dst, only) in ends {
            if dir == only || dir == Flows::Both {
                flows.push(FlowConf {
                    name: name.into(),
                    src: src.into(),
                    dst: dst.into(),
                    bytes,
                    start_ns: start,
                    tcp: match only {
                        Flows::Uplink => up_tcp.clone().resolve("tcp")?,
                        _ => common.tcp()?,
                    },
                });
            }
        }
        let nodes = ["server", "enb", "hotspot", "laptop"]
            .map(String::from)
            .to_vec();
        common.assemble("lte-cabin", nodes, links, flows, Vec::new())
    }

    /// The core, LTE and cabin links, and the channel model both LTE
    /// directions use unless given a capacity of their own.
    fn links(&self) -> Result<(Vec<LinkConf>, ChannelSpec), SpecError> {
        let t = LinkTemplate::new(Some(self.queue_packets.unwrap_or(1000)), Some(0), self.mtu)?;
        let core = t.link(
            "core",
            "server",
            "enb",
            rate("core_rate", self.core_rate, 1_000_000_000)?,
            delay("core_delay", self.core_delay, 35_000_000)?,
        );
        let cabin = t.link(
            "cabin",
            "hotspot",
            "laptop",
            rate("cabin_rate", self.cabin_rate, 100_000_000)?,
            delay("cabin_delay", self.cabin_delay, 500_000)?,
        );
        let radio_delay = delay("radio_delay", self.radio_delay, 4_000_000)?;
        let mut lte = t.link("lte", "enb", "hotspot", 0, radio_delay);
        lte.queue_packets = check_queue("buffer_packets", self.buffer_packets.unwrap_or(100_000))?;
        let buffer = self.buffer.map_or(2_000_000, |b| b.0);
        check_range("buffer".into(), buffer, (1, MAX_QUEUE_BYTES), " bytes")?;
        lte.queue_bytes = Some(buffer);
        lte.framing_bytes = 0;
        let channel = self.channel_spec()?;
        if self.uplink_grant.is_some() && self.capacity_up.is_some() {
            return Err(SpecError::new(
                "uplink_grant",
                "applies to the default uplink model; with capacity_up, set capacity_up.grant"
                    .into(),
            ));
        }
        let up_grant = match &self.uplink_grant {
            Some(g) => g.resolve("uplink_grant")?,
            None => cellular::GrantSpec::On(true).resolve("uplink_grant")?,
        };
        let capacity = |spec: &Option<CapacitySpec>, dir: Direction, field: &str| match spec {
            Some(c) => c.resolve(dir, field),
            None => Ok(CapacityConf::Model {
                channel: channel
                    .resolve(dir, "channel")
                    .map_err(|e| self.shortcut_path(e))?,
                grant: if dir == Direction::Uplink {
                    up_grant
                } else {
                    None
                },
            }),
        };
        lte.capacity_ab = Some(capacity(
            &self.capacity_down,
            Direction::Downlink,
            "capacity_down",
        )?);
        lte.capacity_ba = Some(capacity(
            &self.capacity_up,
            Direction::Uplink,
            "capacity_up",
        )?);
        Ok((vec![core, lte, cabin], channel))
    }

    /// `channel` with the top-level shortcuts (`speed_kmh`, and `rsrp_dbm` or
    /// `distance_m`), each given in one place only.
    fn channel_spec(&self) -> Result<ChannelSpec, SpecError> {
        let mut channel = self.channel.clone().unwrap_or_default();
        if self.speed_kmh.is_some() && channel.speed_kmh.is_some() {
            return Err(SpecError::new(
                "speed_kmh",
                "also set as channel.speed_kmh; give one of them".into(),
            ));
        }
        let named = |rsrp: Option<f64>, distance: Option<f64>| {
            rsrp.map(|_| "rsrp_dbm").or(distance.map(|_| "distance_m"))
        };
        let top = named(self.rsrp_dbm, self.distance_m);
        if let (Some(top), Some(inner)) = (top, named(channel.rsrp_dbm, channel.distance_m)) {
            return Err(SpecError::new(
                top,
                format!(
                    "also set as channel.{inner}: give the position (rsrp_dbm or \
                     distance_m) in one place"
                ),
            ));
        }
        if self.speed_kmh.is_some() {
            channel.speed_kmh = self.speed_kmh;
        }
        if self.rsrp_dbm.is_some() || self.distance_m.is_some() {
            channel.rsrp_dbm = self.rsrp_dbm;
            channel.distance_m = self.distance_m;
        }
        Ok(channel)
    }

    /// An error about a channel setting given as a top-level shortcut names
    /// the shortcut (`speed_kmh`, not `channel.speed_kmh`); one about the
    /// whole channel, when no `channel` table is given, names the position
    /// (`rsrp_dbm` or `distance_m`) that decides it.
    fn shortcut_path(&self, mut e: SpecError) -> SpecError {
        let set = [self.speed_kmh, self.rsrp_dbm, self.distance_m];
        for (name, value) in CHANNEL_SHORTCUTS.iter().zip(set) {
            let whole = e.path == "channel" && self.channel.is_none() && *name != "speed_kmh";
            if value.is_some() && (whole || e.path == format!("channel.{name}")) {
                e.path = (*name).to_string();
            }
        }
        e
    }

    /// The TCP settings of the flow toward `flow`: Linux CUBIC by default;
    /// with `adaptive`, ARWND at the laptop's receiver (downlink) and ACWND
    /// at its sender (uplink), or at every end (`adaptive_ends = "both"`), λ
    /// from the speed and RSRP unless set.
    fn tcp_spec(&self, channel: &ChannelSpec, flow: Flows) -> Result<TcpSpec, SpecError> {
        let mut tcp = self.tcp.clone().unwrap_or_default();
        tcp.profile = Some(tcp.profile.unwrap_or(Profile::Linux));
        tcp.send_buffer = Some(tcp.send_buffer.unwrap_or(Bytes(SEND_BUFFER)));
        let laptop = self.adaptive_ends.unwrap_or_default() == AdaptiveEnds::Laptop;
        if self.adaptive_ends.is_some() && !self.adaptive.unwrap_or(false) {
            return Err(SpecError::new(
                "adaptive_ends",
                "places ARWND and ACWND: set adaptive = true as well".into(),
            ));
        }
        if !self.adaptive.unwrap_or(false) {
            tcp.recv_buffer = Some(tcp.recv_buffer.unwrap_or(Bytes(DEFAULT_RWND)));
            tcp.cc = Some(tcp.cc.unwrap_or_else(|| "cubic".into()));
            return Ok(tcp);
        }
        let speed = channel.speed_kmh.unwrap_or(0.0);
        let rsrp = channel.rsrp_dbm.unwrap_or(cellular::defaults::RSRP_DBM);
        let lambda = lambda_for(speed, rsrp);
        let acwnd = !laptop || flow == Flows::Uplink;
        let arwnd = !laptop || flow == Flows::Downlink;
        match tcp.cc.as_deref() {
            None | Some("acwnd") => {
                tcp.cc = Some(if acwnd { "acwnd" } else { "cubic" }.into());
            }
            Some(other) => {
                return Err(SpecError::new(
                    "tcp.cc",
                    format!("adaptive = true runs acwnd at the senders; drop tcp.cc = '{other}' or adaptive"),
                ))
            }
        }
        if acwnd {
            let mut params = tcp.cc_params.clone().unwrap_or_default();
            params.entry("lambda".into()).or_insert(lambda);
            tcp.cc_params = Some(params);
        } else {
            // The unmodified server's CUBIC: ACWND's parameters do not apply.
            tcp.cc_params = None;
        }
        tcp.timestamps = Some(tcp.timestamps.unwrap_or(true));
        if arwnd {
            let mut rwnd = tcp.rwnd.clone().unwrap_or_default();
            rwnd.control = Some(RwndKind::Arwnd);
            rwnd.lambda = Some(rwnd.lambda.unwrap_or(lambda));
            tcp.rwnd = Some(rwnd);
            tcp.recv_buffer = Some(tcp.recv_buffer.unwrap_or(Bytes(ARWND_BUFFER)));
        } else {
            // The unmodified server's receiver, as without `adaptive`.
            tcp.rwnd = None;
            tcp.recv_buffer = Some(tcp.recv_buffer.unwrap_or(Bytes(DEFAULT_RWND)));
        }
        Ok(tcp)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::resolve_value;
    use crate::tcp::rwnd::RwndConf;
    use serde_json::json;

    #[test]
    fn lambda_rule() {
        assert_eq!(lambda_for(0.0, -81.0), 3.0);
        assert_eq!(lambda_for(0.0, -110.0), 2.0);
        assert_eq!(lambda_for(60.0, -81.0), 2.0);
        assert_eq!(lambda_for(120.0, -81.0), 1.0);
    }

    #[test]
    fn defaults_build_the_cabin() {
        let s = resolve_value(json!({"preset": "lte-cabin"})).unwrap();
        assert_eq!(s.nodes, ["server", "enb", "hotspot", "laptop"]);
        assert_eq!(s.flows.len(), 1);
        assert_eq!(s.flows[0].tcp.cc, "cubic");
        assert_eq!(s.flows[0].tcp.profile, Profile::Linux);
        let lte = &s.links[1];
        assert_eq!(lte.queue_bytes, Some(2_000_000));
        assert!(matches!(lte.capacity_ab, Some(CapacityConf::Model { .. })));
        // The uplink is served on request with ns-3's timing, the downlink not.
        let up = lte.capacity_ba.as_ref().and_then(|c| c.grant());
        assert_eq!(
            up.map(|g| (g.sr_period_ms, g.request_delay_ms)),
            Some((1, 6))
        );
        assert_eq!(lte.capacity_ab.as_ref().and_then(|c| c.grant()), None);
        assert_eq!(s.stop_ns, Some(60_000_000_000));
    }

    #[test]
    fn uplink_grant_is_a_switch_or_a_checked_table() {
        let grant = |v: serde_json::Value| {
            resolve_value(json!({"preset": "lte-cabin", "uplink_grant": v}))
                .map(|s| s.links[1].capacity_ba.as_ref().and_then(|c| c.grant()))
        };
        assert_eq!(grant(json!(false)).unwrap(), None);
        let g = grant(json!({"sr_period_ms": 10})).unwrap().unwrap();
        assert_eq!(
            (g.sr_period_ms, g.request_delay_ms, g.grant_delay_ms),
            (10, 6, 4)
        );
        for (v, path) in [
            (json!({"sr_period_ms": 0}), "uplink_grant.sr_period_ms"),
            (
                json!({"grant_delay_ms": 101}),
                "uplink_grant.grant_delay_ms",
            ),
            (json!({"foo": 1}), "uplink_grant.foo"),
            (json!(5), "uplink_grant"),
        ] {
            assert_eq!(grant(v).unwrap_err().path, path);
        }
        let e = resolve_value(json!({"preset": "lte-cabin", "uplink_grant": true,
            "capacity_up": {"trace_ms": [1]}}))
        .unwrap_err();
        assert_eq!(e.path, "uplink_grant");
    }

    #[test]
    fn adaptive_picks_lambda_from_speed_and_rsrp() {
        let s = resolve_value(json!({"preset": "lte-cabin", "adaptive": true,
            "rsrp_dbm": -81.0, "direction": "both"}))
        .unwrap();
        // The paper's placement: the laptop's receiver (flow `down`) runs
        // ARWND behind the server's CUBIC; its sender (flow `up`) runs ACWND
        // toward the server's fixed receiver.
        let (down, up) = (&s.flows[0].tcp, &s.flows[1].tcp);
        assert_eq!(
            (s.flows[0].name.as_str(), down.cc.as_str()),
            ("down", "cubic")
        );
        let RwndConf::Arwnd(a) = &down.rwnd else {
            panic!("the downlink's receiver runs ARWND")
        };
        assert_eq!(a.lambda, 3.0);
        assert_eq!((s.flows[1].name.as_str(), up.cc.as_str()), ("up", "acwnd"));
        assert_eq!(up.cc_params.get("lambda"), Some(&3.0));
        assert!(!matches!(up.rwnd, RwndConf::Arwnd(_)));
        assert_eq!(up.recv_buffer, DEFAULT_RWND);
        // `both`: every receiver ARWND, every sender ACWND.
        let s = resolve_value(json!({"preset": "lte-cabin", "adaptive": true,
            "adaptive_ends": "both", "rsrp_dbm": -81.0, "direction": "both"}))
        .unwrap();
        for f in &s.flows {
            assert_eq!(f.tcp.cc, "acwnd");
            assert_eq!(f.tcp.cc_params.get("lambda"), Some(&3.0));
            assert!(matches!(f.tcp.rwnd, RwndConf::Arwnd(_)));
        }
        let e = resolve_value(json!({"preset": "lte-cabin", "adaptive_ends": "both"})).unwrap_err();
        assert_eq!(e.path, "adaptive_ends");
        let e = resolve_value(json!({"preset": "lte-cabin", "adaptive": true,
            "tcp": {"cc": "bbr"}}))
        .unwrap_err();
        assert_eq!(e.path, "tcp.cc");
    }
}
