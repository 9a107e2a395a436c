//! `/api/audit/export`: the timeline's runs, filtered as the timeline is, streamed as JSON Lines
//! or CSV page by page (memory stays flat however long the history).

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use jig_engine::RunRecord;
use jig_engine::history::MAX_PAGE;
use jig_model::envelope::ErrorMessage;
use serde::Deserialize;
use utoipa::IntoParams;

use super::audit::RunFilter;
use crate::error::ApiError;
use crate::extract::Params;
use crate::state::AppState;

/// The format of an export.
#[derive(Debug, Clone, Copy, Default, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// One JSON object per line.
    #[default]
    Jsonl,
    /// A header row, then one row per run.
    Csv,
}

/// How to export.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ExportFormat {
    /// `jsonl` (default) or `csv`.
    #[serde(default)]
    #[param(inline)]
    pub format: Format,
}

/// The CSV columns, in order.
const COLUMNS: &[&str] = &[
    "created_us",
    "request_id",
    "run_id",
    "tool",
    "version",
    "state",
    "principal",
    "session_id",
    "thread_id",
    "rule",
    "duration_ms",
    "error",
    "replayed_from",
    "params_hash",
    "policy_hash",
];

/// Every run the filters select, newest first (their responses left out, as in the timeline).
#[utoipa::path(get, path = "/api/audit/export", operation_id = "exportRuns", tag = "audit",
    params(RunFilter, ExportFormat),
    responses((status = 200, description = "JSON Lines, or CSV with format=csv",
            content((String = "application/x-ndjson"), (String = "text/csv"))),
        (status = 400, body = ErrorMessage)))]
pub async fn export(
    State(state): State<AppState>,
    Params(filter): Params<RunFilter>,
    Params(format): Params<ExportFormat>,
) -> Result<Response, ApiError> {
    let mut query = filter.query()?;
    query.limit = MAX_PAGE;
    // Check the filters before the 200 goes out: a bad cursor is a 400, not a cut stream.
    let history = state.engine.history();
    let first = history.runs(&query).await?;
    let format = format.format;
    let header_row = matches!(format, Format::Csv).then(|| Bytes::from(COLUMNS.join(",") + "\r\n"));
    let pages =
        futures_util::stream::unfold(Some((history, query, Some(first))), move |step| async move {
            let (history, mut query, page) = step?;
            let page = match page {
                Some(page) => page,
                None => match history.runs(&query).await {
                    Ok(page) => page,
                    Err(error) => {
                        return Some((Err(std::io::Error::other(error.to_string())), None));
                    }
                },
            };
            let chunk = render(&page.runs, format);
            let next = page.next.map(|cursor| {
                query.after = Some(cursor);
                (history, query, None)
            });
            Some((Ok::<_, std::io::Error>(chunk), next))
        });
    let body =
        futures_util::StreamExt::chain(futures_util::stream::iter(header_row.map(Ok)), pages);
    let (mime, name) = match format {
        Format::Jsonl => ("application/x-ndjson", "jig-runs.jsonl"),
        Format::Csv => ("text/csv; charset=utf-8", "jig-runs.csv"),
    };
    Ok((
        [
            (header::CONTENT_TYPE, mime.to_owned()),
            (header::CONTENT_DISPOSITION, format!("attachment; filename=\"{name}\"")),
        ],
        Body::from_stream(body),
    )
        .into_response())
}

fn render(runs: &[RunRecord], format: Format) -> Bytes {
    let mut out = String::new();
    for run in runs {
        match format {
            Format::Jsonl => {
                out.push_str(&serde_json::to_string(run).unwrap_or_default());
                out.push('\n');
            }
            Format::Csv => {
                let fields = [
                    run.created_us.to_string(),
                    run.request_id.clone(),
                    run.run_id.clone(),
                    run.tool.clone(),
                    run.version.clone(),
                    run.state.to_string(),
                    run.principal.clone().unwrap_or_default(),
                    run.session_id.clone().unwrap_or_default(),
                    run.thread_id.clone().unwrap_or_default(),
                    run.rule.clone().unwrap_or_default(),
                    run.duration_ms.map(|d| d.to_string()).unwrap_or_default(),
                    run.error.clone().unwrap_or_default(),
                    run.replayed_from.clone().unwrap_or_default(),
                    run.params_hash.clone(),
                    run.policy_hash.clone(),
                ];
                let row: Vec<String> = fields.iter().map(|f| csv_field(f)).collect();
                out.push_str(&row.join(","));
                out.push_str("\r\n");
            }
        }
    }
    Bytes::from(out)
}

/// One CSV field (RFC 4180 quoting). A field a spreadsheet would read as a formula (`=`, `+`,
/// `-`, `@`, tab, CR) gets a leading `'`: tool names, errors and principals come from
/// toolpacks and callers, and an export is opened in spreadsheets.
fn csv_field(value: &str) -> String {
    let value = match value.chars().next() {
        Some('=' | '+' | '-' | '@' | '\t' | '\r') => format!("'{value}"),
        _ => value.to_owned(),
    };
    if value.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", value.replace('"', "\"\""))
    } else {
        value
    }
}

#[cfg(test)]
mod tests {
    use super::csv_field;

    #[test]
    fn csv_fields_are_quoted_and_formulas_defused() {
        assert_eq!(csv_field("plain"), "plain");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_field("=HYPERLINK(\"x\")"), "\"'=HYPERLINK(\"\"x\"\")\"");
        assert_eq!(csv_field("-1"), "'-1");
        assert_eq!(csv_field("line\nbreak"), "\"line\nbreak\"");
    }
}
