//! The output schemas a run needs and the IR does not hold: for each node, its output schema
//! (draft 2020-12, what `{{ output_schema }}` inserts for a replay binding) and its
//! model-facing variants by provider (spec §9.3), which live providers send for structured
//! output and the prompt inserts for a binding of that provider.
//!
//! The compiler computes them from the IR for `aelc run` and `aelc test` and embeds them in
//! generated Rust glue (as JSON); a deployed host reads the files `aelc build` wrote
//! ([`Schemas::load`]).

use std::collections::BTreeMap;
use std::path::Path;

use crate::ordered::Json;

use super::shared_defs::{self, ordered as walks};
use crate::program::{Program, Provider};
use crate::provider::OutputSchema;

/// One node's schemas. Serde: generated Rust glue embeds them as JSON.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct NodeSchemas {
    /// The output schema (`schemas/<node>.output.json`), in its key order (a prompt prints it).
    pub document: Json,
    /// The model-facing variants by provider name (`openai`, `anthropic`).
    pub variants: BTreeMap<String, OutputSchema>,
    /// The answer's GBNF grammar (`grammar/<node>.gbnf`), for a node that may call a binding
    /// with `constrain = "grammar"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grammar: Option<String>,
}

impl NodeSchemas {
    /// The text `{{ output_schema }}` inserts for a binding of `provider`: that provider's
    /// model-facing schema, or the output schema (replay bindings, or no variant), pretty.
    pub fn prompt_text(&self, provider: Option<Provider>) -> String {
        let chosen = provider
            .and_then(|p| self.variants.get(p.as_str()))
            .map(|s| &s.schema)
            .unwrap_or(&self.document);
        serde_json::to_string_pretty(chosen).unwrap_or_default()
    }
}

/// The schemas of every node, by node index.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Schemas(pub Vec<NodeSchemas>);

impl Schemas {
    pub fn get(&self, node: usize) -> Option<&NodeSchemas> {
        self.0.get(node)
    }

    /// Reads what `aelc build` wrote under `out` (its `target/ael/`): `schemas/<file>.output.json`
    /// (made self-contained from `schemas/defs.json`, [`shared_defs::inline_shared`])
    /// and `model/<file>.<provider>.json`, where `<file>` is each node's file name as the build
    /// names it (`file_names`, by node index). A missing variant file means no structured
    /// output for that provider; a missing or malformed output schema is an error naming the
    /// file.
    pub fn load(out: &Path, program: &Program, file_names: &[String]) -> Result<Schemas, String> {
        let read = |path: &Path| -> Result<Option<Json>, String> {
            match std::fs::read(path) {
                Ok(bytes) => serde_json::from_slice(&bytes)
                    .map(Some)
                    .map_err(|e| format!("{}: {e}", path.display())),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                Err(e) => Err(format!("cannot read {}: {e}", path.display())),
            }
        };
        let mut all = Vec::with_capacity(program.nodes.len());
        // `schemas/defs.json`, read when the first document refers to it.
        let mut defs: Option<Json> = None;
        for (i, node) in program.nodes.iter().enumerate() {
            let file = file_names.get(i).map_or(node.name.as_str(), String::as_str);
            let path = out.join("schemas").join(format!("{file}.output.json"));
            let mut document =
                read(&path)?.ok_or_else(|| format!("{} is missing", path.display()))?;
            if walks::refers_to_shared(&document) {
                let defs = match &mut defs {
                    Some(d) => d,
                    None => {
                        let at = out.join("schemas").join(shared_defs::DEFS_FILE);
                        let d = read(&at)?.ok_or_else(|| {
                            format!(
                                "{} is missing (and {} refers to it)",
                                at.display(),
                                path.display()
                            )
                        })?;
                        defs.insert(d)
                    }
                };
                walks::inline_shared(&mut document, defs)
                    .map_err(|e| format!("{}: {e}", path.display()))?;
            }
            let mut variants = BTreeMap::new();
            // The document as a `serde_json::Value`, for reading (made at the first variant).
            let mut plain: Option<serde_json::Value> = None;
            for provider in Provider::ALL.into_iter().filter(|p| p.http().is_some()) {
                let path = out
                    .join("model")
                    .join(format!("{file}.{}.json", provider.as_str()));
                if let Some(json) = read(&path)? {
                    let plain = plain.get_or_insert_with(|| document.to_value());
                    variants.insert(
                        provider.as_str().to_owned(),
                        output_schema(&node.name, provider, json, plain),
                    );
                }
            }
            let gbnf = out.join("grammar").join(format!("{file}.gbnf"));
            let grammar = match std::fs::read_to_string(&gbnf) {
                Ok(text) => Some(text),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                Err(e) => return Err(format!("cannot read {}: {e}", gbnf.display())),
            };
            all.push(NodeSchemas {
                document,
                variants,
                grammar: grammar.filter(|_| constrains_with_grammar(program, node)),
            });
        }
        Ok(Schemas(all))
    }
}

