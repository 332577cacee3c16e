//! A cellular (LTE) link direction: capacity given per millisecond, by a trace
//! or by a channel model, and a deep per-user buffer at the sender's side.

pub mod channel;
pub mod grant;
pub mod schedule;
pub mod tables;
pub mod trace;

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::engine::{RngStream, Time};
use grant::{GrantConf, GrantServer};
use schedule::{OpportunitySource, Server, Service, TraceSource};

/// Where one cellular direction's capacity comes from (resolved, checked by
/// the spec layer).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum CapacityConf {
    /// A mahimahi trace: opportunity times in ms (repeated with the last
    /// timestamp as period), each of `opportunity_bytes` bytes.
    Trace {
        /// Where it came from (a file name, or "inline"): documentation only.
        source: String,
        opportunity_bytes: u32,
        times_ms: Arc<[u64]>,
        /// Served on request ([`grant`]); `None`: every opportunity is usable.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        grant: Option<GrantConf>,
    },
    /// The LTE channel model ([`channel`]): one opportunity per 1 ms TTI that
    /// delivers a transport block, at the end of the TTI.
    Model {
        channel: channel::ChannelConf,
        /// Served on request ([`grant`]); `None`: every opportunity is usable.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        grant: Option<GrantConf>,
    },
}

impl CapacityConf {
    /// The opportunity source of one run; `rng` is the direction's own stream
    /// (used by the channel model).
    pub fn source(&self, rng: RngStream) -> Box<dyn OpportunitySource> {
        match self {
            CapacityConf::Trace {
                opportunity_bytes,
                times_ms,
                ..
            } => Box::new(TraceSource::new(times_ms.clone(), *opportunity_bytes)),
            CapacityConf::Model { channel, .. } => Box::new(ModelSource {
                channel: channel::Channel::new(channel, rng),
                tti: 0,
            }),
        }
    }

    /// The request–grant timing, if the direction is served on request.
    pub fn grant(&self) -> Option<GrantConf> {
        match self {
            CapacityConf::Trace { grant, .. } | CapacityConf::Model { grant, .. } => *grant,
        }
    }

    /// The serving state of one run ([`CapacityConf::source`], behind the
    /// request–grant gate if the direction has one).
    pub fn server(&self, rng: RngStream) -> ScheduleServer {
        let source = self.source(rng);
        match self.grant() {
            None => ScheduleServer::Free(Server::new(source)),
            Some(g) => ScheduleServer::Granted(GrantServer::new(source, g)),
        }
    }
}

/// How a cellular direction serves its FIFO: every opportunity of its
/// capacity, or only those its scheduler grants.
pub enum ScheduleServer {
    Free(Server<Box<dyn OpportunitySource>>),
    Granted(GrantServer<Box<dyn OpportunitySource>>),
}

impl ScheduleServer {
    /// Serve a packet of `bytes` bytes that joins the queue at `now`.
    pub fn serve(&mut self, now: Time, bytes: u32) -> Service {
        match self {
            ScheduleServer::Free(s) => s.serve(now, bytes),
            ScheduleServer::Granted(s) => s.serve(now, bytes),
        }
    }
}

/// Opportunities from the channel model: TTI i (from i ms to i + 1 ms) that
/// delivers (or loses) a transport block is an opportunity of its size at
/// (i + 1) ms. The channel is stepped through every TTI, busy or not, so its
/// state never depends on the traffic.
pub struct ModelSource {
    channel: channel::Channel,
    /// TTIs generated so far.
    tti: u64,
}

/// Nanoseconds per TTI.
const TTI_NS: u64 = 1_000_000;

impl ModelSource {
    fn step(&mut self) -> Option<schedule::Opportunity> {
        let t = self.channel.next_tti();
        self.tti += 1;
        (t.bytes > 0).then_some(schedule::Opportunity {
            time: crate::engine::Time(self.tti * TTI_NS),
            bytes: t.bytes,
            lost: t.lost,
        })
    }
}

/// TTIs without any capacity after which the channel is taken to be out of
/// coverage for good (ten simulated minutes): the next opportunity is then
/// [`NEVER`], beyond every run's horizon, so the run ends instead of hanging.
pub const MAX_SILENT_TTIS: u64 = 600_000;

/// An opportunity no run reaches (about 146 years).
pub const NEVER: schedule::Opportunity = schedule::Opportunity {
    time: crate::engine::Time(u64::MAX / 4),
    bytes: u32::MAX,
    lost: true,
};

impl OpportunitySource for ModelSource {
    fn seek(&mut self, t: crate::engine::Time) -> schedule::Opportunity {
        let mut silent = 0;
        loop {
            match self.step() {
                Some(op) if op.time >= t => return op,
                Some(_) => silent = 0,
                None if self.tti * TTI_NS >= t.0 => {
                    silent += 1;
                    if silent > MAX_SILENT_TTIS {
                        return NEVER;
                    }
                }
                None => {}
            }
        }
    }

    fn next(&mut self) -> schedule::Opportunity {
        for _ in 0..MAX_SILENT_TTIS {
            if let Some(op) = self.step() {
                return op;
            }
        }
        NEVER
    }
}
