//! `GET /dev/sign-in?ticket=…`: a newcomer's way into the console under `just run`. The ticket is a
//! one-time link made by `opsd dev-sign-in-link`; the answer sets the `__session` cookie (a dev
//! token, as the identity provider's would be) and redirects to the console. The route exists only
//! when the server trusts the dev identity; the ticket rides in the query, which is never logged.

use std::sync::Arc;

use actix_web::cookie::{Cookie, SameSite};
use actix_web::http::StatusCode;
use actix_web::{HttpResponse, web};
use anyhow::Context;
use opsd_core::SystemClock;
use opsd_identity::{DevSignIn, DevSignInLinks};
use opsd_postgres::{Db, PgDevSignInStore};

use crate::config::IdentityConfig;
use crate::console::page::{refusal, unavailable};
use crate::dev_identity::{DevSigner, TokenRequest};
use crate::state::AppState;

pub const PATH: &str = "/dev/sign-in";
/// How long a session made by a link lasts, as `opsd dev-token`'s default.
const SESSION_HOURS: i64 = 12;

/// The links and the key that signs their sessions.
pub struct DevSignInDoor {
    links: DevSignInLinks,
    signer: DevSigner,
    secure_cookie: bool,
}

fn links(db: &Db) -> DevSignInLinks {
    DevSignInLinks::new(Arc::new(PgDevSignInStore::new(db.primary_only())), Arc::new(SystemClock))
}

impl DevSignInDoor {
    /// The door when the dev identity is configured (`OPSD_DEV_SIGNING_KEY`, checked by the
    /// configuration: no provider beside it, and the key the server trusts).
    pub fn from_config(identity: &IdentityConfig, db: &Db, app_origin: Option<&str>) -> anyhow::Result<Option<Self>> {
        let Some(path) = identity.dev_signing_key.as_deref() else { return Ok(None) };
        let signer = DevSigner::from_file(path, identity.issuer.clone(), identity.authorized_parties.first().cloned())?;
        let secure_cookie = app_origin.is_some_and(|origin| origin.starts_with("https://"));
        Ok(Some(Self { links: links(db), signer, secure_cookie }))
    }
}

/// Makes a link for `sign_in`, valid for `valid_for` (`opsd dev-sign-in-link`); answers its path.
pub async fn issue_link(db: &Db, sign_in: &DevSignIn, valid_for: time::Duration) -> anyhow::Result<String> {
    let ticket = crate::dev_identity::new_ticket();
    links(db).issue(&ticket, sign_in, valid_for).await.context("recording the sign-in link")?;
    Ok(format!("{PATH}?ticket={ticket}"))
}

#[derive(serde::Deserialize)]
pub struct Ticket {
    ticket: String,
}

pub async fn sign_in(query: web::Query<Ticket>, state: web::Data<AppState>) -> HttpResponse {
    let Some(door) = state.dev_sign_in.as_deref() else {
        return refusal(StatusCode::NOT_FOUND, "No such page.");
    };
    let sign_in = match door.links.redeem(&query.ticket).await {
        Ok(Some(sign_in)) => sign_in,
        Ok(None) => {
            return refusal(
                StatusCode::FORBIDDEN,
                "This sign-in link was used or has expired: run `just run` again for a new one.",
            );
        }
        Err(error) => return unavailable("Signing in is", error),
    };
    let request = TokenRequest {
        user: sign_in.user.as_str().to_owned(),
        team: Some(sign_in.membership.team_id.as_str().to_owned()),
        role: sign_in.membership.role.as_str().to_owned(),
        hours: SESSION_HOURS,
    };
    let token = match door.signer.sign(&request) {
        Ok(token) => token,
        Err(error) => return unavailable("Signing in is", error),
    };
    let cookie = Cookie::build("__session", token)
        .path("/")
        .http_only(true)
        .secure(door.secure_cookie)
        .same_site(SameSite::Lax)
        .max_age(actix_web::cookie::time::Duration::hours(SESSION_HOURS))
        .finish();
    HttpResponse::SeeOther()
        .cookie(cookie)
        .insert_header(("location", "/console"))
        .insert_header(("cache-control", "no-store"))
        .insert_header(("referrer-policy", "no-referrer"))
        .finish()
}
