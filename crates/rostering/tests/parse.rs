//! The benchmark's text format: what a file holds, and each bad file refused with its section and line.

use opsd_rostering::{Section, parse};

const INSTANCE1: &str = include_str!("fixtures/instance1.txt");

const GOOD: &str = "# a comment
SECTION_HORIZON
14

SECTION_SHIFTS
E,480,
L,480,E|
N,600,E|L
SECTION_STAFF
A,E=10|N=0,4320,3360,5,2,2,1
B,,4320,0,5,1,1,2
SECTION_DAYS_OFF
A,0,13
SECTION_SHIFT_ON_REQUESTS
A,2,E,2
SECTION_SHIFT_OFF_REQUESTS
B,3,L,1
SECTION_COVER
0,E,2,100,1
";

#[test]
fn a_file_becomes_the_instance_it_describes() {
    let instance = parse(GOOD).unwrap();
    assert_eq!(instance.horizon, 14);
    let shifts: Vec<_> =
        instance.shifts.iter().map(|s| (s.id.as_str(), s.minutes, s.not_followed_by.clone())).collect();
    assert_eq!(shifts, vec![("E", 480, vec![]), ("L", 480, vec![0]), ("N", 600, vec![0, 1])]);
    let a = &instance.staff[0];
    assert_eq!(a.max_shifts, vec![Some(10), None, Some(0)]);
    assert_eq!((a.max_minutes, a.min_minutes, a.max_consecutive_shifts), (4320, 3360, 5));
    assert_eq!((a.min_consecutive_shifts, a.min_consecutive_days_off, a.max_weekends), (2, 2, 1));
    assert_eq!(a.days_off, vec![0, 13]);
    assert_eq!(instance.staff[1].max_shifts, vec![None, None, None]);
    assert_eq!(instance.on_requests.len(), 1);
    assert_eq!((instance.off_requests[0].employee, instance.off_requests[0].shift), (1, 1));
    assert_eq!(instance.cover[0].requirement, 2);
    assert_eq!(instance.weekend.weekends(14), vec![vec![5, 6], vec![12, 13]]);
}

#[test]
fn the_research_instance_parses_whole() {
    let instance = parse(INSTANCE1).unwrap();
    assert_eq!((instance.horizon, instance.shifts.len(), instance.staff.len()), (14, 1, 8));
    assert_eq!((instance.on_requests.len(), instance.off_requests.len(), instance.cover.len()), (21, 5, 14));
}

/// Each bad file with the section and line its error must name and words it must say.
#[test]
fn each_bad_file_is_refused_naming_its_section_and_line() {
    let cases: Vec<(String, Option<Section>, Option<usize>, &str)> = vec![
        (GOOD.replace("SECTION_COVER\n0,E,2,100,1\n", ""), Some(Section::Cover), None, "missing"),
        (GOOD.replace("A,2,E,2", "A,2,X,2"), Some(Section::ShiftOnRequests), Some(15), "shift X is not declared"),
        (GOOD.replace("L,480,E|", "L,480,Q"), Some(Section::Shifts), Some(7), "shift Q is not declared"),
        (GOOD.replace("A,0,13", "A,0,14"), Some(Section::DaysOff), Some(13), "outside the horizon"),
        (GOOD.replace("0,E,2,100,1", "14,E,2,100,1"), Some(Section::Cover), Some(19), "outside the horizon"),
        (GOOD.replace("E,480,", "E,-480,"), Some(Section::Shifts), Some(6), "length"),
        (GOOD.replace("A,2,E,2", "A,2,E,-2"), Some(Section::ShiftOnRequests), Some(15), "must not be negative"),
        (GOOD.replace("0,E,2,100,1", "0,E,2,100,-1"), Some(Section::Cover), Some(19), "must not be negative"),
        (GOOD.replace("4320,3360", "3000,3360"), Some(Section::Staff), Some(10), "above MaxTotalMinutes"),
        (GOOD.replace("5,2,2,1", "1,2,2,1"), Some(Section::Staff), Some(10), "above MaxConsecutiveShifts"),
        (GOOD.replace("B,,4320", "A,,4320"), Some(Section::Staff), Some(11), "employee A has two lines"),
        (GOOD.replace("A,0,13\n", "A,0\nA,13\n"), Some(Section::DaysOff), Some(14), "two lines"),
        (GOOD.replace("B,3,L,1", "Z,3,L,1"), Some(Section::ShiftOffRequests), Some(17), "employee Z is not in"),
        (GOOD.replace("14\n", "14\n15\n"), Some(Section::Horizon), Some(4), "one line"),
        (GOOD.replace("SECTION_COVER", "SECTION_COVERS"), None, Some(18), "unknown section"),
        (GOOD.replace("0,E,2,100,1", "0,E,2,100"), Some(Section::Cover), Some(19), "expected 5 fields"),
        (format!("{GOOD}SECTION_SHIFTS\n"), Some(Section::Shifts), Some(20), "twice"),
    ];
    for (text, section, line, words) in cases {
        let error = parse(&text).expect_err(words);
        assert_eq!((error.section, error.line), (section, line), "{error}");
        assert!(error.to_string().contains(words), "{error} should say {words}");
        if let (Some(line), Some(section)) = (line, section) {
            assert!(error.to_string().starts_with(&format!("line {line} ({})", section.header())), "{error}");
        }
    }
}
