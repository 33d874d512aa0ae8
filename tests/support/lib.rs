//! The test harness: the real server on a random port against its own fresh database, a minter
//! of RS256 identity-provider tokens, and direct database access for asserting what was written.

mod app;
pub mod llm_fake;
pub mod push_fake;
pub mod served;
pub mod seven_shifts_fake;
mod tokens;

pub use app::{TestApp, TestShift, problem, test_config};
pub use opsd_test_db::TestDatabase;
pub use tokens::{AUTHORIZED_PARTY, ISSUER, SIGNING_PUBLIC_KEY, TokenMinter};

/// The web app's origin the test server trusts for cookie-authenticated changes.
pub const APP_ORIGIN: &str = "https://app.test.example";
pub const API_KEY: &str = "test-api-key";
pub const ROTATED_API_KEY: &str = "test-api-key-next";
pub const CRON_SECRET: &str = "test-cron-secret";
/// Every job's route, as the cron scheduler calls them.
pub const CRON_JOBS: [&str; 10] = [
    "/cron/expire-coupons",
    "/cron/keep-alive",
    "/cron/prune-soft-deleted-contacts",
    "/cron/report-reminder",
    "/cron/check-compliance",
    "/cron/aggregate-heroes",
    "/cron/publish-scheduled-announcements",
    "/cron/sync-schedule-from-7shifts",
    "/cron/sync-7shifts-roles",
    "/cron/sync-7shifts-punches",
];
pub const IDENTITY_WEBHOOK_SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
pub const COUPON_WEBHOOK_SECRET: &str = "whsec_dGVzdC1jb3Vwb24tc2VjcmV0LWZvci1vcHNk";

/// Signs a webhook delivery as a Standard Webhooks sender does (`v1,<base64 HMAC-SHA256>`).
pub fn sign_webhook(secret: &str, id: &str, timestamp: i64, body: &[u8]) -> String {
    opsd_signatures::WebhookSecret::parse(secret).expect("a whsec_ secret").sign(id, timestamp, body)
}
