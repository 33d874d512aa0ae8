//! A local 7shifts v2 API: shifts per location (published and draft listings, cursor pages of two),
//! time punches per location (`modified_since`, `clocked_in[gte]`, `include_deleted`), users, roles
//! and departments, with failures to inject per location.

use std::borrow::Borrow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use time::format_description::well_known::Rfc3339;
use wiremock::matchers::{header, method, path_regex};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

pub const TOKEN: &str = "7shifts-test-token";
pub const COMPANY: &str = "1";

struct State {
    page_size: usize,
    shifts: HashMap<String, Vec<Value>>,
    punches: HashMap<String, Vec<Value>>,
    /// The query of each time-punch listing's first page, in order.
    punch_queries: Vec<HashMap<String, String>>,
    failing: HashMap<String, u16>,
    stalled: HashMap<String, std::time::Duration>,
    throttle_next: u32,
    requests: u32,
    next_id: i64,
    created: u32,
    fail_creates: u32,
}

impl Default for State {
    fn default() -> Self {
        // Small pages, so tests walk the cursor.
        Self {
            page_size: 2,
            shifts: HashMap::new(),
            punches: HashMap::new(),
            punch_queries: Vec::new(),
            failing: HashMap::new(),
            stalled: HashMap::new(),
            throttle_next: 0,
            requests: 0,
            next_id: 10_000,
            created: 0,
            fail_creates: 0,
        }
    }
}

#[derive(Clone, Default)]
pub struct Fake7Shifts {
    state: Arc<Mutex<State>>,
}

pub struct Fake7ShiftsServer {
    pub server: MockServer,
    pub fake: Fake7Shifts,
}

/// A shift as 7shifts lists it.
pub fn shift(id: i64, user: i64, role: i64, start: &str, end: &str, wage_cents: i64, draft: bool) -> Value {
    json!({
        "id": id, "user_id": user, "role_id": role, "location_id": 0, "company_id": 1, "department_id": null,
        "start": start, "end": end, "hourly_wage": wage_cents, "draft": draft, "deleted": false, "open": false,
        "publish_status": if draft { "draft" } else { "published" }, "notes": "", "breaks": [],
        "created": "2026-11-01T00:00:00Z", "modified": "2026-11-01T00:00:00Z",
    })
}

/// A break of a time punch, as 7shifts lists it.
pub fn punch_break(id: i64, start: &str, end: &str, paid: bool) -> Value {
    json!({ "id": id, "user_id": 7, "custom_break_id": null, "paid": paid, "in": start, "out": end, "deleted": false })
}

/// A time punch as the 7shifts REST listing shows it: UTC timestamps, `hourly_wage` in cents.
pub fn punch(id: i64, user: i64, role: i64, clocked_in: &str, clocked_out: Option<&str>, approved: bool) -> Value {
    json!({
        "id": id, "company_id": 1, "shift_id": 0, "user_id": user, "role_id": role, "location_id": 0,
        "department_id": null, "hourly_wage": 1550, "approved": approved, "clocked_in": clocked_in,
        "clocked_out": clocked_out, "notes": "", "auto_clocked_out": false, "clocked_in_offline": false,
        "clocked_out_offline": false, "tips": 0, "created": clocked_in, "modified": clocked_in, "deleted": false,
        "editable_punch": true, "pos_type": null, "breaks": [],
    })
}

impl Fake7Shifts {
    /// The location's punches; each one's `modified` decides whether a `modified_since` listing holds it.
    pub fn set_punches(&self, location: &str, punches: Vec<Value>) {
        self.state.lock().unwrap().punches.insert(location.to_owned(), punches);
    }

    pub fn punches(&self, location: &str) -> Vec<Value> {
        self.state.lock().unwrap().punches.get(location).cloned().unwrap_or_default()
    }

    /// The query of each time-punch listing (its first page), in order.
    pub fn punch_queries(&self) -> Vec<HashMap<String, String>> {
        self.state.lock().unwrap().punch_queries.clone()
    }

    pub fn set_shifts(&self, location: &str, shifts: Vec<Value>) {
        self.state.lock().unwrap().shifts.insert(location.to_owned(), shifts);
    }

    pub fn fail_location(&self, location: &str, status: u16) {
        self.state.lock().unwrap().failing.insert(location.to_owned(), status);
    }

    pub fn heal_location(&self, location: &str) {
        let mut state = self.state.lock().unwrap();
        state.failing.remove(location);
        state.stalled.remove(location);
    }

    /// The location's shift listings answer only after `delay`, as a provider that hangs.
    pub fn stall_location(&self, location: &str, delay: std::time::Duration) {
        self.state.lock().unwrap().stalled.insert(location.to_owned(), delay);
    }

