//! The KPI arithmetic: pure functions of the week's facts and goals, in `Decimal` throughout.

use rust_decimal::Decimal;

use crate::goals::{DayGoal, effective_goals};
use crate::model::{Department, Week, WeekData};
use crate::report::{DailyRow, LaborRow, OptimizationReport, SalesRow, Summary, WeeklySummary};

pub const NO_SALES: &str = "no_sales";
pub const NO_LABOR_HOURS: &str = "no_labor_hours";

/// Labor cost over sales, 4 decimals; null with `no_sales` when there were no sales.
pub fn labor_pct(cost: Decimal, sales: Decimal) -> (Option<Decimal>, Option<&'static str>) {
    if sales.is_zero() { (None, Some(NO_SALES)) } else { (Some((cost / sales).round_dp(4)), None) }
}

/// Sales over labor hours, 2 decimals; null with `no_labor_hours` when no hours were worked.
pub fn splh(sales: Decimal, hours: Decimal) -> (Option<Decimal>, Option<&'static str>) {
    if hours.is_zero() { (None, Some(NO_LABOR_HOURS)) } else { (Some((sales / hours).round_dp(2)), None) }
}

fn mean(values: impl Iterator<Item = Decimal>, dp: u32) -> Option<Decimal> {
    let (sum, count) = values.fold((Decimal::ZERO, 0u32), |(sum, count), v| (sum + v, count + 1));
    (count > 0).then(|| (sum / Decimal::from(count)).round_dp(dp))
}

/// A day meets its goal when sales reach the sales goal, labor percentage stays within its target
/// and SPLH reaches its target; a null KPI fails its goal.
fn goals_met(goal: &DayGoal, sales: Decimal, labor_pct: Option<Decimal>, splh: Option<Decimal>) -> bool {
    sales >= goal.sales_goal
        && labor_pct.is_some_and(|pct| pct * Decimal::ONE_HUNDRED <= goal.labor_pct_target)
        && splh.is_some_and(|value| value >= goal.splh_target)
}

