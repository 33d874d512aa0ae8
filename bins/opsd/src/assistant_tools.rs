//! The assistant's tools: read-only views of the caller's own team, over the domain services.

use std::sync::Arc;

use async_trait::async_trait;
use opsd_assistant::{ToolDefinition, Tools};
use opsd_core::{Caller, LocationId};
use opsd_incidents::{IncidentService, ListIncidents, Status};
use opsd_optimization::{OptimizationService, ReportKey, Week};
use opsd_scheduling::{LegacyScheduleView, ViewParams};
use opsd_teams::TeamService;
use serde_json::{Value, json};

pub struct AppTools {
    pub optimization: Arc<OptimizationService>,
    pub incidents: Arc<IncidentService>,
    pub schedule: Arc<LegacyScheduleView>,
    pub teams: Arc<TeamService>,
}

fn location_of(arguments: &Value) -> Result<Option<LocationId>, String> {
    match arguments.get("locationId").and_then(Value::as_str) {
        None => Ok(None),
        Some(raw) => {
            raw.parse().map(|id| Some(LocationId(id))).map_err(|_| "locationId must be a location id".to_owned())
        }
    }
}

#[async_trait]
impl Tools for AppTools {
    fn definitions(&self) -> Vec<ToolDefinition> {
        vec![
            ToolDefinition {
                name: "week_labor_summary",
                description: "Sales, labor cost, labor percentage and sales per labor hour of a week (Saturday to Friday) for the team or one location.",
                parameters: json!({ "type": "object", "properties": {
                    "weekOf": { "type": "string", "description": "the Saturday starting the week, YYYY-MM-DD; default the current week" },
                    "locationId": { "type": "string" } } }),
            },
            ToolDefinition {
                name: "open_incidents",
                description: "Incidents not yet resolved, newest first, for the team or one location.",
                parameters: json!({ "type": "object", "properties": { "locationId": { "type": "string" } } }),
            },
            ToolDefinition {
                name: "day_schedule",
                description: "Who works at a location on a day: names, roles, departments, start and end times.",
                parameters: json!({ "type": "object", "required": ["locationId", "date"], "properties": {
                    "locationId": { "type": "string" }, "date": { "type": "string", "description": "YYYY-MM-DD" } } }),
            },
        ]
    }

    async fn call(&self, caller: &Caller, name: &str, arguments: Value) -> Result<Value, String> {
        let team = caller.team_id().map_err(|_| "the caller has no team".to_owned())?;
        let location = location_of(&arguments)?;
        match name {
            "week_labor_summary" => {
                let week = match arguments.get("weekOf").and_then(Value::as_str) {
                    None => Week::containing(time::OffsetDateTime::now_utc().date()),
                    Some(raw) => opsd_core::parse_iso_date("weekOf", raw)
                        .and_then(|date| Week::starting("weekOf", date))
                        .map_err(|error| format!("weekOf {}", error.message))?,
                };
                let key = ReportKey { team: team.clone(), location, week };
                let (rendered, _) =
                    self.optimization.report(key).await.map_err(|_| "the week's data is not available".to_owned())?;
                // The same JSON the API answers, cut to what the question needs.
                let report: Value = serde_json::from_str(&rendered.json).map_err(|error| error.to_string())?;
                Ok(
                    json!({ "weekLabel": report["weekLabel"], "summary": report["summary"], "dailySummary": report["dailySummary"] }),
                )
            }
            "open_incidents" => {
                let page = self
                    .incidents
                    .list(caller, ListIncidents { location_id: location, status: None, limit: Some(100), cursor: None })
                    .await
                    .map_err(|_| "the incidents are not available".to_owned())?;
                let open: Vec<Value> = page
                    .items
                    .iter()
                    .filter(|i| i.status != Status::Resolved)
                    .map(|i| json!({
                        "id": i.id.0, "locationId": i.location_id.0, "type": i.incident_type, "severity": i.severity,
                        "status": i.status, "createdAt": i.created_at.to_string(), "notes": i.notes.chars().take(300).collect::<String>(),
                    }))
                    .collect();
                Ok(json!({ "openIncidents": open.len(), "incidents": open }))
            }
            "day_schedule" => {
                let location = location.ok_or_else(|| "locationId is required".to_owned())?;
                let date =
                    arguments.get("date").and_then(Value::as_str).ok_or_else(|| "date is required".to_owned())?;
                let locations = self
                    .teams
                    .list_locations(caller)
                    .await
                    .map_err(|_| "the locations are not available".to_owned())?;
                let slug = locations
                    .iter()
                    .find(|l| l.id == location)
                    .map(|l| l.slug.as_str().to_owned())
                    .ok_or_else(|| "no such location in your team".to_owned())?;
                let query = ViewParams {
                    start_date: Some(date.into()),
                    end_date: Some(date.into()),
                    limit: Some("500".into()),
                    ..Default::default()
                };
                let view = self
                    .schedule
                    .view(&slug, &query)
                    .await
                    .map_err(|_| "the schedule is not available".to_owned())?
                    .ok_or_else(|| "no such location".to_owned())?;
                // Names, roles and times only: wages stay out of the conversation.
                let shifts: Vec<Value> = view
                    .shifts
                    .iter()
                    .map(|s| json!({ "employee": s.employee_name, "role": s.role, "department": s.department, "startAt": s.start_at.to_string(), "endAt": s.end_at.to_string() }))
                    .collect();
                Ok(json!({ "date": date, "shifts": shifts }))
            }
            other => Err(format!("there is no tool named {other}")),
        }
    }
}
