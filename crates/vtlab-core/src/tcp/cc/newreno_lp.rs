//! NewReno-LP and NewReno-Ideal-LP: NewReno whose reaction to a loss depends
//! on a prediction of its cause.
//!
//! Source: Martignon et al., "NewReno-LP: NewReno with a Vegas loss predictor"
//! (F. Martignon's ns-2 study, §2; docs/reproduce-martignon.md); the predictor
//! is Vegas's (Brakmo & Peterson 1995).
//!
//! At every loss event (three duplicate ACKs or a timeout) the predictor
//! classifies the loss:
//! * **congestion**: react exactly as NewReno (ssthresh = half the flight);
//! * **link error**: ssthresh = the current flight size; the sender then sets
//!   cwnd = ssthresh + 3 MSS and recovers as NewReno (fast retransmit) or
//!   cwnd = 1 segment (timeout), as for any loss.
//!
//! **Vegas predictor** (`newreno-lp`): Vp = (cwnd/RTTmin − cwnd/RTT)·RTTmin =
//! cwnd·(1 − RTTmin/RTT) segments, with RTT the latest sample the controller
//! received (the SRTT under the ns3 profile, the raw sample of each timed
//! segment under linux and ns2) and RTTmin the smallest. Under ns2 cwnd is
//! the window the sender uses, min(cwnd, rwnd) (ns-2 `TcpAgent::window`). Vp > β: congestion; Vp < α: link error; in between the
//! previous verdict stands (hysteresis; congestion before any verdict).
//! α = 1 and β = 3 segments (the study's best values) are parameters.
//!
//! **Ideal predictor** (`newreno-ideal-lp`): the verdict is the true cause of the
//! loss of the first unacknowledged segment, read from the simulator's drop
//! records (the loss oracle), which this controller alone asks for
//! (`CongestionOps::wants_loss_oracle`) and receives through
//! `CongestionOps::on_loss_oracle` right before `ssthresh`. No real sender has
//! this: it is the upper bound of loss differentiation. A loss with no recorded
//! drop (a spurious timeout) counts as congestion.
//!
//! Both use NewReno recovery (their registry entries imply `recovery = "newreno"`).

use super::newreno::NewReno;
use super::{param, CongestionOps, ConnInfo, LossCause, ParamSpec, Params, Profile, Window};
use crate::engine::Duration;
use crate::tcp::state::CaState;

/// Parameters of the Vegas loss predictor.
pub const LP_PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "alpha",
        default_ns3: 1.0,
        default_linux: 1.0,
        default_ns2: None,
        min: 0.0,
        max: 1000.0,
        doc: "Vp below alpha (segments): the loss is ascribed to a link error",
        integer: false,
        at_most: Some("beta"),
    },
    ParamSpec {
        name: "beta",
        default_ns3: 3.0,
        default_linux: 3.0,
        default_ns2: None,
        min: 0.0,
        max: 1000.0,
        doc: "Vp above beta (segments): the loss is ascribed to congestion",
        integer: false,
        at_most: None,
    },
];

#[derive(Clone, Debug)]
enum Predictor {
    Vegas {
        alpha: f64,
        beta: f64,
        min_rtt: Option<Duration>,
        last_rtt: Option<Duration>,
    },
    /// The oracle's truth for the current loss event.
    Oracle { truth: Option<LossCause> },
}

#[derive(Clone, Debug)]
pub struct NewRenoLp {
    newreno: NewReno,
    predictor: Predictor,
    verdict: Option<LossCause>,
}

impl NewRenoLp {
    /// NewReno-LP with the Vegas predictor.
    pub fn vegas(params: &Params, profile: Profile) -> Self {
        NewRenoLp {
            newreno: NewReno::new(profile),
            predictor: Predictor::Vegas {
                alpha: param(LP_PARAMS, params, "alpha", profile),
                beta: param(LP_PARAMS, params, "beta", profile)
                    .max(param(LP_PARAMS, params, "alpha", profile)),
                min_rtt: None,
                last_rtt: None,
            },
            verdict: None,
        }
    }

    /// NewReno-Ideal-LP: the loss oracle's verdict.
    pub fn ideal(profile: Profile) -> Self {
        NewRenoLp {
            newreno: NewReno::new(profile),
            predictor: Predictor::Oracle { truth: None },
            verdict: None,
        }
    }

