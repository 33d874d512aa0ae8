use opsd_core::Money;
use rust_decimal::Decimal;

use crate::model::StoredGoal;

/// The goal of one weekday (0 = Saturday).
#[derive(Debug, Clone, PartialEq)]
pub struct DayGoal {
    pub day_of_week: u8,
    pub sales_goal: Money,
    pub labor_pct_target: Decimal,
    pub splh_target: Decimal,
}

/// For each weekday, the location's own goal when it has one, else the team default.
pub fn effective_goals(stored: &[StoredGoal]) -> Vec<DayGoal> {
    (0..7u8)
        .filter_map(|day| {
            let of_day = stored.iter().filter(|g| g.day_of_week == day);
            let chosen = of_day.clone().find(|g| g.location_id.is_some()).or_else(|| of_day.clone().next())?;
            Some(DayGoal {
                day_of_week: day,
                sales_goal: chosen.sales_goal,
                labor_pct_target: chosen.labor_pct_target,
                splh_target: chosen.splh_target,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use opsd_core::LocationId;
    use uuid::Uuid;

    use super::*;

    fn goal(location: Option<u128>, day: u8, sales: i64) -> StoredGoal {
        StoredGoal {
            location_id: location.map(|l| LocationId(Uuid::from_u128(l))),
            day_of_week: day,
            sales_goal: Decimal::from(sales),
            labor_pct_target: Decimal::from(30),
            splh_target: Decimal::from(50),
        }
    }

    #[test]
    fn a_location_goal_wins_over_the_team_default_day_by_day() {
        let goals =
            effective_goals(&[goal(None, 0, 100), goal(Some(1), 0, 200), goal(None, 1, 300), goal(Some(1), 3, 400)]);
        let days: Vec<(u8, i64)> = goals.iter().map(|g| (g.day_of_week, g.sales_goal.try_into().unwrap())).collect();
        assert_eq!(days, [(0, 200), (1, 300), (3, 400)]);
    }
}
