//! Seeded random streams, one per component.
//!
//! Each component (a flow, a link's loss model, a workload generator) draws
//! from its own stream derived from (master seed, component kind, component
//! index) by SplitMix64 mixing, so adding a flow never changes the draws of
//! another.

use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

pub type Stream = Xoshiro256PlusPlus;

/// Kinds of component that own a random stream.
#[derive(Debug, Clone, Copy)]
#[repr(u64)]
pub enum StreamKind {
    Flow = 1,
    Link = 2,
    Workload = 3,
    /// A link's queue discipline (RED's and PIE's coin, FQ-CoDel's hash salt).
    Qdisc = 4,
    /// An unresponsive source's on/off periods.
    Source = 5,
}

fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The random stream of component `index` of `kind` under `seed`.
pub fn stream(seed: u64, kind: StreamKind, index: u64) -> Stream {
    let s = splitmix64(splitmix64(splitmix64(seed) ^ kind as u64) ^ index);
    Xoshiro256PlusPlus::seed_from_u64(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::RngCore;

    #[test]
    fn streams_are_reproducible_and_independent() {
        let a1: Vec<u64> = (0..4)
            .map({
                let mut r = stream(7, StreamKind::Flow, 0);
                move |_| r.next_u64()
            })
            .collect();
        let a2: Vec<u64> = (0..4)
            .map({
                let mut r = stream(7, StreamKind::Flow, 0);
                move |_| r.next_u64()
            })
            .collect();
        let b: Vec<u64> = (0..4)
            .map({
                let mut r = stream(7, StreamKind::Flow, 1);
                move |_| r.next_u64()
            })
            .collect();
        let c: Vec<u64> = (0..4)
            .map({
                let mut r = stream(8, StreamKind::Flow, 0);
                move |_| r.next_u64()
            })
            .collect();
        assert_eq!(a1, a2);
        assert_ne!(a1, b);
        assert_ne!(a1, c);
    }
}
