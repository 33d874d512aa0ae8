//! The OpenAPI 3.1 document of every route, generated from the handlers' annotations.

use utoipa::openapi::security::{ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

use crate::errors::{Problem, ProblemField};
use crate::routes::{self, LocationView, NewLocationRequest, TeamSettingsRequest, TeamSettingsView};

#[derive(OpenApi)]
#[openapi(
    info(
        title = "opsd",
        description = "Operations platform for multi-location restaurant teams. Errors are RFC 9457 problem \
details (`application/problem+json`) with a stable `code`. JSON bodies are at most 256 KiB, must be sent as \
`application/json`, and unknown fields are rejected. Every response carries `x-request-id`.",
        version = "0.1.0"
    ),
    paths(
        routes::live, routes::ready, routes::metrics, routes::keep_alive,
        routes::create_location, routes::list_locations, routes::put_team_settings, routes::get_team_settings,
    ),
    components(schemas(Problem, ProblemField, LocationView, NewLocationRequest, TeamSettingsRequest, TeamSettingsView)),
    modifiers(&SecuritySchemes),
    tags(
        (name = "operations", description = "Health, metrics and the API document"),
        (name = "jobs", description = "Scheduled jobs called by the external cron scheduler"),
        (name = "setup", description = "Setting a team up"),
    )
)]
pub struct ApiDoc;

struct SecuritySchemes;

impl Modify for SecuritySchemes {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        let bearer = |description: &str| {
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).description(Some(description)).build())
        };
        components.add_security_scheme("bearer", bearer("An RS256 session JWT of the identity provider."));
        components.add_security_scheme("apiKey", bearer("A service API key (API_KEY)."));
        components.add_security_scheme("cronSecret", bearer("The cron scheduler's shared secret (CRON_SECRET)."));
        components.add_security_scheme(
            "session",
            SecurityScheme::ApiKey(ApiKey::Cookie(ApiKeyValue::with_description(
                "__session",
                "The identity provider's session cookie; changes must carry Origin equal to APP_ORIGIN.",
            ))),
        );
    }
}
