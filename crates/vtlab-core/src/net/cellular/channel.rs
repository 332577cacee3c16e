//! An LTE channel model for one user: per 1 ms TTI, how many bytes the user
//! receives (downlink) or sends (uplink).
//!
//! Each TTI k covers t = k ms .. (k+1) ms; the channel state is sampled at
//! t = k ms. The steps, in base units (dBm, dB, m, m/s, Hz):
//!
//! 1. **Mean path loss.** The reference-signal power per resource element (RE)
//!    is `P_RE = enb_power_dbm − 10·log10(12·bandwidth_rb)` (total power spread
//!    evenly over the 12 subcarriers of every RB). With `distance_m` the path
//!    loss is the 3GPP urban-macro law of TR 36.814 Annex A.2.1.1 (case 1,
//!    from TR 36.942 §4.5.2 at f = 2 GHz and a base-station antenna 15 m above
//!    the rooftops): `PL = 128.1 + 37.6·log10(d / 1 km)` dB for d ≥ 35 m. The
//!    formula is fixed at 2 GHz: `carrier_hz` only sets the Doppler shift.
//!    Antenna gains and cable losses are 0 dB (fold them into the powers).
//!    The mean RSRP is then `P_RE − PL`. With `rsrp_dbm` that value is the mean
//!    RSRP and the path loss it implies is `PL = P_RE − rsrp_dbm`.
//! 2. **Shadowing** (log-normal, Gudmundson 1991): an AR(1) process in the
//!    distance travelled, `s_{k+1} = ρ·s_k + sqrt(1 − ρ²)·σ·N(0,1)` with
//!    `ρ = exp(−Δd / d_corr)` and `Δd = speed · 1 ms`. It starts at `s_0 = 0`:
//!    the given RSRP or distance is the state at t = 0, and the shadowing
//!    spreads to its stationary standard deviation σ over a few decorrelation
//!    distances. A static car keeps `s = 0`.
//! 3. **Fast fading** (flat Rayleigh, Clarke's model by a sum of sinusoids):
//!    `h(t) = M^{-1/2} · Σ_m exp(j·(2π·f_d·cos(α_m)·t + φ_m))` with M = 32
//!    oscillators, arrival angles `α_m = 2π(m + u_m)/M` (one per sector of the
//!    circle, jittered) and phases `φ_m = 2π·v_m`, `u_m, v_m` uniform, drawn
//!    once when the channel is built. `f_d = speed · carrier_hz / c`. The power
//!    gain `|h|²` has mean 1; one gain applies to the whole band (no frequency
//!    selectivity). A static car, or `fading: false`, has gain 1.
//!    The car moves but keeps its mean distance to the cell (it drives around
//!    it): speed sets only the Doppler shift and the shadowing's decorrelation,
//!    never the mean path loss.
//! 4. **SINR per RE.** `RSRP(t) = mean RSRP − s + 10·log10|h|²`. Downlink:
//!    `SINR = RSRP / (N + I)` in linear units, with the thermal noise per RE
//!    `N = −174 dBm/Hz + 10·log10(15 kHz) + noise_figure_db` and the
//!    interference `I = interference_dbm` per RE. Uplink: the UE spreads its
//!    power over the RBs it uses, `P_UE,RE = ue_power_dbm − 10·log10(12·n)`, and
//!    uses the n ≤ n_prb whose transport block is largest (fewer RBs, more SINR
//!    each: a power-limited UE at the cell edge still sends on a few RBs),
//!    and the received power per RE is `P_UE,RE − PL − s + 10·log10|h|²` (the
//!    same path loss, shadowing and fading), over the eNB's noise (its noise
//!    figure is `noise_figure_db`) and interference. `Tti::rsrp_dbm` is the
//!    downlink RSRP in both directions.
//! 5. **Link adaptation** (ideal: from this TTI's SINR, no reporting delay; see
//!    [`super::tables`]): CQI by the Shannon-gap rule, MCS = 2·CQI − 2, I_TBS of
//!    that MCS by TS 36.213 Table 7.1.7.1-1 (the same curve in the uplink),
//!    capped at `max_itbs`. The user gets `n_prb = max(1, round(share ·
//!    bandwidth_rb))` RBs each TTI; the transport block has `tbs_bits(I_TBS,
//!    n_prb) / 8` bytes (Table 7.1.7.2.1-1, except that the table's anomalous
//!    328 bits at I_TBS 6 on one PRB, more than that PRB can carry with QPSK,
//!    is taken as 88 bits, the value its row and column imply, as ns-3 does).
//!    CQI 0 (SINR below −2.1 dB) schedules nothing.
//! 6. **HARQ**: 8 stop-and-wait processes; TTI k belongs to process k mod 8.
//!    If the process holds a transport block (TB) awaiting retransmission, the
//!    TTI retransmits it (no new data, same size); otherwise a new TB of the
//!    current size is sent. Every transmission fails independently with
//!    probability `bler`. A success delivers the TB's bytes in that TTI
//!    (`retx` tells whether it was a retransmission). After `harq_max_tx`
//!    failed transmissions the TB is lost: that TTI reports `bytes` = the TB
//!    size with `lost = true` (the link drops the packets it carried). A
//!    failed attempt that will be retried reports 0 bytes. In a CQI-0 TTI
//!    nothing is sent, and a pending retransmission waits for its process's
//!    next TTI without using up an attempt.
//!
//! With a constant SINR the delivered throughput is `(1 − bler)` times the TB
//! size per ms, and a fraction `bler^harq_max_tx` of the TBs is lost.
//!
//! Random draws, in a fixed order: when the channel is built and fading is
//! active, `u_0, v_0, …, u_31, v_31`; then in each TTI one uniform for the
//! decoding outcome (drawn in every TTI, even when nothing is sent, so that
//! runs differing only in `bler` or power see the same draws), then, when the
//! shadowing moves (σ > 0 and speed > 0), two uniforms for its Normal draw
//! (Box–Muller).

use serde::{Deserialize, Serialize};

use super::tables::{cqi_from_sinr_db, cqi_mcs, mcs_itbs, tbs_bits};
use crate::engine::{Num, RngStream};

/// Link direction of a cellular channel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    Downlink,
    Uplink,
}

