//! `aelc explain CODE`: the long explanation of a diagnostic code (or, for a retired code, the
//! code reported instead).

use std::io::Write;

use super::args::ExplainArgs;
use super::Status;
use crate::diagnostics::codes;

pub fn run(args: &ExplainArgs) -> Status {
    match text(&args.code) {
        Ok(text) => {
            // A closed pipe (`aelc explain E0101 | head`) is not an error worth a panic.
            let _ = std::io::stdout().lock().write_all(text.as_bytes());
            Status::Ok
        }
        Err(message) => {
            super::eprint_line(&format!("error: {message}"));
            Status::Usage
        }
    }
}

/// What `aelc explain CODE` prints, or why it cannot.
fn text(code: &str) -> Result<String, String> {
    if let Some(info) = codes::lookup(code) {
        let mut text = format!(
            "{}: {}\n\n{}\n\n",
            info.code,
            info.title,
            info.explanation.trim()
        );
        if !info.example.is_empty() {
            text.push_str(&format!("Example:\n\n{}\n", info.example.trim_end()));
        }
        return Ok(text);
    }
    if let Some((code, instead, why)) = codes::retired(code) {
        if instead.is_empty() {
            return Ok(format!("{code} is no longer emitted: {why}.\n"));
        }
        return Ok(format!(
            "{code} is no longer emitted: {why}, as {instead}.\n\n\
             Run `aelc explain {instead}` for that code.\n"
        ));
    }
    Err(format!(
        "`{code}` is not a diagnostic code of aelc (codes look like E0101 or W0201)"
    ))
}

#[cfg(test)]
mod tests {
    use super::text;

    #[test]
    fn a_code_prints_its_title_explanation_and_example() {
        let out = text("e0350").unwrap_or_default();
        assert!(out.starts_with("E0350: pattern outside the common regex syntax\n\n"));
        assert!(out.contains("Example:\n\ntype Digits"), "{out}");
    }

    #[test]
    fn a_retired_code_names_its_successor() {
        let out = text("E0801").unwrap_or_default();
        assert!(out.contains("no longer emitted") && out.contains("aelc explain E0408"));
    }

    #[test]
    fn a_retired_code_without_successor_says_why() {
        let out = text("W0851").unwrap_or_default();
        assert!(
            out.starts_with("W0851 is no longer emitted: the Rust glue runs every node"),
            "{out}"
        );
        assert!(!out.contains("aelc explain"), "{out}");
    }

    #[test]
    fn an_unknown_code_is_refused() {
        assert!(text("E9999").is_err());
    }
}
