//! Resolved TCP stack settings ([`TcpConfig`], every field explicit; the
//! user's view with optional fields is `spec::TcpSpec`).
//!
//! Defaults are ns-3.44's TCP defaults where the V2G study depends on them
//! (initial window 10, delayed ACK every 2 segments / 200 ms, minimum RTO 1 s,
//! clock granularity 1 ms, limited transmit on, timestamps on, SYN timeout
//! 3 s) and the study's own settings (MSS 1460, 128 KiB buffers).

use serde::{Deserialize, Serialize};

use crate::tcp::behaviour::StackBehaviour;
use crate::tcp::cc::{Params, Profile};
use crate::tcp::rwnd::RwndConf;
use crate::tcp::state::Recovery;

/// `tcp_rmem[2]`'s default since Linux 6.16: min(32 MiB, free memory / 128)
/// (`tcp_init`), 32 MiB on any host with 4 GiB free.
pub const DEFAULT_RECV_BUFFER_MAX: u64 = 33_554_432;

fn default_recv_buffer_max() -> u64 {
    DEFAULT_RECV_BUFFER_MAX
}
fn is_default_recv_buffer_max(v: &u64) -> bool {
    *v == DEFAULT_RECV_BUFFER_MAX
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
    /// The most the `linux` profile's receive-buffer autotuning grows the
    /// buffer to (`tcp_rmem[2]`: min(32 MiB, free memory / 128) since Linux
    /// 6.16, 6 MiB before); `recv_buffer` is where it starts
    /// (`tcp_rmem[1]`). The `ns3` profile keeps `recv_buffer` and ignores it.
    /// Left out of the serialised form at its default, so that the scenario
    /// hashes of specs that do not set it stay as they were.
    #[serde(
        default = "default_recv_buffer_max",
        skip_serializing_if = "is_default_recv_buffer_max"
    )]
    pub recv_buffer_max: u64,
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
    /// SYN retransmissions before the connection attempt fails; unset: the
    /// profile's (ns3 5: `ConnCount` = 6 SYNs in all; linux 6: `tcp_syn_retries`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub syn_retries: Option<u32>,
    /// Consecutive retransmission timeouts (without an ACK of new data) after
    /// which the connection is dropped; unset: the profile's (ns3 6:
    /// `DataRetries`; linux 15: `tcp_retries2`, counted in timeouts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_retries: Option<u32>,
    /// Linux `TCP_USER_TIMEOUT`: once a retransmission timeout has fired, the
    /// connection is dropped when the data then outstanding stays unacknowledged
    /// this long after its first transmission (the retransmission timer is
    /// clamped to fire then); unset: off (both profiles).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_timeout_ns: Option<u64>,
    /// The receiver's window control (default: the buffer, as every stack).
    #[serde(default, skip_serializing_if = "RwndConf::is_fixed")]
    pub rwnd: RwndConf,
    /// Tail Loss Probe (RFC 8985 §7); unset: the profile's (linux on with SACK
    /// recovery, ns3 off). See [`TcpConfig::tlp`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tlp: Option<bool>,
    /// RACK time-based loss detection (RFC 8985 §6); unset: the profile's
    /// (linux on with SACK recovery, ns3 off). See [`TcpConfig::rack`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rack: Option<bool>,
    /// RFC 5827 early retransmit; unset: off in both profiles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub early_retransmit: Option<bool>,
    /// Re-arm the RTO from the head's transmission after a probe or reorder
    /// timer (Linux `tcp_rearm_rto`); unset: the profile's (linux on when TLP
    /// or RACK is, ns3 off). See [`TcpConfig::rto_from_head`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rto_from_head: Option<bool>,
}

impl Default for TcpConfig {
    fn default() -> Self {
        Self::defaults(Profile::Ns3)
    }
}

/// ns-2 agents never give up (`max_connects_` −1, no limit on timeouts):
/// the `ns2` profile allows the most SYN and data retries vtlab accepts.
pub const NS2_SYN_RETRIES: u32 = 30;
pub const NS2_DATA_RETRIES: u32 = 100;

/// ns-2's `window_` default, packets: the `ns2` profile's receive window is
/// this many segments unless `recv_buffer` is given.
pub const NS2_WINDOW_PACKETS: u64 = 20;

