//! The compliance page (team admins): per location, a grid of the week's days by report (the three
//! shifts and the manager's), each cell filed, missing, not yet due or not owed, told apart by a
//! sign as well as a colour; and the totals. Last week by default, as the weekly compliance job
//! counts it; `?week=current` shows the week so far.

use actix_web::{HttpRequest, HttpResponse, web};
use maud::{Markup, html};
use opsd_nudges::{ComplianceWeek, Slot, WeekCompliance};
use serde::Deserialize;

use crate::console::access::{Need, allow, team};
use crate::console::page::{layout, ok, unavailable};
use crate::state::AppState;

const REPORTS: [&str; 4] = ["Morning", "Afternoon", "Evening", "Manager"];

#[derive(Deserialize)]
pub struct ComplianceQuery {
    week: Option<String>,
}

/// A cell's sign, word and class. The sign is shown and the word is the cell's name, read out.
fn cell(slot: Slot) -> (&'static str, &'static str, &'static str) {
    match slot {
        Slot::Filed => ("✓", "filed", "filed"),
        Slot::Missing => ("✗", "missing", "missing"),
        Slot::NotYetDue => ("…", "not yet due", "due"),
        Slot::NotOwed => ("–", "nothing owed", "none"),
    }
}

fn grid(week: &WeekCompliance) -> Markup {
    let not_yet_due = week.days.iter().flat_map(|(_, slots)| slots).filter(|s| **s == Slot::NotYetDue).count();
    html! {
        section class="card" data-location=(week.location.0) {
            h2 { (week.location_name) }
            p class="totals" {
                "Shift reports filed " strong data-total="shift" { (week.filed_shift) " of " (week.expected_shift) }
                " · manager reports filed " strong data-total="manager" { (week.filed_manager) " of " (week.expected_manager) }
                " · " span class=[(!week.missing.is_empty()).then_some("alarm")] { (week.missing.len()) " missing" }
                @if not_yet_due > 0 { " · " (not_yet_due) " not yet due" }
            }
            table class="grid" {
                caption class="sr-only" { "Reports of " (week.location_name) ", week of " (week.week_start) }
                thead { tr {
                    th scope="col" { "Report" }
                    @for (date, _) in &week.days {
                        th scope="col" class="day" {
                            (date.weekday().to_string()[..3]) " " span class="date" { (date.month() as u8) "/" (date.day()) }
                        }
                    }
                } }
                tbody {
                    @for (row, report) in REPORTS.iter().enumerate() {
                        tr data-report=(report.to_lowercase()) {
                            th scope="row" { (report) }
                            // Small cells: a team of many locations has 28 per location.
                            @for (_, slots) in &week.days {
                                @let (sign, word, class) = cell(slots[row]);
                                td class={ "slot " (class) } aria-label=(word) { (sign) }
                            }
                        }
                    }
                }
            }
        }
    }
}

pub async fn page(req: HttpRequest, state: web::Data<AppState>, query: web::Query<ComplianceQuery>) -> HttpResponse {
    let caller = match allow(&req, Need::Admin).await {
        Ok(caller) => caller,
        Err(refused) => return refused,
    };
    let which = if query.week.as_deref() == Some("current") { ComplianceWeek::Current } else { ComplianceWeek::Last };
    let weeks = match state.nudges.compliance(&team(&caller), which).await {
        Ok(weeks) => weeks,
        Err(error) => return unavailable("Compliance is", error),
    };
    let title = if which == ComplianceWeek::Last { "Last week's reports" } else { "This week's reports so far" };
    let body = html! {
        h1 { (title) @if let Some(week) = weeks.first() { " · week of " (week.week_start) } }
        nav class="pickers" aria-label="Week" {
            @if which == ComplianceWeek::Last {
                a href="/console/compliance?week=current" { "This week so far →" }
            } @else {
                a href="/console/compliance" { "← Last week" }
            }
        }
        p class="legend" {
            @for slot in [Slot::Filed, Slot::Missing, Slot::NotYetDue, Slot::NotOwed] {
                @let (sign, word, class) = cell(slot);
                span { span class={ "slot " (class) } aria-hidden="true" { (sign) } " " (word) }
            }
        }
        @if weeks.is_empty() { p { "The team has no locations yet." } }
        @for week in &weeks { (grid(week)) }
    };
    ok(layout("compliance", "Compliance", body))
}
