//! The compliance page (team admins): last week's expected and filed reports per location, as the
//! weekly compliance job counts them, with what is missing.

use actix_web::{HttpRequest, HttpResponse, web};
use maud::html;
use opsd_nudges::Missing;

use crate::console::access::{Need, allow, team};
use crate::console::page::{layout, ok, unavailable};
use crate::state::AppState;

pub async fn page(req: HttpRequest, state: web::Data<AppState>) -> HttpResponse {
    let caller = match allow(&req, Need::Admin).await {
        Ok(caller) => caller,
        Err(refused) => return refused,
    };
    let weeks = match state.nudges.compliance(&team(&caller)).await {
        Ok(weeks) => weeks,
        Err(error) => return unavailable("Compliance is", error),
    };
    let body = html! {
        h1 { "Last week's reports" }
        @if weeks.is_empty() { p { "The team has no locations yet." } }
        div class="card" {
            table {
                thead { tr {
                    th { "Location" } th { "Week of" } th class="num" { "Shift reports filed" }
                    th class="num" { "Manager reports filed" } th { "Missing" }
                } }
                tbody {
                    @for week in &weeks {
                        tr data-location=(week.location.0) {
                            td { (week.location_name) }
                            td { (week.week_start) }
                            td class="num" { (week.filed_shift) " of " (week.expected_shift) }
                            td class="num" { (week.filed_manager) " of " (week.expected_manager) }
                            td {
                                @if week.missing.is_empty() { span class="ok" { "nothing" } }
                                @for missing in week.missing.iter().take(12) {
                                    @match missing {
                                        Missing::ShiftReport(date, shift) => { span class="alarm" { (date) " " (shift.as_str()) } " " }
                                        Missing::ManagerReport(date) => { span class="alarm" { (date) " manager" } " " }
                                    }
                                }
                                @if week.missing.len() > 12 { "and " (week.missing.len() - 12) " more" }
                            }
                        }
                    }
                }
            }
        }
    };
    ok(layout("compliance", "Compliance", body))
}
