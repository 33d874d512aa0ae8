//! What the API document says about requests beyond their types: each request field's rule (length,
//! pattern, format, bounds, items), read from the constants validation checks, and a valid example
//! of each request on the demo team (`opsd seed-demo`). A client generated from the document then
//! sends what the server accepts, and a fuzzer reaches past validation.
//!
//! Rules the JSON Schema cannot state are left to the descriptions: a date not after tomorrow, a
//! week that starts on a Saturday, one contact choice, a weekday given once.

use std::ops::RangeInclusive;

use opsd_core::{MONEY_MAX, TextLength};
use opsd_incidents::{IncidentNotes, MediaUrls, NewContact};
use opsd_nudges::AnnouncementDraft;
use opsd_planning::week_plan;
use opsd_teams::{LocationSlug, NewLocation, TimeZoneName};
use rust_decimal::prelude::ToPrimitive;
use serde_json::{Value, json};

use crate::routes::{analytics, assistant, coupons, push, reports};
use crate::seed::{DEMO_LOCATION, DEMO_TEAM};

/// At least one character that is not whitespace, and no NUL (no request string may hold one).
const NOT_BLANK: &str = r"^[^\x00]*[^\s\x00][^\x00]*$";
/// No NUL: what every request string without a narrower rule must keep to.
const NO_NUL: &str = r"^[^\x00]*$";
/// An `https` URL with a DNS name: what the URL checks accept, stated narrowly.
const HTTPS_URL: &str = r"^https://([a-z0-9]+(-[a-z0-9]+)*\.)+[a-z]{2,}(/[A-Za-z0-9._~/-]*)?$";
/// A Saturday used by the examples (the demo holds its sales and punches).
const EXAMPLE_WEEK: &str = "2026-11-14";
const EXAMPLE_DATE: &str = "2026-11-20";

fn text(rule: TextLength) -> Value {
    if rule.min == 0 {
        json!({ "maxLength": rule.max })
    } else {
        json!({ "minLength": rule.min, "maxLength": rule.max, "pattern": NOT_BLANK })
    }
}

fn between(range: RangeInclusive<i64>) -> Value {
    json!({ "minimum": range.start(), "maximum": range.end() })
}

fn money() -> Value {
    json!({ "minimum": 0, "maximum": MONEY_MAX.to_f64(), "multipleOf": 0.01 })
}

fn date() -> Value {
    json!({ "format": "date" })
}

/// base64url of `bytes` bytes, unpadded or padded, with canonical trailing bits; `first` are the
/// character classes of its first characters.
fn base64url(bytes: usize, first: &[&str]) -> Value {
    let chars = (bytes * 8).div_ceil(6);
    // The last character carries the bits past the last byte, which must be zero.
    let last = match chars * 6 - bytes * 8 {
        2 => "[AEIMQUYcgkosw048]",
        4 => "[AQgw]",
        _ => "[A-Za-z0-9_-]",
    };
    let middle = chars - first.len() - 1;
    json!({ "pattern": format!("^{}[A-Za-z0-9_-]{{{middle}}}{last}=*$", first.concat()) })
}

/// A narrow form of what `NewContact` accepts, which a generator can produce without filtering: an
/// optional `+`, then digits each followed by at most one separator, within the length.
fn phone() -> Value {
    let (_, max_chars) = NewContact::PHONE_CHARS;
    let (min, max) = (NewContact::PHONE_MIN_DIGITS, (max_chars - 1) / 2);
    let separators: String = NewContact::PHONE_SYMBOLS.chars().filter(|c| !"+-".contains(*c)).collect();
    json!({ "pattern": format!("^\\+?(?:[0-9][{separators}-]?){{{min},{max}}}$") })
}

