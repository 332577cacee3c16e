//! Where BBR follows ns-3.44 (`tcp-bbr.cc`) or Linux (`tcp_bbr.c`): the
//! differences listed in the module documentation of [`super`], as named
//! switches.

use crate::tcp::cc::ProfileBehaviour;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BbrBehaviour {
    /// The inflight in packets: Linux `bbr_bdp` rounds the BDP up to whole
    /// packets (TCP_INIT_CWND without an RTT sample), `bbr_set_cwnd` adds
    /// the ACK-aggregation allowance before the quantisation budget of 3 ×
    /// the TSO goal and the rounding to an even count; ns-3 `InFlight`
    /// works in bytes, adds 3 MSS and the allowance after.
    pub packet_units: bool,
    /// Before the pipe is full cwnd grows by what is acked while less than
    /// TCP_INIT_CWND (10 packets) was delivered (Linux); ns-3 compares with
    /// the initial cwnd.
    pub startup_grows_until_ten_packets: bool,
    /// DRAIN's pacing gain: Linux `bbr_drain_gain` = BBR_UNIT · 1000 / 2885
    /// = 88/256; None: ns-3's 1/HighGain.
    pub drain_gain: Option<f64>,
    /// PROBE_BW's start phase: Linux `7 − prandom_u32_max(7)` (1..=7); ns-3
    /// `GAIN_CYCLE_LENGTH − 1 − (int) U(0, 6)` (2..=7); each then advances.
    pub kernel_random_phase: bool,
    /// The first min RTT: ns-3 reads `m_srtt` (the handshake's sample at the
    /// SYN-ACK); Linux `tcp_min_rtt` (the same single sample).
    pub initial_min_rtt_from_srtt: bool,
    /// The min-RTT filter takes this ACK's sample only (Linux); ns-3 the
    /// last RTT (`m_lastRtt`, kept between ACKs).
    pub min_rtt_from_ack_sample: bool,
    /// Pacing before the first RTT sample: Linux
    /// `bbr_init_pacing_rate_from_rtt` uses SRTT and leaves the bandwidth
    /// filter empty; ns-3 `InitPacingRate` rounds the min RTT to whole ms and
    /// seeds the filter with cwnd/RTT.
    pub pacing_init_from_srtt: bool,
    /// The round start is cleared on every ACK (Linux); ns-3 only on valid
    /// samples.
    pub round_start_cleared_every_ack: bool,
    /// A bandwidth sample is delivered / interval (Linux); ns-3 takes the
    /// rate sample's delivery rate.
    pub bw_sample_from_interval: bool,
    /// A timeout clears `full_bw` (Linux `bbr_set_state(TCP_CA_Loss)`).
    pub timeout_clears_full_bw: bool,
    /// Recovery from the previous state: Linux
    /// `bbr_set_cwnd_to_recover_or_restore` sets cwnd = in flight + acked
    /// when entering Recovery and restores it when leaving, subtracting newly
    /// lost packets first, and `bbr_save_cwnd` reads the previous state.
    /// ns-3 sets cwnd = in flight + max(acked, MSS) entering Recovery
    /// (`CongestionStateSet`, which also saves cwnd on Loss) and restores on
    /// `CA_EVENT_COMPLETE_CWR`.
    pub recovery_from_previous_state: bool,
    /// PROBE_RTT marks the rate estimator application-limited (Linux
    /// `tp->app_limited`); ns-3 keeps a private `m_appLimited`.
    pub probe_rtt_marks_app_limited: bool,
    /// The ACK-aggregation epoch in µs, reset at 2^20 packets, a sample with
    /// a zero interval skipped (Linux); ns-3 measures it in whole seconds and
    /// resets it at 4096 bytes.
    pub aggregation_epoch_us: bool,
    /// The windowed max filter refreshes sub-windows by equal times (Linux
    /// `minmax_running_max`); ns-3 `WindowedFilter` by equal values.
    pub minmax_running_max: bool,
    /// Long-term (policer) bandwidth sampling (Linux `bbr_lt_bw_sampling`);
    /// ns-3.44 has none.
    pub long_term_sampling: bool,
    /// cwnd grows in uint32_t once the pipe is full (ns-3); Linux saturates.
    pub cwnd_u32: bool,
    /// An ACK ends an idle restart only if it delivered a positive amount
    /// (Linux); ns-3 any non-zero amount.
    pub idle_restart_needs_positive_delivery: bool,
}

impl ProfileBehaviour for BbrBehaviour {
    const NS3: Self = BbrBehaviour {
        packet_units: false,
        startup_grows_until_ten_packets: false,
        drain_gain: None,
        kernel_random_phase: false,
        initial_min_rtt_from_srtt: true,
        min_rtt_from_ack_sample: false,
        pacing_init_from_srtt: false,
        round_start_cleared_every_ack: false,
        bw_sample_from_interval: false,
        timeout_clears_full_bw: false,
        recovery_from_previous_state: false,
        probe_rtt_marks_app_limited: false,
        aggregation_epoch_us: false,
        minmax_running_max: false,
        long_term_sampling: false,
        cwnd_u32: true,
        idle_restart_needs_positive_delivery: false,
    };
    const LINUX: Self = BbrBehaviour {
        packet_units: true,
        startup_grows_until_ten_packets: true,
        drain_gain: Some(88.0 / 256.0),
        kernel_random_phase: true,
        initial_min_rtt_from_srtt: false,
        min_rtt_from_ack_sample: true,
        pacing_init_from_srtt: true,
        round_start_cleared_every_ack: true,
        bw_sample_from_interval: true,
        timeout_clears_full_bw: true,
        recovery_from_previous_state: true,
        probe_rtt_marks_app_limited: true,
        aggregation_epoch_us: true,
        minmax_running_max: true,
        long_term_sampling: true,
        cwnd_u32: false,
        idle_restart_needs_positive_delivery: true,
    };
}
