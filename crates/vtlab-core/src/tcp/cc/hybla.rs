//! TCP Hybla: removes Reno's RTT bias by scaling growth with
//! `ρ = max(RTT/RTT0, 1)`, as if the connection had the reference RTT0:
//! slow start adds `2^ρ − 1` segments per ACK and congestion avoidance
//! `ρ²/cwnd`, so a connection with ρ = 4 grows like a Reno one with a quarter
//! of its RTT. Loss response is Reno's.
//!
//! Sources: C. Caini, R. Firrincieli, "TCP Hybla: a TCP enhancement for
//! heterogeneous networks", Int. J. Satellite Commun. Netw. 22 (2004);
//! Linux `net/ipv4/tcp_hybla.c`; ns-3 `src/internet/model/tcp-hybla.cc`;
//! restated in docs/congestion-control.md, '`hybla`'.
//!
//! Constant: RTT0 = 25 ms in Linux (module parameter `rtt0`), 50 ms in ns-3
//! (attribute `RRTT`); both are whole milliseconds.
//!
//! Profiles (the switches of [`HyblaBehaviour`]):
//! * linux: ρ in 1/8 fixed point, `⌊8·srtt/RTT0⌋` (at least 8), recomputed
//!   from the smoothed RTT whenever it drops below the lowest seen; one
//!   increment per ACK whatever it covers (in 1/128 segment): slow start
//!   `2^⌊ρ⌋ · ⌊128·2^(frac/8)⌋ − 128` (exponent capped at 16; the fraction
//!   table is `⌊128·2^(k/8)⌋`), capped at ssthresh; avoidance `⌊128·ρ²⌋/cwnd`;
//!   the whole part goes to cwnd at once, the remainder accumulates
//!   (`snd_cwnd_cents`), and with a zero increment a counter adds one segment
//!   per cwnd ACKs; cwnd ≤ 65 535 segments. Only in Open; otherwise (Disorder,
//!   Loss) Reno growth. At connection start (TX_START, the kernel's `init`)
//!   cwnd is set to ⌊ρ⌋ from the handshake SRTT, so a path shorter than 2·RTT0
//!   starts from one segment. The AI credit is cleared on entering Recovery
//!   or Loss (the kernel sender does that).
//! * ns3: ρ in floating point from the minimum SRTT in whole milliseconds,
//!   recomputed when the SRTT equals that minimum; slow start adds
//!   `⌊(2^ρ − 1)·MSS⌋` bytes per ACK, capped at ssthresh, the remaining
//!   segments go to avoidance; avoidance adds `ρ²/cwnd` per *segment* acked
//!   to a floating-point counter and moves its whole part to cwnd; in every
//!   state; ssthresh from bytes in flight.

use super::reno::{cwnd_segments, reno_increase, reno_ssthresh, ssthresh_segments};
use super::{
    param, CongestionOps, ConnInfo, CwndEvent, ParamSpec, Params, Profile, ProfileBehaviour, Window,
};
use crate::engine::Duration;
use crate::tcp::CaState;

/// Tunables of Hybla.
pub const PARAMS: &[ParamSpec] = &[ParamSpec {
    name: "rtt0",
    default_ns3: 50.0,
    default_linux: 25.0,
    default_ns2: None,
    min: 1.0,
    max: 10000.0,
    doc: "reference RTT0 in whole milliseconds (Linux 25, ns-3 50): ρ = max(RTT/RTT0, 1)",
    integer: true,
    at_most: None,
}];

/// `⌊128·2^(k/8)⌋`, k = 0..7: the fractional part of 2^ρ in 1/128.
const FRACTIONS: [u64; 8] = [128, 139, 152, 165, 181, 197, 215, 234];
/// Linux `snd_cwnd_clamp` set by Hybla.
const CWND_CLAMP: u64 = 65_535;

