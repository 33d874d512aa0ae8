//! `opsd serve-floor FILE`: the framework's floor under an answer, a yardstick for `just bench`.
//! The same workers and middleware as `serve`, and one route, `/floor`, that answers FILE's bytes
//! as a cached optimization report is answered (JSON, `ETag`, `x-cache: hit`) and does nothing
//! else. A route's throughput against it is what the route's own work costs; against
//! `/health/live` the route also pays for its answer's size.

use std::net::TcpListener;

use actix_web::dev::Server;
use actix_web::http::header;
use actix_web::web::{self, Bytes};
use actix_web::{App, HttpResponse, HttpServer};
use opsd_optimization::CacheStatus;

use crate::config::http_workers;
use crate::middleware::{HttpMetrics, RoutePattern, layered};

pub const PATH: &str = "/floor";
/// As long as a report's: 16 hex digits, quoted.
const ETAG: &str = "\"0123456789abcdef\"";

pub fn server(listener: TcpListener, body: Bytes) -> std::io::Result<Server> {
    let metrics = web::Data::new(HttpMetrics::new().with_routes([PATH]));
    Ok(HttpServer::new(move || {
        let body = body.clone();
        let answer = move || {
            let body = body.clone();
            async move {
                HttpResponse::Ok()
                    .insert_header(crate::routes::x_cache(CacheStatus::Hit))
                    .insert_header((header::ETAG, ETAG))
                    .content_type("application/json")
                    .body(body)
            }
        };
        let floor = web::resource(PATH).app_data(RoutePattern(PATH.into())).route(web::get().to(answer));
        layered(App::new().app_data(metrics.clone()).service(floor), Vec::new())
    })
    .workers(http_workers())
    .listen(listener)?
    .run())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[actix_web::test]
    async fn answers_the_file_as_a_cached_report_through_every_layer() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = server(listener, Bytes::from_static(b"{\"report\":1}")).unwrap();
        let handle = server.handle();
        actix_web::rt::spawn(server);
        let client = reqwest::Client::new();
        let answer = client.get(format!("http://127.0.0.1:{port}{PATH}")).bearer_auth("any").send().await.unwrap();
        assert_eq!(answer.status(), 200);
        let headers = answer.headers().clone();
        assert_eq!(headers["x-cache"], "hit");
        assert_eq!(headers["etag"], ETAG);
        assert_eq!(headers["content-type"], "application/json");
        // The layers' own headers: credentials mean no-store, and every answer has an id.
        assert_eq!(headers["cache-control"], "no-store");
        assert_eq!(headers["x-content-type-options"], "nosniff");
        assert!(headers.contains_key("x-request-id"));
        assert_eq!(answer.text().await.unwrap(), "{\"report\":1}");
        let elsewhere = client.get(format!("http://127.0.0.1:{port}/health/live")).send().await.unwrap();
        assert_eq!(elsewhere.status(), 404, "one route only");
        handle.stop(true).await;
    }
}
