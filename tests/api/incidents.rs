use opsd_tests::{CRON_SECRET, TestApp, problem};
use serde_json::{Value, json};

struct Team {
    app: TestApp,
    token: String,
    location: String,
}

async fn team() -> Team {
    let app = TestApp::spawn().await;
    let location = app.create_location("org_1", "downtown").await;
    let token = app.tokens.member("user_1", "org_1");
    Team { app, token, location }
}

fn incident(location: &str, extra: Value) -> Value {
    let mut body =
        json!({ "locationId": location, "type": "Injury", "severity": "high", "notes": "Cut on the slicer" });
    body.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
    body
}

impl Team {
    async fn set_status(&self, id: &str, status: Value) -> reqwest::Response {
        self.app
            .patch(&format!("/api/incidents/{id}"))
            .bearer_auth(&self.token)
            .json(&json!({ "status": status }))
            .send()
            .await
            .unwrap()
    }

    async fn report(&self, body: &Value) -> reqwest::Response {
        self.app.post_json("/api/incidents", &self.token, body).await
    }

    async fn report_ok(&self, extra: Value) -> Value {
        let response = self.report(&incident(&self.location, extra)).await;
        assert_eq!(response.status(), 201);
        response.json().await.unwrap()
    }

    /// Asserts a 400 naming `field`, and that no incident or contact was written.
    async fn rejected(&self, body: Value, field: &str) {
        let (incidents, contacts) = (self.app.count("incidents").await, self.app.count("contacts").await);
        let problem = problem(self.report(&body).await, 400, "validation_failed").await;
        let fields: Vec<&str> =
            problem["errors"].as_array().unwrap().iter().map(|e| e["field"].as_str().unwrap()).collect();
        assert!(fields.contains(&field), "{field} not in {fields:?} for {body}");
        assert_eq!(self.app.count("incidents").await, incidents, "no incident written for {body}");
        assert_eq!(self.app.count("contacts").await, contacts, "no contact written for {body}");
    }