    /// Vp in segments, if both RTTs are known.
    fn vp(&self, info: &ConnInfo, w: &Window) -> Option<f64> {
        match &self.predictor {
            Predictor::Vegas {
                min_rtt: Some(min),
                last_rtt: Some(last),
                ..
            } if last.as_nanos() > 0 => {
                let cwnd = vp_window(info, w) as f64 / info.mss as f64;
                Some(cwnd * (1.0 - min.as_nanos() as f64 / last.as_nanos() as f64))
            }
            _ => None,
        }
    }

    fn classify(&self, info: &ConnInfo, w: &Window) -> LossCause {
        let previous = self.verdict.unwrap_or(LossCause::Congestion);
        match &self.predictor {
            Predictor::Oracle { truth } => truth.map_or(LossCause::Congestion, LossCause::signal),
            Predictor::Vegas { alpha, beta, .. } => match self.vp(info, w) {
                Some(vp) if vp > *beta => LossCause::Congestion,
                Some(vp) if vp < *alpha => LossCause::Link,
                _ => previous,
            },
        }
    }
}

/// The window V_p multiplies, bytes: cwnd under `ns3` and `linux`; under
/// `ns2` the window the sender uses, min(cwnd_, window_) (`TcpAgent::window`),
/// since ns-2's cwnd_ keeps growing while `window_` holds the flight and the
/// predictor's "cwnd/RTT_min" is the rate the sender expects.
fn vp_window(info: &ConnInfo, w: &Window) -> u64 {
    match info.profile {
        Profile::Ns2 => w.cwnd.min(info.rwnd),
        Profile::Ns3 | Profile::Linux => w.cwnd,
    }
}

impl CongestionOps for NewRenoLp {
    fn ssthresh(&mut self, info: &ConnInfo, w: &Window, bytes_in_flight: u64) -> u64 {
        let verdict = self.classify(info, w);
        self.verdict = Some(verdict);
        match verdict {
            LossCause::Link => bytes_in_flight.max(2 * info.mss),
            LossCause::Congestion | LossCause::Aqm => {
                self.newreno.ssthresh(info, w, bytes_in_flight)
            }
        }
    }

    fn increase_window(&mut self, info: &ConnInfo, w: &mut Window, segments_acked: u32) {
        self.newreno.increase_window(info, w, segments_acked);
    }

    fn pkts_acked(&mut self, _info: &ConnInfo, _w: &Window, _segments: u32, rtt: Option<Duration>) {
        if let (
            Predictor::Vegas {
                min_rtt, last_rtt, ..
            },
            Some(r),
        ) = (&mut self.predictor, rtt)
        {
            *min_rtt = Some(min_rtt.map_or(r, |m| m.min(r)));
            *last_rtt = Some(r);
        }
    }

    fn congestion_state_set(&mut self, info: &ConnInfo, w: &mut Window, new: CaState) {
        self.newreno.congestion_state_set(info, w, new);
    }

    fn loss_verdict(&self) -> Option<LossCause> {
        self.verdict
    }

    fn wants_loss_oracle(&self) -> bool {
        matches!(self.predictor, Predictor::Oracle { .. })
    }

