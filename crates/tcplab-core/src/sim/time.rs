//! Simulated time: an integer count of picoseconds.
//!
//! Picoseconds keep serialization times exact at 100 Gbit/s (a 1500-byte packet
//! takes 120,000 ps) and still span 2^64 ps = 213 days of simulated time.

/// A point in simulated time or a duration, in picoseconds.
pub type Time = u64;

pub const PS_PER_SEC: u64 = 1_000_000_000_000;
pub const PS_PER_MS: u64 = 1_000_000_000;

/// Seconds (f64, non-negative) to picoseconds, rounded to the nearest
/// picosecond (half up). `x + 0.5` truncated instead of `f64::round`, which
/// is a library call on baseline x86-64 and sits on the per-packet path.
#[inline]
pub fn from_secs(s: f64) -> Time {
    (s * PS_PER_SEC as f64 + 0.5) as Time
}

/// Picoseconds to seconds.
#[inline]
pub fn to_secs(t: Time) -> f64 {
    t as f64 / PS_PER_SEC as f64
}

/// Time to serialize `bytes` at `rate_bps`, rounded to the nearest picosecond
/// and never zero (so no event can schedule another at the same instant forever).
#[inline]
pub fn serialization_time(bytes: u32, ps_per_byte: f64) -> Time {
    ((bytes as f64 * ps_per_byte + 0.5) as Time).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialization_is_exact_at_common_rates() {
        // 1500 B at 200 Mbit/s = 60 us; at 100 Gbit/s = 120 ns.
        assert_eq!(serialization_time(1500, 8.0 * PS_PER_SEC as f64 / 200e6), 60_000_000);
        assert_eq!(serialization_time(1500, 8.0 * PS_PER_SEC as f64 / 100e9), 120_000);
    }

    #[test]
    fn seconds_round_trip() {
        assert_eq!(from_secs(0.1), 100 * PS_PER_MS);
        assert_eq!(to_secs(from_secs(2000.0)), 2000.0);
    }
}
