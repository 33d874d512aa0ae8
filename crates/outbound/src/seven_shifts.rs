//! The 7shifts v2 REST API behind the scheduling provider port.
//!
//! Field names and paging follow the provider's public documentation and public client libraries
//! (`../shared/research/third-party-apis.md`). Three points could not be confirmed there and are
//! decided here, in this one place: drafts are listed with `draft=true` in a second pass (the
//! default listing holds published shifts only); a break counts as unpaid unless it says
//! `"paid": true`, and its minutes are `length` (else end − start); `hourly_wage` is in cents, for
//! shifts and time punches alike, as the REST listing's sample shows (`1550`; the PUT guide's `15`
//! and the webhooks' `10.00` are other endpoints). Time punches are listed with
//! `include_deleted=true`, so a deleted punch comes back with `"deleted": true` and is removed.

use crate::calls::{Target, observed};
use std::time::Duration;

use async_trait::async_trait;
use opsd_planning::week_plan::{DraftError, DraftScheduler, DraftShift};
use opsd_scheduling::{
    Break, ProviderDepartment, ProviderError, ProviderPunch, ProviderRole, ProviderShift, ProviderUser, PunchWindow,
    SchedulingProvider,
};
use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

const PAGE_SIZE: u32 = 500;
/// Retries of a 429 or a 5xx before the call counts as failed.
const RETRIES: u32 = 3;

#[derive(Debug, Clone)]
pub struct SevenShiftsConfig {
    /// `https://api.7shifts.com`; the adapter appends `/v2/company/{id}/...`.
    pub base_url: String,
    pub token: SecretString,
    pub company_id: String,
    pub timeout: Duration,
    /// The first backoff between retries (doubling); a `Retry-After` beyond `max_wait` is capped.
    pub backoff: Duration,
    pub max_wait: Duration,
}

pub struct SevenShifts {
    config: SevenShiftsConfig,
    client: reqwest::Client,
    /// When the next request may go: 7shifts allows 10 a second per token.
    next_slot: tokio::sync::Mutex<tokio::time::Instant>,
}

/// The provider's rate limit, kept with a margin: one request per this interval.
const REQUEST_INTERVAL: Duration = Duration::from_millis(110);

#[derive(Deserialize)]
struct Page<T> {
    data: Vec<T>,
    meta: Option<Meta>,
}

#[derive(Deserialize)]
struct Meta {
    cursor: Option<CursorMeta>,
}

#[derive(Deserialize)]
struct CursorMeta {
    next: Option<Value>,
}

#[derive(Deserialize)]
struct ShiftJson {
    id: Value,
    user_id: Option<Value>,
    role_id: Option<Value>,
    start: String,
    end: String,
    hourly_wage: Option<i64>,
    #[serde(default)]
    draft: bool,
    #[serde(default)]
    deleted: bool,
    #[serde(default)]
    breaks: Vec<BreakJson>,
    #[serde(default)]
    notes: Option<String>,
}

#[derive(Deserialize)]
struct CreatedJson {
    data: CreatedShift,
}

#[derive(Deserialize)]
struct CreatedShift {
    id: Value,
}

#[derive(Deserialize)]
struct BreakJson {
    start: Option<String>,
    end: Option<String>,
    length: Option<i64>,
    #[serde(default)]
    paid: bool,
}

#[derive(Deserialize)]
struct PunchJson {
    id: Value,
    user_id: Option<Value>,
    role_id: Option<Value>,
    clocked_in: String,
    clocked_out: Option<String>,
    hourly_wage: Option<i64>,
    #[serde(default)]
    approved: bool,
    #[serde(default)]
    deleted: bool,
    #[serde(default)]
    breaks: Vec<PunchBreakJson>,
}

#[derive(Deserialize)]
struct PunchBreakJson {
    #[serde(rename = "in")]
    start: String,
    #[serde(rename = "out")]
    end: Option<String>,
    #[serde(default)]
    paid: bool,
    #[serde(default)]
    deleted: bool,
}

