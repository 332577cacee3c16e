//! Congestion control: the window laws, kept apart from loss detection and
//! recovery (the sender's state machine and `tcp/recovery/`).
//!
//! The hooks map one to one onto ns-3's `TcpCongestionOps` (our validation
//! reference), in bytes, with time passed in:
//!
//! | hook                  | ns-3                  | Linux                 |
//! |-----------------------|-----------------------|-----------------------|
//! | `ssthresh`            | `GetSsThresh`         | `ssthresh`            |
//! | `increase_window`     | `IncreaseWindow`      | `cong_avoid`          |
//! | `pkts_acked`          | `PktsAcked`           | `pkts_acked`          |
//! | `congestion_state_set`| `CongestionStateSet`  | `set_state`           |
//! | `cwnd_event`          | `CwndEvent`           | `cwnd_event`          |
//! | `cong_control`        | `CongControl`         | `cong_control`        |
//!
//! Unlike ns-3's shared `TcpSocketState`, a controller sees a read-only
//! [`ConnInfo`] and may change only the [`Window`] it is handed.
//!
//! Adding an algorithm: one file in this folder (the window law and, where
//! ns-3 and Linux differ, its behaviour struct of named switches built once
//! from the [`Profile`]), and in this file its `mod` line, one line in
//! `algorithms!` (the [`AnyCc`] variant) and one entry in [`REGISTRY`] (with
//! the ns-3 TypeId it is validated against, if any).

mod newreno;
mod newreno_lp;
pub mod reno;

pub use newreno::NewReno;
pub use newreno_lp::NewRenoLp;

mod acwnd;
mod bic;
mod cubic;
mod htcp;
mod hybla;
pub mod hystart;
mod illinois;
pub mod jiffies;
pub use acwnd::Acwnd;
pub use bic::Bic;
pub use cubic::Cubic;
pub use htcp::Htcp;
pub use hybla::Hybla;
pub use illinois::Illinois;

mod bbr;
mod highspeed;
mod scalable;
mod vegas;
mod vegas_ns2;
mod vegas_rtt;
mod veno;
mod westwood;
mod yeah;
pub use bbr::Bbr;
pub use highspeed::HighSpeed;
pub use scalable::Scalable;
pub use vegas::Vegas;
pub use vegas_ns2::VegasNs2;
pub use veno::Veno;
pub use westwood::{Westwood, WestwoodVariant};
pub use yeah::Yeah;

use std::collections::BTreeMap;

use crate::engine::{Duration, Num, RngStream, Time};
pub use crate::tcp::rate::{RateConn, RateSample};
use crate::tcp::state::CaState;

/// Which implementation a controller mirrors where ns-3 and Linux differ:
/// the RTT fed to `pkts_acked` (ns-3: SRTT on every ACK,
/// duplicates included; Linux: the raw sample), the ssthresh input (ns-3:
/// bytes in flight; Linux: cwnd), slow-start byte counting, and each
/// algorithm's own constants. See docs/congestion-control.md. The sender's
/// and the recoveries' differences are the fields of `StackBehaviour`
/// (tcp/behaviour.rs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Profile {
    #[default]
    Ns3,
    Linux,
    /// ns-2.35's one-way `Agent/TCP` family (docs/stack-profiles.md, "The
    /// ns2 profile").
    Ns2,
}

impl Profile {
    /// Every profile, in the order error messages list them.
    pub const ALL: [Profile; 3] = [Profile::Ns3, Profile::Linux, Profile::Ns2];

    pub fn as_str(self) -> &'static str {
        match self {
            Profile::Ns3 => "ns3",
            Profile::Linux => "linux",
            Profile::Ns2 => "ns2",
        }
    }
}

/// Where a controller follows ns-3 or Linux: a struct of named switches and
/// constants, one value per profile, built once with the controller and read
/// instead of tests of the profile (as `StackBehaviour` in tcp/behaviour.rs
/// for the sender and the recoveries). Each switch names the ns-3 and the
/// Linux source it mirrors.
///
/// ns-2 has none of these controllers but Reno's window laws (which take
/// the profile itself, reno.rs) and Vegas (its own controller under `ns2`,
/// vegas_ns2.rs, chosen by the registry). Under `ns2` the sender feeds a
/// controller as Linux does (the raw sample of a timed packet, ACKs of new
/// data only: `StackBehaviour::NS2`), so a controller takes its Linux
/// switches unless it names its own `NS2`.
pub trait ProfileBehaviour: Copy + 'static {
    const NS3: Self;
    const LINUX: Self;
    const NS2: Self = Self::LINUX;

    fn of(profile: Profile) -> Self {
        match profile {
            Profile::Ns3 => Self::NS3,
            Profile::Linux => Self::LINUX,
            Profile::Ns2 => Self::NS2,
        }
    }
}

