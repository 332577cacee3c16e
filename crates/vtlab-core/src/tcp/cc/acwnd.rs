//! ACWND (Hu et al.): CUBIC whose reaction to loss and whose growth follow
//! the RTT ratio γ = R_m / R_t ([`RttRatio`]).
//!
//! The paper states the idea and gives the flowchart as a figure; vtlab's
//! reading, every threshold a parameter (defaults defended in
//! docs/cellular.md):
//!
//! * **On loss** (entering recovery, or a first timeout), instead of CUBIC's
//!   `ssthresh = β·cwnd`: `ssthresh = f·cwnd` with `f = clamp(γ, min_factor,
//!   max_factor)`. A loss with empty queues (γ ≈ 1) is taken as a channel
//!   error and costs little (`max_factor`); a loss with full queues (γ small)
//!   costs as much as `min_factor`. CUBIC's own state (W_max, fast
//!   convergence, the epoch) is updated as at any loss, so the cubic curve
//!   restarts from the window ACWND leaves.
//! * **Growth**: while γ ≥ `gamma_high` in congestion avoidance, each ACK's
//!   increase that CUBIC computes is multiplied by λ ("keep growing with
//!   λ"); otherwise CUBIC grows as usual. Slow start is CUBIC's.
//! * γ uses the raw RTT samples of ACKs (R_m the minimum over `rm_window_s`).

use super::cubic::{self, Cubic};
use super::{CongestionOps, ConnInfo, CwndEvent, ParamSpec, Params, Profile, Window};
use crate::engine::Duration;
use crate::tcp::rtt_ratio::RttRatio;
use crate::tcp::CaState;

const fn p(
    name: &'static str,
    default: f64,
    min: f64,
    max: f64,
    doc: &'static str,
    at_most: Option<&'static str>,
) -> ParamSpec {
    ParamSpec {
        name,
        default_ns3: default,
        default_linux: default,
        default_ns2: None,
        min,
        max,
        doc,
        integer: false,
        at_most,
    }
}

/// ACWND's own parameters, then CUBIC's.
pub const PARAMS: &[ParamSpec] = &[
    p(
        "lambda",
        2.0,
        0.5,
        10.0,
        "λ: multiplier of CUBIC's increase while γ ≥ gamma_high",
        None,
    ),
    p(
        "gamma_high",
        0.8,
        0.0,
        1.0,
        "γ at or above which the queues count as empty",
        None,
    ),
    p(
        "min_factor",
        0.5,
        0.1,
        1.0,
        "smallest loss reduction factor: ssthresh ≥ min_factor·cwnd",
        Some("max_factor"),
    ),
    p(
        "max_factor",
        0.9,
        0.1,
        1.0,
        "largest loss reduction factor (a loss at γ ≈ 1)",
        None,
    ),
    p(
        "rm_window_s",
        10.0,
        0.001,
        3600.0,
        "seconds over which R_m is the minimum RTT",
        None,
    ),
    cubic::PARAMS[0],
    cubic::PARAMS[1],
    cubic::PARAMS[2],
    cubic::PARAMS[3],
    cubic::PARAMS[4],
    cubic::PARAMS[5],
    cubic::PARAMS[6],
    cubic::PARAMS[7],
    cubic::PARAMS[8],
    cubic::PARAMS[9],
    cubic::PARAMS[10],
    cubic::PARAMS[11],
    cubic::PARAMS[12],
];

#[derive(Clone, Debug)]
pub struct Acwnd {
    cubic: Cubic,
    ratio: RttRatio,
    lambda: f64,
    gamma_high: f64,
    min_factor: f64,
    max_factor: f64,
    /// Loss reductions, and ACKs whose increase λ multiplied.
    pub reductions: u64,
    pub boosted_acks: u64,
}

impl Acwnd {
    pub fn new(params: &Params, profile: Profile) -> Self {
        let get = |name| super::param(PARAMS, params, name, profile);
        Acwnd {
            cubic: Cubic::new(params, profile),
            ratio: RttRatio::new(Duration((get("rm_window_s") * 1e9).round() as u64)),
            lambda: get("lambda"),
            gamma_high: get("gamma_high"),
            min_factor: get("min_factor"),
            max_factor: get("max_factor"),
            reductions: 0,
            boosted_acks: 0,
        }
    }

    /// The loss reduction factor for the current γ (1 before any sample: no
    /// information, so the largest allowed).
    fn factor(&self) -> f64 {
        self.ratio
            .gamma()
            .unwrap_or(1.0)
            .clamp(self.min_factor, self.max_factor)
    }
}

impl CongestionOps for Acwnd {
    fn ssthresh(&mut self, info: &ConnInfo, w: &Window, bytes_in_flight: u64) -> u64 {
        // CUBIC's bookkeeping (W_max, epoch); its β-based value is replaced.
        let _ = self.cubic.ssthresh(info, w, bytes_in_flight);
        self.reductions += 1;
        let base = match info.profile {
            Profile::Linux | Profile::Ns2 => w.cwnd,
            Profile::Ns3 => bytes_in_flight,
        };
        ((base as f64 * self.factor()) as u64).max(2 * info.mss)
    }

