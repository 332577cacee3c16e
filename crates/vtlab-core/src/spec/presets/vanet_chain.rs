//! The vehicular chain preset (Janevski & Petrov): `hops + 1` vehicles in a
//! line, `spacing_m` apart, all driving at `speed_kmh` in the same direction,
//! on one shared 802.11 medium; one TCP flow from the first vehicle to the
//! last, relayed hop by hop along the chain (static routes: fewest hops over
//! pairs within receive range at the start).
//!
//! Defaults are the study's and ns-2's: 802.11b at 1 Mbit/s for data and
//! control frames, RTS/CTS for every frame, IFQ 50, two-ray ground with
//! receive range 250 m and carrier sense 550 m; TCP NewReno (no SACK) with
//! 512-byte segments, a 20-packet window, initial window 1, minimum RTO
//! 200 ms, an ACK for every segment, no timestamps; runs of 250 s.

use serde::Deserialize;

use super::common::Common;
use crate::engine::Num;
use crate::net::wifi::{Medium, MediumConf, Mobility, WifiConf};
use crate::spec::units::{Bytes, Dur, Fraction};
use crate::spec::wifi::{routing, WifiSpec};
use crate::spec::{FlowConf, Scenario, SpecError, TcpSpec};
use crate::tcp::cc::Profile;
use crate::tcp::Recovery;

/// Most hops of a chain.
pub const MAX_HOPS: u32 = 64;

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VanetChainSpec {
    /// Hops (vehicles − 1), 1–64 (default 1).
    pub hops: Option<u32>,
    /// Distance between neighbouring vehicles, m (default 200).
    pub spacing_m: Option<f64>,
    /// Common speed, km/h (default 20).
    pub speed_kmh: Option<f64>,
    /// Radio and MAC settings.
    pub wifi: Option<WifiSpec>,
    /// Shortcut for `wifi.ifq`: interface queue, packets (default 50).
    pub ifq: Option<u32>,
    /// Shortcut for `wifi.rts` (default true).
    pub rts: Option<bool>,
    /// Shortcut for `wifi.error_rate` (default 0).
    pub error_rate: Option<Fraction>,
    /// Shortcut for `tcp.dupack_threshold` (default 3).
    pub dupack: Option<u32>,
    /// Shortcut for `tcp.delayed_ack_count`: segments per ACK (default 1).
    pub delack: Option<u32>,
    /// Receive window, packets (default 20, ns-2's `window_`).
    pub window: Option<u32>,
    /// Shortcut for `tcp.mss`: payload bytes per segment (default 512).
    pub segment: Option<Bytes>,
    pub tcp: Option<TcpSpec>,
    /// How vehicles find their hops: `static` (default) or `aodv`.
    pub routing: Option<String>,
    /// Bytes to send (default 10 GB: the run's `stop` ends it).
    pub bytes: Option<Bytes>,
    /// Flow start (default 1 s).
    pub start: Option<Dur>,
    /// End of the run (default start + 250 s).
    pub stop: Option<Dur>,
    pub trace_interval: Option<Dur>,
    pub max_events: Option<u64>,
    /// Output budget of one run (default: [`crate::spec::DEFAULT_MAX_OUTPUT_BYTES`]).
    pub max_output_bytes: Option<Bytes>,
}

/// Each vehicle must receive its neighbours in the chain (the route runs
/// hop by hop): else the radio settings break the chain, and the error says
/// which settings decide.
fn check_hops(medium: &MediumConf, hops: u32) -> Result<(), SpecError> {
    let pairs = Medium::neighbours(medium);
    let broken =
        (0..hops as usize).find(|&i| !(pairs.contains(&(i, i + 1)) && pairs.contains(&(i + 1, i))));
    match broken {
        Some(i) => Err(SpecError::new(
            "spacing_m",
            format!(
                "v{i} and v{} ({} m apart) do not receive each other: the received power \
                 (wifi.tx_power_dbm through wifi.propagation) is below wifi.rx_sensitivity_dbm, \
                 so the chain has no route; lower spacing_m or change those settings",
                i + 1,
                Num(medium.mobility[i + 1].x_m - medium.mobility[i].x_m)
            ),
        )),
        None => Ok(()),
    }
}