/// (schema, property, keywords): `property[]` puts them on the array's items.
fn rules() -> Vec<(&'static str, &'static str, Value)> {
    let mut rules = vec![
        ("IncidentRequest", "notes", text(IncidentNotes::LENGTH)),
        ("IncidentRequest", "mediaUrls", json!({ "maxItems": MediaUrls::MAX_URLS })),
        ("IncidentRequest", "mediaUrls[]", json!({ "maxLength": MediaUrls::MAX_URL_CHARS, "pattern": HTTPS_URL })),
        ("CommentRequest", "content", text(IncidentNotes::LENGTH)),
        ("NewLocationRequest", "name", text(NewLocation::NAME)),
        ("NewLocationRequest", "slug", json!({ "pattern": LocationSlug::PATTERN })),
        ("NewLocationRequest", "timezone", json!({ "enum": TimeZoneName::names().collect::<Vec<_>>() })),
        ("NewLocationRequest", "schedulerLocationId", text(NewLocation::SCHEDULER_ID)),
        ("ShiftReportRequest", "date", date()),
        ("ShiftReportRequest", "actualSales", money()),
        ("ShiftReportRequest", "goalSales", money()),
        ("ShiftReportRequest", "hero", text(reports::HERO)),
        ("ManagerReportRequest", "date", date()),
        ("ManagerReportRequest", "totalSales", money()),
        ("ManagerReportRequest", "employeeReviews", json!({ "maxItems": reports::MAX_REVIEWS })),
        ("EmployeeReviewRequest", "employeeName", text(reports::REVIEW_NAME)),
        ("EmployeeReviewRequest", "employeeKey", text(reports::REVIEW_KEY)),
        ("EmployeeReviewRequest", "rating", between(reports::RATINGS)),
        ("EmployeeReviewRequest", "notes", text(reports::REVIEW_NOTES)),
        ("AnnouncementRequest", "title", text(AnnouncementDraft::TITLE)),
        ("AnnouncementRequest", "body", text(AnnouncementDraft::BODY)),
        ("AnnouncementRequest", "publishAt", json!({ "format": "date-time" })),
        ("OfferRequest", "name", text(coupons::OFFER_NAME)),
        ("OfferRequest", "capacity", between(coupons::CAPACITY)),
        ("SubscribeRequest", "endpoint", json!({ "maxLength": push::MAX_ENDPOINT_CHARS, "pattern": HTTPS_URL })),
        ("UnsubscribeRequest", "endpoint", json!({ "maxLength": push::MAX_ENDPOINT_CHARS })),
        ("SubscribeRequest", "expirationTime", json!({ "minimum": 0, "maximum": push::MAX_EXPIRATION_MS })),
        // An uncompressed point starts with 0x04: `B`, then one of `A`-`P`.
        ("SubscriptionKeysRequest", "p256dh", base64url(push::P256DH_BYTES, &["B", "[A-P]"])),
        ("SubscriptionKeysRequest", "auth", base64url(push::AUTH_BYTES, &[])),
        ("ChatRequest", "messages", json!({ "minItems": 1, "maxItems": assistant::MAX_MESSAGES })),
        ("ChatRequest", "threadId", json!({ "format": "uuid" })),
        ("MessageIn", "role", json!({ "enum": ["user", "assistant"] })),
        ("MessageIn", "content", text(assistant::CONTENT)),
        (
            "MessageIn",
            "parts",
            json!({ "minItems": 1, "contains": { "type": "object", "required": ["type", "text"],
                    "properties": { "type": { "const": "text" }, "text": text(assistant::CONTENT) } } }),
        ),
        ("SalesIngestRequest", "teamId", text(analytics::TEAM_ID)),
        ("SalesIngestRequest", "rows", json!({ "maxItems": analytics::MAX_SALES_ROWS })),
        ("SalesRowRequest", "date", date()),
        ("SalesRowRequest", "guests", json!({ "minimum": 0 })),
        ("GoalsRequest", "teamId", text(analytics::TEAM_ID)),
        ("GoalsRequest", "goals", json!({ "maxItems": analytics::DAYS_OF_WEEK.count() })),
        ("GoalRequest", "dayOfWeek", between(analytics::DAYS_OF_WEEK)),
        ("GoalRequest", "salesGoal", money()),
        (
            "GoalRequest",
            "laborPctTarget",
            json!({ "minimum": 0, "maximum": analytics::MAX_LABOR_PCT.to_f64(), "multipleOf": 0.01 }),
        ),
        ("GoalRequest", "splhTarget", money()),
    ];
    // A new contact, in an incident or on its own: the fields `NewContact::parse` names.
    for (schema, [name, phone_field, email, notes]) in [
        ("IncidentRequest", ["contactName", "contactPhone", "contactEmail", "contactNotes"]),
        ("ContactRequest", ["name", "phone", "email", "notes"]),
    ] {
        rules.push((schema, name, text(NewContact::NAME)));
        rules.push((schema, phone_field, phone()));
        rules.push((schema, email, json!({ "format": "email", "maxLength": NewContact::EMAIL_MAX_CHARS })));
        rules.push((schema, notes, text(NewContact::NOTES)));
    }
    for field in ["food", "beverage", "other"] {
        rules.push(("SalesRowRequest", field, money()));
    }
    rules.extend([
        ("AvailabilityRequest", "employees", json!({ "maxItems": week_plan::MAX_AVAILABILITY_ROWS })),
        ("EmployeeAvailability", "employeeKey", json!({ "minLength": 1, "maxLength": 200, "pattern": NOT_BLANK })),
        ("EmployeeAvailability", "unavailableWeekdays[]", json!({ "minimum": 0, "maximum": 6 })),
        ("EmployeeAvailability", "unavailableDates[]", date()),
        ("EmployeeAvailability", "maxWeeklyHours", json!({ "minimum": 0, "maximum": 168 })),
        ("ProposalRequest", "weekOf", date()),
        ("PlanningRules", "maxWeeklyHours", json!({ "minimum": 1, "maximum": 80 })),
        ("ShiftTimesRequest", "shifts", json!({ "maxItems": week_plan::MAX_SHIFT_TIMES })),
        ("ShiftTime", "start", json!({ "pattern": "^([01][0-9]|2[0-3]):[0-5][0-9]$" })),
        ("ShiftTime", "hours", json!({ "minimum": 1, "maximum": 16 })),
        ("PlanningRules", "minRestHours", json!({ "minimum": 0, "maximum": 24 })),
        ("PlanningRules", "maxDaysInARow", json!({ "minimum": 1, "maximum": 7 })),
        ("PlanningRules", "minShiftHours", json!({ "minimum": 1, "maximum": 12 })),
        ("PlanningRules", "noticeDays", json!({ "minimum": 0, "maximum": 28 })),
        ("PlanningRules", "changePremium", json!({ "minimum": 0, "maximum": 1000 })),
        ("PlanningRules", "preferenceWeight", json!({ "minimum": 0, "maximum": 1000 })),
        ("PlanningRules", "understaffedSalesAtRiskPct", json!({ "minimum": 0, "maximum": 200 })),
        ("ProposalRequest", "timeLimitSeconds", between(1..=i64::from(*week_plan::TIME_LIMIT_SECONDS.end()))),
    ]);
    rules
}

