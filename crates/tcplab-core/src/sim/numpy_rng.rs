//! NumPy's default generator, `numpy.random.default_rng(seed)` (PCG64 seeded through a
//! SeedSequence), as far as `Generator.uniform` needs it, bit for bit.
//!
//! It exists for one draw: the "uniform" access delays of a dumbbell, defined as
//! `numpy.random.default_rng(seed).uniform(0, max, size=(2, N))` (row 0 the senders' links, row 1 the
//! receivers'). The Python builder (python/tcplab/scenario/dumbbell.py, used by the mv-buffers
//! reproduction) calls NumPy; the Rust benchmark dumbbell (`scenarios::Dumbbell`) calls
//! [`uniform_access_delays`], so the same seed gives the same network in both. The tests pin both to
//! the same values NumPy 2.x printed.
//!
//! Sources: numpy/random/bit_generator.pyx (`SeedSequence`: `mix_entropy`, `generate_state`),
//! numpy/random/src/pcg64/pcg64.h (PCG64: 128-bit LCG, XSL-RR output, `pcg64_set_seed`),
//! numpy/random/src/distributions/distributions.c (`next_double`: the top 53 bits, `random_uniform`:
//! `low + range * next_double`).

const INIT_A: u32 = 0x43b0_d7e5;
const MULT_A: u32 = 0x931e_8875;
const INIT_B: u32 = 0x8b51_f9dd;
const MULT_B: u32 = 0x58f3_8ded;
const MIX_MULT_L: u32 = 0xca01_f9dd;
const MIX_MULT_R: u32 = 0x4973_f715;
const XSHIFT: u32 = 16;
const POOL_SIZE: usize = 4;
/// PCG's default 128-bit multiplier (`PCG_DEFAULT_MULTIPLIER_128`).
const PCG_MULTIPLIER: u128 = 0x2360_ed05_1fc6_5da4_4385_df64_9fcc_f645;

fn hashmix(value: u32, hash_const: &mut u32) -> u32 {
    let mut v = value ^ *hash_const;
    *hash_const = hash_const.wrapping_mul(MULT_A);
    v = v.wrapping_mul(*hash_const);
    v ^ (v >> XSHIFT)
}

fn mix(x: u32, y: u32) -> u32 {
    let r = MIX_MULT_L.wrapping_mul(x).wrapping_sub(MIX_MULT_R.wrapping_mul(y));
    r ^ (r >> XSHIFT)
}

/// `SeedSequence(seed).generate_state(4, np.uint64)`: the entropy is the seed's 32-bit words, least
/// significant first (one word 0 for seed 0).
fn seed_sequence_state(seed: u64) -> [u64; 4] {
    let entropy: Vec<u32> = if seed >> 32 == 0 { vec![seed as u32] } else { vec![seed as u32, (seed >> 32) as u32] };
    let mut pool = [0u32; POOL_SIZE];
    let mut hash_const = INIT_A;
    for (i, p) in pool.iter_mut().enumerate() {
        *p = hashmix(entropy.get(i).copied().unwrap_or(0), &mut hash_const);
    }
    for i_src in 0..POOL_SIZE {
        for i_dst in 0..POOL_SIZE {
            if i_src != i_dst {
                let h = hashmix(pool[i_src], &mut hash_const);
                pool[i_dst] = mix(pool[i_dst], h);
            }
        }
    }
    // (entropy beyond the pool size: a seed has at most two words)
    let mut words = [0u32; 8];
    let mut hash_const = INIT_B;
    for (i, w) in words.iter_mut().enumerate() {
        let mut v = pool[i % POOL_SIZE] ^ hash_const;
        hash_const = hash_const.wrapping_mul(MULT_B);
        v = v.wrapping_mul(hash_const);
        *w = v ^ (v >> XSHIFT);
    }
    std::array::from_fn(|k| words[2 * k] as u64 | (words[2 * k + 1] as u64) << 32)
}

/// PCG64 (XSL-RR 128/64), seeded as NumPy's `PCG64(seed)`.
struct Pcg64 {
    state: u128,
    inc: u128,
}

