//! `opsd-soak-fakes`: the team chat, the push service and the scheduling provider the soak's
//! instances talk to, one set per instance host, on that host's loopback (opsd delivers to
//! loopback only when told to). Every chat post and push is appended to a log the soak's checker
//! reads: a push decrypted with the subscriber's key, as the browser would show it.
//!
//!   opsd-soak-fakes keys N                  the VAPID pair, the provider's credentials and N
//!                                           devices' keys, as JSON, to stdout
//!   opsd-soak-fakes serve PORT KEYS LOG     chat and push on PORT, the provider on PORT + 1,
//!                                           until killed

use std::io::Write;
use std::sync::{Arc, Mutex};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use opsd_tests::push_fake::{PushEndpoint, VAPID_PRIVATE_KEY, VAPID_PUBLIC_KEY};
use opsd_tests::seven_shifts_fake::{self, Fake7ShiftsServer};
use serde_json::{Value, json};
use wiremock::matchers::{method, path, path_regex};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

type Log = Arc<Mutex<std::fs::File>>;

fn append(log: &Log, line: Value) {
    let mut file = log.lock().expect("the log's lock");
    writeln!(file, "{line}").expect("the log is writable");
}

struct Push {
    name: String,
    endpoint: PushEndpoint,
    log: Log,
}

impl Respond for Push {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        match self.endpoint.check(request) {
            Ok(delivered) => {
                append(&self.log, json!({ "service": "push", "endpoint": self.name, "payload": delivered.payload }));
                ResponseTemplate::new(201)
            }
            Err(why) => {
                append(&self.log, json!({ "service": "refused", "endpoint": self.name, "why": why }));
                ResponseTemplate::new(400)
            }
        }
    }
}

struct Chat {
    log: Log,
}

impl Respond for Chat {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let payload: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
        append(&self.log, json!({ "service": "chat", "endpoint": request.url.path(), "payload": payload }));
        ResponseTemplate::new(200)
    }
}

/// The server's VAPID pair (the fake checks pushes are signed with it) and `count` devices.
fn keys(count: usize) -> Value {
    let devices: Vec<Value> = (0..count)
        .map(|n| {
            let (pair, auth) = ece::generate_keypair_and_auth_secret().expect("a key pair");
            let keys = pair.raw_components().expect("its components");
            json!({
                "name": format!("device{n}"),
                "p256dh": URL_SAFE_NO_PAD.encode(keys.public_key()),
                "private": URL_SAFE_NO_PAD.encode(keys.private_key()),
                "auth": URL_SAFE_NO_PAD.encode(auth),
            })
        })
        .collect();
    json!({
        "vapid": { "public": VAPID_PUBLIC_KEY, "private": VAPID_PRIVATE_KEY },
        "scheduler": { "token": seven_shifts_fake::TOKEN, "company": seven_shifts_fake::COMPANY },
        "devices": devices,
    })
}

async fn serve(port: u16, keys: Value, log: Log) {
    let listener = std::net::TcpListener::bind(("127.0.0.1", port)).expect("the port is free");
    let server = MockServer::builder().listener(listener).start().await;
    let decode = |field: &Value| URL_SAFE_NO_PAD.decode(field.as_str().expect("a key")).expect("base64url");
    for subscriber in keys["devices"].as_array().expect("an array of devices") {
        let name = subscriber["name"].as_str().expect("a name").to_owned();
        let auth: [u8; 16] = decode(&subscriber["auth"]).try_into().expect("16 bytes");
        let endpoint = PushEndpoint {
            endpoint: format!("{}/push/{name}", server.uri()),
            origin: server.uri(),
            keys: ece::EcKeyComponents::new(decode(&subscriber["private"]), decode(&subscriber["p256dh"])),
            auth,
        };
        let responder = Push { name: name.clone(), endpoint, log: log.clone() };
        Mock::given(method("POST")).and(path(format!("/push/{name}"))).respond_with(responder).mount(&server).await;
    }
    Mock::given(method("POST")).and(path_regex("^/chat/")).respond_with(Chat { log }).mount(&server).await;
    // A provider with no shifts, punches or roles: the sync jobs run, lock and record their runs.
    let provider = std::net::TcpListener::bind(("127.0.0.1", port + 1)).expect("the next port is free");
    let _provider = Fake7ShiftsServer::start_on(provider).await;
    std::future::pending::<()>().await;
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("keys") => println!("{}", keys(args.get(2).and_then(|n| n.parse().ok()).unwrap_or(4))),
        Some("serve") if args.len() == 5 => {
            let port = args[2].parse().expect("a port");
            let keys = serde_json::from_slice(&std::fs::read(&args[3]).expect("the keys file")).expect("JSON keys");
            let file = std::fs::OpenOptions::new().create(true).append(true).open(&args[4]).expect("the log");
            serve(port, keys, Arc::new(Mutex::new(file))).await;
        }
        _ => {
            eprintln!("usage: opsd-soak-fakes keys N | serve PORT KEYS LOG");
            std::process::exit(2);
        }
    }
}
