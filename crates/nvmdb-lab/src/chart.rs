//! Renders a [`Plot`] as SVG with plotters. Axes are drawn in transformed space (log₂,
//! log₁₀ or linear), so one coordinate type serves every scale, with ticks placed by us:
//! exactly at the data's x values when there are few, else at powers or "nice" steps.

use std::ops::Range;

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::format::decimal_exponent;
use crate::outcome::{AxisScale, Plot, Series};

const WIDTH: u32 = 760;
const HEIGHT: u32 = 440;
const COLORS: [RGBColor; 8] = [
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0x8c, 0x56, 0x4b),
    RGBColor(0xe3, 0x77, 0xc2),
    RGBColor(0x17, 0xbe, 0xcf),
];
/// At most this many distinct x values get a tick each.
const MAX_DATA_TICKS: usize = 12;
/// Series with more points are drawn as lines without markers.
const MAX_MARKED_POINTS: usize = 40;
/// Legend text is cut to this many characters so the legend cannot swallow the plot.
const MAX_LEGEND_CHARS: usize = 30;

/// A font of `px` pixels: the SVG backend writes `size / 1.24` as the font size.
fn font(px: f64) -> TextStyle<'static> {
    ("sans-serif", px * 1.24).into_font().into()
}

impl AxisScale {
    fn forward(self, v: f64) -> f64 {
        match self {
            AxisScale::Linear => v,
            AxisScale::Log2 => v.log2(),
            AxisScale::Log10 => v.log10(),
        }
    }

    fn inverse(self, t: f64) -> f64 {
        match self {
            AxisScale::Linear => t,
            AxisScale::Log2 => t.exp2(),
            AxisScale::Log10 => 10f64.powf(t),
        }
    }

    /// Whether `v` can be drawn on this axis.
    fn admits(self, v: f64) -> bool {
        v.is_finite() && (self == AxisScale::Linear || v > 0.0)
    }
}

/// A tick label: `64K` and `1M` for multiples of powers of 1024 (sizes), `1.5k` and `2M`
/// for other large numbers, up to 3 significant digits otherwise.
pub(crate) fn compact(v: f64) -> String {
    // Undo the rounding error of inverse transforms, e.g. 10^3 = 999.9999999999999.
    let v = if (v - v.round()).abs() <= 1e-9 * v.abs().max(1.0) { v.round() } else { v };
    let a = v.abs();
    if a == 0.0 {
        return "0".into();
    }
    if a >= 1024.0 && v.fract() == 0.0 {
        for (power, suffix) in [(3, "G"), (2, "M"), (1, "K")] {
            let unit = 1024f64.powi(power);
            if a >= unit && (v / unit).fract() == 0.0 {
                return format!("{}{suffix}", v / unit);
            }
        }
    }
    for (unit, suffix) in [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")] {
        if a >= unit {
            return format!("{}{suffix}", significant(v / unit, 3));
        }
    }
    if a < 1e-3 {
        return format!("{v:.0e}");
    }
    significant(v, 3)
}

/// `v` with `digits` significant digits, trailing zeros dropped.
fn significant(v: f64, digits: i32) -> String {
    let decimals = (digits - 1 - decimal_exponent(v)).max(0) as usize;
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// Ticks at multiples of 1, 2 or 5 × 10^k, about `target` of them, within `[lo, hi]`.
#[expect(
    clippy::cast_possible_truncation,
    reason = "`step` is at least (hi - lo) / target and hi - lo at least hi's rounding unit, so \
              |lo / step| and |hi / step| stay below target × 2^53, far inside i64"
)]
fn nice_ticks(lo: f64, hi: f64, target: f64) -> Vec<f64> {
    let raw = (hi - lo) / target;
    if !(raw > 0.0 && raw.is_finite()) {
        return Vec::new();
    }
    let magnitude = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0].iter().map(|m| m * magnitude).find(|s| *s >= raw).unwrap_or(10.0 * magnitude);
    let (first, last) = ((lo / step).ceil() as i64, (hi / step).floor() as i64);
    (first..=last).map(|k| k as f64 * step).collect()
}

