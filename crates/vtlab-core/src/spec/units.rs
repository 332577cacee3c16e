//! Quantities with units, as users write them in scenario files and on the
//! command line: `"100MB"`, `"128KiB"`, `"10Mbps"`, `"0.9ms"`, `"5%"`.
//!
//! Each type also accepts a bare number in its base unit (bytes, bit/s,
//! seconds, fraction). Parsing rejects negative, non-finite and malformed
//! values with a message that says what is expected; the caller prefixes the
//! field path.

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;

fn split_number(s: &str) -> Option<(f64, &str)> {
    let s = s.trim();
    let end = s
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e' | 'E')))
        .map(|(i, _)| i)
        .unwrap_or(s.len());
    // An 'e' that starts a unit (none of ours do) would be eaten above; fine.
    let (num, unit) = s.split_at(end);
    let value: f64 = num.trim().parse().ok()?;
    Some((value, unit.trim()))
}

fn check_finite_non_negative(v: f64, what: &str, raw: &str) -> Result<f64, String> {
    if !v.is_finite() {
        return Err(format!("{what} '{raw}' is not a finite number"));
    }
    if v < 0.0 {
        return Err(format!("{what} '{raw}' is negative; it must be ≥ 0"));
    }
    Ok(v)
}

/// Parse a byte count: `1460`, `"100MB"` (10^6), `"128KiB"` (2^10).
pub fn parse_bytes(s: &str) -> Result<u64, String> {
    const HELP: &str = "expected a byte count such as 1460, \"100MB\", \"128KiB\" \
                        (units B, kB, MB, GB = powers of 1000; KiB, MiB, GiB = powers of 1024)";
    let (v, unit) = split_number(s).ok_or_else(|| format!("invalid size '{s}': {HELP}"))?;
    let v = check_finite_non_negative(v, "size", s)?;
    let mult = match unit.to_ascii_lowercase().as_str() {
        "" | "b" | "bytes" => 1.0,
        "kb" | "kbytes" => 1e3,
        "mb" | "mbytes" => 1e6,
        "gb" | "gbytes" => 1e9,
        "kib" => 1024.0,
        "mib" => 1024.0 * 1024.0,
        "gib" => 1024.0 * 1024.0 * 1024.0,
        _ => return Err(format!("invalid size '{s}': unknown unit '{unit}'; {HELP}")),
    };
    let bytes = v * mult;
    if bytes > 1e18 {
        return Err(format!("size '{s}' is too large (at most 10^18 bytes)"));
    }
    if (bytes - bytes.round()).abs() > 1e-6 {
        return Err(format!("size '{s}' is not a whole number of bytes"));
    }
    Ok(bytes.round() as u64)
}

/// Parse a bit rate: `"10Mbps"`, `"10 Mbit/s"`, `500e6` (bit/s).
pub fn parse_rate(s: &str) -> Result<u64, String> {
    const HELP: &str = "expected a rate such as \"10Mbps\", \"500 Mbit/s\", \"1Gbps\" \
                        (units bps, kbps, Mbps, Gbps) or a number in bit/s";
    let (v, unit) = split_number(s).ok_or_else(|| format!("invalid rate '{s}': {HELP}"))?;
    let v = check_finite_non_negative(v, "rate", s)?;
    let lower = unit.to_ascii_lowercase();
    let prefix = lower
        .strip_suffix("bps")
        .or_else(|| lower.strip_suffix("bit/s"))
        .or_else(|| lower.strip_suffix("b/s"))
        .unwrap_or(if lower.is_empty() { "" } else { "?" });
    let mult = match prefix.trim() {
        "" => 1.0,
        "k" => 1e3,
        "m" => 1e6,
        "g" => 1e9,
        _ => return Err(format!("invalid rate '{s}': unknown unit '{unit}'; {HELP}")),
    };
    let bps = (v * mult).round();
    if bps < 1.0 {
        return Err(format!("rate '{s}' must be positive (at least 1 bit/s)"));
    }
    if bps > 1e15 {
        return Err(format!("rate '{s}' is too large (at most 10^15 bit/s)"));
    }
    Ok(bps as u64)
}

