//! SplitMix64 (Steele, Lea and Flood, OOPSLA 2014), the workspace's one copy: the
//! Start-Gap randomiser's round keys, the synthetic workloads' content ids, the flash log
//! records' filler and salts, and the replay engine's synthetic page contents all draw
//! from it. It lives at the device floor, the lowest crate those users share.

/// The golden-ratio increment of SplitMix64's state.
pub const GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

/// SplitMix64's output function: a fixed bijective mixer of 64 bits.
#[inline]
#[must_use]
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// One SplitMix64 step from state `x`: the output of the state `x + GAMMA`, a well-mixed
/// 64-bit function of `x`. A generator whose state is `x` advances it by [`GAMMA`] and
/// returns `splitmix64(x)`.
#[inline]
#[must_use]
pub fn splitmix64(x: u64) -> u64 {
    mix64(x.wrapping_add(GAMMA))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_reference_sequence() {
        // The first outputs of the reference generator seeded with 0 (Vigna's splitmix64.c).
        let mut state = 0u64;
        let mut next = || {
            let out = splitmix64(state);
            state = state.wrapping_add(GAMMA);
            out
        };
        assert_eq!(next(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(next(), 0x6e78_9e6a_a1b9_65f4);
        assert_eq!(next(), 0x06c4_5d18_8009_454f);
    }
}
