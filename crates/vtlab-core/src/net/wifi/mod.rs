//! A shared 802.11 medium: nodes with positions, a path-loss model, reception
//! decided by SINR with interference from every overlapping transmission,
//! energy-detect carrier sensing, and the DCF MAC (DIFS/EIFS, slotted binary
//! exponential backoff that freezes while the medium is busy, ACK and CTS
//! timeouts, short and long retry limits, RTS/CTS with a threshold, NAV).
//!
//! The medium is a link family ([`crate::net::family::LinkFamily`]): the
//! simulation hands it an IP packet and a next hop, and it reports packets
//! delivered to a node's IP layer, packets dropped (queue, retry limit, error
//! model) and the events it needs (the end of each transmission, one timer per
//! station). Routing, TCP and metrics do not know which family carried a
//! packet. See docs/wifi.md for the model, its parameters and its deviations
//! from ns-2 and ns-3.

pub mod medium;
pub mod phy;
pub mod propagation;
#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};

use crate::engine::Num;
use crate::net::routing::Routing;
use crate::net::LossConf;
pub use medium::Medium;
pub use phy::{Reception, Standard};
pub use propagation::{Mobility, Propagation};

/// Where the per-node error models act.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ErrorPlacement {
    /// Between MAC and PHY (ns-2's `IncomingErrProc`/`OutgoingErrProc`): a hit
    /// frame is received as corrupt, so the MAC retries it.
    #[default]
    Mac,
    /// At IP: a hit packet is dropped on its way into or out of the node's
    /// MAC, so only TCP can repair it.
    Ip,
}

/// Which frames the error models hit (placement `mac`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ErrorFrames {
    /// Every frame: data, RTS, CTS and ACK (ns-2's error models see every packet).
    #[default]
    All,
    /// Data frames only.
    Data,
}

/// Which of a node's two error models act.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ErrorDirection {
    /// Incoming and outgoing (ns-2's `IncomingErrProc` and `OutgoingErrProc`).
    #[default]
    Both,
    /// Incoming only: every frame a station receives, overheard frames included
    /// (ns-3's `WifiPhy::PostReceptionErrorModel`).
    Incoming,
}

impl ErrorDirection {
    fn is_both(&self) -> bool {
        *self == ErrorDirection::Both
    }
}

/// Longest MAC queue lifetime: one hour.
pub const MAX_QUEUE_LIFETIME_NS: u64 = 3_600_000_000_000;

/// Resolved 802.11 settings of one medium (every value explicit).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WifiConf {
    pub standard: Standard,
    /// Rate of data frames, kbit/s.
    pub data_rate_kbps: u32,
    /// Rate of RTS, CTS and ACK frames, kbit/s.
    pub control_rate_kbps: u32,
    pub short_preamble: bool,
    pub slot_ns: u64,
    pub sifs_ns: u64,
    pub cw_min: u32,
    pub cw_max: u32,
    /// Data frames (MAC bytes) longer than this are preceded by RTS/CTS
    /// (0: always; ns-2's `RTSThreshold_ 0`).
    pub rts_threshold_bytes: u32,
    /// Attempts of frames sent without RTS and of RTS frames (dot11ShortRetryLimit, 7).
    pub short_retry_limit: u32,
    /// Attempts of data frames sent after RTS/CTS (dot11LongRetryLimit, 4).
    pub long_retry_limit: u32,
    /// Instead of the two: attempts per frame, RTS and data failures counted
    /// together, and CW set by the failures since the last ACK, not reset by a
    /// drop (ns-3.44's `WifiMac::FrameRetryLimit`). Unset: the two limits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame_retry_limit: Option<u32>,
    /// A station whose NAV an overheard RTS set resets it when no reception
    /// starts within 2·SIFS + CTS + PHY header + 2 slots after the RTS (802.11
    /// §10.3.2.4, ns-3's `NavResetTimeout`); ns-2 keeps it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub rts_nav_reset: bool,
    /// Interface queue per node, packets (the frame being sent included).
    pub ifq_packets: u32,
    /// A packet queued longer than this is dropped when the station gets the
    /// medium or when a full queue is offered a packet, unless it is being sent
    /// (ns-3's `WifiMacQueue::MaxDelay`). Unset: no limit (ns-2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_lifetime_ns: Option<u64>,
    /// MAC bytes added to an IP packet: 24 header + 8 LLC/SNAP + 4 FCS.
    pub mac_overhead_bytes: u32,
    pub mtu_bytes: u32,
    pub tx_power_dbm: f64,
    /// Lowest power at which a frame can be received (ns-2 `RXThresh_`,
    /// ns-3 `RxSensitivity`).
    pub rx_sensitivity_dbm: f64,
    /// Energy above which the medium is busy (ns-2 `CSThresh_`, ns-3 `CcaEdThreshold`).
    pub cca_threshold_dbm: f64,
    /// A signal weaker than this at a station is discarded there: no energy, no
    /// interference. ns-2's PHY drops packets below `CSThresh_`, ns-3's
    /// `YansWifiChannel` signals below `RxSensitivity`. Unset: the CCA
    /// threshold (both simulators' behaviour); −200 sums every signal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub discard_below_dbm: Option<f64>,
    pub noise_figure_db: f64,
    pub reception: Reception,
    pub propagation: Propagation,
    /// Error model on every node's incoming and outgoing traffic (own stream
    /// per node and direction).
    pub error: LossConf,
    pub error_placement: ErrorPlacement,
    pub error_frames: ErrorFrames,
    /// Both error models (default) or the incoming one only.
    #[serde(default, skip_serializing_if = "ErrorDirection::is_both")]
    pub error_direction: ErrorDirection,
}

