#!/usr/bin/env python3
"""Fails when a domain crate depends, directly or not, on a web, database or HTTP-client crate.

Domain crates are the workspace members under crates/ that are not adapters. Only normal
(non-dev, non-build) dependencies count: a domain's tests may use what they like.
"""
import json
import subprocess
import sys

ADAPTERS = {"opsd-postgres", "opsd-outbound", "opsd-test-db"}
FORBIDDEN_PREFIXES = ("actix", "diesel", "tokio-postgres", "postgres", "deadpool", "reqwest", "hyper",
                      "sqlx", "wiremock", "isahc", "awc", "axum", "tonic", "redis", "web-push")

meta = json.loads(subprocess.check_output(["cargo", "metadata", "--format-version", "1", "--locked"]))
packages = {p["id"]: p for p in meta["packages"]}
members = set(meta["workspace_members"])
nodes = {n["id"]: n for n in meta["resolve"]["nodes"]}

def normal_deps(pkg_id):
    for dep in nodes[pkg_id]["deps"]:
        if any(k["kind"] is None for k in dep["dep_kinds"]):
            yield dep["pkg"]

failures = []
domains = []
for pkg_id in sorted(members):
    pkg = packages[pkg_id]
    if "/crates/" not in pkg["manifest_path"] or pkg["name"] in ADAPTERS:
        continue
    domains.append(pkg["name"])
    seen, stack, path = set(), [(pkg_id, [pkg["name"]])], {}
    while stack:
        current, trail = stack.pop()
        for dep in normal_deps(current):
            if dep in seen:
                continue
            seen.add(dep)
            name = packages[dep]["name"]
            if name.startswith(FORBIDDEN_PREFIXES):
                failures.append(" -> ".join(trail + [name]))
            else:
                stack.append((dep, trail + [name]))

if failures:
    print("domain crates must not depend on web, database or HTTP-client crates:")
    for failure in failures:
        print("  " + failure)
    sys.exit(1)
print(f"architecture: {len(domains)} domain crates depend on no web, database or HTTP-client crate ({', '.join(domains)})")
