//! Asking the human to approve a call through the client's form (MCP elicitation) while
//! watching the store: a decision made anywhere else meanwhile — the console's buttons,
//! `aelc approve`, `aelc reject` — ends the wait, and the form is withdrawn with
//! `notifications/cancelled`, so the human is not left answering a question already settled.
//!
//! Why poll: the decision is a row other processes write (a console on another gateway, a CLI
//! on another machine), and both backends are read the same way. A human takes seconds to
//! decide; a read every [`POLL`] is nothing beside that, and only while a form is open.

use std::time::Duration;

use aelc_store::{ApprovalState, Store};
use rmcp::model::{
    ClientResult, ElicitRequest, ElicitRequestParams, ElicitationAction, ElicitationSchema,
    ServerRequest,
};
use rmcp::service::{Peer, PeerRequestOptions, RoleServer};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How often the store is read while a form is open.
pub const POLL: Duration = Duration::from_millis(250);

/// The form an elicitation shows the human.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct ApprovalForm {
    /// Approve this call?
    pub approve: bool,
}
rmcp::elicit_safe!(ApprovalForm);

/// What came of asking.
#[derive(Debug, PartialEq, Eq)]
pub enum Heard {
    /// The human answered the form (not yet written to the store).
    Form { approve: bool },
    /// The approval was decided elsewhere first: its state in the store.
    Elsewhere(ApprovalState),
    /// No answer: the human dismissed the form, or the client could not show it.
    Nothing,
}

/// Shows `message` with an approve box to the human behind `peer`, until they answer or the
/// approval `id` is decided in `store`.
pub async fn ask(peer: &Peer<RoleServer>, message: String, store: &dyn Store, id: &str) -> Heard {
    let Ok(requested_schema) = ElicitationSchema::from_type::<ApprovalForm>() else {
        return Heard::Nothing;
    };
    let request = ServerRequest::ElicitRequest(ElicitRequest::new(
        ElicitRequestParams::FormElicitationParams {
            meta: None,
            message,
            requested_schema,
        },
    ));
    let mut pending = match peer
        .send_cancellable_request(request, PeerRequestOptions::no_options())
        .await
    {
        Ok(pending) => pending,
        Err(_) => return Heard::Nothing,
    };
    tokio::select! {
        answer = &mut pending.rx => match answer {
            Ok(Ok(ClientResult::ElicitResult(result))) => match result.action {
                ElicitationAction::Accept => result
                    .content
                    .and_then(|c| serde_json::from_value::<ApprovalForm>(c).ok())
                    .map_or(Heard::Nothing, |form| Heard::Form { approve: form.approve }),
                ElicitationAction::Decline => Heard::Form { approve: false },
                // Cancelled, or an action of a later protocol: no decision.
                _ => Heard::Nothing,
            },
            _ => Heard::Nothing,
        },
        state = decided_elsewhere(store, id) => {
            let _ = pending
                .cancel(Some(format!("the approval {id} was decided elsewhere: {}", state.as_str())))
                .await;
            Heard::Elsewhere(state)
        }
    }
}

/// Waits until the approval `id` is no longer pending in `store` (a read that fails is
/// tried again at the next tick: the form stays open meanwhile).
async fn decided_elsewhere(store: &dyn Store, id: &str) -> ApprovalState {
    loop {
        tokio::time::sleep(POLL).await;
        match store.approval(id, aelc_gateway::now_ms()).await {
            Ok(Some(a)) if a.state != ApprovalState::Pending => return a.state,
            // Gone (it cannot be: it was made before asking): nothing to wait for.
            Ok(None) => return ApprovalState::Expired,
            Ok(Some(_)) | Err(_) => {}
        }
    }
}
