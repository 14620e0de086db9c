//! What a host that exports spans (`aelc-telemetry`) gives the runtime's spans: their ids and
//! sampling, and a place to go when they end.

use opentelemetry::trace::SpanContext;

use super::record::Record;

/// What exports spans: it gives each new span its ids and sampling decision, and takes each
/// sampled span when it ends.
pub trait Host: Send + Sync + 'static {
    /// The context of a new span under `parent`'s (in its trace; a new trace's root when
    /// `None`): fresh ids, the sampler's flags, the parent's trace state; and whether the span
    /// records (a span that does not is ids only).
    fn begin(&self, parent: Option<&SpanContext>) -> (SpanContext, bool);

    /// A sampled span that ended; called on the thread that ended it.
    fn export(&self, span: &Record);
}
