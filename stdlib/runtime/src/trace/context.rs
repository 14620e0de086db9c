//! The runtime's own trace context: which span is current on a thread (or in a task's
//! future), what its children are started under and what an outgoing `traceparent` names.
//! A [`Context`] is a span's ids and, while the span records, its [`Record`] behind a lock,
//! shared by every clone (a request's span is annotated by the task that bills it).
//!
//! Why not the OpenTelemetry API's `Context`: its span is boxed once as a trait object and
//! again in a shared, locked wrapper, its current context is a stack of maps, and each call
//! on a span is dispatched twice; a gate refusal paid for that a few thousand instructions
//! (the book's traces chapter, "Cost"). Here a span is one allocation and its calls are direct.

use std::cell::RefCell;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::Poll;
use std::time::SystemTime;

use opentelemetry::trace::SpanContext;

use super::host::Host;
use super::record::Record;

/// A span, or none: what is current, or what a span is started under.
#[derive(Clone, Default)]
pub struct Context {
    span: Option<Arc<Shared>>,
}

/// A span shared by the contexts that hold it.
struct Shared {
    context: SpanContext,
    /// Where it goes when it ends (none for a caller's span, which records nothing).
    host: Option<&'static dyn Host>,
    /// `Some` while the span records and has not ended.
    record: Mutex<Option<Record>>,
}

impl Drop for Shared {
    fn drop(&mut self) {
        // A span nobody ended ends when its last context goes (as the SDK's does).
        end(&self.record, self.host);
    }
}

thread_local! {
    static CURRENT: RefCell<Context> = RefCell::new(Context::default());
}

impl Context {
    /// No span: what a new trace's root is started under.
    pub fn none() -> Context {
        Context::default()
    }

    /// The span `context` of another process (a caller's `traceparent`), which records nothing.
    pub fn remote(context: SpanContext) -> Context {
        Context {
            span: Some(Arc::new(Shared {
                context,
                host: None,
                record: Mutex::new(None),
            })),
        }
    }

    /// The span `context`, recording into `record` when it is given, ended into `host`.
    pub(super) fn of(
        context: SpanContext,
        record: Option<Record>,
        host: &'static dyn Host,
    ) -> Context {
        Context {
            span: Some(Arc::new(Shared {
                context,
                host: Some(host),
                record: Mutex::new(record),
            })),
        }
    }

    /// This thread's current context (none while the thread is being torn down).
    pub fn current() -> Context {
        CURRENT
            .try_with(|current| current.borrow().clone())
            .unwrap_or_default()
    }

    /// Makes this context current on this thread until the guard is dropped.
    pub fn attach(self) -> Guard {
        let previous = CURRENT
            .try_with(|current| std::mem::replace(&mut *current.borrow_mut(), self))
            .ok();
        Guard {
            previous,
            not_send: PhantomData,
        }
    }

    /// The span's ids, when there is a valid span.
    pub fn span_context(&self) -> Option<&SpanContext> {
        self.span
            .as_ref()
            .map(|s| &s.context)
            .filter(|sc| sc.is_valid())
    }

    /// Whether the span records (it was sampled or recorded, and has not ended).
    pub fn is_recording(&self) -> bool {
        self.span
            .as_ref()
            .is_some_and(|s| lock(&s.record).is_some())
    }

    /// `f` of the span's record, when it records.
    pub fn record(&self, f: impl FnOnce(&mut Record)) {
        if let Some(span) = &self.span {
            if let Some(record) = lock(&span.record).as_mut() {
                f(record);
            }
        }
    }

    /// Ends the span: it is exported (when sampled) and records nothing more.
    pub fn end(&self) {
        if let Some(span) = &self.span {
            end(&span.record, span.host);
        }
    }

    /// `future`, with this context current on whatever thread polls it.
    pub fn wrap<F: Future>(self, future: F) -> InContext<F> {
        InContext {
            future,
            context: self,
        }
    }
}

/// Ends the span of `record`, if it has not ended: its end time, then the host's export when
/// it is sampled; its strings are freed here, on the thread that ends it.
fn end(record: &Mutex<Option<Record>>, host: Option<&'static dyn Host>) {
    let Some(mut record) = lock(record).take() else {
        return;
    };
    record.end = SystemTime::now();
    if record.context.is_sampled() {
        if let Some(host) = host {
            host.export(&record);
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// Makes the previous context current again when dropped; kept on the thread that made it.
#[must_use = "the context is current only while the guard lives"]
pub struct Guard {
    previous: Option<Context>,
    not_send: PhantomData<*const ()>,
}

impl Drop for Guard {
    fn drop(&mut self) {
        if let Some(previous) = self.previous.take() {
            // The replaced context is dropped outside the borrow (its drop may end a span).
            let _replaced =
                CURRENT.try_with(|current| std::mem::replace(&mut *current.borrow_mut(), previous));
        }
    }
}

pin_project_lite::pin_project! {
    /// A future polled with its context current ([`Context::wrap`]).
    pub struct InContext<F> {
        #[pin]
        future: F,
        context: Context,
    }
}

impl<F: Future> Future for InContext<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> Poll<F::Output> {
        let this = self.project();
        let _guard = this.context.clone().attach();
        this.future.poll(cx)
    }
}