/// Why a packet was lost: a full queue (congestion), an active queue
/// management decision (CoDel, RED or PIE dropping early, also a congestion
/// signal), or a link error (noise on a wireless or power-line link).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LossCause {
    Congestion,
    Aqm,
    Link,
}

impl LossCause {
    /// The signal a loss classifier should read from it: an AQM drop is a
    /// congestion signal.
    pub fn signal(self) -> LossCause {
        match self {
            LossCause::Aqm => LossCause::Congestion,
            c => c,
        }
    }
}

/// What a controller may read about its connection.
#[derive(Clone, Copy, Debug)]
pub struct ConnInfo {
    pub now: Time,
    pub mss: u64,
    pub snd_una: u64,
    pub snd_nxt: u64,
    /// Highest sequence number sent so far (exclusive).
    pub snd_max: u64,
    pub bytes_in_flight: u64,
    pub srtt: Option<Duration>,
    pub min_rtt: Option<Duration>,
    pub ca_state: CaState,
    pub profile: Profile,
    /// The peer's advertised window, bytes (ns-2: `window_`, which bounds
    /// the window as `TcpAgent::window` = min(cwnd_, window_)).
    pub rwnd: u64,
}

/// The window a controller governs, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    pub cwnd: u64,
    pub ssthresh: u64,
}

impl Window {
    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }
}

/// Events that change how the window should be treated (ns-3 `TcpCAEvent_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CwndEvent {
    /// First transmission with nothing in flight.
    TxStart,
    /// Recovery completed (leaving Recovery for Open).
    CompleteCwr,
    /// Retransmission timeout.
    Loss,
}

/// The congestion-control interface. Every method but `ssthresh` and
/// `increase_window` defaults to doing nothing.
pub trait CongestionOps {
    /// New slow-start threshold on entering recovery or on a first RTO.
    fn ssthresh(&mut self, info: &ConnInfo, w: &Window, bytes_in_flight: u64) -> u64;

    /// Grow the window for an ACK of `segments_acked` new segments (state Open,
    /// or Loss after an RTO).
    fn increase_window(&mut self, info: &ConnInfo, w: &mut Window, segments_acked: u32);

    /// Per ACK that acknowledges data, before `increase_window`; `rtt` is the
    /// sample this ACK produced, if any.
    fn pkts_acked(
        &mut self,
        _info: &ConnInfo,
        _w: &Window,
        _segments_acked: u32,
        _rtt: Option<Duration>,
    ) {
    }

    /// Called before the congestion state changes to `new`.
    fn congestion_state_set(&mut self, _info: &ConnInfo, _w: &mut Window, _new: CaState) {}

    fn cwnd_event(&mut self, _info: &ConnInfo, _w: &mut Window, _event: CwndEvent) {}

    /// Every transmission of the data segment `[seq, seq + len)` (ns-2
    /// Vegas times each packet itself, `VegasTcpAgent::output`).
    fn on_transmit(&mut self, _now: Time, _seq: u64, _mss: u64) {}

    /// The window after a retransmission timeout, in segments (RFC 5681's
    /// loss window, 1; ns-2 Vegas restarts from `v_slowstart_` 2).
    fn loss_window_segments(&self) -> u64 {
        1
    }

    /// For controllers that classify losses: the verdict of the last
    /// `ssthresh` call. The sender compares it with the oracle's truth to
    /// measure classification accuracy.
    fn loss_verdict(&self) -> Option<LossCause> {
        None
    }

    /// Whether the controller reads the loss oracle (an upper bound no real
    /// sender has). Only then does the sender call [`Self::on_loss_oracle`].
    fn wants_loss_oracle(&self) -> bool {
        false
    }

