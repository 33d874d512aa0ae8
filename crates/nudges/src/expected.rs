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
}