    fn on_loss_oracle(&mut self, truth: Option<LossCause>) {
        if let Predictor::Oracle { truth: t } = &mut self.predictor {
            *t = truth;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::reno::test_support::{info, window};
    use super::*;

    fn sample(cc: &mut NewRenoLp, ms: u64) {
        cc.pkts_acked(
            &info(Profile::Ns3),
            &window(1, 1),
            1,
            Some(Duration::from_millis(ms)),
        );
    }

    #[test]
    fn vp_arithmetic_and_thresholds() {
        let mut lp = NewRenoLp::vegas(&Params::new(), Profile::Ns3);
        let i = info(Profile::Ns3);
        sample(&mut lp, 100);
        sample(&mut lp, 125);
        // cwnd 20 segments, RTTmin 100 ms, RTT 125 ms: Vp = 20·(1 − 0.8) = 4 > β = 3.
        let w = window(20, 100);
        assert!((lp.vp(&i, &w).unwrap() - 4.0).abs() < 1e-12);
        // Congestion: NewReno's half of the flight (30 segments → 15).
        assert_eq!(lp.ssthresh(&i, &w, 30_000), 15_000);
        assert_eq!(lp.loss_verdict(), Some(LossCause::Congestion));
        // RTT back to 102 ms: Vp = 20·(1 − 100/102) ≈ 0.39 < α = 1 → link error:
        // ssthresh = the flight.
        sample(&mut lp, 102);
        assert_eq!(lp.ssthresh(&i, &w, 30_000), 30_000);
        assert_eq!(lp.loss_verdict(), Some(LossCause::Link));
    }

    #[test]
    fn hysteresis_keeps_the_previous_verdict_between_thresholds() {
        let mut lp = NewRenoLp::vegas(&Params::new(), Profile::Ns3);
        let i = info(Profile::Ns3);
        let w = window(20, 100);
        // Before any RTT sample: congestion (NewReno's reaction).
        assert_eq!(lp.ssthresh(&i, &w, 10_000), 5_000);
        sample(&mut lp, 100);
        sample(&mut lp, 110);
        // Vp = 20·(1 − 100/110) ≈ 1.82: between α and β, previous verdict (congestion).
        assert_eq!(lp.ssthresh(&i, &w, 10_000), 5_000);
        sample(&mut lp, 100);
        assert_eq!(lp.ssthresh(&i, &w, 10_000), 10_000, "Vp = 0 < α: link");
        sample(&mut lp, 110);
        assert_eq!(lp.ssthresh(&i, &w, 10_000), 10_000, "between: stays link");
    }

    #[test]
    fn thresholds_are_parameters() {
        let p = Params::from([("alpha".to_string(), 5.0), ("beta".to_string(), 8.0)]);
        let mut lp = NewRenoLp::vegas(&p, Profile::Ns3);
        sample(&mut lp, 100);
        sample(&mut lp, 125);
        // Vp = 4 < α = 5: link.
        lp.ssthresh(&info(Profile::Ns3), &window(20, 100), 10_000);
        assert_eq!(lp.loss_verdict(), Some(LossCause::Link));
    }

    #[test]
    fn ideal_predictor_follows_the_oracle() {
        let mut ideal = NewRenoLp::ideal(Profile::Ns3);
        assert!(ideal.wants_loss_oracle());
        let i = info(Profile::Ns3);
        let w = window(20, 100);
        ideal.on_loss_oracle(Some(LossCause::Link));
        assert_eq!(ideal.ssthresh(&i, &w, 30_000), 30_000);
        ideal.on_loss_oracle(Some(LossCause::Congestion));
        assert_eq!(ideal.ssthresh(&i, &w, 30_000), 15_000);
        ideal.on_loss_oracle(None);
        assert_eq!(
            ideal.ssthresh(&i, &w, 30_000),
            15_000,
            "unknown: congestion"
        );
        // A link verdict never sets ssthresh below 2 MSS.
        ideal.on_loss_oracle(Some(LossCause::Link));
        assert_eq!(ideal.ssthresh(&i, &w, 500), 2_000);
    }

    #[test]
    fn only_the_ideal_predictor_asks_for_the_oracle() {
        let mut lp = NewRenoLp::vegas(&Params::new(), Profile::Ns3);
        assert!(!lp.wants_loss_oracle());
        // Even if handed the truth, the Vegas predictor ignores it: before any
        // RTT sample its verdict is congestion (half of a 30-segment flight).
        lp.on_loss_oracle(Some(LossCause::Link));
        assert_eq!(
            lp.ssthresh(&info(Profile::Ns3), &window(20, 100), 30_000),
            15_000
        );
        assert_eq!(lp.loss_verdict(), Some(LossCause::Congestion));
    }
    #[test]
    fn ns2_vp_multiplies_the_window_the_sender_uses() {
        // ns-2 TcpAgent::window() = min(cwnd_, window_). cwnd 45 packets,
        // window_ 20, RTT_min 100 ms, RTT 125 ms: V_p = 20·(1 − 0.8) = 4 > β
        // → congestion; ssthresh = ⌊min(45, 20)/2⌋ = 10 packets (slowdown).
        // Under ns3 the same state gives V_p = 45·0.2 = 9.
        let mut lp = NewRenoLp::vegas(&Params::new(), Profile::Ns2);
        let mut i = info(Profile::Ns2);
        i.rwnd = 20_000;
        sample(&mut lp, 100);
        sample(&mut lp, 125);
        let w = window(45, 100);
        assert!((lp.vp(&i, &w).unwrap() - 4.0).abs() < 1e-12);
        assert_eq!(lp.ssthresh(&i, &w, 20_000), 10_000);
        assert_eq!(lp.loss_verdict(), Some(LossCause::Congestion));
        // RTT 105 ms: V_p = 20·(1 − 100/105) ≈ 0.95 < α → link (ns3: 45·0.048
        // ≈ 2.14, between α and β, would keep congestion).
        sample(&mut lp, 105);
        assert!((lp.vp(&i, &w).unwrap() - 20.0 * 5.0 / 105.0).abs() < 1e-12);
        assert_eq!(lp.ssthresh(&i, &w, 20_000), 20_000);
        assert_eq!(lp.loss_verdict(), Some(LossCause::Link));
    }
}
