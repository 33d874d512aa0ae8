//! What the wire types of every capability share. Each capability's request and response bodies
//! live beside its handlers (`routes/<capability>/wire.rs`); the domain crates know no JSON shape.

use std::borrow::Cow;

use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ObjectBuilder, Schema, SchemaType, Type};

fn names_schema(names: &'static [&'static str], description: &str) -> RefOr<Schema> {
    ObjectBuilder::new()
        .schema_type(SchemaType::new(Type::String))
        .enum_values(Some(names.iter().copied()))
        .description((!description.is_empty()).then_some(description))
        .into()
}

/// The API document's schema of a domain enum, named as the document names it, with the values
/// the enum itself names (`opsd_core::wire_enum!`): the names are written once, in the domain.
macro_rules! enum_schemas {
    ($($name:ident = $ty:ty $(: $description:literal)?),+ $(,)?) => {$(
        pub struct $name;

        impl utoipa::PartialSchema for $name {
            fn schema() -> RefOr<Schema> {
                names_schema(<$ty>::names(), concat!("" $(, $description)?))
            }
        }

        impl utoipa::ToSchema for $name {
            fn name() -> Cow<'static, str> {
                Cow::Borrowed(stringify!($name))
            }
        }
    )+};
}

enum_schemas!(
    IncidentType = opsd_incidents::IncidentType,
    Severity = opsd_incidents::Severity,
    Status = opsd_incidents::Status: "Any status may follow any other; a new incident is `reported`.",
    Block = opsd_optimization::Block: "A daypart block of sales.",
    Department = opsd_core::Department: "A labor department: front of house, back of house, or anything else.",
    ReportShift = opsd_reports::ReportShift: "The report shifts, by local start time: morning before 11:00, afternoon 11:00 to 15:59, evening\nfrom 16:00. Ordered as the day runs.",
    ReservationState = opsd_coupons::ReservationState,
);

#[cfg(test)]
mod tests {
    use utoipa::PartialSchema;

    #[test]
    fn an_enum_schema_lists_the_domain_names() {
        let schema = serde_json::to_value(super::IncidentType::schema()).unwrap();
        assert_eq!(
            schema["enum"],
            serde_json::json!(["Injury", "Near Miss", "Spill / Slip Hazard", "Complaint", "Maintenance", "Stockout"])
        );
    }
}
