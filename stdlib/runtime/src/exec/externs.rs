//! The Rust side of a program's `extern fn`s and `extern check`s: the [`ExternHost`] trait the
//! executor asks, by the program's ids, and [`Externs`], a host of closures registered by AEL
//! name (tests, tools, hosts that add Rust by hand). The generated glue implements
//! [`ExternHost`] over the author's trait methods.
//!
//! In [`Externs`] an extern is registered by its AEL name: `name`, or `module::name` where two
//! modules declare the same name (a qualified registration wins over a plain one). The executor
//! asks for every extern a run could reach before anything runs ([`super::Executor::missing`]),
//! so an unregistered one is an error naming it, with nothing called and nothing billed.

use std::collections::BTreeMap;

use crate::eval::EvalError;
use crate::expr::FnId;
use crate::model::Model;
use crate::pipeline::Clock;
use crate::program::Program;
use crate::value::Value;

/// What an extern gets besides its arguments: the run's model (an `extern fn` in a body may
/// call it; checks, transforms and parsers get one that refuses, as they run inside a model
/// call) and the run's clock.
pub struct CallContext<'c> {
    pub model: &'c mut dyn Model,
    pub clock: &'c mut dyn Clock,
}

/// A check's verdict: `None` when it passes, else its code and an optional message.
pub type CheckVerdict = Option<(String, Option<String>)>;

/// Answers a program's externs, by the program's fn and check ids.
pub trait ExternHost {
    /// Whether `func` (an `extern fn` of `program`) has an implementation here.
    fn has_fn(&self, program: &Program, func: FnId) -> bool;
    fn call_fn(
        &mut self,
        cx: CallContext<'_>,
        program: &Program,
        func: FnId,
        args: &[Value],
    ) -> Result<Value, EvalError>;
    /// Whether the `extern check` with id `check` has an implementation here.
    fn has_check(&self, program: &Program, check: u32) -> bool;
    fn call_check(
        &mut self,
        cx: CallContext<'_>,
        program: &Program,
        check: u32,
        args: &[&Value],
    ) -> Result<CheckVerdict, EvalError>;
}

impl ExternHost for Externs {
    fn has_fn(&self, program: &Program, func: FnId) -> bool {
        program
            .fns
            .get(func.0 as usize)
            .is_some_and(|f| self.has_fn_named(&f.module, &f.name))
    }

    fn call_fn(
        &mut self,
        _cx: CallContext<'_>,
        program: &Program,
        func: FnId,
        args: &[Value],
    ) -> Result<Value, EvalError> {
        let Some(decl) = program.fns.get(func.0 as usize) else {
            return Err(super::unknown(format!("extern fn #{}", func.0)));
        };
        match self.fn_mut(&decl.module, &decl.name) {
            Some(f) => f(args),
            None => Err(super::unknown(format!("extern fn `{}`", decl.name))),
        }
    }

    fn has_check(&self, program: &Program, check: u32) -> bool {
        program
            .checks
            .get(check as usize)
            .is_some_and(|c| self.has_check_named(&c.module, &c.name))
    }

    fn call_check(
        &mut self,
        _cx: CallContext<'_>,
        program: &Program,
        check: u32,
        args: &[&Value],
    ) -> Result<CheckVerdict, EvalError> {
        let Some(decl) = program.checks.get(check as usize) else {
            return Err(super::unknown(format!("extern check #{check}")));
        };
        match self.check_mut(&decl.module, &decl.name) {
            Some(f) => f(args),
            None => Err(super::unknown(format!("extern check `{}`", decl.name))),
        }
    }
}

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
    pub fn has_fn_named(&self, module: &str, name: &str) -> bool {
        self.fns.contains_key(&qualified(module, name)) || self.fns.contains_key(name)
    }

    /// Whether an `extern check` of `module` named `name` is registered.
    pub fn has_check_named(&self, module: &str, name: &str) -> bool {
        self.checks.contains_key(&qualified(module, name)) || self.checks.contains_key(name)
    }

    fn fn_mut(&mut self, module: &str, name: &str) -> Option<&mut ExternFn> {
        let key = qualified(module, name);
        if self.fns.contains_key(&key) {
            return self.fns.get_mut(&key);
        }
        self.fns.get_mut(name)
    }

    fn check_mut(&mut self, module: &str, name: &str) -> Option<&mut ExternCheck> {
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
