//! Capacity traces in the mahimahi format.
//!
//! A mahimahi trace (the format of the cellular traces of mahimahi, Pantheon
//! and many papers) is a text file with one integer per line: a time in
//! milliseconds at which one delivery opportunity occurs, an opportunity
//! being the chance to send [`MAHIMAHI_OPPORTUNITY_BYTES`] bytes. Lines are in
//! non-decreasing order; a millisecond with k opportunities appears k times.
//! When the trace is exhausted it repeats, shifted by its last timestamp
//! (mahimahi's `LinkQueue` does the same), so the last timestamp is the
//! trace's period and must be positive.

/// Bytes one mahimahi delivery opportunity carries (its `PACKET_SIZE`: a
/// 1500-byte IP packet plus the 4-byte TUN header it is framed with).
pub const MAHIMAHI_OPPORTUNITY_BYTES: u32 = 1504;

/// Largest timestamp accepted in a trace: one day, in ms.
pub const MAX_TRACE_MS: u64 = 86_400_000;

/// Largest number of opportunities a trace may hold (10⁸: about 1.2 days at
/// 1 Gbit/s; 800 MB of memory at most).
pub const MAX_TRACE_LINES: usize = 100_000_000;

/// A parse error: the 1-based line number (0 for the file as a whole) and
/// what is wrong there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceError {
    pub line: usize,
    pub message: String,
}

impl std::fmt::Display for TraceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.line == 0 {
            write!(f, "{}", self.message)
        } else {
            write!(f, "line {}: {}", self.line, self.message)
        }
    }
}

/// Parse a mahimahi trace: the opportunity times in ms, non-decreasing, the
/// last one positive. Blank lines and surrounding whitespace are ignored
/// (mahimahi's own reader skips nothing, but editors add trailing newlines);
/// anything else that is not a non-negative integer is an error naming the line.
pub fn parse_mahimahi(text: &str) -> Result<Vec<u64>, TraceError> {
    let mut times: Vec<u64> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        let err = |message: String| TraceError {
            line: i + 1,
            message,
        };
        if !line.bytes().all(|b| b.is_ascii_digit()) {
            return Err(err(format!(
                "expected a time in milliseconds (a non-negative integer), found '{}'",
                shorten(line)
            )));
        }
        let t: u64 = line
            .parse()
            .ok()
            .filter(|t| *t <= MAX_TRACE_MS)
            .ok_or_else(|| {
                err(format!(
                    "{} ms is outside [0, {MAX_TRACE_MS}] (one day)",
                    shorten(line)
                ))
            })?;
        if let Some(&prev) = times.last() {
            if t < prev {
                return Err(err(format!(
                    "{t} ms is earlier than the line before ({prev} ms): timestamps must not decrease"
                )));
            }
        }
        if times.len() == MAX_TRACE_LINES {
            return Err(err(format!(
                "more than {MAX_TRACE_LINES} opportunities: the trace is too long"
            )));
        }
        times.push(t);
    }
    match times.last() {
        None => Err(TraceError {
            line: 0,
            message: "the trace has no opportunities (no timestamps)".into(),
        }),
        Some(0) => Err(TraceError {
            line: 0,
            message: "the last timestamp (the trace's period) must be positive".into(),
        }),
        Some(_) => Ok(times),
    }
}

fn shorten(s: &str) -> String {
    if s.chars().count() > 40 {
        format!("{}...", s.chars().take(40).collect::<String>())
    } else {
        s.to_string()
    }
}

/// The long-run capacity of a trace, bit/s: opportunities × bytes × 8 per period.
pub fn mean_rate_bps(times_ms: &[u64], opportunity_bytes: u32) -> f64 {
    match times_ms.last() {
        Some(&period) if period > 0 => {
            times_ms.len() as f64 * f64::from(opportunity_bytes) * 8.0 / (period as f64 / 1e3)
        }
        _ => 0.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_repeated_and_increasing_times() {
        assert_eq!(parse_mahimahi("1\n1\n3\n\n7\n").unwrap(), vec![1, 1, 3, 7]);
        assert_eq!(parse_mahimahi("  5 \r\n10\r\n").unwrap(), vec![5, 10]);
    }

    #[test]
    fn errors_name_the_line() {
        let e = parse_mahimahi("1\n2\nx3\n").unwrap_err();
        assert_eq!(e.line, 3);
        assert!(e
            .to_string()
            .starts_with("line 3: expected a time in milliseconds"));
        let e = parse_mahimahi("4\n2\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 2: 2 ms is earlier than the line before (4 ms): timestamps must not decrease"
        );
        let e = parse_mahimahi("-1\n").unwrap_err();
        assert_eq!(e.line, 1);
        let e = parse_mahimahi("1.5\n").unwrap_err();
        assert_eq!(e.line, 1);
        let e = parse_mahimahi("99999999999999999999999\n").unwrap_err();
        assert!(e.to_string().contains("outside [0, 86400000]"), "{e}");
        assert_eq!(parse_mahimahi("\n\n").unwrap_err().line, 0);
        assert!(parse_mahimahi("0\n0\n")
            .unwrap_err()
            .to_string()
            .contains("period"));
    }

    #[test]
    fn mean_rate_counts_opportunities_per_period() {
        // 12 opportunities in a 10 ms period: 12 × 1504 B × 8 / 0.01 s = 14.4384 Mbit/s.
        let t: Vec<u64> = vec![1, 1, 2, 3, 4, 5, 5, 6, 7, 8, 9, 10];
        assert!((mean_rate_bps(&t, 1504) - 14_438_400.0).abs() < 1e-6);
    }
}