impl PunchJson {
    fn into_punch(self) -> Result<ProviderPunch, ProviderError> {
        let breaks = self
            .breaks
            .iter()
            .filter(|b| !b.deleted)
            .map(|b| {
                Ok(Break {
                    start: timestamp(&b.start)?,
                    end: b.end.as_deref().map(timestamp).transpose()?,
                    paid: b.paid,
                })
            })
            .collect::<Result<_, ProviderError>>()?;
        Ok(ProviderPunch {
            id: id(&self.id),
            user_id: self.user_id.as_ref().filter(|v| !v.is_null()).map(id),
            role_id: self.role_id.as_ref().filter(|v| !v.is_null()).map(id),
            clocked_in: timestamp(&self.clocked_in)?,
            clocked_out: self.clocked_out.as_deref().map(timestamp).transpose()?,
            approved: self.approved,
            deleted: self.deleted,
            hourly_wage_cents: self.hourly_wage,
            breaks,
        })
    }
}

#[derive(Deserialize)]
struct UserJson {
    id: Value,
    first_name: Option<String>,
    last_name: Option<String>,
}

#[derive(Deserialize)]
struct RoleJson {
    id: Value,
    location_id: Option<Value>,
    department_id: Option<Value>,
    name: String,
}

#[derive(Deserialize)]
struct DepartmentJson {
    id: Value,
    name: String,
}

/// Provider ids are numbers; this service keeps them as text.
fn id(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn timestamp(raw: &str) -> Result<OffsetDateTime, ProviderError> {
    OffsetDateTime::parse(raw, &Rfc3339).map_err(|_| ProviderError::Malformed(format!("not a timestamp: {raw}")))
}

impl ShiftJson {
    fn into_shift(self) -> Result<ProviderShift, ProviderError> {
        let unpaid = self
            .breaks
            .iter()
            .filter(|b| !b.paid)
            .map(|b| match (b.length, &b.start, &b.end) {
                (Some(minutes), _, _) => Ok(minutes.max(0)),
                (None, Some(start), Some(end)) => Ok((timestamp(end)? - timestamp(start)?).whole_minutes().max(0)),
                _ => Ok(0),
            })
            .sum::<Result<i64, ProviderError>>()?;
        Ok(ProviderShift {
            id: id(&self.id),
            user_id: self.user_id.as_ref().filter(|v| !v.is_null()).map(id),
            role_id: self.role_id.as_ref().filter(|v| !v.is_null()).map(id),
            start: timestamp(&self.start)?,
            end: timestamp(&self.end)?,
            hourly_wage_cents: self.hourly_wage,
            draft: self.draft,
            deleted: self.deleted,
            unpaid_break_minutes: u32::try_from(unpaid).unwrap_or(u32::MAX),
        })
    }
}

impl SevenShifts {
    pub fn new(config: SevenShiftsConfig) -> Self {
        let client = reqwest::Client::builder().timeout(config.timeout).build().expect("a reqwest client");
        Self { config, client, next_slot: tokio::sync::Mutex::new(tokio::time::Instant::now()) }
    }

    fn url(&self, resource: &str) -> String {
        format!("{}/v2/company/{}/{resource}", self.config.base_url.trim_end_matches('/'), self.config.company_id)
    }

    /// Every page of a listing.
    async fn all<T: DeserializeOwned>(
        &self,
        resource: &str,
        query: &[(&str, String)],
    ) -> Result<Vec<T>, ProviderError> {
        let mut items = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let mut params: Vec<(&str, String)> = query.to_vec();
            params.push(("limit", PAGE_SIZE.to_string()));
            if let Some(cursor) = &cursor {
                params.push(("cursor", cursor.clone()));
            }
            let page: Page<T> = self.get(resource, &params).await?;
            items.extend(page.data);
            cursor = page.meta.and_then(|m| m.cursor).and_then(|c| c.next).filter(|n| !n.is_null()).map(|n| id(&n));
            if cursor.is_none() {
                return Ok(items);
            }
        }
    }

    async fn get<T: DeserializeOwned>(&self, resource: &str, params: &[(&str, String)]) -> Result<T, ProviderError> {
        self.send(|| self.client.get(self.url(resource)).query(params), true).await
    }

    /// Waits for the next of the provider's request slots.
    async fn paced(&self) {
        let mut next = self.next_slot.lock().await;
        let now = tokio::time::Instant::now();
        let at = (*next).max(now);
        *next = at + REQUEST_INTERVAL;
        drop(next);
        tokio::time::sleep_until(at).await;
    }

    /// One request, paced to the provider's rate and retried on 429 (after `Retry-After`), a bounded
    /// number of times; and, when `may_repeat` (a read), on 5xx and timeouts too. A create is not
    /// repeated where it may have been taken: its caller looks for it before trying again.
    async fn send<T: DeserializeOwned>(
        &self,
        request: impl Fn() -> reqwest::RequestBuilder,
        may_repeat: bool,
    ) -> Result<T, ProviderError> {
        let mut wait = self.config.backoff;
        for attempt in 0..=RETRIES {
            self.paced().await;
            let request = request().bearer_auth(self.config.token.expose_secret());
            let sent = observed(Target::SevenShifts, request).await;
            let retry = match sent {
                Ok(response) if response.status().is_success() => {
                    let body = response
                        .bytes()
                        .await
                        .map_err(|e| if e.is_timeout() { ProviderError::Timeout } else { ProviderError::Network })?;
                    return serde_json::from_slice(&body).map_err(|e| ProviderError::Malformed(e.to_string()));
                }
                Ok(response) if matches!(response.status().as_u16(), 401 | 403) => {
                    return Err(ProviderError::Unauthorized);
                }
                Ok(response) if response.status().as_u16() == 429 => {
                    let after = response
                        .headers()
                        .get("retry-after")
                        .and_then(|v| v.to_str().ok())
                        .and_then(|v| v.parse::<u64>().ok())
                        .map(Duration::from_secs);
                    if attempt == RETRIES {
                        return Err(ProviderError::RateLimited);
                    }
                    after.unwrap_or(wait)
                }
                Ok(response) if response.status().is_server_error() => {
                    if attempt == RETRIES || !may_repeat {
                        return Err(ProviderError::ServerError(response.status().as_u16()));
                    }
                    wait
                }
                Ok(response) => return Err(ProviderError::ClientError(response.status().as_u16())),
                Err(error) => {
                    if attempt == RETRIES || !(may_repeat || error.is_connect()) {
                        return Err(if error.is_timeout() { ProviderError::Timeout } else { ProviderError::Network });
                    }
                    wait
                }
            };
            tokio::time::sleep(retry.min(self.config.max_wait)).await;
            wait *= 2;
        }
        unreachable!("the last attempt returns")
    }
}

