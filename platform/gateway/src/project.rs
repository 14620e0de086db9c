//! The served project, loaded from a build's output (`target/ael/`), never from source: the
//! program (`ir.json`), the nodes' schemas (made self-contained from `schemas/defs.json`), each
//! agent's manifest (`agents/<agent>/holon.yaml`), and the bindings' providers, connected once.

use std::path::{Path, PathBuf};

use aelc_runtime::exec::{shared_defs, Executor, Externs, Schemas};
use aelc_runtime::money::Amount;
use aelc_runtime::program::{NodeId, NodeKind, Program};
use aelc_runtime::provider::error::ProviderError;
use aelc_runtime::provider::router::Connected;
use aelc_runtime::provider::Reporter;
use serde_json::Value as Json;
use std::sync::Arc;

/// One published agent.
#[derive(Debug)]
pub struct Agent {
    /// `owner/name`, the route and the manifest's `name`.
    pub name: String,
    /// The account paid for its successful runs (`acme` of `acme/review`).
    pub owner: String,
    pub version: String,
    pub node: NodeId,
    pub capability: Option<String>,
    pub description: Option<String>,
    /// What a successful run costs the caller (zero when the agent publishes no price).
    pub price: Amount,
    /// The price's currency (`None` when free).
    pub currency: Option<String>,
    /// `holon.yaml` as JSON.
    pub manifest: Json,
    pub input_schema: Json,
    pub output_schema: Json,
    /// What the agent needs and this gateway lacks (Rust externs): empty when it can run.
    pub missing: Vec<String>,
    /// Whether its input can hold media references, whose checks read the file store: the
    /// gate of an agent whose input cannot runs on the request's own task (it is CPU work
    /// only), the others on the blocking pool.
    pub takes_media: bool,
}

/// A built project ready to serve.
pub struct Project {
    pub program: &'static Program,
    pub executor: Executor<'static>,
    pub connected: Connected,
    pub agents: Vec<Agent>,
    pub out: PathBuf,
}

impl Project {
    /// Loads `out` (a build's `target/ael/`) and connects the bindings. Errors name the file
    /// or the binding.
    pub fn load(out: &Path) -> Result<Project, String> {
        let ir_path = out.join("ir.json");
        let text = std::fs::read_to_string(&ir_path).map_err(|e| {
            format!(
                "cannot read {}: {e} (build the project first: `aelc build`)",
                ir_path.display()
            )
        })?;
        let program = Program::from_json(&text)
            .map_err(|e| format!("{}: not a program of this aelc: {e}", ir_path.display()))?;
        // The program lives as long as the server; the executor borrows it.
        let program: &'static Program = Box::leak(Box::new(program));
        let files = program.node_file_names();
        let schemas = Schemas::load(out, program, &files)?;
        let executor = Executor::new(program, schemas);
        // Callers and receipts get aelc's own sentence for a failed model call; the provider's
        // text (which can name the operator's organisation, project or key) only the log.
        let connected = Connected::connect(&program.bindings)
            .map_err(|e| e.to_string())?
            .report_failures_to(Reporter(Arc::new(log_provider_failure)));
        let externs = Externs::new();
        let mut agents = Vec::new();
        // `schemas/defs.json`, read when the first schema refers to it.
        let mut defs: Option<Json> = None;
        for (i, node) in program.nodes.iter().enumerate() {
            if node.kind != NodeKind::Agent {
                continue;
            }
            let id = NodeId(i as u32);
            let file = &files[i];
            let name = program.agent_name(node);
            let owner = name.split_once('/').map_or("", |(o, _)| o).to_owned();
            let manifest_path = out.join("agents").join(file).join("holon.yaml");
            let manifest_text = std::fs::read_to_string(&manifest_path)
                .map_err(|e| format!("cannot read {}: {e}", manifest_path.display()))?;
            let manifest: Json = serde_saphyr::from_str(&manifest_text)
                .map_err(|e| format!("{}: {e}", manifest_path.display()))?;
            let publish = node.publish.as_ref();
            let (price, currency) = match publish.and_then(|p| p.price.as_ref()) {
                Some(money) => (
                    Amount::parse(&money.amount).ok_or_else(|| {
                        format!("agent {name}: price `{}` is not a decimal", money.amount)
                    })?,
                    Some(money.currency.clone()),
                ),
                None => (Amount::ZERO, None),
            };
            agents.push(Agent {
                owner,
                version: program.package.version.clone(),
                node: id,
                capability: publish.and_then(|p| p.capability.clone()),
                description: node
                    .docs
                    .clone()
                    .or_else(|| program.package.description.clone()),
                price,
                currency,
                input_schema: read_schema(out, &format!("{file}.input.json"), &mut defs)?,
                output_schema: read_schema(out, &format!("{file}.output.json"), &mut defs)?,
                manifest,
                missing: executor.missing(id, &externs),
                takes_media: program.node_takes_media(node),
                name,
            });
        }
        Ok(Project {
            program,
            executor,
            connected,
            agents,
            out: out.to_owned(),
        })
    }

