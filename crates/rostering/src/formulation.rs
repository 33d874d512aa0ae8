//! The instance as a mixed-integer program, in no solver's terms: columns, rows and an objective that
//! any MIP adapter can load. Cells outside the problem's free set are constants, folded into the rows,
//! so a neighbourhood's program is as small as the neighbourhood.
//!
//! The strong parts: each employee's runs of work and days off as a path through a network of the
//! horizon's days (rules 5 to 7 exactly, so the relaxation only mixes valid sequences), a weekend
//! indicator per employee and weekend, rotation as one row per shift and day (the shift and
//! every shift it may not be followed by), and total minutes divided by the lengths' common divisor
//! and rounded (a Chvátal-Gomory cut that integer rosters all meet).

mod runs;

use crate::evaluate::Rule;
use crate::model::{Instance, Roster};
use crate::ports::RosterProblem;

#[derive(Clone, Debug, PartialEq)]
pub struct Column {
    pub cost: f64,
    pub lower: f64,
    pub upper: f64,
    pub integer: bool,
}

/// `lower <= sum(terms) <= upper`.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub lower: f64,
    pub upper: f64,
    pub terms: Vec<(usize, f64)>,
}

/// Minimise `offset + sum(cost * column)` subject to the rows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Mip {
    pub columns: Vec<Column>,
    pub rows: Vec<Row>,
    pub offset: f64,
    /// A rule over free days that no column can meet (an employee who must work but has every day off).
    pub infeasible: bool,
}

/// One employee's day: free (its shift columns) or fixed to the start roster's shift.
#[derive(Clone, Debug)]
enum Cell {
    Free(Vec<(usize, usize)>),
    Fixed(Option<usize>),
}

/// A linear expression over the columns, with the fixed cells' part as its constant.
#[derive(Clone, Default)]
pub(crate) struct Expr {
    terms: Vec<(usize, f64)>,
    constant: f64,
    /// Whether a free cell is in it (one with no column, a day off, still counts).
    free: bool,
}

impl Expr {
    fn add(&mut self, other: Expr, factor: f64) {
        self.terms.extend(other.terms.into_iter().map(|(column, coefficient)| (column, coefficient * factor)));
        self.constant += other.constant * factor;
        self.free |= other.free;
    }
}

pub struct Formulation {
    pub mip: Mip,
    cells: Vec<Vec<Cell>>,
    /// Per employee, the arcs of its run network (empty where the runs are rows on the days).
    run_arcs: Vec<Vec<runs::RunArc>>,
    networks_fit: bool,
    /// Per employee, per weekend: its indicator column (`None` for a weekend of fixed days only).
    weekend_columns: Vec<Vec<Option<usize>>>,
    /// Per cover line: its under and over columns (`None` for a line over fixed cells only).
    cover_columns: Vec<Option<(usize, usize)>>,
    /// Per employee with overtime: its column of overtime (in units of `minute_unit`) and the unit.
    overtime_columns: Vec<Option<(usize, u32)>>,
}

impl Formulation {
    pub fn build(problem: &RosterProblem) -> Self {
        let instance = &problem.instance;
        let mut formulation = Formulation {
            mip: Mip::default(),
            cells: Vec::new(),
            run_arcs: Vec::new(),
            networks_fit: false,
            weekend_columns: Vec::new(),
            cover_columns: Vec::new(),
            overtime_columns: vec![None; instance.staff.len()],
        };
        formulation.cells = (0..instance.staff.len())
            .map(|employee| (0..instance.horizon).map(|day| formulation.cell(problem, employee, day)).collect())
            .collect();
        formulation.networks_fit = formulation.networks_fit(instance);
        for employee in 0..instance.staff.len() {
            formulation.employee_rows(problem, employee);
        }
        formulation.cover(instance);
        formulation.requests_and_costs(instance);
        formulation
    }

    /// The roster the solver's column values describe.
    pub fn roster(&self, values: &[f64]) -> Roster {
        let days = self
            .cells
            .iter()
            .map(|row| {
                row.iter()
                    .map(|cell| match cell {
                        Cell::Free(columns) => {
                            columns.iter().find(|&&(_, column)| values[column] > 0.5).map(|&(shift, _)| shift)
                        }
                        Cell::Fixed(shift) => *shift,
                    })
                    .collect()
            })
            .collect();
        Roster { days }
    }