/// A shared medium and the nodes on it (by name), with their motion.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MediumConf {
    pub name: String,
    pub nodes: Vec<String>,
    pub mobility: Vec<Mobility>,
    pub wifi: WifiConf,
    /// How stations find their hops (static: fixed at the start; left out
    /// of the scenario's hash when static, so older hashes hold).
    #[serde(default, skip_serializing_if = "Routing::is_static")]
    pub routing: Routing,
}

impl WifiConf {
    /// ns-2's wireless defaults with 802.11b at 1 Mbit/s (the Janevski study):
    /// Pt 24.5 dBm, receive range 250 m, carrier sense 550 m under two-ray
    /// ground, RTS/CTS for every frame, retry limits 7/4, IFQ 50.
    pub fn ns2_defaults() -> Self {
        let (slot, sifs, cw_min, cw_max) = Standard::B.timing();
        WifiConf {
            standard: Standard::B,
            data_rate_kbps: 1_000,
            control_rate_kbps: 1_000,
            short_preamble: false,
            slot_ns: slot.0,
            sifs_ns: sifs.0,
            cw_min,
            cw_max,
            rts_threshold_bytes: 0,
            short_retry_limit: 7,
            long_retry_limit: 4,
            frame_retry_limit: None,
            rts_nav_reset: false,
            ifq_packets: 50,
            queue_lifetime_ns: None,
            mac_overhead_bytes: 36,
            mtu_bytes: 1500,
            tx_power_dbm: 24.5,
            // 3.652e-10 W and 1.559e-11 W.
            rx_sensitivity_dbm: -64.374,
            cca_threshold_dbm: -78.072,
            discard_below_dbm: None,
            noise_figure_db: 7.0,
            reception: Reception::Threshold { sinr_db: 10.0 },
            propagation: Propagation::NS2,
            error: LossConf::None,
            error_placement: ErrorPlacement::Mac,
            error_frames: ErrorFrames::All,
            error_direction: ErrorDirection::Both,
        }
    }

    /// Check every value; `Err((field, message))` with the allowed range.
    pub fn check(&self) -> Result<(), (String, String)> {
        self.check_rates()?;
        self.check_mac()?;
        self.check_radio()?;
        self.propagation
            .check()
            .map_err(|(field, m)| (format!("propagation.{field}"), m))
    }

