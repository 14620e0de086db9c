//! The compiler's side of running nodes (`aelc run`, `aelc test`): what the one executor
//! (`aelc_runtime::exec`) needs and only the compiler has at hand, and nothing of the run
//! itself.
//!
//! - [`schemas`]: every node's output schema and model-facing variants, computed from the IR
//!   by codegen exactly as `aelc build` writes them (a deployed host reads those files instead,
//!   `aelc_runtime::exec::Schemas::load`).
//! - [`ModelRouter`] (the runtime's): the model of a run, serving each call from the binding it
//!   names: the HTTP providers of `ael.toml`, or recorded answers.
//! - [`node_id`]: a node of the program by its IR.

use aelc_runtime::exec::Schemas;
pub use aelc_runtime::provider::router::{BindingError, ModelRouter};

use crate::ir::{NodeId, NodeIr, Program};

/// The id of `node`, a node of `program`.
pub fn node_id(program: &Program, node: &NodeIr) -> NodeId {
    program.node_id(node).unwrap_or(NodeId(0))
}

/// The output schemas of every node, as `aelc build` emits them (and the Rust glue embeds).
pub fn schemas(program: &Program) -> Schemas {
    crate::codegen::model_schema::exec_schemas(program)
}
