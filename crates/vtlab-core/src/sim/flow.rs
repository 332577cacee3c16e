//! One flow of a run: its endpoints, timers and counters, built from the
//! plan and summed up into its result row.

use super::observe::Seen;
use super::plan::{FlowRole, PlannedFlow};
use super::reassembly::Reassembly;
use super::Plan;
use crate::engine::{RngStream, Time};
use crate::metrics::FlowResult;
use crate::net::qdisc::hash::FiveTuple;
use crate::net::NodeId;
use crate::tcp::cc::CongestionOps;
use crate::tcp::{Receiver, Sender};

pub(super) struct Flow {
    pub(super) name: String,
    pub(super) cc: &'static str,
    pub(super) profile: &'static str,
    pub(super) recovery: &'static str,
    pub(super) src: NodeId,
    pub(super) dst: NodeId,
    pub(super) bytes: u64,
    pub(super) start: Time,
    pub(super) sender: Sender,
    pub(super) receiver: Receiver,
    pub(super) sender_timer_at: Option<Time>,
    pub(super) receiver_timer_at: Option<Time>,
    pub(super) drops_link_error: u64,
    pub(super) drops_queue: u64,
    pub(super) drops_aqm: u64,
    /// FQ-CoDel flow hashes of this flow's packets toward the receiver and
    /// toward the sender: [first fragment, later fragments] each.
    pub(super) hashes: [[u32; 2]; 2],
    pub(super) done: bool,
    /// Smallest MTU on the path toward the receiver / toward the sender.
    pub(super) mtu_forward: u32,
    pub(super) mtu_reverse: u32,
    /// IPv4 reassembly at the receiver's end (0) and the sender's end (1).
    pub(super) reassembly: [Reassembly; 2],
    /// The sender's state after its previous input (events, change traces).
    pub(super) seen: Seen,
    /// Why the flow ended early, when its sender gave up.
    pub(super) abort: Option<&'static str>,
    pub(super) timestamps: bool,
    pub(super) role: FlowRole,
}

impl Flow {
    /// Flow `i` of `plan` for a run with `seed`; `tuple` is its 5-tuple
    /// toward the receiver.
    pub(super) fn new(plan: &Plan, i: usize, tuple: FiveTuple, seed: u64) -> Self {
        let f: &PlannedFlow = &plan.flows[i];
        // A session's directions get their bytes as the application
        // writes them, and never complete by byte count.
        let (available, expected) = match f.role {
            FlowRole::Bulk => (f.bytes, f.bytes),
            _ => (0, u64::MAX),
        };
        let mut cc = f.cc.build(&f.tcp.cc_params, f.tcp.profile);
        // The controller's own stream (BBR's gain-cycle phase).
        cc.set_rng(RngStream::for_component(seed, &format!("cc/{}", f.name)));
        let sender = Sender::new(f.tcp.clone(), cc, i as u32, f.dst, available);
        let receiver = Receiver::new(&f.tcp, i as u32, f.src, expected);
        Flow {
            name: f.name.clone(),
            cc: f.cc.name,
            profile: f.tcp.profile.as_str(),
            recovery: f.tcp.recovery_name(),
            src: f.src,
            dst: f.dst,
            bytes: f.bytes,
            start: f.start,
            receiver,
            sender_timer_at: None,
            receiver_timer_at: None,
            drops_link_error: 0,
            drops_queue: 0,
            drops_aqm: 0,
            hashes: flow_hashes(tuple),
            done: false,
            mtu_forward: plan.path_mtu(f.src, f.dst),
            mtu_reverse: plan.path_mtu(f.dst, f.src),
            reassembly: Default::default(),
            seen: Seen::of(&sender),
            abort: None,
            timestamps: f.tcp.timestamps,
            role: f.role,
            sender,
        }
    }

    /// The flow's result row for a run that ended at `end` (for `end_reason`);
    /// `completed_at` is when it completed, if it did.
    pub(super) fn result(
        &self,
        end: Time,
        completed_at: Option<Time>,
        end_reason: &'static str,
    ) -> FlowResult {
        let st = self.sender.stats();
        let (elapsed, received) = match completed_at {
            Some(t) => (t - self.start, self.bytes),
            None => (
                end.max(self.start) - self.start,
                self.receiver.bytes_received(),
            ),
        };
        let secs = elapsed.as_secs_f64();
        let mean = |sum: f64, n: u64| if n > 0 { sum / n as f64 } else { f64::NAN };
        FlowResult {
            flow: self.name.clone(),
            cc: self.cc.to_string(),
            profile: self.profile,
            recovery: self.recovery,
            bytes: self.bytes,
            completed: completed_at.is_some(),
            abort_reason: match (completed_at, self.abort) {
                (Some(_), _) => "",
                (None, Some(reason)) => reason,
                (None, None) => end_reason,
            },
            goodput_bps: if secs > 0.0 {
                received as f64 * 8.0 / secs
            } else {
                0.0
            },
            completion_s: completed_at.map_or(f64::NAN, |_| secs),
            segments_sent: st.segments_sent,
            retransmissions: st.retransmissions,
            rto_count: st.rto_count,
            fast_recoveries: st.fast_recoveries,
            slow_starts_after_loss: st.slow_starts_after_loss,
            drops_link_error: self.drops_link_error,
            drops_queue: self.drops_queue,
            drops_aqm: self.drops_aqm,
            rtt_min_s: st.rtt_min.map_or(f64::NAN, |d| d.as_secs_f64()),
            rtt_mean_s: mean(st.rtt_sum_s, st.rtt_samples),
            rtt_max_s: st.rtt_max.map_or(f64::NAN, |d| d.as_secs_f64()),
            rtt_p50_s: st.rtt_hist.quantile_s(0.50),
            rtt_p95_s: st.rtt_hist.quantile_s(0.95),
            rtt_p99_s: st.rtt_hist.quantile_s(0.99),
            loss_events: st.loss_events,
            true_link_losses: st.true_link_losses,
            true_congestion_losses: st.true_congestion_losses,
            predicted_link_losses: st.predicted_link_losses,
            predicted_congestion_losses: st.predicted_congestion_losses,
            correct_predictions: st.correct_predictions,
            tlp_probes: st.tlp_probes,
            tlp_recoveries: st.tlp_recoveries,
            rack_losses: st.rack_losses,
            reorder_timeouts: st.reorder_timeouts,
            early_retransmits: st.early_retransmits,
        }
    }
}

/// FQ-CoDel hashes of a flow's packets: toward the receiver and toward the
/// sender, each for a first fragment (or whole packet) and a later fragment.
fn flow_hashes(t: FiveTuple) -> [[u32; 2]; 2] {
    let r = t.reversed();
    [
        [t.ns3_hash(true, 0), t.ns3_hash(false, 0)],
        [r.ns3_hash(true, 0), r.ns3_hash(false, 0)],
    ]
}
