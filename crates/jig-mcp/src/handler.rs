//! The MCP server of one connection (stdio) or one session (Streamable HTTP).

#![allow(deprecated)] // MCP logging: deprecated by a later revision, current in 2025-11-25.

use std::borrow::Cow;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use jig_app::Called;
use jig_engine::{ApprovalState, Engine, Event, ToolResponse};
use jig_model::ApprovalId;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CompleteRequestParams, CompleteResult,
    ContentBlock, GetPromptRequestParams, GetPromptResponse, Implementation,
    InitializeRequestParams, InitializeResult, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, LoggingLevel, PaginatedRequestParams, ProtocolVersion,
    ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities, ServerConfig,
    SetLevelRequestParams, SubscribeRequestParams, UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler};
use serde_json::{Map, Value};

use crate::approval::{self, Answer};
use crate::live::{self, Listener};
use crate::outcome;
use crate::transport::Acting;
use crate::waiting;

/// Jig's MCP server over one engine.
#[derive(Debug, Clone)]
pub struct JigMcp {
    engine: Arc<Engine>,
    /// The application layer over the engine: calls' contexts, approvals.
    app: jig_app::App,
    /// Who acts when the transport does not say (stdio: the OS user).
    person: Acting,
    /// The Jig session of this MCP connection (budgets, approvals and idempotency are per
    /// session).
    session: String,
    state: Arc<Mutex<SessionState>>,
    /// The resources this session subscribed to.
    subscriptions: crate::subscriptions::Subscriptions,
}

#[derive(Debug, Default)]
struct SessionState {
    /// The client's name, from `initialize`.
    client: Option<String>,
    /// The level the client set with `logging/setLevel`.
    log_level: Option<LoggingLevel>,
    /// The registry watcher of this connection is running.
    watching: bool,
}

