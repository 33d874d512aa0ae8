//! The legacy schedule view's query and body (snake_case, as it always was).

use opsd_scheduling::ViewParams;
use serde::{Deserialize, Serialize};
use time::{Date, OffsetDateTime};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct ScheduleViewQuery {
    /// `YYYY-MM-DD`; default yesterday in the location's time zone.
    start_date: Option<String>,
    /// `YYYY-MM-DD`; default start_date + 6 days; at most 62 days after start_date.
    end_date: Option<String>,
    employee_key: Option<String>,
    /// `FOH`, `BOH` or `Other`.
    department: Option<String>,
    /// `Lunch`, `Dinner` or `LateNight`.
    daypart: Option<String>,
    /// `true` or `false` (default).
    include_draft: Option<String>,
    /// 1 to 500, default 100.
    limit: Option<String>,
    /// 0 or more, default 0.
    offset: Option<String>,
}

impl From<ScheduleViewQuery> for ViewParams {
    fn from(query: ScheduleViewQuery) -> Self {
        Self {
            start_date: query.start_date,
            end_date: query.end_date,
            employee_key: query.employee_key,
            department: query.department,
            daypart: query.daypart,
            include_draft: query.include_draft,
            limit: query.limit,
            offset: query.offset,
        }
    }
}

#[derive(Serialize, ToSchema)]
pub struct ViewShift {
    shift_id: Uuid,
    #[serde(with = "opsd_core::iso_date")]
    #[schema(value_type = String, format = Date)]
    business_date: Date,
    employee_name: String,
    employee_key: String,
    role: String,
    /// `FOH`, `BOH` or `Other`.
    department: String,
    /// `Lunch`, `Dinner` or `LateNight`.
    daypart: String,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    start_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    end_at: OffsetDateTime,
    /// Decimal text with 2 decimals.
    hours_worked: String,
    /// Decimal text with 2 decimals.
    hourly_wage: String,
    is_draft: bool,
}

#[derive(Serialize, ToSchema)]
pub struct ScheduleView {
    location_slug: String,
    location_name: String,
    #[serde(with = "opsd_core::iso_date")]
    #[schema(value_type = String, format = Date)]
    start_date: Date,
    #[serde(with = "opsd_core::iso_date")]
    #[schema(value_type = String, format = Date)]
    end_date: Date,
    shifts: Vec<ViewShift>,
    total_count: u64,
    limit: u32,
    offset: u32,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    generated_at: OffsetDateTime,
}

impl From<opsd_scheduling::ScheduleView> for ScheduleView {
    fn from(view: opsd_scheduling::ScheduleView) -> Self {
        let shifts = view
            .shifts
            .into_iter()
            .map(|s| ViewShift {
                shift_id: s.shift_id,
                business_date: s.business_date,
                employee_name: s.employee_name,
                employee_key: s.employee_key,
                role: s.role,
                department: s.department,
                daypart: s.daypart,
                start_at: s.start_at,
                end_at: s.end_at,
                hours_worked: s.hours_worked,
                hourly_wage: s.hourly_wage,
                is_draft: s.is_draft,
            })
            .collect();
        Self {
            location_slug: view.location_slug,
            location_name: view.location_name,
            start_date: view.start_date,
            end_date: view.end_date,
            shifts,
            total_count: view.total_count,
            limit: view.limit,
            offset: view.offset,
            generated_at: view.generated_at,
        }
    }
}
