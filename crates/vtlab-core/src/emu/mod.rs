//! Real time is another driver: the emulator runs the links, queue discs and
//! loss models of a scenario's path against a monotonic clock, between two
//! TAP devices, instead of against the simulation's scheduler.
//!
//! [`Path`] picks the path from a checked [`Plan`] (the first flow's sender is
//! the far end, its receiver the near end); [`relay::Relay`] moves frames
//! through the path's link directions, built by the simulation's own
//! `link_dirs` (same random stream labels, so seed *k* meets the same losses);
//! [`driver::Emulator`] reads and writes the TAP devices and keeps the
//! clock. Namespaces, addresses and processes are the Python side's
//! (`vtlab.emulation`); docs/emulation.md.

pub mod driver;
pub mod relay;
pub mod tap;

use crate::net::family::{AnyFamily, LinkFamily};
use crate::net::NodeId;
use crate::sim::plan::path;
use crate::sim::Plan;
use crate::spec::SpecError;

/// The emulated path: the link directions from the far end to the near end
/// (way 0) and back (way 1).
#[derive(Clone, Debug)]
pub struct Path {
    pub near: String,
    pub far: String,
    /// Direction indices (as in the plan: `2·link` is a→b) of each way.
    pub(crate) ways: [Vec<u32>; 2],
    pub(crate) ends: [NodeId; 2],
    /// The smallest MTU on the path, the TAP devices' MTU.
    pub mtu: u32,
}

impl Path {
    /// The path between the ends of the plan's first flow; refuses shared
    /// media (802.11), which are not a pair of FIFO directions.
    pub fn of(plan: &Plan) -> Result<Path, SpecError> {
        if let Some(m) = plan.media.first() {
            return Err(SpecError::new(
                "media",
                format!(
                    "the scenario has the shared medium '{}' ({}); the emulator carries \
                     point-to-point and cellular links only (v2g, wired-wireless, lte-cabin, \
                     custom without media)",
                    AnyFamily::conf_name(&m.conf),
                    AnyFamily::kind(&m.conf)
                ),
            ));
        }
        let Some(flow) = plan.flows.first() else {
            return Err(SpecError::new(
                "flows",
                "the scenario has no flow; the emulator joins the ends of its first flow".into(),
            ));
        };
        let (far, near) = (flow.src, flow.dst);
        let route = |from, to| {
            path(&plan.routes, &plan.dirs, from, to).ok_or_else(|| {
                SpecError::new("flows", "the first flow's ends are not connected".into())
            })
        };
        let ways = [route(far, near)?, route(near, far)?];
        let mtu = ways
            .iter()
            .flatten()
            .map(|&d| plan.links[d as usize / 2].params.mtu_bytes)
            .min()
            .unwrap_or(1500);
        Ok(Path {
            near: plan.nodes[near.0 as usize].clone(),
            far: plan.nodes[far.0 as usize].clone(),
            ways,
            ends: [near, far],
            mtu,
        })
    }
}

#[cfg(test)]
mod tests;
