//! A histogram of RTT samples for percentiles: logarithmic bins 1 % wide
//! (bin k holds [1.01^k, 1.01^(k+1)) ns), so a percentile is known within
//! ±0.5 % (the bin's geometric middle is reported) whatever the RTT's scale,
//! in at most 2 800 counters (1 ns to 1 000 s), allocated at the first sample.
//! The smallest and largest samples are kept exactly, and a percentile is
//! clamped into [min, max]: a bin's middle can lie beyond the extreme sample in
//! it (a median of 2.0078 ms above a largest sample of 2.000 ms).

use crate::engine::Duration;

/// Bin width as a ratio.
const RATIO: f64 = 1.01;
/// Bins up to 1000 s.
const BINS: usize = 2_778;

#[derive(Clone, Debug, Default)]
pub struct RttHistogram {
    counts: Vec<u64>,
    total: u64,
    min: Duration,
    max: Duration,
}

fn bin(d: Duration) -> usize {
    let ns = d.0.max(1) as f64;
    ((ns.ln() / RATIO.ln()).floor() as usize).min(BINS - 1)
}

impl RttHistogram {
    pub fn add(&mut self, d: Duration) {
        if self.counts.is_empty() {
            self.counts = vec![0; BINS];
            self.min = d;
            self.max = d;
        }
        self.min = self.min.min(d);
        self.max = self.max.max(d);
        self.counts[bin(d)] += 1;
        self.total += 1;
    }

    /// The q-quantile (0 < q ≤ 1) in seconds: the geometric middle of the bin
    /// holding the ⌈q·n⌉-th smallest sample, clamped into [min, max] of the
    /// samples; NaN without samples.
    pub fn quantile_s(&self, q: f64) -> f64 {
        if self.total == 0 {
            return f64::NAN;
        }
        let rank = ((q * self.total as f64).ceil() as u64).clamp(1, self.total);
        let mut seen = 0;
        // No sample lies below the smallest one's bin (`bin` never decreases), so
        // the count starts there: RTTs of milliseconds sit 1 400 bins up.
        let first = bin(self.min);
        for (k, &c) in self.counts.iter().enumerate().skip(first) {
            seen += c;
            if seen >= rank {
                let middle = RATIO.powf(k as f64 + 0.5) * 1e-9;
                return middle.clamp(self.min.as_secs_f64(), self.max.as_secs_f64());
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

    #[test]
    fn percentiles_stay_within_the_samples() {
        // Ten samples of exactly 2 ms: 2e6 ns lies in bin ⌊ln 2e6 / ln 1.01⌋ =
        // 1458, whose middle 1.01^1458.5 ns ≈ 2.0078 ms exceeds every sample
        // (the p50 2.0078 ms > max 2.000 ms). Every percentile of
        // identical samples is that sample.
        let mut h = RttHistogram::default();
        for _ in 0..10 {
            h.add(Duration(2_000_000));
        }
        for q in [0.01, 0.5, 0.95, 0.99, 1.0] {
            assert_eq!(h.quantile_s(q), Duration(2_000_000).as_secs_f64(), "q {q}");
        }
        // 1.001 ms lies in bin 1388 = [0.995559, 1.005537) ms, whose middle
        // 1.01^1388.5 ns ≈ 1.000524 ms is below it: the median of {1.001 ms,
        // 2 ms} (the 1st smallest) is clamped up to the minimum, the largest
        // percentile down to the 2 ms maximum.
        let mut h = RttHistogram::default();
        h.add(Duration(1_001_000));
        h.add(Duration(2_000_000));
        assert_eq!(h.quantile_s(0.5), Duration(1_001_000).as_secs_f64());
        assert_eq!(h.quantile_s(1.0), Duration(2_000_000).as_secs_f64());
    }

    #[test]
    fn a_percentile_is_the_bin_of_the_sorted_samples_rank() {
        // By the definition above, from the samples themselves: sort them, take
        // the ⌈q·n⌉-th smallest, report its bin's geometric middle clamped into
        // [min, max]. Samples spread over nanoseconds to minutes (a 64-bit LCG,
        // Knuth's MMIX constants, seeded per case), counted from the first bin.
        let mut x = 0x2545_f491_4f6c_dd1d_u64;
        for case in 0..200u64 {
            let n = 1 + case % 37;
            let scale = 10u64.pow(1 + (case % 10) as u32);
            let mut samples = Vec::new();
            let mut h = RttHistogram::default();
            for _ in 0..n {
                x = x
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                let d = Duration(1 + (x >> 11) % scale);
                samples.push(d);
                h.add(d);
            }
            samples.sort();
            let (lo, hi) = (
                samples[0].as_secs_f64(),
                samples[samples.len() - 1].as_secs_f64(),
            );
            for q in [0.01, 0.5, 0.95, 0.99, 1.0] {
                let rank = ((q * n as f64).ceil() as usize).clamp(1, samples.len());
                let k = bin(samples[rank - 1]);
                let want = (RATIO.powf(k as f64 + 0.5) * 1e-9).clamp(lo, hi);
                assert_eq!(h.quantile_s(q), want, "case {case}, q {q}");
            }
        }
    }
}
