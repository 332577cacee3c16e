//! The plan: what the simulation runs, fully resolved and checked.
//!
//! A [`Plan`] is built only by [`crate::spec::plan`] from a resolved
//! [`crate::spec::Scenario`]; its fields are private to the crate, so the
//! engine cannot be handed anything that skipped the checks. Every name is
//! looked up once here (nodes become indices, congestion controls become
//! registry descriptors, routes are computed), so nothing downstream can fall
//! back silently on a default.

use serde::{Deserialize, Serialize};

use crate::engine::{Duration, Time};
use crate::net::cellular::CapacityConf;
use crate::net::family::{AnyFamily, FamilyConf, LinkFamily};
use crate::net::qdisc::dql::DqlParams;
use crate::net::qdisc::QdiscConf;
use crate::net::{LinkParams, LossConf, NodeId};
use crate::tcp::cc::CcDescriptor;
use crate::tcp::TcpConfig;

/// One point-to-point link, both directions, with node indices.
#[derive(Clone, Debug)]
pub struct PlannedLink {
    pub(crate) name: String,
    pub(crate) a: NodeId,
    pub(crate) b: NodeId,
    pub(crate) params: LinkParams,
    /// Loss at the receiving end of a→b and of b→a.
    pub(crate) loss_ab: LossConf,
    pub(crate) loss_ba: LossConf,
    /// Capacity schedules of cellular directions (`None`: the link's rate).
    pub(crate) capacity_ab: Option<CapacityConf>,
    pub(crate) capacity_ba: Option<CapacityConf>,
    /// Root queue disc of each constant-rate direction.
    pub(crate) qdisc: Option<QdiscConf>,
    /// Byte queue limits with it.
    pub(crate) bql: Option<DqlParams>,
}

/// A shared medium of any link family with its sites' nodes.
#[derive(Clone, Debug)]
pub struct PlannedMedium {
    pub(crate) conf: FamilyConf,
    pub(crate) nodes: Vec<NodeId>,
}

/// A hop over a medium: site `from` to its neighbour `to` (indices into the
/// medium's sites).
#[derive(Clone, Copy, Debug)]
pub struct AirHop {
    pub(crate) medium: u32,
    pub(crate) from: u32,
    pub(crate) to: u32,
}

/// One step of a session: `repeats` request/response exchanges in a row.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct StepConf {
    pub name: String,
    /// Bytes the client writes per request (V2GTP header and TLS records included).
    pub request_bytes: u64,
    /// Bytes the server writes per response.
    pub response_bytes: u64,
    /// The response is due this long after its request was written (0: no deadline).
    pub timeout_ns: u64,
    pub repeats: u32,
    /// The next request is written `period` after this one at the earliest
    /// (0: as soon as the response is in).
    pub period_ns: u64,
}

/// What a flow carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlowRole {
    /// A bulk transfer of `bytes`, all available from the start.
    Bulk,
    /// The requests of session `u32`, client → server (this half opens the connection).
    Requests(u32),
    /// The responses of session `u32`, server → client (the passive half).
    Responses(u32),
}

/// One direction of data with its endpoints and congestion control looked
/// up: a bulk transfer, or one half of a session's connection.
#[derive(Clone)]
pub struct PlannedFlow {
    pub(crate) name: String,
    pub(crate) src: NodeId,
    pub(crate) dst: NodeId,
    /// Bytes to transfer (a session half: the bytes its messages add up to).
    pub(crate) bytes: u64,
    pub(crate) start: Time,
    pub(crate) tcp: TcpConfig,
    pub(crate) cc: &'static CcDescriptor,
    pub(crate) role: FlowRole,
}

/// A request/response session over one connection, made of two flows.
#[derive(Clone, Debug)]
pub struct PlannedSession {
    pub(crate) name: String,
    pub(crate) profile: String,
    pub(crate) cc: String,
    pub(crate) tcp_profile: &'static str,
    pub(crate) steps: Vec<StepConf>,
    pub(crate) abort_on_miss: bool,
    /// Times the vehicle writes a request again at its deadline before it gives up.
    pub(crate) retries: u32,
    pub(crate) processing: Duration,
    pub(crate) energy_step: Option<u32>,
    pub(crate) start: Time,
    /// Indices of its request and response flows in [`Plan::flows`].
    pub(crate) requests: u32,
    pub(crate) responses: u32,
}