    /// The next `times` requests answer 429 with `Retry-After: 1`.
    pub fn throttle(&self, times: u32) {
        self.state.lock().unwrap().throttle_next = times;
    }

    /// Pages as large as the client asks (up to 500), as the real API does.
    pub fn use_requested_page_size(&self) {
        self.state.lock().unwrap().page_size = 500;
    }

    pub fn requests(&self) -> u32 {
        self.state.lock().unwrap().requests
    }

    /// Shifts created through `POST .../shifts`.
    pub fn created(&self) -> u32 {
        self.state.lock().unwrap().created
    }

    /// The next `times` creates keep the shift but answer 500.
    pub fn fail_creates(&self, times: u32) {
        self.state.lock().unwrap().fail_creates = times;
    }

    pub fn shifts(&self, location: &str) -> Vec<Value> {
        self.state.lock().unwrap().shifts.get(location).cloned().unwrap_or_default()
    }
}

fn page<V: Borrow<Value>>(items: &[V], request: &Request, page_size: usize) -> ResponseTemplate {
    let query: HashMap<String, String> = request.url.query_pairs().into_owned().collect();
    let start: usize = query.get("cursor").and_then(|c| c.parse().ok()).unwrap_or(0);
    let limit: usize = query.get("limit").and_then(|l| l.parse().ok()).unwrap_or(100);
    let end = (start + limit.min(page_size)).min(items.len());
    let next = if end < items.len() { json!(end.to_string()) } else { Value::Null };
    ResponseTemplate::new(200).set_body_json(json!({
        "data": items[start..end].iter().map(Borrow::borrow).collect::<Vec<&Value>>(), "meta": { "cursor": { "current": null, "prev": null, "next": next, "count": items.len() } },
    }))
}

impl Respond for Fake7Shifts {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let mut state = self.state.lock().unwrap();
        state.requests += 1;
        if state.throttle_next > 0 {
            state.throttle_next -= 1;
            return ResponseTemplate::new(429).insert_header("retry-after", "1");
        }
        let query: HashMap<String, String> = request.url.query_pairs().into_owned().collect();
        let resource = request.url.path().rsplit('/').next().unwrap_or_default().to_owned();
        let size = state.page_size;
        match resource.as_str() {
            "shifts" => {
                let location = query.get("location_id").cloned().unwrap_or_default();
                if let Some(status) = state.failing.get(&location) {
                    return ResponseTemplate::new(*status).set_body_string("{\"error\":\"internal\"}");
                }
                let stall = state.stalled.get(&location).copied();
                let drafts = query.get("draft").is_some_and(|d| d == "true");
                let user = query.get("user_id").cloned();
                let since = query.get("start[gte]").and_then(|v| time::OffsetDateTime::parse(v, &Rfc3339).ok());
                let until = query.get("start[lte]").and_then(|v| time::OffsetDateTime::parse(v, &Rfc3339).ok());
                let starts =
                    |s: &Value| time::OffsetDateTime::parse(s["start"].as_str().unwrap_or_default(), &Rfc3339).ok();
                // References only: cloning every shift for each page made the fake quadratic.
                let items: Vec<&Value> = state
                    .shifts
                    .get(&location)
                    .map(|shifts| {
                        shifts
                            .iter()
                            .filter(|s| s["draft"].as_bool() == Some(drafts))
                            .filter(|s| user.as_ref().is_none_or(|u| s["user_id"].to_string().trim_matches('"') == u))
                            .filter(|s| since.is_none_or(|t| starts(s) >= Some(t)))
                            .filter(|s| until.is_none_or(|t| starts(s).is_some_and(|at| at <= t)))
                            .collect()
                    })
                    .unwrap_or_default();
                let answer = page(&items, request, size);
                match stall {
                    Some(delay) => answer.set_delay(delay),
                    None => answer,
                }
            }
            "time_punches" => {
                let location = query.get("location_id").cloned().unwrap_or_default();
                if let Some(status) = state.failing.get(&location) {
                    return ResponseTemplate::new(*status).set_body_string("{\"error\":\"internal\"}");
                }
                if !query.contains_key("cursor") {
                    state.punch_queries.push(query.clone());
                }
                let include_deleted = query.get("include_deleted").is_some_and(|d| d == "true");
                let at = |punch: &Value, field: &str| {
                    time::OffsetDateTime::parse(punch[field].as_str().unwrap_or_default(), &Rfc3339).ok()
                };
                let since = |key: &str| query.get(key).and_then(|v| time::OffsetDateTime::parse(v, &Rfc3339).ok());
                let (modified_since, clocked_in_since) = (since("modified_since"), since("clocked_in[gte]"));
                let items: Vec<&Value> = state
                    .punches
                    .get(&location)
                    .map(|punches| {
                        punches
                            .iter()
                            .filter(|p| include_deleted || p["deleted"] != json!(true))
                            .filter(|p| modified_since.is_none_or(|since| at(p, "modified") >= Some(since)))
                            .filter(|p| clocked_in_since.is_none_or(|since| at(p, "clocked_in") >= Some(since)))
                            .collect()
                    })
                    .unwrap_or_default();
                page(&items, request, size)
            }
            "users" => page(
                &[
                    json!({ "id": 7, "first_name": "Ana", "last_name": "Ruiz", "active": true, "type": "employee" }),
                    json!({ "id": 8, "first_name": "Ben", "last_name": "Cole", "active": true, "type": "employee" }),
                ],
                request,
                size,
            ),
            "departments" => page(
                &[
                    json!({ "id": 11, "name": "FOH", "location_id": 100 }),
                    json!({ "id": 12, "name": "Kitchen", "location_id": 100 }),
                ],
                request,
                size,
            ),
            "roles" => page(
                &[
                    json!({ "id": 3, "name": "Server", "department_id": 11, "location_id": 100 }),
                    json!({ "id": 4, "name": "Line Cook", "department_id": 12, "location_id": 100 }),
                ],
                request,
                size,
            ),
            _ => ResponseTemplate::new(404),
        }
    }
}

