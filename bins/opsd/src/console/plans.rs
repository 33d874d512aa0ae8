//! The schedule proposals (team admins): the list with a form to plan a week, and one proposal as a
//! manager reviews it: employees by days, totals by day and employee, hours needed against planned by
//! day and block, the week's figures against the goals, the changes to a published week and what bound
//! the plan. The same service as `/api/planning/schedule-proposals`.

use std::collections::BTreeMap;

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use maud::html;
use opsd_core::{LocationId, PageRequest, ServiceError, Week, parse_iso_date};
use opsd_planning::week_plan::{DEFAULT_TIME_LIMIT_SECONDS, PlanRefusal, Proposal, ProposalStatus};
use rust_decimal::Decimal;
use serde::Deserialize;
use uuid::Uuid;

use crate::console::access::{Need, allow};
use crate::console::chart::{self, Slot};
use crate::console::page::{layout, money, ok, refusal, unavailable, when};
use crate::state::AppState;

fn hours(value: Decimal) -> String {
    value.round_dp(2).normalize().to_string()
}

fn clock(at: time::OffsetDateTime, offset: time::UtcOffset) -> String {
    let local = at.to_offset(offset);
    format!("{:02}:{:02}", local.hour(), local.minute())
}

pub async fn list(req: HttpRequest, state: web::Data<AppState>) -> HttpResponse {
    let caller = match allow(&req, Need::Admin).await {
        Ok(caller) => caller,
        Err(refused) => return refused,
    };
    let page = PageRequest { limit: 50, after: None };
    let (locations, proposals) = match tokio::try_join!(
        async { state.teams.list_locations(&caller).await.map_err(crate::ApiError::from) },
        async { state.week_plans.proposals(&caller, None, page).await.map_err(crate::ApiError::from) },
    ) {
        Ok(found) => found,
        Err(error) => return unavailable("The proposals are", error),
    };
    let name = |id: LocationId| locations.iter().find(|l| l.id == id).map_or("—".to_owned(), |l| l.name.clone());
    let next_week = Week::containing(time::OffsetDateTime::now_utc().date() + time::Duration::days(7)).start();
    let body = html! {
        h1 { "Schedule proposals" }
        form class="pickers" method="post" action="/console/plans" {
            label { "Location"
                select name="locationId" required {
                    @for l in &locations { option value=(l.id.0) { (l.name) } }
                }
            }
            label { "Week starting (Saturday)" input type="date" name="weekOf" value=(next_week) required; }
            button type="submit" { "Plan the week" }
        }
        p class="note" { "opsd plans the week from the forecast, the staff and wages of the last 8 weeks and each employee's availability, within 40 hours a week, 10 hours' rest and 6 days in a row, in up to " (DEFAULT_TIME_LIMIT_SECONDS) " seconds." }
        div class="card" {
            table {
                caption class="sr-only" { "Proposals, latest first" }
                thead { tr { th { "Location" } th { "Week" } th { "Status" } th { "Asked" } } }
                tbody {
                    @for p in &proposals.items {
                        tr data-proposal=(p.id) {
                            td { a href={ "/console/plans/" (p.id) } { (name(p.location)) } }
                            td { (p.week.start()) }
                            td data-status=(p.status.as_str()) { (status_words(p)) }
                            td { (when(p.created_at)) }
                        }
                    }
                }
            }
            @if proposals.items.is_empty() { p class="note" { "No proposal yet." } }
        }
    };
    ok(layout("plans", "Schedule proposals", body))
}

