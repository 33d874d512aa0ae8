//! The Shift Scheduling Benchmark's text format: `#` comments, blank lines ignored, seven sections.

use std::collections::{BTreeMap, HashSet};
use std::fmt;

use crate::model::{Cover, Employee, Instance, ShiftRequest, ShiftType, Weekend};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Section {
    Horizon,
    Shifts,
    Staff,
    DaysOff,
    ShiftOnRequests,
    ShiftOffRequests,
    Cover,
}

impl Section {
    const ALL: [Section; 7] = [
        Section::Horizon,
        Section::Shifts,
        Section::Staff,
        Section::DaysOff,
        Section::ShiftOnRequests,
        Section::ShiftOffRequests,
        Section::Cover,
    ];

    pub fn header(self) -> &'static str {
        match self {
            Section::Horizon => "SECTION_HORIZON",
            Section::Shifts => "SECTION_SHIFTS",
            Section::Staff => "SECTION_STAFF",
            Section::DaysOff => "SECTION_DAYS_OFF",
            Section::ShiftOnRequests => "SECTION_SHIFT_ON_REQUESTS",
            Section::ShiftOffRequests => "SECTION_SHIFT_OFF_REQUESTS",
            Section::Cover => "SECTION_COVER",
        }
    }
}

/// What is wrong with a file, and where: the line (from 1) and its section when there is one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct ParseError {
    pub section: Option<Section>,
    pub line: Option<usize>,
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.line, self.section) {
            (Some(line), Some(section)) => write!(f, "line {line} ({}): {}", section.header(), self.message),
            (Some(line), None) => write!(f, "line {line}: {}", self.message),
            (None, Some(section)) => write!(f, "{}: {}", section.header(), self.message),
            (None, None) => f.write_str(&self.message),
        }
    }
}

/// One data line: its number in the file and its comma-separated fields, trimmed.
struct Line<'a> {
    number: usize,
    section: Section,
    fields: Vec<&'a str>,
}

impl Line<'_> {
    fn error(&self, message: impl Into<String>) -> ParseError {
        ParseError { section: Some(self.section), line: Some(self.number), message: message.into() }
    }

    fn arity(&self, expected: usize, what: &str) -> Result<(), ParseError> {
        if self.fields.len() == expected {
            Ok(())
        } else {
            Err(self.error(format!("expected {expected} fields ({what}), found {}", self.fields.len())))
        }
    }

    fn number<T: std::str::FromStr>(&self, index: usize, name: &str) -> Result<T, ParseError> {
        let text = self.fields[index];
        text.parse()
            .map_err(|_| self.error(format!("{name} must be a whole number that is not negative, not {text:?}")))
    }
}

/// Parses the text of an instance; the weekend is Saturday and Sunday of a horizon starting on a Monday.
pub fn parse(text: &str) -> Result<Instance, ParseError> {
    let sections = split_sections(text)?;
    let lines = |section: Section| sections.get(&section).map(Vec::as_slice).unwrap_or_default();
    let horizon = horizon(lines(Section::Horizon))?;
    let shifts = shifts(lines(Section::Shifts))?;
    let mut staff = staff(lines(Section::Staff), &shifts)?;
    let context = Context { horizon, shifts: &shifts, staff: &staff };
    let days_off = days_off(lines(Section::DaysOff), &context)?;
    let on_requests = requests(lines(Section::ShiftOnRequests), &context)?;
    let off_requests = requests(lines(Section::ShiftOffRequests), &context)?;
    let cover = cover(lines(Section::Cover), &context)?;
    for (employee, days) in days_off {
        staff[employee].days_off = days;
    }
    Ok(Instance {
        horizon,
        weekend: Weekend::saturday_sunday_from_monday(),
        shifts,
        staff,
        on_requests,
        off_requests,
        cover,
    })
}

fn split_sections(text: &str) -> Result<BTreeMap<Section, Vec<Line<'_>>>, ParseError> {
    let mut sections: BTreeMap<Section, Vec<Line<'_>>> = BTreeMap::new();
    let mut current = None;
    for (index, raw) in text.lines().enumerate() {
        let number = index + 1;
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if line.starts_with("SECTION_") {
            let section = Section::ALL.into_iter().find(|section| section.header() == line).ok_or_else(|| {
                ParseError { section: None, line: Some(number), message: format!("unknown section {line}") }
            })?;
            if sections.insert(section, Vec::new()).is_some() {
                return Err(ParseError {
                    section: Some(section),
                    line: Some(number),
                    message: "the section appears twice".into(),
                });
            }
            current = Some(section);
            continue;
        }
        let section = current.ok_or_else(|| ParseError {
            section: None,
            line: Some(number),
            message: "data before the first section".into(),
        })?;
        let fields = line.split(',').map(str::trim).collect();
        sections.get_mut(&section).expect("inserted at its header").push(Line { number, section, fields });
    }
    if let Some(missing) = Section::ALL.into_iter().find(|section| !sections.contains_key(section)) {
        return Err(ParseError { section: Some(missing), line: None, message: "the section is missing".into() });
    }
    Ok(sections)
}