/// Everything the model needs, in base units. The spec layer fills it from
/// user input (units, defaults) and calls [`ChannelConf::check`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChannelConf {
    pub direction: Direction,
    /// Cell bandwidth in resource blocks: 6, 15, 25, 50, 75 or 100.
    pub bandwidth_rb: u32,
    /// Fraction of the RBs scheduled to this user each TTI, in (0, 1].
    pub share: f64,
    /// Mean RSRP at the UE, dBm (exactly one of `rsrp_dbm`, `distance_m`).
    pub rsrp_dbm: Option<f64>,
    /// Distance to the eNB, m; the mean path loss follows the urban-macro law.
    pub distance_m: Option<f64>,
    /// Vehicle speed, m/s: the Doppler shift of the fast fading and the
    /// shadowing's decorrelation. The mean distance to the cell stays fixed.
    pub speed_mps: f64,
    /// Carrier frequency, Hz (Doppler only).
    pub carrier_hz: f64,
    /// Total eNB downlink power, dBm.
    pub enb_power_dbm: f64,
    /// UE maximum transmit power, dBm.
    pub ue_power_dbm: f64,
    /// Receiver noise figure, dB (the UE's for downlink, the eNB's for uplink).
    pub noise_figure_db: f64,
    /// Other-cell interference per resource element at the receiver, dBm.
    /// Must be finite: use a floor such as −200 dBm for none.
    pub interference_dbm: f64,
    /// Standard deviation of the log-normal shadowing, dB (0 = off).
    pub shadowing_sigma_db: f64,
    /// Gudmundson decorrelation distance of the shadowing, m.
    pub shadowing_decorrelation_m: f64,
    /// Rayleigh fast fading when the car moves.
    pub fading: bool,
    /// First-transmission block error rate targeted by link adaptation.
    pub bler: f64,
    /// Transmissions per transport block before it is lost (1..=8).
    pub harq_max_tx: u32,
    /// Highest TBS index link adaptation may use (0..=26).
    pub max_itbs: u8,
}

/// Cell bandwidths of LTE (1.4, 3, 5, 10, 15, 20 MHz) in resource blocks.
pub const BANDWIDTHS_RB: [u32; 6] = [6, 15, 25, 50, 75, 100];
/// Minimum distance of the urban-macro path-loss law, m.
pub const MIN_DISTANCE_M: f64 = 35.0;
/// Number of HARQ processes (FDD).
pub const HARQ_PROCESSES: usize = 8;
/// Oscillators of the sum-of-sinusoids fading generator.
pub const OSCILLATORS: usize = 32;

const SPEED_OF_LIGHT_MPS: f64 = 299_792_458.0;
const TTI_S: f64 = 1e-3;
const SUBCARRIER_HZ: f64 = 15e3;
const THERMAL_DBM_PER_HZ: f64 = -174.0;

fn in_range(
    field: &'static str,
    v: f64,
    lo: f64,
    hi: f64,
    unit: &str,
) -> Result<(), (&'static str, String)> {
    if v.is_finite() && (lo..=hi).contains(&v) {
        Ok(())
    } else {
        let (lo, hi, v) = (Num(lo), Num(hi), Num(v));
        Err((field, format!("must be from {lo} to {hi}{unit} (got {v})")))
    }
}

impl ChannelConf {
    /// Check every field; `Err((field name, message with the allowed range))`.
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        self.check_cell()?;
        self.check_radio()?;
        self.check_link_adaptation()
    }

    /// The bandwidth, this user's share of it, and the mean RSRP or distance.
    fn check_cell(&self) -> Result<(), (&'static str, String)> {
        if !BANDWIDTHS_RB.contains(&self.bandwidth_rb) {
            return Err((
                "bandwidth_rb",
                format!(
                    "must be one of 6, 15, 25, 50, 75, 100 resource blocks (got {})",
                    self.bandwidth_rb
                ),
            ));
        }
        if !(self.share.is_finite() && self.share > 0.0 && self.share <= 1.0) {
            return Err((
                "share",
                format!(
                    "must be in (0, 1], above 0 and at most 1 (got {})",
                    Num(self.share)
                ),
            ));
        }
        match (self.rsrp_dbm, self.distance_m) {
            (Some(r), None) => in_range("rsrp_dbm", r, -160.0, -30.0, " dBm")?,
            (None, Some(d)) => in_range("distance_m", d, MIN_DISTANCE_M, 100_000.0, " m")?,
            (Some(_), Some(_)) => {
                return Err((
                    "rsrp_dbm",
                    "give exactly one of rsrp_dbm (-160 to -30 dBm) and distance_m \
                     (35 to 100000 m), not both"
                        .into(),
                ))
            }
            (None, None) => {
                return Err((
                    "rsrp_dbm",
                    "give exactly one of rsrp_dbm (-160 to -30 dBm) and distance_m \
                     (35 to 100000 m)"
                        .into(),
                ))
            }
        }
        Ok(())
    }

    /// Speed, carrier, powers, noise, interference and shadowing.
    fn check_radio(&self) -> Result<(), (&'static str, String)> {
        in_range("speed_mps", self.speed_mps, 0.0, 150.0, " m/s")?;
        in_range("carrier_hz", self.carrier_hz, 4e8, 6e9, " Hz")?;
        in_range("enb_power_dbm", self.enb_power_dbm, 0.0, 60.0, " dBm")?;
        in_range("ue_power_dbm", self.ue_power_dbm, -40.0, 33.0, " dBm")?;
        in_range("noise_figure_db", self.noise_figure_db, 0.0, 20.0, " dB")?;
        if !(self.interference_dbm.is_finite() && self.interference_dbm <= -30.0) {
            return Err((
                "interference_dbm",
                format!(
                    "must be finite and at most -30 dBm per resource element \
                     (-200 for none) (got {})",
                    Num(self.interference_dbm)
                ),
            ));
        }
        in_range(
            "shadowing_sigma_db",
            self.shadowing_sigma_db,
            0.0,
            20.0,
            " dB",
        )?;
        if !(self.shadowing_decorrelation_m.is_finite()
            && self.shadowing_decorrelation_m > 0.0
            && self.shadowing_decorrelation_m <= 10_000.0)
        {
            return Err((
                "shadowing_decorrelation_m",
                format!(
                    "must be above 0 and at most 10000 m (got {})",
                    Num(self.shadowing_decorrelation_m)
                ),
            ));
        }
        Ok(())
    }

    /// The block error rate, HARQ and the highest TBS index.
    fn check_link_adaptation(&self) -> Result<(), (&'static str, String)> {
        if !(self.bler.is_finite() && (0.0..1.0).contains(&self.bler)) {
            return Err((
                "bler",
                format!(
                    "must be in [0, 1), at least 0 and below 1 (got {})",
                    Num(self.bler)
                ),
            ));
        }
        if !(1..=HARQ_PROCESSES as u32).contains(&self.harq_max_tx) {
            return Err((
                "harq_max_tx",
                format!(
                    "must be from 1 to 8 transmissions (got {})",
                    self.harq_max_tx
                ),
            ));
        }
        if self.max_itbs > super::tables::MAX_ITBS {
            return Err((
                "max_itbs",
                format!("must be from 0 to 26 (got {})", self.max_itbs),
            ));
        }
        Ok(())
    }
}

