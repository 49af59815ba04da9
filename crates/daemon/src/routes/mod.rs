//! HTTP routes: thin translations from HTTP to the session manager and drivers.

pub mod agents;
pub mod body;
pub mod changes;
pub mod credentials;
pub mod events;
pub mod files;
pub mod health;
pub mod hitl;
pub mod openapi;
pub mod portable;
pub mod processes;
pub mod sessions;
pub mod sse;
pub mod terminal;
pub mod tool_calls;
pub mod ui_stream;
pub mod webhooks;

use std::sync::Arc;
use std::time::Duration;

use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::session::SessionManager;

/// What every handler can reach.
#[derive(Clone)]
pub struct AppState {
    /// All sessions and the agent registry.
    pub sessions: Arc<SessionManager>,
    /// Interval of SSE keep-alive comments.
    pub sse_keep_alive: Duration,
    /// Whether requests need a bearer token (the served OpenAPI document says so).
    pub token_required: bool,
}

/// The one table of documented routes (each group shares a path), which makes both
/// [`api_router`] and [`api_router_documented`]: what is served and what `/openapi.json`
/// says cannot drift apart. The served router is built from each handler's path and
/// methods only: describing every operation and schema is most of what a start-up would
/// otherwise cost, and only `/openapi.json` (once, cached) and `spec` need it.
macro_rules! api_table {
    ($( [ $( $module:ident :: $handler:ident ),+ $(,)? ] )*) => {
        /// Every documented route, without its description (what the daemon serves).
        pub fn api_router() -> axum::Router<AppState> {
            use utoipa::Path;
            use utoipa_axum::PathItemExt;
            let mut router = axum::Router::new();
            $(
                let mut path = None;
                let mut methods = axum::routing::MethodRouter::new();
                $(
                    utoipa_axum::paste! {
                        let this = <$module::[<__path_ $handler>] as Path>::path();
                        assert!(
                            path.as_ref().is_none_or(|p| *p == this),
                            "a route group shares one path"
                        );
                        for method in <$module::[<__path_ $handler>] as Path>::methods() {
                            methods = methods.on(method.to_method_filter(), $module::$handler);
                        }
                        path = Some(this);
                    }
                )+
                router = router.route(&path.expect("a group has a handler"), methods);
            )*
            router
        }

        /// Every documented route, with its OpenAPI description.
        pub fn api_router_documented() -> OpenApiRouter<AppState> {
            OpenApiRouter::with_openapi(openapi::base_document())
                $( .routes(routes!( $( $module::$handler ),+ )) )*
        }
    };
}

api_table! {
    [health::health]
    [openapi::openapi_json]
    [agents::list_agents]
    [agents::agent_models]
    [agents::agent_modes]
    [agents::install_agent]
    [credentials::list_credentials]
    [credentials::get_credential, credentials::put_credential, credentials::delete_credential]
    [sessions::list_sessions]
    [sessions::create_session, sessions::get_session, sessions::delete_session]
    [sessions::end_session]
    [sessions::send_message]
    [sessions::cancel_turn]
    [events::get_events]
    [events::stream_events]
    [ui_stream::ui_stream]
    [hitl::reply_permission]
    [hitl::reply_question]
    [hitl::reject_question]
    [tool_calls::tool_call_result]
    [tool_calls::tool_call_reject]
    [portable::export_session]
    [portable::import_session]
    [portable::handover_session]
    [files::list_files, files::delete_file]
    [files::read_file, files::write_file]
    [files::upload_files]
    [files::archive_files]
    [processes::run_process]
    [processes::start_process, processes::list_processes]
    [processes::get_process, processes::delete_process]
    [processes::stop_process]
    [processes::kill_process]
    [processes::process_logs]
    [terminal::create_terminal_ticket]
    [terminal::open_terminal]
    [changes::turn_changes]
    [webhooks::create_webhook, webhooks::list_webhooks]
    [webhooks::get_webhook, webhooks::delete_webhook]
    [webhooks::list_webhook_deliveries]
}