#[async_trait]
impl SchedulingProvider for SevenShifts {
    async fn shifts(
        &self,
        location: &str,
        from: OffsetDateTime,
        to: OffsetDateTime,
    ) -> Result<Vec<ProviderShift>, ProviderError> {
        let window = [
            ("location_id", location.to_owned()),
            ("start[gte]", from.format(&Rfc3339).expect("formats")),
            ("start[lte]", to.format(&Rfc3339).expect("formats")),
        ];
        let published: Vec<ShiftJson> = self.all("shifts", &window).await?;
        let mut with_drafts = window.to_vec();
        with_drafts.push(("draft", "true".to_owned()));
        let drafts: Vec<ShiftJson> = self.all("shifts", &with_drafts).await?;
        let mut by_id = std::collections::BTreeMap::new();
        // A draft listing's version of a shift is the newer one.
        for shift in published.into_iter().chain(drafts) {
            let shift = shift.into_shift()?;
            by_id.insert(shift.id.clone(), shift);
        }
        Ok(by_id.into_values().filter(|s| s.start >= from && s.start < to).collect())
    }

    async fn punches(&self, location: &str, window: PunchWindow) -> Result<Vec<ProviderPunch>, ProviderError> {
        let mut query = vec![("location_id", location.to_owned()), ("include_deleted", "true".to_owned())];
        match window {
            PunchWindow::ModifiedSince(since) => {
                query.push(("modified_since", since.format(&Rfc3339).expect("formats")))
            }
            PunchWindow::ClockedInSince(since) => {
                query.push(("clocked_in[gte]", since.format(&Rfc3339).expect("formats")))
            }
        }
        let punches: Vec<PunchJson> = self.all("time_punches", &query).await?;
        punches.into_iter().map(PunchJson::into_punch).collect()
    }