    /// For controllers that want it: at a loss event, right before
    /// `ssthresh`, the true cause of the loss of the first unacknowledged
    /// segment, from the simulator's drop records (`None` when no drop of
    /// that segment was recorded, e.g. a spurious timeout).
    fn on_loss_oracle(&mut self, _truth: Option<LossCause>) {}

    /// Whether the controller sets cwnd and the pacing rate itself from
    /// delivery-rate samples (ns-3 `HasCongControl`, Linux `cong_control`):
    /// then the sender keeps a rate estimator and paces, calls
    /// [`Self::cong_control`] on every ACK, and the recoveries leave cwnd
    /// alone (no PRR, no inflation). Every other controller costs nothing.
    fn has_cong_control(&self) -> bool {
        false
    }

    /// Per ACK, once the ACK is processed and before sending (ns-3
    /// `CongControl` at the end of `ReceivedAck`, Linux `tcp_cong_control`).
    fn cong_control(
        &mut self,
        _info: &ConnInfo,
        _w: &mut Window,
        _rc: &RateConn,
        _rs: &RateSample,
    ) -> CcAction {
        CcAction::default()
    }

    /// Bytes this ACK newly acknowledged or SACKed, told before the ACK is
    /// processed (ns-3 `m_lastAckedSackedBytes`; only with
    /// [`Self::has_cong_control`]).
    fn on_ack_delivered(&mut self, _bytes: u64) {}

    /// The pacing rate the controller asks for, in bytes per second (None:
    /// no pacing).
    fn pacing_rate(&self) -> Option<f64> {
        None
    }

    /// The controller's own random stream (`cc/<flow>` of the run's seed),
    /// for controllers that draw random numbers (BBR's gain-cycle phase).
    fn set_rng(&mut self, _rng: RngStream) {}
}

/// What a `cong_control` asks of the sender beyond the window.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CcAction {
    /// Mark the flow application-limited until what is in flight now is
    /// delivered (Linux BBR in PROBE_RTT sets `tp->app_limited`).
    pub mark_app_limited: bool,
}

/// Declares [`AnyCc`], the enum of every implemented controller (enum
/// dispatch keeps the per-ACK path free of virtual calls), and its
/// [`CongestionOps`] implementation. One line per algorithm.
macro_rules! algorithms {
    ($($variant:ident($ty:ty)),* $(,)?) => {
        #[derive(Clone, Debug)]
        pub enum AnyCc {
            $($variant($ty)),*
        }

        impl CongestionOps for AnyCc {
            fn ssthresh(&mut self, info: &ConnInfo, w: &Window, bytes_in_flight: u64) -> u64 {
                match self { $(AnyCc::$variant(c) => c.ssthresh(info, w, bytes_in_flight)),* }
            }
            fn increase_window(&mut self, info: &ConnInfo, w: &mut Window, segments_acked: u32) {
                match self { $(AnyCc::$variant(c) => c.increase_window(info, w, segments_acked)),* }
            }
            fn pkts_acked(&mut self, info: &ConnInfo, w: &Window, segments_acked: u32, rtt: Option<Duration>) {
                match self { $(AnyCc::$variant(c) => c.pkts_acked(info, w, segments_acked, rtt)),* }
            }
            fn congestion_state_set(&mut self, info: &ConnInfo, w: &mut Window, new: CaState) {
                match self { $(AnyCc::$variant(c) => c.congestion_state_set(info, w, new)),* }
            }
            fn cwnd_event(&mut self, info: &ConnInfo, w: &mut Window, event: CwndEvent) {
                match self { $(AnyCc::$variant(c) => c.cwnd_event(info, w, event)),* }
            }
            fn on_transmit(&mut self, now: Time, seq: u64, mss: u64) {
                match self { $(AnyCc::$variant(c) => c.on_transmit(now, seq, mss)),* }
            }
            fn loss_window_segments(&self) -> u64 {
                match self { $(AnyCc::$variant(c) => c.loss_window_segments()),* }
            }
            fn loss_verdict(&self) -> Option<LossCause> {
                match self { $(AnyCc::$variant(c) => c.loss_verdict()),* }
            }
            fn wants_loss_oracle(&self) -> bool {
                match self { $(AnyCc::$variant(c) => c.wants_loss_oracle()),* }
            }
            fn on_loss_oracle(&mut self, truth: Option<LossCause>) {
                match self { $(AnyCc::$variant(c) => c.on_loss_oracle(truth)),* }
            }
            fn has_cong_control(&self) -> bool {
                match self { $(AnyCc::$variant(c) => c.has_cong_control()),* }
            }
            fn cong_control(&mut self, info: &ConnInfo, w: &mut Window, rc: &RateConn, rs: &RateSample) -> CcAction {
                match self { $(AnyCc::$variant(c) => c.cong_control(info, w, rc, rs)),* }
            }
            fn on_ack_delivered(&mut self, bytes: u64) {
                match self { $(AnyCc::$variant(c) => c.on_ack_delivered(bytes)),* }
            }
            fn pacing_rate(&self) -> Option<f64> {
                match self { $(AnyCc::$variant(c) => c.pacing_rate()),* }
            }
            fn set_rng(&mut self, rng: RngStream) {
                match self { $(AnyCc::$variant(c) => c.set_rng(rng)),* }
            }
        }
    };
}

