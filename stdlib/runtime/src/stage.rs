//! Steps 4 and 5 for compiled AEL: an [`OutputStage`] that runs `check`s and a transform `fn`
//! from the expression IR with the [`Evaluator`], next to Rust-written `extern check`s.
//!
//! Each check or transform names where its arguments come from ([`Arg`]): the output being
//! accepted, or one of the node's (already decoded) inputs. Arguments are borrowed, never
//! copied, so checks cost what their expressions cost.

use crate::eval::{CheckOutcome, EvalError, Evaluator, FnTable, Host};
use crate::expr::{Check, FnDef};
use crate::pipeline::{CheckFailure, OutputStage};
use crate::value::Value;

/// Where a check or transform parameter gets its value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arg {
    /// The output under test.
    Output,
    /// The node's input parameter at this index.
    Input(usize),
}

/// A Rust-written check: gets its arguments, answers `None` (passed) or `(code, message)`.
pub type ExternCheckFn<'p> =
    Box<dyn FnMut(&[&Value]) -> Result<Option<(String, Option<String>)>, EvalError> + 'p>;

/// One declared output check.
pub enum StageCheck<'p> {
    Ir {
        check: &'p Check,
        args: Vec<Arg>,
    },
    Extern {
        name: String,
        args: Vec<Arg>,
        run: ExternCheckFn<'p>,
    },
}

/// The output checks and transform of one node, over IR.
pub struct IrStage<'p> {
    pub fns: &'p dyn FnTable,
    pub host: &'p mut dyn Host,
    pub inputs: &'p [Value],
    pub checks: Vec<StageCheck<'p>>,
    pub transform: Option<(&'p FnDef, Vec<Arg>)>,
}

fn resolve<'v>(
    args: &[Arg],
    output: &'v Value,
    inputs: &'v [Value],
) -> Result<Vec<&'v Value>, EvalError> {
    args.iter()
        .map(|a| match a {
            Arg::Output => Ok(output),
            Arg::Input(i) => inputs.get(*i).ok_or_else(|| {
                EvalError::new(
                    crate::eval::EvalErrorKind::UnboundLocal,
                    format!("the node has no input #{i}"),
                )
            }),
        })
        .collect()
}

impl OutputStage for IrStage<'_> {
    fn check(&mut self, output: &Value) -> Result<Option<CheckFailure>, EvalError> {
        let inputs = self.inputs;
        for check in &mut self.checks {
            match check {
                StageCheck::Ir { check, args } => {
                    let values = resolve(args, output, inputs)?;
                    let mut eval = Evaluator::new(self.fns, &mut *self.host);
                    if let CheckOutcome::Failed { code, message } =
                        eval.run_check(check, &values)?
                    {
                        return Ok(Some(CheckFailure {
                            check: check.name.clone(),
                            code,
                            message,
                        }));
                    }
                }
                StageCheck::Extern { name, args, run } => {
                    let values = resolve(args, output, inputs)?;
                    if let Some((code, message)) = run(&values)? {
                        return Ok(Some(CheckFailure {
                            check: name.clone(),
                            code,
                            message,
                        }));
                    }
                }
            }
        }
        Ok(None)
    }

    fn has_transform(&self) -> bool {
        self.transform.is_some()
    }

    fn transform(&mut self, output: Value) -> Result<Value, EvalError> {
        let Some((f, args)) = &self.transform else {
            return Ok(output);
        };
        let values = resolve(args, &output, self.inputs)?;
        let mut eval = Evaluator::new(self.fns, &mut *self.host);
        eval.run_fn(f, &values)
    }
}
