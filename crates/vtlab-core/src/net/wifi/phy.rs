//! 802.11 PHY: rates, frame durations, interframe timing and the reception
//! rule (per-chunk SINR), for DSSS (802.11b) and OFDM (802.11a, 802.11g).
//!
//! Durations follow IEEE 802.11-2016 (and ns-3.44's `DsssPhy`/`OfdmPhy`):
//! * DSSS, long preamble: 144 µs preamble + 48 µs PLCP header at 1 Mbit/s,
//!   then the PSDU, rounded up to a whole microsecond (192 µs + 8·B/R);
//!   short preamble: 72 + 24 µs.
//! * OFDM (20 MHz): 16 µs preamble + 4 µs SIGNAL, then 4 µs symbols of
//!   N_DBPS = 4·R bits carrying SERVICE (16 bits) + PSDU + tail (6 bits);
//!   802.11g (ERP-OFDM) adds a 6 µs signal extension.

use serde::{Deserialize, Serialize};

use crate::engine::Duration;

/// Which 802.11 PHY.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Standard {
    /// 802.11b DSSS/CCK: 1, 2, 5.5, 11 Mbit/s; slot 20 µs, SIFS 10 µs, CW 31–1023.
    B,
    /// 802.11a OFDM (5 GHz): 6–54 Mbit/s; slot 9 µs, SIFS 16 µs, CW 15–1023.
    A,
    /// 802.11g ERP-OFDM (2.4 GHz): 6–54 Mbit/s; slot 20 µs (ns-3's default:
    /// long slot), SIFS 10 µs, CW 15–1023, 6 µs signal extension.
    G,
}

impl Standard {
    /// Data rates (kbit/s) the standard defines.
    pub fn rates_kbps(self) -> &'static [u32] {
        match self {
            Standard::B => &[1_000, 2_000, 5_500, 11_000],
            Standard::A | Standard::G => {
                &[6_000, 9_000, 12_000, 18_000, 24_000, 36_000, 48_000, 54_000]
            }
        }
    }

    /// Default timing: (slot, SIFS, CWmin, CWmax).
    pub fn timing(self) -> (Duration, Duration, u32, u32) {
        match self {
            Standard::B => (
                Duration::from_micros(20),
                Duration::from_micros(10),
                31,
                1023,
            ),
            Standard::A => (
                Duration::from_micros(9),
                Duration::from_micros(16),
                15,
                1023,
            ),
            Standard::G => (
                Duration::from_micros(20),
                Duration::from_micros(10),
                15,
                1023,
            ),
        }
    }

    /// The lowest (basic) rate, kbit/s: the default control rate.
    pub fn basic_rate_kbps(self) -> u32 {
        self.rates_kbps()[0]
    }

    /// Receiver bandwidth for thermal noise, Hz (22 MHz DSSS, 20 MHz OFDM).
    pub fn bandwidth_hz(self) -> f64 {
        match self {
            Standard::B => 22e6,
            Standard::A | Standard::G => 20e6,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Standard::B => "b",
            Standard::A => "a",
            Standard::G => "g",
        }
    }
}

/// Duration of the preamble and PHY header, during which the header rate applies.
pub fn header_duration(standard: Standard, short_preamble: bool) -> Duration {
    match (standard, short_preamble) {
        (Standard::B, false) => Duration::from_micros(192),
        (Standard::B, true) => Duration::from_micros(96),
        (Standard::A | Standard::G, _) => Duration::from_micros(20),
    }
}

