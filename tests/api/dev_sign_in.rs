//! The console's one-time sign-in link for the dev identity (`just run`): it signs the demo admin
//! in once and expires; without the dev identity the route does not exist. (That the ticket never
//! reaches the log: bins/opsd/tests/secrets_in_logs.rs.)

use opsd::issue_dev_sign_in_link;
use opsd_core::{Role, TeamId, TeamMembership, UserId};
use opsd_identity::DevSignIn;
use opsd_tests::TestApp;
use reqwest::header::{COOKIE, LOCATION, SET_COOKIE};

const DEV_KEY: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/jwt-signing-key.pem");

fn admin_of(team: &str) -> DevSignIn {
    DevSignIn {
        user: UserId::new("user_demo"),
        membership: TeamMembership { team_id: TeamId::new(team), role: Role::Admin },
    }
}

async fn link(app: &TestApp, valid_for: time::Duration) -> String {
    issue_dev_sign_in_link(&app.db(), &admin_of("org_1"), valid_for).await.unwrap()
}

async fn dev_app() -> TestApp {
    TestApp::spawn_with(|config| {
        config.identity.dev_signing_key = Some(DEV_KEY.into());
        config.operator_user_ids = vec!["user_demo".into()];
    })
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_link_signs_the_demo_admin_in_once() {
    let app = dev_app().await;
    app.create_location("org_1", "downtown").await;
    let path = link(&app, time::Duration::minutes(15)).await;
    assert!(path.starts_with("/dev/sign-in?ticket="), "{path}");
    let stored: String =
        app.pg().await.query_one("SELECT ticket_sha256 FROM dev_sign_in_links", &[]).await.unwrap().get(0);
    assert!(!path.contains(&stored), "only the ticket's digest is stored");

    let answer = app.get(&path).send().await.unwrap();
    assert_eq!(answer.status(), 303);
    assert_eq!(answer.headers()[LOCATION], "/console");
    assert_eq!(answer.headers()["cache-control"], "no-store");
    assert_eq!(answer.headers()["referrer-policy"], "no-referrer");
    let set = answer.headers()[SET_COOKIE].to_str().unwrap().to_owned();
    assert!(set.starts_with("__session=") && set.contains("HttpOnly") && set.contains("SameSite=Lax"), "{set}");
    let session = set.split(';').next().unwrap().to_owned();
    for page in ["/console/week", "/console/compliance", "/console/jobs"] {
        let opened = app.get(page).header(COOKIE, &session).send().await.unwrap();
        assert_eq!(opened.status(), 200, "{page} opens as the demo's admin and operator");
    }

    let again = app.get(&path).send().await.unwrap();
    assert_eq!(again.status(), 403, "a link works once");
    assert!(again.headers().get(SET_COOKIE).is_none());
    assert!(again.text().await.unwrap().contains("used or has expired"));
    assert_eq!(app.count("dev_sign_in_links").await, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_expired_or_invented_link_signs_no_one_in() {
    let app = dev_app().await;
    let expired = link(&app, time::Duration::seconds(-1)).await;
    let answer = app.get(&expired).send().await.unwrap();
    assert_eq!(answer.status(), 403);
    assert!(answer.headers().get(SET_COOKIE).is_none());
    assert_eq!(app.count("dev_sign_in_links").await, 0, "the expired link was removed");
    for path in ["/dev/sign-in?ticket=q3Jm1cV0pX8kYt2sWb9nRz4eLh7uAf6dGi5oKj0MxNw", "/dev/sign-in?ticket=x"] {
        let answer = app.get(path).send().await.unwrap();
        assert_eq!(answer.status(), 403, "{path}");
        assert!(answer.headers().get(SET_COOKIE).is_none());
    }
    assert_eq!(app.get("/dev/sign-in").send().await.unwrap().status(), 400, "a ticket is required");
}

#[tokio::test(flavor = "multi_thread")]
async fn without_the_dev_identity_the_route_is_absent() {
    let app = TestApp::spawn().await;
    let path = link(&app, time::Duration::minutes(15)).await;
    let answer = app.get(&path).send().await.unwrap();
    assert_eq!(answer.status(), 404);
    assert!(answer.headers().get(SET_COOKIE).is_none());
    assert_eq!(app.count("dev_sign_in_links").await, 1, "nothing was redeemed");
}