impl Pcg64 {
    fn new(seed: u64) -> Self {
        let v = seed_sequence_state(seed);
        let (initstate, initseq) = ((v[0] as u128) << 64 | v[1] as u128, (v[2] as u128) << 64 | v[3] as u128);
        let mut g = Pcg64 { state: 0, inc: initseq << 1 | 1 };
        g.step();
        g.state = g.state.wrapping_add(initstate);
        g.step();
        g
    }

    fn step(&mut self) {
        self.state = self.state.wrapping_mul(PCG_MULTIPLIER).wrapping_add(self.inc);
    }

    fn next_u64(&mut self) -> u64 {
        self.step();
        ((self.state >> 64) as u64 ^ self.state as u64).rotate_right((self.state >> 122) as u32)
    }

    /// Uniform in [0, 1): the top 53 bits.
    fn next_double(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / 9_007_199_254_740_992.0)
    }
}

/// `numpy.random.default_rng(seed).uniform(0, max, size=(2, n))` as per-flow pairs: flow i's
/// (sender access delay, receiver access delay) = (row 0 column i, row 1 column i).
pub fn uniform_access_delays(seed: u64, n: usize, max: f64) -> Vec<[f64; 2]> {
    let mut g = Pcg64::new(seed);
    let draws: Vec<f64> = (0..2 * n).map(|_| 0.0 + max * g.next_double()).collect();
    (0..n).map(|i| [draws[i], draws[n + i]]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `[x.hex() ...]` of `numpy.random.default_rng(seed).uniform(0.0, 0.01, size=(2, 3)).ravel()`, as
    /// f64 bits (NumPy 2.4); tests/test_scenario.py pins NumPy to the same values.
    const NUMPY: [(u64, [u64; 6]); 5] = [
        (
            0,
            [
                0x3f7a170702893dd7,
                0x3f6619d66400e98a,
                0x3f3ada3773fcf067,
                0x3f25a9c114dd7fae,
                0x3f80a7e0d669fd4e,
                0x3f82b177cc4abd73,
            ],
        ),
        (
            1,
            [
                0x3f74f6d6b650d261,
                0x3f83772ac7572555,
                0x3f579e7e0e1a30b3,
                0x3f836da7bc10da98,
                0x3f698b945c3d6076,
                0x3f7156e6489e79ac,
            ],
        ),
        (
            42,
            [
                0x3f7fb38472bbf9c8,
                0x3f71f9f9574e02e0,
                0x3f8195869eea25ed,
                0x3f7c906f0c7e667c,
                0x3f4edc2b2560bccd,
                0x3f83fb12277b6c1b,
            ],
        ),
        (
            4294967301,
            [
                0x3f7fb61e859f04ea,
                0x3f7347e294c3b75c,
                0x3f7c80d593573003,
                0x3f80b90246c9b1f3,
                0x3f7608ad72d9b86a,
                0x3f75303e7987ff21,
            ],
        ),
        (
            u64::MAX,
            [
                0x3f7bda98b7729ac5,
                0x3f814fde3ca2d14a,
                0x3f13681fbbfd8d71,
                0x3f82521d03c49c55,
                0x3f552131a958d700,
                0x3f6a1e8737c6ee64,
            ],
        ),
    ];

    #[test]
    fn raw_output_matches_numpy_pcg64() {
        // default_rng(0).bit_generator.random_raw(2)
        let mut g = Pcg64::new(0);
        assert_eq!([g.next_u64(), g.next_u64()], [0xa30febcfd9c2825f, 0x4510bdf882d9d721]);
    }

    #[test]
    fn uniform_access_delays_match_numpy_bit_for_bit() {
        for (seed, bits) in NUMPY {
            let d = uniform_access_delays(seed, 3, 0.01);
            let got: Vec<u64> = (0..2).flat_map(|row| d.iter().map(move |p| p[row].to_bits())).collect();
            assert_eq!(got, bits, "seed {seed}");
        }
    }
}