algorithms! {
    NewReno(NewReno),
    NewRenoLp(NewRenoLp),
    Htcp(Htcp),
    Hybla(Hybla),
    Bic(Bic),
    Cubic(Cubic),
    Acwnd(Acwnd),
    Illinois(Illinois),
    Vegas(Vegas),
    VegasNs2(VegasNs2),
    Veno(Veno),
    Westwood(Westwood),
    HighSpeed(HighSpeed),
    Scalable(Scalable),
    Yeah(Yeah),
    Bbr(Bbr),
}

/// Stack settings implied by a registry entry; a conflicting explicit setting
/// is an error.
#[derive(Clone, Copy, Debug, Default)]
pub struct Implied {
    pub delayed_ack: Option<bool>,
    pub recovery: Option<crate::tcp::Recovery>,
    /// Proportional Rate Reduction during SACK recovery.
    pub prr: Option<bool>,
}

impl Implied {
    pub const NOTHING: Implied = Implied {
        delayed_ack: None,
        recovery: None,
        prr: None,
    };

    /// A recovery (and nothing else) implied.
    const fn recovery(r: crate::tcp::Recovery) -> Implied {
        Implied {
            recovery: Some(r),
            ..Implied::NOTHING
        }
    }
}

/// One tunable parameter of an algorithm. Defaults may differ by profile
/// (e.g. Hybla's reference RTT is 25 ms in Linux and 50 ms in ns-3).
#[derive(Clone, Copy, Debug)]
pub struct ParamSpec {
    pub name: &'static str,
    pub default_ns3: f64,
    pub default_linux: f64,
    /// ns-2.35's default, where ns-2 has the parameter (else Linux's applies).
    pub default_ns2: Option<f64>,
    pub min: f64,
    pub max: f64,
    pub doc: &'static str,
    /// Whether only whole numbers are meaningful (counts, flags, whole
    /// milliseconds as the reference implementations store them).
    pub integer: bool,
    /// Another parameter this one may not exceed (e.g. `beta_min` ≤
    /// `beta_max`), compared after unset values take the profile's defaults.
    pub at_most: Option<&'static str>,
}

impl ParamSpec {
    /// The default under `profile`; `ns2` takes ns-2.35's where ns-2 has
    /// the parameter (`default_ns2`: Vegas's α 1, β 3, γ 1, ns-default.tcl
    /// `Agent/TCP/Vegas`), else Linux's, as it takes Linux's switches
    /// ([`ProfileBehaviour`]).
    pub fn default_for(&self, profile: Profile) -> f64 {
        match profile {
            Profile::Ns3 => self.default_ns3,
            Profile::Linux => self.default_linux,
            Profile::Ns2 => self.default_ns2.unwrap_or(self.default_linux),
        }
    }
}

/// Parameter values by name, validated against the algorithm's [`ParamSpec`]s.
pub type Params = BTreeMap<String, f64>;

/// A registry entry: how to find, describe and build an algorithm.
pub struct CcDescriptor {
    pub name: &'static str,
    pub description: &'static str,
    pub source: &'static str,
    /// The ns-3 TypeId (without the `ns3::` prefix) the algorithm is
    /// validated against, where ns-3 implements it.
    pub ns3_type_id: Option<&'static str>,
    pub params: &'static [ParamSpec],
    /// Stack settings this variant stands for (NewReno-ND: delayed ACKs off;
    /// Westwood-NR: NewReno recovery; `sack`: SACK recovery without PRR).
    pub implies: Implied,
    build: fn(&Params, Profile) -> AnyCc,
}

