//! User input for a cellular link direction: a mahimahi trace (a file or inline
//! timestamps) or the LTE channel model, resolved into a checked
//! [`CapacityConf`].

use std::sync::Arc;

use serde::Deserialize;

use super::scenario::check_range;
use super::{SpecError, Validate};
use crate::engine::Num;
use crate::net::cellular::channel::{self, ChannelConf, Direction};
use crate::net::cellular::grant::GrantConf;
use crate::net::cellular::trace::{parse_mahimahi, MAHIMAHI_OPPORTUNITY_BYTES, MAX_TRACE_MS};
use crate::net::cellular::CapacityConf;

/// Largest trace file read (bytes): 1 GiB, checked before reading.
pub const MAX_TRACE_FILE_BYTES: u64 = 1 << 30;

/// One cellular direction's capacity: exactly one of `trace`, `trace_ms`,
/// `model`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CapacitySpec {
    /// Path of a mahimahi trace file (relative to the working directory).
    pub trace: Option<String>,
    /// The trace's timestamps inline (ms).
    pub trace_ms: Option<Vec<u64>>,
    /// Bytes per delivery opportunity (default 1504, mahimahi's).
    pub opportunity_bytes: Option<u32>,
    /// The LTE channel model instead of a trace.
    pub model: Option<ChannelSpec>,
    /// Serve this direction on request (scheduling request, buffer status
    /// report, grant): `true` for ns-3's timing, a table to set it, `false`
    /// (the default) to use every opportunity.
    pub grant: Option<GrantSpec>,
}

/// `grant = true | false` or a table of the request–grant timing.
#[derive(Clone, Debug)]
pub enum GrantSpec {
    On(bool),
    Timing(GrantTiming),
}

impl<'de> Deserialize<'de> for GrantSpec {
    /// A boolean or a table; a table's own errors (an unknown field, a wrong
    /// type) come through with their names.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = GrantSpec;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(
                    "true, false or a table of sr_period_ms, request_delay_ms, grant_delay_ms",
                )
            }
            fn visit_bool<E: serde::de::Error>(self, b: bool) -> Result<GrantSpec, E> {
                Ok(GrantSpec::On(b))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, m: A) -> Result<GrantSpec, A::Error> {
                GrantTiming::deserialize(serde::de::value::MapAccessDeserializer::new(m))
                    .map(GrantSpec::Timing)
            }
        }
        d.deserialize_any(V)
    }
}

/// The request–grant timing as users write it: every field optional.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GrantTiming {
    pub sr_period_ms: Option<u32>,
    pub request_delay_ms: Option<u32>,
    pub grant_delay_ms: Option<u32>,
}

/// Defaults of the request–grant uplink: ns-3's LTE (`LteUeMac`,
/// `LteUePhy`, `PfFfMacScheduler`).
pub mod grant_defaults {
    /// ns-3 sends a buffer status report in the TTI after data arrives (an
    /// ideal control message, no scheduling request).
    pub const SR_PERIOD_MS: u32 = 1;
    /// The UE's PHY holds a control message `UL_PUSCH_TTIS_DELAY` = 4 TTIs,
    /// the eNB's MAC hands it to the scheduler in the next TTI, and the
    /// uplink DCI takes one more.
    pub const REQUEST_DELAY_MS: u32 = 6;
    /// TS 36.213 §8: a grant received in TTI n is used in TTI n + 4.
    pub const GRANT_DELAY_MS: u32 = 4;
}

impl GrantSpec {
    /// The resolved timing (`None`: not served on request); errors name
    /// `path.<field>`.
    pub fn resolve(&self, path: &str) -> Result<Option<GrantConf>, SpecError> {
        use grant_defaults as d;
        let t = match self {
            GrantSpec::On(false) => return Ok(None),
            GrantSpec::On(true) => GrantTiming::default(),
            GrantSpec::Timing(t) => t.clone(),
        };
        let conf = GrantConf {
            sr_period_ms: t.sr_period_ms.unwrap_or(d::SR_PERIOD_MS),
            request_delay_ms: t.request_delay_ms.unwrap_or(d::REQUEST_DELAY_MS),
            grant_delay_ms: t.grant_delay_ms.unwrap_or(d::GRANT_DELAY_MS),
        };
        conf.validate(path)?;
        Ok(Some(conf))
    }
}

