//! TLS to PostgreSQL: `sslmode` and `sslrootcert` in `DATABASE_URL`, for the pool and the
//! listener. The private test cluster has `ssl = on` with a certificate for `localhost` signed by a
//! private root (`scripts/pg-up.sh`).

use opsd_tests::{TestApp, TestDatabase, test_config};
use secrecy::{ExposeSecret, SecretString};

/// The private root that signed the server's certificate (beside it), and `ssl` must be on.
async fn server_root(app_url: &str) -> String {
    let (client, connection) = tokio_postgres::connect(app_url, tokio_postgres::NoTls).await.unwrap();
    tokio::spawn(connection);
    let ssl: String = client.query_one("SHOW ssl", &[]).await.unwrap().get(0);
    assert_eq!(ssl, "on", "the test cluster must run with ssl = on (scripts/pg-up.sh)");
    let certificate: String = client.query_one("SHOW ssl_cert_file", &[]).await.unwrap().get(0);
    certificate.replace("server.crt", "root.crt")
}

/// (connections of the service, of which encrypted) on the app's database.
async fn encrypted(app: &TestApp) -> (i64, i64) {
    let name = app.db_url.rsplit('/').next().unwrap().to_owned();
    let row = app
        .pg()
        .await
        .query_one(
            "SELECT count(*), count(*) FILTER (WHERE s.ssl) FROM pg_stat_activity a JOIN pg_stat_ssl s USING (pid) \
             WHERE a.datname = $1 AND a.application_name IN ('opsd', 'opsd-listener')",
            &[&name],
        )
        .await
        .unwrap();
    (row.get(0), row.get(1))
}

fn with_query(url: &str, query: &str) -> String {
    format!("{url}?{query}")
}

#[tokio::test(flavor = "multi_thread")]
async fn with_sslmode_require_every_connection_of_the_service_is_encrypted() {
    let app = TestApp::spawn_with(|config| {
        let url = with_query(config.database.url.expose_secret(), "sslmode=require");
        config.database.url = SecretString::from(url);
    })
    .await;
    let token = app.tokens.admin("user_1", "org_1");
    for _ in 0..5 {
        assert_eq!(app.get("/api/locations").bearer_auth(&token).send().await.unwrap().status(), 200);
    }
    let (connections, secure) = encrypted(&app).await;
    assert!(connections >= 2, "the pool's and the listener's connections: {connections}");
    assert_eq!(secure, connections, "every connection of the service uses TLS");
}

#[tokio::test(flavor = "multi_thread")]
async fn verify_full_accepts_the_servers_name_and_refuses_another_with_a_clear_error() {
    let database = TestDatabase::new().await;
    let root = server_root(database.url()).await;
    let verify_full = format!("sslmode=verify-full&sslrootcert={root}");
    let app = TestApp::spawn_with(|config| {
        let for_localhost =
            with_query(&config.database.url.expose_secret().replacen("127.0.0.1", "localhost", 1), &verify_full);
        config.database.url = SecretString::from(for_localhost);
    })
    .await;
    assert_eq!(app.get("/health/ready").send().await.unwrap().status(), 200);
    let (connections, secure) = encrypted(&app).await;
    assert_eq!((secure, connections > 0), (connections, true));

    // The certificate is for `localhost`; 127.0.0.1 is another name.
    let for_address = with_query(database.url(), &format!("sslmode=verify-full&sslrootcert={root}"));
    let refused = opsd::Application::build(test_config(&for_address))
        .await
        .err()
        .expect("verify-full refuses a certificate for another name");
    let message = format!("{refused:#}");
    assert!(message.contains("certificate not valid for name \"127.0.0.1\""), "{message}");
    assert!(!message.contains("sslrootcert="), "the error does not print the URL: {message}");

    // verify-ca checks the chain only, so the same connection passes.
    let verify_ca = format!("sslmode=verify-ca&sslrootcert={root}");
    let app = TestApp::spawn_with(|config| {
        config.database.url = SecretString::from(with_query(config.database.url.expose_secret(), &verify_ca));
    })
    .await;
    assert_eq!(app.get("/health/ready").send().await.unwrap().status(), 200);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unknown_root_is_refused_and_disable_means_plain_text() {
    let database = TestDatabase::new().await;
    let untrusted = with_query(&database.url().replacen("127.0.0.1", "localhost", 1), "sslmode=verify-full");
    let refused = opsd::Application::build(test_config(&untrusted))
        .await
        .err()
        .expect("a self-signed certificate is not a Mozilla root");
    assert!(format!("{refused:#}").contains("certificate"), "{refused:#}");

    let app = TestApp::spawn_with(|config| {
        config.database.url = SecretString::from(with_query(config.database.url.expose_secret(), "sslmode=disable"));
    })
    .await;
    assert_eq!(app.get("/health/ready").send().await.unwrap().status(), 200);
    let (connections, secure) = encrypted(&app).await;
    assert_eq!((secure, connections > 0), (0, true), "{connections} connections, {secure} encrypted");
}
