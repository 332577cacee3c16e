//! TCP stack settings: the user's view ([`TcpSpec`], every field optional)
//! and the resolved configuration ([`TcpConfig`], every field explicit).
//!
//! Defaults are ns-3.44's TCP defaults where the V2G study depends on them
//! (initial window 10, delayed ACK every 2 segments / 200 ms, minimum RTO 1 s,
//! clock granularity 1 ms, limited transmit on, timestamps on, SYN timeout
//! 3 s) and the study's own settings (MSS 1460, 128 KiB buffers).

use serde::{Deserialize, Serialize};

use crate::spec::units::{Bytes, Dur};
use crate::spec::SpecError;
use crate::tcp::cc::{self, Params, Profile};

/// Loss recovery: how the sender reacts to duplicate ACKs and partial ACKs
/// (implemented in `tcp/recovery/`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Recovery {
    /// Fast retransmit, then slow start from one segment, going back N.
    Tahoe,
    /// RFC 5681 fast recovery, left on the first new ACK.
    Reno,
    /// RFC 6582 fast recovery with partial ACKs.
    NewReno,
    /// RFC 6675 SACK-based recovery (the receiver sends SACK blocks); with
    /// `prr`, RFC 6937 Proportional Rate Reduction sets cwnd during recovery.
    Sack,
}

impl Recovery {
    pub const NAMES: &'static str = "tahoe, reno, newreno, sack";
}

/// TCP settings as written in a scenario; unset fields take the defaults.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TcpSpec {
    /// Implementation profile: `ns3` (default) or `linux`. It sets the stack
    /// defaults below and the controller's behaviour where the two differ.
    pub profile: Option<Profile>,
    /// Congestion control, by registry name.
    pub cc: Option<String>,
    /// Parameters of the congestion control, by name.
    pub cc_params: Option<Params>,
    /// Loss recovery: tahoe, reno, newreno or sack (default sack, as ns-3 and Linux).
    pub recovery: Option<Recovery>,
    /// Proportional Rate Reduction during SACK recovery (default on, as ns-3 and Linux).
    pub prr: Option<bool>,
    /// Maximum segment size (payload bytes).
    pub mss: Option<Bytes>,
    /// TCP + IP header bytes (without options) added to each segment's payload.
    pub header_bytes: Option<Bytes>,
    pub send_buffer: Option<Bytes>,
    pub recv_buffer: Option<Bytes>,
    /// Initial congestion window, in segments.
    pub initial_cwnd: Option<u32>,
    /// Initial slow-start threshold; unset means unlimited.
    pub initial_ssthresh: Option<Bytes>,
    pub dupack_threshold: Option<u32>,
    pub limited_transmit: Option<bool>,
    pub timestamps: Option<bool>,
    pub rto_initial: Option<Dur>,
    pub rto_min: Option<Dur>,
    pub rto_max: Option<Dur>,
    pub clock_granularity: Option<Dur>,
    pub syn_timeout: Option<Dur>,
    pub delayed_ack: Option<bool>,
    pub delayed_ack_count: Option<u32>,
    pub delayed_ack_timeout: Option<Dur>,
}

/// Resolved TCP settings (base units: bytes, nanoseconds).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TcpConfig {
    pub profile: Profile,
    pub cc: String,
    pub cc_params: Params,
    pub recovery: Recovery,
    pub prr: bool,
    pub mss: u64,
    pub header_bytes: u64,
    pub send_buffer: u64,
    pub recv_buffer: u64,
    pub initial_cwnd: u32,
    pub initial_ssthresh: Option<u64>,
    pub dupack_threshold: u32,
    pub limited_transmit: bool,
    pub timestamps: bool,
    pub rto_initial_ns: u64,
    pub rto_min_ns: u64,
    pub rto_max_ns: u64,
    pub clock_granularity_ns: u64,
    pub syn_timeout_ns: u64,
    pub delayed_ack: bool,
    pub delayed_ack_count: u32,
    pub delayed_ack_timeout_ns: u64,
}

impl Default for TcpConfig {
    fn default() -> Self {
        Self::defaults(Profile::Ns3)
    }
}

/// Bytes of the RFC 7323 timestamp option on the wire (10, padded to 12).
pub const TIMESTAMP_OPTION_BYTES: u32 = 12;

/// TCP option bytes of a segment: timestamps (10 B) and SACK (2 + 8 B per
/// block), padded to a multiple of 4.
pub fn option_bytes(timestamps: bool, sack_blocks: usize) -> u32 {
    let ts = if timestamps { 10 } else { 0 };
    let sack = if sack_blocks > 0 {
        2 + 8 * sack_blocks as u32
    } else {
        0
    };
    (ts + sack).div_ceil(4) * 4
}

