//! The week's scheduled-vs-actual report: per day and department, what was scheduled (published
//! shifts), what was worked (approved, closed punches), the variance and the overtime; each day's
//! and the week's labor % both ways. Actual cost is worked hours × wage plus the FLSA premium
//! (half the wage) on overtime hours, as the store computes it per punch.

use std::collections::{BTreeMap, HashMap};

use opsd_core::{Department, Week};
use opsd_optimization::labor_pct;
use rust_decimal::Decimal;
use time::Date;

use crate::ports::VarianceData;
use crate::variance::{DepartmentDay, VarianceLine, variance};

pub const DEPARTMENTS: [Department; 3] = [Department::Foh, Department::Boh, Department::Other];

#[derive(Debug, Clone, PartialEq)]
pub struct VarianceReport {
    /// `Week of YYYY-MM-DD`.
    pub week_label: String,
    pub days: Vec<VarianceDay>,
    pub totals: VarianceSpan,
}

#[derive(Debug, Clone, PartialEq)]
pub struct VarianceDay {
    pub day: Date,
    pub span: VarianceSpan,
}

/// A day's or the week's lines: one per department (always all three), their sum, the sales, and
/// the labor % of the scheduled and of the actual cost (null with `no_sales`).
#[derive(Debug, Clone, PartialEq)]
pub struct VarianceSpan {
    pub departments: Vec<(Department, VarianceLine)>,
    pub total: VarianceLine,
    pub sales: Decimal,
    pub scheduled_labor_pct_fraction: Option<Decimal>,
    pub scheduled_labor_pct_reason: Option<&'static str>,
    pub actual_labor_pct_fraction: Option<Decimal>,
    pub actual_labor_pct_reason: Option<&'static str>,
}

impl VarianceSpan {
    fn new(lines: impl Fn(Department) -> VarianceLine, sales: Decimal) -> Self {
        let departments: Vec<(Department, VarianceLine)> = DEPARTMENTS.map(|d| (d, lines(d))).to_vec();
        let total: VarianceLine = departments.iter().map(|(_, line)| *line).sum();
        let (scheduled_labor_pct_fraction, scheduled_labor_pct_reason) = labor_pct(total.scheduled_cost, sales);
        let (actual_labor_pct_fraction, actual_labor_pct_reason) = labor_pct(total.actual_cost, sales);
        Self {
            departments,
            total,
            sales,
            scheduled_labor_pct_fraction,
            scheduled_labor_pct_reason,
            actual_labor_pct_fraction,
            actual_labor_pct_reason,
        }
    }
}

