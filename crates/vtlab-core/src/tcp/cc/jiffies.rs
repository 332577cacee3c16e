//! Linux time bases for linux-profile controllers (H-TCP, BIC, CUBIC).
//!
//! Linux congestion modules keep several clocks in `jiffies`, a tick counter
//! at `HZ` ticks per second, and RTT samples in microseconds. vtlab fixes
//! `HZ = 1000` (one jiffy = 1 ms, the common server configuration; with
//! `HZ = 250` the rounding is coarser). Conversions follow the kernel's
//! helpers: `jiffies` truncate simulated time, `usecs_to_jiffies` and
//! `msecs_to_jiffies` round up.
//!
//! Linux stores "unset" times as 0; since vtlab's clock starts at 0, callers
//! keep such fields as `Option<u32>` instead.

use crate::engine::{Duration, Time};

/// Ticks per second.
pub const HZ: u32 = 1000;

const NS_PER_JIFFY: u64 = 1_000_000_000 / HZ as u64;
const US_PER_JIFFY: u64 = 1_000_000 / HZ as u64;

/// The jiffies counter at `t` (wraps like the kernel's 32-bit counter).
pub fn jiffies(t: Time) -> u32 {
    (t.0 / NS_PER_JIFFY) as u32
}

/// A duration in whole microseconds (Linux RTT samples, `tcp_clock_us`).
pub fn usecs(d: Duration) -> u64 {
    d.as_nanos() / 1_000
}

/// A point in time in whole microseconds.
pub fn time_usecs(t: Time) -> u64 {
    t.0 / 1_000
}

/// Kernel `usecs_to_jiffies`: rounds up.
pub fn usecs_to_jiffies(us: u64) -> u32 {
    us.div_ceil(US_PER_JIFFY) as u32
}

/// Kernel `msecs_to_jiffies`: rounds up.
pub fn msecs_to_jiffies(ms: u64) -> u32 {
    usecs_to_jiffies(ms * 1_000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions_truncate_time_and_round_durations_up() {
        // 2.9996 s is jiffy 2999; 3 600 µs is 3.6 jiffies, rounded up to 4.
        assert_eq!(jiffies(Time(2_999_600_000)), 2999);
        assert_eq!(usecs_to_jiffies(3_600), 4);
        assert_eq!(usecs_to_jiffies(4_000), 4);
        assert_eq!(msecs_to_jiffies(20), 20);
        assert_eq!(usecs(Duration::from_nanos(1_999)), 1);
        assert_eq!(time_usecs(Time(5_000_999)), 5_000);
    }
}
