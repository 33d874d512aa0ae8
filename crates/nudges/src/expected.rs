use std::collections::{BTreeMap, BTreeSet};

use opsd_reports::ReportShift;
use time::Date;

/// What a location-day owes: one manager report, and one shift report per report shift in which a
/// scheduled (non-draft) shift starts, by local start hour.
pub fn expected_reports(local_starts: &[(Date, u8)]) -> BTreeMap<Date, BTreeSet<ReportShift>> {
    let mut expected: BTreeMap<Date, BTreeSet<ReportShift>> = BTreeMap::new();
    for &(date, hour) in local_starts {
        expected.entry(date).or_default().insert(ReportShift::of_start_hour(hour));
    }
    expected
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Missing {
    ShiftReport(Date, ReportShift),
    ManagerReport(Date),
}

pub fn missing_reports(
    expected: &BTreeMap<Date, BTreeSet<ReportShift>>,
    filed_shift_reports: &[(Date, ReportShift)],
    filed_manager_reports: &[Date],
) -> Vec<Missing> {
    let mut missing = Vec::new();
    for (date, shifts) in expected {
        for shift in shifts {
            if !filed_shift_reports.contains(&(*date, *shift)) {
                missing.push(Missing::ShiftReport(*date, *shift));
            }
        }
        if !filed_manager_reports.contains(date) {
            missing.push(Missing::ManagerReport(*date));
        }
    }
    missing
}

/// A report slot of a location's day, as the compliance grid shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot {
    Filed,
    Missing,
    /// Owed, but its day is not over yet.
    NotYetDue,
    /// No scheduled shift: nothing is owed.
    NotOwed,
}

/// The report shifts of a day's slots, in their order; the manager report's slot follows them.
pub const SLOT_SHIFTS: [ReportShift; 3] = [ReportShift::Morning, ReportShift::Afternoon, ReportShift::Evening];

/// Each day's slots from `from` to `to`: the three report shifts in their order, then the manager
/// report. Nothing is due before its day is over, from `today` on; a report filed early is filed.
pub fn day_slots(
    (from, to): (Date, Date),
    today: Date,
    expected: &BTreeMap<Date, BTreeSet<ReportShift>>,
    filed_shift_reports: &[(Date, ReportShift)],
    filed_manager_reports: &[Date],
) -> Vec<(Date, [Slot; 4])> {
    let slot = |owed: bool, filed: bool, date: Date| match (filed, owed) {
        (true, _) => Slot::Filed,
        (false, true) if date >= today => Slot::NotYetDue,
        (false, true) => Slot::Missing,
        (false, false) => Slot::NotOwed,
    };
    let mut days = Vec::new();
    let mut date = from;
    while date <= to {
        let owed = expected.get(&date);
        let shift = |shift: ReportShift| {
            slot(owed.is_some_and(|s| s.contains(&shift)), filed_shift_reports.contains(&(date, shift)), date)
        };
        let manager = slot(owed.is_some(), filed_manager_reports.contains(&date), date);
        let [morning, afternoon, evening] = SLOT_SHIFTS.map(shift);
        days.push((date, [morning, afternoon, evening, manager]));
        date = date.next_day().expect("a date before the end of time");
    }
    days
}

#[cfg(test)]
mod tests {
    use time::macros::date;

    use super::*;

    #[test]
    fn each_report_shift_with_a_start_is_expected_once() {
        let expected =
            expected_reports(&[(date!(2026 - 11 - 21), 9), (date!(2026 - 11 - 21), 10), (date!(2026 - 11 - 21), 17)]);
        let shifts: Vec<ReportShift> = expected[&date!(2026 - 11 - 21)].iter().copied().collect();
        assert_eq!(shifts, [ReportShift::Morning, ReportShift::Evening]);
    }

    #[test]
    fn what_was_filed_is_not_missing() {
        let day = date!(2026 - 11 - 21);
        let expected = expected_reports(&[(day, 9), (day, 12), (day, 18)]);
        let missing = missing_reports(&expected, &[(day, ReportShift::Morning)], &[]);
        assert_eq!(
            missing,
            [
                Missing::ShiftReport(day, ReportShift::Afternoon),
                Missing::ShiftReport(day, ReportShift::Evening),
                Missing::ManagerReport(day)
            ]
        );
        assert!(missing_reports(&expected_reports(&[]), &[], &[]).is_empty(), "no scheduled shift, nothing owed");
    }

    #[test]
    fn each_slot_is_filed_missing_not_yet_due_or_not_owed() {
        let (monday, tuesday, wednesday) = (date!(2026 - 11 - 23), date!(2026 - 11 - 24), date!(2026 - 11 - 25));
        let expected = expected_reports(&[(monday, 9), (monday, 18), (tuesday, 9), (wednesday, 12)]);
        let days = day_slots(
            (monday, wednesday),
            tuesday,
            &expected,
            &[(monday, ReportShift::Morning), (wednesday, ReportShift::Afternoon)],
            &[],
        );
        use Slot::*;
        assert_eq!(
            days,
            [
                (monday, [Filed, NotOwed, Missing, Missing]),
                (tuesday, [NotYetDue, NotOwed, NotOwed, NotYetDue]),
                (wednesday, [NotOwed, Filed, NotOwed, NotYetDue]),
            ]
        );
    }
}
