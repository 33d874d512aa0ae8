//! Lists that can grow: `limit` and an opaque `cursor`, the body still an array, and the next page
//! in an RFC 8288 `Link` header.

use std::collections::HashSet;

use opsd_tests::{TestApp, problem};
use serde_json::{Value, json};

/// The `rel="next"` target of an answer's `Link` header, if any.
fn next_link(response: &reqwest::Response) -> Option<String> {
    let link = response.headers().get("link")?.to_str().unwrap();
    let target = link.strip_prefix('<')?.split_once(">; rel=\"next\"")?.0;
    Some(target.to_owned())
}

/// Every page from `path` by its `Link` headers: the items of each, in order. `between` runs
/// after each page (to change the list while it is walked).
async fn walk(app: &TestApp, path: &str, token: &str, mut between: impl AsyncFnMut(usize)) -> Vec<Vec<Value>> {
    let mut pages = Vec::new();
    let mut next = Some(path.to_owned());
    while let Some(path) = next {
        let response = app.get(&path).bearer_auth(token).send().await.unwrap();
        assert_eq!(response.status(), 200, "{path}");
        next = next_link(&response);
        let items: Vec<Value> = response.json().await.unwrap();
        pages.push(items);
        between(pages.len()).await;
        assert!(pages.len() < 100, "the walk ends");
    }
    pages
}