    /// Column values for a roster, to hand the solver as a start.
    pub fn values(&self, instance: &Instance, roster: &Roster) -> Vec<f64> {
        let mut values = vec![0.0; self.mip.columns.len()];
        for (employee, row) in self.cells.iter().enumerate() {
            for (day, cell) in row.iter().enumerate() {
                if let (Cell::Free(columns), Some(shift)) = (cell, roster.shift(employee, day))
                    && let Some(&(_, column)) = columns.iter().find(|&&(s, _)| s == shift)
                {
                    values[column] = 1.0;
                }
            }
        }
        let weekends = instance.weekend.weekends(instance.horizon);
        for (employee, columns) in self.weekend_columns.iter().enumerate() {
            for (&column, days) in columns.iter().zip(&weekends) {
                let Some(column) = column else { continue };
                values[column] = f64::from(u8::from(days.iter().any(|&day| roster.works(employee, day))));
            }
        }
        self.run_values(instance, roster, &mut values);
        for (employee, overtime) in self.overtime_columns.iter().enumerate() {
            if let (Some((column, divisor)), Some(rule)) = (overtime, instance.staff[employee].overtime) {
                let minutes: u32 = roster.days[employee].iter().flatten().map(|&s| instance.shifts[s].minutes).sum();
                values[*column] = f64::from(minutes.saturating_sub(rule.after_minutes)) / f64::from(*divisor);
            }
        }
        for (line, &columns) in instance.cover.iter().zip(&self.cover_columns) {
            let Some((under, over)) = columns else { continue };
            let staffed = f64::from(line.staffed(roster));
            let requirement = f64::from(line.requirement);
            values[under] = (requirement - staffed).max(0.0);
            values[over] = (staffed - requirement).max(0.0);
        }
        values
    }

    fn cell(&mut self, problem: &RosterProblem, employee: usize, day: usize) -> Cell {
        if !problem.is_free(employee, day) {
            return Cell::Fixed(problem.start.as_ref().and_then(|start| start.shift(employee, day)));
        }
        let instance = &problem.instance;
        let person = &instance.staff[employee];
        if person.days_off.binary_search(&day).is_ok() && !problem.relaxes(Rule::DayOff) {
            return Cell::Free(Vec::new());
        }
        let shifts = (0..instance.shifts.len())
            .filter(|&shift| problem.relaxes(Rule::MaxShiftsOfType) || person.max_shifts[shift] != Some(0))
            .map(|shift| (shift, self.binary(0.0)))
            .collect();
        Cell::Free(shifts)
    }

    fn binary(&mut self, cost: f64) -> usize {
        self.column(Column { cost, lower: 0.0, upper: 1.0, integer: true })
    }

    fn column(&mut self, column: Column) -> usize {
        self.mip.columns.push(column);
        self.mip.columns.len() - 1
    }

    /// `lower <= expr <= upper`, with the expression's constant moved to the bounds. A row left with no
    /// column is dropped: over fixed cells only, the evaluator judges it; over free cells that have no
    /// column (days off), a broken one makes the program infeasible.
    fn row(&mut self, expr: Expr, lower: f64, upper: f64) {
        if expr.terms.is_empty() {
            if expr.free && (expr.constant < lower - 1e-9 || expr.constant > upper + 1e-9) {
                self.mip.infeasible = true;
            }
            return;
        }
        self.mip.rows.push(Row { lower: lower - expr.constant, upper: upper - expr.constant, terms: expr.terms });
    }

    /// `x[e, d, s]`.
    fn works_shift(&self, employee: usize, day: usize, shift: usize) -> Expr {
        match &self.cells[employee][day] {
            Cell::Free(columns) => Expr {
                terms: columns.iter().filter(|&&(s, _)| s == shift).map(|&(_, column)| (column, 1.0)).collect(),
                constant: 0.0,
                free: true,
            },
            Cell::Fixed(fixed) => {
                Expr { terms: Vec::new(), constant: f64::from(u8::from(*fixed == Some(shift))), free: false }
            }
        }
    }

    /// `w[e, d]`: works any shift that day.
    fn works(&self, employee: usize, day: usize) -> Expr {
        match &self.cells[employee][day] {
            Cell::Free(columns) => {
                Expr { terms: columns.iter().map(|&(_, column)| (column, 1.0)).collect(), constant: 0.0, free: true }
            }
            Cell::Fixed(fixed) => {
                Expr { terms: Vec::new(), constant: f64::from(u8::from(fixed.is_some())), free: false }
            }
        }
    }