/// Whether `node` may call a binding with `constrain = "grammar"` (its own, or a fallback's):
/// only then is its grammar sent, and counted in each call's worst case.
pub fn constrains_with_grammar(program: &Program, node: &crate::program::NodeIr) -> bool {
    let fallbacks = node.output_stage.on_failure.iter().filter_map(|p| match p {
        crate::pipeline::Policy::Fallback { binding } => Some(binding.as_str()),
        _ => None,
    });
    node.config
        .model
        .as_deref()
        .into_iter()
        .chain(fallbacks)
        .filter_map(|b| program.binding(b))
        .any(|b| b.constrain.as_deref() == Some("grammar"))
}

/// A model-facing variant file as the provider takes it: OpenAI's file is its
/// `response_format.json_schema` object (`name`, `schema`, `strict`), Anthropic's and Gemini's
/// the schema itself. OpenAI and Anthropic want an object at the root (a wrapped answer is
/// unwrapped); Gemini takes any root. An output holding a `Map` carries its `document`, from
/// which the provider restores maps the variant writes as key/value lists.
///
/// `json` keeps its key order (the provider receives it); `document` is only read here.
pub fn output_schema(
    node: &str,
    provider: Provider,
    json: impl Into<Json>,
    document: &serde_json::Value,
) -> OutputSchema {
    let json: Json = json.into();
    let (schema, strict) = match provider {
        Provider::OpenAi => {
            let strict = json.get("strict").and_then(Json::as_bool).unwrap_or(false);
            (json.get("schema").cloned().unwrap_or(Json::Null), strict)
        }
        _ => (json, true),
    };
    let wrapped = provider != Provider::Gemini && crate::provider::answer::wraps_root(document);
    OutputSchema {
        name: node.to_owned(),
        schema,
        strict,
        wrapped,
        maps: crate::provider::entries::has_maps(document).then(|| document.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::Schemas;
    use crate::program::Provider;

    /// `{{ output_schema }}` prints the properties in the order the compiler wrote them, from
    /// the schemas generated glue embeds as JSON, whatever `serde_json`'s features (issue 23:
    /// this crate's tests build it without `preserve_order`).
    #[test]
    fn the_prompt_prints_the_schema_in_its_order() {
        let embedded = r#"[{"document":{"type":"object","properties":{"zeta":{"type":"string"},"alpha":{"type":"integer"}},"required":["zeta","alpha"]},"variants":{}}]"#;
        let schemas: Schemas = crate::glue::read_schemas(embedded);
        let text = schemas
            .get(0)
            .map(|s| s.prompt_text(Some(Provider::OpenAi)))
            .unwrap_or_default();
        let zeta = text.find("\"zeta\"");
        let alpha = text.find("\"alpha\"");
        assert!(zeta.is_some() && zeta < alpha, "{text}");
        assert!(text.starts_with("{\n  \"type\": \"object\""), "{text}");
        let again = serde_json::to_string(&schemas).unwrap_or_default();
        assert_eq!(again, embedded);
    }
}