/// Air time of a frame of `bytes` (MAC header and FCS included) at `rate_kbps`.
pub fn frame_duration(
    standard: Standard,
    short_preamble: bool,
    bytes: u32,
    rate_kbps: u32,
) -> Duration {
    let bits = u64::from(bytes) * 8;
    let rate = u64::from(rate_kbps);
    let header = header_duration(standard, short_preamble);
    match standard {
        Standard::B => {
            // PSDU time in µs, rounded up (exact at 1 and 2 Mbit/s).
            let us = (bits * 1_000).div_ceil(rate);
            header + Duration::from_micros(us)
        }
        Standard::A | Standard::G => {
            let ndbps = rate * 4 / 1_000;
            let symbols = (16 + bits + 6).div_ceil(ndbps);
            let extension = if standard == Standard::G { 6 } else { 0 };
            header + Duration::from_micros(4 * symbols + extension)
        }
    }
}

/// ln of the probability that `bits` bits at DSSS rate `rate_kbps` survive SINR
/// `sinr` (linear): bits · ln(1 − BER). `None` for a rate without a formula.
fn dsss_log_success(sinr: f64, bits: f64, rate_kbps: u32) -> Option<f64> {
    // ns-3's DsssErrorRateModel (after Proakis): Eb/N0 = SINR · 22 Mchip/s ÷
    // bit rate. DBPSK: BER = ½·exp(−Eb/N0). DQPSK: the Pawula–Proakis
    // approximation BER ≈ (√2+1)/√(8π√2) · exp(−(2−√2)·x)/√x, x = Eb/N0.
    let ber = match rate_kbps {
        1_000 => 0.5 * (-(sinr * 22.0)).exp(),
        2_000 => {
            let x = sinr * 22.0 / 2.0;
            let k = (2f64.sqrt() + 1.0) / (8.0 * std::f64::consts::PI * 2f64.sqrt()).sqrt();
            (k / x.sqrt() * (-(2.0 - 2f64.sqrt()) * x).exp()).min(0.5)
        }
        _ => return None,
    };
    Some(bits * (-ber).ln_1p())
}

/// How a receiver decides whether a frame it locked onto was received.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "model", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Reception {
    /// Received iff the SINR stays at or above `sinr_db` for the whole frame
    /// (ns-2's capture threshold `CPThresh_`, 10 dB, applied to the sum of
    /// interference).
    Threshold { sinr_db: f64 },
    /// Received with probability Π over constant-SINR chunks of (1 − BER)^bits,
    /// with ns-3's DSSS bit-error formulas (1 and 2 Mbit/s only). The preamble
    /// is detected when its SNR is at least `preamble_snr_db` (ns-3's
    /// `ThresholdPreambleDetectionModel`, 4 dB).
    DsssBer { preamble_snr_db: f64 },
}

impl Reception {
    /// Lowest SINR (linear) at which a preamble is caught (the threshold
    /// model's own threshold: a frame that cannot be received is not locked).
    pub fn lock_sinr(&self) -> f64 {
        match *self {
            Reception::Threshold { sinr_db } => db_to_linear(sinr_db),
            Reception::DsssBer { preamble_snr_db } => db_to_linear(preamble_snr_db),
        }
    }

    /// Whether the model supports `rate_kbps` (an error names the reason).
    pub fn supports(&self, rate_kbps: u32) -> bool {
        match self {
            Reception::Threshold { .. } => true,
            Reception::DsssBer { .. } => matches!(rate_kbps, 1_000 | 2_000),
        }
    }

    /// Log of the success probability of `bits` bits at constant `sinr`
    /// (−∞ when the threshold model fails them).
    pub fn chunk_log_success(&self, sinr: f64, bits: f64, rate_kbps: u32) -> f64 {
        if bits <= 0.0 {
            return 0.0;
        }
        match *self {
            Reception::Threshold { sinr_db } => {
                if sinr >= db_to_linear(sinr_db) {
                    0.0
                } else {
                    f64::NEG_INFINITY
                }
            }
            Reception::DsssBer { .. } => {
                dsss_log_success(sinr, bits, rate_kbps).unwrap_or(f64::NEG_INFINITY)
            }
        }
    }
}

pub fn db_to_linear(db: f64) -> f64 {
    10f64.powf(db / 10.0)
}

