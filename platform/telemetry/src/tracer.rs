//! aelc's spans' host ([`aelc_runtime::trace::Host`]): each new span's ids (the SDK's random
//! generator) and sampling decision (`sampler`), and each sampled span, when it ends, handed to
//! the pipeline: encoded at once on its own thread into the `http/protobuf` batch
//! ([`Batch::push`]), or made the SDK's `SpanData` for its `http/json` processor.
//!
//! Why (the book's traces chapter, "Cost"): the runtime's spans are its own records, their
//! attributes already protobuf, so ending one is a copy of bytes under the batch's lock; the
//! OpenTelemetry API's spans (boxed, shared, locked, their attributes owned strings) cost a
//! gate refusal more than the rest of its export together.

use std::sync::Arc;

use aelc_runtime::trace::{Host, Record};
use opentelemetry::trace::{SpanContext, TraceFlags};
use opentelemetry::InstrumentationScope;
use opentelemetry_sdk::trace::{IdGenerator, RandomIdGenerator, SpanProcessor};

use crate::batch::Batch;
use crate::sampler::Sampler;

/// The instrumentation scope of aelc's spans.
pub(crate) fn scope() -> InstrumentationScope {
    InstrumentationScope::builder("aelc").build()
}

/// Where sampled spans go.
pub(crate) enum Sink {
    /// `http/protobuf`: this crate's batch.
    Own(Arc<Batch>),
    /// `http/json`: the SDK's batch processor (behind the count of what it holds).
    Sdk(Arc<crate::json::Bounded>),
}

/// The runtime's host for the process's exporter.
pub(crate) struct Tracer {
    sampler: Sampler,
    ids: RandomIdGenerator,
    sink: Sink,
}

impl Tracer {
    pub(crate) fn new(sampler: Sampler, sink: Sink) -> Tracer {
        Tracer {
            sampler,
            ids: RandomIdGenerator::default(),
            sink,
        }
    }
}

impl Host for Tracer {
    /// As the SDK's tracer makes a span: a child of `parent` (its trace, its flags, its trace
    /// state) or a new trace's root; one the sampler drops records nothing and has its flags
    /// cleared.
    fn begin(&self, parent: Option<&SpanContext>) -> (SpanContext, bool) {
        let trace_id = parent.map_or_else(|| self.ids.new_trace_id(), SpanContext::trace_id);
        let span_id = self.ids.new_span_id();
        let sampled = self.sampler.samples(parent, trace_id);
        let flags = match parent {
            Some(parent) if sampled => parent.trace_flags().with_sampled(true),
            None if sampled => TraceFlags::SAMPLED,
            _ => TraceFlags::default(),
        };
        let state = parent.map(|p| p.trace_state().clone()).unwrap_or_default();
        (
            SpanContext::new(trace_id, span_id, flags, false, state),
            sampled,
        )
    }

    fn export(&self, span: &Record) {
        match &self.sink {
            Sink::Own(batch) => batch.push(span),
            Sink::Sdk(processor) => processor.on_end(crate::convert::span_data(span)),
        }
    }
}
