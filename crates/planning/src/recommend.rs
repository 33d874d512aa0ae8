//! The labor hours a sales forecast calls for, by each goal: hours = sales ÷ SPLH target, and
//! hours = sales × labor % target ÷ 100 ÷ the blended hourly wage. A goal or wage that is missing
//! (or zero) gives no number, with the reason.

use rust_decimal::Decimal;

pub const NO_SPLH_TARGET: &str = "no_splh_target";
pub const NO_LABOR_PCT_TARGET: &str = "no_labor_pct_target";
pub const NO_WAGE: &str = "no_wage";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HoursRecommendation {
    pub hours_for_splh: Option<Decimal>,
    pub hours_for_splh_reason: Option<&'static str>,
    pub hours_for_labor_pct: Option<Decimal>,
    pub hours_for_labor_pct_reason: Option<&'static str>,
}

impl HoursRecommendation {
    /// No numbers, for the same reason both ways.
    pub fn unknown(reason: &'static str) -> Self {
        Self {
            hours_for_splh: None,
            hours_for_splh_reason: Some(reason),
            hours_for_labor_pct: None,
            hours_for_labor_pct_reason: Some(reason),
        }
    }
}

pub fn recommended_hours(
    forecast_sales: Decimal,
    splh_target: Option<Decimal>,
    labor_pct_target: Option<Decimal>,
    blended_wage: Option<Decimal>,
) -> HoursRecommendation {
    let positive = |value: Option<Decimal>| value.filter(|v| *v > Decimal::ZERO);
    let (hours_for_splh, hours_for_splh_reason) = match positive(splh_target) {
        Some(target) => (Some((forecast_sales / target).round_dp(2)), None),
        None => (None, Some(NO_SPLH_TARGET)),
    };
    let (hours_for_labor_pct, hours_for_labor_pct_reason) = match (positive(labor_pct_target), positive(blended_wage)) {
        (None, _) => (None, Some(NO_LABOR_PCT_TARGET)),
        (Some(_), None) => (None, Some(NO_WAGE)),
        (Some(pct), Some(wage)) => (Some((forecast_sales * pct / Decimal::ONE_HUNDRED / wage).round_dp(2)), None),
    };
    HoursRecommendation { hours_for_splh, hours_for_splh_reason, hours_for_labor_pct, hours_for_labor_pct_reason }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_goal_gives_its_hours_or_says_what_is_missing() {
        let d = |v: i64| Some(Decimal::from(v));
        let both = recommended_hours(Decimal::from(3000), d(80), d(25), d(15));
        assert_eq!(both.hours_for_splh, Some(Decimal::new(3750, 2)), "$3000 at $80/h");
        assert_eq!(both.hours_for_labor_pct, Some(Decimal::from(50)), "$750 budget at $15/h");
        let none = recommended_hours(Decimal::from(3000), None, d(25), None);
        assert_eq!((none.hours_for_splh, none.hours_for_splh_reason), (None, Some(NO_SPLH_TARGET)));
        assert_eq!((none.hours_for_labor_pct, none.hours_for_labor_pct_reason), (None, Some(NO_WAGE)));
        let zero = recommended_hours(Decimal::from(3000), d(0), d(0), d(15));
        assert_eq!(zero.hours_for_labor_pct_reason, Some(NO_LABOR_PCT_TARGET));
    }
}
