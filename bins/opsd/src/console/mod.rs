//! The operator console: server-rendered HTML pages (maud), readable with JavaScript off, signed
//! in with the identity provider's `__session` cookie. Changes are POST forms under the Origin
//! check. Pages show no contact values, tokens or secrets.

mod access;
mod chart;
mod compliance;
mod incidents;
mod jobs;
mod page;
mod plans;
mod queue;
mod sign_in;
mod week;

use actix_web::HttpResponse;

pub use compliance::page as compliance;
pub use incidents::{change_status as incident_status, detail as incident, list as incidents};
pub use jobs::page as jobs;
pub use page::{STYLESHEET_PATH, stylesheet};
pub use plans::{detail as plan, list as plans, propose as propose_plan};
pub use queue::{page as queue, retry as retry_guest_event};
pub use sign_in::{
    DevSignInDoor, PATH as DEV_SIGN_IN_PATH, issue_link as issue_dev_sign_in_link, sign_in as dev_sign_in,
};
pub use week::page as week;

pub async fn home() -> HttpResponse {
    HttpResponse::SeeOther().insert_header(("location", "/console/week")).finish()
}
