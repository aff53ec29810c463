//! Page-update workloads for the cleaning experiments: uniform and bimodal locality.

use rand::Rng;

use crate::engine::Envy;
use crate::error::EnvyError;

/// A bimodal access distribution: `hot_access` of the accesses go to `hot_data` of the
/// pages (the x-axis of the paper's cleaning figures, e.g. 90/10). 50/50 is uniform.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bimodal {
    /// Share of the accesses that go to the hot pages.
    pub hot_access: f64,
    /// Share of the pages that are hot.
    pub hot_data: f64,
}

impl Bimodal {
    /// Uniform access.
    pub const UNIFORM: Bimodal = Bimodal { hot_access: 0.5, hot_data: 0.5 };

    /// A logical page among `pages`. The hot set is scattered over the address space by
    /// a multiplicative permutation, so no policy starts with hot pages gathered.
    pub fn page(&self, pages: u64, rng: &mut impl Rng) -> u64 {
        self.sampler(pages).page(rng)
    }

    /// [`Bimodal::page`] over `pages` with the hot set's size and the permutation
    /// computed once: the same pages from the same random draws.
    fn sampler(&self, pages: u64) -> Sampler {
        let hot_pages = ((pages as f64 * self.hot_data) as u64).clamp(1, pages);
        Sampler { hot_access: self.hot_access, hot_pages, pages, multiplier: scatter_multiplier(pages) }
    }

    /// The hot logical pages among `pages` (those [`Bimodal::page`] draws with
    /// probability `hot_access`).
    pub fn hot_pages(&self, pages: u64) -> Vec<u64> {
        let hot_pages = ((pages as f64 * self.hot_data) as u64).clamp(1, pages);
        (0..hot_pages).map(|rank| scatter(rank, pages)).collect()
    }

    /// `90/10`-style label.
    pub fn label(&self) -> String {
        format!("{:.0}/{:.0}", self.hot_access * 100.0, self.hot_data * 100.0)
    }
}

/// [`Bimodal`] over a fixed number of pages.
struct Sampler {
    hot_access: f64,
    hot_pages: u64,
    pages: u64,
    multiplier: u64,
}

impl Sampler {
    fn page(&self, rng: &mut impl Rng) -> u64 {
        let rank = if self.hot_pages == self.pages || rng.gen_bool(self.hot_access) {
            rng.gen_range(0..self.hot_pages)
        } else {
            rng.gen_range(self.hot_pages..self.pages)
        };
        scatter_by(rank, self.pages, self.multiplier)
    }
}

/// A bijection of `0..n` that spreads consecutive ranks over the range.
fn scatter(rank: u64, n: u64) -> u64 {
    scatter_by(rank, n, scatter_multiplier(n))
}

/// [`scatter`]'s multiplier for `n`: odd and coprime with `n`.
fn scatter_multiplier(n: u64) -> u64 {
    let mut m = (0x9E37_79B9_7F4A_7C15 % n) | 1;
    while gcd(m, n) != 1 {
        m += 2;
    }
    m
}

fn scatter_by(rank: u64, n: u64, m: u64) -> u64 {
    ((u128::from(rank) * u128::from(m)) % u128::from(n)) as u64
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// Writes every logical page once (8 bytes at its start), so the flash holds the whole
/// logical space at the configured utilisation. Writes run back to back in simulated
/// time. Here and in [`update`], a stop asked for ([`nvmdb_cancel`]) ends the run before
/// its next write with [`EnvyError::Interrupted`].
pub fn fill(envy: &mut Envy) -> Result<(), EnvyError> {
    let page = u64::from(envy.config().page_bytes);
    for lpn in 0..envy.config().logical_pages {
        nvmdb_cancel::check()?;
        write(envy, lpn * page, &lpn.to_le_bytes()[..page.min(8) as usize])?;
    }
    Ok(())
}

/// `updates` writes of 8 bytes (or a page, if smaller) to pages drawn from `dist`, back
/// to back in simulated time.
pub fn update(envy: &mut Envy, dist: Bimodal, updates: u64, rng: &mut impl Rng) -> Result<(), EnvyError> {
    let page = u64::from(envy.config().page_bytes);
    let pages = envy.config().logical_pages;
    let len = page.min(8) as usize;
    let sampler = dist.sampler(pages);
    for i in 0..updates {
        nvmdb_cancel::check()?;
        let lpn = sampler.page(rng);
        let offset = rng.gen_range(0..=page - len as u64);
        write(envy, lpn * page + offset, &i.to_le_bytes()[..len])?;
    }
    Ok(())
}

/// One write; the host time then moves on by its latency.
fn write(envy: &mut Envy, addr: u64, data: &[u8]) -> Result<(), EnvyError> {
    let ns = envy.write(addr, data)?;
    envy.advance_to(envy.now_ns() + ns);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;

    #[test]
    fn scatter_is_a_permutation() {
        for n in [1u64, 2, 10, 97, 1000] {
            let mut seen: Vec<u64> = (0..n).map(|r| scatter(r, n)).collect();
            seen.sort_unstable();
            assert_eq!(seen, (0..n).collect::<Vec<_>>());
        }
    }

    #[test]
    fn bimodal_sends_its_share_to_the_hot_pages() {
        let dist = Bimodal { hot_access: 0.9, hot_data: 0.1 };
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        let pages = 1000;
        let hot: std::collections::BTreeSet<u64> = (0..100).map(|r| scatter(r, pages)).collect();
        let n = 100_000;
        let hits = (0..n).filter(|_| hot.contains(&dist.page(pages, &mut rng))).count();
        let share = hits as f64 / n as f64;
        assert!((share - 0.9).abs() < 0.01, "hot share {share}");
    }
}
