//! TCP settings as users write them ([`TcpSpec`], every field optional),
//! resolved into the explicit [`TcpConfig`] the endpoints run.

use serde::{Deserialize, Serialize};

use super::units::{Bytes, Dur};
use super::{SpecError, Validate};
use crate::engine::Num;
use crate::tcp::cc::{self, Params, Profile};
use crate::tcp::rwnd::{ArwndConf, GrowthMode, RwndConf};
use crate::tcp::{Recovery, TcpConfig, NS2_WINDOW_PACKETS};

/// TCP settings as written in a scenario; unset fields take the defaults.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TcpSpec {
    /// Implementation profile: `ns3` (default), `linux` or `ns2` (ns-2.35's
    /// one-way agents). It sets the stack defaults below and the
    /// controller's behaviour where they differ.
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
    /// The `linux` profile's receive-buffer autotuning limit (`tcp_rmem[2]`).
    pub recv_buffer_max: Option<Bytes>,
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
    /// SYN retransmissions before the connection attempt fails (0–30; default
    /// per profile: ns3 5, linux 6).
    pub syn_retries: Option<u32>,
    /// Consecutive retransmission timeouts before the connection is dropped
    /// (0–100; default per profile: ns3 6, linux 15).
    pub data_retries: Option<u32>,
    /// Linux `TCP_USER_TIMEOUT` (1 ms – 1 h; default off): after a retransmission
    /// timeout, drop the connection when data stays unacknowledged this long.
    pub user_timeout: Option<Dur>,
    /// The receiver's window control (default: fixed, the buffer).
    pub rwnd: Option<RwndSpec>,
    /// Tail Loss Probe, RFC 8985 §7 (default: linux on with SACK recovery, as
    /// Linux since 3.10; ns3 off, as ns-3.44). Needs `recovery = "sack"`.
    pub tlp: Option<bool>,
    /// RACK time-based loss detection, RFC 8985 §6 (default: linux on with SACK
    /// recovery, as Linux since 4.18 alone; ns3 off). Needs `recovery = "sack"`.
    pub rack: Option<bool>,
    /// RFC 5827 early retransmit: with fewer than 4 segments outstanding and no
    /// new segment to send, the duplicate-ACK threshold drops to outstanding − 1
    /// (default off: Linux had it from 3.5 to 4.10, ns-3.44 never). Not with RACK.
    pub early_retransmit: Option<bool>,
    /// An RTO re-armed after a probe or reorder timer expires an RTO after the
    /// head's last transmission, as Linux `tcp_rearm_rto` (default: linux on
    /// when TLP or RACK is, ns3 off). Needs `tlp` or `rack`.
    pub rto_from_head: Option<bool>,
}

/// Receive-window control as users write it.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RwndSpec {
    /// `fixed` (default) or `arwnd`.
    pub control: Option<RwndKind>,
    /// ARWND's multiplier λ (default 2).
    pub lambda: Option<f64>,
    /// γ at or above which the window grows (default 0.8).
    pub gamma_high: Option<f64>,
    /// Shrink when R_t exceeds this multiple of R_m (default 2).
    pub rtt_multiple: Option<f64>,
    /// Window over which R_m is the minimum (default 10 s).
    pub rm_window: Option<Dur>,
    /// Starting window (default 64 KiB).
    pub initial: Option<Bytes>,
    /// Smallest window (default 4 MSS).
    pub min: Option<Bytes>,
    /// `window` (W ← λ·W, default) or `increment` (W ← W + λ·MSS).
    pub mode: Option<GrowthMode>,
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum RwndKind {
    Fixed,
    Arwnd,
}

/// ARWND defaults (docs/cellular.md defends each).
pub mod arwnd_defaults {
    pub const LAMBDA: f64 = 2.0;
    pub const GAMMA_HIGH: f64 = 0.8;
    pub const RTT_MULTIPLE: f64 = 2.0;
    pub const RM_WINDOW_NS: u64 = 10_000_000_000;
    pub const INITIAL_BYTES: u64 = 65_536;
    pub const MIN_SEGMENTS: u64 = 4;
}

