//! The week page (team admins): the week's sales against the goal and labor % against the target,
//! with the KPI tiles, from the same service and cache as `GET /api/analytics/optimization`; and the
//! scheduled against worked labor of each day, from the same service and cache as
//! `GET /api/analytics/variance`.

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use maud::{Markup, html};
use opsd_core::{LocationId, parse_iso_date};
use opsd_optimization::{ReportKey, Week};
use rust_decimal::Decimal;
use serde::Deserialize;
use uuid::Uuid;

use crate::console::access::{Need, allow, team};
use crate::console::chart::{self, Day};
use crate::console::page::{layout, money, ok, percent, reason, refusal, unavailable};
use crate::state::AppState;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WeekQuery {
    location_id: Option<String>,
    week_of: Option<String>,
}

pub async fn page(req: HttpRequest, state: web::Data<AppState>, query: web::Query<WeekQuery>) -> HttpResponse {
    let caller = match allow(&req, Need::Admin).await {
        Ok(caller) => caller,
        Err(refused) => return refused,
    };
    let team = team(&caller);
    let location = match query.location_id.as_deref().filter(|id| !id.is_empty()).map(Uuid::parse_str) {
        None => None,
        Some(Ok(id)) => Some(LocationId(id)),
        Some(Err(_)) => return refusal(StatusCode::BAD_REQUEST, "locationId must be a location id."),
    };
    let week = match query.week_of.as_deref().filter(|w| !w.is_empty()) {
        // The most recent week with sales: this week once it has any, else the last one that does.
        None => match state
            .optimization
            .latest_week_with_sales(&team, location, time::OffsetDateTime::now_utc().date())
            .await
        {
            Ok(week) => week,
            Err(error) => return unavailable("The week's numbers are", crate::ApiError::from(error)),
        },
        Some(raw) => match parse_iso_date("weekOf", raw).and_then(|date| Week::starting("weekOf", date)) {
            Ok(week) => week,
            Err(error) => return refusal(StatusCode::BAD_REQUEST, &format!("weekOf {}.", error.message)),
        },
    };
    let (locations, report, goals, variance) = match tokio::try_join!(
        async { state.teams.list_locations(&caller).await.map_err(crate::ApiError::from) },
        async {
            let key = ReportKey { team: team.clone(), location, week };
            state.optimization.report(key).await.map_err(crate::ApiError::from)
        },
        async { state.optimization.goals(&team, location).await.map_err(crate::ApiError::from) },
        async {
            let key = ReportKey { team: team.clone(), location, week };
            state.planning.variance(key).await.map_err(crate::ApiError::from)
        },
    ) {
        Ok(found) => found,
        Err(crate::ApiError::NotFound) => return refusal(StatusCode::NOT_FOUND, "No such location in your team."),
        Err(error) => return unavailable("The week's numbers are", error),
    };
    let report = &report.0.report;
    let days: Vec<Day> = report
        .daily_summary
        .iter()
        .enumerate()
        .map(|(index, row)| {
            let goal = goals.iter().find(|g| usize::from(g.day_of_week) == index);
            Day {
                label: row.day.weekday().to_string()[..3].to_owned(),
                sales: row.sales,
                goal: goal.map(|g| g.sales_goal),
                labor_pct: row.labor_pct_fraction.map(|f| f * rust_decimal::Decimal::ONE_HUNDRED),
                labor_target_pct: goal.map(|g| g.labor_pct_target),
            }
        })
        .collect();
    let summary = &report.summary;
    let judged: Vec<bool> = report.daily_summary.iter().filter_map(goals_met_on).collect();
    let goals_met = (!judged.is_empty()).then(|| judged.iter().filter(|met| **met).count() * 100 / judged.len());
    let body = html! {
        h1 { (report.week_label) }
        form class="pickers" method="get" action="/console/week" {
            label { "Location"
                select name="locationId" {
                    option value="" { "All locations" }
                    @for l in &locations {
                        option value=(l.id.0) selected[Some(l.id) == location] { (l.name) }
                    }
                }
            }
            label { "Week starting (Saturday)" input type="date" name="weekOf" value=(week.start()); }
            button type="submit" { "Show" }
        }
        div class="tiles" {
            div class="tile" data-kpi="laborPct" {
                div { "Labor %" }
                @match summary.labor_pct_fraction {
                    Some(fraction) => { div class="value" { (percent(fraction)) } }
                    None => { div class="value" { "—" } div class="note" { (reason(summary.labor_pct_reason)) } }
                }
                @if let Some(target) = summary.target_labor_pct { div class="note" { "target " (target.round_dp(1)) "%" } }
            }
            div class="tile" data-kpi="splh" {
                div { "Sales per labor hour" }
                @match summary.splh {
                    Some(splh) => { div class="value" { (money(splh)) } }
                    None => { div class="value" { "—" } div class="note" { (reason(summary.splh_reason)) } }
                }
                @if let Some(target) = summary.target_splh { div class="note" { "target " (money(target)) } }
            }
            div class="tile" data-kpi="goalsMet" {
                div { "Goals met" }
                @match goals_met {
                    Some(met) => {
                        div class="value" { (met) "%" }
                        div class="note" { "of " (judged.len()) " days with sales and goals" }
                    }
                    None => { div class="value" { "—" } div class="note" { "no day with sales and a goal yet" } }
                }
            }
            div class="tile" data-kpi="sales" {
                div { "Sales" }
                div class="value" { (money(summary.total_sales)) }
                div class="note" { "labor cost " (money(summary.total_labor_cost)) }
            }
        }
        div class="card" { (chart::week(&days)) }
        div class="card" {
            table id=(chart::NUMBERS_ID) {
                (by_day_head("The chart's numbers by day", &[
                    "Sales", "Sales goal", "Labor cost", "Labor %", "Labor % target", "SPLH", "Goals met",
                ]))
                tbody {
                    @for (row, day) in report.daily_summary.iter().zip(&days) {
                        tr data-day=(row.day) {
                            td { (day.label) " " (row.day) }
                            td class="num" data-sales=(row.sales.normalize()) { (money(row.sales)) }
                            td class="num" { @if let Some(goal) = day.goal { (money(goal)) } @else { "—" } }
                            td class="num" { (money(row.labor_cost)) }
                            td class="num" {
                                @match row.labor_pct_fraction { Some(f) => { (percent(f)) } None => { (reason(row.labor_pct_reason)) } }
                            }
                            td class="num" { @if let Some(t) = day.labor_target_pct { (t.round_dp(1)) "%" } @else { "—" } }
                            td class="num" {
                                @match row.splh { Some(s) => { (money(s)) } None => { (reason(row.splh_reason)) } }
                            }
                            td class="num" data-goals-met=[goals_met_on(row)] {
                                @match goals_met_on(row) {
                                    Some(true) => { span class="ok" { "✓ met" } }
                                    Some(false) => { span class="alarm" { "✗ missed" } }
                                    None => { "—" }
                                }
                            }
                        }
                    }
                }
            }
        }
    };
    let body = html! { (body) (labor_variance(&variance.0)) };
    ok(layout("week", &report.week_label, body))
}