pub fn build_report(week: Week, data: &WeekData) -> OptimizationReport {
    let goals = effective_goals(&data.goals);
    let days = week.days();

    let mut sales_by_category: Vec<SalesRow> = data
        .sales
        .iter()
        .filter(|fact| fact.date >= week.start() && fact.date <= week.end())
        .map(|fact| SalesRow {
            day: fact.date,
            block: fact.block,
            food: fact.food,
            beverage: fact.beverage,
            other: fact.other,
            total: fact.food + fact.beverage + fact.other,
        })
        .collect();
    sales_by_category.sort_by_key(|row| (row.day, row.block));

    let labor_by_category: Vec<LaborRow> = days
        .iter()
        .map(|&day| {
            let hours_of = |department: Department| -> Decimal {
                data.labor.iter().filter(|f| f.date == day && f.department == department).map(|f| f.hours).sum()
            };
            let (foh_hours, boh_hours, na_hours) =
                (hours_of(Department::Foh), hours_of(Department::Boh), hours_of(Department::Other));
            let cost: Decimal = data.labor.iter().filter(|f| f.date == day).map(|f| f.cost).sum();
            let sales: Decimal = sales_by_category.iter().filter(|r| r.day == day).map(|r| r.total).sum();
            let (labor_pct_fraction, labor_pct_reason) = labor_pct(cost, sales);
            LaborRow {
                day,
                foh_hours,
                boh_hours,
                na_hours,
                total_hours: foh_hours + boh_hours + na_hours,
                cost,
                labor_pct_fraction,
                labor_pct_reason,
            }
        })
        .collect();

    let daily_summary: Vec<DailyRow> = days
        .iter()
        .zip(&labor_by_category)
        .map(|(&day, labor)| {
            let sales: Decimal = sales_by_category.iter().filter(|r| r.day == day).map(|r| r.total).sum();
            let guests: Vec<i64> = data.sales.iter().filter(|f| f.date == day).filter_map(|f| f.guests).collect();
            let (splh_value, splh_reason) = splh(sales, labor.total_hours);
            let goal = goals.iter().find(|g| g.day_of_week == Week::day_of_week(day));
            DailyRow {
                day,
                sales,
                labor_cost: labor.cost,
                labor_pct_fraction: labor.labor_pct_fraction,
                labor_pct_reason: labor.labor_pct_reason,
                splh: splh_value,
                splh_reason,
                served_guests: (!guests.is_empty()).then(|| guests.iter().sum()),
                goals_met: goal.map(|goal| goals_met(goal, sales, labor.labor_pct_fraction, splh_value)),
            }
        })
        .collect();

    let total_sales: Decimal = daily_summary.iter().map(|d| d.sales).sum();
    let total_labor_cost: Decimal = daily_summary.iter().map(|d| d.labor_cost).sum();
    let total_hours: Decimal = labor_by_category.iter().map(|l| l.total_hours).sum();
    let (labor_pct_fraction, labor_pct_reason) = labor_pct(total_labor_cost, total_sales);
    let (splh_value, splh_reason) = splh(total_sales, total_hours);

    let avg_labor_pct_fraction = mean(daily_summary.iter().filter_map(|d| d.labor_pct_fraction), 4);
    let days_with_goal: Vec<bool> = daily_summary.iter().filter_map(|d| d.goals_met).collect();
    let selling_days = || daily_summary.iter().filter(|d| d.sales > Decimal::ZERO);
    // Ties go to the earliest day.
    let top_day = selling_days().fold(None::<&DailyRow>, |best, d| match best {
        Some(b) if b.sales >= d.sales => Some(b),
        _ => Some(d),
    });
    let worst_day = selling_days().fold(None::<&DailyRow>, |worst, d| match worst {
        Some(w) if w.sales <= d.sales => Some(w),
        _ => Some(d),
    });

    OptimizationReport {
        week_label: format!("Week of {}", week.start()),
        summary: Summary {
            total_sales,
            total_labor_cost,
            labor_pct_fraction,
            labor_pct_reason,
            target_labor_pct: mean(goals.iter().map(|g| g.labor_pct_target), 2),
            splh: splh_value,
            splh_reason,
            target_splh: mean(goals.iter().map(|g| g.splh_target), 2),
        },
        weekly_summary: WeeklySummary {
            total_sales,
            total_labor_cost,
            avg_labor_pct_fraction,
            avg_labor_pct_reason: avg_labor_pct_fraction.is_none().then_some(NO_SALES),
            avg_splh: mean(daily_summary.iter().filter_map(|d| d.splh), 2),
            goals_met_percent: (!days_with_goal.is_empty()).then(|| {
                let met = days_with_goal.iter().filter(|met| **met).count();
                (Decimal::ONE_HUNDRED * Decimal::from(met) / Decimal::from(days_with_goal.len())).round_dp(2)
            }),
            top_day: top_day.map(|d| d.day),
            worst_day: worst_day.map(|d| d.day),
        },
        sales_by_category,
        labor_by_category,
        daily_summary,
    }
}

#[cfg(test)]
mod tests {
    use opsd_core::LocationId;
    use proptest::prelude::*;
    use time::macros::date;
    use uuid::Uuid;

    use super::*;
    use crate::model::{Block, LaborFact, SalesFact, StoredGoal};

    fn week() -> Week {
        Week::starting("weekOf", date!(2026 - 11 - 14)).unwrap()
    }

    fn d(value: &str) -> Decimal {
        value.parse().unwrap()
    }

    fn sale(day: time::Date, block: Block, food: &str, guests: Option<i64>) -> SalesFact {
        SalesFact { date: day, block, food: d(food), beverage: d("0"), other: d("0"), guests }
    }

    fn labor(day: time::Date, department: Department, hours: &str, cost: &str) -> LaborFact {
        LaborFact { date: day, department, hours: d(hours), cost: d(cost) }
    }

