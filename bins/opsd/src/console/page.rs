//! The console's frame: one layout, and the pages a user who may not look gets instead of data.

use actix_web::HttpResponse;
use actix_web::http::StatusCode;
use maud::{DOCTYPE, Markup, html};

pub const STYLESHEET_PATH: &str = "/console/console.css";
const STYLESHEET: &str = include_str!("../../assets/console.css");

/// The console's sections, in the order the navigation shows them.
const SECTIONS: [(&str, &str); 6] = [
    ("week", "Week"),
    ("plans", "Plans"),
    ("incidents", "Incidents"),
    ("compliance", "Compliance"),
    ("jobs", "Jobs"),
    ("queue", "Queue"),
];

pub fn layout(section: &str, title: &str, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " · opsd console" }
                link rel="stylesheet" href=(STYLESHEET_PATH);
            }
            body {
                header {
                    strong { "opsd console" }
                    nav aria-label="Console" {
                        @for (slug, name) in SECTIONS {
                            @if slug == section {
                                a href={ "/console/" (slug) } aria-current="page" { (name) }
                            } @else {
                                a href={ "/console/" (slug) } { (name) }
                            }
                        }
                    }
                }
                main { (body) }
            }
        }
    }
}

pub fn ok(markup: Markup) -> HttpResponse {
    HttpResponse::Ok().content_type("text/html; charset=utf-8").body(markup.into_string())
}

/// A page in place of data: signed out (401), not allowed (403), or not there (404).
pub fn refusal(status: StatusCode, message: &str) -> HttpResponse {
    let title = status.canonical_reason().unwrap_or("Refused");
    let body = html! {
        h1 { (status.as_u16()) " " (title) }
        p { (message) }
    };
    HttpResponse::build(status).content_type("text/html; charset=utf-8").body(layout("", title, body).into_string())
}

/// The 503 page of a page whose data could not be read (`what` is not available right now); the
/// error goes to the log only.
pub fn unavailable(what: &str, error: impl std::fmt::Display) -> HttpResponse {
    tracing::warn!(%error, page = what, "a console page could not load");
    refusal(StatusCode::SERVICE_UNAVAILABLE, &format!("{what} not available right now."))
}

pub async fn stylesheet() -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/css; charset=utf-8")
        .insert_header(("cache-control", "public, max-age=3600"))
        .body(STYLESHEET)
}

/// Dollars with cents and thousands separators: `$12,345.60`.
pub fn money(value: rust_decimal::Decimal) -> String {
    let text = format!("{:.2}", value.round_dp(2).abs());
    let (whole, cents) = text.split_once('.').unwrap_or((&text, "00"));
    let mut grouped = String::new();
    for (i, digit) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    let sign = if value.is_sign_negative() && !value.is_zero() { "-" } else { "" };
    format!("{sign}${grouped}.{cents}")
}

/// A moment as `YYYY-MM-DD HH:MM:SS` (UTC).
pub fn when(at: time::OffsetDateTime) -> String {
    let at = at.to_offset(time::UtcOffset::UTC);
    format!("{} {:02}:{:02}:{:02}", at.date(), at.hour(), at.minute(), at.second())
}

pub fn percent(fraction: rust_decimal::Decimal) -> String {
    format!("{:.1}%", (fraction * rust_decimal::Decimal::ONE_HUNDRED).round_dp(1))
}

/// A missing KPI's reason, in words.
pub fn reason(code: Option<&str>) -> &'static str {
    match code {
        Some("no_sales") => "no sales recorded",
        Some("no_labor_hours") => "no labor hours scheduled",
        Some(_) => "not computable",
        None => "",
    }
}

#[cfg(test)]
mod tests {
    use rust_decimal::Decimal;

    #[test]
    fn money_has_cents_and_thousands_separators() {
        assert_eq!(super::money(Decimal::new(1234560, 2)), "$12,345.60");
        assert_eq!(super::money(Decimal::new(999, 0)), "$999.00");
        assert_eq!(super::money(Decimal::new(-1000000, 0)), "-$1,000,000.00");
        assert_eq!(super::money(Decimal::ZERO), "$0.00");
    }
}