impl JigMcp {
    /// A server for `engine`, acting as `person` unless a request's transport names someone.
    pub fn new(engine: Arc<Engine>, person: Acting) -> Self {
        let session = format!("mcp-{}", &uuid::Uuid::new_v4().simple().to_string()[..12]);
        let app = jig_app::App::new(Arc::clone(&engine));
        Self {
            engine,
            app,
            person,
            session,
            state: Arc::default(),
            subscriptions: crate::subscriptions::Subscriptions::default(),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, SessionState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Who acts for this request: the token's holder over HTTP, else this server's person.
    fn acting(&self, context: &RequestContext<RoleServer>) -> Acting {
        context
            .extensions
            .get::<http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<Acting>())
            .cloned()
            .unwrap_or_else(|| self.person.clone())
    }

    /// The principal in the audit: the person, and the client acting for them.
    fn principal(&self, acting: &Acting) -> String {
        let client = self.state().client.clone().unwrap_or_default();
        jig_engine::agent_principal(&acting.person, &client)
    }

    /// A call of `tool` this connection makes: a request of its own in this session, the
    /// agent's trace from the request's `_meta` (W3C trace context, SEP-414) continuing
    /// through it. The application layer builds its context as every call's: a retry of a
    /// call someone approved uses the approval.
    fn spec(
        &self,
        tool: &jig_model::ToolDef,
        args: &Value,
        meta: &rmcp::model::RequestMetaObject,
    ) -> jig_app::CallSpec {
        jig_app::CallSpec {
            tool: tool.id.clone(),
            args: args.clone(),
            request_id: Some(uuid::Uuid::new_v4().to_string()),
            session: self.session.clone(),
            trace: jig_engine::telemetry::TraceOrigin {
                traceparent: meta.get_traceparent().map(str::to_owned),
                tracestate: meta.get_tracestate().map(str::to_owned),
                mcp_session: Some(self.session.clone()),
            },
            ..jig_app::CallSpec::default()
        }
    }

    /// Tell the client when the registry changes, for as long as it is connected.
    fn watch_registry(&self, peer: rmcp::service::Peer<RoleServer>) {
        {
            let mut state = self.state();
            if state.watching {
                return;
            }
            state.watching = true;
        }
        let mut events = self.engine.subscribe();
        tokio::spawn(async move {
            loop {
                match events.recv().await {
                    Ok(Event::Registry(jig_engine::RegistryEvent::RegistryReloaded { .. })) => {
                        if peer.notify_tool_list_changed().await.is_err() {
                            return;
                        }
                    }
                    Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                }
                if peer.is_transport_closed() {
                    return;
                }
            }
        });
    }

    async fn call(
        &self,
        params: CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let name = params.name.to_string();
        let policy = self.engine.policy();
        let tool = crate::catalog::Names::of(&policy).id(&name).and_then(|id| self.engine.get(id));
        let Some(tool) = tool else {
            return Err(ErrorData::invalid_params(
                self.engine.no_tool_message(&name),
                Some(serde_json::json!({ "tool": name })),
            ));
        };
        Ok(self.run(&tool, Value::Object(params.arguments.unwrap_or_default()), context).await)
    }

    /// Read resource `uri`: the audit's from the store; the project's by a call of the tool
    /// that serves it, governed and recorded like `tools/call`.
    async fn read(
        &self,
        uri: &str,
        context: &RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ReadResourceResult, ErrorData> {
        if crate::resources::is_audit(uri) {
            return crate::resources::read_audit(&self.engine, uri).await;
        }
        let (tool, args, mime_type) = crate::resources::call_for(&self.engine, uri)?;
        let result = self.run(&tool, args, context).await;
        crate::resources::contents(uri, mime_type.as_deref(), &tool, result)
    }

    /// Run `tool` with `args` for whoever acts in `context`: the policy decides, a person
    /// approves through elicitation when asked, the audit records it.
    async fn run(
        &self,
        tool: &jig_model::ToolDef,
        args: Value,
        context: &RequestContext<RoleServer>,
    ) -> CallToolResult {
        let policy = self.engine.policy();
        let acting = self.acting(context);
        if !acting.may_run {
            let text = crate::coded!(
                Policy,
                "`{}` may read here but not run tools (a viewer's token)",
                acting.person
            );
            return CallToolResult::error(vec![ContentBlock::text(text)]);
        }
        // What only the person gives is asked of them, never taken from the agent.
        let args =
            match crate::asked::ask(&context.peer, tool, args.as_object().unwrap_or(&Map::new()))
                .await
            {
                crate::asked::Given::Nothing => args,
                crate::asked::Given::Values(values) => {
                    let mut args = args;
                    if let Some(args) = args.as_object_mut() {
                        args.extend(values);
                    }
                    args
                }
                crate::asked::Given::Refused(text) => {
                    return CallToolResult::error(vec![ContentBlock::text(text)]);
                }
            };
        let actor = jig_app::Actor {
            principal: self.principal(&acting),
            asserted_by: None,
            may_run: acting.may_run,
            may_approve: acting.may_approve,
            admin: false,
        };
        let listener = Listener {
            peer: context.peer.clone(),
            progress: context.meta.get_progress_token(),
            log_level: self.state().log_level,
        };
        let again = || self.attempt(tool, &args, &actor, context, &listener);
        let mut called = again().await;
        if let Some(approval) = called.waits_for().cloned() {
            called = self.ask_approval(&approval, &actor, context, called, &again).await;
        }
        // Still waiting: for a person who decides elsewhere, as long as the policy says.
        if let Some(approval) = called.waits_for().cloned() {
            let within = Duration::from_secs(policy.config().mcp.wait_for_approval_seconds);
            let state = if within.is_zero() {
                None
            } else {
                waiting::decided(&self.app, &actor, &approval, within, &context.ct, &listener).await
            };
            match state {
                // Approved: this runs it (or answers with the run the approval resumed).
                Some(ApprovalState::Approved | ApprovalState::Consumed) => called = again().await,
                // Decided against, or ended undecided: the waiting call's own record already
                // says so (no second request is made to learn it); the agent reads who and why.
                Some(ended) => {
                    let response = called.into_response();
                    let ended = waiting::ended(&self.app, &actor, &approval, ended, response);
                    called = Called::Answered(ended.await);
                }
                None => {}
            }
        }
        outcome::result(Some(tool), called.response())
    }

    /// One attempt at the call: a request of its own, through the application layer, with
    /// the client's cancellation and its events forwarded.
    async fn attempt(
        &self,
        tool: &jig_model::ToolDef,
        args: &Value,
        actor: &jig_app::Actor,
        context: &RequestContext<RoleServer>,
        listener: &Listener,
    ) -> Called {
        let spec = self.spec(tool, args, &context.meta);
        let call_context = self.app.context(actor, &spec);
        match live::dispatch(&self.app, actor, &spec, call_context, &context.ct, listener).await {
            Ok(called) => called,
            Err(error) => {
                let id = spec.request_id.as_deref().unwrap_or_default();
                let refused =
                    ToolResponse::refused(&spec.tool, id, error.code(), error.to_string());
                Called::Answered(refused)
            }
        }
    }

    /// Ask the person at the client about a pending approval, then run the call again when
    /// they approved it. Anything else leaves `waiting` as the answer (naming the approval).
    async fn ask_approval<F, Fut>(
        &self,
        approval_id: &ApprovalId,
        actor: &jig_app::Actor,
        context: &RequestContext<RoleServer>,
        waiting: Called,
        again: F,
    ) -> Called
    where
        F: FnOnce() -> Fut,
        Fut: std::future::Future<Output = Called>,
    {
        let Ok(Some(approval)) = self.app.approval(actor, approval_id).await else {
            return waiting;
        };
        // Asked of someone who may decide it, the request as it will run; the agent's name
        // is its person's when they decide.
        let person = jig_app::Actor { principal: self.acting(context).person, ..actor.clone() };
        if !actor.may_approve
            || !approval::can_ask(&self.engine, &context.peer, &approval, &person.principal)
        {
            return waiting;
        }
        match approval::ask(&self.app, &context.peer, &approval, &person).await {
            // Run again: approved, it consumes the approval; denied, it is refused on record.
            Answer::Approved | Answer::Denied => again().await,
            Answer::Undecided(why) => {
                tracing::info!(approval = %approval_id, %why, "approval left pending");
                waiting
            }
        }
    }
}

impl ServerHandler for JigMcp {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_logging()
            .enable_resources()
            .enable_resources_subscribe()
            .enable_prompts()
            .enable_completions()
            .build();
        let mut info = InitializeResult::new(capabilities);
        info.protocol_version = ProtocolVersion::V_2025_11_25;
        info.server_info = Implementation::new("jig", env!("CARGO_PKG_VERSION"));
        info.instructions = Some(
            "Jig runs this project's tools under its policy: every call is validated, decided \
             (allowed, denied, or waiting for a person's approval) and recorded in a \
             hash-chained audit. A result with isError names the error code (E_POLICY, \
             E_VALIDATION_FAIL, …); a call waiting for approval names the approval, and the \
             same call with the same arguments runs once a person approved it."
                .to_owned(),
        );
        info
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(crate::protocol_versions())
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        self.state().client = Some(request.client_info.name.clone());
        context.peer.set_peer_info(request.clone());
        self.negotiate_initialize(&request)
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        // What the manifest would send off the machine and waits for consent: said to the
        // client, whose person is the one who can give it (stderr reaches nobody there).
        let waiting = self.engine.waiting_consent();
        if !waiting.is_empty() {
            let lines: Vec<String> = waiting.iter().map(|item| item.describe()).collect();
            let text = format!(
                "Waiting for your consent, and doing nothing until then: {}. Read them, then run `jig trust` in {}.",
                lines.join("; "),
                self.engine.root().display()
            );
            let param = rmcp::model::LoggingMessageNotificationParam::new(
                rmcp::model::LoggingLevel::Warning,
                serde_json::Value::String(text),
            )
            .with_logger("jig.trust".to_owned());
            let _ = context.peer.notify_logging_message(param).await;
        }
        self.watch_registry(context.peer);
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let policy = self.engine.policy();
        let names = crate::catalog::Names::of(&policy);
        let everything = policy.config().mcp.list_denied;
        let tools = self
            .engine
            .list(None, None)
            .iter()
            .filter(|tool| everything || crate::catalog::callable(&policy, tool))
            .filter(|tool| names.reachable(&tool.id))
            .map(|tool| crate::catalog::describe(tool, names.name(&tool.id)))
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.call(request, &context).await.map(CallToolResponse::Complete)
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.state().log_level = Some(request.level);
        Ok(())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(crate::resources::list(&self.engine))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(crate::resources::templates(&self.engine))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        self.read(&request.uri, &context).await.map(ReadResourceResponse::Complete)
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if !crate::resources::exists(&self.engine, &request.uri) {
            return Err(ErrorData::resource_not_found(
                format!("no resource `{}` to subscribe to", request.uri),
                Some(serde_json::json!({ "uri": request.uri })),
            ));
        }
        self.subscriptions.add(&self.engine, context.peer, request.uri);
        Ok(())
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.subscriptions.remove(&request.uri);
        Ok(())
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        // Only prompts (runbooks) have arguments to complete; a resource template's run id is
        // not guessed.
        let reference = serde_json::to_value(&request.r#ref).unwrap_or_default();
        let name = match reference.get("type").and_then(Value::as_str) {
            Some("ref/prompt") => reference.get("name").and_then(Value::as_str).unwrap_or_default(),
            _ => "",
        };
        Ok(crate::prompts::complete(
            &self.app,
            name,
            &request.argument.name,
            &request.argument.value,
        ))
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(crate::prompts::list(&self.app))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let args = request.arguments.unwrap_or_default();
        let (mut prompt, attachments) = crate::prompts::get(&self.app, &request.name, &args)?;
        for uri in attachments {
            prompt = crate::prompts::attach(prompt, self.read(&uri, &context).await?)?;
        }
        Ok(GetPromptResponse::Complete(prompt))
    }
}