/// Query and path parameters, by name wherever they appear: (name, keywords, example).
fn parameters() -> Vec<(&'static str, Value, Value)> {
    vec![
        ("teamId", text(analytics::TEAM_ID), json!(DEMO_TEAM)),
        ("weekOf", date(), json!(EXAMPLE_WEEK)),
        ("from", date(), json!("2026-11-01")),
        ("to", date(), json!(EXAMPLE_DATE)),
        ("locationId", json!({ "format": "uuid" }), json!(DEMO_LOCATION)),
        ("location_slug", json!({ "pattern": LocationSlug::PATTERN }), json!("demo-downtown")),
    ]
}

/// Query parameters the handlers require (they are optional in the types, so that a missing one is
/// named in a validation error like a bad one).
const REQUIRED: &[(&str, &str)] = &[
    ("/api/analytics/optimization", "teamId"),
    ("/api/analytics/optimization", "weekOf"),
    ("/api/analytics/variance", "teamId"),
    ("/api/analytics/variance", "weekOf"),
    ("/api/analytics/forecast", "teamId"),
    ("/api/analytics/forecast", "weekOf"),
    ("/api/analytics/goals", "teamId"),
];

/// A valid request of each schema on the demo team.
fn examples() -> Vec<(&'static str, Value)> {
    let location = DEMO_LOCATION.to_string();
    vec![
        (
            "IncidentRequest",
            json!({ "locationId": location, "type": "Maintenance", "severity": "low", "notes": "Walk-in door sticks",
                    "contactMode": "new", "contactName": "Dana Lee", "contactPhone": "+1 312 555 0100" }),
        ),
        ("ContactRequest", json!({ "name": "Dana Lee", "email": "dana@example.com", "notes": "Prefers texts" })),
        ("CommentRequest", json!({ "content": "The technician comes at 3 pm" })),
        ("StatusRequest", json!({ "status": "investigating" })),
        (
            "NewLocationRequest",
            json!({ "name": "Uptown", "slug": "uptown", "timezone": "America/Chicago", "schedulerLocationId": "2001" }),
        ),
        (
            "ShiftReportRequest",
            json!({ "locationId": location, "date": EXAMPLE_DATE, "shift": "evening", "actualSales": 2450.5,
                    "goalSales": 2300, "hero": "Maria" }),
        ),
        (
            "ManagerReportRequest",
            json!({ "locationId": location, "date": EXAMPLE_DATE, "totalSales": 8120.75,
                    "employeeReviews": [{ "employeeName": "Maria", "rating": 5, "notes": "Ran the pass" }] }),
        ),
        (
            "AnnouncementRequest",
            json!({ "title": "Holiday hours", "body": "We close at 6 pm on the 24th.", "publishAt": "2026-12-01T09:00:00Z",
                    "locationId": location }),
        ),
        ("OfferRequest", json!({ "locationId": location, "name": "Free dessert", "capacity": 50 })),
        (
            "SubscribeRequest",
            json!({ "endpoint": "https://fcm.googleapis.com/fcm/send/demo-device",
                    "keys": { "p256dh": format!("BA{}", "A".repeat(85)), "auth": "A".repeat(22) } }),
        ),
        ("UnsubscribeRequest", json!({ "endpoint": "https://fcm.googleapis.com/fcm/send/demo-device" })),
        ("SendRequest", json!({ "title": "Hello", "body": "From opsd", "url": "/incidents" })),
        ("ChatRequest", json!({ "messages": [{ "role": "user", "content": "How did last week go?" }] })),
        (
            "SalesIngestRequest",
            json!({ "teamId": DEMO_TEAM, "rows": [{ "locationId": location, "date": EXAMPLE_DATE, "block": "Dinner",
                    "food": 2100.5, "beverage": 640, "other": 35, "guests": 84 }] }),
        ),
        (
            "GoalsRequest",
            json!({ "teamId": DEMO_TEAM, "locationId": location, "goals": [{ "dayOfWeek": 0, "salesGoal": 5200,
                    "laborPctTarget": 28, "splhTarget": 55 }] }),
        ),
        ("TeamSettingsRequest", json!({ "chatWebhookUrl": null })),
        (
            "AvailabilityRequest",
            json!({ "locationId": location, "employees": [{ "employeeKey": "demo-0-0", "unavailableWeekdays": [2],
                    "preferredBlocks": ["Dinner"], "maxWeeklyHours": 32 }] }),
        ),
        ("ProposalRequest", json!({ "locationId": location, "weekOf": EXAMPLE_WEEK, "timeLimitSeconds": 5 })),
        (
            "ShiftTimesRequest",
            json!({ "locationId": location, "shifts": [{ "department": "FOH", "block": "Dinner", "start": "16:30",
                    "hours": 6 }] }),
        ),
        (
            "PlanningRules",
            json!({ "maxWeeklyHours": 40, "minRestHours": 11, "maxDaysInARow": 6, "minShiftHours": 4,
                    "noticeDays": 14, "changePremium": 15, "preferenceWeight": 5, "understaffedSalesAtRiskPct": 70 }),
        ),
    ]
}

