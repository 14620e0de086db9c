//! The Rust implementations of a program's `extern fn`s and `extern check`s that a host
//! registers with the executor (the generated glue registers the author's trait methods; tests
//! register closures).
//!
//! An extern is registered by its AEL name: `name`, or `module::name` where two modules
//! declare the same name (a qualified registration wins over a plain one). The executor looks
//! every extern a run could reach up before anything runs ([`super::Executor::missing`]), so an
//! unregistered one is an error naming it, with nothing called and nothing billed.

use std::collections::BTreeMap;

use crate::eval::EvalError;
use crate::value::Value;

/// An `extern fn`: its arguments in, its value out (or why it failed).
pub type ExternFn = Box<dyn FnMut(&[Value]) -> Result<Value, EvalError> + Send>;

/// An `extern check`: its arguments in; `None` when it passes, else the declared code and an
/// optional message.
pub type ExternCheck =
    Box<dyn FnMut(&[&Value]) -> Result<Option<(String, Option<String>)>, EvalError> + Send>;

/// The registered externs (see the module doc).
#[derive(Default)]
pub struct Externs {
    fns: BTreeMap<String, ExternFn>,
    checks: BTreeMap<String, ExternCheck>,
}

impl std::fmt::Debug for Externs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Externs")
            .field("fns", &self.fns.keys().collect::<Vec<_>>())
            .field("checks", &self.checks.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl Externs {
    pub fn new() -> Externs {
        Externs::default()
    }

    /// Registers the `extern fn` called `name` (or `module::name`).
    pub fn register_fn(
        &mut self,
        name: &str,
        f: impl FnMut(&[Value]) -> Result<Value, EvalError> + Send + 'static,
    ) {
        self.fns.insert(name.to_owned(), Box::new(f));
    }

    /// Registers the `extern check` called `name` (or `module::name`).
    pub fn register_check(
        &mut self,
        name: &str,
        f: impl FnMut(&[&Value]) -> Result<Option<(String, Option<String>)>, EvalError> + Send + 'static,
    ) {
        self.checks.insert(name.to_owned(), Box::new(f));
    }

    /// `register_fn`, as a builder.
    pub fn with_fn(
        mut self,
        name: &str,
        f: impl FnMut(&[Value]) -> Result<Value, EvalError> + Send + 'static,
    ) -> Externs {
        self.register_fn(name, f);
        self
    }

    /// Whether an `extern fn` of `module` named `name` is registered.
    pub fn has_fn(&self, module: &str, name: &str) -> bool {
        self.fns.contains_key(&qualified(module, name)) || self.fns.contains_key(name)
    }

    /// Whether an `extern check` of `module` named `name` is registered.
    pub fn has_check(&self, module: &str, name: &str) -> bool {
        self.checks.contains_key(&qualified(module, name)) || self.checks.contains_key(name)
    }

    pub(crate) fn fn_mut(&mut self, module: &str, name: &str) -> Option<&mut ExternFn> {
        let key = qualified(module, name);
        if self.fns.contains_key(&key) {
            return self.fns.get_mut(&key);
        }
        self.fns.get_mut(name)
    }

    pub(crate) fn check_mut(&mut self, module: &str, name: &str) -> Option<&mut ExternCheck> {
        let key = qualified(module, name);
        if self.checks.contains_key(&key) {
            return self.checks.get_mut(&key);
        }
        self.checks.get_mut(name)
    }
}

fn qualified(module: &str, name: &str) -> String {
    format!("{module}::{name}")
}