fn ids(items: &[Value]) -> Vec<String> {
    items.iter().map(|item| item["id"].as_str().unwrap().to_owned()).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_list_of_250_walked_by_link_while_rows_are_added_misses_and_repeats_none() {
    let app = TestApp::spawn().await;
    let token = app.tokens.member("user_1", "org_1");
    app.pg()
        .await
        .batch_execute(
            "INSERT INTO teams (id) VALUES ('org_1') ON CONFLICT DO NOTHING;
             INSERT INTO contacts (id, team_id, name, email, created_at)
             SELECT gen_random_uuid(), 'org_1', 'Contact ' || lpad((n * 4)::text, 4, '0'), 'c@example.com', now()
             FROM generate_series(1, 250) n",
        )
        .await
        .unwrap();
    let before: HashSet<String> =
        app.text_pairs("SELECT id::text, name FROM contacts").await.into_iter().map(|(id, _)| id).collect();

    // After each page, two contacts are added: one sorting before everything walked, one after.
    let pages = walk(&app, "/api/contacts?limit=40", &token, async |page| {
        for name in [format!("Contact 0000-{page}"), format!("Contact 9999-{page}")] {
            let added =
                app.post_json("/api/contacts", &token, &json!({ "name": name, "email": "c@example.com" })).await;
            assert_eq!(added.status(), 201);
        }
    })
    .await;

    let walked: Vec<Value> = pages.concat();
    let seen = ids(&walked);
    let unique: HashSet<&String> = seen.iter().collect();
    assert_eq!(unique.len(), seen.len(), "no contact repeated");
    assert!(before.iter().all(|id| unique.contains(id)), "every contact there from the start was seen");
    let names: Vec<&str> = walked.iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert!(names.windows(2).all(|w| w[0] <= w[1]), "by name across pages");
    assert!(pages[..pages.len() - 1].iter().all(|p| p.len() == 40), "full pages until the last");
    assert!(names.iter().any(|n| n.starts_with("Contact 9999")), "rows added ahead of the walk are met");

    // The default page is 100; a small list has no Link and answers as before paging.
    let small = app.tokens.member("user_2", "org_2");
    app.post_json("/api/contacts", &small, &json!({ "name": "Solo", "email": "c@example.com" })).await;
    let response = app.get("/api/contacts").bearer_auth(&small).send().await.unwrap();
    assert!(response.headers().get("link").is_none());
    assert_eq!(response.json::<Vec<Value>>().await.unwrap().len(), 1);
    let response = app.get("/api/contacts").bearer_auth(&token).send().await.unwrap();
    assert!(next_link(&response).unwrap().starts_with("/api/contacts?cursor="));
    assert_eq!(response.json::<Vec<Value>>().await.unwrap().len(), 100);
}

#[tokio::test(flavor = "multi_thread")]
async fn every_growing_list_pages_in_its_own_order_and_keeps_its_filters() {
    let app = TestApp::spawn().await;
    let admin = app.tokens.admin("user_admin", "org_1");
    let mut locations = Vec::new();
    for name in ["Eastside", "Airport", "Downtown", "Central", "Beach"] {
        locations.push(app.create_location_in("org_1", name, "UTC").await);
    }
    for n in 0..5 {
        let body = json!({ "title": format!("Note {n}"), "body": "Body", "publishAt": format!("2030-01-0{}T10:00:00Z", 5 - n % 3) });
        assert_eq!(app.post_json("/api/announcements", &admin, &body).await.status(), 201);
    }
    let location = &locations[0];
    app.pg()
        .await
        .batch_execute(&format!(
            "INSERT INTO shift_reports (id, team_id, location_id, date, shift, actual_sales, goal_sales, submitted_by, created_at)
             SELECT gen_random_uuid(), 'org_1', '{location}', d::date, s, 100, 90, 'user_admin', now()
             FROM generate_series('2026-11-01'::date, '2026-11-03', '1 day') d, unnest(ARRAY['evening', 'morning', 'afternoon']) s;
             INSERT INTO manager_reports (id, team_id, location_id, date, total_sales, employee_reviews, submitted_by, created_at)
             SELECT gen_random_uuid(), 'org_1', '{location}', d::date, 300, '[]', 'user_admin', now()
             FROM generate_series('2026-11-01'::date, '2026-11-05', '1 day') d;"
        ))
        .await
        .unwrap();

    let range = format!("locationId={location}&from=2026-11-01&to=2026-11-30");
    for (list, whole) in [
        ("/api/locations?limit=2".to_owned(), "/api/locations".to_owned()),
        ("/api/announcements?limit=2".to_owned(), "/api/announcements".to_owned()),
        (format!("/api/reports/shift?{range}&limit=2"), format!("/api/reports/shift?{range}")),
        (format!("/api/reports/manager?{range}&limit=2"), format!("/api/reports/manager?{range}")),
    ] {
        let pages = walk(&app, &list, &admin, async |_| {}).await;
        let unpaged: Vec<Value> = app.get_json(&whole, &admin).await.as_array().unwrap().clone();
        assert!(pages.len() >= 3, "{list}: {} pages", pages.len());
        assert_eq!(ids(&pages.concat()), ids(&unpaged), "{list}: the pages are the whole list, in its order");
    }
    let shifts: Vec<Value> =
        app.get_json(&format!("/api/reports/shift?{range}"), &admin).await.as_array().unwrap().clone();
    let order: Vec<String> =
        shifts.iter().map(|r| format!("{} {}", r["date"].as_str().unwrap(), r["shift"].as_str().unwrap())).collect();
    assert_eq!(order[..4], ["2026-11-01 morning", "2026-11-01 afternoon", "2026-11-01 evening", "2026-11-02 morning"]);
    let names: Vec<Value> = app.get_json("/api/locations", &admin).await.as_array().unwrap().clone();
    let names: Vec<&str> = names.iter().map(|l| l["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["Airport", "Beach", "Central", "Downtown", "Eastside"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_bad_limit_or_cursor_is_refused_on_every_paged_list() {
    let app = TestApp::spawn().await;
    let admin = app.tokens.admin("user_admin", "org_1");
    let location = app.create_location("org_1", "downtown").await;
    let contact_cursor = {
        app.post_json("/api/contacts", &admin, &json!({ "name": "A", "email": "c@example.com" })).await;
        app.post_json("/api/contacts", &admin, &json!({ "name": "B", "email": "c@example.com" })).await;
        let response = app.get("/api/contacts?limit=1").bearer_auth(&admin).send().await.unwrap();
        let link = next_link(&response).unwrap();
        link.split_once("cursor=").unwrap().1.to_owned()
    };
    let range = format!("locationId={location}");
    for list in [
        "/api/contacts?",
        "/api/locations?",
        "/api/announcements?",
        &format!("/api/reports/shift?{range}&"),
        &format!("/api/reports/manager?{range}&"),
    ] {
        // A contacts cursor is not a cursor of another list (its key has another shape), except for
        // the lists keyed the same way (locations), where it only names a place in the order.
        for bad in ["limit=0", "limit=501", "limit=x", "cursor=!!", "cursor=bm90IGpzb24"] {
            let response = app.get(&format!("{list}{bad}")).bearer_auth(&admin).send().await.unwrap();
            problem(response, 400, "validation_failed").await;
        }
        if list.contains("reports") || list.contains("announcements") {
            let response = app.get(&format!("{list}cursor={contact_cursor}")).bearer_auth(&admin).send().await.unwrap();
            problem(response, 400, "validation_failed").await;
        }
    }
    assert_eq!(app.count("contacts").await, 2, "refusals write nothing");
}
