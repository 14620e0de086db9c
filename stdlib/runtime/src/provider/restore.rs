//! An answer to a model-facing schema turned back into the document the output type reads:
//! unwrapped from `{"value": …}` ([`super::answer::unwrap_value`]) and with maps restored from
//! key/value lists ([`super::entries`]). Its own module so that the answer's reading and the
//! map rewrite each stay ignorant of the other.

use super::answer::Answer;
use super::error::ProviderError;

/// An answer to a model-facing `schema` as the output type reads it: unwrapped from
/// `{"value": …}` when the schema wraps it, and with maps restored from key/value lists.
pub fn restore(
    answer: Answer,
    schema: &super::request::OutputSchema,
    limit: u64,
) -> Result<Answer, ProviderError> {
    let answer = if schema.wrapped {
        super::answer::unwrap_value(answer, limit)?
    } else {
        answer
    };
    match &schema.maps {
        Some(document) => super::entries::restore(answer, document, limit),
        None => Ok(answer),
    }
}
