//! The week's sales forecast per day and block, made only from the sales before the week, with the
//! labor hours each day's forecast calls for by the SPLH goal and by the labor % goal.

use opsd_core::Week;
use opsd_optimization::{Block, effective_goals};
use rust_decimal::Decimal;
use time::{Date, Duration};

use crate::forecast::{BLOCKS, Backtest, Method, SalesHistory, choose_method, forecast};
use crate::ports::ForecastData;
use crate::recommend::{HoursRecommendation, recommended_hours};
use crate::variance::LaborLine;

pub const INSUFFICIENT_HISTORY: &str = "insufficient_history";
/// The least history a forecast is made from.
pub const MIN_HISTORY_DAYS: i64 = 28;
/// How far back the history is read: a year and the 4 weeks before it for the year-over-year
/// blend, and the 8 held-out weeks of the backtest.
pub const HISTORY_WEEKS: i64 = 52 + 4 + 8 + 1;

#[derive(Debug, Clone, PartialEq)]
pub struct ForecastReport {
    pub week_label: String,
    /// The method used; None with `reason` when the history is too short.
    pub method: Option<Method>,
    pub reason: Option<&'static str>,
    /// The backtest of the method against the baseline; None when the history is too short for
    /// the 8 held-out weeks (the baseline is then used).
    pub backtest: Option<Backtest>,
    /// Labor cost ÷ hours of the 4 weeks before: worked punches, else scheduled shifts.
    pub blended_hourly_wage: Option<Decimal>,
    pub wage_source: Option<&'static str>,
    pub days: Vec<ForecastDay>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ForecastDay {
    pub day: Date,
    pub blocks: Vec<(Block, Option<Decimal>)>,
    pub forecast_sales: Option<Decimal>,
    pub hours: HoursRecommendation,
}

fn blended_wage(data: &ForecastData) -> (Option<Decimal>, Option<&'static str>) {
    let per_hour = |line: &LaborLine| (line.hours > Decimal::ZERO).then(|| (line.cost / line.hours).round_dp(2));
    match (per_hour(&data.worked), per_hour(&data.scheduled)) {
        (Some(wage), _) => (Some(wage), Some("punches")),
        (None, Some(wage)) => (Some(wage), Some("schedule")),
        (None, None) => (None, None),
    }
}

pub fn build_forecast(week: Week, data: &ForecastData) -> ForecastReport {
    let history = SalesHistory::new(data.sales.iter().copied());
    let start = week.start();
    let long_enough = history.first_day().is_some_and(|first| first <= start - Duration::days(MIN_HISTORY_DAYS));
    let backtest = long_enough.then(|| choose_method(&history, start)).flatten();
    let method = long_enough.then(|| backtest.map_or(Method::Baseline, |b| b.method));
    let days = report_days(week, data, method.is_some(), |day, block| {
        method.and_then(|m| forecast(&history, m, day, block, start)).map(|s| s.round_dp(2))
    });
    let (blended_hourly_wage, wage_source) = blended_wage(data);
    ForecastReport {
        week_label: format!("Week of {start}"),
        method,
        reason: (!long_enough).then_some(INSUFFICIENT_HISTORY),
        backtest,
        blended_hourly_wage,
        wage_source,
        days,
    }
}

/// What a perfect forecast would have said of a week that has passed: the sales it had (`data`
/// holds that week's), with the hours they call for by the same goals. A plan is scored against it.
pub fn hindsight(week: Week, data: &ForecastData) -> ForecastReport {
    let days = report_days(week, data, true, |day, block| {
        Some(data.sales.iter().filter(|(d, b, _)| *d == day && *b == block).map(|(_, _, sales)| *sales).sum())
    });
    let (blended_hourly_wage, wage_source) = blended_wage(data);
    ForecastReport {
        week_label: format!("Week of {}", week.start()),
        method: None,
        reason: None,
        backtest: None,
        blended_hourly_wage,
        wage_source,
        days,
    }
}

/// Each day's sales per block and the hours they call for; without `known`, none of it.
fn report_days(
    week: Week,
    data: &ForecastData,
    known: bool,
    sales: impl Fn(Date, Block) -> Option<Decimal>,
) -> Vec<ForecastDay> {
    let goals = effective_goals(&data.goals);
    let (blended_hourly_wage, _) = blended_wage(data);
    week.days()
        .into_iter()
        .map(|day| {
            let blocks: Vec<(Block, Option<Decimal>)> = BLOCKS.map(|block| (block, sales(day, block))).to_vec();
            let forecast_sales = known.then(|| blocks.iter().filter_map(|(_, sales)| *sales).sum::<Decimal>());
            let goal = goals.iter().find(|g| g.day_of_week == Week::day_of_week(day));
            let hours = match forecast_sales {
                Some(sales) => recommended_hours(
                    sales,
                    goal.map(|g| g.splh_target),
                    goal.map(|g| g.labor_pct_target),
                    blended_hourly_wage,
                ),
                None => HoursRecommendation::unknown(INSUFFICIENT_HISTORY),
            };
            ForecastDay { day, blocks, forecast_sales, hours }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use opsd_core::LocationId;
    use opsd_optimization::StoredGoal;
    use time::macros::date;

    use super::*;

    const SATURDAY: Date = date!(2026 - 11 - 21);

    fn data(days: i64) -> ForecastData {
        ForecastData {
            sales: (1..=days)
                .flat_map(|back| BLOCKS.map(|block| (SATURDAY - Duration::days(back), block, Decimal::from(1000))))
                .collect(),
            goals: vec![StoredGoal {
                location_id: None::<LocationId>,
                day_of_week: 0,
                sales_goal: Decimal::from(3000),
                labor_pct_target: Decimal::from(25),
                splh_target: Decimal::from(100),
            }],
            worked: LaborLine { hours: Decimal::from(100), cost: Decimal::from(1500) },
            scheduled: LaborLine::default(),
        }
    }

    #[test]
    fn under_four_weeks_every_number_is_null_with_its_reason() {
        let report = build_forecast(Week::containing(SATURDAY), &data(27));
        assert_eq!((report.method, report.reason), (None, Some(INSUFFICIENT_HISTORY)));
        assert!(report.days.iter().all(|d| d.forecast_sales.is_none() && d.blocks.iter().all(|(_, s)| s.is_none())));
        assert_eq!(report.days[0].hours.hours_for_splh_reason, Some(INSUFFICIENT_HISTORY));
    }

    #[test]
    fn four_weeks_forecast_with_the_baseline_and_recommend_hours_by_each_goal() {
        let report = build_forecast(Week::containing(SATURDAY), &data(28));
        assert_eq!((report.method, report.backtest), (Some(Method::Baseline), None), "too short to backtest");
        let saturday = &report.days[0];
        assert_eq!(saturday.forecast_sales, Some(Decimal::from(3000)));
        assert_eq!(saturday.hours.hours_for_splh, Some(Decimal::from(30)), "$3000 at $100/h");
        assert_eq!(saturday.hours.hours_for_labor_pct, Some(Decimal::from(50)), "$750 budget at the $15 blended wage");
        assert_eq!((report.blended_hourly_wage, report.wage_source), (Some(Decimal::from(15)), Some("punches")));
        assert_eq!(report.days[1].hours.hours_for_splh_reason, Some("no_splh_target"), "Sunday has no goal");
    }

    #[test]
    fn a_long_history_is_backtested_and_the_chosen_method_is_no_worse_than_the_baseline() {
        let report = build_forecast(Week::containing(SATURDAY), &data(400));
        let backtest = report.backtest.unwrap();
        assert_eq!(backtest.weeks, 8);
        assert!(backtest.wape <= backtest.baseline_wape);
    }
}