/// A checked, engine-ready scenario.
#[derive(Clone)]
pub struct Plan {
    pub(crate) hash: String,
    pub(crate) nodes: Vec<String>,
    pub(crate) links: Vec<PlannedLink>,
    pub(crate) media: Vec<PlannedMedium>,
    /// The hops over media, in order: direction `2·links + k` is `air[k]`.
    pub(crate) air: Vec<AirHop>,
    pub(crate) flows: Vec<PlannedFlow>,
    pub(crate) sessions: Vec<PlannedSession>,
    /// `routes[node][dst]`: the link direction leaving `node` toward `dst`
    /// (direction `2·i` is link i's a→b, `2·i + 1` its b→a; after the links'
    /// directions come the hops over media, [`Plan::air`]).
    pub(crate) routes: Vec<Vec<Option<u32>>>,
    /// Each direction's (from, to), in direction order.
    pub(crate) dirs: Vec<(NodeId, NodeId)>,
    /// The run ends here at the latest: the scenario's `stop`, or the
    /// default horizon after the last flow start.
    pub(crate) horizon: Time,
    /// `abort_reason` of flows not done at the horizon: `stop_time` or `horizon`.
    pub(crate) horizon_reason: &'static str,
    /// Scheduler events the run may process.
    pub(crate) max_events: u64,
    /// Bytes of output (traces, events, message rows, captures) the run may
    /// produce, counted as [`crate::metrics::row_output_bytes`] says.
    pub(crate) max_output_bytes: u64,
    /// Of those, what the sessions' message rows take (set aside before the run).
    pub(crate) message_output_bytes: u64,
    pub(crate) trace_interval: Duration,
    /// Each node's IPv4 address.
    pub(crate) addresses: Vec<[u8; 4]>,
}

impl Plan {
    /// The scenario hash every result row carries.
    pub fn hash(&self) -> &str {
        &self.hash
    }

    /// Node names, by index.
    pub fn nodes(&self) -> &[String] {
        &self.nodes
    }

    /// Smallest MTU along the route from `from` to `to` (`u32::MAX` for an
    /// empty route). Packets are fragmented once, at their source, to fit it
    /// (routers do not refragment).
    pub(crate) fn path_mtu(&self, from: NodeId, to: NodeId) -> u32 {
        let mtu = |d: u32| match self.air_hop(d) {
            Some(hop) => AnyFamily::mtu_bytes(&self.media[hop.medium as usize].conf),
            None => self.links[d as usize / 2].params.mtu_bytes,
        };
        path(&self.routes, &self.dirs, from, to)
            .unwrap_or_default()
            .into_iter()
            .map(mtu)
            .min()
            .unwrap_or(u32::MAX)
    }

    /// The hop over a medium that direction `d` is, if it is one.
    pub(crate) fn air_hop(&self, d: u32) -> Option<AirHop> {
        (d as usize)
            .checked_sub(2 * self.links.len())
            .map(|k| self.air[k])
    }

    /// The link directions as (link name, from node, to node), in direction
    /// order.
    pub(crate) fn directions(&self) -> impl Iterator<Item = (&PlannedLink, NodeId, NodeId)> {
        self.links
            .iter()
            .flat_map(|l| [(l, l.a, l.b), (l, l.b, l.a)])
    }
}

/// Next-hop table by breadth-first search from every destination over reversed
/// link directions: fewest hops, ties broken by direction order (deterministic).
/// `dirs[d]` is direction d's (from, to).
pub(crate) fn shortest_path_routes(
    n_nodes: usize,
    dirs: &[(NodeId, NodeId)],
) -> Vec<Vec<Option<u32>>> {
    let mut routes = vec![vec![None; n_nodes]; n_nodes];
    for dst in 0..n_nodes {
        let mut seen = vec![false; n_nodes];
        seen[dst] = true;
        let mut queue = std::collections::VecDeque::from([dst]);
        while let Some(v) = queue.pop_front() {
            // Every direction u→v gives u a route to dst through it.
            for (d, (from, to)) in dirs.iter().enumerate() {
                let (u, to) = (from.0 as usize, to.0 as usize);
                if to == v && !seen[u] {
                    seen[u] = true;
                    routes[u][dst] = Some(d as u32);
                    queue.push_back(u);
                }
            }
        }
    }
    routes
}

/// The hops from `from` to `to` (link directions), or `None` if unreachable.
pub(crate) fn path(
    routes: &[Vec<Option<u32>>],
    dirs: &[(NodeId, NodeId)],
    from: NodeId,
    to: NodeId,
) -> Option<Vec<u32>> {
    let mut hops = Vec::new();
    let mut node = from;
    while node != to {
        let d = routes[node.0 as usize][to.0 as usize]?;
        hops.push(d);
        node = dirs[d as usize].1;
        if hops.len() > routes.len() {
            return None;
        }
    }
    Some(hops)
}
