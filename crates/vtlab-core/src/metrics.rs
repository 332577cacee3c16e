//! Results as tables: one row per flow, one per link direction, and optional
//! sampled traces stored column by column.

use serde::Serialize;

/// One flow's outcome.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct FlowResult {
    pub flow: String,
    pub cc: String,
    /// Implementation profile (`ns3` or `linux`).
    pub profile: &'static str,
    /// Loss recovery (`tahoe`, `reno`, `newreno`, `sack`, `sack+prr`).
    pub recovery: &'static str,
    pub bytes: u64,
    pub completed: bool,
    /// Application bytes received in order / (last byte time − flow start).
    pub goodput_bps: f64,
    /// Seconds from flow start to the last byte received; NaN if incomplete.
    pub completion_s: f64,
    pub segments_sent: u64,
    pub retransmissions: u64,
    pub rto_count: u64,
    pub fast_recoveries: u64,
    pub slow_starts_after_loss: u64,
    pub drops_link_error: u64,
    pub drops_queue: u64,
    pub rtt_min_s: f64,
    pub rtt_mean_s: f64,
    pub rtt_max_s: f64,
    /// Loss events (fast retransmits and first timeouts of a window) and their
    /// true causes from the simulator's drop records (an unknown cause, e.g. a
    /// spurious timeout, counts in neither).
    pub loss_events: u64,
    pub true_link_losses: u64,
    pub true_congestion_losses: u64,
    /// Verdicts of a loss-classifying controller (zero for the others) and how
    /// many matched the true cause.
    pub predicted_link_losses: u64,
    pub predicted_congestion_losses: u64,
    pub correct_predictions: u64,
}

/// One link direction's counters.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct LinkResult {
    pub link: String,
    /// `"from->to"`.
    pub direction: String,
    pub packets_carried: u64,
    pub bytes_carried: u64,
    pub drops_queue: u64,
    pub drops_link_error: u64,
}

/// Sampled per-flow state over time, column-oriented.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Trace {
    pub time_s: Vec<f64>,
    pub flow: Vec<String>,
    pub cwnd_bytes: Vec<u64>,
    /// Infinity while the threshold is unset.
    pub ssthresh_bytes: Vec<f64>,
    pub snd_una: Vec<u64>,
    pub snd_max: Vec<u64>,
    /// NaN before the first RTT sample.
    pub srtt_s: Vec<f64>,
    pub bytes_in_flight: Vec<u64>,
    pub ca_state: Vec<&'static str>,
}

/// Everything one run produces.
#[derive(Clone, Debug, Serialize)]
pub struct RunResult {
    pub scenario_hash: String,
    pub seed: u64,
    pub version: &'static str,
    pub flows: Vec<FlowResult>,
    pub links: Vec<LinkResult>,
    pub trace: Option<Trace>,
    /// Events processed by the scheduler.
    pub events: u64,
    /// Packet transmissions over links (one per hop).
    pub packets: u64,
    pub sim_time_s: f64,
    pub wall_s: f64,
}
