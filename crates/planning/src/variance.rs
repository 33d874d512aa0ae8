//! Scheduled against actual labor: variance = actual − scheduled, for hours and cost.

use rust_decimal::Decimal;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LaborLine {
    pub hours: Decimal,
    pub cost: Decimal,
}

/// One department's day: what was scheduled, what was worked, and the worked overtime.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DepartmentDay {
    pub scheduled: LaborLine,
    pub actual: LaborLine,
    pub overtime_hours: Decimal,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct VarianceLine {
    pub scheduled_hours: Decimal,
    pub actual_hours: Decimal,
    pub variance_hours: Decimal,
    pub scheduled_cost: Decimal,
    pub actual_cost: Decimal,
    pub variance_cost: Decimal,
    pub overtime_hours: Decimal,
}

pub fn variance(day: &DepartmentDay) -> VarianceLine {
    VarianceLine {
        scheduled_hours: day.scheduled.hours,
        actual_hours: day.actual.hours,
        variance_hours: day.actual.hours - day.scheduled.hours,
        scheduled_cost: day.scheduled.cost,
        actual_cost: day.actual.cost,
        variance_cost: day.actual.cost - day.scheduled.cost,
        overtime_hours: day.overtime_hours,
    }
}

impl std::iter::Sum for VarianceLine {
    fn sum<I: Iterator<Item = Self>>(lines: I) -> Self {
        lines.fold(Self::default(), |total, line| VarianceLine {
            scheduled_hours: total.scheduled_hours + line.scheduled_hours,
            actual_hours: total.actual_hours + line.actual_hours,
            variance_hours: total.variance_hours + line.variance_hours,
            scheduled_cost: total.scheduled_cost + line.scheduled_cost,
            actual_cost: total.actual_cost + line.actual_cost,
            variance_cost: total.variance_cost + line.variance_cost,
            overtime_hours: total.overtime_hours + line.overtime_hours,
        })
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn line(hours: i64, cost: i64) -> LaborLine {
        LaborLine { hours: Decimal::from(hours), cost: Decimal::from(cost) }
    }

    proptest! {
        #[test]
        fn totals_are_the_sums_and_variance_is_actual_less_scheduled(
            days in proptest::collection::vec((0i64..200, 0i64..5000, 0i64..200, 0i64..5000, 0i64..20), 0..21)
        ) {
            let days: Vec<DepartmentDay> = days
                .into_iter()
                .map(|(sh, sc, ah, ac, ot)| DepartmentDay { scheduled: line(sh, sc), actual: line(ah, ac), overtime_hours: Decimal::from(ot) })
                .collect();
            let total: VarianceLine = days.iter().map(variance).sum();
            prop_assert_eq!(total.variance_hours, total.actual_hours - total.scheduled_hours);
            prop_assert_eq!(total.variance_cost, total.actual_cost - total.scheduled_cost);
            prop_assert_eq!(total.actual_hours, days.iter().map(|d| d.actual.hours).sum::<Decimal>());
            prop_assert_eq!(total.overtime_hours, days.iter().map(|d| d.overtime_hours).sum::<Decimal>());
        }
    }
}