impl Validate for GrantConf {
    /// TS 36.213's scheduling-request periods (1–80 ms); delays up to 100 ms.
    fn validate(&self, path: &str) -> Result<(), SpecError> {
        check_range(
            format!("{path}.sr_period_ms"),
            u64::from(self.sr_period_ms),
            (1, 80),
            " ms",
        )?;
        check_range(
            format!("{path}.request_delay_ms"),
            u64::from(self.request_delay_ms),
            (0, 100),
            " ms",
        )?;
        check_range(
            format!("{path}.grant_delay_ms"),
            u64::from(self.grant_delay_ms),
            (1, 100),
            " ms",
        )
    }
}

/// The LTE channel model as users write it: every field optional, defaults
/// by direction (see docs/cellular.md for each default and its source).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChannelSpec {
    pub direction: Option<Direction>,
    pub bandwidth_rb: Option<u32>,
    pub share: Option<f64>,
    pub rsrp_dbm: Option<f64>,
    pub distance_m: Option<f64>,
    pub speed_kmh: Option<f64>,
    pub carrier_hz: Option<f64>,
    pub enb_power_dbm: Option<f64>,
    pub ue_power_dbm: Option<f64>,
    pub noise_figure_db: Option<f64>,
    pub interference_dbm: Option<f64>,
    pub shadowing_sigma_db: Option<f64>,
    pub shadowing_decorrelation_m: Option<f64>,
    pub fading: Option<bool>,
    pub bler: Option<f64>,
    pub harq_max_tx: Option<u32>,
    pub max_itbs: Option<u8>,
}

/// Defaults of the channel model (TR 36.814 urban macro unless noted).
pub mod defaults {
    pub const BANDWIDTH_RB: u32 = 50;
    /// This user's share of the resource blocks (the rest serve other users).
    pub const SHARE: f64 = 0.7;
    pub const RSRP_DBM: f64 = -90.0;
    pub const CARRIER_HZ: f64 = 2.1e9;
    /// eNB power for 10 MHz; scaled with the bandwidth (same power per RE).
    pub const ENB_POWER_DBM_50RB: f64 = 46.0;
    pub const UE_POWER_DBM: f64 = 23.0;
    pub const NOISE_FIGURE_UE_DB: f64 = 9.0;
    pub const NOISE_FIGURE_ENB_DB: f64 = 5.0;
    /// Other-cell interference per RE at the UE (downlink): a loaded urban
    /// network, SINR ≈ 20 dB at the default RSRP.
    pub const INTERFERENCE_DL_DBM: f64 = -110.0;
    /// ... at the eNB (uplink): none (80 dB below the thermal noise), as in
    /// ns-3's uplink, against which the uplink is calibrated at the Hu study's
    /// RSRPs (docs/cellular.md; issue 26). The former −120 dBm (7 dB over
    /// the thermal noise) had no source and held the uplink at 4.5 Mbit/s at
    /// −90 dBm, where ns-3 carries 17.9 on the whole band.
    pub const INTERFERENCE_UL_DBM: f64 = -200.0;
    pub const SHADOWING_SIGMA_DB: f64 = 8.0;
    pub const SHADOWING_DECORRELATION_M: f64 = 50.0;
    pub const BLER: f64 = 0.1;
    pub const HARQ_MAX_TX: u32 = 4;
    pub const MAX_ITBS_DL: u8 = 26;
    /// Uplink without 64QAM: MCS 20 → I_TBS 19 (TS 36.213 Table 8.6.1-1).
    pub const MAX_ITBS_UL: u8 = 19;
}

