//! The week chart as server-rendered SVG: the seven days' sales as bars against each day's sales
//! goal, and labor % as a line against its target. Each chart comes with a table of its numbers.

use maud::{Markup, html};
use rust_decimal::Decimal;
use rust_decimal::prelude::ToPrimitive;

pub struct Day {
    pub label: String,
    pub sales: Decimal,
    pub goal: Option<Decimal>,
    pub labor_pct: Option<Decimal>,
    pub labor_target_pct: Option<Decimal>,
}

const WIDTH: f64 = 720.0;
const HEIGHT: f64 = 280.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 60.0;
const TOP: f64 = 20.0;
const BOTTOM: f64 = 40.0;

fn f(value: Decimal) -> f64 {
    value.to_f64().unwrap_or(0.0)
}

pub fn week(days: &[Day]) -> Markup {
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let top_sales = days.iter().flat_map(|d| [Some(d.sales), d.goal]).flatten().map(f).fold(1.0, f64::max) * 1.1;
    let top_pct =
        days.iter().flat_map(|d| [d.labor_pct, d.labor_target_pct]).flatten().map(f).fold(10.0, f64::max) * 1.1;
    let slot = plot_w / days.len().max(1) as f64;
    let y_sales = |v: f64| TOP + plot_h - v / top_sales * plot_h;
    let y_pct = |v: f64| TOP + plot_h - v / top_pct * plot_h;
    let x = |i: usize| LEFT + slot * i as f64 + slot / 2.0;
    let labor_points: Vec<String> = days
        .iter()
        .enumerate()
        .filter_map(|(i, d)| d.labor_pct.map(|p| format!("{:.1},{:.1}", x(i), y_pct(f(p)))))
        .collect();
    html! {
        svg viewBox={ "0 0 " (WIDTH) " " (HEIGHT) } width="100%" role="img"
            aria-label="Sales by day against the sales goal, and labor percentage against its target" {
            line class="axis" x1=(LEFT) y1=(TOP + plot_h) x2=(WIDTH - RIGHT) y2=(TOP + plot_h) {}
            text x=(LEFT - 8.0) y=(TOP + 4.0) text-anchor="end" { "$" (format!("{:.0}", top_sales)) }
            text x=(LEFT - 8.0) y=(TOP + plot_h) text-anchor="end" { "$0" }
            text x=(WIDTH - RIGHT + 8.0) y=(TOP + 4.0) { (format!("{:.0}%", top_pct)) }
            @for (i, day) in days.iter().enumerate() {
                @let bar_h = f(day.sales) / top_sales * plot_h;
                rect class="bar" data-day=(day.label) x=(format!("{:.1}", x(i) - slot * 0.3)) y=(format!("{:.1}", TOP + plot_h - bar_h))
                    width=(format!("{:.1}", slot * 0.6)) height=(format!("{:.1}", bar_h)) {}
                @if let Some(goal) = day.goal {
                    line class="goal" data-goal=(goal) x1=(format!("{:.1}", x(i) - slot * 0.4)) x2=(format!("{:.1}", x(i) + slot * 0.4))
                        y1=(format!("{:.1}", y_sales(f(goal)))) y2=(format!("{:.1}", y_sales(f(goal)))) {}
                }
                @if let Some(target) = day.labor_target_pct {
                    line class="target" x1=(format!("{:.1}", x(i) - slot * 0.4)) x2=(format!("{:.1}", x(i) + slot * 0.4))
                        y1=(format!("{:.1}", y_pct(f(target)))) y2=(format!("{:.1}", y_pct(f(target)))) {}
                }
                text x=(format!("{:.1}", x(i))) y=(HEIGHT - BOTTOM + 18.0) text-anchor="middle" { (day.label) }
            }
            @if labor_points.len() > 1 {
                polyline class="labor" points=(labor_points.join(" ")) {}
            }
        }
        p class="legend" {
            span { "bars: sales" } span { "dashed: sales goal" } span { "line: labor %" } span { "dotted: labor % target" }
        }
    }
}
