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
}