    #[test]
    fn an_empty_week_has_seven_days_of_nulls_with_reasons() {
        let report = build_report(week(), &WeekData::default());
        assert_eq!(report.week_label, "Week of 2026-11-14");
        assert_eq!(report.daily_summary.len(), 7);
        assert_eq!(report.labor_by_category.len(), 7);
        assert_eq!(report.daily_summary[0].day, date!(2026 - 11 - 14));
        assert!(report.sales_by_category.is_empty());
        assert_eq!((report.summary.labor_pct_fraction, report.summary.labor_pct_reason), (None, Some(NO_SALES)));
        assert_eq!((report.summary.splh, report.summary.splh_reason), (None, Some(NO_LABOR_HOURS)));
        assert_eq!(report.weekly_summary.avg_labor_pct_reason, Some(NO_SALES));
        assert_eq!(report.weekly_summary.top_day, None);
        assert_eq!(report.summary.target_labor_pct, None);
        assert!(report.daily_summary.iter().all(|day| day.goals_met.is_none() && day.served_guests.is_none()));
    }

    #[test]
    fn weekly_kpis_are_ratios_of_totals_not_means_of_days() {
        let (sat, sun) = (date!(2026 - 11 - 14), date!(2026 - 11 - 15));
        let data = WeekData {
            sales: vec![
                sale(sat, Block::Dinner, "1000", Some(40)),
                sale(sat, Block::Lunch, "500", Some(20)),
                sale(sun, Block::Lunch, "100", None),
            ],
            labor: vec![
                labor(sat, Department::Foh, "10", "150"),
                labor(sat, Department::Boh, "5", "100"),
                labor(sun, Department::Other, "10", "150"),
            ],
            goals: vec![],
        };
        let report = build_report(week(), &data);
        assert_eq!(report.summary.total_sales, d("1600"));
        assert_eq!(report.summary.total_labor_cost, d("400"));
        assert_eq!(report.summary.labor_pct_fraction, Some(d("0.25")));
        assert_eq!(report.summary.splh, Some(d("64")));
        let saturday = &report.daily_summary[0];
        assert_eq!((saturday.labor_pct_fraction, saturday.splh), (Some(d("0.1667")), Some(d("100"))));
        assert_eq!(saturday.served_guests, Some(60));
        assert_eq!(report.daily_summary[1].splh, Some(d("10")));
        // The diagnostic mean of daily SPLH (100, 10) differs from the weekly KPI (64).
        assert_eq!(report.weekly_summary.avg_splh, Some(d("55")));
        assert_eq!(report.weekly_summary.avg_labor_pct_fraction, Some(d("0.8334")));
        assert_eq!((report.weekly_summary.top_day, report.weekly_summary.worst_day), (Some(sat), Some(sun)));
        let blocks: Vec<Block> = report.sales_by_category.iter().map(|r| r.block).collect();
        assert_eq!(blocks, [Block::Lunch, Block::Dinner, Block::Lunch], "by day, then block");
        let labor_sat = &report.labor_by_category[0];
        assert_eq!(
            (labor_sat.foh_hours, labor_sat.boh_hours, labor_sat.na_hours, labor_sat.total_hours),
            (d("10"), d("5"), d("0"), d("15"))
        );
    }