    /// The data and control rates: the standard's, and the reception model's.
    fn check_rates(&self) -> Result<(), (String, String)> {
        for (name, rate) in [
            ("data_rate_kbps", self.data_rate_kbps),
            ("control_rate_kbps", self.control_rate_kbps),
        ] {
            if !self.standard.rates_kbps().contains(&rate) {
                return Err((name.into(), rates_message(self.standard, rate)));
            }
        }
        for (name, rate) in [
            ("data_rate_kbps", self.data_rate_kbps),
            ("control_rate_kbps", self.control_rate_kbps),
        ] {
            if !self.reception.supports(rate) {
                return Err((
                    name.into(),
                    format!(
                        "reception model dsss-ber has error rates for 1000 and 2000 kbit/s only \
                         (found {rate}); use reception.model = \"threshold\" for other rates"
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Timing, contention window, retries, queue and frame sizes.
    fn check_mac(&self) -> Result<(), (String, String)> {
        let range = |name: &str, v: u64, lo: u64, hi: u64| {
            if (lo..=hi).contains(&v) {
                Ok(())
            } else {
                Err((name.to_string(), format!("{v} is outside [{lo}, {hi}]")))
            }
        };
        range("slot_ns", self.slot_ns, 1_000, 1_000_000)?;
        range("sifs_ns", self.sifs_ns, 1_000, 1_000_000)?;
        range("cw_min", u64::from(self.cw_min), 1, 65_535)?;
        let cw_min = u64::from(self.cw_min);
        range("cw_max", u64::from(self.cw_max), cw_min, 65_535)?;
        let rts = u64::from(self.rts_threshold_bytes);
        range("rts_threshold_bytes", rts, 0, 65_535)?;
        let short = u64::from(self.short_retry_limit);
        range("short_retry_limit", short, 1, 255)?;
        range("long_retry_limit", u64::from(self.long_retry_limit), 1, 255)?;
        if let Some(n) = self.frame_retry_limit {
            range("frame_retry_limit", u64::from(n), 1, 255)?;
        }
        range("ifq_packets", u64::from(self.ifq_packets), 1, 1_000_000)?;
        if let Some(ns) = self.queue_lifetime_ns {
            range("queue_lifetime_ns", ns, 1_000, MAX_QUEUE_LIFETIME_NS)?;
        }
        let overhead = u64::from(self.mac_overhead_bytes);
        range("mac_overhead_bytes", overhead, 0, 1_000)?;
        range("mtu_bytes", u64::from(self.mtu_bytes), 68, 7_935)
    }

    /// Powers, thresholds and the reception model's SINR.
    fn check_radio(&self) -> Result<(), (String, String)> {
        let dbm = |name: &str, v: f64, lo: f64, hi: f64| {
            if v.is_finite() && (lo..=hi).contains(&v) {
                Ok(())
            } else {
                let (v, lo, hi) = (Num(v), Num(lo), Num(hi));
                Err((name.to_string(), format!("{v} is outside [{lo}, {hi}]")))
            }
        };
        dbm("tx_power_dbm", self.tx_power_dbm, -50.0, 60.0)?;
        dbm("rx_sensitivity_dbm", self.rx_sensitivity_dbm, -200.0, 0.0)?;
        dbm("cca_threshold_dbm", self.cca_threshold_dbm, -200.0, 0.0)?;
        dbm("noise_figure_db", self.noise_figure_db, 0.0, 50.0)?;
        if let Some(v) = self.discard_below_dbm {
            dbm("discard_below_dbm", v, -200.0, 0.0)?;
        }
        match self.reception {
            Reception::Threshold { sinr_db } => dbm("reception.sinr_db", sinr_db, -30.0, 60.0),
            Reception::DsssBer { preamble_snr_db } => {
                dbm("reception.preamble_snr_db", preamble_snr_db, -30.0, 60.0)
            }
        }
    }
}

fn rates_message(standard: Standard, rate: u32) -> String {
    format!("{rate} kbit/s is {}", not_a_rate(standard))
}

/// "not an 802.11b rate (allowed, Mbit/s: 1, 2, 5.5, 11)": what a rate the
/// standard does not have is told.
pub fn not_a_rate(standard: Standard) -> String {
    let list: Vec<String> = standard
        .rates_kbps()
        .iter()
        .map(|r| format!("{}", *r as f64 / 1000.0))
        .collect();
    format!(
        "not an 802.11{} rate (allowed, Mbit/s: {})",
        standard.name(),
        list.join(", ")
    )
}
