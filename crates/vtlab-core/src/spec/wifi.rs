//! 802.11 media as users write them ([`WifiSpec`] for the radio and MAC,
//! [`MediumSpec`] for a medium of a `custom` scenario), resolved onto
//! explicit [`WifiConf`]s.

use serde::{Deserialize, Serialize};

use super::loss::{LossKind, LossSpec};
use super::units::{Bytes, Dur, Fraction, Rate};
use super::SpecError;
use crate::net::wifi::{
    ErrorFrames, ErrorPlacement, MediumConf, Mobility, Propagation, Reception, Standard, WifiConf,
};
use crate::net::{LossConf, Sojourn};

/// Mean length of an error burst of the on-off model when only its rate is
/// given: 50 ms (the study does not say; docs/wifi.md).
pub const DEFAULT_ERROR_BURST_NS: u64 = 50_000_000;
/// Longest mean error burst: one day.
pub const MAX_ERROR_BURST_NS: u64 = 86_400_000_000_000;

/// Radio and MAC settings; unset fields keep the defaults of the preset (ns-2's
/// wireless defaults, [`WifiConf::ns2_defaults`]).
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct WifiSpec {
    /// `b` (default), `a` or `g`; sets rates, slot, SIFS and CW unless given.
    pub standard: Option<Standard>,
    /// Data rate (default the standard's lowest: 1 Mbit/s for b, 6 for a/g).
    pub rate: Option<Rate>,
    /// Rate of RTS, CTS and ACK (default the standard's lowest).
    pub control_rate: Option<Rate>,
    pub short_preamble: Option<bool>,
    pub slot: Option<Dur>,
    pub sifs: Option<Dur>,
    pub cw_min: Option<u32>,
    pub cw_max: Option<u32>,
    /// RTS/CTS before every data frame (`true`, default) or never (`false`).
    pub rts: Option<bool>,
    /// Or: RTS/CTS before data frames longer than this many MAC bytes.
    pub rts_threshold: Option<Bytes>,
    pub short_retry_limit: Option<u32>,
    pub long_retry_limit: Option<u32>,
    /// Interface queue, packets (default 50).
    pub ifq: Option<u32>,
    pub mac_overhead: Option<Bytes>,
    pub mtu: Option<Bytes>,
    pub tx_power_dbm: Option<f64>,
    pub rx_sensitivity_dbm: Option<f64>,
    pub cca_threshold_dbm: Option<f64>,
    pub noise_figure_db: Option<f64>,
    pub reception: Option<Reception>,
    pub propagation: Option<Propagation>,
    /// The two-state on-off error model on every node's incoming and outgoing
    /// traffic: the share of time in the lossy state (default 0)...
    pub error_rate: Option<Fraction>,
    /// ... and the mean length of a lossy period (default 50 ms).
    pub error_burst: Option<Dur>,
    /// Or any loss model (replaces `error_rate`/`error_burst`).
    pub error: Option<LossSpec>,
    /// `mac` (default: the MAC retries a hit frame) or `ip`.
    pub error_placement: Option<ErrorPlacement>,
    /// `all` (default) or `data`.
    pub error_frames: Option<ErrorFrames>,
}

fn kbps(rate: Rate) -> u32 {
    u32::try_from(rate.0 / 1_000).unwrap_or(u32::MAX)
}