impl RwndSpec {
    fn resolve(&self, mss: u64) -> RwndConf {
        use arwnd_defaults as d;
        match self.control.unwrap_or(RwndKind::Fixed) {
            RwndKind::Fixed => RwndConf::Fixed,
            RwndKind::Arwnd => RwndConf::Arwnd(ArwndConf {
                lambda: self.lambda.unwrap_or(d::LAMBDA),
                gamma_high: self.gamma_high.unwrap_or(d::GAMMA_HIGH),
                rtt_multiple: self.rtt_multiple.unwrap_or(d::RTT_MULTIPLE),
                rm_window_ns: self.rm_window.map_or(d::RM_WINDOW_NS, |x| x.0),
                initial_bytes: self.initial.map_or(d::INITIAL_BYTES, |x| x.0),
                min_bytes: self.min.map_or(d::MIN_SEGMENTS * mss, |x| x.0),
                mode: self.mode.unwrap_or(GrowthMode::Window),
            }),
        }
    }

    /// Fields that only ARWND reads, set while the control is `fixed`.
    fn stray_field(&self) -> Option<&'static str> {
        if self.control == Some(RwndKind::Arwnd) {
            return None;
        }
        [
            ("lambda", self.lambda.is_some()),
            ("gamma_high", self.gamma_high.is_some()),
            ("rtt_multiple", self.rtt_multiple.is_some()),
            ("rm_window", self.rm_window.is_some()),
            ("initial", self.initial.is_some()),
            ("min", self.min.is_some()),
            ("mode", self.mode.is_some()),
        ]
        .into_iter()
        .find(|(_, set)| *set)
        .map(|(name, _)| name)
    }
}

/// A real parameter in [lo, hi] (NaN is outside every range).
fn in_range_f(path: &str, v: f64, lo: f64, hi: f64, unit: &str) -> Result<(), SpecError> {
    if (lo..=hi).contains(&v) {
        Ok(())
    } else {
        Err(SpecError::new(
            path,
            format!("{} is outside [{}, {}]{unit}", Num(v), Num(lo), Num(hi)),
        ))
    }
}

/// ARWND's rules: parameter ranges, and timestamps on (its RTT samples).
fn check_rwnd(c: &TcpConfig, path: &str) -> Result<(), SpecError> {
    let RwndConf::Arwnd(a) = &c.rwnd else {
        return Ok(());
    };
    let f = |name: &str| format!("{path}.rwnd.{name}");
    if !c.timestamps {
        return Err(SpecError::new(
            format!("{path}.rwnd.control"),
            "arwnd measures the RTT from echoed timestamps: set tcp.timestamps = true".into(),
        ));
    }
    in_range_f(&f("lambda"), a.lambda, 0.5, 10.0, "")?;
    in_range_f(&f("gamma_high"), a.gamma_high, 0.0, 1.0, "")?;
    in_range_f(&f("rtt_multiple"), a.rtt_multiple, 1.0, 100.0, "")?;
    in_range(
        &f("rm_window"),
        a.rm_window_ns,
        1_000_000,
        3_600_000_000_000,
        " ns",
    )?;
    in_range(
        &f("min"),
        a.min_bytes,
        c.mss,
        c.recv_buffer.max(c.mss),
        " bytes (MSS to the receive buffer)",
    )?;
    in_range(
        &f("initial"),
        a.initial_bytes,
        a.min_bytes,
        c.recv_buffer.max(a.min_bytes),
        " bytes (min to the receive buffer)",
    )?;
    Ok(())
}
/// Durations accepted in TCP settings: at most one hour (ns).
const MAX_TCP_DURATION_NS: u64 = 3_600_000_000_000;

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

