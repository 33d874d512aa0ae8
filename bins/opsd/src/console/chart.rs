//! The week chart as server-rendered SVG: the seven days' sales as bars against each day's sales
//! goal, and labor % as a line against its target. Each chart comes with a table of its numbers.

use maud::{Markup, html};
use rust_decimal::Decimal;
use rust_decimal::prelude::ToPrimitive;

use crate::console::page::money;

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

/// The table that holds the chart's numbers: the chart's text alternative.
pub const NUMBERS_ID: &str = "week-numbers";

/// Round ticks from 0 to at least `top`: about four steps of 1, 2, 2.5 or 5 times a power of ten.
fn ticks(top: f64) -> Vec<f64> {
    let rough = top.max(1.0) / 4.0;
    let power = 10f64.powf(rough.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0].into_iter().map(|m| m * power).find(|s| *s >= rough).unwrap_or(10.0 * power);
    let steps = (top.max(1.0) / step).ceil() as usize;
    (0..=steps).map(|i| i as f64 * step).collect()
}

/// `$1,500` or `$12k`: short labels for the sales axis.
fn dollars(value: f64) -> String {
    if value >= 10_000.0 {
        format!("${:.0}k", value / 1000.0)
    } else {
        let whole = Decimal::from_f64_retain(value.round()).unwrap_or_default();
        money(whole).trim_end_matches(".00").to_owned()
    }
}

/// A legend entry: a small drawing with the chart's own class, so its colour is the chart's.
fn swatch(mark: Markup, name: &str) -> Markup {
    html! { span { svg width="24" height="12" viewBox="0 0 24 12" aria-hidden="true" { (mark) } " " (name) } }
}

pub fn week(days: &[Day]) -> Markup {
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let sales_ticks = ticks(days.iter().flat_map(|d| [Some(d.sales), d.goal]).flatten().map(f).fold(100.0, f64::max));
    let pct_ticks =
        ticks(days.iter().flat_map(|d| [d.labor_pct, d.labor_target_pct]).flatten().map(f).fold(20.0, f64::max));
    let top_sales = *sales_ticks.last().expect("at least one tick");
    let top_pct = *pct_ticks.last().expect("at least one tick");
    let slot = plot_w / days.len().max(1) as f64;
    let y_sales = |v: f64| TOP + plot_h - v / top_sales * plot_h;
    let y_pct = |v: f64| TOP + plot_h - v / top_pct * plot_h;
    let x = |i: usize| LEFT + slot * i as f64 + slot / 2.0;
    let labor_points: Vec<(String, String)> = days
        .iter()
        .enumerate()
        .filter_map(|(i, d)| d.labor_pct.map(|p| (format!("{:.1}", x(i)), format!("{:.1}", y_pct(f(p))))))
        .collect();
    html! {
        svg viewBox={ "0 0 " (WIDTH) " " (HEIGHT) } width="100%" role="img" aria-describedby=(NUMBERS_ID)
            aria-label="Sales by day against the sales goal, and labor percentage against its target" {
            @for tick in &sales_ticks {
                line class="grid" x1=(LEFT) x2=(WIDTH - RIGHT) y1=(format!("{:.1}", y_sales(*tick))) y2=(format!("{:.1}", y_sales(*tick))) {}
                text class="tick sales" x=(LEFT - 8.0) y=(format!("{:.1}", y_sales(*tick) + 4.0)) text-anchor="end" { (dollars(*tick)) }
            }
            @for tick in &pct_ticks {
                text class="tick pct" x=(WIDTH - RIGHT + 8.0) y=(format!("{:.1}", y_pct(*tick) + 4.0)) { (format!("{tick:.0}%")) }
            }
            text class="axis-title" x="12" y=(TOP + plot_h / 2.0) text-anchor="middle"
                transform={ "rotate(-90 12 " (TOP + plot_h / 2.0) ")" } { "Sales" }
            text class="axis-title" x=(WIDTH - 10.0) y=(TOP + plot_h / 2.0) text-anchor="middle"
                transform={ "rotate(90 " (WIDTH - 10.0) " " (TOP + plot_h / 2.0) ")" } { "Labor %" }
            line class="axis" x1=(LEFT) y1=(TOP) x2=(LEFT) y2=(TOP + plot_h) {}
            line class="axis" x1=(WIDTH - RIGHT) y1=(TOP) x2=(WIDTH - RIGHT) y2=(TOP + plot_h) {}
            line class="axis" x1=(LEFT) y1=(TOP + plot_h) x2=(WIDTH - RIGHT) y2=(TOP + plot_h) {}
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
                polyline class="labor" points=(labor_points.iter().map(|(px, py)| format!("{px},{py}")).collect::<Vec<_>>().join(" ")) {}
            }
            @for (px, py) in &labor_points {
                circle class="labor-point" cx=(px) cy=(py) r="3" {}
            }
        }
        p class="legend" {
            (swatch(html! { rect class="bar" x="4" y="1" width="16" height="10" {} }, "sales (left scale)"))
            (swatch(html! { line class="goal" x1="0" y1="6" x2="24" y2="6" {} }, "sales goal"))
            (swatch(html! { line class="labor" x1="0" y1="6" x2="24" y2="6" {} }, "labor % (right scale)"))
            (swatch(html! { line class="target" x1="0" y1="6" x2="24" y2="6" {} }, "labor % target"))
        }
    }
}

