//! [`ModelRouter`]: the model of a run, serving each call from the binding it names: the HTTP
//! providers of a program's bindings, or recorded answers (a replay file, an example's
//! `answers`, bindings with `provider = "replay"`).
//!
//! [`Connected`] holds the bindings' providers once connected, with the back-off their 429s
//! asked for ([`super::backoff`]), so a server makes one per program and a cheap router per
//! run ([`ModelRouter::shared`]); `aelc run` makes both at
//! once ([`ModelRouter::new`]).

use std::sync::Arc;

use super::backoff::RateLimits;
use super::{connect, Constrain, NodeCall, ProviderConfig, ProviderModel, Providers, Reporter};
use crate::model::{Model, ModelAnswer, ModelError, ModelRequest, ReplayModel};
use crate::program::{Binding, Provider as ProviderWord};

/// Why a binding cannot be served (a usage error): nothing was called.
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

impl std::error::Error for BindingError {}

/// The providers of a program's live bindings, connected once and shared by every run.
#[derive(Clone, Debug, Default)]
pub struct Connected {
    live: Arc<Providers>,
    /// Bindings served by recorded answers.
    replayed: Arc<[String]>,
    /// What the providers' 429s asked for, honoured by every run.
    limits: RateLimits,
    /// Where failures' detail goes (the gateway's log); `None`: into the run, as written.
    reporter: Option<Reporter>,
}

impl Connected {
    /// Every run over these providers gets a failed call's [`ProviderError::summary`] and
    /// `reporter` its detail (see [`Reporter`]).
    ///
    /// [`ProviderError::summary`]: super::error::ProviderError::summary
    pub fn report_failures_to(mut self, reporter: Reporter) -> Connected {
        self.reporter = Some(reporter);
        self
    }

    /// Connects every binding that is not `provider = "replay"` (reads its key from the
    /// environment variable the binding names).
    pub fn connect(bindings: &[Binding]) -> Result<Connected, BindingError> {
        let mut live = Providers::new();
        let mut replayed = Vec::new();
        for b in bindings {
            if b.provider == ProviderWord::Replay {
                replayed.push(b.name.clone());
                continue;
            }
            let fail = |why: String| BindingError {
                binding: b.name.clone(),
                why,
            };
            let mut config = ProviderConfig::for_binding(b).map_err(|e| fail(e.to_string()))?;
            // Structured output is what the node's schema asks for; streaming lets `max_answer`
            // stop a runaway answer as it arrives.
            config.structured_output = true;
            config.stream = true;
            // `constrain` in ael.toml (the loader accepted only the known words).
            if let Some(c) = b.constrain.as_deref().and_then(Constrain::parse) {
                config.constrain = c;
            }
            let provider = connect(config).map_err(|e| fail(e.to_string()))?;
            live.insert(b.name.clone(), Arc::from(provider));
        }
        Ok(Connected {
            live: Arc::new(live),
            replayed: replayed.into(),
            ..Connected::default()
        })
    }
}

/// Serves each call from the binding it names (see the module doc).
pub struct ModelRouter {
    live: ProviderModel,
    replay: Option<ReplayModel>,
    replay_all: bool,
    /// Bindings served by a replay file.
    replayed: Arc<[String]>,
}

impl ModelRouter {
    /// A router over `bindings`; `replay`: answers that then serve every call (`--replay`, an
    /// example's `answers`), so no binding is connected.
    pub fn new(
        bindings: &[Binding],
        replay: Option<ReplayModel>,
    ) -> Result<ModelRouter, BindingError> {
        if replay.is_some() {
            return Ok(ModelRouter::shared(&Connected::default(), replay));
        }
        Ok(ModelRouter::shared(&Connected::connect(bindings)?, None))
    }

    /// A router over providers connected once (a server's), for one run.
    pub fn shared(connected: &Connected, replay: Option<ReplayModel>) -> ModelRouter {
        // Made for every run (and every gate refusal): shares the connection's tables rather
        // than copying them.
        let live = ProviderModel::new(NodeCall::new(crate::exec::DEFAULT_TIMEOUT))
            .with_rate_limits(connected.limits.clone())
            .with_reporter(connected.reporter.clone())
            .with_providers(Arc::clone(&connected.live));
        ModelRouter {
            live,
            replay_all: replay.is_some(),
            replay,
            replayed: Arc::clone(&connected.replayed),
        }
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
