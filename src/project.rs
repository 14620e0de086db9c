//! `ael.toml`, the project file (spec §1): its typed form and the conversion into the IR.
//!
//! [`parse`] never fails and never panics: it returns the configuration when the file has no
//! error, and every diagnostic found, each at the exact span of the key or value in `ael.toml`
//! (the file is in the [`crate::source::SourceMap`] under the given [`FileId`]).

pub mod error;
mod load;
mod values;

use std::collections::BTreeMap;

use crate::diagnostics::Diagnostic;
use crate::ir;
use crate::span::{FileId, Span};

/// The whole of `ael.toml`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProjectConfig {
    pub package: PackageConfig,
    /// `[bindings.NAME]`, by name.
    pub bindings: BTreeMap<String, BindingConfig>,
    pub limits: LimitsConfig,
}

/// `[package]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PackageConfig {
    /// `owner/name`, each part lowercase letters, digits, `-` and `_`.
    pub name: String,
    /// `MAJOR.MINOR.PATCH`, optionally with `-pre` and `+build`.
    pub version: String,
    pub description: Option<String>,
}

/// `[bindings.NAME]`: a model endpoint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BindingConfig {
    /// Where the binding's name is written in `ael.toml` (for go-to-definition and errors).
    pub span: Span,
    pub provider: Provider,
    pub model: String,
    pub base_url: Option<String>,
    /// The name of the environment variable holding the key.
    pub api_key_env: Option<String>,
    /// The part kinds the endpoint takes; `["text"]` when not written.
    pub accepts: Vec<PartKind>,
    pub price: Option<PriceConfig>,
    /// `constrain`, when written: `grammar`, `schema`, `output_format` or `none`.
    pub constrain: Option<String>,
}

/// The protocol a binding speaks: the runtime's own type, which `ir.json` carries.
pub use aelc_runtime::program::Provider;

/// A kind of part a model endpoint accepts (spec §6, §7): the runtime's own type, so that
/// `ael.toml` and the providers read `accepts` the same way.
pub use aelc_runtime::provider::PartKind;

/// Price per million tokens, as exact decimals written in the file (`0.15`, never a float).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PriceConfig {
    pub input_per_mtok: String,
    pub output_per_mtok: String,
    /// Three capital letters (`EUR`).
    pub currency: String,
}

/// `[limits]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LimitsConfig {
    /// Largest input payload the runtime accepts, in bytes; default 1 MiB.
    pub max_input_bytes: u64,
    /// The most a gateway account's uploaded files may take, in bytes; `None`: the gateway's
    /// default (1 GiB).
    pub max_stored_bytes_per_account: Option<u64>,
}

impl Default for LimitsConfig {
    fn default() -> LimitsConfig {
        LimitsConfig {
            max_input_bytes: ir::Limits::default().max_input_bytes,
            max_stored_bytes_per_account: None,
        }
    }
}

/// The result of reading `ael.toml`: the configuration only if no error was found, and what
/// could be read in any case.
#[derive(Clone, Debug)]
pub struct Loaded {
    pub config: Option<ProjectConfig>,
    /// What the file says as far as it can be read, errors or not: the package as written
    /// (empty when missing), every binding by name with what each key says (an unreadable
    /// provider is `replay`, which calls nothing; an unreadable model empty; `accepts` the
    /// part kinds that are known), the limits that are usable. Sema checks the modules
    /// against it when the file has errors, so that a typo in `ael.toml` does not turn every
    /// `binding("…")` of the project into a second error. Equal to `config` when that is some.
    pub known: ProjectConfig,
    pub diagnostics: Vec<Diagnostic>,
}

/// Reads `ael.toml` (`text`, registered as `file`). Never panics.
pub fn parse(file: FileId, text: &str) -> Loaded {
    let (known, diagnostics) = load::load(file, text);
    let has_error = diagnostics.iter().any(Diagnostic::is_error);
    Loaded {
        config: (!has_error).then(|| known.clone()),
        known,
        diagnostics,
    }
}

impl ProjectConfig {
    pub fn to_ir_package(&self) -> ir::Package {
        ir::Package {
            name: self.package.name.clone(),
            version: self.package.version.clone(),
            description: self.package.description.clone(),
        }
    }

    /// The bindings in name order.
    pub fn to_ir_bindings(&self) -> Vec<ir::Binding> {
        self.bindings
            .iter()
            .map(|(name, b)| ir::Binding {
                name: name.clone(),
                provider: b.provider,
                model: b.model.clone(),
                base_url: b.base_url.clone(),
                api_key_env: b.api_key_env.clone(),
                accepts: b.accepts.clone(),
                price: b.price.as_ref().map(|p| ir::Price {
                    input_per_mtok: p.input_per_mtok.clone(),
                    output_per_mtok: p.output_per_mtok.clone(),
                    currency: p.currency.clone(),
                }),
                constrain: b.constrain.clone(),
            })
            .collect()
    }

    pub fn to_ir_limits(&self) -> ir::Limits {
        ir::Limits {
            max_input_bytes: self.limits.max_input_bytes,
            max_stored_bytes_per_account: self.limits.max_stored_bytes_per_account,
        }
    }
}

#[cfg(test)]
mod tests;
