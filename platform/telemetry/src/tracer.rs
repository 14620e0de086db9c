//! aelc's own spans for the `http/protobuf` export, behind the OpenTelemetry API: the
//! runtime and the gateway still start, nest, annotate and end them through `Context` and
//! `SpanRef`, but a span is this module's [`Span`], not the SDK's, and at its end it is encoded
//! at once on the thread that ends it ([`Batch::push`]) instead of being handed, with every
//! string it owns, to a batch thread.
//!
//! Why (the book's traces chapter, "Cost"): with the SDK a gate refusal's two spans cost about
//! 20 k instructions with export on, 11 % of the request: the SDK's tracer and span (the
//! span builder, the per-span copies of its scope, the processor chain), the move of each
//! finished span through a channel to the batch thread, and there the freeing of its strings
//! and lists, each a free across threads (mimalloc's slow path). Here a span is a `SpanData`
//! filled in place; its end encodes it into a thread's scratch buffer and appends the bytes to
//! the pending batch under a lock held for a copy; its strings are freed where they were
//! made. The batch thread only frames the bytes and posts them.
//!
//! Kept from the SDK: its samplers (read from `OTEL_TRACES_SAMPLER` and `_ARG` by its
//! `Config`), its id generator, and `SpanData` itself (the encoder's input, tested byte for
//! byte against `opentelemetry-proto`).

use std::borrow::Cow;
use std::sync::Arc;
use std::time::SystemTime;

use opentelemetry::trace::{
    Link, SpanContext, SpanId, SpanKind, Status, TraceContextExt, TraceFlags,
};
use opentelemetry::{Context, InstrumentationScope, KeyValue};
use opentelemetry_sdk::trace::{
    IdGenerator, RandomIdGenerator, SamplingDecision, ShouldSample, SpanData, SpanEvents, SpanLinks,
};

use crate::batch::Batch;

/// The most attributes a span keeps (the SDK's default limit); more are counted as dropped.
const MAX_ATTRIBUTES: usize = 128;
/// The most events and links a span keeps (the SDK's defaults); aelc's spans have none.
const MAX_EVENTS: usize = 128;
const MAX_LINKS: usize = 128;

/// The instrumentation scope of aelc's spans.
pub(crate) fn scope() -> InstrumentationScope {
    InstrumentationScope::builder("aelc").build()
}

/// Starts aelc's spans: the runtime's [`aelc_runtime::trace::Starter`] for `http/protobuf`.
pub(crate) struct Tracer {
    sampler: Box<dyn ShouldSample>,
    ids: RandomIdGenerator,
    batch: Arc<Batch>,
    /// The scope every span is in (`aelc`); its name is static, so a clone allocates nothing.
    scope: InstrumentationScope,
}

impl Tracer {
    pub(crate) fn new(sampler: Box<dyn ShouldSample>, batch: Arc<Batch>) -> Tracer {
        Tracer {
            sampler,
            ids: RandomIdGenerator::default(),
            batch,
            scope: scope(),
        }
    }

    /// The span, as the SDK's tracer makes it: a child of `parent`'s valid span (its trace,
    /// its flags) or a new trace's root, sampled as the sampler decides.
    fn span(
        &self,
        name: Cow<'static, str>,
        kind: SpanKind,
        mut attributes: Vec<KeyValue>,
        parent: &Context,
    ) -> Span {
        let parent_span = parent.span();
        let parent_cx = Some(parent_span.span_context()).filter(|sc| sc.is_valid());
        let trace_id = match parent_cx {
            Some(sc) => sc.trace_id(),
            None => self.ids.new_trace_id(),
        };
        let span_id = self.ids.new_span_id();
        let sampling =
            self.sampler
                .should_sample(Some(parent), trace_id, &name, &kind, &attributes, &[]);
        let flags = parent_cx.map_or(TraceFlags::default(), SpanContext::trace_flags);
        let (sampled, records) = match sampling.decision {
            SamplingDecision::RecordAndSample => (true, true),
            SamplingDecision::RecordOnly => (false, true),
            SamplingDecision::Drop => (false, false),
        };
        let flags = if records {
            flags.with_sampled(sampled)
        } else {
            TraceFlags::default()
        };
        let context = SpanContext::new(trace_id, span_id, flags, false, sampling.trace_state);
        if !records {
            return Span {
                context,
                data: None,
                batch: None,
            };
        }
        if !sampling.attributes.is_empty() {
            attributes.extend(sampling.attributes);
        }
        let dropped = attributes.len().saturating_sub(MAX_ATTRIBUTES);
        attributes.truncate(MAX_ATTRIBUTES);
        let now = opentelemetry::time::now();
        let data = SpanData {
            span_context: context.clone(),
            parent_span_id: parent_cx.map_or(SpanId::INVALID, SpanContext::span_id),
            parent_span_is_remote: parent_cx.is_some_and(SpanContext::is_remote),
            span_kind: kind,
            name,
            start_time: now,
            end_time: now,
            attributes,
            dropped_attributes_count: dropped as u32,
            events: SpanEvents::default(),
            links: SpanLinks::default(),
            status: Status::Unset,
            instrumentation_scope: self.scope.clone(),
        };
        Span {
            context,
            data: Some(data),
            batch: sampled.then(|| Arc::clone(&self.batch)),
        }
    }
}