/// Parse a duration to nanoseconds: `"0.9ms"`, `"200us"`, `"1s"`, `"1h"`, `"2d"`, `1.5`
/// (seconds).
pub fn parse_duration(s: &str) -> Result<u64, String> {
    const HELP: &str = "expected a duration such as \"0.9ms\", \"200us\", \"1s\", \"2min\" \
                        (units ns, us, ms, s, min, h, d) or a number of seconds";
    let (v, unit) = split_number(s).ok_or_else(|| format!("invalid duration '{s}': {HELP}"))?;
    let v = check_finite_non_negative(v, "duration", s)?;
    let mult = match unit {
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "" | "s" => 1e9,
        "min" => 60e9,
        "h" => 3600e9,
        "d" => 86_400e9,
        _ => {
            return Err(format!(
                "invalid duration '{s}': unknown unit '{unit}'; {HELP}"
            ))
        }
    };
    let ns = (v * mult).round();
    if ns > 1e18 {
        return Err(format!(
            "duration '{s}' is too long (at most about 31 years)"
        ));
    }
    Ok(ns as u64)
}

/// Parse a fraction: `"5%"` or `0.05`. Range checks are the caller's.
pub fn parse_fraction(s: &str) -> Result<f64, String> {
    const HELP: &str = "expected a fraction such as 0.05 or a percentage such as \"5%\"";
    let (v, unit) = split_number(s).ok_or_else(|| format!("invalid fraction '{s}': {HELP}"))?;
    if !v.is_finite() {
        return Err(format!("fraction '{s}' is not a finite number"));
    }
    match unit {
        "" => Ok(v),
        "%" => Ok(v / 100.0),
        _ => Err(format!(
            "invalid fraction '{s}': unknown unit '{unit}'; {HELP}"
        )),
    }
}

/// A parsed quantity in its base unit: bytes, bit/s and nanoseconds are
/// whole numbers, a fraction is a float.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Quantity {
    Whole(u64),
    Real(f64),
}

/// The quantity kinds [`parse_quantity`] knows.
pub const QUANTITY_KINDS: &[&str] = &["bytes", "rate", "duration", "fraction"];

/// Parse `text` as a quantity of `kind` ("bytes", "rate", "duration",
/// "fraction"), with the message a scenario field of that kind gives for a
/// bad value.
pub fn parse_quantity(kind: &str, text: &str) -> Result<Quantity, String> {
    match kind {
        "bytes" => parse_bytes(text).map(Quantity::Whole),
        "rate" => parse_rate(text).map(Quantity::Whole),
        "duration" => parse_duration(text).map(Quantity::Whole),
        "fraction" => parse_fraction(text).map(Quantity::Real),
        _ => Err(format!(
            "unknown quantity kind '{kind}' (allowed: {})",
            QUANTITY_KINDS.join(", ")
        )),
    }
}

/// A visitor that accepts strings and numbers and hands a string to `parse`.
struct QuantityVisitor<T> {
    parse: fn(&str) -> Result<T, String>,
    what: &'static str,
}

impl<'de, T> Visitor<'de> for QuantityVisitor<T> {
    type Value = T;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}", self.what)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
        (self.parse)(v).map_err(E::custom)
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<T, E> {
        (self.parse)(&v.to_string()).map_err(E::custom)
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<T, E> {
        (self.parse)(&v.to_string()).map_err(E::custom)
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<T, E> {
        (self.parse)(&format!("{v:e}")).map_err(E::custom)
    }
}

macro_rules! quantity {
    ($(#[$doc:meta])* $name:ident, $inner:ty, $parse:path, $what:expr) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
        pub struct $name(pub $inner);

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                d.deserialize_any(QuantityVisitor { parse: $parse, what: $what }).map($name)
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                self.0.serialize(s)
            }
        }
    };
}

