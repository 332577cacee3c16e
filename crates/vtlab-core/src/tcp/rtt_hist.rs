//! A histogram of RTT samples for percentiles: logarithmic bins 1 % wide
//! (bin k holds [1.01^k, 1.01^(k+1)) ns), so a percentile is known within
//! ±0.5 % (the bin's geometric middle is reported) whatever the RTT's scale,
//! in at most 2 800 counters (1 ns to 1 000 s), allocated at the first sample.

use crate::engine::Duration;

/// Bin width as a ratio.
const RATIO: f64 = 1.01;
/// Bins up to 1000 s.
const BINS: usize = 2_778;

#[derive(Clone, Debug, Default)]
pub struct RttHistogram {
    counts: Vec<u64>,
    total: u64,
}

fn bin(d: Duration) -> usize {
    let ns = d.0.max(1) as f64;
    ((ns.ln() / RATIO.ln()).floor() as usize).min(BINS - 1)
}

impl RttHistogram {
    pub fn add(&mut self, d: Duration) {
        if self.counts.is_empty() {
            self.counts = vec![0; BINS];
        }
        self.counts[bin(d)] += 1;
        self.total += 1;
    }

    /// The q-quantile (0 < q ≤ 1) in seconds: the geometric middle of the bin
    /// holding the ⌈q·n⌉-th smallest sample; NaN without samples.
    pub fn quantile_s(&self, q: f64) -> f64 {
        if self.total == 0 {
            return f64::NAN;
        }
        let rank = ((q * self.total as f64).ceil() as u64).clamp(1, self.total);
        let mut seen = 0;
        for (k, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return RATIO.powf(k as f64 + 0.5) * 1e-9;
            }
        }
        f64::NAN
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_within_half_a_percent() {
        let mut h = RttHistogram::default();
        assert!(h.quantile_s(0.5).is_nan());
        // 100 samples 1..=100 ms: the 95th is 95 ms, the median 50 ms.
        for ms in 1..=100u64 {
            h.add(Duration(ms * 1_000_000));
        }
        for (q, want) in [(0.5, 0.050), (0.95, 0.095), (1.0, 0.100), (0.01, 0.001)] {
            let got = h.quantile_s(q);
            assert!(
                (got / want - 1.0).abs() < 0.005 + 1e-12,
                "q {q}: {got} vs {want}"
            );
        }
    }
}