fn status_words(proposal: &Proposal) -> String {
    match proposal.status {
        ProposalStatus::Solving => "solving…".into(),
        ProposalStatus::Ready => "ready".into(),
        ProposalStatus::Failed => format!("failed: {}", proposal.reason.as_deref().unwrap_or("")),
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProposeForm {
    location_id: String,
    week_of: String,
}

/// The form: queues the proposal, then shows it (POST, redirect, GET).
pub async fn propose(req: HttpRequest, state: web::Data<AppState>, form: web::Form<ProposeForm>) -> HttpResponse {
    let caller = match allow(&req, Need::Admin).await {
        Ok(caller) => caller,
        Err(refused) => return refused,
    };
    let Ok(location) = Uuid::parse_str(&form.location_id) else {
        return refusal(StatusCode::BAD_REQUEST, "That is not a location.");
    };
    let week = match parse_iso_date("weekOf", &form.week_of).and_then(|date| Week::starting("weekOf", date)) {
        Ok(week) => week,
        Err(error) => return refusal(StatusCode::BAD_REQUEST, &format!("weekOf {}.", error.message)),
    };
    match state.week_plans.propose(&caller, LocationId(location), week, DEFAULT_TIME_LIMIT_SECONDS).await {
        Ok(proposal) => {
            state.proposal_wake.notify_one();
            HttpResponse::SeeOther().insert_header(("location", format!("/console/plans/{}", proposal.id))).finish()
        }
        Err(ServiceError::NotFound) => refusal(StatusCode::NOT_FOUND, "No such location in your team."),
        Err(ServiceError::Domain(refused)) => refusal(StatusCode::CONFLICT, &refusal_words(&refused)),
        Err(error) => unavailable("Planning is", error),
    }
}

fn refusal_words(refused: &PlanRefusal) -> String {
    match refused {
        PlanRefusal::InsufficientHistory => {
            "This location has under 4 weeks of sales before that week: there is nothing to forecast from yet.".into()
        }
        PlanRefusal::NoStaff => "Nobody worked at this location in the 8 weeks before that week.".into(),
        PlanRefusal::NoWage => "No shift of the 8 weeks before that week has a wage.".into(),
        other => crate::errors::sentence(other),
    }
}

pub async fn detail(req: HttpRequest, state: web::Data<AppState>, id: web::Path<Uuid>) -> HttpResponse {
    let caller = match allow(&req, Need::Admin).await {
        Ok(caller) => caller,
        Err(refused) => return refused,
    };
    let (proposal, locations) = match tokio::try_join!(
        async { state.week_plans.proposal(&caller, *id).await.map_err(crate::ApiError::from) },
        async { state.teams.list_locations(&caller).await.map_err(crate::ApiError::from) },
    ) {
        Ok(found) => found,
        Err(crate::ApiError::NotFound) => return refusal(StatusCode::NOT_FOUND, "No such proposal in your team."),
        Err(error) => return unavailable("The proposal is", error),
    };
    let location = locations.iter().find(|l| l.id == proposal.location);
    let title = format!("{} · week of {}", location.map_or("Proposal", |l| l.name.as_str()), proposal.week.start());
    let Some(result) = &proposal.result else {
        let body = html! {
            h1 { (title) }
            p data-status=(proposal.status.as_str()) { (status_words(&proposal)) }
            @if proposal.status == ProposalStatus::Solving {
                p class="note" { "The engine is planning this week; reload the page in a few seconds." }
            }
        };
        return ok(layout("plans", &title, body));
    };
    let zone = location.and_then(|l| time_tz::timezones::get_by_name(l.timezone.as_str()));
    let offset_at = |at: time::OffsetDateTime| {
        zone.map_or(time::UtcOffset::UTC, |z| time_tz::OffsetDateTimeExt::to_timezone(&at, z).offset())
    };
    let days = proposal.week.days();
    // Employees in the order they first appear, each with their shift of each day.
    let mut employees: Vec<(&str, &str)> = Vec::new();
    for s in &result.shifts {
        if !employees.iter().any(|(key, _)| *key == s.employee_key) {
            employees.push((&s.employee_key, &s.employee_name));
        }
    }
    let mut by_day: BTreeMap<time::Date, (Decimal, Decimal)> = BTreeMap::new();
    for s in &result.shifts {
        let day = by_day.entry(s.date).or_default();
        day.0 += s.hours;
        day.1 += s.cost;
    }
    let slots: Vec<Slot> = days
        .iter()
        .flat_map(|date| {
            let lines: Vec<_> = result.coverage.iter().filter(|c| c.date == *date).collect();
            let mut blocks: Vec<_> = lines.iter().map(|c| c.block).collect();
            blocks.dedup();
            blocks
                .into_iter()
                .map(|block| {
                    let of_block = lines.iter().filter(|c| c.block == block);
                    Slot {
                        label: format!("{} {}", &date.weekday().to_string()[..3], block.as_str()),
                        planned: of_block.clone().map(|c| c.hours_planned).sum(),
                        needed: of_block.map(|c| c.hours_needed).sum(),
                    }
                })
                .collect::<Vec<_>>()
        })
        .collect();
    let pct = |value: Option<Decimal>| value.map_or("—".to_owned(), |v| format!("{}%", v.round_dp(1)));
    let body = html! {
        h1 { (title) }
        div class="tiles" {
            div class="tile" data-kpi="sales" { div { "Projected sales" } div class="value" { (money(result.projected_sales)) } }
            div class="tile" data-kpi="laborCost" {
                div { "Labor cost" } div class="value" { (money(result.labor_cost)) }
                div class="note" { (hours(result.hours)) " hours" }
            }
            div class="tile" data-kpi="laborPct" {
                div { "Labor %" } div class="value" { (pct(result.labor_pct)) }
                @if let Some(target) = result.labor_pct_target { div class="note" { "target " (target.round_dp(1)) "%" } }
            }
            div class="tile" data-kpi="splh" {
                div { "Sales per labor hour" }
                div class="value" { @if let Some(splh) = result.splh { (money(splh)) } @else { "—" } }
                @if let Some(target) = result.splh_target { div class="note" { "target " (money(target)) } }
            }
        }
        div class="card" { h2 { "Hours needed against planned" } (chart::needs(&slots)) }
        div class="card" {
            h2 { "The week" }
            table class="grid roster" {
                caption class="sr-only" { "Each employee's shift by day, with their hours and cost" }
                thead { tr {
                    th { "Employee" }
                    @for date in &days { th class="day" { (&date.weekday().to_string()[..3]) br; span class="date" { (date) } } }
                    th class="num" { "Hours" } th class="num" { "Cost" }
                } }
                tbody {
                    @for (key, name) in &employees {
                        @let theirs: Vec<_> = result.shifts.iter().filter(|s| s.employee_key == *key).collect();
                        tr data-employee=(key) {
                            th scope="row" { (name) }
                            @for date in &days {
                                @match theirs.iter().find(|s| s.date == *date) {
                                    Some(s) => td class="shift" data-block=(s.block.as_str()) {
                                        (s.block.as_str()) " " (s.department.as_str()) br;
                                        span class="note" { (clock(s.start, offset_at(s.start))) "–" (clock(s.end, offset_at(s.end))) }
                                    },
                                    None => td class="off" { "off" },
                                }
                            }
                            td class="num" { (hours(theirs.iter().map(|s| s.hours).sum())) }
                            td class="num" { (money(theirs.iter().map(|s| s.cost).sum())) }
                        }
                    }
                }
                tfoot { tr {
                    th scope="row" { "Day" }
                    @for date in &days {
                        @let (h, cost) = by_day.get(date).copied().unwrap_or_default();
                        td class="num" { (hours(h)) " h" br; span class="note" { (money(cost)) } }
                    }
                    td class="num" { (hours(result.hours)) } td class="num" { (money(result.labor_cost)) }
                } }
            }
        }
        div class="card" {
            table id=(chart::NEEDS_ID) {
                caption { "Hours needed and planned by day, block and department" }
                thead { tr { th { "Day" } th { "Block" } th { "Department" } th class="num" { "Needed h" } th class="num" { "Planned h" } th { "Short or over" } } }
                tbody {
                    @for c in &result.coverage {
                        tr {
                            td { (&c.date.weekday().to_string()[..3]) " " (c.date) } td { (c.block.as_str()) } td { (c.department.as_str()) }
                            td class="num" { (hours(c.hours_needed)) } td class="num" { (hours(c.hours_planned)) }
                            td {
                                @if c.hours_planned + Decimal::ONE < c.hours_needed { span class="alarm" { "short " (hours(c.hours_needed - c.hours_planned)) " h" } }
                                @else if c.hours_planned > c.hours_needed + Decimal::from(4) { "over " (hours(c.hours_planned - c.hours_needed)) " h" }
                            }
                        }
                    }
                }
            }
        }
        @if !result.changes.is_empty() {
            div class="card" id="changes" {
                h2 { "Changes to the published week" }
                p class="note" { "Inside the notice period each change owes the employee a premium; the plan makes one only where it is worth more." }
                table {
                    thead { tr { th { "Employee" } th { "Day" } th { "Change" } th { "Published" } th { "Proposed" } th class="num" { "Premium" } } }
                    tbody {
                        @for c in &result.changes {
                            tr {
                                td { (c.employee_key) } td { (c.date) } td { (c.kind.as_str()) }
                                td { @if let Some((d, b)) = c.from { (b.as_str()) " " (d.as_str()) } @else { "off" } }
                                td { @if let Some((d, b)) = c.to { (b.as_str()) " " (d.as_str()) } @else { "off" } }
                                td class="num" { (money(c.premium)) }
                            }
                        }
                    }
                    tfoot { tr { th scope="row" colspan="5" { "Premiums" } td class="num" { (money(result.change_premiums())) } } }
                }
            }
        }
        div class="card" {
            h2 { "How it was solved" }
            p {
                "Status " strong data-solver=(result.solver.status.name()) { (result.solver.status.name()) }
                ", objective " (money(Decimal::new(result.solver.objective, 2)))
                ", lower bound " (money(Decimal::new(result.solver.bound, 2)))
                ", gap " (format!("{:.1}%", result.solver.gap * 100.0))
                ", " (format!("{:.1}", result.solver.seconds)) " s."
            }
            p class="note" { "The objective is the week's wages, plus the sales at risk where a shift runs short, plus the preferences and published shifts not kept." }
            @if !result.binding_rules.is_empty() {
                ul {
                    @for rule in &result.binding_rules {
                        li { (rule_words(&rule.rule)) ": " (rule.employees.join(", ")) }
                    }
                }
            }
        }
    };
    ok(layout("plans", &title, body))
}

fn rule_words(rule: &str) -> &'static str {
    match rule {
        "max_weekly_hours" => "At 40 hours (or their own maximum), kept from a short shift",
        "max_days_in_a_row" => "At 6 days in a row, kept from a short shift",
        "min_rest" => "Kept from a short shift by the 10 hours' rest",
        "unavailable" => "Unavailable on a day a shift ran short",
        _ => "Another rule",
    }
}
