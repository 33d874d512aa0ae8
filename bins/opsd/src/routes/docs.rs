//! `GET /docs`: the interactive API reference, rendered from `/openapi.json` by RapiDoc, with every
//! asset served from this origin (`scripts/vendor-api-reference.sh` vendors the pinned package), so
//! it works with no internet and its policy allows nothing else.

use actix_web::HttpResponse;
use actix_web::http::header;

/// RapiDoc, MIT, from the npm package `rapidoc@9.3.8`, gzipped as the package ships it.
const SCRIPT: &[u8] = include_bytes!("../../assets/rapidoc-9.3.8.min.js.gz");
pub const SCRIPT_PATH: &str = "/docs/rapidoc-9.3.8.min.js";

/// Only this origin; styles inline because the reference's components carry their own.
const POLICY: &str = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; \
font-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'; object-src 'none'";

const PAGE: &str = r##"<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>opsd API reference</title>
<script defer src="/docs/rapidoc-9.3.8.min.js"></script>
</head>
<body style="margin:0">
<noscript>The reference needs JavaScript; the document itself is at <a href="/openapi.json">/openapi.json</a>.</noscript>
<rapi-doc spec-url="/openapi.json" render-style="read" theme="light" show-header="false" allow-server-selection="false"
  regular-font="system-ui, -apple-system, 'Segoe UI', sans-serif" mono-font="ui-monospace, monospace"
  primary-color="#1f6f5c" allow-authentication="true" persist-auth="false" use-path-in-nav-bar="true"></rapi-doc>
</body>
</html>
"##;

pub async fn page() -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/html; charset=utf-8")
        .insert_header((header::CONTENT_SECURITY_POLICY, POLICY))
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .body(PAGE)
}

pub async fn script() -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/javascript; charset=utf-8")
        .insert_header((header::CONTENT_ENCODING, "gzip"))
        .insert_header((header::CACHE_CONTROL, "public, max-age=31536000, immutable"))
        .body(SCRIPT)
}