/// One day and block of a proposal: the hours planned against the hours needed.
pub struct Slot {
    pub label: String,
    pub planned: Decimal,
    pub needed: Decimal,
}

/// The table that holds the needs chart's numbers.
pub const NEEDS_ID: &str = "needs-numbers";

/// A proposal's hours by day and block: planned as bars, needed as the dashed mark the week chart
/// gives the sales goal, on one hours scale.
pub fn needs(slots: &[Slot]) -> Markup {
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let hour_ticks = ticks(slots.iter().flat_map(|s| [s.planned, s.needed]).map(f).fold(8.0, f64::max));
    let top = *hour_ticks.last().expect("at least one tick");
    let slot = plot_w / slots.len().max(1) as f64;
    let y = |v: f64| TOP + plot_h - v / top * plot_h;
    let x = |i: usize| LEFT + slot * i as f64 + slot / 2.0;
    html! {
        svg viewBox={ "0 0 " (WIDTH) " " (HEIGHT) } width="100%" role="img" aria-describedby=(NEEDS_ID)
            aria-label="Hours planned against hours needed, by day and block" {
            @for tick in &hour_ticks {
                line class="grid" x1=(LEFT) x2=(WIDTH - RIGHT) y1=(format!("{:.1}", y(*tick))) y2=(format!("{:.1}", y(*tick))) {}
                text class="tick hours" x=(LEFT - 8.0) y=(format!("{:.1}", y(*tick) + 4.0)) text-anchor="end" { (format!("{tick:.0} h")) }
            }
            text class="axis-title" x="12" y=(TOP + plot_h / 2.0) text-anchor="middle"
                transform={ "rotate(-90 12 " (TOP + plot_h / 2.0) ")" } { "Hours" }
            line class="axis" x1=(LEFT) y1=(TOP) x2=(LEFT) y2=(TOP + plot_h) {}
            line class="axis" x1=(LEFT) y1=(TOP + plot_h) x2=(WIDTH - RIGHT) y2=(TOP + plot_h) {}
            @for (i, s) in slots.iter().enumerate() {
                @let bar_h = f(s.planned) / top * plot_h;
                rect class="bar" data-slot=(s.label) x=(format!("{:.1}", x(i) - slot * 0.3)) y=(format!("{:.1}", TOP + plot_h - bar_h))
                    width=(format!("{:.1}", slot * 0.6)) height=(format!("{:.1}", bar_h)) {}
                line class="goal" x1=(format!("{:.1}", x(i) - slot * 0.4)) x2=(format!("{:.1}", x(i) + slot * 0.4))
                    y1=(format!("{:.1}", y(f(s.needed)))) y2=(format!("{:.1}", y(f(s.needed)))) {}
                @for (line, part) in s.label.split(' ').enumerate() {
                    text class="slot-label" x=(format!("{:.1}", x(i))) y=(HEIGHT - BOTTOM + 14.0 + 12.0 * line as f64) text-anchor="middle" { (part) }
                }
            }
        }
        p class="legend" {
            (swatch(html! { rect class="bar" x="4" y="1" width="16" height="10" {} }, "hours planned"))
            (swatch(html! { line class="goal" x1="0" y1="6" x2="24" y2="6" {} }, "hours needed"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_reach_the_top() {
        assert_eq!(ticks(5_400.0), [0.0, 2_000.0, 4_000.0, 6_000.0]);
        assert_eq!(ticks(31.0), [0.0, 10.0, 20.0, 30.0, 40.0]);
        assert_eq!(ticks(100.0), [0.0, 25.0, 50.0, 75.0, 100.0]);
        assert_eq!(dollars(1_500.0), "$1,500");
        assert_eq!(dollars(12_000.0), "$12k");
    }
}