/// Fill `slot` from a shortcut, refusing both.
fn shortcut<T>(
    slot: &mut Option<T>,
    value: Option<T>,
    short: &str,
    long: &str,
) -> Result<(), SpecError> {
    match (slot.is_some(), value) {
        (true, Some(_)) => Err(SpecError::new(
            short,
            format!("also set as {long}; give one of them"),
        )),
        (false, Some(v)) => {
            *slot = Some(v);
            Ok(())
        }
        _ => Ok(()),
    }
}

impl VanetChainSpec {
    pub fn resolve(self) -> Result<Scenario, SpecError> {
        let (hops, mobility) = self.chain()?;
        let wifi = self.wifi().map_err(|e| self.shortcut_path(e))?;
        let names: Vec<String> = (0..=hops).map(|i| format!("v{i}")).collect();
        let tcp = self.tcp_spec().map_err(|e| self.shortcut_path(e))?;
        let start = self.start.map_or(1_000_000_000, |d| d.0);
        let common = Common {
            bytes: self.bytes,
            tcp: Some(&tcp),
            stop: self.stop,
            default_stop: Some(start.saturating_add(250_000_000_000)),
            trace_interval: self.trace_interval,
            max_events: self.max_events,
            max_output_bytes: self.max_output_bytes,
        };
        let flow = FlowConf {
            name: "tcp".into(),
            src: names[0].clone(),
            dst: names[hops as usize].clone(),
            bytes: common.transfer_size(10_000_000_000)?,
            start_ns: common.check_start("start", "the flow's start", Some(start))?,
            tcp: common.tcp().map_err(|e| self.shortcut_path(e))?,
        };
        let mut scenario = common.assemble(
            "vanet-chain",
            names.clone(),
            Vec::new(),
            vec![flow],
            Vec::new(),
        )?;
        let medium = MediumConf {
            name: "wifi".into(),
            nodes: names,
            mobility,
            wifi,
            routing: routing("routing", self.routing.as_deref())?,
        };
        check_hops(&medium, hops)?;
        scenario.media = vec![medium];
        scenario.check_structure()?;
        Ok(scenario)
    }

    /// An error about a setting given by its shortcut names the shortcut
    /// (`ifq`, not `wifi.ifq`; `segment`, not `tcp.mss`).
    fn shortcut_path(&self, mut e: SpecError) -> SpecError {
        let shortcuts = [
            ("ifq", self.ifq.is_some(), "wifi.ifq"),
            ("error_rate", self.error_rate.is_some(), "wifi.error_rate"),
            ("dupack", self.dupack.is_some(), "tcp.dupack_threshold"),
            ("delack", self.delack.is_some(), "tcp.delayed_ack_count"),
            ("segment", self.segment.is_some(), "tcp.mss"),
            ("window", self.window.is_some(), "tcp.recv_buffer"),
        ];
        for (short, set, long) in shortcuts {
            let rest = e.path.strip_prefix(long);
            if let Some(rest) = rest.filter(|r| set && (r.is_empty() || r.starts_with('.'))) {
                e.path = format!("{short}{rest}");
            }
        }
        e
    }

    /// The number of hops and every vehicle's position and velocity.
    fn chain(&self) -> Result<(u32, Vec<Mobility>), SpecError> {
        let hops = self.hops.unwrap_or(1);
        if !(1..=MAX_HOPS).contains(&hops) {
            return Err(SpecError::new(
                "hops",
                format!("{hops} is outside [1, {MAX_HOPS}]"),
            ));
        }
        let spacing = self.spacing_m.unwrap_or(200.0);
        if !(spacing.is_finite() && spacing > 0.0 && spacing <= 100_000.0) {
            return Err(SpecError::new(
                "spacing_m",
                format!("{} is outside (0, 100000] m", Num(spacing)),
            ));
        }
        let speed = self.speed_kmh.unwrap_or(20.0);
        if !(speed.is_finite() && (0.0..=500.0).contains(&speed)) {
            return Err(SpecError::new(
                "speed_kmh",
                format!("{} is outside [0, 500] km/h", Num(speed)),
            ));
        }
        let v = speed / 3.6;
        let mobility = (0..=hops)
            .map(|i| Mobility {
                x_m: f64::from(i) * spacing,
                y_m: 0.0,
                vx_mps: v,
                vy_mps: 0.0,
            })
            .collect();
        Ok((hops, mobility))
    }