impl ChannelSpec {
    /// The model's configuration with defaults; `direction` unless the spec
    /// says otherwise; checked ([`Validate`]), errors naming the spec's
    /// fields (`speed_kmh`, which the configuration holds in m/s).
    pub fn resolve(&self, direction: Direction, path: &str) -> Result<ChannelConf, SpecError> {
        use defaults as d;
        let direction = self.direction.unwrap_or(direction);
        let up = direction == Direction::Uplink;
        let bandwidth_rb = self.bandwidth_rb.unwrap_or(d::BANDWIDTH_RB);
        let speed_kmh = self.speed_kmh.unwrap_or(0.0);
        if !(0.0..=540.0).contains(&speed_kmh) {
            return Err(SpecError::new(
                format!("{path}.speed_kmh"),
                format!("{} is outside [0, 540] km/h", Num(speed_kmh)),
            ));
        }
        let rsrp_dbm = match (self.rsrp_dbm, self.distance_m) {
            (None, None) => Some(d::RSRP_DBM),
            (r, _) => r,
        };
        let conf = ChannelConf {
            direction,
            bandwidth_rb,
            share: self.share.unwrap_or(d::SHARE),
            rsrp_dbm,
            distance_m: self.distance_m,
            speed_mps: speed_kmh / 3.6,
            carrier_hz: self.carrier_hz.unwrap_or(d::CARRIER_HZ),
            enb_power_dbm: self.enb_power_dbm.unwrap_or(
                d::ENB_POWER_DBM_50RB + 10.0 * (f64::from(bandwidth_rb.max(1)) / 50.0).log10(),
            ),
            ue_power_dbm: self.ue_power_dbm.unwrap_or(d::UE_POWER_DBM),
            noise_figure_db: self.noise_figure_db.unwrap_or(if up {
                d::NOISE_FIGURE_ENB_DB
            } else {
                d::NOISE_FIGURE_UE_DB
            }),
            interference_dbm: self.interference_dbm.unwrap_or(if up {
                d::INTERFERENCE_UL_DBM
            } else {
                d::INTERFERENCE_DL_DBM
            }),
            shadowing_sigma_db: self.shadowing_sigma_db.unwrap_or(d::SHADOWING_SIGMA_DB),
            shadowing_decorrelation_m: self
                .shadowing_decorrelation_m
                .unwrap_or(d::SHADOWING_DECORRELATION_M),
            fading: self.fading.unwrap_or(true),
            bler: self.bler.unwrap_or(d::BLER),
            harq_max_tx: self.harq_max_tx.unwrap_or(d::HARQ_MAX_TX),
            max_itbs: self
                .max_itbs
                .unwrap_or(if up { d::MAX_ITBS_UL } else { d::MAX_ITBS_DL }),
        };
        conf.validate(path).map_err(|mut e| {
            if e.path == format!("{path}.speed_mps") {
                e.path = format!("{path}.speed_kmh");
            }
            e
        })?;
        Ok(conf)
    }
}

/// Read and check a mahimahi trace file; errors name `path` (the field) and
/// the file's line. Only a regular file is read (a symbolic link is followed
/// first): a FIFO would block the read until something writes to it, and a
/// device such as `/dev/zero` reports length 0 and never ends.
pub fn read_trace_file(file: &str, path: &str) -> Result<Arc<[u64]>, SpecError> {
    use std::io::Read;
    let cannot =
        |e: std::io::Error| SpecError::new(path, format!("cannot read trace file '{file}': {e}"));
    let meta = std::fs::metadata(file).map_err(cannot)?;
    if !meta.is_file() {
        return Err(SpecError::new(
            path,
            format!(
                "trace file '{file}' is {}, not a regular file",
                file_kind(&meta.file_type())
            ),
        ));
    }
    let too_big = |len: u64| {
        SpecError::new(
            path,
            format!("trace file '{file}' has {len} bytes, more than the {MAX_TRACE_FILE_BYTES} accepted"),
        )
    };
    if meta.len() > MAX_TRACE_FILE_BYTES {
        return Err(too_big(meta.len()));
    }
    // The file may have grown since: read at most one byte past the limit.
    let mut bytes = Vec::new();
    std::fs::File::open(file)
        .and_then(|f| f.take(MAX_TRACE_FILE_BYTES + 1).read_to_end(&mut bytes))
        .map_err(cannot)?;
    if bytes.len() as u64 > MAX_TRACE_FILE_BYTES {
        return Err(too_big(bytes.len() as u64));
    }
    let text = String::from_utf8(bytes)
        .map_err(|_| SpecError::new(path, format!("trace file '{file}' is not UTF-8 text")))?;
    parse_mahimahi(&text)
        .map(Arc::from)
        .map_err(|e| SpecError::new(path, format!("trace file '{file}': {e}")))
}

/// What a file that is not a regular file is, for messages.
fn file_kind(t: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if t.is_dir() {
        "a directory"
    } else {
        "a special file"
    }
}