/// Where Hybla follows ns-3 (`tcp-hybla.cc`) or Linux (`tcp_hybla.c`); see
/// the module documentation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HyblaBehaviour {
    /// Linux (`hybla_recalc_param`): ρ in 1/8 fixed point from the smoothed
    /// RTT whenever it drops below the lowest seen, one increment per ACK in
    /// 1/128 segment with the remainder accumulated, cwnd ≤ 65 535 segments.
    /// ns-3: ρ in floating point from the minimum SRTT in whole milliseconds,
    /// slow start `⌊(2^ρ − 1)·MSS⌋` bytes per ACK with the remaining
    /// segments going to avoidance, avoidance `ρ²/cwnd` per segment acked.
    pub kernel_arithmetic: bool,
    /// Hybla's law only in Open, Reno growth otherwise (Linux); ns-3 applies
    /// it in every state.
    pub reno_outside_open: bool,
    /// The AI credit is cleared on entering Recovery or Loss (the Linux
    /// kernel sender does that).
    pub credit_cleared_on_recovery: bool,
    /// At connection start (TX_START, Linux `hybla_init`) ρ comes from the
    /// handshake SRTT and cwnd is set to ⌊ρ⌋; ns-3 keeps the initial window.
    pub init_on_tx_start: bool,
}

impl ProfileBehaviour for HyblaBehaviour {
    const NS3: Self = HyblaBehaviour {
        kernel_arithmetic: false,
        reno_outside_open: false,
        credit_cleared_on_recovery: false,
        init_on_tx_start: false,
    };
    const LINUX: Self = HyblaBehaviour {
        kernel_arithmetic: true,
        reno_outside_open: true,
        credit_cleared_on_recovery: true,
        init_on_tx_start: true,
    };
}

#[derive(Clone, Debug)]
pub struct Hybla {
    b: HyblaBehaviour,
    /// For the Reno growth and ssthresh (reno.rs).
    profile: Profile,
    rtt0_ms: u64,
    /// Linux: growth by Hybla's law (state Open) or Reno's.
    enabled: bool,
    /// Linux: ρ (integer part), ρ·8, ρ²·128, fractional increments in 1/128.
    rho: u64,
    rho_3ls: u64,
    rho2_7ls: u64,
    cwnd_cents: u64,
    /// Linux: lowest SRTT seen, in 1/8 µs (the kernel's `srtt_us`).
    min_srtt_us8: u64,
    /// Linux `snd_cwnd_cnt`.
    cwnd_cnt: u64,
    started: bool,
    /// ns-3: ρ, the avoidance counter and the minimum SRTT.
    rho_f: f64,
    cnt_f: f64,
    min_srtt: Option<Duration>,
}

impl Hybla {
    pub fn new(params: &Params, profile: Profile) -> Self {
        Hybla {
            b: HyblaBehaviour::of(profile),
            profile,
            rtt0_ms: (param(PARAMS, params, "rtt0", profile) as u64).max(1),
            enabled: true,
            rho: 0,
            rho_3ls: 0,
            rho2_7ls: 0,
            cwnd_cents: 0,
            min_srtt_us8: u64::MAX,
            cwnd_cnt: 0,
            started: false,
            rho_f: 1.0,
            cnt_f: 0.0,
            min_srtt: None,
        }
    }

    /// Current ρ (Linux: the 1/8 fixed-point value).
    pub fn rho(&self) -> f64 {
        if self.b.kernel_arithmetic {
            self.rho_3ls as f64 / 8.0
        } else {
            self.rho_f
        }
    }

    fn srtt_us8(info: &ConnInfo) -> u64 {
        info.srtt.map_or(0, |s| s.as_nanos() * 8 / 1_000)
    }

    /// Linux `hybla_recalc_param`.
    fn recalc(&mut self, srtt_us8: u64) {
        self.rho_3ls = (srtt_us8 / (self.rtt0_ms * 1_000)).max(8);
        self.rho = self.rho_3ls >> 3;
        self.rho2_7ls = (self.rho_3ls * self.rho_3ls) << 1;
    }