fn duration(path: &str, x: u64, lo: u64) -> Result<(), SpecError> {
    if x < lo {
        Err(SpecError::new(
            path.to_string(),
            format!("{x} ns is below the minimum of {lo} ns"),
        ))
    } else if x > MAX_TCP_DURATION_NS {
        Err(SpecError::new(
            path.to_string(),
            format!("{x} ns is above the maximum of {MAX_TCP_DURATION_NS} ns (one hour)"),
        ))
    } else {
        Ok(())
    }
}

/// The error for a congestion control the registry does not know.
pub(crate) fn unknown_cc(path: &str, name: &str) -> SpecError {
    SpecError::new(
        path,
        format!(
            "unknown congestion control '{name}' (allowed: {})",
            cc::names().join(", ")
        ),
    )
}

/// Every field of resolved TCP settings against its range, and the
/// congestion control's name, parameters and implied settings: the one place
/// these rules live (used on user input and again when a plan is built).
impl Validate for TcpConfig {
    fn validate(&self, path: &str) -> Result<(), SpecError> {
        check_cc(self, path)?;
        check_sizes(self, path)?;
        check_timers(self, path)?;
        check_rwnd(self, path)?;
        check_loss_detection(self, path)
    }
}

/// The congestion control: its name, its parameters, and the settings it
/// implies.
fn check_cc(c: &TcpConfig, path: &str) -> Result<(), SpecError> {
    let f = |name: &str| format!("{path}.{name}");
    let desc = cc::lookup(&c.cc).ok_or_else(|| unknown_cc(&f("cc"), &c.cc))?;
    cc::validate_params(desc, &c.cc_params, c.profile)
        .map_err(|(name, msg)| SpecError::new(format!("{}.{name}", f("cc_params")), msg))?;
    let conflict = |field: &str, implied: String| {
        SpecError::new(
            f(field),
            format!(
                "'{}' means {field} = {implied}; drop this setting or choose another cc",
                c.cc
            ),
        )
    };
    if desc.implies.delayed_ack.is_some_and(|d| d != c.delayed_ack) {
        return Err(conflict("delayed_ack", (!c.delayed_ack).to_string()));
    }
    if let Some(r) = desc.implies.recovery.filter(|r| *r != c.recovery) {
        return Err(conflict("recovery", format!("{r:?}").to_lowercase()));
    }
    if let Some(p) = desc.implies.prr.filter(|p| *p != c.prr) {
        return Err(conflict("prr", p.to_string()));
    }
    if c.prr && c.recovery != Recovery::Sack {
        return Err(SpecError::new(
            f("prr"),
            "Proportional Rate Reduction applies to recovery 'sack' only".into(),
        ));
    }
    Ok(())
}

/// Segment, header, buffer and window sizes.
fn check_sizes(c: &TcpConfig, path: &str) -> Result<(), SpecError> {
    let f = |name: &str| format!("{path}.{name}");
    in_range(&f("mss"), c.mss, 1, 65_495, " bytes")?;
    in_range(
        &f("header_bytes"),
        c.header_bytes,
        20,
        1_000,
        " bytes (at least the 20 B IP header)",
    )?;
    for (name, buffer) in [
        ("send_buffer", c.send_buffer),
        ("recv_buffer", c.recv_buffer),
    ] {
        in_range(
            &f(name),
            buffer,
            c.mss,
            1 << 40,
            " bytes (at least one MSS)",
        )?;
    }
    in_range(
        &f("recv_buffer_max"),
        c.recv_buffer_max,
        c.recv_buffer,
        1 << 40,
        " bytes (at least recv_buffer)",
    )?;
    in_range(
        &f("initial_cwnd"),
        c.initial_cwnd,
        1,
        1_000_000,
        " segments",
    )?;
    if let Some(s) = c.initial_ssthresh {
        in_range(
            &f("initial_ssthresh"),
            s,
            2 * c.mss,
            u64::MAX,
            " bytes (at least 2 MSS)",
        )?;
    }
    in_range(&f("dupack_threshold"), c.dupack_threshold, 1, 1_000, "").map(drop)
}

