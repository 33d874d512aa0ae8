"""Schemathesis hooks for `just fuzz-api` (SCHEMATHESIS_HOOKS).

A client sends a fresh Idempotency-Key with each new request. Generated keys are short and repeat
across cases with other bodies, which the server rightly refuses (422 idempotency_mismatch; key
reuse is tested in tests/api/idempotency.rs), so a well-formed generated key is replaced by a new
UUID. A malformed one (a negative case) is sent as generated, to be refused with 400.
"""

import re
import uuid

import schemathesis

WELL_FORMED = re.compile(r"[!-~]{1,255}")


@schemathesis.hook
def map_case(context, case):
    headers = case.headers or {}
    key = headers.get("Idempotency-Key")
    if isinstance(key, str) and WELL_FORMED.fullmatch(key):
        headers["Idempotency-Key"] = str(uuid.uuid4())
    return case