    /// The radio: `wifi` with the shortcuts, over ns-2's defaults.
    fn wifi(&self) -> Result<WifiConf, SpecError> {
        let mut wifi = self.wifi.clone().unwrap_or_default();
        shortcut(&mut wifi.ifq, self.ifq, "ifq", "wifi.ifq")?;
        shortcut(
            &mut wifi.error_rate,
            self.error_rate,
            "error_rate",
            "wifi.error_rate",
        )?;
        if wifi.rts_threshold.is_none() {
            shortcut(&mut wifi.rts, self.rts, "rts", "wifi.rts")?;
        } else if self.rts.is_some() {
            return Err(SpecError::new(
                "rts",
                "also set as wifi.rts_threshold; give one of them".into(),
            ));
        }
        wifi.resolve(WifiConf::ns2_defaults(), "wifi")
    }

    /// TCP as ns-2 ran it in the study, with the shortcuts.
    fn tcp_spec(&self) -> Result<TcpSpec, SpecError> {
        let mut tcp = self.tcp.clone().unwrap_or_default();
        shortcut(
            &mut tcp.dupack_threshold,
            self.dupack,
            "dupack",
            "tcp.dupack_threshold",
        )?;
        shortcut(
            &mut tcp.delayed_ack_count,
            self.delack,
            "delack",
            "tcp.delayed_ack_count",
        )?;
        shortcut(&mut tcp.mss, self.segment, "segment", "tcp.mss")?;
        let segment = tcp.mss.map_or(512, |b| b.0);
        let window = self.window.unwrap_or(20);
        if !(1..=100_000).contains(&window) {
            return Err(SpecError::new(
                "window",
                format!("{window} is outside [1, 100000] packets"),
            ));
        }
        if tcp.recv_buffer.is_some() && self.window.is_some() {
            return Err(SpecError::new(
                "window",
                "also set as tcp.recv_buffer; give one of them".into(),
            ));
        }
        tcp.profile = Some(tcp.profile.unwrap_or(Profile::Ns3));
        tcp.mss = Some(Bytes(segment));
        tcp.cc = Some(tcp.cc.unwrap_or_else(|| "newreno".into()));
        let implied = matches!(tcp.cc.as_deref(), Some("tahoe" | "reno" | "sack"));
        if tcp.recovery.is_none() && !implied {
            tcp.recovery = Some(Recovery::NewReno);
        }
        tcp.prr = Some(tcp.prr.unwrap_or(false));
        tcp.timestamps = Some(tcp.timestamps.unwrap_or(false));
        let window_bytes = Bytes(u64::from(window) * segment);
        tcp.recv_buffer = Some(tcp.recv_buffer.unwrap_or(window_bytes));
        tcp.send_buffer = Some(tcp.send_buffer.unwrap_or(Bytes(1 << 20)));
        tcp.initial_cwnd = Some(tcp.initial_cwnd.unwrap_or(1));
        tcp.rto_min = Some(tcp.rto_min.unwrap_or(Dur(200_000_000)));
        tcp.delayed_ack_count = Some(tcp.delayed_ack_count.unwrap_or(1));
        Ok(tcp)
    }
}

#[cfg(test)]
mod tests {
    use crate::spec::resolve_value;
    use serde_json::json;