/// Urban-macro path loss (TR 36.814 Annex A.2.1.1, 2 GHz), dB, at `distance_m`
/// (≥ 35 m): `128.1 + 37.6·log10(d / 1 km)`.
pub fn uma_path_loss_db(distance_m: f64) -> f64 {
    128.1 + 37.6 * (distance_m / 1000.0).log10()
}

/// Thermal noise per resource element (15 kHz) for a noise figure, dBm.
pub fn noise_per_re_dbm(noise_figure_db: f64) -> f64 {
    THERMAL_DBM_PER_HZ + 10.0 * SUBCARRIER_HZ.log10() + noise_figure_db
}

/// One TTI's outcome for this user.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tti {
    /// Bytes delivered in this TTI, or, when `lost`, the bytes of the
    /// transport block given up in this TTI; 0 when nothing was delivered.
    pub bytes: u32,
    /// The transport block failed its last allowed transmission.
    pub lost: bool,
    /// Downlink RSRP at the UE with shadowing and fading, dBm.
    pub rsrp_dbm: f64,
    /// SINR per resource element of this direction, dB.
    pub sinr_db: f64,
    /// CQI of that SINR (0: nothing sent).
    pub cqi: u8,
    /// TBS index of the transport block sent in this TTI (for a
    /// retransmission, the block's own); 0 when nothing was sent.
    pub itbs: u8,
    /// The block sent in this TTI was a retransmission.
    pub retx: bool,
}

/// A transport block held by a HARQ process for retransmission.
#[derive(Clone, Copy, Debug)]
struct PendingTb {
    bytes: u32,
    itbs: u8,
    /// Transmissions so far (all failed).
    tx: u32,
}

/// The per-user LTE channel: see the module documentation.
#[derive(Clone, Debug)]
pub struct Channel {
    conf: ChannelConf,
    rng: RngStream,
    n_prb: u32,
    mean_rsrp_dbm: f64,
    path_loss_db: f64,
    /// Transmit power per RE of this direction's sender, dBm.
    tx_re_dbm: f64,
    /// Noise plus interference per RE at this direction's receiver, mW.
    noise_interference_mw: f64,
    shadow_db: f64,
    shadow_rho: f64,
    shadow_innovation_db: f64,
    /// (angular Doppler frequency rad/s, phase rad) per oscillator; empty
    /// when there is no fast fading.
    oscillators: Vec<(f64, f64)>,
    harq: [Option<PendingTb>; HARQ_PROCESSES],
    tti: u64,
}

/// A standard Normal draw from two uniforms (Box–Muller, cosine branch).
fn normal(rng: &mut RngStream) -> f64 {
    // 1 − U is in (0, 1], so the logarithm is finite.
    let r = (-2.0 * (1.0 - rng.uniform()).ln()).sqrt();
    r * (std::f64::consts::TAU * rng.uniform()).cos()
}

fn db_to_mw(dbm: f64) -> f64 {
    10f64.powf(dbm / 10.0)
}

/// Transport block bits for the model: Table 7.1.7.2.1-1 with its one
/// anomalous entry (I_TBS 6, one PRB: 328 bits) read as 88 bits.
fn model_tb_bits(itbs: u8, n_prb: u32) -> u32 {
    if itbs == 6 && n_prb == 1 {
        88
    } else {
        tbs_bits(itbs, n_prb)
    }
}

impl Channel {
    /// Build the channel; the random stream should be this channel's own.
    ///
    /// # Panics
    /// If `conf` does not pass [`ChannelConf::check`].
    pub fn new(conf: &ChannelConf, mut rng: RngStream) -> Channel {
        if let Err((field, msg)) = conf.check() {
            panic!("invalid ChannelConf: {field} {msg}");
        }
        let n_prb = ((conf.share * f64::from(conf.bandwidth_rb)).round() as u32).max(1);
        let rs_re_dbm = conf.enb_power_dbm - 10.0 * (12.0 * f64::from(conf.bandwidth_rb)).log10();
        let (mean_rsrp_dbm, path_loss_db) = match (conf.rsrp_dbm, conf.distance_m) {
            (Some(r), _) => (r, rs_re_dbm - r),
            (None, Some(d)) => {
                let pl = uma_path_loss_db(d);
                (rs_re_dbm - pl, pl)
            }
            (None, None) => unreachable!("checked above"),
        };
        let tx_re_dbm = match conf.direction {
            Direction::Downlink => rs_re_dbm,
            Direction::Uplink => conf.ue_power_dbm - 10.0 * (12.0 * f64::from(n_prb)).log10(),
        };
        let noise_interference_mw =
            db_to_mw(noise_per_re_dbm(conf.noise_figure_db)) + db_to_mw(conf.interference_dbm);
        let step_m = conf.speed_mps * TTI_S;
        let shadow_rho = (-step_m / conf.shadowing_decorrelation_m).exp();
        let shadow_innovation_db = (1.0 - shadow_rho * shadow_rho).sqrt() * conf.shadowing_sigma_db;
        let mut oscillators = Vec::new();
        if conf.fading && conf.speed_mps > 0.0 {
            let doppler_hz = conf.speed_mps * conf.carrier_hz / SPEED_OF_LIGHT_MPS;
            let omega_max = std::f64::consts::TAU * doppler_hz;
            for m in 0..OSCILLATORS {
                let u = rng.uniform();
                let v = rng.uniform();
                let angle = std::f64::consts::TAU * (m as f64 + u) / OSCILLATORS as f64;
                oscillators.push((omega_max * angle.cos(), std::f64::consts::TAU * v));
            }
        }
        Channel {
            conf: conf.clone(),
            rng,
            n_prb,
            mean_rsrp_dbm,
            path_loss_db,
            tx_re_dbm,
            noise_interference_mw,
            shadow_db: 0.0,
            shadow_rho,
            shadow_innovation_db,
            oscillators,
            harq: [None; HARQ_PROCESSES],
            tti: 0,
        }
    }