/// Timers, ACK settings and retry counts.
fn check_timers(c: &TcpConfig, path: &str) -> Result<(), SpecError> {
    let f = |name: &str| format!("{path}.{name}");
    duration(&f("rto_min"), c.rto_min_ns, 0)?;
    duration(&f("rto_max"), c.rto_max_ns, 1)?;
    if c.rto_max_ns < c.rto_min_ns {
        return Err(SpecError::new(
            f("rto_max"),
            format!("{} ns is below rto_min ({} ns)", c.rto_max_ns, c.rto_min_ns),
        ));
    }
    duration(&f("rto_initial"), c.rto_initial_ns, 1)?;
    duration(&f("clock_granularity"), c.clock_granularity_ns, 0)?;
    duration(&f("syn_timeout"), c.syn_timeout_ns, 1)?;
    in_range(
        &f("delayed_ack_count"),
        c.delayed_ack_count,
        1,
        1_000,
        " segments",
    )?;
    duration(&f("delayed_ack_timeout"), c.delayed_ack_timeout_ns, 1)?;
    in_range(&f("syn_retries"), c.syn_retries(), 0, 30, "")?;
    if let Some(t) = c.user_timeout_ns {
        duration(&f("user_timeout"), t, 1_000_000)?;
    }
    in_range(&f("data_retries"), c.data_retries(), 0, 100, "").map(drop)
}

/// The loss-detection switches: TLP and RACK need SACK (as in Linux); early
/// retransmit lowers a threshold that RACK does not use; `rto_from_head`
/// matters only where a probe or reorder timer can hold the timer.
fn check_loss_detection(c: &TcpConfig, path: &str) -> Result<(), SpecError> {
    let f = |name: &str| format!("{path}.{name}");
    if c.tlp == Some(true) && c.recovery != Recovery::Sack {
        return Err(SpecError::new(
            f("tlp"),
            "the tail loss probe needs SACK (recovery = \"sack\"): Linux schedules \
             probes for SACK connections only (tcp_schedule_loss_probe)"
                .into(),
        ));
    }
    if c.rack == Some(true) && c.recovery != Recovery::Sack {
        return Err(SpecError::new(
            f("rack"),
            "RACK needs SACK (recovery = \"sack\"): it times the segments the \
             receiver SACKs; without SACK Linux marks losses NewReno's way"
                .into(),
        ));
    }
    if c.early_retransmit() && c.rack() {
        return Err(SpecError::new(
            f("early_retransmit"),
            "early retransmit lowers the duplicate-ACK threshold, which RACK \
             replaces (Linux removed early retransmit in 4.11 for RACK): set \
             rack = false"
                .into(),
        ));
    }
    if c.rto_from_head == Some(true) && !c.tlp() && !c.rack() {
        return Err(SpecError::new(
            f("rto_from_head"),
            "re-arms the RTO from the head only after a probe or reorder timer \
             held the timer: set tlp or rack"
                .into(),
        ));
    }
    Ok(())
}

/// Every field of [`TcpSpec`], once: its overlay and the test whether a
/// spec sets a field by name (a field added to the spec and not here does
/// not compile).
macro_rules! tcp_spec_fields {
    ($($f:ident),* $(,)?) => {
        impl TcpSpec {
            /// `self` with the fields `over` sets replaced by `over`'s.
            pub fn overlay(&self, over: &TcpSpec) -> TcpSpec {
                TcpSpec {
                    $($f: over.$f.clone().or_else(|| self.$f.clone()),)*
                }
            }

            /// Whether this spec sets the field named `name`.
            fn sets(&self, name: &str) -> bool {
                match name {
                    $(stringify!($f) => self.$f.is_some(),)*
                    _ => false,
                }
            }
        }
    };
}

