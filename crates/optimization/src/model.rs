pub use opsd_core::Department;
pub use opsd_core::Week;
use opsd_core::{LocationId, Money};
use rust_decimal::Decimal;
use time::Date;

opsd_core::wire_enum! {
    /// A daypart block of sales.
    pub enum Block {
        Lunch,
        Dinner,
        LateNight,
    }
}

/// Sales of one (date, block), summed over the locations in scope.
#[derive(Debug, Clone, PartialEq)]
pub struct SalesFact {
    pub date: Date,
    pub block: Block,
    pub food: Money,
    pub beverage: Money,
    pub other: Money,
    pub guests: Option<i64>,
}

/// Labor of one (date, department): hours and their cost, from non-draft scheduled shifts.
#[derive(Debug, Clone, PartialEq)]
pub struct LaborFact {
    pub date: Date,
    pub department: Department,
    pub hours: Decimal,
    pub cost: Money,
}

/// A goal row as stored: a location's own, or the team default (`location_id` none).
#[derive(Debug, Clone, PartialEq)]
pub struct StoredGoal {
    pub location_id: Option<LocationId>,
    pub day_of_week: u8,
    pub sales_goal: Money,
    pub labor_pct_target: Decimal,
    pub splh_target: Decimal,
}

/// What the analytics store holds for one week and scope.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WeekData {
    pub sales: Vec<SalesFact>,
    pub labor: Vec<LaborFact>,
    pub goals: Vec<StoredGoal>,
}

/// One validated sales ingestion row.
#[derive(Debug, Clone, PartialEq)]
pub struct SalesRow {
    pub location_id: LocationId,
    pub date: Date,
    pub block: Block,
    pub food: Money,
    pub beverage: Money,
    pub other: Money,
    pub guests: Option<i32>,
}
