//! A connection in a chosen state, for unit tests of one recovery without
//! the sender (MSS 1000 B, NewReno window laws, ns3 profile unless changed).

use std::collections::BTreeMap;

use crate::engine::{Duration, Time};
use crate::net::{NodeId, Packet, PacketKind};
use crate::tcp::behaviour::StackBehaviour;
use crate::tcp::cc::{AnyCc, NewReno, Profile, Window};
use crate::tcp::conn::{Conn, Phase, SenderStats};
use crate::tcp::state::CaState;
use crate::tcp::{RttEstimator, TcpConfig};

pub const MSS: u64 = 1000;

/// Established, segments `[0, sent)` sent (in MSS units), none acknowledged,
/// cwnd = `cwnd` segments, ssthresh unlimited, rwnd large.
pub fn conn(sent: u64, cwnd: u64) -> Conn {
    let cfg = TcpConfig {
        mss: MSS,
        timestamps: false,
        ..TcpConfig::default()
    };
    Conn {
        b: StackBehaviour::of(cfg.profile),
        cc: AnyCc::NewReno(NewReno::new(Profile::Ns3)),
        flow: 0,
        peer: NodeId(1),
        total: 1_000 * MSS,
        phase: Phase::Established,
        snd_una: 0,
        snd_nxt: sent * MSS,
        snd_max: sent * MSS,
        w: Window {
            cwnd: cwnd * MSS,
            ssthresh: u64::MAX,
        },
        ca_state: CaState::Open,
        dupacks: 0,
        recover: None,
        rwnd: 1 << 30,
        rtt: RttEstimator::new(
            Duration::from_millis(1000),
            Duration::from_millis(1000),
            Duration::from_millis(60_000),
            Duration::from_millis(1),
        ),
        timer: None,
        timer_kind: Default::default(),
        head_rexmit_rearms: false,
        timed: None,
        rtt_history: None,
        drops: BTreeMap::new(),
        stats: SenderStats::default(),
        ts_recent: Time::ZERO,
        cwnd_limited: false,
        max_out: 0,
        cwnd_usage_seq: 0,
        rate: None,
        pacing: Default::default(),
        cc_owns_cwnd: false,
        rate_restart: false,
        cfg,
    }
}

pub const T: Time = Time(0);

/// Data segments in `out`, as (seq / MSS) numbers; `out` is emptied.
pub fn sent(out: &mut Vec<Packet>) -> Vec<u64> {
    out.drain(..)
        .filter(|p| p.kind == PacketKind::Data)
        .map(|p| p.seq / MSS)
        .collect()
}
