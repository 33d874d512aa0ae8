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
