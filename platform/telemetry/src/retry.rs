//! When an export is tried again: OTLP/HTTP's retryable answers (429, 502, 503, 504, or no
//! answer at all), at most three more times, 100 ms apart and doubling up to 1.6 s, plus up to
//! 100 ms of jitter, or after the `Retry-After` a 429 or 503 asks for; never past the export's
//! timeout. The policy `opentelemetry-otlp` applies (its `RetryPolicy::recommended`), kept
//! when this crate's own exporter replaced it for protobuf.

use std::time::{Duration, Instant, SystemTime};

const MAX_RETRIES: u32 = 3;
const FIRST_DELAY: Duration = Duration::from_millis(100);
const MAX_DELAY: Duration = Duration::from_millis(1600);
const MAX_JITTER_MS: u64 = 100;
/// The longest `Retry-After` obeyed.
const MAX_THROTTLE: Duration = Duration::from_secs(600);

/// How one attempt went.
#[derive(Debug)]
pub(crate) enum Attempt {
    Delivered,
    /// Worth another attempt; after the delay the collector asked for, if it did.
    Retryable(String, Option<Duration>),
    Failed(String),
}

/// Runs `attempt` until it delivers, fails for good, or `deadline` would pass: `Err` with why
/// the last attempt did not deliver. Sleeps on the calling thread (the batch processor's).
pub(crate) fn until_delivered(
    deadline: Duration,
    mut attempt: impl FnMut() -> Attempt,
) -> Result<(), String> {
    let start = Instant::now();
    let mut delay = FIRST_DELAY;
    let mut cap = MAX_DELAY;
    let mut retries = 0;
    loop {
        let (why, asked) = match attempt() {
            Attempt::Delivered => return Ok(()),
            Attempt::Failed(why) => return Err(why),
            Attempt::Retryable(why, asked) => (why, asked),
        };
        if retries == MAX_RETRIES || start.elapsed() >= deadline {
            return Err(why);
        }
        retries += 1;
        if let Some(asked) = asked.map(|a| a.min(MAX_THROTTLE)) {
            // A collector's request may lengthen the backoff, never shorten it.
            if asked > cap {
                cap = MAX_THROTTLE;
            }
            delay = delay.max(asked);
        }
        let pause = (delay + jitter()).min(cap);
        if pause >= deadline.saturating_sub(start.elapsed()) {
            return Err(why);
        }
        std::thread::sleep(pause);
        delay = (delay * 2).min(cap);
    }
}

/// Up to [`MAX_JITTER_MS`], from the clock's low bits (spreads exporters that failed together;
/// no need for a random generator).
fn jitter() -> Duration {
    let nanos = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    Duration::from_millis(u64::from(nanos) % (MAX_JITTER_MS + 1))
}

/// The delay a `Retry-After` header asks for: seconds, or an HTTP date.
pub(crate) fn retry_after(value: &str) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(at.duration_since(SystemTime::now()).unwrap_or_default())
}

/// Whether an HTTP status is worth another attempt, by OTLP/HTTP.
pub(crate) fn retryable(status: u16) -> bool {
    matches!(status, 429 | 502 | 503 | 504)
}
