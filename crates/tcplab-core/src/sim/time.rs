//! Simulated time: an integer count of picoseconds.
//!
//! Picoseconds keep serialization times exact at 100 Gbit/s (a 1500-byte packet
//! takes 120,000 ps) and still span 2^64 ps = 213 days of simulated time (a
//! run is limited to 2^61 ps, about 26 days: see [`MAX_TIME`]).

/// A point in simulated time or a duration, in picoseconds.
pub type Time = u64;

/// Latest simulated time a run may reach (ps): 2^61 - 1, about 26.7 days.
/// A sender keeps each segment's send time and three flags in one word
/// (`tcp::sender`'s segment record), which leaves 61 bits for the time; the
/// spec's validation refuses longer runs ([`crate::spec::limits`]).
pub const MAX_TIME: Time = (1 << 61) - 1;

pub const PS_PER_SEC: u64 = 1_000_000_000_000;
pub const PS_PER_MS: u64 = 1_000_000_000;

/// Seconds (f64, non-negative) to picoseconds, rounded to the nearest
/// picosecond (half up). `x + 0.5` truncated instead of `f64::round`, which
/// is a library call on baseline x86-64 and sits on the per-packet path.
#[inline]
pub fn from_secs(s: f64) -> Time {
    (s * PS_PER_SEC as f64 + 0.5) as Time
}

/// `x.floor().max(0.0) as u64`, without the `floor` library call (baseline
/// x86-64 has no rounding instruction): the saturating cast truncates, which
/// is the floor for x >= 0 and 0 for x < 0 or NaN, exactly as the original.
#[inline(always)]
pub fn floor_u64(x: f64) -> u64 {
    x as u64
}

/// `x.round() as u64` (half away from zero, saturating), without the `round`
/// library call. Exact: for 0 <= x < 2^53, `x - trunc(x)` is computed
/// without error (Sterbenz), and above that x is an integer.
#[inline(always)]
pub fn round_u64(x: f64) -> u64 {
    let t = x as u64;
    t.saturating_add((x - t as f64 >= 0.5) as u64)
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
    fn rounding_helpers_match_the_library() {
        let xs = [
            0.0,
            -0.0,
            0.49999999999999994,
            0.5,
            1.5,
            2.5,
            2.4999999999999996,
            1e6 + 0.5,
            4503599627370495.5,
            4503599627370497.0,
            9007199254740993.0,
            1.8e19,
            1e300,
            -0.4,
            -0.5,
            -0.6,
            -3.7,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            123456.789,
            0.1 * 3.0,
            1e-300,
        ];
        for x in xs {
            assert_eq!(floor_u64(x), x.floor().max(0.0) as u64, "floor {x}");
            assert_eq!(round_u64(x), x.round() as u64, "round {x}");
        }
        let mut v: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..1_000_000 {
            v ^= v << 13;
            v ^= v >> 7;
            v ^= v << 17;
            let x = (v >> 11) as f64 / (1u64 << 53) as f64 * 10f64.powi((v % 24) as i32 - 4);
            assert_eq!(floor_u64(x), x.floor().max(0.0) as u64, "floor {x}");
            assert_eq!(round_u64(x), x.round() as u64, "round {x}");
        }
    }

    #[test]
    fn seconds_round_trip() {
        assert_eq!(from_secs(0.1), 100 * PS_PER_MS);
        assert_eq!(to_secs(from_secs(2000.0)), 2000.0);
    }
}
