//! Closed forms the experiments and tests compare with.

/// Cleaning cost of cleaning segments whose utilisation is `u`: each clean copies `u·P`
/// live pages to free `(1 − u)·P` for flushes, so `u / (1 − u)` programs per flush.
pub fn cleaning_cost(u: f64) -> f64 {
    u / (1.0 - u)
}

/// Utilisation of the segments FIFO cleans under uniform random updates, when a share
/// `alpha` of the cleanable flash is live: the root in (0, 1) of `u = exp(−(1 − u)/α)`.
/// A page survives a full cycle of the array with probability `u`; the cycle writes the
/// array's `P·n` pages, of which `(1 − u)` are flushes, each invalidating a page with
/// probability `1/(α·P·n)`. Bisection to 1e-12.
pub fn fifo_cleaned_utilization(alpha: f64) -> f64 {
    assert!(alpha > 0.0 && alpha < 1.0, "utilisation {alpha} outside (0, 1)");
    let f = |u: f64| u - (-(1.0 - u) / alpha).exp();
    // f(lo) < 0 < f(hi): at u → 0, f → −exp(−1/α); just below 1, f > 0 when α < 1.
    let (mut lo, mut hi) = (0.0, 1.0 - 1e-12);
    while hi - lo > 1e-12 {
        let mid = 0.5 * (lo + hi);
        if f(mid) < 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// Utilisation of the segments FIFO cleans within closed partitions of `k` segments
/// under uniform random updates, when a share `alpha` of each partition is live (the
/// hybrid policy without redistribution, whose flushes return to their partition). A
/// segment is cleaned again `k` cleans after its last clean, `k·(1 − u)·P` flushes into
/// its partition later: a page copied into it survives them with probability
/// `exp(−(1 − u)/α)`, but a page flushed into it `j` flushes after that clean has only
/// `k·(1 − u)·P − j` flushes to die in. Averaged over `j`, `u = e^(−k·x)·(u + (1 − u)·(e^x −
/// 1)/x)` with `x = (1 − u)/(k·α)`: [`fifo_cleaned_utilization`] as `k` grows, and `α`
/// itself at `k = 1`. The root in (0, α], by bisection to 1e-12.
pub fn fifo_partition_cleaned_utilization(alpha: f64, k: u32) -> f64 {
    assert!(alpha > 0.0 && alpha < 1.0, "utilisation {alpha} outside (0, 1)");
    assert!(k > 0, "a partition has no segments");
    let k = f64::from(k);
    // Positive below the root, negative between it and α (0 at α when k = 1).
    let g = |u: f64| {
        let x = (1.0 - u) / (k * alpha);
        (-k * x).exp() * (u + (1.0 - u) * x.exp_m1() / x) - u
    };
    let (mut lo, mut hi) = (0.0, alpha);
    while hi - lo > 1e-12 {
        let mid = 0.5 * (lo + hi);
        if g(mid) > 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifo_root_satisfies_its_equation() {
        for alpha in [0.2, 0.5, 0.8, 0.95] {
            let u = fifo_cleaned_utilization(alpha);
            assert!((u - (-(1.0 - u) / alpha).exp()).abs() < 1e-9, "α = {alpha}: u = {u}");
            // The cleaned segments are emptier than the average, never fuller.
            assert!(u < alpha, "α = {alpha}: u = {u}");
        }
        assert_eq!(cleaning_cost(0.5), 1.0);
    }

    #[test]
    fn fifo_in_partitions_lies_between_fifo_and_the_average() {
        for alpha in [0.5, 0.8092, 0.95] {
            // One segment per partition is cleaned at the average utilisation.
            assert!((fifo_partition_cleaned_utilization(alpha, 1) - alpha).abs() < 1e-9);
            // Smaller partitions clean fuller segments, down to FIFO's closed form.
            let us: Vec<f64> = [1, 2, 4, 8, 16, 64].map(|k| fifo_partition_cleaned_utilization(alpha, k)).to_vec();
            assert!(us.windows(2).all(|w| w[1] < w[0]), "α = {alpha}: {us:?}");
            let closed = fifo_cleaned_utilization(alpha);
            let many = fifo_partition_cleaned_utilization(alpha, 100_000);
            assert!((many - closed).abs() < 1e-4, "α = {alpha}: {many} against {closed}");
            assert!(us[5] > closed);
        }
        // The root at α = 0.8, k = 8 satisfies its equation: u = 0.65896.
        let u = fifo_partition_cleaned_utilization(0.8, 8);
        let x = (1.0 - u) / (8.0 * 0.8);
        assert!((u - (-8.0 * x).exp() * (u + (1.0 - u) * x.exp_m1() / x)).abs() < 1e-9);
        assert!((u - 0.65896).abs() < 1e-5, "u = {u}");
    }
}