impl CapacitySpec {
    /// Resolve; a `model` without a direction gets `direction`.
    pub fn resolve(&self, direction: Direction, path: &str) -> Result<CapacityConf, SpecError> {
        let grant = match &self.grant {
            Some(g) => g.resolve(&format!("{path}.grant"))?,
            None => None,
        };
        if let Some(model) = &self.model {
            if self.trace.is_some() || self.trace_ms.is_some() || self.opportunity_bytes.is_some() {
                return Err(SpecError::new(
                    path,
                    "give either model or a trace (trace, trace_ms, opportunity_bytes), not both"
                        .into(),
                ));
            }
            return Ok(CapacityConf::Model {
                channel: model.resolve(direction, &format!("{path}.model"))?,
                grant,
            });
        }
        let bytes = self.opportunity_bytes.unwrap_or(MAHIMAHI_OPPORTUNITY_BYTES);
        if !(1..=1_000_000).contains(&bytes) {
            return Err(SpecError::new(
                format!("{path}.opportunity_bytes"),
                format!("{bytes} is outside [1, 1000000] bytes"),
            ));
        }
        match (&self.trace, &self.trace_ms) {
            (Some(file), None) => Ok(CapacityConf::Trace {
                source: file.clone(),
                opportunity_bytes: bytes,
                times_ms: read_trace_file(file, &format!("{path}.trace"))?,
                grant,
            }),
            (None, Some(times)) => {
                let text: String = times.iter().map(|t| format!("{t}\n")).collect();
                let times = parse_mahimahi(&text).map_err(|e| {
                    let at = if e.line > 0 {
                        format!("[{}]", e.line - 1)
                    } else {
                        String::new()
                    };
                    let msg = e.message;
                    SpecError::new(format!("{path}.trace_ms{at}"), msg)
                })?;
                Ok(CapacityConf::Trace {
                    source: "inline".into(),
                    opportunity_bytes: bytes,
                    times_ms: Arc::from(times),
                    grant,
                })
            }
            _ => Err(SpecError::new(
                path,
                "give exactly one of trace (a mahimahi file), trace_ms (its timestamps) or \
                 model (the LTE channel model)"
                    .into(),
            )),
        }
    }
}

impl Validate for ChannelConf {
    /// The model's ranges (checked beside the model, [`ChannelConf::check`]),
    /// and a channel that can never deliver refused.
    fn validate(&self, path: &str) -> Result<(), SpecError> {
        self.check()
            .map_err(|(field, msg)| SpecError::new(format!("{path}.{field}"), msg))?;
        if channel::never_delivers(self) {
            return Err(SpecError::new(
                path,
                "this channel never delivers anything: its SINR gives CQI 0 and nothing \
                 (fading, shadowing) varies it; raise rsrp_dbm or lower the distance, \
                 noise or interference"
                    .into(),
            ));
        }
        Ok(())
    }
}

impl Validate for CapacityConf {
    /// A trace's times and opportunity size, or the channel model's fields.
    fn validate(&self, path: &str) -> Result<(), SpecError> {
        match self {
            CapacityConf::Trace {
                opportunity_bytes,
                times_ms,
                grant,
                ..
            } => {
                if let Some(g) = grant {
                    g.validate(&format!("{path}.grant"))?;
                }
                let ok = !times_ms.is_empty()
                    && times_ms.windows(2).all(|w| w[0] <= w[1])
                    && times_ms[times_ms.len() - 1] > 0
                    && times_ms[times_ms.len() - 1] <= MAX_TRACE_MS;
                if !ok {
                    return Err(SpecError::new(
                        format!("{path}.times_ms"),
                        format!(
                            "must be non-decreasing times in [0, {MAX_TRACE_MS}] ms with a positive last one"
                        ),
                    ));
                }
                check_range(
                    format!("{path}.opportunity_bytes"),
                    u64::from(*opportunity_bytes),
                    (1, 1_000_000),
                    " bytes",
                )
            }
            CapacityConf::Model { channel, grant } => {
                if let Some(g) = grant {
                    g.validate(&format!("{path}.grant"))?;
                }
                channel.validate(&format!("{path}.channel"))
            }
        }
    }
}