    async fn users(&self) -> Result<Vec<ProviderUser>, ProviderError> {
        let users: Vec<UserJson> = self.all("users", &[]).await?;
        Ok(users
            .into_iter()
            .map(|u| ProviderUser {
                id: id(&u.id),
                first_name: u.first_name.unwrap_or_default(),
                last_name: u.last_name.unwrap_or_default(),
            })
            .collect())
    }

    async fn roles(&self) -> Result<Vec<ProviderRole>, ProviderError> {
        let roles: Vec<RoleJson> = self.all("roles", &[]).await?;
        Ok(roles
            .into_iter()
            .map(|r| ProviderRole {
                id: id(&r.id),
                location_id: r.location_id.as_ref().filter(|v| !v.is_null()).map(id),
                department_id: r.department_id.as_ref().filter(|v| !v.is_null()).map(id),
                name: r.name,
            })
            .collect())
    }

    async fn departments(&self) -> Result<Vec<ProviderDepartment>, ProviderError> {
        let departments: Vec<DepartmentJson> = self.all("departments", &[]).await?;
        Ok(departments.into_iter().map(|d| ProviderDepartment { id: id(&d.id), name: d.name }).collect())
    }
}

/// An id as 7shifts takes it: a number when it is one.
fn provider_id(raw: &str) -> Value {
    raw.parse::<i64>().map_or_else(|_| Value::String(raw.to_owned()), Value::from)
}

/// Drafts of a schedule proposal: `POST /v2/company/{id}/shifts` with `draft: true` (the create-shift
/// reference: `location_id`, `user_id`, `role_id` where the location uses roles, `start` and `end` in
/// UTC, `notes`, and `draft` "if true the shift is not published"); the answer's `data.id` is the new
/// shift. `department_id` is left out: it is required only where a location uses departments, and this
/// service maps departments from roles.
#[async_trait]
impl DraftScheduler for SevenShifts {
    async fn create_draft(&self, shift: &DraftShift) -> Result<String, DraftError> {
        let body = serde_json::json!({
            "location_id": provider_id(&shift.location),
            "user_id": provider_id(&shift.user),
            "role_id": shift.role.as_deref().map(provider_id),
            "start": shift.start.format(&Rfc3339).expect("formats"),
            "end": shift.end.format(&Rfc3339).expect("formats"),
            "notes": shift.notes,
            "draft": true,
        });
        let created: CreatedJson = self
            .send(|| self.client.post(self.url("shifts")).json(&body), false)
            .await
            .map_err(|error| DraftError::Failed(error.to_string()))?;
        Ok(id(&created.data.id))
    }

    async fn drafts(
        &self,
        location: &str,
        user: &str,
        from: OffsetDateTime,
        to: OffsetDateTime,
    ) -> Result<Vec<(String, String)>, DraftError> {
        let query = [
            ("location_id", location.to_owned()),
            ("user_id", user.to_owned()),
            ("start[gte]", from.format(&Rfc3339).expect("formats")),
            ("start[lte]", to.format(&Rfc3339).expect("formats")),
            ("draft", "true".to_owned()),
        ];
        let shifts: Vec<ShiftJson> =
            self.all("shifts", &query).await.map_err(|error| DraftError::Failed(error.to_string()))?;
        Ok(shifts.into_iter().map(|s| (id(&s.id), s.notes.unwrap_or_default())).collect())
    }
}

#[cfg(test)]
mod tests {
    use time::macros::datetime;
    use wiremock::matchers::{header, method, path, query_param, query_param_is_missing};
    use wiremock::{Mock, MockServer, ResponseTemplate};

    use super::*;

    fn provider(server: &MockServer) -> SevenShifts {
        SevenShifts::new(SevenShiftsConfig {
            base_url: server.uri(),
            token: SecretString::from("tok"),
            company_id: "1".into(),
            timeout: Duration::from_millis(500),
            backoff: Duration::from_millis(10),
            max_wait: Duration::from_millis(50),
        })
    }