/// Ticks, in transformed space, for an axis over `[lo, hi]` (also transformed).
#[expect(
    clippy::cast_possible_truncation,
    reason = "on log axes lo and hi are logarithms of padded f64 values, within a few thousand of \
              zero, so they and the exponents between them fit i32; linear axes return first"
)]
fn auto_ticks(scale: AxisScale, lo: f64, hi: f64) -> Vec<f64> {
    if scale == AxisScale::Linear {
        return nice_ticks(lo, hi, 6.0);
    }
    let (first, last) = (lo.ceil() as i64, hi.floor() as i64);
    let count = last - first + 1;
    if count > 3 || (scale == AxisScale::Log2 && count >= 2) {
        let step = (count + 7) / 8;
        return (first..=last).filter(|e| (e - first) % step == 0).map(|e| e as f64).collect();
    }
    if scale == AxisScale::Log10 {
        // Few decades: 1, 2 and 5 in each, so the axis has more than two labels.
        let ticks: Vec<f64> = (first - 1..=last)
            .flat_map(|e| [1.0, 2.0, 5.0].map(|m| (m * 10f64.powi(e as i32)).log10()))
            .filter(|t| (lo..=hi).contains(t))
            .collect();
        if ticks.len() >= 3 {
            return ticks;
        }
    }
    // Less than a few steps apart: nice values in the original space.
    let (a, b) = (scale.inverse(lo), scale.inverse(hi));
    nice_ticks(a, b, 5.0).into_iter().filter(|v| *v > 0.0).map(|v| scale.forward(v)).collect()
}

/// A linear axis (in transformed space) with our ticks. Plotters' own `WithKeyPoints`
/// over `f64` cannot take a label formatter, hence this.
struct Axis {
    inner: RangedCoordf64,
    ticks: Vec<f64>,
}

impl Ranged for Axis {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.inner.map(value, limit)
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        // Only bold lines: light ones between our ticks would not match the labels.
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> Range<f64> {
        self.inner.range()
    }
}

/// The data's transformed values, sorted and deduplicated.
fn distinct(mut values: Vec<f64>) -> Vec<f64> {
    values.sort_by(f64::total_cmp);
    values.dedup();
    values
}

/// Keeps ticks at least `gap` apart, so labels do not collide.
fn thin(ticks: Vec<f64>, gap: f64) -> Vec<f64> {
    let mut kept: Vec<f64> = Vec::with_capacity(ticks.len());
    for t in ticks {
        match kept.last() {
            Some(k) if t - k < gap => {}
            _ => kept.push(t),
        }
    }
    kept
}

/// `[lo, hi]` widened when empty, then padded by `pad` of its span.
fn padded(lo: f64, hi: f64, pad: f64) -> (f64, f64) {
    // Half a unit, or 5% for values so large that half a unit would vanish in rounding.
    let half = 0.5f64.max(lo.abs() * 0.05);
    let (lo, hi) = if hi > lo { (lo, hi) } else { (lo - half, hi + half) };
    let span = hi - lo;
    (lo - pad * span, hi + pad * span)
}

/// The scales actually drawn: `log_y` stands for log₁₀, and a linear x axis over powers of
/// two spanning at least 8× becomes log₂.
fn effective_scales(plot: &Plot) -> (AxisScale, AxisScale) {
    let y = if plot.y_scale == AxisScale::Linear && plot.log_y { AxisScale::Log10 } else { plot.y_scale };
    let mut x = plot.x_scale;
    if x == AxisScale::Linear {
        let xs: Vec<f64> =
            all_series(plot).flat_map(|(_, s)| &s.points).map(|p| p.0).filter(|x| x.is_finite()).collect();
        let powers_of_two = xs.iter().all(|&x| x > 0.0 && x.log2().fract() == 0.0);
        let (min, max) = xs.iter().fold((f64::INFINITY, 0f64), |(lo, hi), &x| (lo.min(x), hi.max(x)));
        if !xs.is_empty() && powers_of_two && max / min >= 8.0 {
            x = AxisScale::Log2;
        }
    }
    (x, y)
}

