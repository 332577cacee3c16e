//! Numbers in messages: a value or bound echoed so a person can read it.
//!
//! Rust prints an `f64` in full decimal (`f64::MAX` has 309 digits,
//! `f64::MIN_POSITIVE` 308 leading zeros). [`Num`] prints the shortest
//! decimal that reads back as the same value while that is short, and the
//! shortest scientific form otherwise: `0.05`, `1500`, `0.000001`, but
//! `1e300`, `2.2250738585072014e-308`.

use std::fmt;

/// Longest plain decimal [`Num`] prints: 20 characters, as many as the
/// largest 64-bit count has digits; anything longer is printed as `1.5e-20`.
const MAX_PLAIN_CHARS: usize = 20;

/// An `f64` as error messages echo it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Num(pub f64);

impl fmt::Display for Num {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let plain = format!("{}", self.0);
        if plain.len() <= MAX_PLAIN_CHARS {
            f.write_str(&plain)
        } else {
            write!(f, "{:e}", self.0)
        }
    }
}

/// A duration in nanoseconds as a message echoes it: in seconds, with the
/// unit (`0.002 s`, `86400 s`).
pub fn secs(ns: u64) -> String {
    format!("{} s", Num(ns as f64 / 1e9))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_values_print_plain_and_long_ones_in_scientific_form() {
        let s = |x: f64| Num(x).to_string();
        // Plain, as `{}` prints them.
        assert_eq!(s(0.05), "0.05");
        assert_eq!(s(1500.0), "1500");
        assert_eq!(s(-90.5), "-90.5");
        assert_eq!(s(1e-6), "0.000001");
        assert_eq!(s(1e-12), "0.000000000001");
        assert_eq!(s(f64::NAN), "NaN");
        assert_eq!(s(f64::INFINITY), "inf");
        // Hundreds of characters as `{}`: scientific, shortest round trip.
        assert_eq!(s(f64::MAX), "1.7976931348623157e308");
        assert_eq!(s(f64::MIN_POSITIVE), "2.2250738585072014e-308");
        assert_eq!(s(1e300), "1e300");
        assert_eq!(s(-1e19), "-1e19");
        // 17 significant digits still fit the plain form (19 characters).
        assert_eq!(s(0.1 + 0.2), "0.30000000000000004");
        assert_eq!(s(1e21), "1e21");
    }

    #[test]
    fn durations_print_in_seconds() {
        assert_eq!(secs(2_000_000), "0.002 s");
        assert_eq!(secs(86_400_000_000_000), "86400 s");
        assert_eq!(secs(0), "0 s");
    }
}