    #[test]
    fn defaults_build_the_single_hop() {
        let s = resolve_value(json!({"preset": "vanet-chain"})).unwrap();
        assert_eq!(s.nodes, ["v0", "v1"]);
        let m = &s.media[0];
        assert_eq!(m.mobility[1].x_m, 200.0);
        assert!((m.mobility[0].vx_mps - 20.0 / 3.6).abs() < 1e-12);
        assert_eq!(m.wifi.rts_threshold_bytes, 0);
        assert_eq!(m.wifi.ifq_packets, 50);
        let t = &s.flows[0].tcp;
        assert_eq!((t.mss, t.recv_buffer, t.initial_cwnd), (512, 10_240, 1));
        assert_eq!(t.rto_min_ns, 200_000_000);
        assert!(!t.timestamps);
        assert_eq!(s.stop_ns, Some(251_000_000_000));
    }

    #[test]
    fn shortcuts_and_their_conflicts() {
        let s = resolve_value(json!({"preset": "vanet-chain", "hops": 8, "ifq": 5,
            "rts": false, "dupack": 6, "delack": 2}))
        .unwrap();
        assert_eq!(s.nodes.len(), 9);
        assert_eq!(s.media[0].wifi.ifq_packets, 5);
        assert_eq!(s.media[0].wifi.rts_threshold_bytes, 65_535);
        assert_eq!(s.flows[0].tcp.dupack_threshold, 6);
        assert_eq!(s.flows[0].tcp.delayed_ack_count, 2);
        let e = resolve_value(json!({"preset": "vanet-chain", "ifq": 5, "wifi": {"ifq": 6}}))
            .unwrap_err();
        assert_eq!(e.to_string(), "ifq: also set as wifi.ifq; give one of them");
        let e = resolve_value(json!({"preset": "vanet-chain", "hops": 0})).unwrap_err();
        assert_eq!(e.to_string(), "hops: 0 is outside [1, 64]");
        let e = resolve_value(json!({"preset": "vanet-chain", "wifi": {"rate": "11Mbps",
            "reception": {"model": "dsss-ber", "preamble_snr_db": 4}}}))
        .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("wifi.rate: reception model dsss-ber"),
            "{e}"
        );
        let e =
            resolve_value(json!({"preset": "vanet-chain", "wifi": {"rate": "3Mbps"}})).unwrap_err();
        assert!(e.to_string().contains("not an 802.11b rate"), "{e}");
    }

    /// Run a vanet-chain spec end to end.
    fn run_chain(spec: serde_json::Value, seed: u64) -> crate::metrics::RunResult {
        let scenario = resolve_value(spec).unwrap();
        let plan = crate::spec::plan(&scenario).unwrap();
        crate::sim::Simulation::new(&plan, seed, Default::default()).run()
    }

    #[test]
    fn chain_runs_are_deterministic_per_seed() {
        let spec = serde_json::json!({"preset": "vanet-chain", "hops": 4, "stop": "21s",
        "error_rate": "10%"});
        let (a, b) = (run_chain(spec.clone(), 3), run_chain(spec.clone(), 3));
        // Debug text: NaN fields (completion_s) compare equal there.
        assert_eq!(format!("{:?}", a.flows), format!("{:?}", b.flows));
        assert_eq!(a.links, b.links);
        assert_eq!(a.events_processed, b.events_processed);
        let c = run_chain(spec, 4);
        assert_ne!(a.links, c.links);
    }

    #[test]
    fn a_chain_relays_hop_by_hop() {
        // 3 hops: every vehicle but the ends forwards each data packet once, so
        // the middle stations carry as many packets (data one way, ACKs back) as
        // the ends together; nothing reaches v3 from v0 directly (600 m, beyond
        // the 250 m receive range).
        let r = run_chain(
            serde_json::json!({"preset": "vanet-chain", "hops": 3, "stop": "21s"}),
            1,
        );
        assert!(
            r.flows[0].goodput_bps > 50_000.0,
            "{}",
            r.flows[0].goodput_bps
        );
        let carried: Vec<u64> = r.links.iter().map(|l| l.packets_carried).collect();
        assert_eq!(carried.len(), 4);
        // v1 and v2 relay both directions: within a few packets of v0 + v3.
        let ends = carried[0] + carried[3];
        for mid in [carried[1], carried[2]] {
            assert!(mid.abs_diff(ends) <= 25, "{carried:?}");
        }
    }
}