pub fn build_variance(week: Week, data: &VarianceData) -> VarianceReport {
    let mut cells: BTreeMap<(Date, Department), DepartmentDay> = BTreeMap::new();
    for labor in &data.scheduled {
        let cell = cells.entry((labor.date, labor.department)).or_default();
        cell.scheduled.hours += labor.hours;
        cell.scheduled.cost += labor.cost;
    }
    for labor in &data.worked {
        let cell = cells.entry((labor.date, labor.department)).or_default();
        cell.actual.hours += labor.hours;
        cell.actual.cost += labor.cost;
        cell.overtime_hours += labor.overtime_hours;
    }
    let sales: HashMap<Date, Decimal> = data.sales.iter().copied().collect();
    let line =
        |date: Date, department: Department| variance(&cells.get(&(date, department)).copied().unwrap_or_default());
    let days: Vec<VarianceDay> = week
        .days()
        .into_iter()
        .map(|day| VarianceDay {
            day,
            span: VarianceSpan::new(|d| line(day, d), sales.get(&day).copied().unwrap_or_default()),
        })
        .collect();
    let week_sales: Decimal = days.iter().map(|d| d.span.sales).sum();
    let totals = VarianceSpan::new(|d| week.days().into_iter().map(|day| line(day, d)).sum(), week_sales);
    VarianceReport { week_label: format!("Week of {}", week.start()), days, totals }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use time::macros::date;

    use super::*;
    use crate::ports::{ScheduledLabor, WorkedLabor};

    const SATURDAY: Date = date!(2026 - 11 - 21);

    fn week() -> Week {
        Week::starting("weekOf", SATURDAY).unwrap()
    }

    fn worked(day: i64, department: Department, hours: i64, overtime: i64) -> WorkedLabor {
        WorkedLabor {
            date: SATURDAY + time::Duration::days(day),
            department,
            hours: Decimal::from(hours),
            overtime_hours: Decimal::from(overtime),
            cost: Decimal::from(hours * 20 + overtime * 10),
        }
    }

    #[test]
    fn a_day_compares_worked_with_scheduled_and_carries_the_overtime_and_its_premium() {
        let friday = SATURDAY + time::Duration::days(6);
        let data = VarianceData {
            scheduled: vec![ScheduledLabor {
                date: friday,
                department: Department::Boh,
                hours: Decimal::from(8),
                cost: Decimal::from(160),
            }],
            worked: vec![worked(6, Department::Boh, 10, 6)],
            sales: vec![(friday, Decimal::from(1000))],
        };
        let report = build_variance(week(), &data);
        let friday = &report.days[6].span;
        let boh = friday.departments[1].1;
        assert_eq!(friday.departments[1].0, Department::Boh);
        assert_eq!((boh.actual_hours, boh.overtime_hours, boh.variance_hours), (10.into(), 6.into(), 2.into()));
        assert_eq!(boh.actual_cost, Decimal::from(260), "10 h × $20 plus 6 h × $10 premium");
        assert_eq!(boh.variance_cost, Decimal::from(100));
        assert_eq!(friday.actual_labor_pct_fraction, Some(Decimal::new(26, 2)));
        assert_eq!(report.days[0].span.scheduled_labor_pct_reason, Some("no_sales"));
        assert_eq!(report.totals.total.actual_hours, Decimal::from(10));
        assert_eq!(report.week_label, "Week of 2026-11-21");
    }

    proptest! {
        #[test]
        fn the_week_is_the_sum_of_its_days_and_the_total_the_sum_of_its_departments(
            worked_cells in proptest::collection::vec((0i64..7, 0i64..40, 0i64..10, 0usize..3), 0..40),
            scheduled in proptest::collection::vec((0i64..7, 0i64..12, 0usize..3), 0..20),
            sales in proptest::collection::vec(0i64..5000, 7),
        ) {
            let data = VarianceData {
                scheduled: scheduled.iter().map(|&(day, hours, d)| ScheduledLabor {
                    date: SATURDAY + time::Duration::days(day),
                    department: DEPARTMENTS[d],
                    hours: Decimal::from(hours),
                    cost: Decimal::from(hours * 15),
                }).collect(),
                worked: worked_cells.iter().map(|&(day, hours, overtime, d)| worked(day, DEPARTMENTS[d], hours, overtime)).collect(),
                sales: sales.iter().enumerate().map(|(day, s)| (SATURDAY + time::Duration::days(day as i64), Decimal::from(*s))).collect(),
            };
            let report = build_variance(week(), &data);
            let days_total: VarianceLine = report.days.iter().map(|d| d.span.total).sum();
            prop_assert_eq!(days_total, report.totals.total);
            for day in &report.days {
                let departments: VarianceLine = day.span.departments.iter().map(|(_, l)| *l).sum();
                prop_assert_eq!(departments, day.span.total);
                prop_assert_eq!(day.span.total.variance_hours, day.span.total.actual_hours - day.span.total.scheduled_hours);
            }
            let hours: Decimal = data.worked.iter().map(|w| w.hours).sum();
            let overtime: Decimal = data.worked.iter().map(|w| w.overtime_hours).sum();
            prop_assert_eq!((report.totals.total.actual_hours, report.totals.total.overtime_hours), (hours, overtime));
        }
    }
}