    async fn contact(&self, token: &str, name: &str) -> String {
        let response =
            self.app.post_json("/api/contacts", token, &json!({ "name": name, "phone": "+1 555 010 2030" })).await;
        assert_eq!(response.status(), 201);
        response.json::<Value>().await.unwrap()["id"].as_str().unwrap().to_owned()
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_reported_incident_is_201_with_its_record_and_location() {
    let team = team().await;
    let response = team.report(&incident(&team.location, json!({ "mediaUrls": ["https://blob.example/a.jpg"] }))).await;
    assert_eq!(response.status(), 201);
    let location = response.headers()["location"].to_str().unwrap().to_owned();
    let body: Value = response.json().await.unwrap();
    assert_eq!(location, format!("/api/incidents/{}", body["id"].as_str().unwrap()));
    assert_eq!(body["status"], "reported");
    assert_eq!(body["teamId"], "org_1");
    assert_eq!(body["type"], "Injury");
    assert_eq!(body["severity"], "high");
    assert_eq!(body["reportedBy"], "user_1");
    assert_eq!(body["contactId"], Value::Null);
    assert_eq!(body["mediaUrls"], json!(["https://blob.example/a.jpg"]));
    assert_eq!(body["createdAt"], body["updatedAt"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn notes_are_counted_in_characters() {
    let team = team().await;
    team.report_ok(json!({ "notes": "é".repeat(5000) })).await;
    team.report_ok(json!({ "notes": "🍔".repeat(5000) })).await;
    team.rejected(incident(&team.location, json!({ "notes": "a".repeat(5001) })), "notes").await;
    team.rejected(incident(&team.location, json!({ "notes": " \n\t " })), "notes").await;
    team.rejected(incident(&team.location, json!({ "notes": "" })), "notes").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn wrong_enums_are_rejected_by_field() {
    let team = team().await;
    team.rejected(incident(&team.location, json!({ "type": "injury" })), "type").await;
    team.rejected(incident(&team.location, json!({ "type": "Fire" })), "type").await;
    team.rejected(incident(&team.location, json!({ "severity": "severe" })), "severity").await;
    team.rejected(incident(&team.location, json!({ "severity": "HIGH" })), "severity").await;
    team.rejected(incident(&team.location, json!({ "contactMode": "maybe" })), "contactMode").await;
    team.rejected(
        json!({ "locationId": team.location, "type": "Injury", "severity": "high", "notes": "x", "serverity": "low" }),
        "serverity",
    )
    .await;
    team.rejected(incident("not-a-uuid", json!({})), "locationId").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn valid_json_of_the_wrong_type_on_an_enum_field_is_a_validation_error_naming_it() {
    let team = team().await;
    for (extra, field) in [
        (json!({ "severity": ["high"] }), "severity"),
        (json!({ "severity": 3 }), "severity"),
        (json!({ "type": null }), "type"),
        (json!({ "type": {} }), "type"),
        (json!({ "contactMode": true }), "contactMode"),
    ] {
        team.rejected(incident(&team.location, extra), field).await;
    }
    let id = team.report_ok(json!({})).await["id"].as_str().unwrap().to_owned();
    for status in [json!(3), json!(null), json!(["resolved"])] {
        let response = team.set_status(&id, json!(status)).await;
        assert_eq!(problem(response, 400, "validation_failed").await["errors"][0]["field"], "status", "{status}");
    }
    assert_eq!(team.app.count("incident_status_changes").await, 0);
    let still: Value = team.app.get_json(&format!("/api/incidents/{id}"), &team.token).await;
    assert_eq!(still["status"], "reported");
}

#[tokio::test(flavor = "multi_thread")]
async fn media_urls_are_at_most_ten_https_urls() {
    let team = team().await;
    let eleven: Vec<String> = (0..11).map(|i| format!("https://blob.example/{i}.jpg")).collect();
    team.rejected(incident(&team.location, json!({ "mediaUrls": eleven })), "mediaUrls").await;
    team.rejected(incident(&team.location, json!({ "mediaUrls": ["http://blob.example/a.jpg"] })), "mediaUrls[0]")
        .await;
    team.rejected(incident(&team.location, json!({ "mediaUrls": ["javascript:alert(1)"] })), "mediaUrls[0]").await;
    let ten: Vec<String> = (0..10).map(|i| format!("https://blob.example/{i}.jpg")).collect();
    team.report_ok(json!({ "mediaUrls": ten })).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_foreign_location_is_rejected() {
    let team = team().await;
    let foreign = team.app.create_location("org_2", "uptown").await;
    team.rejected(incident(&foreign, json!({})), "locationId").await;
    team.rejected(incident(&uuid::Uuid::now_v7().to_string(), json!({})), "locationId").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn contact_rules_hold_and_a_failed_incident_leaves_no_contact() {
    let team = team().await;
    let loc = &team.location;
    team.rejected(incident(loc, json!({ "contactName": "Ann" })), "contactName").await;
    team.rejected(incident(loc, json!({ "contactMode": "none", "contactEmail": "a@example.com" })), "contactEmail")
        .await;
    team.rejected(incident(loc, json!({ "contactMode": "new", "contactEmail": "a@example.com" })), "contactName").await;
    team.rejected(incident(loc, json!({ "contactMode": "new", "contactName": "Ann" })), "contactPhone").await;
    team.rejected(
        incident(loc, json!({ "contactMode": "new", "contactName": "Ann", "contactEmail": "nope" })),
        "contactEmail",
    )
    .await;
    team.rejected(incident(loc, json!({ "contactMode": "existing" })), "contactId").await;

    // A valid new contact with a foreign location: the contact must not survive the failed incident.
    let foreign = team.app.create_location("org_2", "uptown").await;
    team.rejected(
        incident(&foreign, json!({ "contactMode": "new", "contactName": "Ann", "contactPhone": "555-010-2030" })),
        "locationId",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn existing_contacts_must_be_live_and_of_the_same_team() {
    let team = team().await;
    let other_team = team.app.tokens.admin("user_9", "org_2");
    let foreign_contact = team.contact(&other_team, "Foreign").await;
    team.rejected(
        incident(&team.location, json!({ "contactMode": "existing", "contactId": foreign_contact })),
        "contactId",
    )
    .await;

    let admin = team.app.tokens.admin("user_admin", "org_1");
    let deleted = team.contact(&admin, "Gone").await;
    let response = team.app.delete(&format!("/api/contacts/{deleted}")).bearer_auth(&admin).send().await.unwrap();
    assert_eq!(response.status(), 204);
    team.rejected(incident(&team.location, json!({ "contactMode": "existing", "contactId": deleted })), "contactId")
        .await;

    let live = team.contact(&admin, "Live").await;
    let created = team.report_ok(json!({ "contactMode": "existing", "contactId": live })).await;
    assert_eq!(created["contactId"], live);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_new_contact_is_created_with_the_incident() {
    let team = team().await;
    let created = team
        .report_ok(json!({ "contactMode": "new", "contactName": "Guest Ann", "contactEmail": "ann@example.com", "contactNotes": "table 4" }))
        .await;
    let contact_id = created["contactId"].as_str().unwrap();
    let contacts: Value = team.app.get_json("/api/contacts", &team.token).await;
    assert_eq!(contacts[0]["id"], contact_id);
    assert_eq!(contacts[0]["email"], "ann@example.com");
}

#[tokio::test(flavor = "multi_thread")]
async fn comments_and_status_changes_build_the_history() {
    let team = team().await;
    let id = team.report_ok(json!({})).await["id"].as_str().unwrap().to_owned();
    let comment = team
        .app
        .post_json(&format!("/api/incidents/{id}/comments"), &team.token, &json!({ "content": "Manager notified" }))
        .await;
    assert_eq!(comment.status(), 201);
    let comment: Value = comment.json().await.unwrap();
    assert_eq!((comment["incidentId"].as_str(), comment["authorId"].as_str()), (Some(id.as_str()), Some("user_1")));

    for status in ["investigating", "investigating", "resolved", "reported"] {
        let response = team.set_status(&id, json!(status)).await;
        assert_eq!(response.status(), 200);
        assert_eq!(response.json::<Value>().await.unwrap()["status"], status);
    }
    let detail: Value = team.app.get_json(&format!("/api/incidents/{id}"), &team.token).await;
    assert_eq!(detail["status"], "reported");
    assert_eq!(detail["comments"][0]["content"], "Manager notified");
    let history: Vec<(&str, &str)> = detail["statusHistory"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["from"].as_str().unwrap(), c["to"].as_str().unwrap()))
        .collect();
    assert_eq!(history, [("reported", "investigating"), ("investigating", "resolved"), ("resolved", "reported")]);
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_status_and_comment_bodies_are_rejected_and_write_nothing() {
    let team = team().await;
    let id = team.report_ok(json!({})).await["id"].as_str().unwrap().to_owned();
    let bad_status = team.set_status(&id, json!("closed")).await;
    assert_eq!(problem(bad_status, 400, "validation_failed").await["errors"][0]["field"], "status");
    let empty =
        team.app.post_json(&format!("/api/incidents/{id}/comments"), &team.token, &json!({ "content": "  " })).await;
    assert_eq!(problem(empty, 400, "validation_failed").await["errors"][0]["field"], "content");
    assert_eq!(team.app.count("incident_comments").await, 0);
    assert_eq!(team.app.count("incident_status_changes").await, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn another_teams_incident_is_404_everywhere() {
    let team = team().await;
    let id = team.report_ok(json!({})).await["id"].as_str().unwrap().to_owned();
    let outsider = team.app.tokens.admin("user_9", "org_2");
    let app = &team.app;
    problem(app.get(&format!("/api/incidents/{id}")).bearer_auth(&outsider).send().await.unwrap(), 404, "not_found")
        .await;
    let patch =
        app.patch(&format!("/api/incidents/{id}")).bearer_auth(&outsider).json(&json!({ "status": "resolved" }));
    problem(patch.send().await.unwrap(), 404, "not_found").await;
    let comment =
        app.post(&format!("/api/incidents/{id}/comments")).bearer_auth(&outsider).json(&json!({ "content": "hi" }));
    problem(comment.send().await.unwrap(), 404, "not_found").await;
    problem(app.get("/api/incidents/not-a-uuid").bearer_auth(&outsider).send().await.unwrap(), 404, "not_found").await;
    let listed: Value = app.get_json("/api/incidents", &outsider).await;
    assert_eq!(listed["items"], json!([]));
    assert_eq!(app.count("incident_comments").await + app.count("incident_status_changes").await, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn listing_filters_and_pages_with_an_opaque_cursor() {
    let team = team().await;
    let second = team.app.create_location("org_1", "uptown").await;
    let mut ids = Vec::new();
    for i in 0..5 {
        let location = if i % 2 == 0 { &team.location } else { &second };
        let response = team.report(&incident(location, json!({}))).await;
        ids.push(response.json::<Value>().await.unwrap()["id"].as_str().unwrap().to_owned());
    }
    ids.reverse();

    let mut seen = Vec::new();
    let mut path = "/api/incidents?limit=2".to_owned();
    loop {
        let page: Value = team.app.get_json(&path, &team.token).await;
        seen.extend(page["items"].as_array().unwrap().iter().map(|i| i["id"].as_str().unwrap().to_owned()));
        match page["nextCursor"].as_str() {
            Some(cursor) => path = format!("/api/incidents?limit=2&cursor={cursor}"),
            None => break,
        }
    }
    assert_eq!(seen, ids, "newest first, each once");

    let by_location: Value = team.app.get_json(&format!("/api/incidents?locationId={second}"), &team.token).await;
    assert_eq!(by_location["items"].as_array().unwrap().len(), 2);
    let resolved: Value = team.app.get_json("/api/incidents?status=resolved", &team.token).await;
    assert_eq!(resolved["items"], json!([]));

    for bad in ["limit=0", "limit=101", "cursor=zzz", "status=closed", "locationId=x", "sort=asc"] {
        let response = team.app.get(&format!("/api/incidents?{bad}")).bearer_auth(&team.token).send().await.unwrap();
        problem(response, 400, "validation_failed").await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn only_admins_delete_contacts_and_a_deleted_one_disappears_from_the_list() {
    let team = team().await;
    let admin = team.app.tokens.admin("user_admin", "org_1");
    let id = team.contact(&team.token, "Ann").await;
    let as_member = team.app.delete(&format!("/api/contacts/{id}")).bearer_auth(&team.token).send().await.unwrap();
    problem(as_member, 403, "forbidden").await;
    let outsider = team.app.tokens.admin("user_9", "org_2");
    let as_outsider = team.app.delete(&format!("/api/contacts/{id}")).bearer_auth(&outsider).send().await.unwrap();
    problem(as_outsider, 404, "not_found").await;
    assert_eq!(team.app.delete(&format!("/api/contacts/{id}")).bearer_auth(&admin).send().await.unwrap().status(), 204);
    let again = team.app.delete(&format!("/api/contacts/{id}")).bearer_auth(&admin).send().await.unwrap();
    problem(again, 404, "not_found").await;
    let listed: Value = team.app.get_json("/api/contacts", &admin).await;
    assert_eq!(listed, json!([]));
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_contacts_are_rejected_and_not_written() {
    let team = team().await;
    for (body, field) in [
        (json!({ "name": "Ann" }), "phone"),
        (json!({ "name": "", "phone": "5550102030" }), "name"),
        (json!({ "name": "Ann", "email": "ann@" }), "email"),
        (json!({ "name": "Ann", "phone": "555", "nickname": "A" }), "nickname"),
    ] {
        let response = team.app.post_json("/api/contacts", &team.token, &body).await;
        assert_eq!(problem(response, 400, "validation_failed").await["errors"][0]["field"], field);
    }
    assert_eq!(team.app.count("contacts").await, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_prune_job_removes_only_contacts_deleted_longer_ago_than_the_retention() {
    let team = team().await;
    let admin = team.app.tokens.admin("user_admin", "org_1");
    let old = team.contact(&admin, "Old").await;
    let young = team.contact(&admin, "Young").await;
    let live = team.contact(&admin, "Live").await;
    let incident = team.report_ok(json!({ "contactMode": "existing", "contactId": old })).await;
    let pg = team.app.pg().await;
    pg.execute(
        "UPDATE contacts SET deleted_at = CASE name WHEN 'Old' THEN now() - interval '31 days' ELSE now() - interval '29 days' END \
         WHERE name IN ('Old', 'Young')",
        &[],
    )
    .await
    .unwrap();

    let unauthenticated = team.app.get("/cron/prune-soft-deleted-contacts").send().await.unwrap();
    problem(unauthenticated, 401, "unauthorized").await;
    let wrong = team.app.get("/cron/prune-soft-deleted-contacts").bearer_auth("wrong").send().await.unwrap();
    problem(wrong, 401, "unauthorized").await;
    assert_eq!(team.app.count("contacts").await, 3, "nothing pruned without the secret");

    let run = team.app.get("/cron/prune-soft-deleted-contacts").bearer_auth(CRON_SECRET).send().await.unwrap();
    assert_eq!(run.status(), 200);
    assert_eq!(run.headers()["content-type"], "application/json");
    assert_eq!(run.json::<Value>().await.unwrap(), json!({ "status": "ok", "pruned": 1 }));
    let remaining: Vec<String> = pg
        .query("SELECT id::text FROM contacts ORDER BY name", &[])
        .await
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect();
    assert_eq!(remaining, [live, young]);
    let detail: Value =
        team.app.get_json(&format!("/api/incidents/{}", incident["id"].as_str().unwrap()), &team.token).await;
    assert_eq!(detail["contactId"], Value::Null, "the incident stays, without its contact");

    let again = team.app.get("/cron/prune-soft-deleted-contacts").bearer_auth(CRON_SECRET).send().await.unwrap();
    assert_eq!(again.json::<Value>().await.unwrap(), json!({ "status": "ok", "pruned": 0 }));
    let runs =
        pg.query("SELECT status, summary FROM job_runs WHERE job = 'prune-soft-deleted-contacts'", &[]).await.unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0].get::<_, String>(0), "ok");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_overlapping_job_call_is_skipped() {
    let team = team().await;
    // Hold the job's advisory lock from outside, as a running instance would.
    let pg = team.app.pg().await;
    pg.execute("SELECT pg_advisory_lock(hashtextextended('prune-soft-deleted-contacts', 0))", &[]).await.unwrap();
    let run = team.app.get("/cron/prune-soft-deleted-contacts").bearer_auth(CRON_SECRET).send().await.unwrap();
    assert_eq!(run.json::<Value>().await.unwrap(), json!({ "status": "skipped" }));
    assert_eq!(team.app.count("job_runs").await, 0);
    pg.execute("SELECT pg_advisory_unlock(hashtextextended('prune-soft-deleted-contacts', 0))", &[]).await.unwrap();
    let run = team.app.get("/cron/prune-soft-deleted-contacts").bearer_auth(CRON_SECRET).send().await.unwrap();
    assert_eq!(run.json::<Value>().await.unwrap(), json!({ "status": "ok", "pruned": 0 }));
}

#[tokio::test(flavor = "multi_thread")]
async fn an_incidents_detail_answers_304_until_it_changes() {
    let app = TestApp::spawn().await;
    let location = app.create_location("org_1", "downtown").await;
    let token = app.tokens.member("user_1", "org_1");
    let body = serde_json::json!({ "locationId": location, "type": "Injury", "severity": "high", "notes": "Cut" });
    let created: serde_json::Value = app.post_json("/api/incidents", &token, &body).await.json().await.unwrap();
    let path = format!("/api/incidents/{}", created["id"].as_str().unwrap());
    let first = app.get(&path).bearer_auth(&token).send().await.unwrap();
    assert_eq!(first.status(), 200);
    let etag = first.headers()["etag"].to_str().unwrap().to_owned();
    let same = app.get(&path).bearer_auth(&token).header("if-none-match", &etag).send().await.unwrap();
    assert_eq!(same.status(), 304);
    assert!(same.bytes().await.unwrap().is_empty());
    let comment =
        app.post_json(&format!("{path}/comments"), &token, &serde_json::json!({ "content": "Bandaged" })).await;
    assert_eq!(comment.status(), 201);
    let changed = app.get(&path).bearer_auth(&token).header("if-none-match", &etag).send().await.unwrap();
    assert_eq!(changed.status(), 200, "a comment changes the detail");
    assert_ne!(changed.headers()["etag"].to_str().unwrap(), etag);
    // Another team's incident is still 404, whatever ETag is sent.
    let outsider = app.tokens.member("user_9", "org_2");
    let foreign = app.get(&path).bearer_auth(&outsider).header("if-none-match", &etag).send().await.unwrap();
    opsd_tests::problem(foreign, 404, "not_found").await;
}