fn horizon(lines: &[Line<'_>]) -> Result<usize, ParseError> {
    let [line] = lines else {
        return Err(ParseError {
            section: Some(Section::Horizon),
            line: lines.get(1).map(|line| line.number),
            message: "expected one line: the number of days".into(),
        });
    };
    line.arity(1, "the number of days")?;
    let days: usize = line.number(0, "the horizon")?;
    if days == 0 {
        return Err(line.error("the horizon must have at least one day"));
    }
    Ok(days)
}

fn shifts(lines: &[Line<'_>]) -> Result<Vec<ShiftType>, ParseError> {
    if lines.is_empty() {
        return Err(ParseError { section: Some(Section::Shifts), line: None, message: "no shift type".into() });
    }
    let mut shifts: Vec<ShiftType> = Vec::new();
    for line in lines {
        line.arity(3, "ID, length in minutes, shifts that may not follow")?;
        let id = identifier(line, 0, "shift ID")?;
        if shifts.iter().any(|shift| shift.id == id) {
            return Err(line.error(format!("shift {id} is declared twice")));
        }
        let minutes: u32 = line.number(1, "the length")?;
        if minutes == 0 {
            return Err(line.error("the length must be more than zero minutes"));
        }
        shifts.push(ShiftType { id, minutes, not_followed_by: Vec::new() });
    }
    // A may-not-follow list can name a shift declared on a later line.
    for (index, line) in lines.iter().enumerate() {
        let mut followers = Vec::new();
        for name in line.fields[2].split('|').map(str::trim).filter(|name| !name.is_empty()) {
            let follower = shifts
                .iter()
                .position(|shift| shift.id == name)
                .ok_or_else(|| line.error(format!("shift {name} is not declared")))?;
            followers.push(follower);
        }
        followers.sort_unstable();
        followers.dedup();
        shifts[index].not_followed_by = followers;
    }
    Ok(shifts)
}

fn staff(lines: &[Line<'_>], shifts: &[ShiftType]) -> Result<Vec<Employee>, ParseError> {
    if lines.is_empty() {
        return Err(ParseError { section: Some(Section::Staff), line: None, message: "no employee".into() });
    }
    let mut staff: Vec<Employee> = Vec::new();
    for line in lines {
        line.arity(
            8,
            "ID, MaxShifts, MaxTotalMinutes, MinTotalMinutes, MaxConsecutiveShifts, MinConsecutiveShifts, \
             MinConsecutiveDaysOff, MaxWeekends",
        )?;
        let id = identifier(line, 0, "employee ID")?;
        if staff.iter().any(|employee| employee.id == id) {
            return Err(line.error(format!("employee {id} has two lines")));
        }
        let employee = Employee {
            max_shifts: max_shifts(line, shifts)?,
            max_minutes: line.number(2, "MaxTotalMinutes")?,
            min_minutes: line.number(3, "MinTotalMinutes")?,
            max_consecutive_shifts: line.number(4, "MaxConsecutiveShifts")?,
            min_consecutive_shifts: line.number(5, "MinConsecutiveShifts")?,
            min_consecutive_days_off: line.number(6, "MinConsecutiveDaysOff")?,
            max_weekends: line.number(7, "MaxWeekends")?,
            days_off: Vec::new(),
            shift_costs: vec![0; shifts.len()],
            overtime: None,
            id,
        };
        if employee.min_minutes > employee.max_minutes {
            return Err(line.error(format!(
                "MinTotalMinutes ({}) is above MaxTotalMinutes ({})",
                employee.min_minutes, employee.max_minutes
            )));
        }
        if employee.min_consecutive_shifts > employee.max_consecutive_shifts {
            return Err(line.error(format!(
                "MinConsecutiveShifts ({}) is above MaxConsecutiveShifts ({})",
                employee.min_consecutive_shifts, employee.max_consecutive_shifts
            )));
        }
        staff.push(employee);
    }
    Ok(staff)
}

fn max_shifts(line: &Line<'_>, shifts: &[ShiftType]) -> Result<Vec<Option<u32>>, ParseError> {
    let mut limits = vec![None; shifts.len()];
    for pair in line.fields[1].split('|').map(str::trim).filter(|pair| !pair.is_empty()) {
        let (name, limit) =
            pair.split_once('=').ok_or_else(|| line.error(format!("MaxShifts takes ShiftID=number, not {pair:?}")))?;
        let shift = shifts
            .iter()
            .position(|shift| shift.id == name.trim())
            .ok_or_else(|| line.error(format!("shift {} is not declared", name.trim())))?;
        let limit = limit
            .trim()
            .parse()
            .map_err(|_| line.error(format!("the MaxShifts of {name} must be a whole number that is not negative")))?;
        if limits[shift].replace(limit).is_some() {
            return Err(line.error(format!("MaxShifts names {name} twice")));
        }
    }
    Ok(limits)
}

struct Context<'a> {
    horizon: usize,
    shifts: &'a [ShiftType],
    staff: &'a [Employee],
}

impl Context<'_> {
    fn employee(&self, line: &Line<'_>, index: usize) -> Result<usize, ParseError> {
        let id = line.fields[index];
        self.staff
            .iter()
            .position(|employee| employee.id == id)
            .ok_or_else(|| line.error(format!("employee {id} is not in SECTION_STAFF")))
    }

    fn shift(&self, line: &Line<'_>, index: usize) -> Result<usize, ParseError> {
        let id = line.fields[index];
        self.shifts
            .iter()
            .position(|shift| shift.id == id)
            .ok_or_else(|| line.error(format!("shift {id} is not declared")))
    }

    fn day(&self, line: &Line<'_>, index: usize) -> Result<usize, ParseError> {
        let day: usize = line.number(index, "a day")?;
        if day >= self.horizon {
            return Err(line.error(format!("day {day} is outside the horizon (days 0 to {})", self.horizon - 1)));
        }
        Ok(day)
    }
}

fn days_off(lines: &[Line<'_>], context: &Context<'_>) -> Result<Vec<(usize, Vec<usize>)>, ParseError> {
    let mut seen = HashSet::new();
    let mut result = Vec::new();
    for line in lines {
        let employee = context.employee(line, 0)?;
        if !seen.insert(employee) {
            return Err(line.error(format!("employee {} has two lines", line.fields[0])));
        }
        let mut days = (1..line.fields.len())
            .filter(|&index| !line.fields[index].is_empty())
            .map(|index| context.day(line, index))
            .collect::<Result<Vec<_>, _>>()?;
        days.sort_unstable();
        days.dedup();
        result.push((employee, days));
    }
    Ok(result)
}

fn requests(lines: &[Line<'_>], context: &Context<'_>) -> Result<Vec<ShiftRequest>, ParseError> {
    let mut seen = HashSet::new();
    lines
        .iter()
        .map(|line| {
            line.arity(4, "EmployeeID, Day, ShiftID, Weight")?;
            let request = ShiftRequest {
                employee: context.employee(line, 0)?,
                day: context.day(line, 1)?,
                shift: context.shift(line, 2)?,
                weight: weight(line, 3, "the weight")?,
            };
            if !seen.insert((request.employee, request.day, request.shift)) {
                return Err(line.error("a second request for the same employee, day and shift"));
            }
            Ok(request)
        })
        .collect()
}

fn cover(lines: &[Line<'_>], context: &Context<'_>) -> Result<Vec<Cover>, ParseError> {
    let mut seen = HashSet::new();
    lines
        .iter()
        .map(|line| {
            line.arity(5, "Day, ShiftID, Requirement, Weight for under, Weight for over")?;
            let (day, shift) = (context.day(line, 0)?, context.shift(line, 1)?);
            let cover = Cover::people(
                day,
                shift,
                line.number(2, "the requirement")?,
                weight(line, 3, "the weight for under")?,
                weight(line, 4, "the weight for over")?,
            );
            if !seen.insert((day, shift)) {
                return Err(line.error("a second cover line for the same day and shift"));
            }
            Ok(cover)
        })
        .collect()
}

fn weight(line: &Line<'_>, index: usize, name: &str) -> Result<i64, ParseError> {
    let text = line.fields[index];
    match text.parse::<i64>() {
        Ok(value) if value >= 0 => Ok(value),
        Ok(_) => Err(line.error(format!("{name} must not be negative, not {text}"))),
        Err(_) => Err(line.error(format!("{name} must be a whole number, not {text:?}"))),
    }
}

fn identifier(line: &Line<'_>, index: usize, name: &str) -> Result<String, ParseError> {
    let text = line.fields[index];
    if text.is_empty() {
        return Err(line.error(format!("the {name} is empty")));
    }
    Ok(text.to_owned())
}
