//! The breaking-change check (`scripts/api-diff.sh`, which `just api-check` runs on the served
//! document against `openapi/released.json`) catches each kind of break seeded into the released
//! document, lets an additive change through, and lets a break through a semver raise.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_owned()
}

fn released() -> Value {
    serde_json::from_str(&std::fs::read_to_string(repository().join("openapi/released.json")).unwrap()).unwrap()
}

/// Whether the check passes `current` against the released document, and what it printed.
fn check(current: &Value) -> (bool, String) {
    let path = std::env::temp_dir().join(format!("opsd-api-diff-{}.json", uuid::Uuid::new_v4()));
    std::fs::write(&path, serde_json::to_vec(current).unwrap()).unwrap();
    let output = Command::new(repository().join("scripts/api-diff.sh"))
        .arg(repository().join("openapi/released.json"))
        .arg(&path)
        .output()
        .unwrap();
    std::fs::remove_file(&path).unwrap();
    let printed = String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr);
    (output.status.success(), printed)
}

#[test]
fn seeded_breaks_fail_the_check_and_additions_or_a_version_raise_pass() {
    type Seed = fn(&mut Value);
    let breaks: [(&str, Seed); 5] = [
        ("a removed operation", |d| {
            d["paths"]["/api/contacts/{id}"].as_object_mut().unwrap().remove("delete");
        }),
        ("a removed response field", |d| {
            d["components"]["schemas"]["LocationView"]["properties"].as_object_mut().unwrap().remove("slug");
        }),
        ("a removed enum value", |d| {
            d["components"]["schemas"]["Severity"]["enum"] = json!(["low", "medium", "high"]);
        }),
        ("a new required parameter", |d| {
            let parameters = d["paths"]["/api/locations"]["get"]["parameters"].as_array_mut().unwrap();
            parameters
                .push(json!({ "name": "region", "in": "query", "required": true, "schema": { "type": "string" } }));
        }),
        ("a narrowed type", |d| {
            d["components"]["schemas"]["NewLocationRequest"]["properties"]["name"] = json!({ "type": "integer" });
        }),
    ];
    let mut last = released();
    for (name, seed) in breaks {
        let mut current = released();
        seed(&mut current);
        let (passed, printed) = check(&current);
        assert!(!passed, "{name} passed the check:\n{printed}");
        assert!(printed.contains("breaking changes from"), "{name}:\n{printed}");
        last = current;
    }
    last["info"]["version"] = json!("0.2.0");
    let (passed, printed) = check(&last);
    assert!(passed && printed.contains("allowed by the version raise"), "a break with 0.2.0 failed:\n{printed}");
    last["info"]["version"] = json!("0.1.1");
    assert!(!check(&last).0, "a patch raise does not allow a break");

    let mut added = released();
    added["components"]["schemas"]["LocationView"]["properties"]["region"] = json!({ "type": "string" });
    let (passed, printed) = check(&added);
    assert!(passed, "an added response field failed:\n{printed}");
    let (passed, printed) = check(&released());
    assert!(passed && printed.contains("no breaking change"), "{printed}");
}
