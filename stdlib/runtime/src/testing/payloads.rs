//! The review payloads the `decode` and `glue` benchmarks time, of the two kinds issue 42 asks
//! for (model output, escaped every few bytes, and the escape-free review document), and the
//! reading of their `…_PAYLOADS` and `…_PROFILE` variables, written once for both benches.

use super::{model_output_json, review_json};

/// The kinds of payload a run takes from the variable `var`: `model`, `plain`, or both.
pub fn kinds(var: &str) -> Vec<&'static str> {
    match std::env::var(var).as_deref() {
        Ok("plain") => vec!["plain"],
        Ok("model") => vec!["model"],
        _ => vec!["model", "plain"],
    }
}

/// The payload of `findings` findings of one kind (`model`: escaped model output; `plain`: the
/// escape-free review document).
pub fn payload(kind: &str, findings: usize) -> String {
    if kind == "plain" {
        review_json(findings)
    } else {
        model_output_json(findings)
    }
}

/// The findings of the small, medium and large payloads of `kind`: about 0.3 KB, 20 KB and
/// 1 MB either way (a model's findings are longer).
pub fn sizes(kind: &str) -> [(&'static str, usize); 3] {
    if kind == "plain" {
        [("small", 1), ("medium", 100), ("large", 5000)]
    } else {
        [("small", 1), ("medium", 87), ("large", 4500)]
    }
}

/// A profiler's request, `contender[:findings[:runs]]`: which contender of `names`, the
/// payload (of the kind `kinds_var` names, model output unless `plain`; the large one unless
/// `findings` is given) and how many calls (ten unless given).
pub struct Profile {
    pub which: usize,
    pub payload: String,
    pub runs: usize,
}

impl Profile {
    /// Reads `request`; an error names the contenders when it names none of them.
    pub fn parse(request: &str, names: &[&str], kinds_var: &str) -> Result<Profile, String> {
        let mut words = request.split(':');
        let who = words.next().unwrap_or(names[0]);
        let which = names
            .iter()
            .position(|c| *c == who)
            .ok_or_else(|| format!("names no contender: {who} (one of {names:?})"))?;
        let kind = if std::env::var(kinds_var).is_ok_and(|p| p == "plain") {
            "plain"
        } else {
            "model"
        };
        let findings = words
            .next()
            .and_then(|w| w.parse().ok())
            .unwrap_or(sizes(kind)[2].1);
        let runs = words.next().and_then(|w| w.parse().ok()).unwrap_or(10);
        Ok(Profile {
            which,
            payload: payload(kind, findings),
            runs,
        })
    }
}
