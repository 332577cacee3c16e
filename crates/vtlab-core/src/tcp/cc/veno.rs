//! TCP Veno: Reno that uses the Vegas backlog estimate to tell random
//! (wireless) losses from congestive ones (docs/congestion-control.md, '`veno`').
//!
//! Sources: C. P. Fu, S. C. Liew, "TCP Veno: TCP Enhancement for Transmission
//! over Wireless Access Networks", IEEE JSAC 21(2), 2003; Linux
//! `net/ipv4/tcp_veno.c`; ns-3 `src/internet/model/tcp-veno.cc`.
//!
//! Constant: β = 3 segments of backlog (Linux stores 6 half-segments; ns-3
//! attribute `Beta` = 3).
//!
//! `diff = cwnd − cwnd·baseRTT/minRTT` estimates the segments queued. Below β
//! the path is "non-congestive": congestion avoidance is Reno and a loss cuts
//! to 4/5; at or above β cwnd grows half as fast and a loss halves it.
//!
//! Profile differences (the switches of [`VenoBehaviour`] and
//! [`super::vegas_rtt::VegasRttBehaviour`]):
//! * Linux: raw µs samples (+1 µs); `diff` in half segments, computed only
//!   when Veno is on and more than 2 samples were ever taken (`cntrtt` is
//!   never reset, `minrtt` is reset after every ACK); slow start leaves its
//!   leftover to congestion avoidance; the congestive branch adds one segment
//!   every other time the `cwnd_cnt` credit reaches cwnd; cwnd ≥ 2;
//!   ssthresh max(⌊4·cwnd/5⌋, 2) or max(cwnd/2, 2) segments.
//! * ns-3: SRTT samples (the sender also feeds every dupACK); `diff` in whole
//!   segments, recomputed on every `IncreaseWindow`; `cntRtt` and `minRtt`
//!   are reset after every ACK (so the Veno branch runs only after ≥ 3
//!   samples between two ACKs, i.e. around duplicate ACKs); the congestive
//!   branch does a NewReno step on every other **ACK**; slow start is NewReno
//!   (+1 MSS per ACK, no leftover); ssthresh from bytes in flight:
//!   max(⌊0.8·flight⌋, 2·MSS) or NewReno max(flight/2, 2·MSS).

use super::reno::{
    cong_avoid_ai, cwnd_segments, ns3_congestion_avoidance, reno_increase, slow_start,
};
use super::vegas_rtt::{linux_us, ns3_secs, VegasRtt};
use super::{
    param, CongestionOps, ConnInfo, CwndEvent, ParamSpec, Params, Profile, ProfileBehaviour, Window,
};
use crate::engine::Duration;
use crate::tcp::CaState;

pub const PARAMS: &[ParamSpec] = &[ParamSpec {
    name: "beta",
    default_ns3: 3.0,
    default_linux: 3.0,
    default_ns2: None,
    min: 0.0,
    max: 1000.0,
    doc: "backlog (segments) at or above which a loss is taken as congestive",
    integer: true,
    at_most: None,
}];

/// Where Veno follows ns-3 (`tcp-veno.cc`) or Linux (`tcp_veno.c`); see the
/// module documentation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VenoBehaviour {
    /// Linux: `diff` and β in half segments, `diff` computed only when Veno is
    /// on and more than 2 samples were ever taken (`cntrtt` never reset),
    /// slow start leaving its leftover to avoidance, the congestive branch
    /// adding one segment every other time the `cwnd_cnt` credit reaches
    /// cwnd, cwnd ≥ 2. ns-3: `diff` in whole segments recomputed on every
    /// `IncreaseWindow`, `cntRtt` reset after every ACK, the congestive
    /// branch a NewReno step on every other ACK, NewReno slow start.
    pub kernel_arithmetic: bool,
    /// ssthresh from bytes in flight: max(⌊0.8·flight⌋, 2·MSS) or NewReno
    /// max(flight/2, 2·MSS) (ns-3); Linux max(⌊4·cwnd/5⌋, 2) or
    /// max(cwnd/2, 2) segments.
    pub ssthresh_from_flight: bool,
    /// TX_START forgets baseRTT, sets inc = 1 and enables Veno (Linux
    /// `tcp_veno_init`); ns-3 has no such event.
    pub init_on_tx_start: bool,
}

impl ProfileBehaviour for VenoBehaviour {
    const NS3: Self = VenoBehaviour {
        kernel_arithmetic: false,
        ssthresh_from_flight: true,
        init_on_tx_start: false,
    };
    const LINUX: Self = VenoBehaviour {
        kernel_arithmetic: true,
        ssthresh_from_flight: false,
        init_on_tx_start: true,
    };
}