impl aelc_runtime::trace::Starter for Tracer {
    fn start(
        &self,
        name: Cow<'static, str>,
        kind: SpanKind,
        attributes: Vec<KeyValue>,
        parent: &Context,
    ) -> Context {
        parent.with_span(self.span(name, kind, attributes, parent))
    }
}

/// One span: its context (for its children and `traceparent`) and, while it records, what it
/// will export; ended by [`opentelemetry::trace::Span::end`] or when dropped.
pub(crate) struct Span {
    context: SpanContext,
    /// `None` when not recording (the sampler dropped it) or ended. Not boxed: the API boxes
    /// the whole span once already.
    data: Option<SpanData>,
    /// Where a sampled span goes when it ends; `None` for a span recorded but not sampled.
    batch: Option<Arc<Batch>>,
}

impl opentelemetry::trace::Span for Span {
    fn add_event_with_timestamp<T>(
        &mut self,
        name: T,
        timestamp: SystemTime,
        attributes: Vec<KeyValue>,
    ) where
        T: Into<Cow<'static, str>>,
    {
        if let Some(data) = &mut self.data {
            if data.events.events.len() < MAX_EVENTS {
                data.events.events.push(opentelemetry::trace::Event::new(
                    name, timestamp, attributes, 0,
                ));
            } else {
                data.events.dropped_count += 1;
            }
        }
    }

    fn span_context(&self) -> &SpanContext {
        &self.context
    }

    fn is_recording(&self) -> bool {
        self.data.is_some()
    }

    fn set_attribute(&mut self, attribute: KeyValue) {
        if let Some(data) = &mut self.data {
            if data.attributes.len() < MAX_ATTRIBUTES {
                data.attributes.push(attribute);
            } else {
                data.dropped_attributes_count += 1;
            }
        }
    }

    fn set_status(&mut self, status: Status) {
        if let Some(data) = &mut self.data {
            // Ok > Error > Unset, as the specification orders them.
            if status > data.status {
                data.status = status;
            }
        }
    }

    fn update_name<T>(&mut self, new_name: T)
    where
        T: Into<Cow<'static, str>>,
    {
        if let Some(data) = &mut self.data {
            data.name = new_name.into();
        }
    }

    fn add_link(&mut self, span_context: SpanContext, attributes: Vec<KeyValue>) {
        if let Some(data) = &mut self.data {
            if data.links.links.len() < MAX_LINKS {
                data.links
                    .links
                    .push(Link::new(span_context, attributes, 0));
            } else {
                data.links.dropped_count += 1;
            }
        }
    }

    fn end_with_timestamp(&mut self, timestamp: SystemTime) {
        let Some(data) = &mut self.data else {
            return;
        };
        data.end_time = timestamp;
        if let Some(batch) = &self.batch {
            batch.push(data);
        }
        // Its strings are freed here, on the thread that made most of them.
        self.data = None;
    }
}

impl Drop for Span {
    fn drop(&mut self) {
        // A span nobody ended still ends (as the SDK's does).
        opentelemetry::trace::Span::end(self);
    }
}