/// `POST /v2/company/{id}/shifts`: the create-shift call. The shift is kept as the listings show it
/// (a draft unless `draft` is false) and answered as `{"data": shift}`; `fail_creates` makes the next
/// creates answer 500 after they are kept, as a provider that took a shift and lost the answer.
struct CreateShift(Fake7Shifts);

impl Respond for CreateShift {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let mut state = self.0.state.lock().unwrap();
        state.requests += 1;
        if state.throttle_next > 0 {
            state.throttle_next -= 1;
            return ResponseTemplate::new(429).insert_header("retry-after", "1");
        }
        let Ok(body) = serde_json::from_slice::<Value>(&request.body) else {
            return ResponseTemplate::new(400).set_body_json(json!({ "error": "invalid JSON" }));
        };
        let (Some(location), Some(_), Some(_)) =
            (body["location_id"].as_i64(), body["start"].as_str(), body["end"].as_str())
        else {
            return ResponseTemplate::new(422)
                .set_body_json(json!({ "error": "location_id, start and end are required" }));
        };
        state.next_id += 1;
        let draft = body["draft"].as_bool().unwrap_or(false);
        let created = json!({
            "id": state.next_id, "user_id": body["user_id"], "role_id": body["role_id"], "location_id": location,
            "company_id": 1, "department_id": null, "start": body["start"], "end": body["end"], "hourly_wage": 1500,
            "draft": draft, "deleted": false, "open": false, "publish_status": if draft { "draft" } else { "published" },
            "notes": body["notes"], "breaks": [], "created": body["start"], "modified": body["start"],
        });
        state.shifts.entry(location.to_string()).or_default().push(created.clone());
        state.created += 1;
        if state.fail_creates > 0 {
            state.fail_creates -= 1;
            return ResponseTemplate::new(500).set_body_string("{\"error\":\"internal\"}");
        }
        ResponseTemplate::new(201).set_body_json(json!({ "data": created, "object": "shift" }))
    }
}

impl Fake7ShiftsServer {
    /// Points a server's configuration at this fake.
    pub fn configure(&self) -> impl FnOnce(&mut opsd::config::Config) + use<> {
        let uri = self.server.uri();
        move |config| {
            config.scheduler.base_url = uri;
            config.scheduler.token = Some(secrecy::SecretString::from(TOKEN));
            config.scheduler.company_id = Some(COMPANY.to_owned());
        }
    }

    pub async fn start() -> Self {
        Self::serve(MockServer::start().await).await
    }

    /// The fake on a listener of the caller's (a fixed port: `opsd-soak-fakes`).
    pub async fn start_on(listener: std::net::TcpListener) -> Self {
        Self::serve(MockServer::builder().listener(listener).start().await).await
    }

    async fn serve(server: MockServer) -> Self {
        let fake = Fake7Shifts::default();
        Mock::given(method("GET"))
            .and(path_regex(format!("^/v2/company/{COMPANY}/(shifts|time_punches|users|roles|departments)$")))
            .and(header("authorization", format!("Bearer {TOKEN}").as_str()))
            .respond_with(fake.clone())
            .mount(&server)
            .await;
        Mock::given(method("POST"))
            .and(path_regex(format!("^/v2/company/{COMPANY}/shifts$")))
            .and(header("authorization", format!("Bearer {TOKEN}").as_str()))
            .respond_with(CreateShift(fake.clone()))
            .mount(&server)
            .await;
        Self { server, fake }
    }
}
