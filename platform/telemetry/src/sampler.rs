//! The sampler of aelc's spans, read from `OTEL_TRACES_SAMPLER` and `OTEL_TRACES_SAMPLER_ARG`
//! as the OpenTelemetry SDK's `Config` reads them (the same names, the same fallbacks, the same
//! ratio test on the trace id), but deciding on the runtime's parent span context directly:
//! the SDK's samplers ask for an OpenTelemetry `Context`, which would cost an allocation per
//! span to make.

use opentelemetry::trace::{SpanContext, TraceId};

/// The built-in samplers (the SDK's `Sampler`, without the remote ones it does not build).
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Sampler {
    AlwaysOn,
    AlwaysOff,
    /// Samples a trace when its id falls in the fraction.
    TraceIdRatio(f64),
    /// The parent's decision when there is a parent; else the inner sampler's.
    ParentBased(Box<Sampler>),
}

impl Sampler {
    /// `OTEL_TRACES_SAMPLER` and `_ARG` (by `var`), as the SDK reads them: unset, unknown or
    /// unsupported (`jaeger_remote`, `xray`) is `parentbased_always_on`; a ratio that is not a
    /// number is 1.
    pub(crate) fn from_env(var: &impl Fn(&str) -> Option<String>) -> Sampler {
        let ratio = || {
            let arg = var("OTEL_TRACES_SAMPLER_ARG");
            Sampler::TraceIdRatio(arg.and_then(|a| a.parse::<f64>().ok()).unwrap_or(1.0))
        };
        let parent_based = |root| Sampler::ParentBased(Box::new(root));
        match var("OTEL_TRACES_SAMPLER").as_deref() {
            Some("always_on") => Sampler::AlwaysOn,
            Some("always_off") => Sampler::AlwaysOff,
            Some("traceidratio") => ratio(),
            Some("parentbased_always_off") => parent_based(Sampler::AlwaysOff),
            Some("parentbased_traceidratio") => parent_based(ratio()),
            _ => parent_based(Sampler::AlwaysOn),
        }
    }

    /// Whether a span of `trace_id` under `parent` is sampled (recorded and exported); one
    /// that is not is not recorded either.
    pub(crate) fn samples(&self, parent: Option<&SpanContext>, trace_id: TraceId) -> bool {
        match self {
            Sampler::AlwaysOn => true,
            Sampler::AlwaysOff => false,
            Sampler::TraceIdRatio(ratio) => in_ratio(*ratio, trace_id),
            Sampler::ParentBased(root) => match parent {
                Some(parent) => parent.is_sampled(),
                None => root.samples(parent, trace_id),
            },
        }
    }
}

/// The SDK's test: the trace id's low 63 bits under the ratio's share of 2^63.
fn in_ratio(ratio: f64, trace_id: TraceId) -> bool {
    if ratio >= 1.0 {
        return true;
    }
    let bound = (ratio.max(0.0) * (1u64 << 63) as f64) as u64;
    let bytes = trace_id.to_bytes();
    let mut low = [0; 8];
    low.copy_from_slice(&bytes[8..]);
    (u64::from_be_bytes(low) >> 1) < bound
}
