use actix_web::dev::Payload;
use actix_web::http::{Method, header};
use actix_web::{FromRequest, HttpRequest, web};
use futures::future::LocalBoxFuture;
use opsd_core::Caller;
use opsd_identity::{AuthError, TokenError};
use secrecy::{ExposeSecret, SecretString};
use subtle::ConstantTimeEq;

use crate::errors::ApiError;
use crate::state::AppState;

const SESSION_COOKIE: &str = "__session";

fn state(req: &HttpRequest) -> &web::Data<AppState> {
    req.app_data::<web::Data<AppState>>().expect("AppState is registered")
}

fn bearer(req: &HttpRequest) -> Option<&str> {
    let value = req.headers().get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim()).filter(|t| !t.is_empty())
}

/// Compares in constant time against every configured secret.
fn matches_any(presented: &str, secrets: &[SecretString]) -> bool {
    let mut matched = subtle::Choice::from(0);
    for secret in secrets {
        matched |= presented.as_bytes().ct_eq(secret.expose_secret().as_bytes());
    }
    bool::from(matched)
}

/// Whose `Idempotency-Key` a request's is: the API key it bears, or the user its token or
/// session cookie verifies as. `Ok(None)` when neither holds: the handler refuses the request
/// itself. A verification that could not be made (the database or the identity provider's keys
/// unavailable) is an error: the request must not run without its key, or a retry could run twice.
pub(crate) async fn idempotency_scope(
    req: &HttpRequest,
    state: &AppState,
) -> Result<Option<opsd_idempotency::KeyScope>, ApiError> {
    let bearer = bearer(req);
    if let Some(token) = bearer
        && matches_any(token, &state.credentials.api_keys)
    {
        return Ok(Some(opsd_idempotency::KeyScope::api_key(token)));
    }
    let token = match bearer {
        Some(token) => token.to_owned(),
        None => match req.cookie(SESSION_COOKIE) {
            Some(cookie) => cookie.value().trim().to_owned(),
            None => return Ok(None),
        },
    };
    match state.authenticator.authenticate(&token).await {
        Ok(caller) => Ok(Some(opsd_idempotency::KeyScope::user(caller.user_id.as_str()))),
        Err(AuthError::Store(error)) => Err(error.into()),
        Err(AuthError::InvalidToken(TokenError::KeysUnavailable)) => {
            Err(ApiError::Unavailable("the identity provider's keys could not be fetched".into()))
        }
        Err(_) => Ok(None),
    }
}

/// A request bearing one of the configured service API keys (`API_KEY`).
pub struct ApiKey;

impl FromRequest for ApiKey {
    type Error = ApiError;
    type Future = futures::future::Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let state = state(req);
        let ok = bearer(req).is_some_and(|token| matches_any(token, &state.credentials.api_keys));
        futures::future::ready(if ok { Ok(ApiKey) } else { Err(ApiError::Unauthorized) })
    }
}

/// A request of the cron scheduler, bearing `CRON_SECRET`.
pub struct CronSecret;

impl FromRequest for CronSecret {
    type Error = ApiError;
    type Future = futures::future::Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let state = state(req);
        let secrets = state.credentials.cron_secret.as_slice();
        let ok = bearer(req).is_some_and(|token| matches_any(token, secrets));
        futures::future::ready(if ok { Ok(CronSecret) } else { Err(ApiError::Unauthorized) })
    }
}

/// Where a user token may travel for a route.
#[derive(Clone, Copy)]
enum Transport {
    Bearer,
    Cookie,
    Either,
}

fn authenticate(req: &HttpRequest, transport: Transport) -> LocalBoxFuture<'static, Result<Caller, ApiError>> {
    let state = state(req).clone();
    let token = match transport {
        Transport::Bearer => bearer(req).map(str::to_owned).ok_or(ApiError::Unauthorized),
        Transport::Cookie => session_cookie(req, &state),
        // A bearer header cannot be attached by a browser on its own, so it needs no CSRF check.
        Transport::Either => match bearer(req) {
            Some(token) => Ok(token.to_owned()),
            None => session_cookie(req, &state),
        },
    };
    Box::pin(async move {
        let token = token?;
        state.authenticator.authenticate(&token).await.map_err(|error| match error {
            AuthError::InvalidToken(TokenError::KeysUnavailable) => {
                ApiError::Unavailable("the identity provider's keys could not be fetched".into())
            }
            AuthError::InvalidToken(reason) => {
                tracing::info!(%reason, "token rejected");
                ApiError::Unauthorized
            }
            AuthError::UserDeleted => ApiError::Unauthorized,
            AuthError::Store(error) => error.into(),
        })
    })
}

/// The `__session` cookie; a state-changing request must also come from `APP_ORIGIN` or this
/// service's own origin (CSRF).
fn session_cookie(req: &HttpRequest, state: &AppState) -> Result<String, ApiError> {
    let cookie = req.cookie(SESSION_COOKIE).ok_or(ApiError::Unauthorized)?;
    let safe = matches!(*req.method(), Method::GET | Method::HEAD | Method::OPTIONS);
    if !safe {
        // The app's origin, or this service's own (the console's forms post to it).
        let origin = req.headers().get(header::ORIGIN).and_then(|o| o.to_str().ok());
        let own = own_origin(req, &state.trusted_proxies);
        let allowed = origin.is_some_and(|o| Some(o) == state.app_origin.as_deref() || o == own);
        if !allowed {
            return Err(ApiError::Forbidden("A cookie-authenticated change must come from the app's origin."));
        }
    }
    let token = cookie.value().trim();
    if token.is_empty() { Err(ApiError::Unauthorized) } else { Ok(token.to_owned()) }
}

/// This service's origin as the client addressed it. actix's `connection_info` believes
/// `Forwarded` and `X-Forwarded-*` from anyone, which would let a page on any origin pass the
/// Origin check by naming its own host in `X-Forwarded-Host`; only a peer in `TRUSTED_PROXIES` is
/// believed, and otherwise the `Host` the request was sent to is (this server speaks plain HTTP).
fn own_origin(req: &HttpRequest, trusted: &[ip_network::IpNetwork]) -> String {
    let from_proxy = req.peer_addr().is_some_and(|peer| trusted.iter().any(|net| net.contains(peer.ip())));
    if from_proxy {
        let info = req.connection_info();
        return format!("{}://{}", info.scheme(), info.host());
    }
    let host = req.headers().get(header::HOST).and_then(|host| host.to_str().ok()).unwrap_or_default();
    format!("http://{host}")
}

macro_rules! caller_extractor {
    ($(#[$doc:meta])* $name:ident, $transport:expr) => {
        $(#[$doc])*
        pub struct $name(pub Caller);

        impl FromRequest for $name {
            type Error = ApiError;
            type Future = LocalBoxFuture<'static, Result<Self, ApiError>>;

            fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
                let caller = authenticate(req, $transport);
                Box::pin(async move { caller.await.map($name) })
            }
        }
    };
}

caller_extractor!(
    /// A user authenticated by `Authorization: Bearer <identity-provider JWT>`.
    BearerCaller,
    Transport::Bearer
);
caller_extractor!(
    /// A user authenticated by the `__session` cookie, with the Origin check on changes.
    SessionCaller,
    Transport::Cookie
);
caller_extractor!(
    /// A user authenticated by a bearer token or the `__session` cookie.
    AnyCaller,
    Transport::Either
);