    fn linux_increase(&mut self, info: &ConnInfo, w: &mut Window, acked: u32) {
        let srtt = Self::srtt_us8(info);
        if srtt < self.min_srtt_us8 {
            self.recalc(srtt);
            self.min_srtt_us8 = srtt;
        }
        if !self.enabled {
            reno_increase(self.profile, info, w, &mut self.cwnd_cnt, acked);
            return;
        }
        if self.rho == 0 {
            self.recalc(srtt);
        }
        let frac = (self.rho_3ls - (self.rho << 3)) as usize;
        let mut cwnd = cwnd_segments(info, w);
        let ssthresh = ssthresh_segments(info, w);
        let slow_start = cwnd < ssthresh;
        let increment = if slow_start {
            (1u64 << self.rho.min(16)) * FRACTIONS[frac] - 128
        } else {
            let inc = self.rho2_7ls / cwnd.max(1);
            if inc < 128 {
                self.cwnd_cnt += 1;
            }
            inc
        };
        let odd = increment % 128;
        cwnd += increment >> 7;
        self.cwnd_cents += odd;
        while self.cwnd_cents >= 128 {
            cwnd += 1;
            self.cwnd_cents -= 128;
            self.cwnd_cnt = 0;
        }
        if increment == 0 && odd == 0 && self.cwnd_cnt >= cwnd {
            cwnd += 1;
            self.cwnd_cnt = 0;
        }
        if slow_start {
            cwnd = cwnd.min(ssthresh);
        }
        w.cwnd = cwnd.min(CWND_CLAMP) * info.mss;
    }

    fn ns3_increase(&mut self, info: &ConnInfo, w: &mut Window, acked: u32) {
        let mut acked = acked;
        if w.in_slow_start() {
            if acked >= 1 {
                let incr = ((2f64.powf(self.rho_f) - 1.0) * info.mss as f64) as u32;
                w.cwnd = (w.cwnd + u64::from(incr)).min(w.ssthresh);
                acked -= 1;
            } else {
                acked = 0;
            }
        }
        if !w.in_slow_start() {
            let seg = cwnd_segments(info, w) as f64;
            for _ in 0..acked {
                self.cnt_f += self.rho_f.powf(2.0) / seg;
            }
            if self.cnt_f >= 1.0 {
                let inc = self.cnt_f as u32;
                self.cnt_f -= f64::from(inc);
                w.cwnd += u64::from(inc) * info.mss;
            }
        }
    }
}

impl CongestionOps for Hybla {
    fn ssthresh(&mut self, info: &ConnInfo, w: &Window, bytes_in_flight: u64) -> u64 {
        reno_ssthresh(self.profile, info, w, bytes_in_flight)
    }

    fn increase_window(&mut self, info: &ConnInfo, w: &mut Window, segments_acked: u32) {
        if self.b.kernel_arithmetic {
            self.linux_increase(info, w, segments_acked);
        } else {
            self.ns3_increase(info, w, segments_acked);
        }
    }

    fn pkts_acked(
        &mut self,
        _info: &ConnInfo,
        _w: &Window,
        _segments_acked: u32,
        rtt: Option<Duration>,
    ) {
        if self.b.kernel_arithmetic {
            return;
        }
        let Some(rtt) = rtt else { return };
        let min = self.min_srtt.map_or(rtt, |m| m.min(rtt));
        self.min_srtt = Some(min);
        if rtt == min {
            let min_ms = (min.as_nanos() / 1_000_000) as f64;
            self.rho_f = (min_ms / self.rtt0_ms as f64).max(1.0);
        }
    }

    fn congestion_state_set(&mut self, _info: &ConnInfo, _w: &mut Window, new: CaState) {
        if self.b.reno_outside_open {
            self.enabled = new == CaState::Open;
        }
        if self.b.credit_cleared_on_recovery && matches!(new, CaState::Recovery | CaState::Loss) {
            self.cwnd_cnt = 0;
        }
    }

