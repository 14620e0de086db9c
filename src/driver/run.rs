//! The compiler's side of running nodes (`aelc run`, `aelc test`): what the one executor
//! (`aelc_runtime::exec`) needs and only the compiler has at hand, and nothing of the run
//! itself.
//!
//! - [`schemas`]: every node's output schema and model-facing variants, computed from the IR
//!   by codegen exactly as `aelc build` writes them (a deployed host reads those files instead,
//!   `aelc_runtime::exec::Schemas::load`).
//! - [`ModelRouter`]: the model of a run, serving each call from the binding it names: the HTTP
//!   providers of `ael.toml`, or recorded answers (a replay file, an example's `answers`).
//! - [`node_id`]: a node of the program by its IR.

use aelc_runtime::exec::Schemas;
use aelc_runtime::model::{Model, ModelAnswer, ModelError, ModelRequest, ReplayModel};
use aelc_runtime::provider::{NodeCall, ProviderModel};

use crate::ir::{Binding, NodeId, NodeIr, Program, Provider};

/// Why a binding cannot be served (a usage error, exit 2): nothing was called.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BindingError {
    pub binding: String,
    pub why: String,
}

impl std::fmt::Display for BindingError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "binding `{}`: {}", self.binding, self.why)
    }
}

/// The id of `node`, a node of `program`.
pub fn node_id(program: &Program, node: &NodeIr) -> NodeId {
    program.node_id(node).unwrap_or(NodeId(0))
}

/// The output schemas of every node, as `aelc build` emits them (and the Rust glue embeds).
pub fn schemas(program: &Program) -> Schemas {
    crate::codegen::model_schema::exec_schemas(program)
}

/// Serves each call from the binding it names: HTTP providers, or a replay for bindings with
/// `provider = "replay"` (and for every binding when answers are given for the whole run).
pub struct ModelRouter {
    live: ProviderModel,
    replay: Option<ReplayModel>,
    replay_all: bool,
    /// Bindings served by a replay file.
    replayed: Vec<String>,
}

impl ModelRouter {
    /// A router over `bindings`; `replay`: answers that then serve every call (`--replay`, an
    /// example's `answers`), so no binding is connected.
    pub fn new(
        bindings: &[Binding],
        replay: Option<ReplayModel>,
    ) -> Result<ModelRouter, BindingError> {
        let mut router = ModelRouter {
            live: ProviderModel::new(NodeCall::new(aelc_runtime::exec::DEFAULT_TIMEOUT)),
            replay_all: replay.is_some(),
            replay,
            replayed: Vec::new(),
        };
        if router.replay_all {
            return Ok(router);
        }
        for b in bindings {
            if b.provider == Provider::Replay {
                router.replayed.push(b.name.clone());
                continue;
            }
            let mut config =
                aelc_runtime::provider::ProviderConfig::for_binding(b).map_err(|e| {
                    BindingError {
                        binding: b.name.clone(),
                        why: e.to_string(),
                    }
                })?;
            // Structured output is what the node's schema asks for; streaming lets `max_answer`
            // stop a runaway answer as it arrives.
            config.structured_output = true;
            config.stream = true;
            // `constrain` in ael.toml (the loader accepted only the known words).
            if let Some(c) = b
                .constrain
                .as_deref()
                .and_then(aelc_runtime::provider::Constrain::parse)
            {
                config.constrain = c;
            }
            let provider = aelc_runtime::provider::connect(config).map_err(|e| BindingError {
                binding: b.name.clone(),
                why: e.to_string(),
            })?;
            router.live = router.live.with_binding(b.name.clone(), provider);
        }
        Ok(router)
    }

    /// The replay's answers and the requests it received, for tests.
    pub fn replay(&self) -> Option<&ReplayModel> {
        self.replay.as_ref()
    }
}

impl Model for ModelRouter {
    fn call(&mut self, request: &ModelRequest) -> Result<ModelAnswer, ModelError> {
        if self.replay_all || self.replayed.contains(&request.binding) {
            return match &mut self.replay {
                Some(replay) => replay.call(request),
                None => Err(ModelError::Unavailable(format!(
                    "binding `{}` replays recorded answers; pass them with --replay FILE",
                    request.binding
                ))),
            };
        }
        self.live.call(request)
    }
}