    /// The configuration the channel was built with.
    pub fn conf(&self) -> &ChannelConf {
        &self.conf
    }

    /// Resource blocks scheduled to the user each TTI.
    pub fn n_prb(&self) -> u32 {
        self.n_prb
    }

    /// Mean RSRP (no shadowing, no fading), dBm.
    pub fn mean_rsrp_dbm(&self) -> f64 {
        self.mean_rsrp_dbm
    }

    /// Mean path loss, dB (given by the distance, or implied by the RSRP).
    pub fn path_loss_db(&self) -> f64 {
        self.path_loss_db
    }

    /// Maximum Doppler shift of the fast fading, Hz.
    pub fn doppler_hz(&self) -> f64 {
        self.conf.speed_mps * self.conf.carrier_hz / SPEED_OF_LIGHT_MPS
    }

    /// Fast-fading power gain |h|² at time `t` seconds (1 without fading).
    fn fading_gain(&self, t: f64) -> f64 {
        if self.oscillators.is_empty() {
            return 1.0;
        }
        let (mut re, mut im) = (0.0, 0.0);
        for &(omega, phase) in &self.oscillators {
            let (s, c) = (omega * t + phase).sin_cos();
            re += c;
            im += s;
        }
        (re * re + im * im) / OSCILLATORS as f64
    }

    /// Link adaptation for this TTI from the SINR with all `n_prb` RBs:
    /// (SINR, CQI, RBs used). Downlink: all of them. Uplink: the UE's power is
    /// spread over the RBs it uses, so fewer RBs mean more SINR per RB; it uses
    /// the number (1..=n_prb) whose transport block is largest, the smallest on
    /// a tie (what an uplink scheduler does with the UE's power headroom), so a
    /// power-limited UE at the cell edge still sends on a few RBs.
    fn adapt(&self, sinr_all_db: f64) -> (f64, u8, u32) {
        let n_max = self.n_prb;
        if self.conf.direction == Direction::Downlink {
            return (sinr_all_db, cqi_from_sinr_db(sinr_all_db), n_max);
        }
        let mut best = (sinr_all_db, cqi_from_sinr_db(sinr_all_db), n_max, 0u32);
        for n in 1..=n_max {
            let sinr = sinr_all_db + 10.0 * (f64::from(n_max) / f64::from(n)).log10();
            let cqi = cqi_from_sinr_db(sinr);
            let Some(mcs) = cqi_mcs(cqi) else { continue };
            let itbs = mcs_itbs(mcs).1.min(self.conf.max_itbs);
            let bits = model_tb_bits(itbs, n);
            if bits > best.3 {
                best = (sinr, cqi, n, bits);
            }
        }
        (best.0, best.1, best.2)
    }

    /// The next 1 ms TTI (the first call is TTI 0, i.e. t = 0..1 ms).
    pub fn next_tti(&mut self) -> Tti {
        let t = self.tti as f64 * TTI_S;
        // A gain of exactly 0 has probability 0; keep the decibels finite.
        let fading_db = 10.0 * self.fading_gain(t).max(1e-30).log10();
        let rsrp_dbm = self.mean_rsrp_dbm - self.shadow_db + fading_db;
        let rx_re_dbm = self.tx_re_dbm - self.path_loss_db - self.shadow_db + fading_db;
        let (sinr_db, cqi, n_prb) =
            self.adapt(rx_re_dbm - 10.0 * self.noise_interference_mw.log10());

        let u = self.rng.uniform();
        let failed = u < self.conf.bler;
        let process = (self.tti % HARQ_PROCESSES as u64) as usize;
        let mut out = Tti {
            bytes: 0,
            lost: false,
            rsrp_dbm,
            sinr_db,
            cqi,
            itbs: 0,
            retx: false,
        };
        if cqi > 0 {
            let tb = match self.harq[process].take() {
                Some(tb) => {
                    out.retx = true;
                    tb
                }
                None => {
                    let mcs = cqi_mcs(cqi).expect("CQI above 0 has an MCS");
                    let itbs = mcs_itbs(mcs).1.min(self.conf.max_itbs);
                    PendingTb {
                        bytes: model_tb_bits(itbs, n_prb) / 8,
                        itbs,
                        tx: 0,
                    }
                }
            };
            out.itbs = tb.itbs;
            let tx = tb.tx + 1;
            if !failed {
                out.bytes = tb.bytes;
            } else if tx >= self.conf.harq_max_tx {
                out.bytes = tb.bytes;
                out.lost = true;
            } else {
                self.harq[process] = Some(PendingTb { tx, ..tb });
            }
        }

        if self.shadow_innovation_db > 0.0 {
            self.shadow_db = self.shadow_rho * self.shadow_db
                + self.shadow_innovation_db * normal(&mut self.rng);
        }
        self.tti += 1;
        out
    }
}