    /// The index of the agent named `name` in [`Project::agents`] (what a run's `Call` takes).
    pub fn agent_index(&self, name: &str) -> Option<usize> {
        self.agents.iter().position(|a| a.name == name)
    }

    pub fn agent(&self, name: &str) -> Option<&Agent> {
        self.agents.iter().find(|a| a.name == name)
    }

    /// `[limits] max_input_bytes`: the gate's size.
    pub fn max_input_bytes(&self) -> usize {
        usize::try_from(self.program.limits.max_input_bytes).unwrap_or(usize::MAX)
    }
}

/// `schemas/<file>` as one self-contained document: the shared definitions it refers to
/// (`schemas/defs.json`, read once into `defs`) are written into its `$defs`, so that the API's
/// listings and the OpenAPI document show every type without another file.
fn read_schema(out: &Path, file: &str, defs: &mut Option<Json>) -> Result<Json, String> {
    let path = out.join("schemas").join(file);
    let mut document = read_json(&path)?;
    if shared_defs::refers_to_shared(&document) {
        let defs = match defs {
            Some(d) => d,
            None => defs.insert(read_json(
                &out.join("schemas").join(shared_defs::DEFS_FILE),
            )?),
        };
        shared_defs::inline_shared(&mut document, defs)
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(document)
}

fn read_json(path: &Path) -> Result<Json, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    serde_json::from_slice(&bytes).map_err(|e| format!("{}: {e}", path.display()))
}

/// A failed model call, for the operator: the binding, aelc's summary, and the provider's own
/// text with whatever looks like an account detail masked ([`redact_provider_text`]).
fn log_provider_failure(binding: &str, error: &ProviderError) {
    tracing::warn!(
        binding,
        summary = %error.summary(),
        detail = %redact_provider_text(&error.to_string()),
        "a model call failed"
    );
}

/// `text` with every word that looks like a credential or an account id replaced by `[…]`:
/// keys (`sk-…`, `key-…`, a run of `*` from a partly masked key), organisation and project ids
/// (`org-…`, `org_…`, `proj_…`, `proj-…`), sessions (`sess-…`) and bearer tokens. The provider
/// key itself never reaches the text (the runtime removes it); these are what providers add.
pub fn redact_provider_text(text: &str) -> String {
    const PREFIXES: &[&str] = &[
        "sk-", "sk_", "key-", "org-", "org_", "proj_", "proj-", "sess-", "ael_", "Bearer",
    ];
    let mut out = String::with_capacity(text.len());
    for (i, word) in text.split(' ').enumerate() {
        if i > 0 {
            out.push(' ');
        }
        let bare = word.trim_matches(|c: char| !c.is_ascii_alphanumeric() && c != '*');
        let secret = PREFIXES.iter().any(|p| bare.starts_with(p)) || bare.contains("**");
        if secret {
            out.push_str("[…]");
        } else {
            out.push_str(word);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn provider_text_loses_what_names_an_account() {
        let text = "Incorrect API key provided: sk-proj-abc*********wxyz. You can find your API \
                    key at https://platform.openai.com (organization org-Xy12, project proj_9a).";
        let redacted = super::redact_provider_text(text);
        for secret in ["sk-proj", "wxyz", "org-Xy12", "proj_9a"] {
            assert!(!redacted.contains(secret), "{redacted}");
        }
        assert!(redacted.starts_with("Incorrect API key provided: […]"));
    }
}