    fn shift(id: i64, draft: bool) -> Value {
        serde_json::json!({
            "id": id, "user_id": 7, "role_id": 3, "location_id": 100, "company_id": 1,
            "start": "2026-11-21T16:00:00Z", "end": "2026-11-21T22:00:00Z", "hourly_wage": 1650,
            "draft": draft, "deleted": false, "publish_status": if draft { "draft" } else { "published" },
            "breaks": [{ "id": 1, "shift_id": id, "start": "2026-11-21T19:00:00Z", "end": "2026-11-21T19:30:00Z", "paid": false }],
        })
    }

    #[tokio::test]
    async fn lists_every_page_and_both_listings() {
        let server = MockServer::start().await;
        Mock::given(method("GET"))
            .and(path("/v2/company/1/shifts"))
            .and(header("authorization", "Bearer tok"))
            .and(query_param("location_id", "100"))
            .and(query_param_is_missing("cursor"))
            .and(query_param_is_missing("draft"))
            .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!({
                "data": [shift(1, false)], "meta": { "cursor": { "current": null, "prev": null, "next": "p2", "count": 2 } }, "object": "shifts",
            })))
            .mount(&server)
            .await;
        Mock::given(path("/v2/company/1/shifts"))
            .and(query_param("cursor", "p2"))
            .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!({
                "data": [shift(2, false)], "meta": { "cursor": { "next": null } },
            })))
            .mount(&server)
            .await;
        Mock::given(path("/v2/company/1/shifts"))
            .and(query_param("draft", "true"))
            .respond_with(
                ResponseTemplate::new(200).set_body_json(
                    serde_json::json!({ "data": [shift(3, true)], "meta": { "cursor": { "next": null } } }),
                ),
            )
            .mount(&server)
            .await;
        let shifts = provider(&server)
            .shifts("100", datetime!(2026-11-08 00:00 UTC), datetime!(2026-12-21 00:00 UTC))
            .await
            .unwrap();
        let ids: Vec<(&str, bool, u32)> =
            shifts.iter().map(|s| (s.id.as_str(), s.draft, s.unpaid_break_minutes)).collect();
        assert_eq!(ids, [("1", false, 30), ("2", false, 30), ("3", true, 30)]);
        assert_eq!(shifts[0].hourly_wage_cents, Some(1650));
    }

    #[tokio::test]
    async fn a_429_is_retried_after_its_retry_after_and_a_5xx_fails_after_the_retries() {
        let server = MockServer::start().await;
        Mock::given(path("/v2/company/1/users"))
            .respond_with(ResponseTemplate::new(429).insert_header("retry-after", "1"))
            .up_to_n_times(1)
            .mount(&server)
            .await;
        Mock::given(path("/v2/company/1/users"))
            .respond_with(
                ResponseTemplate::new(200).set_body_json(
                    serde_json::json!({ "data": [{ "id": 7, "first_name": "Ana", "last_name": "Ruiz" }] }),
                ),
            )
            .mount(&server)
            .await;
        Mock::given(path("/v2/company/1/roles"))
            .respond_with(ResponseTemplate::new(503))
            .expect(4)
            .mount(&server)
            .await;
        Mock::given(path("/v2/company/1/departments"))
            .respond_with(ResponseTemplate::new(200).set_body_string("{not json"))
            .mount(&server)
            .await;
        let provider = provider(&server);
        assert_eq!(provider.users().await.unwrap()[0].first_name, "Ana");
        assert_eq!(provider.roles().await, Err(ProviderError::ServerError(503)));
        assert!(matches!(provider.departments().await, Err(ProviderError::Malformed(_))));
    }

    #[tokio::test]
    async fn a_hanging_provider_times_out_and_a_bad_token_is_unauthorized() {
        let server = MockServer::start().await;
        Mock::given(path("/v2/company/1/users"))
            .respond_with(ResponseTemplate::new(200).set_delay(Duration::from_secs(3)))
            .mount(&server)
            .await;
        Mock::given(path("/v2/company/1/roles")).respond_with(ResponseTemplate::new(401)).mount(&server).await;
        let provider = provider(&server);
        assert_eq!(provider.users().await, Err(ProviderError::Timeout));
        assert_eq!(provider.roles().await, Err(ProviderError::Unauthorized));
    }
}