/// Every series with whether it is the paper's.
fn all_series(plot: &Plot) -> impl Iterator<Item = (bool, &Series)> {
    plot.series.iter().map(|s| (false, s)).chain(plot.paper.iter().map(|s| (true, s)))
}

fn legend_name(paper: bool, name: &str) -> String {
    let name = if paper { format!("paper: {name}") } else { name.to_string() };
    if name.chars().count() > MAX_LEGEND_CHARS {
        let cut: String = name.chars().take(MAX_LEGEND_CHARS - 1).collect();
        format!("{cut}…")
    } else {
        name
    }
}

/// Each series' colour: ours in palette order; the paper's share the colour of our series
/// of the same name, so the two read as one quantity, else take the next free colour.
fn colours(plot: &Plot) -> Vec<RGBColor> {
    let ours = plot.series.len();
    let mut next = ours;
    let mut out: Vec<RGBColor> = (0..ours).map(|i| COLORS[i % COLORS.len()]).collect();
    for p in &plot.paper {
        match plot.series.iter().position(|s| s.name == p.name) {
            Some(i) => out.push(out[i]),
            None => {
                out.push(COLORS[next % COLORS.len()]);
                next += 1;
            }
        }
    }
    out
}

impl Plot {
    /// The plot as an SVG document. Non-finite points, and non-positive ones on log axes,
    /// are skipped; a plot left without points says "no data".
    pub fn to_svg(&self) -> String {
        let mut out = String::new();
        {
            let root = SVGBackend::with_string(&mut out, (WIDTH, HEIGHT)).into_drawing_area();
            self.draw(&root).expect("drawing into a string cannot fail");
            root.present().expect("drawing into a string cannot fail");
        }
        out
    }

    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, plotters::coord::Shift>,
    ) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
        root.fill(&WHITE)?;
        let area = root.margin(6, 0, 0, 0).titled(&self.title, font(15.0))?;
        let (xs, ys) = effective_scales(self);
        // Transformed points of each series, `None` where a point cannot be drawn.
        let transformed: Vec<Vec<Option<(f64, f64)>>> = all_series(self)
            .map(|(_, s)| {
                s.points
                    .iter()
                    .map(|&(x, y)| (xs.admits(x) && ys.admits(y)).then(|| (xs.forward(x), ys.forward(y))))
                    .collect()
            })
            .collect();
        let valid: Vec<(f64, f64)> = transformed.iter().flatten().flatten().copied().collect();
        if valid.is_empty() {
            let (w, h) = area.dim_in_pixel();
            let style = font(16.0).color(&RGBColor(0x66, 0x66, 0x66)).pos(Pos::new(HPos::Center, VPos::Center));
            area.draw(&Text::new("no data", (w as i32 / 2, h as i32 / 2), style))?;
            return Ok(());
        }

        let entries: Vec<(bool, String)> =
            all_series(self).map(|(paper, s)| (paper, legend_name(paper, &s.name))).collect();
        let longest = entries.iter().map(|(_, n)| n.chars().count()).max().unwrap_or(0);
        let longest = u32::try_from(longest).unwrap_or(u32::MAX);
        let legend_width = (longest.saturating_mul(15) / 2).saturating_add(50).clamp(110, 290);
        let (main, legend) = area.split_horizontally(WIDTH - legend_width);

        let x_data = distinct(valid.iter().map(|p| p.0).collect());
        let (x_lo, x_hi) = padded(x_data[0], x_data[x_data.len() - 1], 0.04);
        let y_min = valid.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
        let y_max = valid.iter().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max);
        // A linear y axis starts at zero, so heights compare as ratios.
        let y_min = if ys == AxisScale::Linear { y_min.min(0.0) } else { y_min };
        let (y_lo, y_hi) = padded(y_min, y_max, 0.05);

        let plot_px = f64::from(WIDTH - legend_width - 90);
        let min_gap = (x_hi - x_lo) * 40.0 / plot_px;
        let x_ticks = if x_data.len() <= MAX_DATA_TICKS { x_data } else { auto_ticks(xs, x_lo, x_hi) };
        let x_ticks = thin(x_ticks, min_gap);
        let y_ticks = auto_ticks(ys, y_lo, y_hi);

        let mut chart =
            ChartBuilder::on(&main).margin(10).x_label_area_size(44).y_label_area_size(64).build_cartesian_2d(
                Axis { inner: (x_lo..x_hi).into(), ticks: x_ticks },
                Axis { inner: (y_lo..y_hi).into(), ticks: y_ticks },
            )?;
        let x_fmt = |t: &f64| compact(xs.inverse(*t));
        let y_fmt = |t: &f64| compact(ys.inverse(*t));
        let axis_name = |label: &str, scale: AxisScale| match scale {
            AxisScale::Linear => label.to_string(),
            AxisScale::Log2 => format!("{label} (log₂ scale)"),
            AxisScale::Log10 => format!("{label} (log scale)"),
        };
        chart
            .configure_mesh()
            .bold_line_style(RGBColor(0xe4, 0xe4, 0xe4))
            .x_desc(axis_name(&self.x_label, xs))
            .y_desc(axis_name(&self.y_label, ys))
            .x_label_formatter(&x_fmt)
            .y_label_formatter(&y_fmt)
            .label_style(font(12.0))
            .axis_desc_style(font(13.0))
            .draw()?;

        let colours = colours(self);
        for (((paper, _), points), colour) in all_series(self).zip(&transformed).zip(&colours) {
            if paper {
                let style = colour.stroke_width(2);
                chart.draw_series(points.iter().flatten().map(|&p| Cross::new(p, 5, style)))?;
                continue;
            }
            // A point that cannot be drawn breaks the line rather than being bridged.
            for run in points.split(Option::is_none).filter(|run| run.len() >= 2) {
                chart.draw_series(LineSeries::new(run.iter().flatten().copied(), colour.stroke_width(2)))?;
            }
            // Markers on dense series would merge into a thick smear.
            if points.len() <= MAX_MARKED_POINTS {
                chart.draw_series(points.iter().flatten().map(|&p| Circle::new(p, 3, colour.filled())))?;
            }
        }

        for (i, ((paper, name), colour)) in entries.iter().zip(&colours).enumerate() {
            // Entries past the legend's height fall off the picture rather than wrap around.
            let y = i32::try_from(i).map_or(i32::MAX, |i| i.saturating_mul(20).saturating_add(40));
            if *paper {
                legend.draw(&Cross::new((18, y), 5, colour.stroke_width(2)))?;
            } else {
                legend.draw(&PathElement::new(vec![(6, y), (30, y)], colour.stroke_width(2)))?;
                legend.draw(&Circle::new((18, y), 3, colour.filled()))?;
            }
            legend.draw(&Text::new(name.as_str(), (38, y), font(12.0).pos(Pos::new(HPos::Left, VPos::Center))))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Data and legend lines; axes and grid are thinner.
    fn thick_lines(svg: &str) -> usize {
        svg.lines().filter(|l| l.starts_with("<polyline") && l.contains("stroke-width=\"2\"")).count()
    }

    fn assert_svg(svg: &str) {
        assert!(svg.starts_with("<svg"), "{}", &svg[..svg.len().min(200)]);
        assert!(svg.trim_end().ends_with("</svg>"));
        assert_eq!(svg.matches("<svg").count(), 1);
    }

    #[test]
    fn svg_holds_title_legend_and_one_line_per_series() {
        let mut plot = Plot::new("Wear & tear <by size>", "node lines", "bits");
        plot.series("plain", vec![(1.0, 10.0), (2.0, 20.0), (4.0, 40.0)]);
        plot.series("flip-n-write", vec![(1.0, 5.0), (2.0, 12.0), (4.0, 30.0)]);
        plot.paper_series("plain", vec![(1.0, 11.0), (4.0, 38.0)]);
        let svg = plot.to_svg();
        assert_svg(&svg);
        assert!(svg.contains("Wear &amp; tear &lt;by size&gt;"), "{svg}");
        for name in ["plain", "flip-n-write", "paper: plain"] {
            assert!(svg.contains(&format!(">\n{name}\n<")) || svg.contains(&format!(">{name}<")), "{name} in {svg}");
        }
        assert_eq!(thick_lines(&svg), 2 + 2, "two lines and one legend line per series of ours: {svg}");
    }

    #[test]
    fn dense_series_have_no_markers() {
        let mut plot = Plot::new("t", "x", "y");
        plot.series("dense", (0..100).map(|i| (f64::from(i), f64::from(i % 7))).collect());
        plot.series("sparse", vec![(0.0, 1.0), (50.0, 2.0)]);
        // Two markers for the sparse series and one legend marker each.
        assert_eq!(plot.to_svg().matches("<circle").count(), 2 + 2);
    }

    #[test]
    fn few_x_values_get_ticks_exactly_there() {
        let mut plot = Plot::new("t", "x", "y");
        plot.series("a", vec![(3.0, 1.0), (7.0, 2.0), (20.0, 3.0)]);
        let svg = plot.to_svg();
        for label in ["3", "7", "20"] {
            assert!(svg.contains(&format!(">\n{label}\n<")), "tick {label} missing: {svg}");
        }
        assert!(!svg.contains(">\n10\n<"), "no tick between data points: {svg}");
    }

    #[test]
    fn doubling_sizes_get_a_log2_axis_with_compact_labels() {
        let mut plot = Plot::new("t", "size", "y");
        let sizes = [1024.0, 4096.0, 65536.0, 1048576.0];
        plot.series("a", sizes.iter().map(|&s| (s, s / 1000.0)).collect());
        assert_eq!(effective_scales(&plot), (AxisScale::Log2, AxisScale::Linear));
        let svg = plot.to_svg();
        for label in ["1K", "4K", "64K", "1M", "size (log₂ scale)"] {
            assert!(svg.contains(&format!(">\n{label}\n<")), "{label} missing: {svg}");
        }
        // Not powers of two, or not spanning 8×: stays linear.
        plot.series("b", vec![(3000.0, 1.0)]);
        assert_eq!(effective_scales(&plot).0, AxisScale::Linear);
        let mut narrow = Plot::new("t", "x", "y");
        narrow.series("a", vec![(2.0, 1.0), (8.0, 1.0)]);
        assert_eq!(effective_scales(&narrow).0, AxisScale::Linear);
    }

    #[test]
    fn log_y_is_log10_and_builders_set_scales() {
        let mut plot = Plot::new("t", "x", "y");
        plot.log_y = true;
        assert_eq!(effective_scales(&plot).1, AxisScale::Log10);
        let plot = Plot::new("t", "x", "y").log2_x().log10_y();
        assert_eq!((plot.x_scale, plot.y_scale), (AxisScale::Log2, AxisScale::Log10));
    }

    #[test]
    fn zeros_and_non_finite_points_are_skipped_on_log_axes() {
        let mut plot = Plot::new("t", "x", "y").log2_x().log10_y();
        plot.series(
            "a",
            vec![(0.0, 1.0), (1.0, 0.0), (2.0, 10.0), (4.0, 100.0), (f64::NAN, 5.0), (8.0, 1000.0), (16.0, 2000.0)],
        );
        plot.series("b", vec![(-1.0, 1.0), (32.0, f64::INFINITY)]);
        plot.paper_series("a", vec![(-1.0, 3.0), (4.0, 900.0)]);
        let svg = plot.to_svg();
        assert_svg(&svg);
        assert!(!svg.contains("NaN") && !svg.contains("inf"), "{svg}");
        assert!(svg.contains(">\n100\n<") && svg.contains(">\n1k\n<"), "decade ticks: {svg}");
        // The NaN between 4 and 8 breaks the line in two; "b" has no drawable points; each
        // series of ours has a legend line.
        assert_eq!(thick_lines(&svg), 2 + 2, "{svg}");
    }

    #[test]
    fn extreme_values_do_not_panic() {
        let mut plot = Plot::new("extremes", "x", "y");
        plot.series("equal", vec![(1e300, 1e300), (1e300, 1e300)]);
        plot.series("wide", vec![(-1e308, -1e308), (1e308, 1e308)]);
        plot.series("tiny", vec![(1e-300, 5e-324)]);
        assert_svg(&plot.to_svg());
        assert!(nice_ticks(1.0, 1.0, 5.0).is_empty());
        assert!(nice_ticks(-f64::MAX, f64::MAX, 5.0).is_empty());
        assert_eq!(padded(1e300, 1e300, 0.0), (0.95e300, 1.05e300));
    }

    #[test]
    fn a_plot_without_drawable_points_says_no_data() {
        for plot in [Plot::new("Empty", "x", "y"), {
            let mut p = Plot::new("Empty", "x", "y").log10_y();
            p.series("zeros", vec![(1.0, 0.0), (2.0, f64::NAN)]);
            p
        }] {
            let svg = plot.to_svg();
            assert_svg(&svg);
            assert!(svg.contains("Empty") && svg.contains("no data"), "{svg}");
        }
    }

    #[test]
    fn compact_labels() {
        let cases = [
            (0.0, "0"),
            (1.0, "1"),
            (0.25, "0.25"),
            (12.5, "12.5"),
            (999.999_999_999_9, "1k"),
            (1000.0, "1k"),
            (1500.0, "1.5k"),
            (1024.0, "1K"),
            (65536.0, "64K"),
            (1048576.0, "1M"),
            (3.0 * 1073741824.0, "3G"),
            (2.5e6, "2.5M"),
            (0.0001, "1e-4"),
            (-2000.0, "-2k"),
        ];
        for (v, want) in cases {
            assert_eq!(compact(v), want, "{v}");
        }
    }

    #[test]
    fn tick_helpers() {
        assert_eq!(nice_ticks(0.0, 10.0, 5.0), [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        assert_eq!(auto_ticks(AxisScale::Log10, -0.1, 4.2), [0.0, 1.0, 2.0, 3.0, 4.0]);
        let two_decades: Vec<String> =
            auto_ticks(AxisScale::Log10, 1.2, 3.1).iter().map(|t| compact(AxisScale::Log10.inverse(*t))).collect();
        assert_eq!(two_decades, ["20", "50", "100", "200", "500", "1k"]);
        let labels = |scale: AxisScale, lo: f64, hi: f64| -> Vec<String> {
            auto_ticks(scale, lo, hi).iter().map(|t| compact(scale.inverse(*t))).collect()
        };
        assert_eq!(labels(AxisScale::Log10, 1.4, 2.6), ["50", "100", "200"]);
        assert_eq!(labels(AxisScale::Log10, 2.0, 2.2), ["100", "120", "140"]);
        assert_eq!(labels(AxisScale::Log2, 1.0, 3.0), ["2", "4", "8"]);
        assert_eq!(auto_ticks(AxisScale::Log2, 0.0, 20.0), [0.0, 3.0, 6.0, 9.0, 12.0, 15.0, 18.0]);
        assert_eq!(thin(vec![0.0, 0.5, 1.0, 3.0], 1.0), [0.0, 1.0, 3.0]);
    }
}
