//! The review agent's Rust side: `write_review`, the `extern fn` of `examples/review`,
//! implemented against the glue `aelc::build::compile` generates (spec §9.4).
//!
//! `write_review` renders the node's prompt for the request and runs the node through its
//! glue: the model is called through the context (a replay binding in the tests), and the
//! answer becomes a typed [`glue::Review`] only through the seven steps, with the node's
//! `within_limit` check, its `by_severity` transform and its failure policy.

// Generated code is held to the strictest bar: any warning in it fails the build.
#![deny(warnings, clippy::all)]

/// The generated glue of `examples/review`.
pub mod glue {
    include!(concat!(env!("OUT_DIR"), "/review.rs"));
}

use aelc_runtime::eval::EvalErrorKind;
use aelc_runtime::glue::{self as rt, NodeRun};

/// The prompt template of the `review` node, as written.
pub const PROMPT_TEMPLATE: &str = include_str!("../../review/prompts/review.md");

/// Implements the project's externs.
#[derive(Default)]
pub struct Reviewer {
    /// Every prompt this reviewer sent, for tests and logs.
    pub prompts: Vec<String>,
}

impl Reviewer {
    /// The node's prompt for `request`: `prompts/review.md` with its expressions filled in.
    /// (The template is fixed; this is the rendering `aelc` type-checked.)
    pub fn render(request: &glue::ReviewRequest) -> String {
        let mut text = PROMPT_TEMPLATE.replace(
            "{{ request.max_findings }}",
            &request.max_findings.get().to_string(),
        );
        let strict = if request.strict {
            "Be strict: report every problem, however small."
        } else {
            "Report only problems a reader would notice."
        };
        text = replace_block(&text, "{% if request.strict %}", strict);
        let locale = match &request.locale {
            Some(l) => format!(
                "Write the summary in the language of locale {}.",
                l.as_str()
            ),
            None => String::new(),
        };
        text = replace_block(&text, "{% if request.locale.is_some() %}", &locale);
        text.replace("{{ request.document }}", request.document.as_str())
    }
}

/// Replaces `{% if … %}…{% end %}` starting at `open` with `with`.
fn replace_block(text: &str, open: &str, with: &str) -> String {
    let Some(start) = text.find(open) else {
        return text.to_owned();
    };
    let Some(len) = text[start..].find("{% end %}") else {
        return text.to_owned();
    };
    let end = start + len + "{% end %}".len();
    format!("{}{with}{}", &text[..start], &text[end..])
}

impl glue::externs::NodesReview for Reviewer {
    fn write_review(
        &mut self,
        ctx: &mut rt::Context<'_>,
        request: glue::ReviewRequest,
    ) -> Result<glue::Review, rt::Error> {
        let prompt = Reviewer::render(&request);
        self.prompts.push(prompt.clone());
        let run = glue::review::run(self, ctx, &prompt, &request);
        match (run.output, run.run) {
            (Some(review), _) => Ok(review),
            (None, NodeRun::Ran(outcome)) => Err(rt::Error::new(
                EvalErrorKind::Extern,
                format!(
                    "the review was not accepted: {}",
                    outcome.code.unwrap_or_default()
                ),
            )),
            (None, NodeRun::InputCheck(failure)) => Err(rt::Error::new(
                EvalErrorKind::Extern,
                format!("the request was refused: {}", failure.code),
            )),
            (None, other) => Err(rt::Error::new(
                EvalErrorKind::Extern,
                format!("the review could not run: {other:?}"),
            )),
        }
    }
}
