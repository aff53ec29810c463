//! How the report writes a number: at most four significant digits, exponents outside
//! 0.001 to 10^9.

#[expect(
    clippy::cast_possible_truncation,
    reason = "⌊log₁₀⌋ of a finite non-zero f64 lies in -324..=308, which i32 holds exactly; zero, \
              infinities and NaN saturate as documented"
)]
pub(crate) fn decimal_exponent(v: f64) -> i32 {
    v.abs().log10().floor() as i32
}

pub(crate) fn number(v: f64) -> String {
    if !v.is_finite() {
        return v.to_string();
    }
    let magnitude = v.abs();
    if magnitude != 0.0 && !(1e-3..1e9).contains(&magnitude) {
        return format!("{v:.3e}");
    }
    if v.fract() == 0.0 {
        return format!("{v:.0}");
    }
    let decimals = (3 - decimal_exponent(magnitude)).clamp(0, 6) as usize;
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}
