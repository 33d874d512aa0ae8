use jsonwebtoken::{Algorithm, EncodingKey, Header};
use opsd_tests::{APP_ORIGIN, TestApp, problem};
use serde_json::{Value, json};

async fn list_with_token(app: &TestApp, token: &str) -> reqwest::Response {
    app.get("/api/locations").bearer_auth(token).send().await.unwrap()
}

async fn assert_rejected(app: &TestApp, token: &str, what: &str) {
    let response = list_with_token(app, token).await;
    assert_eq!(response.status(), 401, "{what}");
    assert_eq!(response.headers()["www-authenticate"], "Bearer", "{what}");
    problem(response, 401, "unauthorized").await;
}

fn now() -> i64 {
    time::OffsetDateTime::now_utc().unix_timestamp()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_valid_token_is_accepted_and_records_the_membership() {
    let app = TestApp::spawn().await;
    let response = list_with_token(&app, &app.tokens.admin("user_1", "org_1")).await;
    assert_eq!(response.status(), 200);
    let pg = app.pg().await;
    let row =
        pg.query_one("SELECT role FROM memberships WHERE user_id = 'user_1' AND team_id = 'org_1'", &[]).await.unwrap();
    assert_eq!(row.get::<_, String>(0), "admin");

    // The token is authoritative: a demotion shows at the next request.
    list_with_token(&app, &app.tokens.member("user_1", "org_1")).await;
    let row = pg.query_one("SELECT role FROM memberships WHERE user_id = 'user_1'", &[]).await.unwrap();
    assert_eq!(row.get::<_, String>(0), "member");
}

#[tokio::test(flavor = "multi_thread")]
async fn v1_org_claims_are_understood() {
    let app = TestApp::spawn().await;
    let mut claims = app.tokens.claims("user_1", None);
    claims["org_id"] = json!("org_1");
    claims["org_role"] = json!("org:admin");
    let response = app
        .post_json("/api/locations", app.tokens.sign(&claims), &json!({ "name": "A", "slug": "a", "timezone": "UTC" }))
        .await;
    assert_eq!(response.status(), 201);
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_tokens_are_401() {
    let app = TestApp::spawn().await;
    let tokens = app.tokens;
    let valid = tokens.claims("user_1", Some(("org_1", "admin")));

    let mut expired = valid.clone();
    expired["exp"] = json!(now() - 120);
    assert_rejected(&app, &tokens.sign(&expired), "expired").await;

    let mut not_yet = valid.clone();
    not_yet["nbf"] = json!(now() + 300);
    assert_rejected(&app, &tokens.sign(&not_yet), "not yet valid").await;

    assert_rejected(&app, &tokens.sign_with_other_key(&valid), "wrong key").await;

    let mut wrong_issuer = valid.clone();
    wrong_issuer["iss"] = json!("https://evil.example");
    assert_rejected(&app, &tokens.sign(&wrong_issuer), "wrong issuer").await;

    let mut wrong_azp = valid.clone();
    wrong_azp["azp"] = json!("https://evil.example");
    assert_rejected(&app, &tokens.sign(&wrong_azp), "wrong azp").await;

    let mut no_issuer = valid.clone();
    no_issuer.as_object_mut().unwrap().remove("iss");
    assert_rejected(&app, &tokens.sign(&no_issuer), "no issuer while IDENTITY_ISSUER is set").await;

    let mut no_azp = valid.clone();
    no_azp.as_object_mut().unwrap().remove("azp");
    assert_rejected(&app, &tokens.sign(&no_azp), "no azp while IDENTITY_AUTHORIZED_PARTIES is set").await;

    let mut no_exp = valid.clone();
    no_exp.as_object_mut().unwrap().remove("exp");
    assert_rejected(&app, &tokens.sign(&no_exp), "no exp").await;

    assert_rejected(&app, "garbage", "garbage").await;
    assert_rejected(&app, "a.b.c", "three garbage segments").await;
    assert_rejected(&app, &unsigned(&valid), "alg none").await;
    assert_rejected(&app, &hs256_with_public_key(&valid), "HS256 keyed with the public key").await;

    let missing = app.get("/api/locations").send().await.unwrap();
    problem(missing, 401, "unauthorized").await;
    let basic = app.get("/api/locations").header("authorization", "Basic dXNlcjpwdw==").send().await.unwrap();
    problem(basic, 401, "unauthorized").await;
    assert_eq!(app.count("users").await, 0, "no rejected token wrote a user");
}

#[tokio::test(flavor = "multi_thread")]
async fn without_an_issuer_or_parties_configured_those_claims_are_optional() {
    let app = TestApp::spawn_with(|config| {
        config.identity.issuer = None;
        config.identity.authorized_parties = Vec::new();
    })
    .await;
    let mut claims = app.tokens.claims("user_1", Some(("org_1", "admin")));
    claims.as_object_mut().unwrap().remove("iss");
    claims.as_object_mut().unwrap().remove("azp");
    assert_eq!(list_with_token(&app, &app.tokens.sign(&claims)).await.status(), 200);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_token_within_the_60_second_leeway_is_accepted() {
    let app = TestApp::spawn().await;
    let mut claims = app.tokens.claims("user_1", Some(("org_1", "admin")));
    claims["exp"] = json!(now() - 30);
    assert_eq!(list_with_token(&app, &app.tokens.sign(&claims)).await.status(), 200);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_team_scoped_call_without_a_team_is_403() {
    let app = TestApp::spawn().await;
    let token = app.tokens.sign(&app.tokens.claims("user_1", None));
    problem(list_with_token(&app, &token).await, 403, "forbidden").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_deleted_users_token_opens_nothing() {
    let app = TestApp::spawn().await;
    let token = app.tokens.admin("user_1", "org_1");
    assert_eq!(list_with_token(&app, &token).await.status(), 200);
    // An operator's own SQL: announced by the database when it commits, so it reaches the
    // instance's remembered sign-ins a few milliseconds later, not necessarily before the next request.
    app.pg().await.execute("UPDATE users SET deleted_at = now() WHERE id = 'user_1'", &[]).await.unwrap();
    let mut refused = list_with_token(&app, &token).await;
    for _ in 0..200 {
        if refused.status() == 401 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        refused = list_with_token(&app, &token).await;
    }
    problem(refused, 401, "unauthorized").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_session_cookie_works_and_changes_need_the_apps_origin() {
    let app = TestApp::spawn().await;
    let cookie = format!("__session={}", app.tokens.admin("user_1", "org_1"));
    let read = app.get("/api/locations").header("cookie", &cookie).send().await.unwrap();
    assert_eq!(read.status(), 200, "a safe request needs no Origin");

    let body = json!({ "name": "A", "slug": "a", "timezone": "UTC" });
    let no_origin = app.post("/api/locations").header("cookie", &cookie).json(&body).send().await.unwrap();
    problem(no_origin, 403, "forbidden").await;
    let wrong_origin = app
        .post("/api/locations")
        .header("cookie", &cookie)
        .header("origin", "https://evil.example")
        .json(&body)
        .send()
        .await
        .unwrap();
    problem(wrong_origin, 403, "forbidden").await;
    assert_eq!(app.count("locations").await, 0);

    let same_origin = app
        .post("/api/locations")
        .header("cookie", &cookie)
        .header("origin", APP_ORIGIN)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(same_origin.status(), 201);
}

/// An admin's cookie-authenticated location create from a page on `https://{host}`, through a
/// proxy that names that host in its forwarding headers.
async fn create_forwarded_for(app: &TestApp, host: &str) -> reqwest::Response {
    app.post("/api/locations")
        .header("cookie", format!("__session={}", app.tokens.admin("user_1", "org_1")))
        .header("origin", format!("https://{host}"))
        .header("x-forwarded-host", host)
        .header("x-forwarded-proto", "https")
        .json(&json!({ "name": "A", "slug": "a", "timezone": "UTC" }))
        .send()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn forwarding_headers_count_only_from_a_trusted_proxy() {
    // A page on evil.example naming its own host in X-Forwarded-Host, sent straight to opsd.
    let app = TestApp::spawn().await;
    problem(create_forwarded_for(&app, "evil.example").await, 403, "forbidden").await;
    assert_eq!(app.count("locations").await, 0, "nothing written");

    // The same headers from a proxy in TRUSTED_PROXIES name the origin the browser saw.
    let proxied = TestApp::spawn_with(|config| config.trusted_proxies = vec!["127.0.0.0/8".parse().unwrap()]).await;
    assert_eq!(create_forwarded_for(&proxied, "ops.example").await.status(), 201);
}

fn b64(bytes: &[u8]) -> String {
    use base64_like::encode;
    encode(bytes)
}

/// `alg: none`, no signature.
fn unsigned(claims: &Value) -> String {
    format!("{}.{}.", b64(br#"{"alg":"none","typ":"JWT"}"#), b64(claims.to_string().as_bytes()))
}

/// The classic confusion attack: HS256 keyed with the RSA public key.
fn hs256_with_public_key(claims: &Value) -> String {
    let key = EncodingKey::from_secret(opsd_tests_public_key().as_bytes());
    jsonwebtoken::encode(&Header::new(Algorithm::HS256), claims, &key).unwrap()
}

fn opsd_tests_public_key() -> &'static str {
    include_str!("../fixtures/jwt-signing-key.pub.pem")
}

mod base64_like {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

    /// base64url without padding, as JWT segments are.
    pub fn encode(bytes: &[u8]) -> String {
        let mut out = String::new();
        for chunk in bytes.chunks(3) {
            let n = chunk.iter().enumerate().fold(0u32, |n, (i, b)| n | (u32::from(*b) << (16 - 8 * i)));
            for i in 0..=chunk.len() {
                out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
            }
        }
        out
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn keys_come_from_the_jwks_url_and_are_cached() {
    use wiremock::matchers::{method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};

    let provider = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/.well-known/jwks.json"))
        .respond_with(
            ResponseTemplate::new(200).set_body_raw(include_str!("../fixtures/jwks.json"), "application/json"),
        )
        .expect(1)
        .mount(&provider)
        .await;
    let jwks_url = format!("{}/.well-known/jwks.json", provider.uri());
    let app = TestApp::spawn_with(|config| {
        config.identity.jwt_public_key_pem = None;
        config.identity.jwks_url = Some(jwks_url);
    })
    .await;
    let token = app.tokens.admin("user_1", "org_1");
    for _ in 0..3 {
        assert_eq!(list_with_token(&app, &token).await.status(), 200);
    }
    assert_rejected(&app, &app.tokens.sign_with_other_key(&app.tokens.claims("user_1", None)), "unknown signer").await;
    // `expect(1)` is checked when the fake drops: three requests, one fetch.
}