/// Resolve an optional capacity.
pub(crate) fn resolve_opt(
    spec: Option<&CapacitySpec>,
    path: &str,
) -> Result<Option<CapacityConf>, SpecError> {
    spec.map(|s| s.resolve(Direction::Downlink, path))
        .transpose()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exactly_one_source() {
        let e = CapacitySpec::default()
            .resolve(Direction::Downlink, "x")
            .unwrap_err();
        assert!(e.message.starts_with("give exactly one of trace"));
        assert!(s_model_and_trace()
            .resolve(Direction::Downlink, "x")
            .is_err());
        let s = CapacitySpec {
            trace: Some("a".into()),
            trace_ms: Some(vec![1]),
            ..Default::default()
        };
        assert!(s.resolve(Direction::Downlink, "x").is_err());
    }

    fn s_model_and_trace() -> CapacitySpec {
        CapacitySpec {
            trace_ms: Some(vec![1]),
            model: Some(ChannelSpec::default()),
            ..Default::default()
        }
    }

    #[test]
    fn model_defaults_follow_the_direction() {
        let m = ChannelSpec::default();
        let dl = m.resolve(Direction::Downlink, "m").unwrap();
        let ul = m.resolve(Direction::Uplink, "m").unwrap();
        assert_eq!((dl.noise_figure_db, ul.noise_figure_db), (9.0, 5.0));
        assert_eq!((dl.max_itbs, ul.max_itbs), (26, 19));
        assert_eq!(dl.rsrp_dbm, Some(-90.0));
        // 46 dBm at 50 RB; 100 RB keeps the power per RE: 46 + 10·log10(2) = 49.01 dBm.
        let wide = ChannelSpec {
            bandwidth_rb: Some(100),
            ..Default::default()
        };
        let c = wide.resolve(Direction::Downlink, "m").unwrap();
        assert!((c.enb_power_dbm - 49.0103).abs() < 1e-3);
        let fast = ChannelSpec {
            speed_kmh: Some(36.0),
            ..Default::default()
        };
        assert_eq!(
            fast.resolve(Direction::Downlink, "m").unwrap().speed_mps,
            10.0
        );
        let bad = ChannelSpec {
            speed_kmh: Some(-1.0),
            ..Default::default()
        };
        assert_eq!(
            bad.resolve(Direction::Downlink, "m").unwrap_err().path,
            "m.speed_kmh"
        );
    }

    #[test]
    fn inline_errors_name_the_element() {
        let s = CapacitySpec {
            trace_ms: Some(vec![1, 5, 3]),
            ..Default::default()
        };
        let e = s
            .resolve(Direction::Downlink, "links[0].capacity_ab")
            .unwrap_err();
        assert_eq!(e.path, "links[0].capacity_ab.trace_ms[2]");
        assert!(e.message.contains("must not decrease"), "{}", e.message);
    }

    #[test]
    fn file_errors_name_the_file_and_line() {
        let dir = std::env::temp_dir().join(format!("vtlab-trace-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("bad.down");
        std::fs::write(&f, "1\n2\nbanana\n").unwrap();
        let s = CapacitySpec {
            trace: Some(f.to_string_lossy().into()),
            ..Default::default()
        };
        let e = s.resolve(Direction::Downlink, "capacity_down").unwrap_err();
        assert_eq!(e.path, "capacity_down.trace");
        assert!(
            e.message.contains("line 3: expected a time"),
            "{}",
            e.message
        );
        let missing = CapacitySpec {
            trace: Some(dir.join("nope").to_string_lossy().into()),
            ..Default::default()
        };
        assert!(missing
            .resolve(Direction::Downlink, "t")
            .unwrap_err()
            .message
            .contains("cannot read"));
        std::fs::remove_dir_all(&dir).ok();
    }

    /// A device or a directory is refused before it is read, also through a
    /// symbolic link: `/dev/zero` reports length 0 and never ends.
    #[cfg(unix)]
    #[test]
    fn only_regular_files_are_read() {
        let dir = std::env::temp_dir().join(format!("vtlab-special-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let link = dir.join("zero.down");
        std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
        let cases = [
            (
                "/dev/zero".to_string(),
                "is a character device, not a regular file",
            ),
            (
                link.to_string_lossy().into(),
                "is a character device, not a regular file",
            ),
            (
                dir.to_string_lossy().into(),
                "is a directory, not a regular file",
            ),
        ];
        for (file, want) in cases {
            let s = CapacitySpec {
                trace: Some(file.clone()),
                ..Default::default()
            };
            let e = s.resolve(Direction::Downlink, "capacity_down").unwrap_err();
            assert_eq!(e.path, "capacity_down.trace");
            assert_eq!(e.message, format!("trace file '{file}' {want}"));
        }
        std::fs::remove_dir_all(&dir).ok();
    }
}