    fn cwnd_event(&mut self, info: &ConnInfo, w: &mut Window, event: CwndEvent) {
        // Linux `hybla_init` at connection start: ρ from the handshake SRTT
        // and cwnd = ⌊ρ⌋.
        if event == CwndEvent::TxStart && !self.started && self.b.init_on_tx_start {
            self.started = true;
            self.enabled = true;
            self.cwnd_cents = 0;
            let srtt = Self::srtt_us8(info);
            self.recalc(srtt);
            self.min_srtt_us8 = srtt;
            w.cwnd = self.rho * info.mss;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::reno::test_support::{info, window};
    use super::*;

    fn linux_with_srtt(srtt_ms: u64) -> (Hybla, ConnInfo, Window) {
        let mut h = Hybla::new(&Params::new(), Profile::Linux);
        let mut i = info(Profile::Linux);
        i.srtt = Some(Duration::from_millis(srtt_ms));
        let mut w = window(10, u64::MAX);
        h.cwnd_event(&i, &mut w, CwndEvent::TxStart);
        (h, i, w)
    }

    #[test]
    fn fraction_table_is_two_to_the_k_eighths() {
        for (k, &f) in FRACTIONS.iter().enumerate() {
            assert_eq!(f, (128.0 * 2f64.powf(k as f64 / 8.0)).floor() as u64);
        }
    }

    #[test]
    fn linux_rho_in_eighths() {
        // srtt 100 ms, RTT0 25 ms: ρ·8 = ⌊800 000/25 000⌋ = 32 → ρ = 4, ρ²·128 = 2048.
        let (h, _, w) = linux_with_srtt(100);
        assert_eq!((h.rho_3ls, h.rho, h.rho2_7ls), (32, 4, 2048));
        assert_eq!(w.cwnd, 4_000, "init: cwnd = ⌊ρ⌋");
        // srtt 60 ms: ⌊480 000/25 000⌋ = 19 → ρ = 2 + 3/8.
        let (h, _, _) = linux_with_srtt(60);
        assert_eq!((h.rho_3ls, h.rho), (19, 2));
        assert_eq!(h.rho(), 2.375);
        // srtt 10 ms: ⌊80 000/25 000⌋ = 3 → at least 8: ρ = 1, cwnd 1 segment.
        let (h, _, w) = linux_with_srtt(10);
        assert_eq!((h.rho_3ls, h.rho), (8, 1));
        assert_eq!(w.cwnd, 1_000);
    }

    #[test]
    fn ns3_rho_from_minimum_srtt_in_whole_ms() {
        // RRTT 50 ms: min SRTT 120.9 ms → ⌊120.9⌋ = 120 ms → ρ = 2.4.
        let mut h = Hybla::new(&Params::new(), Profile::Ns3);
        let i = info(Profile::Ns3);
        let w = window(10, u64::MAX);
        h.pkts_acked(&i, &w, 1, Some(Duration::from_micros(120_900)));
        assert_eq!(h.rho(), 2.4);
        // A larger SRTT is not the minimum: ρ unchanged; a smaller one is.
        h.pkts_acked(&i, &w, 1, Some(Duration::from_millis(200)));
        assert_eq!(h.rho(), 2.4);
        h.pkts_acked(&i, &w, 1, Some(Duration::from_millis(100)));
        assert_eq!(h.rho(), 2.0);
        // Below RRTT: ρ = max(30/50, 1) = 1.
        h.pkts_acked(&i, &w, 1, Some(Duration::from_millis(30)));
        assert_eq!(h.rho(), 1.0);
    }

    #[test]
    fn linux_slow_start_increment() {
        // ρ = 4: (2⁴·128 − 128)/128 = 15 segments per ACK, no remainder.
        let (mut h, i, mut w) = linux_with_srtt(100);
        h.increase_window(&i, &mut w, 1);
        assert_eq!(w.cwnd, 19_000, "4 + 15");
        // ρ = 2 + 3/8: 4·165 − 128 = 532 = 4·128 + 20: +4 segments, 20/128 kept.
        let (mut h, i, mut w) = linux_with_srtt(60);
        h.increase_window(&i, &mut w, 2);
        assert_eq!((w.cwnd, h.cwnd_cents), (6_000, 20), "2 + 4");
        // Capped at ssthresh.
        w.ssthresh = 8_000;
        h.increase_window(&i, &mut w, 1);
        assert_eq!(w.cwnd, 8_000);
    }

    #[test]
    fn linux_avoidance_increment() {
        // ρ = 4, cwnd 20: ⌊2048/20⌋ = 102/128 per ACK: the 2nd ACK carries
        // the remainder over 128: +1 segment, 76 left.
        let (mut h, i, _) = linux_with_srtt(100);
        let mut w = window(20, 10);
        h.increase_window(&i, &mut w, 2);
        assert_eq!((w.cwnd, h.cwnd_cents), (20_000, 102));
        h.increase_window(&i, &mut w, 2);
        assert_eq!((w.cwnd, h.cwnd_cents), (21_000, 76));
    }

    #[test]
    fn linux_zero_increment_falls_back_to_one_segment_per_window() {
        // ρ = 1 (ρ²·128 = 128), cwnd 200: ⌊128/200⌋ = 0; the ACK counter adds
        // one segment after 200 ACKs.
        let (mut h, i, _) = linux_with_srtt(10);
        let mut w = window(200, 10);
        for _ in 0..199 {
            h.increase_window(&i, &mut w, 1);
        }
        assert_eq!(w.cwnd, 200_000);
        h.increase_window(&i, &mut w, 1);
        assert_eq!((w.cwnd, h.cwnd_cnt), (201_000, 0));
    }

    #[test]
    fn linux_outside_open_grows_like_reno() {
        // Disorder: Reno slow start (+ acked) instead of +15 per ACK.
        let (mut h, i, mut w) = linux_with_srtt(100);
        h.congestion_state_set(&i, &mut w, CaState::Disorder);
        h.increase_window(&i, &mut w, 2);
        assert_eq!(w.cwnd, 6_000);
        h.congestion_state_set(&i, &mut w, CaState::Open);
        h.increase_window(&i, &mut w, 2);
        assert_eq!(w.cwnd, 21_000);
    }

    #[test]
    fn linux_rho_follows_only_a_lower_srtt() {
        let (mut h, mut i, mut w) = linux_with_srtt(100);
        i.srtt = Some(Duration::from_millis(200));
        h.increase_window(&i, &mut w, 1);
        assert_eq!(h.rho, 4);
        i.srtt = Some(Duration::from_millis(50));
        h.increase_window(&i, &mut w, 1);
        assert_eq!(h.rho, 2, "⌊400 000/25 000⌋ = 16 → ρ = 2");
    }

    #[test]
    fn ns3_slow_start_and_avoidance() {
        // ρ = 2.4: slow start adds ⌊(2^2.4 − 1)·1000⌋ = ⌊4278.03⌋ = 4278 bytes
        // per ACK, capped at ssthresh.
        let mut h = Hybla::new(&Params::new(), Profile::Ns3);
        h.rho_f = 2.4;
        let i = info(Profile::Ns3);
        let mut w = window(10, 100);
        h.increase_window(&i, &mut w, 1);
        assert_eq!(w.cwnd, 14_278);
        let mut w = window(10, 12);
        h.increase_window(&i, &mut w, 1);
        assert_eq!(w.cwnd, 12_000);
        // ρ = 2, cwnd 20, 2 segments per ACK: +2·4/20 = 0.4 per ACK; the 3rd
        // ACK reaches 1.2: +1 MSS, 0.2 kept.
        h.rho_f = 2.0;
        let mut w = window(20, 10);
        h.increase_window(&i, &mut w, 2);
        h.increase_window(&i, &mut w, 2);
        assert_eq!(w.cwnd, 20_000);
        h.increase_window(&i, &mut w, 2);
        assert_eq!(w.cwnd, 21_000);
        assert!((h.cnt_f - 0.2).abs() < 1e-9);
        // The slow-start ACK's leftover segments go to avoidance.
        let mut h = Hybla::new(&Params::new(), Profile::Ns3);
        h.rho_f = 2.0;
        let mut w = window(9, 10);
        // +3 MSS → min(12 000, 10 000) = 10 000; 2 segments left: 2·4/10 = 0.8.
        h.increase_window(&i, &mut w, 3);
        assert_eq!(w.cwnd, 10_000);
        assert!((h.cnt_f - 0.8).abs() < 1e-9);
    }

    #[test]
    fn reno_ssthresh_and_rtt0_parameter() {
        let mut h = Hybla::new(&Params::new(), Profile::Ns3);
        assert_eq!(
            h.ssthresh(&info(Profile::Ns3), &window(40, 1), 30_000),
            15_000
        );
        let mut h = Hybla::new(&Params::new(), Profile::Linux);
        assert_eq!(
            h.ssthresh(&info(Profile::Linux), &window(40, 1), 30_000),
            20_000
        );
        // rtt0 = 50 ms under Linux: srtt 100 ms → ρ = 2.
        let mut p = Params::new();
        p.insert("rtt0".into(), 50.0);
        let mut h = Hybla::new(&p, Profile::Linux);
        let mut i = info(Profile::Linux);
        i.srtt = Some(Duration::from_millis(100));
        let mut w = window(10, u64::MAX);
        h.cwnd_event(&i, &mut w, CwndEvent::TxStart);
        assert_eq!(h.rho, 2);
    }
}
