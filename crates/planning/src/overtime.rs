//! FLSA overtime: an employee's hours beyond 40 in the workweek, no averaging across weeks. State
//! daily rules (California's 8 h day, 7th day) are out of scope.

use rust_decimal::Decimal;

const WEEKLY_LIMIT: i64 = 40;

/// For one employee's days of one week in order, the overtime hours of each day: the hours past
/// 40 fall on the days that cross it.
pub fn weekly_overtime(days: &[Decimal]) -> Vec<Decimal> {
    let limit = Decimal::from(WEEKLY_LIMIT);
    let mut worked = Decimal::ZERO;
    days.iter()
        .map(|&hours| {
            let before = worked;
            worked += hours;
            (worked - limit).max(Decimal::ZERO) - (before - limit).max(Decimal::ZERO)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn hours_past_forty_fall_on_the_days_that_cross_it() {
        let days: Vec<Decimal> = [9, 9, 9, 9, 9, 0, 4].map(Decimal::from).to_vec();
        let overtime = weekly_overtime(&days);
        assert_eq!(overtime, [0, 0, 0, 0, 5, 0, 4].map(Decimal::from).to_vec());
    }

    proptest! {
        #[test]
        fn overtime_is_what_the_week_has_past_forty(days in proptest::collection::vec(0u32..16, 7)) {
            let days: Vec<Decimal> = days.into_iter().map(Decimal::from).collect();
            let total: Decimal = days.iter().sum();
            let overtime: Decimal = weekly_overtime(&days).iter().sum();
            prop_assert_eq!(overtime, (total - Decimal::from(40)).max(Decimal::ZERO));
            prop_assert!(weekly_overtime(&days).iter().zip(&days).all(|(ot, day)| *ot >= Decimal::ZERO && ot <= day));
        }
    }
}
