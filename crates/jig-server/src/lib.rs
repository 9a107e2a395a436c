//! Jig's HTTP API as one axum [`Router`]: what the browser (through `jig serve`) and the desktop
//! app (in process, no TCP port) both call.
//!
//! Routes live in [`mod@routes`], one file per concern, and hold no logic of their own: each acts
//! through the application layer (`jig_app::App`), reads the engine, and shapes the answer. [`openapi`] is the OpenAPI 3.1 document generated from the
//! same handlers and types (committed as `docs/openapi.json`; a test fails when it is stale).
//! Every API route needs a token ([`auth`]); a foreign `Host` or `Origin` is refused first.

pub mod auth;
pub mod error;
mod extract;
mod free_form;
mod html;
mod identity;
pub mod local;
pub mod mcp;
mod pages;
pub mod people;
mod provider;
pub mod routes;
pub mod serve;
mod signin;
mod sso;
mod state;

use axum::Router;
use axum::middleware::from_fn_with_state;
use utoipa::OpenApi;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub use html::escape as escape_html;
pub use state::AppState;

use routes::{
    approvals, artifacts, audit, calls, events, export, jobs, presets, project, prometheus,
    runbooks, series, tokens, tools,
};

#[derive(OpenApi)]
#[openapi(
    info(title = "Jig", description = "The workbench's API: tools, previews, calls, approvals, audit, runbooks, events."),
    tags(
        (name = "tools", description = "The registry and previews"),
        (name = "calls", description = "Starting, reading and cancelling calls"),
        (name = "tokens", description = "Personal API tokens for scripts and agents"),
        (name = "approvals", description = "Pending calls and decisions"),
        (name = "audit", description = "The record"),
        (name = "runbooks", description = "Runbooks, their step graphs, and runs people step through"),
        (name = "project", description = "Who is acting, problems, policy, metrics"),
        (name = "events", description = "The event stream"),
    ),
    // What `/api/events` sends: one JSON text message per event.
    components(schemas(jig_engine::Event, routes::events::EventsLost)),
)]
struct ApiDoc;

fn api() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(ApiDoc::openapi())
        .routes(routes!(tools::list))
        .routes(routes!(tools::show))
        .routes(routes!(tools::preview))
        .routes(routes!(presets::list))
        .routes(routes!(presets::save, presets::delete))
        .routes(routes!(calls::start))
        .routes(routes!(calls::read))
        .routes(routes!(calls::cancel))
        .routes(routes!(approvals::list))
        .routes(routes!(approvals::approve))
        .routes(routes!(approvals::deny))
        .routes(routes!(approvals::decide))
        .routes(routes!(tokens::list, tokens::make))
        .routes(routes!(tokens::revoke))
        .routes(routes!(runbooks::list))
        .routes(routes!(runbooks::show))
        .routes(routes!(runbooks::runs, runbooks::start))
        .routes(routes!(runbooks::run))
        .routes(routes!(runbooks::resume))
        .routes(routes!(runbooks::pause))
        .routes(routes!(runbooks::follow))
        .routes(routes!(runbooks::trace))
        .routes(routes!(runbooks::attachment))
        .routes(routes!(runbooks::act))
        .routes(routes!(audit::runs))
        .routes(routes!(audit::run))
        .routes(routes!(audit::verify))
        .routes(routes!(jobs::list))
        .routes(routes!(jobs::log))
        .routes(routes!(artifacts::read))
        .routes(routes!(export::export))
        .routes(routes!(project::session))
        .routes(routes!(project::problems))
        .routes(routes!(project::policy))
        .routes(routes!(project::what_if))
        .routes(routes!(project::metrics))
        .routes(routes!(series::series))
        .routes(routes!(events::stream))
        .routes(routes!(prometheus::metrics))
}

/// The OpenAPI 3.1 document of the API.
pub fn openapi() -> utoipa::openapi::OpenApi {
    free_form::mark(api().split_for_parts().1)
}

/// The pages: signing in (a token's exchange, the provider's sign-in) and the built UI.
fn pages() -> Router<AppState> {
    signin::router().merge(sso::router()).merge(pages::router())
}

/// The whole application: the API behind its token, and the pages.
pub fn router(state: AppState) -> Router {
    let (api, _) = api().split_for_parts();
    let api = api.layer(from_fn_with_state(state.access.clone(), auth::require_person));
    Router::new()
        .merge(api)
        .merge(pages().layer(from_fn_with_state(state.access.clone(), auth::check_host)))
        .with_state(state)
}