impl CcDescriptor {
    /// Build with `params` (already validated by [`validate_params`]).
    pub fn build(&self, params: &Params, profile: Profile) -> AnyCc {
        (self.build)(params, profile)
    }

    /// Value of parameter `name`: the given one or the profile's default.
    pub fn param(&self, params: &Params, name: &str, profile: Profile) -> f64 {
        param(self.params, params, name, profile)
    }
}

/// Every algorithm vtlab offers, by name.
pub static REGISTRY: &[CcDescriptor] = &[CcDescriptor {
    name: "newreno",
    description: "Reno window laws (slow start, AIMD) with RFC 6582 NewReno fast recovery",
    source: "RFC 5681, RFC 6582; ns-3 tcp-congestion-ops.cc (TcpNewReno)",
    ns3_type_id: Some("TcpNewReno"),
    params: &[],
    implies: Implied::NOTHING,
    build: |_, profile| AnyCc::NewReno(NewReno::new(profile)),
},
CcDescriptor {
    name: "newreno-lp",
    description: "NewReno with the Vegas loss predictor: gentle reaction to losses it ascribes to link errors",
    source: "Martignon et al., NewReno-LP (Vegas predictor, Brakmo & Peterson 1995); RFC 6582",
    ns3_type_id: None,
    params: newreno_lp::LP_PARAMS,
    implies: Implied::recovery(crate::tcp::Recovery::NewReno),
    build: |p, profile| AnyCc::NewRenoLp(NewRenoLp::vegas(p, profile)),
},
CcDescriptor {
    name: "newreno-ideal-lp",
    description: "NewReno-LP with an ideal predictor that reads the simulator's drop records (an upper bound)",
    source: "Martignon et al., ideal loss predictor; vtlab loss oracle (CongestionOps::on_loss_oracle)",
    ns3_type_id: None,
    params: &[],
    implies: Implied::recovery(crate::tcp::Recovery::NewReno),
    build: |_, profile| AnyCc::NewRenoLp(NewRenoLp::ideal(profile)),
},
CcDescriptor {
    name: "tahoe",
    description: "Reno window laws with Tahoe loss recovery: fast retransmit, then slow start from one segment, going back N (no fast recovery)",
    source: "Jacobson, SIGCOMM 1988 (4.3BSD-Tahoe); RFC 5681 window laws; ns-2 Agent/TCP",
    ns3_type_id: None,
    params: &[],
    implies: Implied::recovery(crate::tcp::Recovery::Tahoe),
    build: |_, profile| AnyCc::NewReno(NewReno::new(profile)),
},
CcDescriptor {
    name: "reno",
    description: "Reno window laws with RFC 5681 fast recovery: inflation per duplicate ACK, left on the first new ACK",
    source: "RFC 5681 §3.2; ns-2 Agent/TCP/Reno",
    ns3_type_id: None,
    params: &[],
    implies: Implied::recovery(crate::tcp::Recovery::Reno),
    build: |_, profile| AnyCc::NewReno(NewReno::new(profile)),
},
CcDescriptor {
    name: "sack",
    description: "Reno window laws with RFC 6675 SACK recovery, cwnd held at ssthresh (no PRR), as ns-2's Sack1",
    source: "RFC 6675, RFC 2018; ns-2 Agent/TCP/Sack1 (used by Janevski & Petrov's 802.11 study)",
    ns3_type_id: None,
    params: &[],
    implies: Implied {
        recovery: Some(crate::tcp::Recovery::Sack),
        prr: Some(false),
        ..Implied::NOTHING
    },
    build: |_, profile| AnyCc::NewReno(NewReno::new(profile)),
},
CcDescriptor {
    name: "newreno-nd",
    description: "NewReno with delayed ACKs disabled at the receiver (the V2G study's NewReno ND)",
    source: "Park et al. 2019, §5 (NewReno ND); RFC 6582",
    ns3_type_id: None,
    params: &[],
    implies: Implied {
        delayed_ack: Some(false),
        ..Implied::NOTHING
    },
    build: |_, profile| AnyCc::NewReno(NewReno::new(profile)),
},
CcDescriptor {
    name: "newreno-sc",
    description: "NewReno with the ssthresh floor raised to k MSS (the V2G study's proposal)",
    source: "Park et al. 2019, Algorithm 1 (NewReno SC); RFC 6582",
    ns3_type_id: None,
    params: newreno::SC_PARAMS,
    implies: Implied::NOTHING,
    build: |p, profile| AnyCc::NewReno(NewReno::ssthresh_changed(p, profile)),
},
CcDescriptor {
    name: "htcp",
    description: "H-TCP: additive increase grows with the time since the last congestion event; decrease adapts to minRTT/maxRTT",
    source: "Leith & Shorten, PFLDnet 2004; Linux tcp_htcp.c; ns-3 tcp-htcp.cc (TcpHtcp)",
    ns3_type_id: Some("TcpHtcp"),
    params: htcp::PARAMS,
    implies: Implied::NOTHING,
    build: |p, profile| AnyCc::Htcp(Htcp::new(p, profile)),
},
CcDescriptor {
    name: "hybla",
    description: "Hybla: growth scaled by rho = RTT/RTT0 (slow start 2^rho − 1, avoidance rho²/cwnd) to remove the RTT bias",
    source: "Caini & Firrincieli, Int. J. Satell. Commun. Netw. 22 (2004); Linux tcp_hybla.c; ns-3 tcp-hybla.cc (TcpHybla)",
    ns3_type_id: Some("TcpHybla"),
    params: hybla::PARAMS,
    implies: Implied::NOTHING,
    build: |p, profile| AnyCc::Hybla(Hybla::new(p, profile)),
},
CcDescriptor {
    name: "bic",
    description: "BIC: binary search toward the window of the last loss, then max probing; decrease to 0.8",
    source: "Xu, Harfoush & Rhee, IEEE INFOCOM 2004; Linux tcp_bic.c; ns-3 tcp-bic.cc (TcpBic)",
    ns3_type_id: Some("TcpBic"),
    params: bic::PARAMS,
    implies: Implied::NOTHING,
    build: |p, profile| AnyCc::Bic(Bic::new(p, profile)),
},
CcDescriptor {
    name: "cubic",
    description: "CUBIC: window a cubic function of the time since the last loss, Reno-friendly floor, HyStart slow-start exit",
    source: "Ha, Rhee & Xu, SIGOPS OSR 42(5) 2008; RFC 9438; Linux tcp_cubic.c; ns-3 tcp-cubic.cc (TcpCubic)",
    ns3_type_id: Some("TcpCubic"),
    params: cubic::PARAMS,
    implies: Implied::NOTHING,
    build: |p, profile| AnyCc::Cubic(Cubic::new(p, profile)),
},
CcDescriptor {
    name: "acwnd",
    description: "ACWND: CUBIC whose loss reduction is the RTT ratio γ = R_m/R_t (clamped) and whose increase is multiplied by λ while γ is close to 1",
    source: "Hu, Lin, Bai & Tonguz, LTE Internet access in moving vehicles (ACWND); vtlab's reading in docs/cellular.md",
    ns3_type_id: None,
    params: acwnd::PARAMS,
    implies: Implied::NOTHING,
    build: |p, profile| AnyCc::Acwnd(Acwnd::new(p, profile)),
},
CcDescriptor {
    name: "illinois",
    description: "TCP-Illinois: AIMD with alpha (10 → 0.3) and beta (1/8 → 1/2) set once per RTT by the average queueing delay",
    source: "Liu, Başar & Srikant, Perf. Eval. 65 (2008); Linux tcp_illinois.c; ns-3 tcp-illinois.cc (TcpIllinois)",
    ns3_type_id: Some("TcpIllinois"),
    params: illinois::PARAMS,
    implies: Implied::NOTHING,
    build: |p, profile| AnyCc::Illinois(Illinois::new(p, profile)),
},
CcDescriptor {
    name: "illinois-aa",
    description: "Illinois with added aggressiveness (V2G study): alpha 11 → 1.0, beta 0.025 → 0.5",
    source: "Park et al., Electronics 8(11) 1206 (2019) §4.1.2, Fig. 10; Illinois law as Linux tcp_illinois.c / ns-3 tcp-illinois.cc",
    ns3_type_id: None,
    params: illinois::AA_PARAMS,
    implies: Implied::NOTHING,
    build: |p, profile| AnyCc::Illinois(Illinois::aa(p, profile)),
},
CcDescriptor {
    name: "vegas",
    description: "Vegas: delay-based, keeps alpha..beta segments queued (diff = expected − actual window, once per RTT)",
    source: "Brakmo & Peterson, IEEE JSAC 13(8) 1995; Linux tcp_vegas.c; ns-3 tcp-vegas.cc (TcpVegas)",
    ns3_type_id: Some("TcpVegas"),
    params: vegas::PARAMS,
    implies: Implied::NOTHING,
    build: |p, profile| match profile {
        Profile::Ns2 => AnyCc::VegasNs2(VegasNs2::new(p)),
        _ => AnyCc::Vegas(Vegas::new(p, profile)),
    },
},
CcDescriptor {
    name: "veno",
    description: "Veno: Reno that uses the Vegas backlog to tell random losses (cut to 4/5) from congestive ones (halve)",
    source: "Fu & Liew, IEEE JSAC 21(2) 2003; Linux tcp_veno.c; ns-3 tcp-veno.cc (TcpVeno)",
    ns3_type_id: Some("TcpVeno"),
    params: veno::PARAMS,
    implies: Implied::NOTHING,
    build: |p, profile| AnyCc::Veno(Veno::new(p, profile)),
},
CcDescriptor {
    name: "westwood",
    description: "Original Westwood: per-ACK bandwidth samples, time-varying Tustin filter; ssthresh = BWE·RTTmin after loss",
    source: "Mascolo et al., MobiCom 2001; ns-2 tcp-westwood-nr.cc (tau, virtual samples); ns-3 tcp-westwood.cc (removed in 3.38)",
    ns3_type_id: None,
    params: westwood::PARAMS,
    implies: Implied::NOTHING,
    build: |p, profile| AnyCc::Westwood(Westwood::new(p, profile)),
},
CcDescriptor {
    name: "westwood-plus",
    description: "Westwood+: per-RTT bandwidth samples; ssthresh (and cwnd after recovery) = BWE·RTTmin",
    source: "Grieco & Mascolo, CCR 34(2) 2004; Linux tcp_westwood.c; ns-3 tcp-westwood-plus.cc (TcpWestwoodPlus)",
    ns3_type_id: Some("TcpWestwoodPlus"),
    params: westwood::PLUS_PARAMS,
    implies: Implied::NOTHING,
    build: |p, profile| AnyCc::Westwood(Westwood::plus(p, profile)),
},
CcDescriptor {
    name: "westwood-nr",
    description: "Westwood+ bandwidth estimation over NewReno recovery (the sender's NewReno machine); same window law as westwood-plus",
    source: "Grieco & Mascolo, CCR 34(2) 2004; ns-2 WestwoodNR; Linux tcp_westwood.c; ns-3 tcp-westwood-plus.cc (alias of westwood-plus)",
    ns3_type_id: None,
    params: westwood::PLUS_PARAMS,
    implies: Implied::recovery(crate::tcp::Recovery::NewReno),
    build: |p, profile| AnyCc::Westwood(Westwood::plus(p, profile)),
},
CcDescriptor {
    name: "highspeed",
    description: "HighSpeed TCP: a(w)/b(w) from the RFC 3649 table above 38 segments, Reno below",
    source: "RFC 3649 (Appendix B); Linux tcp_highspeed.c; ns-3 tcp-highspeed.cc (TcpHighSpeed)",
    ns3_type_id: Some("TcpHighSpeed"),
    params: highspeed::PARAMS,
    implies: Implied::NOTHING,
    build: |p, profile| AnyCc::HighSpeed(HighSpeed::new(p, profile)),
},
CcDescriptor {
    name: "scalable",
    description: "Scalable TCP: +1 segment per ai segments acked, cut by md = 1/8 on loss",
    source: "Kelly, CCR 33(2) 2003; Linux tcp_scalable.c; ns-3 tcp-scalable.cc (TcpScalable)",
    ns3_type_id: Some("TcpScalable"),
    params: scalable::PARAMS,
    implies: Implied::NOTHING,
    build: |p, profile| AnyCc::Scalable(Scalable::new(p, profile)),
},
CcDescriptor {
    name: "yeah",
    description: "YeAH: Scalable growth while the queue is small, Reno otherwise; precautionary decongestion",
    source: "Baiocchi, Castellani & Vacirca, PFLDnet 2007; Linux tcp_yeah.c; ns-3 tcp-yeah.cc (TcpYeah)",
    ns3_type_id: Some("TcpYeah"),
    params: yeah::PARAMS,
    implies: Implied::NOTHING,
    build: |p, profile| AnyCc::Yeah(Yeah::new(p, profile)),
},
CcDescriptor {
    name: "bbr",
    description: "BBR v1: model-based (windowed max delivery rate, min RTT), paced at gain x bandwidth; STARTUP, DRAIN, PROBE_BW gain cycle, PROBE_RTT",
    source: "Cardwell et al., ACM Queue 14(5) 2016; draft-cardwell-iccrg-bbr-congestion-control-00; Linux tcp_bbr.c (v1); ns-3 tcp-bbr.cc (TcpBbr)",
    ns3_type_id: Some("TcpBbr"),
    params: bbr::PARAMS,
    implies: Implied::NOTHING,
    build: |p, profile| AnyCc::Bbr(Bbr::new(p, profile)),
}];

