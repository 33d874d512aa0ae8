//! `opsd check-config`: exit 0 when the environment is valid and the database answers; otherwise
//! non-zero, naming what is wrong, having served and written nothing. `opsd probe`: exit 0 while
//! the server on `BIND_ADDR` is ready.

use std::process::Output;

use opsd_test_db::TestDatabase;

const DEV_KEY: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/jwt-signing-key.pem");
const PUBLIC_KEY: &str = include_str!("../../../tests/fixtures/jwt-signing-key.pub.pem");
const OTHER_PUBLIC_KEY: &str = include_str!("../../../tests/fixtures/jwt-other-key.pub.pem");

fn check_config(env: &[(&str, &str)]) -> Output {
    opsd("check-config", env)
}

fn opsd(subcommand: &str, env: &[(&str, &str)]) -> Output {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_opsd"));
    command.arg(subcommand).env_clear().env("PATH", std::env::var("PATH").unwrap_or_default());
    command.envs(env.iter().copied()).output().expect("opsd runs")
}

fn text(output: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_valid_environment_passes_and_each_fault_is_named() {
    let database = TestDatabase::new().await;
    let ok = check_config(&[("DATABASE_URL", database.url())]);
    assert!(ok.status.success(), "{}", text(&ok));
    let dev = check_config(&[
        ("DATABASE_URL", database.url()),
        ("OPSD_DEV_SIGNING_KEY", DEV_KEY),
        ("IDENTITY_JWT_PUBLIC_KEY", PUBLIC_KEY),
    ]);
    assert!(dev.status.success(), "the dev key with its own public half: {}", text(&dev));
    assert!(text(&ok).contains("0 migrations pending"), "{}", text(&ok));

    let cases = [
        (vec![], "DATABASE_URL"),
        (vec![("DATABASE_URL", database.url()), ("DATABASE_POOL_MODE", "statement")], "DATABASE_POOL_MODE"),
        (vec![("DATABASE_URL", database.url()), ("DATABASE_POOL_MODE", "transaction")], "DATABASE_SESSION_URL"),
        (vec![("DATABASE_URL", "postgres://postgres@127.0.0.1:1/opsd")], "DATABASE_URL: connecting"),
        (
            vec![("DATABASE_URL", database.url()), ("DATABASE_REPLICA_URLS", "postgres://postgres@127.0.0.1:1/opsd")],
            "DATABASE_REPLICA_URLS[0]",
        ),
        (vec![("DATABASE_URL", database.url()), ("BIND_ADDR", "nowhere")], "BIND_ADDR"),
        (
            vec![("DATABASE_URL", database.url()), ("CORS_ALLOWED_ORIGINS", "https://app.example.com/path")],
            "CORS_ALLOWED_ORIGINS",
        ),
        // The dev identity's key: beside a real provider, not the trusted key's pair, or unreadable.
        (
            vec![
                ("DATABASE_URL", database.url()),
                ("OPSD_DEV_SIGNING_KEY", DEV_KEY),
                ("IDENTITY_JWKS_URL", "https://idp.example/jwks"),
            ],
            "OPSD_DEV_SIGNING_KEY: is for `just run` only",
        ),
        (
            vec![
                ("DATABASE_URL", database.url()),
                ("OPSD_DEV_SIGNING_KEY", DEV_KEY),
                ("IDENTITY_JWT_PUBLIC_KEY", OTHER_PUBLIC_KEY),
            ],
            "OPSD_DEV_SIGNING_KEY: IDENTITY_JWT_PUBLIC_KEY is not this key's public half",
        ),
        (
            vec![
                ("DATABASE_URL", database.url()),
                ("OPSD_DEV_SIGNING_KEY", "/nonexistent/private.pem"),
                ("IDENTITY_JWT_PUBLIC_KEY", PUBLIC_KEY),
            ],
            "OPSD_DEV_SIGNING_KEY: reading /nonexistent/private.pem",
        ),
    ];
    for (env, named) in cases {
        let output = check_config(&env);
        assert!(!output.status.success(), "{env:?} passed: {}", text(&output));
        assert!(text(&output).contains(named), "{env:?} does not name {named}: {}", text(&output));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_probe_passes_while_the_server_is_ready_and_fails_without_one() {
    let database = TestDatabase::new().await;
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let every_address = format!("0.0.0.0:{port}");
    let probe = || opsd("probe", &[("BIND_ADDR", &every_address)]);
    let nobody = probe();
    assert!(!nobody.status.success(), "{}", text(&nobody));
    assert!(text(&nobody).contains("no answer"), "{}", text(&nobody));

    let mut server = tokio::process::Command::new(env!("CARGO_BIN_EXE_opsd"))
        .arg("serve")
        .env("DATABASE_URL", database.url())
        .env("BIND_ADDR", format!("127.0.0.1:{port}"))
        .kill_on_drop(true)
        .spawn()
        .expect("opsd serves");
    let mut ready = probe();
    for _ in 0..100 {
        if ready.status.success() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        ready = probe();
    }
    assert!(ready.status.success(), "{}", text(&ready));
    assert!(text(&ready).contains("/health/ready: ready"), "{}", text(&ready));
    server.kill().await.unwrap();
}
