#!/usr/bin/env python3
"""Fails when a domain crate depends, directly or not, on a web, database or HTTP-client crate, or
on utoipa (the API document's types live with the handlers).

Domain crates are the workspace members under crates/ that are not adapters. Each is resolved on
its own (`cargo tree -p`), as a user of that crate would build it: the features other workspace
members switch on for a shared dependency do not count against it. Only normal dependencies count:
a domain's tests may use what they like.
"""
import json
import subprocess
import sys

ADAPTERS = {"opsd-postgres", "opsd-outbound", "opsd-cache", "opsd-test-db", "opsd-solver"}
FORBIDDEN_PREFIXES = ("actix", "diesel", "tokio-postgres", "postgres", "deadpool", "reqwest", "hyper",
                      "sqlx", "wiremock", "isahc", "awc", "axum", "tonic", "redis", "web-push", "utoipa",
                      "highs", "coin_cbc")

meta = json.loads(subprocess.check_output(["cargo", "metadata", "--format-version", "1", "--no-deps", "--locked"]))
domains = sorted(p["name"] for p in meta["packages"]
                 if "/crates/" in p["manifest_path"] and p["name"] not in ADAPTERS)

failures = []
for domain in domains:
    tree = subprocess.check_output(
        ["cargo", "tree", "--locked", "-p", domain, "-e", "normal", "--prefix", "none", "--format", "{p}"], text=True)
    for line in tree.splitlines():
        name = line.split(" ")[0]
        if name.startswith(FORBIDDEN_PREFIXES):
            failures.append(f"{domain} -> {name}")

if failures:
    print("domain crates must not depend on web, database, HTTP-client or API-document crates:")
    for failure in sorted(set(failures)):
        print("  " + failure)
    sys.exit(1)
print(f"architecture: {len(domains)} domain crates depend on no web, database or HTTP-client crate ({', '.join(domains)})")