/// Value of parameter `name` among `specs`: the given one or the profile's
/// default (NaN for an undeclared name, which tests catch).
pub fn param(specs: &[ParamSpec], given: &Params, name: &str, profile: Profile) -> f64 {
    given.get(name).copied().unwrap_or_else(|| {
        specs
            .iter()
            .find(|p| p.name == name)
            .map_or(f64::NAN, |p| p.default_for(profile))
    })
}

pub fn lookup(name: &str) -> Option<&'static CcDescriptor> {
    REGISTRY.iter().find(|d| d.name == name)
}

pub fn names() -> Vec<&'static str> {
    REGISTRY.iter().map(|d| d.name).collect()
}

/// Check parameter names, types, ranges and joint constraints (with unset
/// parameters at `profile`'s defaults); the error names the parameter and
/// says what is allowed.
pub fn validate_params(
    desc: &CcDescriptor,
    params: &Params,
    profile: Profile,
) -> Result<(), (String, String)> {
    for (name, value) in params {
        let Some(spec) = desc.params.iter().find(|p| p.name == name) else {
            let valid: Vec<&str> = desc.params.iter().map(|p| p.name).collect();
            let list = if valid.is_empty() {
                "it has no parameters".to_string()
            } else {
                format!("valid: {}", valid.join(", "))
            };
            return Err((
                name.clone(),
                format!("unknown parameter of '{}' ({list})", desc.name),
            ));
        };
        if !(value.is_finite() && *value >= spec.min && *value <= spec.max) {
            return Err((
                name.clone(),
                format!(
                    "{} is outside [{}, {}]",
                    Num(*value),
                    Num(spec.min),
                    Num(spec.max)
                ),
            ));
        }
        if spec.integer && value.fract() != 0.0 {
            return Err((
                name.clone(),
                format!(
                    "{} is not a whole number (an integer in [{}, {}])",
                    Num(*value),
                    Num(spec.min),
                    Num(spec.max)
                ),
            ));
        }
    }
    for spec in desc.params {
        if let Some(upper) = spec.at_most {
            let lo = param(desc.params, params, spec.name, profile);
            let hi = param(desc.params, params, upper, profile);
            if lo > hi {
                let name = if params.contains_key(spec.name) {
                    spec.name
                } else {
                    upper
                };
                return Err((
                    name.to_string(),
                    format!(
                        "{} = {} must not exceed {upper} = {}",
                        spec.name,
                        Num(lo),
                        Num(hi)
                    ),
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ns3_type_ids_are_bare_and_unique() {
        let ids: Vec<&str> = REGISTRY.iter().filter_map(|d| d.ns3_type_id).collect();
        for id in &ids {
            assert!(id.starts_with("Tcp") && !id.contains("::"), "{id}");
        }
        let mut unique = ids.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), ids.len(), "one controller per TypeId");
        assert_eq!(lookup("newreno").unwrap().ns3_type_id, Some("TcpNewReno"));
        assert_eq!(lookup("newreno-nd").unwrap().ns3_type_id, None);
    }
}
