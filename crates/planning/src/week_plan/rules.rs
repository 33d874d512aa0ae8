//! The labor rules a proposed week keeps, per team, with their defaults.

/// What a proposal may not break, and how it weighs what it may.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanRules {
    /// The most an employee works in the week (FLSA overtime starts after 40 hours).
    pub max_weekly_minutes: u32,
    /// The least time between the end of one shift and the start of the next: 10 hours means no
    /// close followed by an open (the "clopening").
    pub min_rest_minutes: u32,
    pub max_days_in_a_row: u32,
    /// Shift types shorter than this are lengthened to it (from their start).
    pub min_shift_minutes: u32,
    /// The share of the sales an hour short of the need puts at risk (at the block's sales per
    /// needed hour), in percent: what understaffing costs, against the wage an hour costs. Not all of
    /// it: the people on shift absorb part of the load, at a slower service. At 70 a short hour is
    /// worth its wage wherever 70 % of the SPLH goal is above the wage; the backtest
    /// (docs/labor-planning.md) measured 50, 70 and 100.
    pub understaffed_sales_at_risk_pct: u32,
    /// What not granting a preference costs, in cents.
    pub preference_weight_cents: i64,
    /// Fair workweek: a week that starts within this many days of today has its published schedule
    /// kept unless a change is worth more than its premium.
    pub notice_days: u32,
    /// Fair workweek: the premium owed to the employee for each changed shift (added, removed or
    /// moved to another block or department), in cents.
    pub change_premium_cents: i64,
}

impl Default for PlanRules {
    fn default() -> Self {
        Self {
            max_weekly_minutes: 40 * 60,
            min_rest_minutes: 10 * 60,
            max_days_in_a_row: 6,
            min_shift_minutes: 4 * 60,
            understaffed_sales_at_risk_pct: 70,
            preference_weight_cents: 500,
            notice_days: 14,
            change_premium_cents: 1500,
        }
    }
}

/// Each rule's bounds, with its name on the wire (hours, days, percent and dollars there).
const BOUNDS: [(&str, u32, u32); 6] = [
    ("maxWeeklyHours", 60, 80 * 60),
    ("minRestHours", 0, 24 * 60),
    ("maxDaysInARow", 1, 7),
    ("minShiftHours", 60, 12 * 60),
    ("noticeDays", 0, 28),
    ("understaffedSalesAtRiskPct", 0, 200),
];

impl PlanRules {
    /// A team's rules within bounds a labor-law reviewer would accept as rules, not typos: a week of
    /// at most 80 hours, rest of at most a day, shifts of 1 to 12 hours, a notice of at most 4 weeks,
    /// premiums and preference weights of at most $1,000.
    pub fn validate(&self) -> Result<(), opsd_core::ValidationErrors> {
        let mut errors = opsd_core::ValidationErrors::new();
        let values = [
            self.max_weekly_minutes,
            self.min_rest_minutes,
            self.max_days_in_a_row,
            self.min_shift_minutes,
            self.notice_days,
            self.understaffed_sales_at_risk_pct,
        ];
        for ((field, low, high), value) in BOUNDS.iter().zip(values) {
            if !(*low..=*high).contains(&value) {
                let (low, high) = if field.ends_with("Hours") { (low / 60, high / 60) } else { (*low, *high) };
                errors.push(*field, format!("must be {low} to {high}"));
            }
        }
        if self.min_shift_minutes > self.max_weekly_minutes {
            errors.push("minShiftHours", "must be at most maxWeeklyHours");
        }
        for (field, cents) in
            [("changePremium", self.change_premium_cents), ("preferenceWeight", self.preference_weight_cents)]
        {
            if !(0..=100_000).contains(&cents) {
                errors.push(field, "must be 0 to 1000 dollars");
            }
        }
        errors.into_result()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_are_valid_and_each_rule_out_of_bounds_is_named() {
        assert!(PlanRules::default().validate().is_ok());
        let cases = [
            (PlanRules { max_weekly_minutes: 81 * 60, ..PlanRules::default() }, "maxWeeklyHours"),
            (PlanRules { min_rest_minutes: 25 * 60, ..PlanRules::default() }, "minRestHours"),
            (PlanRules { max_days_in_a_row: 0, ..PlanRules::default() }, "maxDaysInARow"),
            (PlanRules { min_shift_minutes: 30, ..PlanRules::default() }, "minShiftHours"),
            (PlanRules { notice_days: 29, ..PlanRules::default() }, "noticeDays"),
            (PlanRules { understaffed_sales_at_risk_pct: 201, ..PlanRules::default() }, "understaffedSalesAtRiskPct"),
            (PlanRules { change_premium_cents: -1, ..PlanRules::default() }, "changePremium"),
            (PlanRules { preference_weight_cents: 100_001, ..PlanRules::default() }, "preferenceWeight"),
            (PlanRules { max_weekly_minutes: 120, min_shift_minutes: 180, ..PlanRules::default() }, "minShiftHours"),
        ];
        for (rules, field) in cases {
            let errors = rules.validate().expect_err(field);
            assert_eq!(errors.errors()[0].field, field);
        }
    }
}