quantity!(
    /// A byte count.
    Bytes, u64, parse_bytes, "a byte count such as 1460 or \"100MB\""
);
quantity!(
    /// A bit rate in bit/s, always positive.
    Rate, u64, parse_rate, "a rate such as \"10Mbps\""
);
quantity!(
    /// A duration in nanoseconds.
    Dur, u64, parse_duration, "a duration such as \"0.9ms\""
);
quantity!(
    /// A fraction (probability or rate), unchecked range.
    Fraction, f64, parse_fraction, "a fraction such as 0.05 or \"5%\""
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes() {
        assert_eq!(parse_bytes("1460"), Ok(1460));
        assert_eq!(parse_bytes("100MB"), Ok(100_000_000));
        assert_eq!(parse_bytes("100 MB"), Ok(100_000_000));
        assert_eq!(parse_bytes("128KiB"), Ok(131_072));
        assert_eq!(parse_bytes("1.5kB"), Ok(1500));
        assert!(parse_bytes("abc")
            .unwrap_err()
            .contains("invalid size 'abc'"));
        assert!(parse_bytes("-5MB").unwrap_err().contains("negative"));
        assert!(parse_bytes("5XB")
            .unwrap_err()
            .contains("unknown unit 'XB'"));
        assert!(parse_bytes("0.5").unwrap_err().contains("whole number"));
    }

    #[test]
    fn rates() {
        assert_eq!(parse_rate("10Mbps"), Ok(10_000_000));
        assert_eq!(parse_rate("500 Mbit/s"), Ok(500_000_000));
        assert_eq!(parse_rate("1Gbps"), Ok(1_000_000_000));
        assert_eq!(parse_rate("2.5e6"), Ok(2_500_000));
        assert_eq!(parse_rate("64kbps"), Ok(64_000));
        assert!(parse_rate("0Mbps")
            .unwrap_err()
            .contains("must be positive"));
        assert!(parse_rate("-1Mbps").unwrap_err().contains("negative"));
        assert!(parse_rate("10MBps").is_ok()); // case-insensitive prefix: bits
        assert!(parse_rate("10 furlongs")
            .unwrap_err()
            .contains("unknown unit"));
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("0.9ms"), Ok(900_000));
        assert_eq!(parse_duration("200us"), Ok(200_000));
        assert_eq!(parse_duration("1s"), Ok(1_000_000_000));
        assert_eq!(parse_duration("1.5"), Ok(1_500_000_000));
        assert_eq!(parse_duration("2min"), Ok(120_000_000_000));
        assert!(parse_duration("-1s").is_err());
        // 1 h = 3600 s, 1 d = 24 h = 86400 s
        assert_eq!(parse_duration("1h"), Ok(3_600_000_000_000));
        assert_eq!(parse_duration("1.5h"), Ok(5_400_000_000_000));
        assert_eq!(parse_duration("2d"), Ok(172_800_000_000_000));
        assert!(parse_duration("1w")
            .unwrap_err()
            .contains("unknown unit 'w'"));
    }

    #[test]
    fn fractions() {
        assert_eq!(parse_fraction("5%"), Ok(0.05));
        assert_eq!(parse_fraction("0.25%"), Ok(0.0025));
        assert_eq!(parse_fraction("0.05"), Ok(0.05));
        assert!(parse_fraction("5 percent").is_err());
    }

    #[test]
    fn quantities_by_kind() {
        assert_eq!(parse_quantity("fraction", "5%"), Ok(Quantity::Real(0.05)));
        assert_eq!(
            parse_quantity("fraction", "0.25 %"),
            Ok(Quantity::Real(0.0025))
        );
        assert_eq!(
            parse_quantity("rate", "10Mbps"),
            Ok(Quantity::Whole(10_000_000))
        );
        assert_eq!(
            parse_quantity("bytes", "128KiB"),
            Ok(Quantity::Whole(131_072))
        );
        assert_eq!(
            parse_quantity("duration", "0.9ms"),
            Ok(Quantity::Whole(900_000))
        );
        assert_eq!(
            parse_quantity("bytes", "abc"),
            Err(parse_bytes("abc").unwrap_err())
        );
        assert_eq!(
            parse_quantity("speed", "1"),
            Err("unknown quantity kind 'speed' (allowed: bytes, rate, duration, fraction)".into())
        );
    }

    #[test]
    fn deserialize_from_numbers_and_strings() {
        let r: Rate = serde_json::from_str("\"10Mbps\"").unwrap();
        assert_eq!(r.0, 10_000_000);
        let r: Rate = serde_json::from_str("10000000").unwrap();
        assert_eq!(r.0, 10_000_000);
        let d: Dur = serde_json::from_str("0.0009").unwrap();
        assert_eq!(d.0, 900_000);
        let f: Fraction = serde_json::from_str("\"5%\"").unwrap();
        assert_eq!(f.0, 0.05);
        assert!(serde_json::from_str::<Bytes>("true").is_err());
    }
}
