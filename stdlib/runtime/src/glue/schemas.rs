//! The glue's embedded output schemas (`SCHEMAS_JSON`), and the executor's [`Schemas`] made
//! from them.
//!
//! What is embedded is each node's output schema in the form `schemas/` holds it (its named
//! types referred to as `defs.json#/$defs/<name>`, every shared definition once in `defs`) and
//! its grammar when a binding is constrained by one; not the three model-facing variants. On
//! reading, each document is made self-contained again
//! ([`crate::exec::shared_defs::ordered::inline_shared`], as [`Schemas::load`] does with the
//! files) and its variants are derived by [`crate::model_schema::variants`], the very rewrite
//! the compiler writes `model/` with. Why (issue 42): a variant is self-contained for its
//! provider, so embedding three per node held each definition in three more rewritten forms
//! per node that reaches it; the 800-node project's glue was 4.07 MB, over half of it
//! schemas. The compiler checks, before it embeds a document in the shared form, that making it
//! self-contained here gives it back byte for byte; a document that would not is embedded
//! whole.

use crate::exec::shared_defs::ordered::{inline_shared, refers_to_shared};
use crate::exec::{NodeSchemas, Schemas};
use crate::ordered::Json;
use crate::program::Program;

/// `SCHEMAS_JSON` (before its repeated subtrees are shared out): what the glue embeds of the
/// nodes' output schemas. Serde is the embedded form; the compiler writes it with the same type.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct EmbeddedSchemas {
    /// `schemas/defs.json`'s document (`{"$defs": {…}}`): every definition a node's document
    /// refers to, once.
    pub defs: Json,
    /// By node index.
    pub nodes: Vec<EmbeddedNode>,
}

/// One node's part of [`EmbeddedSchemas`].
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct EmbeddedNode {
    /// The output schema as `schemas/<node>.output.json` holds it (or self-contained).
    pub document: Json,
    /// The answer's GBNF grammar, for a node that may call a binding with
    /// `constrain = "grammar"` ([`NodeSchemas::grammar`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grammar: Option<String>,
}

impl EmbeddedSchemas {
    /// Node `node`'s output document, self-contained: what `schemas/` gives once
    /// `defs.json` is put back, and `{{ output_schema }}` prints for a replay binding. `None`
    /// for a node it does not hold or a reference `defs` lacks (a hand-edited text).
    pub fn document(&self, node: usize) -> Option<Json> {
        let mut document = self.nodes.get(node)?.document.clone();
        if refers_to_shared(&document) {
            inline_shared(&mut document, &self.defs).ok()?;
        }
        Some(document)
    }

    /// Node `node`'s schemas as the executor takes them: its document made self-contained and
    /// its model-facing variants derived from it, named by the program's node name. `None` for
    /// a node it does not hold; a document that does not come back (a hand-edited text) gives
    /// no variants and a `null` document: no structured output, and `{{ output_schema }}`
    /// inserts `null`.
    pub fn node_schemas(&self, program: &Program, node: usize) -> Option<NodeSchemas> {
        let embedded = self.nodes.get(node)?;
        let Some(document) = self.document(node) else {
            return Some(NodeSchemas::default());
        };
        let name = program.nodes.get(node).map_or("", |n| n.name.as_str());
        Some(NodeSchemas {
            variants: crate::model_schema::variants(name, &document),
            document,
            grammar: embedded.grammar.clone(),
        })
    }

    /// Every node's [`EmbeddedSchemas::node_schemas`], all made now.
    pub fn schemas(&self, program: &Program) -> Schemas {
        Schemas(
            (0..self.nodes.len())
                .filter_map(|i| self.node_schemas(program, i))
                .collect(),
        )
    }
}