tcp_spec_fields!(
    profile,
    cc,
    cc_params,
    recovery,
    prr,
    mss,
    header_bytes,
    send_buffer,
    recv_buffer,
    recv_buffer_max,
    initial_cwnd,
    initial_ssthresh,
    dupack_threshold,
    limited_transmit,
    timestamps,
    rto_initial,
    rto_min,
    rto_max,
    clock_granularity,
    syn_timeout,
    delayed_ack,
    delayed_ack_count,
    delayed_ack_timeout,
    syn_retries,
    data_retries,
    user_timeout,
    rwnd,
    tlp,
    rack,
    early_retransmit,
    rto_from_head,
);

/// Overlay `over` on `base`: fields set in `over` win (a table such as
/// `rwnd` or `cc_params` as a whole).
pub fn merge_tcp(base: Option<&TcpSpec>, over: Option<&TcpSpec>) -> TcpSpec {
    let base = base.cloned().unwrap_or_default();
    match over {
        Some(o) => base.overlay(o),
        None => base,
    }
}

/// Resolve `over` laid on `base` for the connection whose settings are at
/// `path` (e.g. `flows[0].tcp`). An error about a field that only `base`
/// sets (the preset's top-level `tcp`, at `base_path`) names it there.
pub(crate) fn resolve_over(
    base: Option<&TcpSpec>,
    over: Option<&TcpSpec>,
    path: &str,
    base_path: &str,
) -> Result<TcpConfig, SpecError> {
    merge_tcp(base, over).resolve(path).map_err(|mut e| {
        let rest = e.path.strip_prefix(path).and_then(|r| r.strip_prefix('.'));
        if let Some(rest) = rest {
            let field = rest.split(['.', '[']).next().unwrap_or(rest);
            let own = over.is_some_and(|o| o.sets(field));
            if !own && base.is_some_and(|b| b.sets(field)) {
                e.path = format!("{base_path}.{rest}");
            }
        }
        e
    })
}