fn property<'a>(document: &'a mut Value, schema: &str, property: &str) -> &'a mut Value {
    let (name, items) = property.strip_suffix("[]").map_or((property, false), |name| (name, true));
    let target = &mut document["components"]["schemas"][schema]["properties"][name];
    assert!(target.is_object(), "the schema {schema} has the property {name}");
    if items { &mut target["items"] } else { target }
}

fn merge(target: &mut Value, keywords: &Value) {
    for (key, value) in keywords.as_object().expect("keywords are an object") {
        target[key] = value.clone();
    }
}

/// Schema-level rules: (schema, keywords).
fn objects() -> Vec<(&'static str, Value)> {
    // The contact choice: with `none` (or no mode) no contact field; with `existing` the contact's
    // id and nothing else; with `new` a name and a phone or an e-mail, and no id. A field that must
    // be absent has the schema `{"not": {}}`, which no value passes: the boolean schema `false`
    // says the same, but the generators and diff tools clients use stop on it.
    let properties = |mode: Value, absent: &[&str]| -> Value {
        let mut properties = serde_json::Map::from_iter([("contactMode".to_owned(), mode)]);
        properties.extend(absent.iter().map(|field| (field.to_string(), json!({ "not": {} }))));
        Value::Object(properties)
    };
    let new_fields = ["contactName", "contactPhone", "contactEmail", "contactNotes"];
    let contact_choice = json!({ "anyOf": [
        { "properties": properties(json!({ "enum": ["none"] }), &[&new_fields[..], &["contactId"]].concat()) },
        { "required": ["contactMode", "contactId"], "properties": properties(json!({ "const": "existing" }), &new_fields) },
        { "required": ["contactMode", "contactName"], "properties": properties(json!({ "const": "new" }), &["contactId"]),
          "anyOf": [{ "required": ["contactPhone"] }, { "required": ["contactEmail"] }] },
    ] });
    vec![
        ("IncidentRequest", contact_choice),
        // A message's text is its `content`, or the text parts of a `UIMessage`.
        ("MessageIn", json!({ "anyOf": [{ "required": ["content"] }, { "required": ["parts"] }] })),
    ]
}

