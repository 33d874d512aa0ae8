//! A time punch and the hours it counts: clocked out − clocked in − unpaid breaks, for approved
//! punches that are closed (7shifts' payroll guide computes it the same way).

use rust_decimal::Decimal;
use time::OffsetDateTime;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Break {
    pub start: OffsetDateTime,
    pub end: Option<OffsetDateTime>,
    pub paid: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Punch {
    pub clocked_in: OffsetDateTime,
    /// None while the employee is on the clock.
    pub clocked_out: Option<OffsetDateTime>,
    pub approved: bool,
    pub breaks: Vec<Break>,
}

/// The seconds of the closed unpaid breaks.
pub fn unpaid_break_seconds(breaks: &[Break]) -> i64 {
    breaks.iter().filter(|b| !b.paid).filter_map(|b| b.end.map(|end| (end - b.start).whole_seconds().max(0))).sum()
}

/// The punch's worked hours, rounded to 2 decimals; None for an open or unapproved punch, which
/// is stored but does not count.
pub fn worked_hours(punch: &Punch) -> Option<Decimal> {
    let out = punch.clocked_out.filter(|_| punch.approved)?;
    let seconds = ((out - punch.clocked_in).whole_seconds() - unpaid_break_seconds(&punch.breaks)).max(0);
    Some((Decimal::from(seconds) / Decimal::from(3600)).round_dp(2))
}

#[cfg(test)]
mod tests {
    use time::macros::datetime;

    use super::*;

    fn punch(out: Option<OffsetDateTime>, approved: bool, breaks: Vec<Break>) -> Punch {
        Punch { clocked_in: datetime!(2026-11-21 16:00 UTC), clocked_out: out, approved, breaks }
    }

    #[test]
    fn unpaid_breaks_are_taken_out_and_paid_ones_are_not() {
        let breaks = vec![
            Break { start: datetime!(2026-11-21 18:00 UTC), end: Some(datetime!(2026-11-21 18:30 UTC)), paid: false },
            Break { start: datetime!(2026-11-21 20:00 UTC), end: Some(datetime!(2026-11-21 20:15 UTC)), paid: true },
        ];
        let hours = worked_hours(&punch(Some(datetime!(2026-11-22 00:00 UTC)), true, breaks)).unwrap();
        assert_eq!(hours, Decimal::new(750, 2), "8 h less a 30 min unpaid break, across midnight");
    }

    #[test]
    fn open_and_unapproved_punches_do_not_count() {
        assert_eq!(worked_hours(&punch(None, true, vec![])), None);
        assert_eq!(worked_hours(&punch(Some(datetime!(2026-11-21 20:00 UTC)), false, vec![])), None);
    }
}