    #[test]
    fn goals_are_met_only_when_every_kpi_reaches_its_target() {
        let (sat, sun, mon) = (date!(2026 - 11 - 14), date!(2026 - 11 - 15), date!(2026 - 11 - 16));
        let goal = |day: u8| StoredGoal {
            location_id: Some(LocationId(Uuid::nil())),
            day_of_week: day,
            sales_goal: d("1000"),
            labor_pct_target: d("25"),
            splh_target: d("50"),
        };
        let data = WeekData {
            sales: vec![sale(sat, Block::Dinner, "1000", None), sale(sun, Block::Dinner, "1000", None)],
            labor: vec![labor(sat, Department::Foh, "20", "250"), labor(sun, Department::Foh, "20", "251")],
            goals: vec![goal(0), goal(1), goal(2)],
        };
        let report = build_report(week(), &data);
        assert_eq!(report.daily_summary[0].goals_met, Some(true), "25% of 1000 is exactly the target");
        assert_eq!(report.daily_summary[1].goals_met, Some(false), "25.1% misses it");
        assert_eq!(report.daily_summary[2].goals_met, Some(false), "no sales: null KPIs fail");
        assert_eq!(report.daily_summary[3].goals_met, None, "no goal that day");
        assert_eq!(report.weekly_summary.goals_met_percent, Some(d("33.33")));
        assert_eq!((report.summary.target_labor_pct, report.summary.target_splh), (Some(d("25")), Some(d("50"))));
        let _ = mon;
    }

    fn money() -> impl Strategy<Value = Decimal> {
        (0i64..5_000_000).prop_map(|cents| Decimal::new(cents, 2))
    }

    fn hours() -> impl Strategy<Value = Decimal> {
        (0i64..20_000).prop_map(|hundredths| Decimal::new(hundredths, 2))
    }

    fn facts() -> impl Strategy<Value = WeekData> {
        let sales = proptest::collection::vec(
            (0i64..7, 0usize..3, money(), money(), money(), proptest::option::of(0i64..500)),
            0..30,
        );
        let labor = proptest::collection::vec((0i64..7, 0usize..3, hours(), money()), 0..30);
        (sales, labor).prop_map(|(sales, labor)| {
            let start = date!(2026 - 11 - 14);
            WeekData {
                sales: sales
                    .into_iter()
                    .map(|(day, block, food, beverage, other, guests)| SalesFact {
                        date: start + time::Duration::days(day),
                        block: [Block::Lunch, Block::Dinner, Block::LateNight][block],
                        food,
                        beverage,
                        other,
                        guests,
                    })
                    .collect(),
                labor: labor
                    .into_iter()
                    .map(|(day, department, hours, cost)| LaborFact {
                        date: start + time::Duration::days(day),
                        department: [Department::Foh, Department::Boh, Department::Other][department],
                        hours,
                        cost,
                    })
                    .collect(),
                goals: vec![],
            }
        })
    }

    proptest! {
        #[test]
        fn totals_equal_the_sum_of_their_rows(data in facts()) {
            let report = build_report(week(), &data);
            let sales: Decimal = report.sales_by_category.iter().map(|r| r.total).sum();
            let daily_sales: Decimal = report.daily_summary.iter().map(|d| d.sales).sum();
            let cost: Decimal = report.labor_by_category.iter().map(|l| l.cost).sum();
            prop_assert_eq!(report.summary.total_sales, sales);
            prop_assert_eq!(report.summary.total_sales, daily_sales);
            prop_assert_eq!(report.summary.total_labor_cost, cost);
            prop_assert_eq!(report.weekly_summary.total_sales, report.summary.total_sales);
            for row in &report.labor_by_category {
                prop_assert_eq!(row.total_hours, row.foh_hours + row.boh_hours + row.na_hours);
            }
            for row in &report.sales_by_category {
                prop_assert_eq!(row.total, row.food + row.beverage + row.other);
            }
        }

        #[test]
        fn a_kpi_is_null_with_its_reason_exactly_when_its_denominator_is_zero(data in facts()) {
            let report = build_report(week(), &data);
            for (day, labor) in report.daily_summary.iter().zip(&report.labor_by_category) {
                prop_assert_eq!(day.labor_pct_fraction.is_none(), day.sales.is_zero());
                prop_assert_eq!(day.labor_pct_reason, day.sales.is_zero().then_some(NO_SALES));
                prop_assert_eq!(day.splh.is_none(), labor.total_hours.is_zero());
                prop_assert_eq!(day.splh_reason, labor.total_hours.is_zero().then_some(NO_LABOR_HOURS));
            }
        }
    }
}
