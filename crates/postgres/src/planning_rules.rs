//! The rules each team plans its weeks under (`planning_rules`, migration 35).

use async_trait::async_trait;
use diesel::sql_types::{Int4, Text};
use diesel::{OptionalExtension, QueryableByName};
use diesel_async::RunQueryDsl;
use opsd_core::{StoreError, TeamId};
use opsd_planning::week_plan::{PlanRules, PlanRulesStore};

use crate::prepared::prepared;
use crate::{Db, store_error};

/// Read and written on the primary: a solve that follows a change plans under it.
pub struct PgPlanRulesStore {
    db: Db,
}

impl PgPlanRulesStore {
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

#[derive(QueryableByName)]
struct RulesRow {
    #[diesel(sql_type = Int4)]
    max_weekly_minutes: i32,
    #[diesel(sql_type = Int4)]
    min_rest_minutes: i32,
    #[diesel(sql_type = Int4)]
    max_days_in_a_row: i32,
    #[diesel(sql_type = Int4)]
    min_shift_minutes: i32,
    #[diesel(sql_type = Int4)]
    understaffed_sales_at_risk_pct: i32,
    #[diesel(sql_type = Int4)]
    preference_weight_cents: i32,
    #[diesel(sql_type = Int4)]
    notice_days: i32,
    #[diesel(sql_type = Int4)]
    change_premium_cents: i32,
}

/// The columns are checked to be in range (migration 35): none is negative.
fn unsigned(value: i32) -> u32 {
    value.max(0) as u32
}

#[async_trait]
impl PlanRulesStore for PgPlanRulesStore {
    async fn rules(&self, team: &TeamId) -> Result<Option<PlanRules>, StoreError> {
        let mut conn = self.db.conn().await?;
        let row: Option<RulesRow> = prepared(
            "SELECT max_weekly_minutes, min_rest_minutes, max_days_in_a_row, min_shift_minutes, \
             understaffed_sales_at_risk_pct, preference_weight_cents, notice_days, change_premium_cents \
             FROM planning_rules WHERE team_id = $1",
        )
        .bind::<Text, _>(team.as_str())
        .get_result(&mut conn)
        .await
        .optional()
        .map_err(store_error)?;
        Ok(row.map(|row| PlanRules {
            max_weekly_minutes: unsigned(row.max_weekly_minutes),
            min_rest_minutes: unsigned(row.min_rest_minutes),
            max_days_in_a_row: unsigned(row.max_days_in_a_row),
            min_shift_minutes: unsigned(row.min_shift_minutes),
            understaffed_sales_at_risk_pct: unsigned(row.understaffed_sales_at_risk_pct),
            preference_weight_cents: i64::from(row.preference_weight_cents),
            notice_days: unsigned(row.notice_days),
            change_premium_cents: i64::from(row.change_premium_cents),
        }))
    }

    async fn put_rules(&self, team: &TeamId, rules: &PlanRules) -> Result<(), StoreError> {
        let mut conn = self.db.conn().await?;
        let int = |value: u32| i32::try_from(value).unwrap_or(i32::MAX);
        // A team is known from its first write, as the team settings' (`locations.rs`).
        prepared("INSERT INTO teams (id) VALUES ($1) ON CONFLICT DO NOTHING")
            .bind::<Text, _>(team.as_str())
            .execute(&mut conn)
            .await
            .map_err(store_error)?;
        prepared(
            "INSERT INTO planning_rules (team_id, max_weekly_minutes, min_rest_minutes, max_days_in_a_row, \
             min_shift_minutes, understaffed_sales_at_risk_pct, preference_weight_cents, notice_days, \
             change_premium_cents) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) \
             ON CONFLICT (team_id) DO UPDATE SET max_weekly_minutes = EXCLUDED.max_weekly_minutes, \
             min_rest_minutes = EXCLUDED.min_rest_minutes, max_days_in_a_row = EXCLUDED.max_days_in_a_row, \
             min_shift_minutes = EXCLUDED.min_shift_minutes, \
             understaffed_sales_at_risk_pct = EXCLUDED.understaffed_sales_at_risk_pct, \
             preference_weight_cents = EXCLUDED.preference_weight_cents, notice_days = EXCLUDED.notice_days, \
             change_premium_cents = EXCLUDED.change_premium_cents, updated_at = now()",
        )
        .bind::<Text, _>(team.as_str())
        .bind::<Int4, _>(int(rules.max_weekly_minutes))
        .bind::<Int4, _>(int(rules.min_rest_minutes))
        .bind::<Int4, _>(int(rules.max_days_in_a_row))
        .bind::<Int4, _>(int(rules.min_shift_minutes))
        .bind::<Int4, _>(int(rules.understaffed_sales_at_risk_pct))
        .bind::<Int4, _>(i32::try_from(rules.preference_weight_cents).unwrap_or(i32::MAX))
        .bind::<Int4, _>(int(rules.notice_days))
        .bind::<Int4, _>(i32::try_from(rules.change_premium_cents).unwrap_or(i32::MAX))
        .execute(&mut conn)
        .await
        .map_err(store_error)?;
        Ok(())
    }
}