    fn employee_rows(&mut self, problem: &RosterProblem, employee: usize) {
        let instance = &problem.instance;
        let horizon = instance.horizon;
        if self.cells[employee].iter().all(|cell| matches!(cell, Cell::Fixed(_))) {
            // Every row would be a constant: the evaluator judges a fixed employee.
            self.run_arcs.push(Vec::new());
            self.weekend_columns.push(Vec::new());
            return;
        }
        for day in 0..horizon {
            if let Cell::Free(columns) = &self.cells[employee][day]
                && columns.len() > 1
            {
                let terms = columns.iter().map(|&(_, column)| (column, 1.0)).collect();
                self.mip.rows.push(Row { lower: f64::NEG_INFINITY, upper: 1.0, terms });
            }
        }
        if !problem.relaxes(Rule::Rotation) {
            self.rotation(instance, employee);
        }
        if !problem.relaxes(Rule::MaxShiftsOfType) {
            self.max_shifts(instance, employee);
        }
        self.total_minutes(problem, employee);
        self.runs(problem, employee);
        if !problem.relaxes(Rule::MaxWeekends) {
            self.weekends(instance, employee);
        } else {
            self.weekend_columns.push(Vec::new());
        }
    }

    fn rotation(&mut self, instance: &Instance, employee: usize) {
        for day in 0..instance.horizon.saturating_sub(1) {
            for (shift, kind) in instance.shifts.iter().enumerate() {
                if kind.not_followed_by.is_empty() {
                    continue;
                }
                let mut expr = self.works_shift(employee, day, shift);
                for &next in &kind.not_followed_by {
                    expr.add(self.works_shift(employee, day + 1, next), 1.0);
                }
                self.row(expr, f64::NEG_INFINITY, 1.0);
            }
        }
    }

    fn max_shifts(&mut self, instance: &Instance, employee: usize) {
        for (shift, limit) in instance.staff[employee].max_shifts.iter().enumerate() {
            let Some(limit) = *limit else { continue };
            if limit as usize >= instance.horizon {
                continue;
            }
            let mut count = Expr::default();
            (0..instance.horizon).for_each(|day| count.add(self.works_shift(employee, day, shift), 1.0));
            self.row(count, f64::NEG_INFINITY, f64::from(limit));
        }
    }

    fn total_minutes(&mut self, problem: &RosterProblem, employee: usize) {
        let instance = &problem.instance;
        let person = &instance.staff[employee];
        let divisor = instance.shifts.iter().map(|shift| shift.minutes).fold(0, gcd).max(1);
        let lower = if problem.relaxes(Rule::MinTotalMinutes) { 0 } else { person.min_minutes.div_ceil(divisor) };
        let upper = if problem.relaxes(Rule::MaxTotalMinutes) { u32::MAX } else { person.max_minutes / divisor };
        let mut minutes = Expr::default();
        for day in 0..instance.horizon {
            for (shift, kind) in instance.shifts.iter().enumerate() {
                minutes.add(self.works_shift(employee, day, shift), f64::from(kind.minutes / divisor));
            }
        }
        let upper = if upper == u32::MAX { f64::INFINITY } else { f64::from(upper) };
        if let Some(overtime) = person.overtime {
            // The minutes past the threshold, at least: the objective keeps it no higher.
            let column = self.column(Column {
                cost: (overtime.cost_per_minute * i64::from(divisor)) as f64,
                lower: 0.0,
                upper: f64::INFINITY,
                integer: false,
            });
            let mut past = minutes.clone();
            past.terms.push((column, -1.0));
            self.row(past, f64::NEG_INFINITY, f64::from(overtime.after_minutes) / f64::from(divisor));
            self.overtime_columns[employee] = Some((column, divisor));
        }
        self.row(minutes, f64::from(lower), upper);
    }

