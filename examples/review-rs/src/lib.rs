//! The review agent's Rust side: `write_review`, the `extern fn` of `examples/review`,
//! implemented against the glue `aelc::build::compile` generates (spec §9.4).
//!
//! The review node runs through its glue, `glue::review::run`, which is the one executor of
//! `aelc run` over the embedded program: the runtime renders `prompts/review.md` for the
//! request, calls the model through the context (a replay binding in the tests), and the
//! answer becomes a typed [`glue::Review`] only through the seven steps, with the node's
//! `within_limit` check, its `by_severity` transform and its failure policy. `write_review`
//! (which the project declares, so the generated trait asks for it) is that run, typed.

// Generated code is held to the strictest bar: any warning in it fails the build.
#![deny(warnings, clippy::all)]

/// The generated glue of `examples/review`.
pub mod glue {
    include!(concat!(env!("OUT_DIR"), "/review.rs"));
}

use aelc_runtime::eval::EvalErrorKind;
use aelc_runtime::glue as rt;

/// Implements the project's externs.
#[derive(Default)]
pub struct Reviewer {
    /// The receipt of every review this reviewer wrote, for logs and tests.
    pub receipts: Vec<rt::Receipt>,
}

impl glue::externs::NodesReview for Reviewer {
    fn write_review(
        &mut self,
        ctx: &mut rt::Context<'_>,
        request: glue::ReviewRequest,
    ) -> Result<glue::Review, rt::Error> {
        let run = glue::review::run(self, ctx, &request)
            .map_err(|e| rt::Error::new(EvalErrorKind::Extern, e.to_string()))?;
        self.receipts.push(run.receipt().clone());
        match run.output {
            Some(review) => Ok(review),
            None => Err(rt::Error::new(
                EvalErrorKind::Extern,
                format!(
                    "the review was not accepted: {}{}",
                    run.outcome().code.clone().unwrap_or_default(),
                    run.run
                        .refusal
                        .map(|why| format!(" ({why})"))
                        .unwrap_or_default()
                ),
            )),
        }
    }
}