impl WifiSpec {
    /// Resolve onto `base`; `path` prefixes error paths.
    pub fn resolve(&self, base: WifiConf, path: &str) -> Result<WifiConf, SpecError> {
        let field = |f: &str| format!("{path}.{f}");
        let mut w = base;
        if let Some(standard) = self.standard {
            let (slot, sifs, cw_min, cw_max) = standard.timing();
            w.standard = standard;
            w.slot_ns = slot.0;
            w.sifs_ns = sifs.0;
            w.cw_min = cw_min;
            w.cw_max = cw_max;
            w.data_rate_kbps = standard.basic_rate_kbps();
            w.control_rate_kbps = standard.basic_rate_kbps();
            if standard != Standard::B {
                // ns-3's OFDM PHYs: the NIST/YANS models are not reproduced;
                // the threshold rule applies.
                if matches!(w.reception, Reception::DsssBer { .. }) {
                    w.reception = Reception::Threshold { sinr_db: 10.0 };
                }
            }
        }
        if let Some(r) = self.rate {
            w.data_rate_kbps = kbps(r);
        }
        if let Some(r) = self.control_rate {
            w.control_rate_kbps = kbps(r);
        }
        if let Some(v) = self.short_preamble {
            w.short_preamble = v;
        }
        if let Some(d) = self.slot {
            w.slot_ns = d.0;
        }
        if let Some(d) = self.sifs {
            w.sifs_ns = d.0;
        }
        if let Some(v) = self.cw_min {
            w.cw_min = v;
        }
        if let Some(v) = self.cw_max {
            w.cw_max = v;
        }
        match (self.rts, self.rts_threshold) {
            (Some(_), Some(_)) => {
                return Err(SpecError::new(
                    field("rts_threshold"),
                    "give either rts (on/off) or rts_threshold, not both".into(),
                ))
            }
            (Some(true), None) => w.rts_threshold_bytes = 0,
            (Some(false), None) => w.rts_threshold_bytes = 65_535,
            (None, Some(b)) => {
                w.rts_threshold_bytes = u32::try_from(b.0).map_err(|_| {
                    SpecError::new(
                        field("rts_threshold"),
                        format!("{} is outside [0, 65535] bytes", b.0),
                    )
                })?
            }
            (None, None) => {}
        }
        if let Some(v) = self.short_retry_limit {
            w.short_retry_limit = v;
        }
        if let Some(v) = self.long_retry_limit {
            w.long_retry_limit = v;
        }
        if let Some(v) = self.ifq {
            w.ifq_packets = v;
        }
        let small = |name: &str, b: Bytes| {
            u32::try_from(b.0)
                .map_err(|_| SpecError::new(field(name), format!("{} bytes is too large", b.0)))
        };
        if let Some(b) = self.mac_overhead {
            w.mac_overhead_bytes = small("mac_overhead", b)?;
        }
        if let Some(b) = self.mtu {
            w.mtu_bytes = small("mtu", b)?;
        }
        if let Some(v) = self.tx_power_dbm {
            w.tx_power_dbm = v;
        }
        if let Some(v) = self.rx_sensitivity_dbm {
            w.rx_sensitivity_dbm = v;
        }
        if let Some(v) = self.cca_threshold_dbm {
            w.cca_threshold_dbm = v;
        }
        if let Some(v) = self.noise_figure_db {
            w.noise_figure_db = v;
        }
        if let Some(r) = self.reception {
            w.reception = r;
        }
        if let Some(p) = self.propagation {
            w.propagation = p;
        }
        w.error = self.error_model(path)?;
        if let Some(p) = self.error_placement {
            w.error_placement = p;
        }
        if let Some(f) = self.error_frames {
            w.error_frames = f;
        }
        w.check().map_err(|(f, m)| SpecError::new(field(&f), m))?;
        Ok(w)
    }

    /// The on-off model: Gilbert–Elliott in time, no loss in the good state,
    /// every frame lost in the bad one, bad a share `error_rate` of the time.
    fn error_model(&self, path: &str) -> Result<LossConf, SpecError> {
        let field = |f: &str| format!("{path}.{f}");
        if let Some(spec) = &self.error {
            if self.error_rate.is_some() || self.error_burst.is_some() {
                return Err(SpecError::new(
                    field("error"),
                    "give either error or error_rate/error_burst, not both".into(),
                ));
            }
            return spec.resolve(&field("error"));
        }
        let rate = self.error_rate.map_or(0.0, |f| f.0);
        if !(0.0..1.0).contains(&rate) {
            return Err(SpecError::new(
                field("error_rate"),
                format!("{rate} is outside [0, 1)"),
            ));
        }
        if rate == 0.0 {
            return Ok(LossConf::None);
        }
        let burst = self.error_burst.map_or(DEFAULT_ERROR_BURST_NS, |d| d.0);
        // Sojourns of at least 1 µs on average (the loss model's own bound).
        if !(1_000..=MAX_ERROR_BURST_NS).contains(&burst) {
            return Err(SpecError::new(
                field("error_burst"),
                format!("{burst} ns is outside [1 µs, 1 day]"),
            ));
        }
        let bad = burst as f64 * 1e-9;
        if bad * (1.0 - rate) / rate < 1e-6 {
            return Err(SpecError::new(
                field("error_rate"),
                format!(
                    "{rate} leaves lossless periods shorter than 1 µs with error_burst {burst} ns; \
                     lower error_rate or raise error_burst"
                ),
            ));
        }
        LossSpec {
            model: Some(LossKind::GilbertElliott),
            sojourn: Some(Sojourn::Time),
            mean_bad: Some(bad),
            mean_good: Some(bad * (1.0 - rate) / rate),
            loss_good: Some(Fraction(0.0)),
            loss_bad: Some(Fraction(1.0)),
            ..Default::default()
        }
        .resolve(&field("error_rate"))
    }
}

/// A medium of a `custom` scenario.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MediumSpec {
    pub name: Option<String>,
    pub nodes: Vec<String>,
    /// One entry per node: `{x_m, y_m, vx_mps, vy_mps}`.
    pub mobility: Vec<Mobility>,
    pub wifi: Option<WifiSpec>,
}

impl MediumSpec {
    pub fn resolve(&self, i: usize) -> Result<MediumConf, SpecError> {
        let path = format!("media[{i}].wifi");
        Ok(MediumConf {
            name: self.name.clone().unwrap_or_else(|| format!("wifi{i}")),
            nodes: self.nodes.clone(),
            mobility: self.mobility.clone(),
            wifi: self
                .wifi
                .clone()
                .unwrap_or_default()
                .resolve(WifiConf::ns2_defaults(), &path)?,
        })
    }
}
