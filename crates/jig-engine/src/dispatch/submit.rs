//! A call whose work was handed to a scheduler (seed 001's batch jobs): recorded as queued,
//! with the job, and answered at once. `crate::jobs` follows the job from there.

use jig_audit::JobRecord;
use jig_exec::Job;
use jig_model::envelope::SubmittedJob;

use super::*;

impl Call<'_> {
    /// Record `job` and answer that the call is queued. `trace`, the job's span when traces
    /// are exported, goes into the record for whoever collects the job to send.
    pub(super) async fn submitted(
        &mut self,
        tool: &Arc<ToolDef>,
        job: Job,
        claimed: Option<String>,
        trace: Option<crate::telemetry::JobTrace>,
    ) -> ToolResponse {
        let mut response = self.response(true, Value::Null, Vec::new(), false);
        response.job = Some(SubmittedJob {
            engine: job.engine.clone(),
            id: job.handle.clone(),
            state: RunState::Queued.as_str().to_owned(),
            request_id: self.request.request_id.clone(),
        });
        let stored = match self.stored(&mut response) {
            Ok(stored) => stored,
            Err(error) => return self.internal(&error.to_string()).await,
        };
        let mut recorded = json!({ "engine": job.engine, "id": job.handle });
        if let Some(trace) = trace {
            recorded["trace"] = serde_json::to_value(trace).unwrap_or(Value::Null);
        }
        self.record(
            PacketKind::CallSubmitted,
            json!({ "state": "queued", "ok": true, "data": Value::Null, "job": recorded }),
        );
        self.ops.push(Op::CreateJob(Box::new(JobRecord {
            request_id: self.request.request_id.clone(),
            engine: job.engine,
            handle: job.handle,
            dir: job.dir.display().to_string(),
            tool: serde_json::to_value(&**tool).unwrap_or(Value::Null),
            open: true,
            created_us: 0,
            updated_us: 0,
        })));
        self.ops.push(Op::SetRun(RunUpdate {
            request_id: self.request.request_id.clone(),
            state: Some(RunState::Queued),
            response: Some(stored.clone()),
            ..RunUpdate::default()
        }));
        self.settle_and_count(claimed, stored);
        self.publish_state(RunState::Queued);
        match self.commit_answer(&response).await {
            Ok(_) => response,
            Err(error) => {
                let message = format!(
                    "`{}` was submitted, but its record could not be written: {error}",
                    tool.id
                );
                self.response(false, Value::Null, vec![internal_error(&message)], false)
            }
        }
    }
}