    fn increase_window(&mut self, info: &ConnInfo, w: &mut Window, segments_acked: u32) {
        let before = w.cwnd;
        let slow_start = w.in_slow_start();
        self.cubic.increase_window(info, w, segments_acked);
        let boost = !slow_start
            && w.cwnd > before
            && self.ratio.gamma().is_some_and(|g| g >= self.gamma_high);
        if boost {
            self.boosted_acks += 1;
            let extra = (w.cwnd - before) as f64 * (self.lambda - 1.0);
            w.cwnd = (w.cwnd as f64 + extra).max(before as f64) as u64;
        }
    }

    fn pkts_acked(
        &mut self,
        info: &ConnInfo,
        w: &Window,
        segments_acked: u32,
        rtt: Option<Duration>,
    ) {
        if let Some(r) = rtt {
            self.ratio.sample(info.now, r);
        }
        self.cubic.pkts_acked(info, w, segments_acked, rtt);
    }

    fn congestion_state_set(&mut self, info: &ConnInfo, w: &mut Window, new: CaState) {
        self.cubic.congestion_state_set(info, w, new);
    }

    fn cwnd_event(&mut self, info: &ConnInfo, w: &mut Window, event: CwndEvent) {
        self.cubic.cwnd_event(info, w, event);
    }
}

#[cfg(test)]
mod tests {
    use super::super::reno::test_support::{info, window};
    use super::*;
    use crate::engine::Time;

    fn ms(x: u64) -> Duration {
        Duration(x * 1_000_000)
    }

    fn fed(samples: &[(u64, u64)]) -> Acwnd {
        let mut a = Acwnd::new(&Params::new(), Profile::Linux);
        let w = window(100, 50);
        for &(t, rtt) in samples {
            let mut i = info(Profile::Linux);
            i.now = Time(t * 1_000_000);
            a.pkts_acked(&i, &w, 1, Some(ms(rtt)));
        }
        a
    }

    #[test]
    fn loss_reduction_is_gamma_clamped() {
        let i = info(Profile::Linux);
        let w = window(100, u64::MAX);
        // R_m = 80, R_t = 100: γ = 0.8 within [0.5, 0.9]: ssthresh = 80 segments.
        assert_eq!(fed(&[(0, 80), (10, 100)]).ssthresh(&i, &w, 0), 80_000);
        // γ = 80/80 = 1 → clamped to 0.9: 90 segments (a channel loss costs 10 %).
        assert_eq!(fed(&[(0, 80)]).ssthresh(&i, &w, 0), 90_000);
        // γ = 80/400 = 0.2 → clamped to 0.5: 50 segments.
        assert_eq!(fed(&[(0, 80), (10, 400)]).ssthresh(&i, &w, 0), 50_000);
        // No sample yet: the largest factor, 90.
        assert_eq!(fed(&[]).ssthresh(&i, &w, 0), 90_000);
        // Never below 2 MSS.
        assert_eq!(fed(&[(0, 80)]).ssthresh(&i, &window(2, u64::MAX), 0), 2_000);
    }

    #[test]
    fn growth_is_multiplied_by_lambda_only_when_gamma_is_high() {
        let mut i = info(Profile::Linux);
        i.now = Time(ms(1000).0);
        // Same CUBIC state in both: compare against plain CUBIC's increase.
        let mut plain = Cubic::new(&Params::new(), Profile::Linux);
        let mut w0 = window(100, 50);
        plain.pkts_acked(&i, &w0, 1, Some(ms(80)));
        let before = w0.cwnd;
        for _ in 0..200 {
            plain.increase_window(&i, &mut w0, 1);
        }
        let cubic_gain = w0.cwnd - before;
        assert!(cubic_gain > 0);

        // γ = 1 ≥ 0.8: λ = 2 doubles every increase (floor per ACK, so ≥ 2×gain − 200).
        let mut a = fed(&[(1000, 80)]);
        let mut w = window(100, 50);
        for _ in 0..200 {
            a.increase_window(&i, &mut w, 1);
        }
        let gain = w.cwnd - before;
        assert!(
            gain >= cubic_gain && a.boosted_acks > 0,
            "{gain} vs {cubic_gain}"
        );

        // γ = 80/200 = 0.4 < 0.8: exactly CUBIC.
        let mut b = fed(&[(0, 80), (1000, 200)]);
        let mut w2 = window(100, 50);
        let mut plain2 = Cubic::new(&Params::new(), Profile::Linux);
        let mut w3 = window(100, 50);
        plain2.pkts_acked(&i, &w3, 1, Some(ms(200)));
        for _ in 0..200 {
            b.increase_window(&i, &mut w2, 1);
            plain2.increase_window(&i, &mut w3, 1);
        }
        assert_eq!(w2.cwnd, w3.cwnd);
        assert_eq!(b.boosted_acks, 0);
    }
}
