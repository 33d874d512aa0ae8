//! Who may open a console page: signed in with the identity provider's `__session` cookie, as a
//! member or admin of the current team, or as an operator (`OPERATOR_USER_IDS`). Anyone else gets
//! a page that says so, never data.

use actix_web::http::StatusCode;
use actix_web::{FromRequest, HttpRequest, HttpResponse, web};
use opsd_core::{Caller, TeamId};

use crate::console::page::refusal;
use crate::errors::ApiError;
use crate::extract::SessionCaller;
use crate::state::AppState;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    Member,
    Admin,
    Operator,
}

/// The signed-in caller when they may open a page that needs `need`; else the page to answer.
pub async fn allow(req: &HttpRequest, need: Need) -> Result<Caller, HttpResponse> {
    let SessionCaller(caller) = SessionCaller::extract(req).await.map_err(|error| match error {
        ApiError::Forbidden(reason) => refusal(StatusCode::FORBIDDEN, reason),
        ApiError::Unavailable(_) => refusal(StatusCode::SERVICE_UNAVAILABLE, "Sign-in cannot be checked right now."),
        _ => refusal(StatusCode::UNAUTHORIZED, "Sign in to the app first; the console uses its session."),
    })?;
    let state = req.app_data::<web::Data<AppState>>().expect("state");
    let allowed = match need {
        Need::Member => caller.team_id().is_ok(),
        Need::Admin => caller.admin_team().is_ok(),
        Need::Operator => state.operators.iter().any(|id| id == caller.user_id.as_str()),
    };
    if allowed {
        Ok(caller)
    } else {
        let message = match need {
            Need::Member => "This page needs a current team.",
            Need::Admin => "This page needs the admin role of the team.",
            Need::Operator => "This page is for the service's operators.",
        };
        Err(refusal(StatusCode::FORBIDDEN, message))
    }
}

pub fn team(caller: &Caller) -> TeamId {
    caller.team_id().expect("checked by allow").clone()
}