    fn weekends(&mut self, instance: &Instance, employee: usize) {
        let weekends = instance.weekend.weekends(instance.horizon);
        let max = instance.staff[employee].max_weekends as usize;
        let mut columns = Vec::new();
        let mut count = Expr::default();
        for days in &weekends {
            if days.iter().all(|&day| matches!(self.cells[employee][day], Cell::Fixed(_))) {
                let worked = days.iter().any(|&day| matches!(self.cells[employee][day], Cell::Fixed(Some(_))));
                count.constant += f64::from(u8::from(worked));
                columns.push(None);
                continue;
            }
            let worked = self.binary(0.0);
            columns.push(Some(worked));
            for &day in days {
                let mut expr = self.works(employee, day);
                expr.terms.push((worked, -1.0));
                self.row(expr, f64::NEG_INFINITY, 0.0);
            }
            count.terms.push((worked, 1.0));
        }
        if max < weekends.len() {
            self.row(count, f64::NEG_INFINITY, max as f64);
        }
        self.weekend_columns.push(columns);
    }

    fn cover(&mut self, instance: &Instance) {
        let mut fixed_staffed = vec![vec![0u32; instance.shifts.len()]; instance.horizon];
        let mut free_employees = Vec::new();
        for (employee, row) in self.cells.iter().enumerate() {
            for (day, cell) in row.iter().enumerate() {
                match cell {
                    Cell::Fixed(Some(shift)) => fixed_staffed[day][*shift] += 1,
                    Cell::Fixed(None) => {}
                    Cell::Free(_) => {
                        if free_employees.last() != Some(&employee) {
                            free_employees.push(employee);
                        }
                    }
                }
            }
        }
        for line in &instance.cover {
            // The fixed cells counted once, the free ones as columns: a neighbourhood of a large
            // instance does not walk every employee for every line.
            let fixed: u32 = line.shifts.iter().map(|&(shift, units)| fixed_staffed[line.day][shift] * units).sum();
            let mut staffed = Expr { constant: f64::from(fixed), ..Expr::default() };
            for &(shift, units) in &line.shifts {
                // A free employee's fixed cells are in `fixed` already.
                free_employees
                    .iter()
                    .filter(|&&employee| matches!(self.cells[employee][line.day], Cell::Free(_)))
                    .for_each(|&employee| staffed.add(self.works_shift(employee, line.day, shift), f64::from(units)));
            }
            if staffed.terms.is_empty() {
                // Over fixed cells only: the line's cost is a constant.
                let (staffed, requirement) = (i64::from(fixed), i64::from(line.requirement));
                let cost = (requirement - staffed).max(0) * line.under_weight
                    + (staffed - requirement).max(0) * line.over_weight;
                self.mip.offset += cost as f64;
                self.cover_columns.push(None);
                continue;
            }
            let under = self.column(Column {
                cost: line.under_weight as f64,
                lower: 0.0,
                upper: f64::INFINITY,
                integer: false,
            });
            let over =
                self.column(Column { cost: line.over_weight as f64, lower: 0.0, upper: f64::INFINITY, integer: false });
            self.cover_columns.push(Some((under, over)));
            staffed.terms.push((under, 1.0));
            staffed.terms.push((over, -1.0));
            let requirement = f64::from(line.requirement);
            self.row(staffed, requirement, requirement);
        }
    }

    fn requests_and_costs(&mut self, instance: &Instance) {
        for request in &instance.on_requests {
            let weight = request.weight as f64;
            let worked = self.works_shift(request.employee, request.day, request.shift);
            // weight * (1 - x)
            self.mip.offset += weight * (1.0 - worked.constant);
            worked.terms.iter().for_each(|&(column, _)| self.mip.columns[column].cost -= weight);
        }
        for request in &instance.off_requests {
            let weight = request.weight as f64;
            let worked = self.works_shift(request.employee, request.day, request.shift);
            self.mip.offset += weight * worked.constant;
            worked.terms.iter().for_each(|&(column, _)| self.mip.columns[column].cost += weight);
        }
        for (employee, person) in instance.staff.iter().enumerate() {
            for cell in &self.cells[employee] {
                match cell {
                    Cell::Free(columns) => {
                        for &(shift, column) in columns {
                            self.mip.columns[column].cost += person.shift_costs[shift] as f64;
                        }
                    }
                    Cell::Fixed(Some(shift)) => self.mip.offset += person.shift_costs[*shift] as f64,
                    Cell::Fixed(None) => {}
                }
            }
        }
    }
}

fn gcd(a: u32, b: u32) -> u32 {
    if b == 0 { a } else { gcd(b, a % b) }
}