/// Whether a checked channel can never deliver a byte: nothing varies its
/// SINR (no fading, no shadowing, or a static car) and that SINR maps to CQI 0.
pub fn never_delivers(conf: &ChannelConf) -> bool {
    let varies = conf.speed_mps > 0.0 && (conf.fading || conf.shadowing_sigma_db > 0.0);
    if varies {
        return false;
    }
    let mut ch = Channel::new(conf, crate::engine::RngStream::for_component(0, "check"));
    ch.next_tti().cqi == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Downlink, 50 RB, all RBs, static, no shadowing, no losses.
    fn base() -> ChannelConf {
        ChannelConf {
            direction: Direction::Downlink,
            bandwidth_rb: 50,
            share: 1.0,
            rsrp_dbm: Some(-103.0),
            distance_m: None,
            speed_mps: 0.0,
            carrier_hz: 2.1e9,
            enb_power_dbm: 46.0,
            ue_power_dbm: 23.0,
            noise_figure_db: 9.0,
            interference_dbm: -200.0,
            shadowing_sigma_db: 0.0,
            shadowing_decorrelation_m: 50.0,
            fading: true,
            bler: 0.0,
            harq_max_tx: 4,
            max_itbs: 26,
        }
    }

    fn run(conf: &ChannelConf, seed: u64, n: usize) -> Vec<Tti> {
        let mut ch = Channel::new(conf, RngStream::for_component(seed, "test/channel"));
        (0..n).map(|_| ch.next_tti()).collect()
    }

    #[test]
    fn noise_and_path_loss() {
        // −174 + 10·log10(15000) = −174 + 41.761 = −132.239; + 9 dB = −123.239 dBm.
        assert!((noise_per_re_dbm(9.0) + 123.239_087).abs() < 1e-6);
        // 1 km: 128.1 dB. 35 m: log10(0.035) = log10(3.5) − 2 = −1.455932, so
        // 128.1 + 37.6·(−1.455932) = 128.1 − 54.7430 = 73.3570 dB.
        assert!((uma_path_loss_db(1000.0) - 128.1).abs() < 1e-12);
        assert!((uma_path_loss_db(35.0) - 73.357).abs() < 1e-3);
        // 46 dBm over 600 REs: 46 − 27.782 = 18.218 dBm per RE; at 1 km the
        // mean RSRP is 18.218 − 128.1 = −109.882 dBm.
        let conf = ChannelConf {
            rsrp_dbm: None,
            distance_m: Some(1000.0),
            ..base()
        };
        let ch = Channel::new(&conf, RngStream::for_component(1, "t"));
        assert!((ch.mean_rsrp_dbm() + 109.881_513).abs() < 1e-6);
        for t in run(&conf, 1, 100) {
            assert!((t.rsrp_dbm + 109.881_513).abs() < 1e-6);
        }
    }

    #[test]
    fn capacity_at_fixed_sinr() {
        // RSRP −103 dBm over N = −123.239 dBm (interference at −200 dBm adds
        // 10^-20 mW to 4.7·10^-13 mW): SINR = 20.239 dB. Then
        // s = log2(1 + 105.66/5.52937) = log2(20.109) = 4.330, which lies in
        // [3.9023, 4.5234): CQI 12 → MCS 22 → I_TBS 20 (Table 7.1.7.1-1)
        // → TBS(20, 50 PRB) = 22920 bits = 2865 bytes every ms.
        let ttis = run(&base(), 1, 10_000);
        assert!((ttis[0].sinr_db - 20.239_087).abs() < 1e-5);
        let total: u64 = ttis.iter().map(|t| u64::from(t.bytes)).sum();
        assert_eq!(total, 2865 * 10_000);
        assert!(ttis.iter().all(|t| t.cqi == 12
            && t.itbs == 20
            && t.bytes == 2865
            && !t.lost
            && !t.retx));
        // Share 0.3: round(0.3 · 50) = 15 PRB → TBS(20, 15) = 6968 bits = 871 bytes.
        let conf = ChannelConf {
            share: 0.3,
            ..base()
        };
        assert!(run(&conf, 1, 1000).iter().all(|t| t.bytes == 871));
        // A tiny share still gets one PRB: TBS(20, 1) = 440 bits = 55 bytes.
        let conf = ChannelConf {
            share: 0.001,
            ..base()
        };
        assert!(run(&conf, 1, 100).iter().all(|t| t.bytes == 55));
        // max_itbs 10 caps I_TBS 20: TBS(10, 50) = 8760 bits = 1095 bytes.
        let conf = ChannelConf {
            max_itbs: 10,
            ..base()
        };
        assert!(run(&conf, 1, 100)
            .iter()
            .all(|t| t.bytes == 1095 && t.itbs == 10));
    }

    #[test]
    fn out_of_range_sends_nothing() {
        // −130 dBm: SINR = −6.76 dB < −2.11 dB → CQI 0.
        let conf = ChannelConf {
            rsrp_dbm: Some(-130.0),
            ..base()
        };
        assert!(run(&conf, 1, 100)
            .iter()
            .all(|t| t.cqi == 0 && t.bytes == 0 && !t.lost));
    }

    #[test]
    fn uplink_power_and_cap() {
        // Path loss implied by RSRP −81 dBm: 18.2185 + 81 = 99.2185 dB. The UE
        // spreads 23 dBm over 600 REs: −4.7815 dBm per RE, received at
        // −104.0000 dBm; eNB noise −174 + 41.7609 + 5 = −127.2391 dBm, so
        // SINR = 23.239 dB → s = log2(1 + 210.80/5.52937) = 5.290 → CQI 14
        // → MCS 26 → I_TBS 24 → TBS(24, 50) = 30576 bits = 3822 bytes;
        // capped at I_TBS 19 (MCS 20 of Table 8.6.1-1): TBS(19, 50) = 21384
        // bits = 2673 bytes.
        let conf = ChannelConf {
            direction: Direction::Uplink,
            rsrp_dbm: Some(-81.0),
            noise_figure_db: 5.0,
            max_itbs: 19,
            ..base()
        };
        // TBS(19, 49) = TBS(19, 50) = 21384 bits (Table 7.1.7.2.1-1), so the
        // UE uses 49 RBs (the fewest for the largest block): its SINR is
        // 23.239087 + 10·log10(50/49) = 23.326826 dB, still CQI 14.
        let ttis = run(&conf, 1, 100);
        assert_eq!(tbs_bits(19, 49), tbs_bits(19, 50));
        assert!((ttis[0].sinr_db - 23.326_826).abs() < 1e-5, "{:?}", ttis[0]);
        assert!((ttis[0].rsrp_dbm + 81.0).abs() < 1e-9);
        assert!(ttis.iter().all(|t| t.cqi == 14 && t.bytes == 2673));
        let uncapped = ChannelConf {
            max_itbs: 26,
            ..conf.clone()
        };
        assert!(run(&uncapped, 1, 100).iter().all(|t| t.bytes == 3822));
        // 15 PRB: −4.7815 + 10·log10(600/180) = +0.4473 dBm per RE → SINR
        // 28.468 dB → CQI 15 → I_TBS 26, capped 19 → TBS(19, 15) = 6456 bits.
        let narrow = ChannelConf { share: 0.3, ..conf };
        assert!(run(&narrow, 1, 100)
            .iter()
            .all(|t| t.cqi == 15 && t.bytes == 807));
    }

    #[test]
    fn a_power_limited_uplink_still_sends_on_fewer_rbs() {
        // RSRP −110 dBm: path loss 18.2185 + 110 = 128.2185 dB. On all 35 RBs
        // (share 0.7) the UE puts 23 − 10·log10(420) = −3.232 dBm per RE,
        // received at −131.45 dBm over noise −127.24 ⊕ interference −120 =
        // −119.25 dBm: SINR −12.2 dB → CQI 0. On 1 RB: 23 − 10·log10(12) =
        // 12.208 dBm per RE → SINR +3.24 dB → efficiency log2(1 + 2.109/5.529)
        // = 0.466 ≥ CQI 3's 0.377: MCS 4, I_TBS 4, TBS(4, 1) = 56 bits. The
        // UE may find a larger block on more RBs (here 2 RBs at CQI 2), never
        // a smaller one.
        let conf = ChannelConf {
            direction: Direction::Uplink,
            rsrp_dbm: Some(-110.0),
            noise_figure_db: 5.0,
            interference_dbm: -120.0,
            share: 0.7,
            bler: 0.0,
            max_itbs: 19,
            ..base()
        };
        let ttis = run(&conf, 1, 50);
        assert!(
            ttis.iter()
                .all(|t| t.cqi > 0 && t.bytes >= tbs_bits(4, 1) / 8),
            "{:?}",
            ttis[0]
        );
        assert!(!never_delivers(&conf));
    }

    /// Counts over a run at constant SINR (2865-byte TBs).
    struct HarqCounts {
        ttis: usize,
        delivered_ttis: usize,
        new_tbs: usize,
        finished_tbs: usize,
        lost_tbs: usize,
    }

    fn harq_counts(bler: f64, n: usize) -> HarqCounts {
        let conf = ChannelConf { bler, ..base() };
        let ttis = run(&conf, 7, n);
        let mut c = HarqCounts {
            ttis: n,
            delivered_ttis: 0,
            new_tbs: 0,
            finished_tbs: 0,
            lost_tbs: 0,
        };
        for (k, t) in ttis.iter().enumerate() {
            assert!(t.bytes == 0 || t.bytes == 2865);
            if !t.retx {
                c.new_tbs += 1;
            }
            if t.lost {
                c.lost_tbs += 1;
                c.finished_tbs += 1;
            } else if t.bytes > 0 {
                c.delivered_ttis += 1;
                c.finished_tbs += 1;
            }
            // A failed attempt that will be retried is retransmitted 8 TTIs
            // later, by the same process; a retransmission follows a failure.
            let retried = t.bytes == 0;
            if retried && k + 8 < n {
                assert!(ttis[k + 8].retx, "TTI {k}");
            }
            if t.retx {
                assert!(k >= 8 && ttis[k - 8].bytes == 0 && !ttis[k - 8].lost);
            }
        }
        c
    }

    #[test]
    fn harq_bler_10_percent() {
        // Each TTI carries one attempt, which succeeds with probability 0.9
        // independently, so delivering TTIs ~ Binomial(N, 0.9): the delivered
        // fraction is 0.9 (delivered throughput 0.9 × 2865 bytes/ms) with
        // standard error sqrt(0.9·0.1/N) = 3.0e-4 for N = 10^6.
        let n = 1_000_000;
        let c = harq_counts(0.1, n);
        let f = c.delivered_ttis as f64 / n as f64;
        assert!((f - 0.9).abs() < 4.0 * (0.09 / n as f64).sqrt(), "{f}");
        // TB outcomes are independent: a TB is lost after 4 failures, with
        // probability 0.1^4 = 1e-4 (delivered fraction 1 − 1e-4 = 0.9999).
        let p_lost = 1e-4;
        let m = c.finished_tbs as f64;
        let lost = c.lost_tbs as f64 / m;
        assert!(
            (lost - p_lost).abs() < 4.0 * (p_lost * (1.0 - p_lost) / m).sqrt(),
            "{lost}"
        );
        assert!(c.lost_tbs > 0);
        // A TB takes K attempts, P(K=1..4) = 0.9, 0.09, 0.009, 0.001:
        // E[K] = 1.111, Var[K] = 1.357 − 1.111² = 0.1227. New TBs per TTI
        // → 1/E[K] = 0.90009, renewal variance ≈ N·Var[K]/E[K]³ = 0.0895·N.
        let g = c.new_tbs as f64 / c.ttis as f64;
        assert!(
            (g - 0.9 / 0.9999).abs() < 4.0 * (0.0895 / n as f64).sqrt(),
            "{g}"
        );
    }

    #[test]
    fn harq_bler_50_percent_losses() {
        // bler 0.5, 4 transmissions: P(lost) = 0.5^4 = 0.0625 per TB.
        let n = 200_000;
        let c = harq_counts(0.5, n);
        let m = c.finished_tbs as f64;
        let lost = c.lost_tbs as f64 / m;
        assert!(
            (lost - 0.0625).abs() < 4.0 * (0.0625 * 0.9375 / m).sqrt(),
            "{lost}"
        );
        // Delivering TTIs ~ Binomial(N, 0.5).
        let f = c.delivered_ttis as f64 / n as f64;
        assert!((f - 0.5).abs() < 4.0 * (0.25 / n as f64).sqrt(), "{f}");
    }

    #[test]
    fn harq_single_transmission() {
        // harq_max_tx 1: every failure is a loss, nothing is retransmitted.
        let conf = ChannelConf {
            bler: 0.3,
            harq_max_tx: 1,
            ..base()
        };
        let ttis = run(&conf, 3, 10_000);
        assert!(ttis.iter().all(|t| !t.retx && t.bytes == 2865));
        assert!(ttis.iter().any(|t| t.lost));
    }

    /// |h|² of each TTI, from the RSRP (no shadowing: RSRP = mean + 10·log10|h|²).
    fn gains(conf: &ChannelConf, seed: u64, n: usize) -> Vec<f64> {
        let mean = conf.rsrp_dbm.unwrap();
        run(conf, seed, n)
            .iter()
            .map(|t| 10f64.powf((t.rsrp_dbm - mean) / 10.0))
            .collect()
    }

    fn mean_and_se(xs: &[f64]) -> (f64, f64) {
        let n = xs.len() as f64;
        let m = xs.iter().sum::<f64>() / n;
        let var = xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1.0);
        (m, (var / n).sqrt())
    }

    #[test]
    fn rayleigh_fading_statistics() {
        // 60 km/h at 2.1 GHz: f_d = 16.667 · 2.1e9 / 299792458 = 116.75 Hz.
        let conf = ChannelConf {
            speed_mps: 60.0 / 3.6,
            ..base()
        };
        let ch = Channel::new(&conf, RngStream::for_component(1, "t"));
        assert!((ch.doppler_hz() - 116.75).abs() < 0.01);
        // Independent realisations (seeds): per-seed time averages, then the
        // mean and its standard error across seeds (tolerance 4 SE).
        let (mut means, mut deep, mut acf) = (vec![], vec![], vec![]);
        for seed in 0..40 {
            let g = gains(&conf, seed, 20_000);
            let n = g.len() as f64;
            let m = g.iter().sum::<f64>() / n;
            means.push(m);
            // Rayleigh: |h|² ~ Exp(1), P(|h|² < 0.1) = 1 − e^-0.1 = 0.0952.
            deep.push(g.iter().filter(|&&x| x < 0.1).count() as f64 / n);
            // Lag-1 ms autocorrelation of |h|²: for M random-phase sinusoids
            // (|ρ(τ)|² − 1/M)/(1 − 1/M) with ρ(τ) ≈ J0(2π f_d τ);
            // x = 2π·116.75·0.001 = 0.73356, J0(x) = 1 − x²/4 + x⁴/64 − x⁶/2304
            // = 1 − 0.13453 + 0.00453 − 0.00007 = 0.86993, J0² = 0.75677,
            // (0.75677 − 0.03125)/0.96875 = 0.74893.
            let var = g.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / n;
            let cov = g.windows(2).map(|w| (w[0] - m) * (w[1] - m)).sum::<f64>() / (n - 1.0);
            acf.push(cov / var);
        }
        let (m, se) = mean_and_se(&means);
        assert!(se < 0.05, "{se}");
        assert!((m - 1.0).abs() < 4.0 * se, "mean |h|² {m} ± {se}");
        // Finite M bends the tails and the correlation by O(1/M): allow 0.005
        // and 0.02 beyond 4 SE.
        let (d, se) = mean_and_se(&deep);
        assert!((d - 0.0952).abs() < 4.0 * se + 0.005, "P(<0.1) {d} ± {se}");
        let (a, se) = mean_and_se(&acf);
        assert!((a - 0.74893).abs() < 4.0 * se + 0.02, "acf {a} ± {se}");
    }

    #[test]
    fn static_car_has_constant_channel() {
        // Speed 0: no fading and no shadowing, whatever σ.
        let conf = ChannelConf {
            shadowing_sigma_db: 8.0,
            bler: 0.1,
            ..base()
        };
        assert!(run(&conf, 5, 5000)
            .iter()
            .all(|t| t.rsrp_dbm == -103.0 && t.cqi == 12));
        // Moving without fading: RSRP varies only by the shadowing, which
        // starts at 0.
        let conf = ChannelConf {
            speed_mps: 30.0,
            fading: false,
            ..base()
        };
        assert!(run(&conf, 5, 100).iter().all(|t| t.rsrp_dbm == -103.0));
    }

    #[test]
    fn shadowing_statistics() {
        // σ = 8 dB, d_corr = 5 m, 50 m/s: Δd = 0.05 m, ρ = exp(−0.01) per TTI.
        // Stationary (after a warm-up of 2000 TTIs, ρ^4000 = e^-40): E[s²] =
        // σ² = 64. For a Gaussian AR(1), s² has variance 2σ⁴ and
        // autocorrelation ρ^{2k}, so N samples count as N(1−ρ²)/(1+ρ²) =
        // 0.0100·N independent ones: for N = 10^6, SE = 64·sqrt(2/9_999) = 0.905.
        // At lag 100 TTIs (5 m = d_corr) E[s_k s_{k+100}] = 64·e^-1 = 23.54,
        // with a standard error below 1 as well.
        let conf = ChannelConf {
            speed_mps: 50.0,
            fading: false,
            shadowing_sigma_db: 8.0,
            shadowing_decorrelation_m: 5.0,
            ..base()
        };
        let s: Vec<f64> = run(&conf, 11, 1_002_000)
            .iter()
            .skip(2000)
            .map(|t| -103.0 - t.rsrp_dbm)
            .collect();
        let n = s.len() as f64;
        let m2 = s.iter().map(|x| x * x).sum::<f64>() / n;
        assert!((m2 - 64.0).abs() < 4.0 * 0.905, "{m2}");
        let lag = s.iter().zip(&s[100..]).map(|(a, b)| a * b).sum::<f64>() / (n - 100.0);
        assert!((lag - 64.0 * (-1f64).exp()).abs() < 4.0, "{lag}");
    }

    #[test]
    fn deterministic_per_seed() {
        let conf = ChannelConf {
            speed_mps: 20.0,
            shadowing_sigma_db: 8.0,
            bler: 0.1,
            rsrp_dbm: Some(-110.0),
            ..base()
        };
        let a = run(&conf, 42, 5000);
        assert_eq!(a, run(&conf, 42, 5000));
        assert_ne!(a, run(&conf, 43, 5000));
        assert!(a.iter().any(|t| t.retx) && a.iter().any(|t| t.cqi != a[0].cqi));
    }

    #[test]
    fn check_rejects_bad_fields() {
        assert_eq!(base().check(), Ok(()));
        let field = |c: ChannelConf| c.check().unwrap_err();
        let (f, msg) = field(ChannelConf {
            bandwidth_rb: 7,
            ..base()
        });
        assert_eq!(f, "bandwidth_rb");
        assert!(msg.contains("6, 15, 25, 50, 75, 100"), "{msg}");
        for share in [0.0, 1.5, -0.1, f64::NAN] {
            let (f, msg) = field(ChannelConf { share, ..base() });
            assert_eq!(f, "share");
            assert!(msg.contains("(0, 1]"), "{msg}");
        }
        let (f, msg) = field(ChannelConf {
            distance_m: Some(500.0),
            ..base()
        });
        assert_eq!(f, "rsrp_dbm");
        assert!(
            msg.contains("exactly one") && msg.contains("not both"),
            "{msg}"
        );
        let (f, msg) = field(ChannelConf {
            rsrp_dbm: None,
            ..base()
        });
        assert_eq!(f, "rsrp_dbm");
        assert!(msg.contains("exactly one"), "{msg}");
        let (f, msg) = field(ChannelConf {
            rsrp_dbm: None,
            distance_m: Some(20.0),
            ..base()
        });
        assert_eq!(f, "distance_m");
        assert!(msg.contains("35 to 100000 m"), "{msg}");
        let (f, msg) = field(ChannelConf {
            speed_mps: -1.0,
            ..base()
        });
        assert_eq!(f, "speed_mps");
        assert!(msg.contains("0 to 150 m/s"), "{msg}");
        let (f, msg) = field(ChannelConf {
            bler: 1.0,
            ..base()
        });
        assert_eq!(f, "bler");
        assert!(msg.contains("[0, 1)"), "{msg}");
        for harq_max_tx in [0, 9] {
            let (f, msg) = field(ChannelConf {
                harq_max_tx,
                ..base()
            });
            assert_eq!(f, "harq_max_tx");
            assert!(msg.contains("1 to 8"), "{msg}");
        }
        let (f, msg) = field(ChannelConf {
            max_itbs: 27,
            ..base()
        });
        assert_eq!(f, "max_itbs");
        assert!(msg.contains("0 to 26"), "{msg}");
        let (f, _) = field(ChannelConf {
            interference_dbm: f64::NEG_INFINITY,
            ..base()
        });
        assert_eq!(f, "interference_dbm");
        let (f, _) = field(ChannelConf {
            shadowing_decorrelation_m: 0.0,
            ..base()
        });
        assert_eq!(f, "shadowing_decorrelation_m");
        // NaN in every float field.
        let nan = f64::NAN;
        let cases: Vec<(&str, ChannelConf)> = vec![
            (
                "share",
                ChannelConf {
                    share: nan,
                    ..base()
                },
            ),
            (
                "rsrp_dbm",
                ChannelConf {
                    rsrp_dbm: Some(nan),
                    ..base()
                },
            ),
            (
                "distance_m",
                ChannelConf {
                    rsrp_dbm: None,
                    distance_m: Some(nan),
                    ..base()
                },
            ),
            (
                "speed_mps",
                ChannelConf {
                    speed_mps: nan,
                    ..base()
                },
            ),
            (
                "carrier_hz",
                ChannelConf {
                    carrier_hz: nan,
                    ..base()
                },
            ),
            (
                "enb_power_dbm",
                ChannelConf {
                    enb_power_dbm: nan,
                    ..base()
                },
            ),
            (
                "ue_power_dbm",
                ChannelConf {
                    ue_power_dbm: nan,
                    ..base()
                },
            ),
            (
                "noise_figure_db",
                ChannelConf {
                    noise_figure_db: nan,
                    ..base()
                },
            ),
            (
                "interference_dbm",
                ChannelConf {
                    interference_dbm: nan,
                    ..base()
                },
            ),
            (
                "shadowing_sigma_db",
                ChannelConf {
                    shadowing_sigma_db: nan,
                    ..base()
                },
            ),
            (
                "shadowing_decorrelation_m",
                ChannelConf {
                    shadowing_decorrelation_m: nan,
                    ..base()
                },
            ),
            (
                "bler",
                ChannelConf {
                    bler: nan,
                    ..base()
                },
            ),
        ];
        for (want, conf) in cases {
            let (f, msg) = conf.check().unwrap_err();
            assert_eq!(f, want, "{msg}");
        }
    }

    #[test]
    fn serde_round_trip() {
        let conf = ChannelConf {
            direction: Direction::Uplink,
            ..base()
        };
        let text = serde_json::to_string(&conf).unwrap();
        assert!(text.contains("\"direction\":\"uplink\""), "{text}");
        assert_eq!(serde_json::from_str::<ChannelConf>(&text).unwrap(), conf);
        let bad = text.replace("\"fading\"", "\"fadeing\"");
        assert!(serde_json::from_str::<ChannelConf>(&bad).is_err());
    }

    /// Mean downlink capacity over 60 s for the documentation (seed 1, stream
    /// "cellular/dl"): `cargo test -p vtlab-core --lib capacity_table --
    /// --ignored --nocapture`.
    #[test]
    #[ignore]
    fn capacity_table() {
        for rsrp in [-81.0, -110.0] {
            for share in [1.0, 0.3] {
                for kmh in [0.0, 60.0] {
                    let conf = ChannelConf {
                        rsrp_dbm: Some(rsrp),
                        share,
                        speed_mps: kmh / 3.6,
                        shadowing_sigma_db: 8.0,
                        bler: 0.1,
                        ..base()
                    };
                    let mut ch = Channel::new(&conf, RngStream::for_component(1, "cellular/dl"));
                    let n = 60_000;
                    let (mut ok, mut lost) = (0u64, 0u64);
                    for _ in 0..n {
                        let t = ch.next_tti();
                        if t.lost {
                            lost += u64::from(t.bytes);
                        } else {
                            ok += u64::from(t.bytes);
                        }
                    }
                    println!(
                        "RSRP {rsrp} dBm share {share} {kmh} km/h: {:.2} Mbit/s delivered, \
                         {:.4} Mbit/s lost",
                        ok as f64 * 8.0 / 60.0 / 1e6,
                        lost as f64 * 8.0 / 60.0 / 1e6
                    );
                }
            }
        }
    }
}
