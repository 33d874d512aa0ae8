//! `opsd seed-demo`: a demo team with a location, so the first request already shows data.
//! Idempotent: a second run changes nothing and prints the same ids.

use anyhow::Context;
use opsd_postgres::Db;
use opsd_postgres::schema::{locations, teams};

use diesel::prelude::*;
use diesel_async::RunQueryDsl;

pub const DEMO_TEAM: &str = "org_demo";
pub const DEMO_LOCATION_SLUG: &str = "demo-downtown";
const DEMO_LOCATION_ID: uuid::Uuid = uuid::uuid!("00000000-0000-7000-8000-00000000d001");

#[derive(Debug)]
pub struct DemoTeam {
    pub team_id: String,
    pub location_id: uuid::Uuid,
    pub location_slug: String,
}

pub async fn seed_demo(db: &Db) -> anyhow::Result<DemoTeam> {
    let mut conn = db.conn().await?;
    diesel::insert_into(teams::table)
        .values(teams::id.eq(DEMO_TEAM))
        .on_conflict_do_nothing()
        .execute(&mut conn)
        .await
        .context("seeding the demo team")?;
    diesel::insert_into(locations::table)
        .values((
            locations::id.eq(DEMO_LOCATION_ID),
            locations::team_id.eq(DEMO_TEAM),
            locations::name.eq("Demo Downtown"),
            locations::slug.eq(DEMO_LOCATION_SLUG),
            locations::timezone.eq("America/Chicago"),
        ))
        .on_conflict_do_nothing()
        .execute(&mut conn)
        .await
        .context("seeding the demo location")?;
    Ok(DemoTeam { team_id: DEMO_TEAM.into(), location_id: DEMO_LOCATION_ID, location_slug: DEMO_LOCATION_SLUG.into() })
}