/// Whether a property's schema is a string with no rule of its own on the characters.
fn is_plain_string(schema: &Value) -> bool {
    let string = schema["type"] == "string" || schema["type"].as_array().is_some_and(|t| t.contains(&json!("string")));
    string && schema.get("pattern").is_none() && schema.get("enum").is_none() && schema.get("format").is_none()
}

/// Sets every rule and example on the document.
pub fn apply(document: &mut Value) {
    for (schema, name, keywords) in rules() {
        merge(property(document, schema, name), &keywords);
    }
    for (schema, keywords) in objects() {
        merge(&mut document["components"]["schemas"][schema], &keywords);
    }
    // The body's NUL rule (`extract::json`), on every request string that has no narrower rule.
    for (name, schema) in document["components"]["schemas"].as_object_mut().expect("schemas") {
        if !(name.ends_with("Request") || name == "MessageIn") {
            continue;
        }
        for property in schema["properties"].as_object_mut().into_iter().flat_map(|p| p.values_mut()) {
            if is_plain_string(property) {
                property["pattern"] = json!(NO_NUL);
            }
        }
    }
    for (schema, example) in examples() {
        let target = &mut document["components"]["schemas"][schema];
        assert!(target.is_object(), "the schema {schema} exists");
        target["example"] = example;
    }
    let (parameters, mut seen) = (parameters(), std::collections::HashSet::new());
    for (path, item) in document["paths"].as_object_mut().expect("paths") {
        for operation in item.as_object_mut().expect("a path item").values_mut() {
            let listed = operation.get_mut("parameters").and_then(Value::as_array_mut);
            for parameter in listed.into_iter().flatten() {
                if let Some((name, keywords, example)) = parameters.iter().find(|(name, ..)| parameter["name"] == *name)
                {
                    merge(&mut parameter["schema"], keywords);
                    parameter["example"] = example.clone();
                    seen.insert(*name);
                }
                if REQUIRED.iter().any(|(p, name)| p == path && parameter["name"] == *name) {
                    parameter["required"] = json!(true);
                }
            }
        }
    }
    assert_eq!(seen.len(), parameters.len(), "every parameter rule names a parameter of the document");
}