#[derive(Clone, Debug)]
pub struct Veno {
    b: VenoBehaviour,
    /// For the Reno growth (reno.rs).
    profile: Profile,
    /// β in the profile's diff unit (Linux: half segments; ns-3: segments).
    beta: u64,
    rtt: VegasRtt,
    /// Last computed backlog estimate, in the same unit as `beta`.
    diff: u64,
    /// Toggle for the congestive-state half-rate increase.
    inc: bool,
    cwnd_cnt: u64,
}

impl Veno {
    pub fn new(params: &Params, profile: Profile) -> Self {
        let beta = param(PARAMS, params, "beta", profile);
        let b = VenoBehaviour::of(profile);
        Veno {
            b,
            profile,
            beta: if b.kernel_arithmetic {
                (beta * 2.0).round() as u64
            } else {
                beta.round() as u64
            },
            rtt: VegasRtt::new(profile),
            diff: 0,
            inc: true,
            cwnd_cnt: 0,
        }
    }

    fn linux_increase(&mut self, info: &ConnInfo, w: &mut Window, acked: u32) {
        if !self.rtt.doing {
            reno_increase(self.profile, info, w, &mut self.cwnd_cnt, acked);
            return;
        }
        if self.rtt.cnt_rtt <= 2 {
            reno_increase(self.profile, info, w, &mut self.cwnd_cnt, acked);
        } else {
            let cwnd = cwnd_segments(info, w);
            let base = linux_us(self.rtt.base_rtt);
            let rtt = linux_us(self.rtt.min_rtt).max(1);
            let target = ((cwnd * base) << 1) / rtt;
            self.diff = (cwnd << 1).saturating_sub(target);
            let mut acked = acked;
            let mut done = false;
            if w.in_slow_start() {
                acked = slow_start(self.profile, info, w, acked);
                done = acked == 0;
            }
            if !done {
                let cwnd = cwnd_segments(info, w);
                if self.diff < self.beta {
                    cong_avoid_ai(info, w, &mut self.cwnd_cnt, cwnd, acked);
                } else if self.cwnd_cnt >= cwnd {
                    if self.inc {
                        w.cwnd = (cwnd + 1) * info.mss;
                        self.inc = false;
                    } else {
                        self.inc = true;
                    }
                    self.cwnd_cnt = 0;
                } else {
                    self.cwnd_cnt += u64::from(acked);
                }
            }
            w.cwnd = w.cwnd.max(2 * info.mss);
        }
        self.rtt.min_rtt = None;
    }

    fn ns3_increase(&mut self, info: &ConnInfo, w: &mut Window, acked: u32) {
        let seg = w.cwnd / info.mss;
        let ratio = ns3_secs(self.rtt.base_rtt) / ns3_secs(self.rtt.min_rtt);
        let target = (seg as f64 * ratio) as u64;
        self.diff = seg.saturating_sub(target);
        if !self.rtt.doing {
            reno_increase(self.profile, info, w, &mut self.cwnd_cnt, acked);
            return;
        }
        if self.rtt.cnt_rtt <= 2 {
            reno_increase(self.profile, info, w, &mut self.cwnd_cnt, acked);
        } else if w.in_slow_start() {
            slow_start(self.profile, info, w, acked);
        } else if self.diff < self.beta {
            ns3_congestion_avoidance(info, w, acked);
        } else if self.inc {
            ns3_congestion_avoidance(info, w, acked);
            self.inc = false;
        } else {
            self.inc = true;
        }
        self.rtt.cnt_rtt = 0;
        self.rtt.min_rtt = None;
    }
}

impl CongestionOps for Veno {
    fn ssthresh(&mut self, info: &ConnInfo, w: &Window, bytes_in_flight: u64) -> u64 {
        let mss = info.mss;
        let random = self.diff < self.beta;
        if self.b.ssthresh_from_flight {
            if random {
                ((bytes_in_flight as f64 * (4.0 / 5.0)) as u64).max(2 * mss)
            } else {
                (bytes_in_flight / 2).max(2 * mss)
            }
        } else {
            let cwnd = cwnd_segments(info, w);
            let seg = if random { cwnd * 4 / 5 } else { cwnd >> 1 };
            seg.max(2) * mss
        }
    }

    fn increase_window(&mut self, info: &ConnInfo, w: &mut Window, segments_acked: u32) {
        if self.b.kernel_arithmetic {
            self.linux_increase(info, w, segments_acked);
        } else {
            self.ns3_increase(info, w, segments_acked);
        }
    }

