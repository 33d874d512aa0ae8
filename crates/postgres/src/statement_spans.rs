//! A tracing span for every statement, child of whatever span runs it (a request, a job), when
//! traces are exported: [`trace_statements`] installs it for every connection made from then on.
//! It carries the SQL, never the bound values (names, emails, wages).

use std::collections::VecDeque;

use diesel::connection::{Instrumentation, InstrumentationEvent, set_default_instrumentation};

/// Every connection made after this call reports its statements as spans.
pub fn trace_statements() {
    let installed = set_default_instrumentation(|| Some(Box::new(StatementSpans::default())));
    if let Err(error) = installed {
        tracing::warn!(%error, "database statements are not traced");
    }
}

/// The spans of the statements in flight on one connection, oldest first: a pipelined
/// transaction has several at once, and they finish in the order they were sent.
#[derive(Default)]
struct StatementSpans {
    open: VecDeque<tracing::Span>,
}

impl Instrumentation for StatementSpans {
    fn on_connection_event(&mut self, event: InstrumentationEvent<'_>) {
        match event {
            InstrumentationEvent::StartQuery { query, .. } => {
                let text = query.to_string();
                let sql = text.split_once(" -- binds:").map_or(text.as_str(), |(sql, _)| sql);
                self.open.push_back(tracing::info_span!(
                    "db statement",
                    otel.name = %first_word(sql),
                    otel.kind = "client",
                    db.system = "postgresql",
                    db.statement = %sql,
                    otel.status_code = tracing::field::Empty,
                ));
            }
            InstrumentationEvent::FinishQuery { error, .. } => {
                if let Some(span) = self.open.pop_front()
                    && error.is_some()
                {
                    span.record("otel.status_code", "ERROR");
                }
            }
            _ => {}
        }
    }
}

/// `SELECT`, `INSERT`, ...: a span's name stays short; the statement is its attribute.
fn first_word(sql: &str) -> &str {
    sql.split_whitespace().next().unwrap_or("statement")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_span_is_named_by_the_statements_verb() {
        assert_eq!(first_word("  SELECT 1"), "SELECT");
        assert_eq!(first_word("WITH taken AS (INSERT ...)"), "WITH");
        assert_eq!(first_word(""), "statement");
    }
}