impl TcpSpec {
    /// Fill unset fields from the profile's defaults (and the congestion
    /// control's implied settings), then check every range.
    pub fn resolve(&self, path: &str) -> Result<TcpConfig, SpecError> {
        let profile = self.profile.unwrap_or_default();
        let d = TcpConfig::defaults(profile);
        let cc = self.cc.clone().unwrap_or(d.cc);
        let desc = cc::lookup(&cc).ok_or_else(|| unknown_cc(&format!("{path}.cc"), &cc))?;
        let recovery = self
            .recovery
            .or(desc.implies.recovery)
            .unwrap_or(d.recovery);
        let prr = match recovery {
            Recovery::Sack => self.prr.or(desc.implies.prr).unwrap_or(d.prr),
            _ => self.prr.unwrap_or(false),
        };
        let ns = |v: Option<Dur>, default: u64| v.map_or(default, |x| x.0);
        let mss = self.mss.map_or(d.mss, |b| b.0);
        // ns2: `window_` is 20 packets of whatever size the MSS is.
        let recv_buffer = self.recv_buffer.map_or(
            match profile {
                Profile::Ns2 => NS2_WINDOW_PACKETS.saturating_mul(mss),
                _ => d.recv_buffer,
            },
            |b| b.0,
        );
        let config = TcpConfig {
            profile,
            cc,
            cc_params: self.cc_params.clone().unwrap_or_default(),
            recovery,
            prr,
            mss,
            header_bytes: self.header_bytes.map_or(d.header_bytes, |b| b.0),
            send_buffer: self.send_buffer.map_or(d.send_buffer, |b| b.0),
            recv_buffer,
            recv_buffer_max: self
                .recv_buffer_max
                .map_or(d.recv_buffer_max.max(recv_buffer), |b| b.0),
            initial_cwnd: self.initial_cwnd.unwrap_or(d.initial_cwnd),
            initial_ssthresh: self.initial_ssthresh.map(|b| b.0).or(
                // ns-2 `TcpAgent::reset`: ssthresh_ = window_.
                (profile == Profile::Ns2).then_some(recv_buffer),
            ),
            dupack_threshold: self.dupack_threshold.unwrap_or(d.dupack_threshold),
            limited_transmit: self.limited_transmit.unwrap_or(d.limited_transmit),
            timestamps: self.timestamps.unwrap_or(d.timestamps),
            rto_initial_ns: ns(self.rto_initial, d.rto_initial_ns),
            rto_min_ns: ns(self.rto_min, d.rto_min_ns),
            rto_max_ns: ns(self.rto_max, d.rto_max_ns),
            clock_granularity_ns: ns(self.clock_granularity, d.clock_granularity_ns),
            syn_timeout_ns: ns(self.syn_timeout, d.syn_timeout_ns),
            delayed_ack: self
                .delayed_ack
                .or(desc.implies.delayed_ack)
                .unwrap_or(d.delayed_ack),
            delayed_ack_count: self.delayed_ack_count.unwrap_or(d.delayed_ack_count),
            delayed_ack_timeout_ns: ns(self.delayed_ack_timeout, d.delayed_ack_timeout_ns),
            syn_retries: self.syn_retries,
            data_retries: self.data_retries,
            user_timeout_ns: self.user_timeout.map(|d| d.0),
            rwnd: RwndConf::Fixed,
            tlp: self.tlp,
            rack: self.rack,
            early_retransmit: self.early_retransmit,
            rto_from_head: self.rto_from_head,
        };
        let mut config = config;
        if let Some(r) = &self.rwnd {
            if let Some(field) = r.stray_field() {
                return Err(SpecError::new(
                    format!("{path}.rwnd.{field}"),
                    "only used with control = \"arwnd\"".into(),
                ));
            }
            config.rwnd = r.resolve(config.mss);
        }
        config.validate(path)?;
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cc_spec(cc: &str) -> TcpSpec {
        TcpSpec {
            cc: Some(cc.into()),
            ..TcpSpec::default()
        }
    }

    #[test]
    fn registry_variants_resolve_to_their_implied_recovery() {
        let r = |cc: &str| {
            let c = cc_spec(cc).resolve("tcp").unwrap();
            (c.recovery, c.prr)
        };
        assert_eq!(r("tahoe"), (Recovery::Tahoe, false));
        assert_eq!(r("reno"), (Recovery::Reno, false));
        assert_eq!(r("sack"), (Recovery::Sack, false));
        assert_eq!(r("westwood-nr"), (Recovery::NewReno, false));
        // ns-3 and Linux default: SACK with PRR.
        assert_eq!(r("newreno"), (Recovery::Sack, true));
    }

    #[test]
    fn an_explicit_setting_may_not_contradict_the_implied_one() {
        let cases = [
            (
                TcpSpec {
                    prr: Some(true),
                    ..cc_spec("sack")
                },
                "tcp.prr: 'sack' means prr = false; drop this setting or choose another cc",
            ),
            (
                TcpSpec {
                    recovery: Some(Recovery::NewReno),
                    ..cc_spec("tahoe")
                },
                "tcp.recovery: 'tahoe' means recovery = tahoe; drop this setting or choose another cc",
            ),
            (
                TcpSpec {
                    recovery: Some(Recovery::Sack),
                    ..cc_spec("reno")
                },
                "tcp.recovery: 'reno' means recovery = reno; drop this setting or choose another cc",
            ),
        ];
        for (spec, message) in cases {
            assert_eq!(spec.resolve("tcp").unwrap_err().to_string(), message);
        }
        // Repeating the implied values is allowed.
        let same = TcpSpec {
            recovery: Some(Recovery::Sack),
            prr: Some(false),
            ..cc_spec("sack")
        };
        assert!(same.resolve("tcp").is_ok());
    }

    fn params_err(cc: &str, params: &[(&str, f64)]) -> Option<String> {
        let spec = TcpSpec {
            cc_params: Some(params.iter().map(|(k, v)| (k.to_string(), *v)).collect()),
            ..cc_spec(cc)
        };
        spec.resolve("tcp").err().map(|e| e.to_string())
    }

    #[test]
    fn integer_parameters_refuse_fractions() {
        // BIC's B divides the distance to W_max in whole steps: 2.5 used to run
        // as 2 under another scenario hash.
        assert_eq!(
            params_err("bic", &[("b", 2.5)]).as_deref(),
            Some("tcp.cc_params.b: 2.5 is not a whole number (an integer in [2, 255])")
        );
        assert_eq!(params_err("bic", &[("b", 3.0)]), None);
    }

    #[test]
    fn parameters_are_checked_jointly() {
        assert_eq!(
            params_err("htcp", &[("beta_min", 1.0), ("beta_max", 0.0)]).as_deref(),
            Some("tcp.cc_params.beta_min: beta_min = 1 must not exceed beta_max = 0")
        );
        assert_eq!(
            params_err("newreno-lp", &[("alpha", 1000.0), ("beta", 0.0)]).as_deref(),
            Some("tcp.cc_params.alpha: alpha = 1000 must not exceed beta = 0")
        );
        // Against the profile's default of the other parameter: Vegas beta = 4.
        assert_eq!(
            params_err("vegas", &[("alpha", 5.0)]).as_deref(),
            Some("tcp.cc_params.alpha: alpha = 5 must not exceed beta = 4")
        );
        // The one given is named even when it is the upper one.
        assert_eq!(
            params_err("illinois", &[("alpha_max", 0.1)]).as_deref(),
            Some("tcp.cc_params.alpha_max: alpha_min = 0.3 must not exceed alpha_max = 0.1")
        );
    }

    #[test]
    fn ns2_defaults_follow_ns_default_tcl() {
        // ns-2.35 tcl/lib/ns-default.tcl, Agent/TCP: packetSize_ 1000,
        // window_ 20 → 20 000 B; ssthresh_ = window_ (TcpAgent::reset);
        // windowInit_ 2; rtxcur_init_ 3 s, minrto_ 0.2 s, maxrto_ 60 s,
        // tcpTick_ 0.01 s; timestamps_ false; Agent/TCP/Newreno without SACK
        // or PRR; TCPSink (an ACK per packet), DelAck interval_ 100 ms.
        let spec = TcpSpec {
            profile: Some(Profile::Ns2),
            ..TcpSpec::default()
        };
        let c = spec.resolve("tcp").unwrap();
        assert_eq!(
            (c.mss, c.recv_buffer, c.initial_ssthresh),
            (1000, 20_000, Some(20_000))
        );
        assert_eq!((c.initial_cwnd, c.timestamps), (2, false));
        assert_eq!((c.recovery, c.prr), (Recovery::NewReno, false));
        assert_eq!(
            (
                c.rto_initial_ns,
                c.rto_min_ns,
                c.rto_max_ns,
                c.clock_granularity_ns
            ),
            (3_000_000_000, 200_000_000, 60_000_000_000, 10_000_000)
        );
        assert_eq!(
            (c.delayed_ack, c.delayed_ack_count, c.delayed_ack_timeout_ns),
            (true, 1, 100_000_000)
        );
        assert_eq!((c.syn_retries(), c.data_retries()), (30, 100));
        assert!(!c.tlp() && !c.rack());
        // window_ counts packets: 20 of a 512 B MSS (Janevski's) = 10 240 B,
        // and the initial ssthresh follows a given window.
        let spec = TcpSpec {
            profile: Some(Profile::Ns2),
            mss: Some(Bytes(512)),
            ..TcpSpec::default()
        };
        let c = spec.resolve("tcp").unwrap();
        assert_eq!((c.recv_buffer, c.initial_ssthresh), (10_240, Some(10_240)));
        let spec = TcpSpec {
            profile: Some(Profile::Ns2),
            recv_buffer: Some(Bytes(1_000_000)),
            ..TcpSpec::default()
        };
        assert_eq!(
            spec.resolve("tcp").unwrap().initial_ssthresh,
            Some(1_000_000)
        );
        // The other profiles keep ssthresh unlimited.
        let c = TcpSpec::default().resolve("tcp").unwrap();
        assert_eq!(c.initial_ssthresh, None);
    }

    #[test]
    fn every_default_satisfies_its_own_rules() {
        for desc in cc::REGISTRY {
            for profile in Profile::ALL {
                let r = cc::validate_params(desc, &Params::new(), profile);
                assert!(r.is_ok(), "{} {profile:?}: {r:?}", desc.name);
                for p in desc.params {
                    let d = p.default_for(profile);
                    assert!(!p.integer || d.fract() == 0.0, "{} {}", desc.name, p.name);
                }
            }
        }
    }

    #[test]
    fn loss_detection_switches_default_per_profile_and_name_their_prerequisites() {
        let spec = |profile: Profile, recovery: Option<Recovery>| TcpSpec {
            profile: Some(profile),
            recovery,
            ..TcpSpec::default()
        };
        let linux = spec(Profile::Linux, None).resolve("tcp").unwrap();
        assert!(linux.tlp() && linux.rack() && linux.rto_from_head());
        assert!(!linux.early_retransmit());
        let ns3 = spec(Profile::Ns3, None).resolve("tcp").unwrap();
        assert!(!ns3.tlp() && !ns3.rack() && !ns3.rto_from_head() && !ns3.early_retransmit());
        // Linux probes and runs RACK on SACK connections only.
        let nr = spec(Profile::Linux, Some(Recovery::NewReno))
            .resolve("tcp")
            .unwrap();
        assert!(!nr.tlp() && !nr.rack() && !nr.rto_from_head());
        // Unset switches stay out of the resolved JSON: scenario hashes of
        // scenarios that do not set them do not change.
        let json = serde_json::to_value(&linux).unwrap();
        for key in ["tlp", "rack", "early_retransmit", "rto_from_head"] {
            assert!(json.get(key).is_none(), "{key}");
        }
        let err = |s: TcpSpec| s.resolve("tcp").unwrap_err().to_string();
        let e = err(TcpSpec {
            tlp: Some(true),
            ..spec(Profile::Ns3, Some(Recovery::NewReno))
        });
        assert!(
            e.starts_with("tcp.tlp: the tail loss probe needs SACK"),
            "{e}"
        );
        let e = err(TcpSpec {
            rack: Some(true),
            ..spec(Profile::Linux, Some(Recovery::Reno))
        });
        assert!(e.starts_with("tcp.rack: RACK needs SACK"), "{e}");
        let e = err(TcpSpec {
            early_retransmit: Some(true),
            ..spec(Profile::Linux, None)
        });
        assert!(
            e.starts_with("tcp.early_retransmit: early retransmit lowers"),
            "{e}"
        );
        let er = TcpSpec {
            early_retransmit: Some(true),
            rack: Some(false),
            ..spec(Profile::Linux, None)
        };
        assert!(er.resolve("tcp").unwrap().early_retransmit());
        let e = err(TcpSpec {
            rto_from_head: Some(true),
            ..spec(Profile::Ns3, None)
        });
        assert!(e.starts_with("tcp.rto_from_head: re-arms the RTO"), "{e}");
        // Explicit opt-in in the ns3 profile.
        let opt_in = TcpSpec {
            tlp: Some(true),
            rack: Some(true),
            rto_from_head: Some(true),
            ..spec(Profile::Ns3, None)
        };
        let c = opt_in.resolve("tcp").unwrap();
        assert!(c.tlp() && c.rack() && c.rto_from_head());
    }
}