impl TcpConfig {
    /// The recovery as reported in results: `sack+prr` when PRR is on.
    pub fn recovery_name(&self) -> &'static str {
        match (self.recovery, self.prr) {
            (Recovery::Tahoe, _) => "tahoe",
            (Recovery::Reno, _) => "reno",
            (Recovery::NewReno, _) => "newreno",
            (Recovery::Sack, false) => "sack",
            (Recovery::Sack, true) => "sack+prr",
        }
    }

    /// Payload bytes per full segment. ns-3 puts the timestamp option on top of
    /// the MSS (a 1460 B segment becomes a 1512 B IP packet, which IP fragments
    /// at MTU 1500); Linux takes it out of the MSS (1448 B payloads).
    pub fn segment_payload(&self) -> u64 {
        match (self.profile, self.timestamps) {
            (Profile::Linux, true) => self
                .mss
                .saturating_sub(u64::from(TIMESTAMP_OPTION_BYTES))
                .max(1),
            _ => self.mss,
        }
    }

    /// The stack defaults of a profile, with the V2G study's MSS and buffers.
    ///
    /// ns-3.44: minimum RTO 1 s, granularity 1 ms, maximum 60 s, delayed ACK
    /// 2 segments / 200 ms. Linux: the RTO is srtt + max(200 ms, 4·rttvar)
    /// (`tcp_rto_min` floors the variance term, expressed here as a 200 ms
    /// granularity with no separate minimum), maximum 120 s, delayed-ACK
    /// timer at its 40 ms minimum (`TCP_DELACK_MIN`).
    pub fn defaults(profile: Profile) -> Self {
        let base = TcpConfig {
            profile,
            cc: "newreno".into(),
            cc_params: Params::new(),
            recovery: Recovery::Sack,
            prr: true,
            mss: 1460,
            header_bytes: 40,
            send_buffer: 131_072,
            recv_buffer: 131_072,
            initial_cwnd: 10,
            initial_ssthresh: None,
            dupack_threshold: 3,
            limited_transmit: true,
            timestamps: true,
            rto_initial_ns: 1_000_000_000,
            rto_min_ns: 1_000_000_000,
            rto_max_ns: 60_000_000_000,
            clock_granularity_ns: 1_000_000,
            syn_timeout_ns: 3_000_000_000,
            delayed_ack: true,
            delayed_ack_count: 2,
            delayed_ack_timeout_ns: 200_000_000,
        };
        match profile {
            Profile::Ns3 => base,
            Profile::Linux => TcpConfig {
                rto_min_ns: 0,
                clock_granularity_ns: 200_000_000,
                rto_max_ns: 120_000_000_000,
                delayed_ack_timeout_ns: 40_000_000,
                ..base
            },
        }
    }
}

fn in_range<T: PartialOrd + std::fmt::Display + Copy>(
    path: &str,
    v: T,
    lo: T,
    hi: T,
    unit: &str,
) -> Result<T, SpecError> {
    if v < lo || v > hi {
        Err(SpecError::new(
            path.to_string(),
            format!("{v} is outside [{lo}, {hi}]{unit}"),
        ))
    } else {
        Ok(v)
    }
}