/// Whether a day met its goals, judged only once it had sales: a day not traded yet has missed nothing.
fn goals_met_on(day: &opsd_optimization::DailyRow) -> Option<bool> {
    if day.sales > Decimal::ZERO { day.goals_met } else { None }
}

/// Scheduled (published shifts) against worked (approved punches) labor, day by day.
fn labor_variance(report: &opsd_planning::VarianceReport) -> maud::Markup {
    let hours = |h: rust_decimal::Decimal| h.round_dp(2).normalize().to_string();
    let row = |label: String, total: &opsd_planning::VarianceLine| {
        html! {
            td { (label) }
            td class="num" { (hours(total.scheduled_hours)) }
            td class="num" data-worked=(hours(total.actual_hours)) { (hours(total.actual_hours)) }
            td class="num" { (hours(total.variance_hours)) }
            td class="num" { (money(total.scheduled_cost)) }
            td class="num" { (money(total.actual_cost)) }
            td class="num" class=[(total.variance_cost > rust_decimal::Decimal::ZERO).then_some("over")] {
                (money(total.variance_cost.abs()))
                @if total.variance_cost > rust_decimal::Decimal::ZERO { " over" }
                @else if total.variance_cost < rust_decimal::Decimal::ZERO { " under" }
            }
            td class="num" { (hours(total.overtime_hours)) }
        }
    };
    html! {
        div class="card" id="variance" {
            h2 { "Scheduled against worked" }
            table {
                (by_day_head("Scheduled and worked hours and cost by day", &[
                    "Scheduled h", "Worked h", "Variance h", "Scheduled cost", "Worked cost", "Cost variance", "Overtime h",
                ]))
                tbody {
                    @for day in &report.days {
                        tr { (row(format!("{} {}", &day.day.weekday().to_string()[..3], day.day), &day.span.total)) }
                    }
                }
                tfoot { tr { (row("Week".to_owned(), &report.totals.total)) } }
            }
            p class="note" { "Worked: closed, approved time punches. Overtime: hours past 40 in the week (FLSA); its cost includes the half-time premium." }
        }
    }
}

/// The caption (for screen readers) and head of a table of days: the day, then numeric columns.
fn by_day_head(caption: &str, columns: &[&str]) -> Markup {
    html! {
        caption class="sr-only" { (caption) }
        thead { tr { th { "Day" } @for column in columns { th class="num" { (column) } } } }
    }
}
