//! A small dependency-free SVG line-chart writer.

use std::fmt::Write;

use crate::outcome::Plot;

const WIDTH: f64 = 720.0;
const HEIGHT: f64 = 420.0;
const LEFT: f64 = 80.0;
const RIGHT: f64 = 190.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 60.0;
const COLORS: [&str; 8] = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"];

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

fn tick_label(v: f64) -> String {
    let a = v.abs();
    if a != 0.0 && !(1e-2..1e5).contains(&a) {
        format!("{v:.1e}")
    } else if a >= 100.0 || v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

/// Renders a plot as an SVG document.
pub fn render(plot: &Plot) -> String {
    let transform_y = |y: f64| if plot.log_y { y.max(f64::MIN_POSITIVE).log10() } else { y };
    let points = plot.series.iter().flat_map(|s| s.points.iter()).filter(|(x, y)| x.is_finite() && y.is_finite());
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for &(x, y) in points {
        if plot.log_y && y <= 0.0 {
            continue;
        }
        let ty = transform_y(y);
        x0 = x0.min(x);
        x1 = x1.max(x);
        y0 = y0.min(ty);
        y1 = y1.max(ty);
    }
    if x0 > x1 {
        (x0, x1, y0, y1) = (0.0, 1.0, 0.0, 1.0);
    }
    if !plot.log_y {
        y0 = y0.min(0.0);
    }
    if x1 == x0 {
        x1 = x0 + 1.0;
    }
    if y1 == y0 {
        y1 = y0 + 1.0;
    }
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let sx = |x: f64| LEFT + (x - x0) / (x1 - x0) * plot_w;
    let sy = |ty: f64| TOP + plot_h - (ty - y0) / (y1 - y0) * plot_h;

    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(out, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        out,
        r#"<text x="{}" y="22" text-anchor="middle" font-size="14">{}</text>"#,
        LEFT + plot_w / 2.0,
        escape(&plot.title)
    );
    let _ =
        writeln!(out, r#"<rect x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" fill="none" stroke="black"/>"#);
    for i in 0..=5 {
        let f = f64::from(i) / 5.0;
        let xv = x0 + f * (x1 - x0);
        let tv = y0 + f * (y1 - y0);
        let yv = if plot.log_y { 10f64.powf(tv) } else { tv };
        let (px, py) = (sx(xv), sy(tv));
        let _ = writeln!(
            out,
            r#"<line x1="{px}" y1="{}" x2="{px}" y2="{}" stroke="black"/>"#,
            TOP + plot_h,
            TOP + plot_h + 5.0
        );
        let _ = writeln!(
            out,
            r#"<text x="{px}" y="{}" text-anchor="middle">{}</text>"#,
            TOP + plot_h + 18.0,
            tick_label(xv)
        );
        let _ = writeln!(out, r##"<line x1="{LEFT}" y1="{py}" x2="{}" y2="{py}" stroke="#ddd"/>"##, LEFT + plot_w);
        let _ =
            writeln!(out, r#"<text x="{}" y="{}" text-anchor="end">{}</text>"#, LEFT - 6.0, py + 4.0, tick_label(yv));
    }
    let _ = writeln!(
        out,
        r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
        LEFT + plot_w / 2.0,
        HEIGHT - 18.0,
        escape(&plot.x_label)
    );
    let _ = writeln!(
        out,
        r#"<text x="18" y="{}" text-anchor="middle" transform="rotate(-90 18 {})">{}{}</text>"#,
        TOP + plot_h / 2.0,
        TOP + plot_h / 2.0,
        escape(&plot.y_label),
        if plot.log_y { " (log)" } else { "" }
    );
    for (i, series) in plot.series.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let pts: Vec<(f64, f64)> = series
            .points
            .iter()
            .filter(|(x, y)| x.is_finite() && y.is_finite() && (!plot.log_y || *y > 0.0))
            .map(|&(x, y)| (sx(x), sy(transform_y(y))))
            .collect();
        let path: Vec<String> = pts.iter().map(|(x, y)| format!("{x:.1},{y:.1}")).collect();
        let _ =
            writeln!(out, r#"<polyline points="{}" fill="none" stroke="{color}" stroke-width="2"/>"#, path.join(" "));
        for (x, y) in &pts {
            let _ = writeln!(out, r#"<circle cx="{x:.1}" cy="{y:.1}" r="3" fill="{color}"/>"#);
        }
        let ly = TOP + 10.0 + 18.0 * i as f64;
        let lx = WIDTH - RIGHT + 12.0;
        let _ = writeln!(
            out,
            r#"<line x1="{lx}" y1="{ly}" x2="{}" y2="{ly}" stroke="{color}" stroke-width="2"/>"#,
            lx + 20.0
        );
        let _ = writeln!(out, r#"<text x="{}" y="{}">{}</text>"#, lx + 26.0, ly + 4.0, escape(&series.name));
    }
    out.push_str("</svg>\n");
    out
}
