use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use time::OffsetDateTime;

use crate::schema::webhook_deliveries;

/// What recording a delivery found.
pub(crate) enum Recorded {
    New,
    SameBody,
    OtherBody,
}

/// Records a delivery by (source, id) inside the caller's transaction. A concurrent identical
/// delivery waits on the key until this transaction ends, then finds it.
pub(crate) async fn record_delivery(
    mut conn: &AsyncPgConnection,
    source: &str,
    id: &str,
    body_sha256: &str,
    event_type: &str,
    at: OffsetDateTime,
) -> Result<Recorded, diesel::result::Error> {
    let inserted = diesel::insert_into(webhook_deliveries::table)
        .values((
            webhook_deliveries::source.eq(source),
            webhook_deliveries::delivery_id.eq(id),
            webhook_deliveries::body_sha256.eq(body_sha256),
            webhook_deliveries::event_type.eq(event_type),
            webhook_deliveries::received_at.eq(at),
        ))
        .on_conflict_do_nothing()
        .execute(&mut conn)
        .await?;
    if inserted == 1 {
        return Ok(Recorded::New);
    }
    let stored: String =
        webhook_deliveries::table.find((source, id)).select(webhook_deliveries::body_sha256).first(&mut conn).await?;
    Ok(if stored == body_sha256 { Recorded::SameBody } else { Recorded::OtherBody })
}