impl TcpSpec {
    /// Fill unset fields from defaults and check every range.
    pub fn resolve(&self, path: &str) -> Result<TcpConfig, SpecError> {
        let profile = self.profile.unwrap_or_default();
        let d = TcpConfig::defaults(profile);
        let f = |name: &str| format!("{path}.{name}");
        let cc = self.cc.clone().unwrap_or(d.cc);
        let Some(desc) = cc::lookup(&cc) else {
            return Err(SpecError::new(
                f("cc"),
                format!(
                    "unknown congestion control '{cc}' (allowed: {})",
                    cc::names().join(", ")
                ),
            ));
        };
        let conflict = |field: &str, implied: String| {
            SpecError::new(
                f(field),
                format!("'{cc}' means {field} = {implied}; drop this setting or choose another cc"),
            )
        };
        let delayed_ack = match (desc.implies.delayed_ack, self.delayed_ack) {
            (Some(implied), Some(given)) if implied != given => {
                return Err(conflict("delayed_ack", implied.to_string()))
            }
            (Some(implied), _) => implied,
            (None, given) => given.unwrap_or(d.delayed_ack),
        };
        let recovery = match (desc.implies.recovery, self.recovery) {
            (Some(implied), Some(given)) if implied != given => {
                return Err(conflict("recovery", format!("{implied:?}").to_lowercase()))
            }
            (Some(implied), _) => implied,
            (None, given) => given.unwrap_or(d.recovery),
        };
        let cc_params = self.cc_params.clone().unwrap_or_default();
        let prr_given = match (desc.implies.prr, self.prr) {
            (Some(implied), Some(given)) if implied != given => {
                return Err(conflict("prr", implied.to_string()))
            }
            (Some(implied), _) => Some(implied),
            (None, given) => given,
        };
        let prr = match (recovery, prr_given) {
            (Recovery::Sack, p) => p.unwrap_or(d.prr),
            (_, None | Some(false)) => false,
            (_, Some(true)) => {
                return Err(SpecError::new(
                    f("prr"),
                    "Proportional Rate Reduction applies to recovery 'sack' only".into(),
                ))
            }
        };
        cc::validate_params(desc, &cc_params)
            .map_err(|(name, msg)| SpecError::new(format!("{}.{name}", f("cc_params")), msg))?;
        let mss = in_range(
            &f("mss"),
            self.mss.map_or(d.mss, |b| b.0),
            1,
            65_495,
            " bytes",
        )?;
        let header_bytes = in_range(
            &f("header_bytes"),
            self.header_bytes.map_or(d.header_bytes, |b| b.0),
            20,
            1_000,
            " bytes (at least the 20 B IP header)",
        )?;
        let send_buffer = in_range(
            &f("send_buffer"),
            self.send_buffer.map_or(d.send_buffer, |b| b.0),
            mss,
            1 << 40,
            " bytes (at least one MSS)",
        )?;
        let recv_buffer = in_range(
            &f("recv_buffer"),
            self.recv_buffer.map_or(d.recv_buffer, |b| b.0),
            mss,
            1 << 40,
            " bytes (at least one MSS)",
        )?;
        let initial_cwnd = in_range(
            &f("initial_cwnd"),
            self.initial_cwnd.unwrap_or(d.initial_cwnd),
            1,
            1_000_000,
            " segments",
        )?;
        let initial_ssthresh = match self.initial_ssthresh {
            None => None,
            Some(b) => Some(in_range(
                &f("initial_ssthresh"),
                b.0,
                2 * mss,
                u64::MAX,
                " bytes (at least 2 MSS)",
            )?),
        };
        let dupack_threshold = in_range(
            &f("dupack_threshold"),
            self.dupack_threshold.unwrap_or(d.dupack_threshold),
            1,
            1_000,
            "",
        )?;
        let ns = |name: &str, v: Option<Dur>, default: u64, lo: u64| -> Result<u64, SpecError> {
            let x = v.map_or(default, |d| d.0);
            if x < lo {
                Err(SpecError::new(
                    f(name),
                    format!("{x} ns is below the minimum of {lo} ns"),
                ))
            } else {
                Ok(x)
            }
        };
        let rto_min_ns = ns("rto_min", self.rto_min, d.rto_min_ns, 0)?;
        let rto_max_ns = ns("rto_max", self.rto_max, d.rto_max_ns, 1)?;
        if rto_max_ns < rto_min_ns {
            return Err(SpecError::new(
                f("rto_max"),
                format!("{rto_max_ns} ns is below rto_min ({rto_min_ns} ns)"),
            ));
        }
        Ok(TcpConfig {
            profile,
            cc,
            cc_params,
            recovery,
            prr,
            mss,
            header_bytes,
            send_buffer,
            recv_buffer,
            initial_cwnd,
            initial_ssthresh,
            dupack_threshold,
            limited_transmit: self.limited_transmit.unwrap_or(d.limited_transmit),
            timestamps: self.timestamps.unwrap_or(d.timestamps),
            rto_initial_ns: ns("rto_initial", self.rto_initial, d.rto_initial_ns, 1)?,
            rto_min_ns,
            rto_max_ns,
            clock_granularity_ns: ns(
                "clock_granularity",
                self.clock_granularity,
                d.clock_granularity_ns,
                0,
            )?,
            syn_timeout_ns: ns("syn_timeout", self.syn_timeout, d.syn_timeout_ns, 1)?,
            delayed_ack,
            delayed_ack_count: in_range(
                &f("delayed_ack_count"),
                self.delayed_ack_count.unwrap_or(d.delayed_ack_count),
                1,
                1_000,
                " segments",
            )?,
            delayed_ack_timeout_ns: ns(
                "delayed_ack_timeout",
                self.delayed_ack_timeout,
                d.delayed_ack_timeout_ns,
                1,
            )?,
        })
    }
}