/// The `ns2` profile's send buffer: 1 GiB, a bound on bytes queued (a
/// counter, nothing is allocated), standing for the one-way agents' lack
/// of a send buffer.
pub const NS2_SEND_BUFFER: u64 = 1 << 30;

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
    /// SYN retransmissions allowed (the setting or the profile's default).
    pub fn syn_retries(&self) -> u32 {
        self.syn_retries.unwrap_or(match self.profile {
            Profile::Ns3 => 5,
            Profile::Linux => 6,
            Profile::Ns2 => NS2_SYN_RETRIES,
        })
    }

    /// Consecutive retransmission timeouts allowed (the setting or the profile's).
    pub fn data_retries(&self) -> u32 {
        self.data_retries.unwrap_or(match self.profile {
            Profile::Ns3 => 6,
            Profile::Linux => 15,
            Profile::Ns2 => NS2_DATA_RETRIES,
        })
    }

    /// Whether the Tail Loss Probe runs: the setting, or the profile's default
    /// where the recovery is SACK (Linux probes only SACK connections,
    /// `tcp_schedule_loss_probe`).
    pub fn tlp(&self) -> bool {
        self.tlp
            .unwrap_or(StackBehaviour::of(self.profile).tlp && self.recovery == Recovery::Sack)
    }

    /// Whether RACK detects losses: the setting, or the profile's default where
    /// the recovery is SACK (without SACK Linux marks losses NewReno's way,
    /// `tcp_identify_packet_loss`).
    pub fn rack(&self) -> bool {
        self.rack
            .unwrap_or(StackBehaviour::of(self.profile).rack && self.recovery == Recovery::Sack)
    }

    /// Whether RFC 5827 early retransmit lowers the duplicate-ACK threshold.
    pub fn early_retransmit(&self) -> bool {
        self.early_retransmit
            .unwrap_or(StackBehaviour::of(self.profile).early_retransmit)
    }

    /// Whether an RTO re-armed after a probe or reorder timer counts from the
    /// head's last transmission: the setting, or the profile's default while a
    /// probe or reorder timer exists (it changes nothing otherwise).
    pub fn rto_from_head(&self) -> bool {
        self.rto_from_head.unwrap_or(
            StackBehaviour::of(self.profile).rto_from_head && (self.tlp() || self.rack()),
        )
    }

    /// The delayed-ACK allowance a probe timeout adds when one segment is
    /// outstanding: Linux's `tcp_rto_min` (TCP_RTO_MIN, 200 ms), which the
    /// `linux` profile expresses as `clock_granularity`; RFC 8985's
    /// WCDelAckT (200 ms) for `ns3`, whose granularity means something else.
    pub fn tlp_delack_allowance_ns(&self) -> u64 {
        match self.profile {
            Profile::Linux => self.clock_granularity_ns,
            Profile::Ns3 | Profile::Ns2 => 200_000_000,
        }
    }

    /// The recovery as reported in results: `sack+prr` when PRR is on.
    pub fn recovery_name(&self) -> &'static str {
        match (self.recovery, self.prr) {
            (Recovery::Sack, true) => "sack+prr",
            (r, _) => r.as_str(),
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
    /// timer at its 40 ms minimum (`TCP_DELACK_MIN`), initial SYN timeout
    /// 1 s (`TCP_TIMEOUT_INIT`, RFC 6298 §2.1; ns-3's `ConnTimeout` is 3 s).
    /// ns-2.35 (`tcl/lib/ns-default.tcl`, `Agent/TCP`): `packetSize_` 1000,
    /// `windowInit_` 2 (after the pseudo-SYN), no timestamps, no SACK,
    /// NewReno recovery without PRR (`Agent/TCP/Newreno`), `rtxcur_init_`
    /// 3 s (also for the pseudo-SYN), `minrto_` 200 ms, `maxrto_` 60 s,
    /// `tcpTick_` 10 ms as the granularity of its integer-tick timer, one
    /// ACK per packet (`TCPSink`: a delayed-ACK count of 1; a count of 2 is
    /// `DelAckSink`, every second packet or after `interval_` 100 ms, gaps
    /// and gap fills at once), no send buffer
    /// (the largest vtlab allows); `window_` (20 packets) and the initial
    /// ssthresh (= `window_`) follow the MSS at resolution
    /// ([`NS2_WINDOW_PACKETS`]).
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
            recv_buffer_max: DEFAULT_RECV_BUFFER_MAX,
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
            syn_retries: None,
            data_retries: None,
            user_timeout_ns: None,
            rwnd: RwndConf::Fixed,
            tlp: None,
            rack: None,
            early_retransmit: None,
            rto_from_head: None,
        };
        match profile {
            Profile::Ns3 => base,
            Profile::Linux => TcpConfig {
                rto_min_ns: 0,
                clock_granularity_ns: 200_000_000,
                rto_max_ns: 120_000_000_000,
                delayed_ack_timeout_ns: 40_000_000,
                syn_timeout_ns: 1_000_000_000,
                ..base
            },
            Profile::Ns2 => TcpConfig {
                recovery: Recovery::NewReno,
                prr: false,
                mss: 1000,
                send_buffer: NS2_SEND_BUFFER,
                recv_buffer: NS2_WINDOW_PACKETS * 1000,
                initial_cwnd: 2,
                initial_ssthresh: Some(NS2_WINDOW_PACKETS * 1000),
                timestamps: false,
                rto_initial_ns: 3_000_000_000,
                rto_min_ns: 200_000_000,
                clock_granularity_ns: 10_000_000,
                delayed_ack_count: 1,
                delayed_ack_timeout_ns: 100_000_000,
                ..base
            },
        }
    }
}