    fn pkts_acked(&mut self, _info: &ConnInfo, _w: &Window, _segs: u32, rtt: Option<Duration>) {
        self.rtt.sample(rtt);
    }

    fn congestion_state_set(&mut self, _info: &ConnInfo, _w: &mut Window, new: CaState) {
        // veno_enable: switch on and forget this round's minimum (cntrtt and
        // the round edge are untouched); any other state switches off.
        if new == CaState::Open {
            self.rtt.doing = true;
            self.rtt.min_rtt = None;
        } else {
            self.rtt.doing = false;
        }
    }

    fn cwnd_event(&mut self, _info: &ConnInfo, _w: &mut Window, event: CwndEvent) {
        // Linux tcp_veno_init on TX_START: forget baseRTT, inc = 1, enable.
        if self.b.init_on_tx_start && event == CwndEvent::TxStart {
            self.rtt.base_rtt = None;
            self.inc = true;
            self.rtt.doing = true;
            self.rtt.min_rtt = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::reno::test_support::{info, window};
    use super::*;

    fn veno(p: Profile) -> Veno {
        Veno::new(&Params::new(), p)
    }

    /// Stored sample of exactly `us` µs in either profile.
    fn rtt(p: Profile, us: u64) -> Option<Duration> {
        Some(match p {
            Profile::Linux => Duration::from_micros(us - 1),
            Profile::Ns3 | Profile::Ns2 => Duration::from_micros(us),
        })
    }

    /// baseRTT 100 ms and three samples of `min_us` since the last ACK.
    fn primed(p: Profile, min_us: u64) -> Veno {
        let mut cc = veno(p);
        let w = window(1, 1);
        cc.pkts_acked(&info(p), &w, 1, rtt(p, 100_000));
        cc.rtt.min_rtt = None;
        cc.rtt.cnt_rtt = 0;
        for _ in 0..3 {
            cc.pkts_acked(&info(p), &w, 1, rtt(p, min_us));
        }
        cc
    }

    #[test]
    fn linux_diff_in_half_segments_and_regions() {
        let p = Profile::Linux;
        // cwnd 20, minRTT 107 ms: target = (20·100000·2)/107000 = 37,
        // diff = 40 − 37 = 3 half-segments < β = 6: non-congestive, Reno AI.
        let mut cc = primed(p, 107_000);
        let mut w = window(20, 10);
        cc.increase_window(&info(p), &mut w, 1);
        assert_eq!(cc.diff, 3);
        assert_eq!((w.cwnd, cc.cwnd_cnt), (20_000, 1));
        assert_eq!(cc.rtt.min_rtt, None, "minrtt wiped after every ACK");
        assert_eq!(cc.rtt.cnt_rtt, 3, "cntrtt never reset");
        // Loss now: random, ⌊4·20/5⌋ = 16 segments.
        assert_eq!(cc.ssthresh(&info(p), &w, 0), 16_000);

        // minRTT 120 ms: target = 4000000/120000 = 33, diff = 7 ≥ 6: congestive.
        let mut cc = primed(p, 120_000);
        let mut w = window(20, 10);
        cc.cwnd_cnt = 19;
        cc.increase_window(&info(p), &mut w, 1);
        // cwnd_cnt 19 < 20: credit only.
        assert_eq!((cc.diff, w.cwnd, cc.cwnd_cnt), (7, 20_000, 20));
        // Next ACK (minRTT again 120 ms): credit reached cwnd, inc = 1 → +1.
        cc.pkts_acked(&info(p), &w, 1, rtt(p, 120_000));
        cc.increase_window(&info(p), &mut w, 1);
        assert_eq!((w.cwnd, cc.cwnd_cnt, cc.inc), (21_000, 0, false));
        // A full window later the credit is reached again but inc = 0: no growth.
        cc.cwnd_cnt = 21;
        cc.pkts_acked(&info(p), &w, 1, rtt(p, 120_000));
        cc.increase_window(&info(p), &mut w, 1);
        assert_eq!((w.cwnd, cc.cwnd_cnt, cc.inc), (21_000, 0, true));
        // Loss: congestive, 21/2 = 10 segments.
        assert_eq!(cc.ssthresh(&info(p), &w, 0), 10_000);
    }

    #[test]
    fn linux_slow_start_leftover_goes_to_avoidance() {
        // cwnd 9, ssthresh 10, 3 acked: SS to 10, leftover 2 → AI credit 2.
        let p = Profile::Linux;
        let mut cc = primed(p, 100_000);
        let mut w = window(9, 10);
        cc.increase_window(&info(p), &mut w, 3);
        assert_eq!((w.cwnd, cc.cwnd_cnt), (10_000, 2));
    }

    #[test]
    fn linux_without_enough_samples_is_reno() {
        let p = Profile::Linux;
        let mut cc = veno(p);
        let mut w = window(5, 100);
        cc.pkts_acked(&info(p), &w, 1, rtt(p, 100_000));
        cc.increase_window(&info(p), &mut w, 2);
        assert_eq!(w.cwnd, 7_000);
        assert_eq!(cc.diff, 0, "diff not computed");
    }

    #[test]
    fn ns3_diff_in_segments_and_regions() {
        let p = Profile::Ns3;
        // cwnd 20, minRTT 107 ms: target = ⌊20·100/107⌋ = ⌊18.69⌋ = 18, diff 2 < 3:
        // NewReno CA, +1000²/20000 = 50 B.
        let mut cc = primed(p, 107_000);
        let mut w = window(20, 10);
        cc.increase_window(&info(p), &mut w, 1);
        assert_eq!((cc.diff, w.cwnd), (2, 20_050));
        assert_eq!(
            (cc.rtt.cnt_rtt, cc.rtt.min_rtt),
            (0, None),
            "reset every ACK"
        );
        // Loss: random, ⌊0.8·25000⌋ = 20000 B from bytes in flight.
        assert_eq!(cc.ssthresh(&info(p), &w, 25_000), 20_000);

        // minRTT 120 ms: target = ⌊20·100/120⌋ = 16, diff 4 ≥ 3: congestive.
        // First ACK (inc = 1): NewReno step; second: nothing; third: step.
        let mut cc = primed(p, 120_000);
        let mut w = window(20, 10);
        cc.increase_window(&info(p), &mut w, 1);
        assert_eq!((cc.diff, w.cwnd, cc.inc), (4, 20_050, false));
        for _ in 0..3 {
            cc.pkts_acked(&info(p), &w, 1, rtt(p, 120_000));
        }
        cc.increase_window(&info(p), &mut w, 1);
        assert_eq!((w.cwnd, cc.inc), (20_050, true));
        for _ in 0..3 {
            cc.pkts_acked(&info(p), &w, 1, rtt(p, 120_000));
        }
        cc.increase_window(&info(p), &mut w, 1);
        // +1000²/20050 = 49 B.
        assert_eq!((w.cwnd, cc.inc), (20_099, false));
        // Loss: congestive, NewReno max(25000/2, 2000) = 12500.
        assert_eq!(cc.ssthresh(&info(p), &w, 25_000), 12_500);
    }

    #[test]
    fn ns3_single_sample_per_ack_is_newreno_but_diff_still_updates() {
        let p = Profile::Ns3;
        let mut cc = veno(p);
        let mut w = window(20, 10);
        cc.pkts_acked(&info(p), &w, 1, rtt(p, 100_000));
        cc.pkts_acked(&info(p), &w, 1, rtt(p, 150_000));
        cc.increase_window(&info(p), &mut w, 1);
        // cntRtt = 2: NewReno; diff = 20 − ⌊20·1.0⌋ = 0 (minRtt = baseRtt = 100 ms).
        assert_eq!((cc.diff, w.cwnd), (0, 20_050));
        // Next ACK with no sample at all: minRtt = Time::Max, target ≈ 0,
        // diff = cwnd = 20 ≥ β: the next loss is taken as congestive.
        cc.increase_window(&info(p), &mut w, 1);
        assert_eq!(cc.diff, 20);
        assert_eq!(cc.ssthresh(&info(p), &w, 30_000), 15_000);
    }

    #[test]
    fn state_switch_disables_and_reenables() {
        for p in [Profile::Linux, Profile::Ns3] {
            let mut cc = primed(p, 120_000);
            let mut w = window(20, 10);
            cc.congestion_state_set(&info(p), &mut w, CaState::Recovery);
            cc.increase_window(&info(p), &mut w, 2);
            // Disabled: Reno (Linux AI credit 2; ns-3 +50 B), no diff update in Linux.
            match p {
                Profile::Linux => {
                    assert_eq!((w.cwnd, cc.cwnd_cnt, cc.diff), (20_000, 2, 0));
                }
                Profile::Ns3 | Profile::Ns2 => assert_eq!((w.cwnd, cc.diff), (20_050, 4)),
            }
            cc.congestion_state_set(&info(p), &mut w, CaState::Open);
            assert!(cc.rtt.doing);
            assert_eq!(cc.rtt.min_rtt, None);
        }
    }
}