/// dBm to milliwatts.
pub fn dbm_to_mw(dbm: f64) -> f64 {
    db_to_linear(dbm)
}

/// Thermal noise plus the receiver's noise figure, dBm.
pub fn noise_dbm(bandwidth_hz: f64, noise_figure_db: f64) -> f64 {
    -174.0 + 10.0 * bandwidth_hz.log10() + noise_figure_db
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dsss_durations_by_hand() {
        // ACK, 14 B at 1 Mbit/s, long preamble: 192 + 112 = 304 µs.
        assert_eq!(
            frame_duration(Standard::B, false, 14, 1_000),
            Duration::from_micros(304)
        );
        // RTS 20 B: 192 + 160 = 352 µs.
        assert_eq!(
            frame_duration(Standard::B, false, 20, 1_000),
            Duration::from_micros(352)
        );
        // 552 B IP + 36 B MAC = 588 B at 1 Mbit/s: 192 + 4704 = 4896 µs.
        assert_eq!(
            frame_duration(Standard::B, false, 588, 1_000),
            Duration::from_micros(4896)
        );
        // At 11 Mbit/s: 4704/11 = 427.6 → 428 µs.
        assert_eq!(
            frame_duration(Standard::B, false, 588, 11_000),
            Duration::from_micros(192 + 428)
        );
        // Short preamble, 2 Mbit/s: 96 + 2352.
        assert_eq!(
            frame_duration(Standard::B, true, 588, 2_000),
            Duration::from_micros(96 + 2352)
        );
    }

    #[test]
    fn ofdm_durations_by_hand() {
        // ACK 14 B at 6 Mbit/s (N_DBPS 24): (16+112+6)/24 = 5.58 → 6 symbols
        // = 24 µs + 20 = 44 µs (the 802.11a ACK time).
        assert_eq!(
            frame_duration(Standard::A, false, 14, 6_000),
            Duration::from_micros(44)
        );
        // 1500 B at 54 Mbit/s (N_DBPS 216): (16+12000+6)/216 = 55.66 → 56
        // symbols = 224 µs + 20 = 244; 802.11g adds 6 µs.
        assert_eq!(
            frame_duration(Standard::A, false, 1500, 54_000),
            Duration::from_micros(244)
        );
        assert_eq!(
            frame_duration(Standard::G, false, 1500, 54_000),
            Duration::from_micros(250)
        );
    }

    #[test]
    fn dsss_ber_matches_the_closed_forms() {
        // DBPSK at SINR 0 dB: Eb/N0 = 22, BER = ½e^−22 = 1.39e−10; 1000 bits
        // succeed with probability ≈ 1 − 1.39e−7.
        let r = Reception::DsssBer {
            preamble_snr_db: 4.0,
        };
        let p = r.chunk_log_success(1.0, 1000.0, 1_000).exp();
        assert!(
            (1.0 - p - 1000.0 * 0.5 * (-22f64).exp()).abs() < 1e-12,
            "{p}"
        );
        // At −5 dB (0.3162): Eb/N0 = 6.957, BER = 4.76e−4; 4704 bits: (1−BER)^4704 = 0.106.
        let p = r.chunk_log_success(db_to_linear(-5.0), 4704.0, 1_000).exp();
        assert!((p - 0.1065).abs() < 0.002, "{p}");
        assert!(!r.supports(11_000));
    }

    #[test]
    fn threshold_reception() {
        let r = Reception::Threshold { sinr_db: 10.0 };
        assert_eq!(r.chunk_log_success(10.0, 100.0, 1_000), 0.0);
        assert_eq!(r.chunk_log_success(9.99, 100.0, 1_000), f64::NEG_INFINITY);
    }

    #[test]
    fn noise_floor() {
        // −174 + 10·log10(22e6) = −100.58 dBm; with 7 dB: −93.58 dBm.
        assert!((noise_dbm(22e6, 7.0) + 93.576).abs() < 0.01);
    }
}
