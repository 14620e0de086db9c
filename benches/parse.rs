//! Benchmark `parse`: lexing and parsing generated modules of 10k and 100k lines.
//!
//! Run: `cargo bench --bench parse -- --sample-count 10`. The target is 100k lines in under
//! 100 ms on one core, and a 100k/10k ratio under 12 (linear growth).

use aelc::span::FileId;
use aelc::syntax;

fn main() {
    divan::main();
}

/// A realistic mix of items: structs with refinements, enums, checks, fns and nodes.
/// Each chunk is 40 lines; the result has about `lines` lines.
fn source(lines: usize) -> String {
    let mut out = String::with_capacity(lines * 40);
    let mut n = 0;
    while out.lines().count() < lines {
        out.push_str(&format!(
            r#"/// Request number {n}.
struct Request{n} {{
    /// The text.
    document: Str<4000>,
    strict: bool = false,
    max_findings: u16<1..=50> = 10,
    locale: Option<Str<16>> @pattern(r"^[a-z]{{2}}(-[A-Z]{{2}})?$"),
}}

enum Severity{n} {{ low, medium, high }}

check not_blank{n}(request: Request{n}) fails ReviewError {{
    require request.document.trim().len() > 0 else empty_document "the document is blank";
}}

fn score{n}(s: Severity{n}, x: u8) -> u8 {{
    let base = if x > 10 {{ x * 2 + 1 }} else {{ x - 1 }};
    match s {{ low => base, medium => base + 1, high => base + 2 }}
}}

node review{n}(request: Request{n}) -> Review fails ReviewError {{
    config {{
        prompt: file("prompts/review.md");
        model: binding("primary_model");
        max_answer: 32KiB;
        timeout: 60s;
        temperature: 0.2;
    }}
    input {{ check not_blank{n}; }}
    output {{
        check within_limit;
        on_failure: repair(2), fallback(binding("backup_model")), fail(too_many_findings);
    }}
    budget {{ max_calls: 4; max_cost: 0.05 EUR; max_time: 2m; }}
    return Review {{ findings: request.findings.filter(|f| f.line > 0), ..base }};
}}

"#
        ));
        n += 1;
    }
    out
}

#[divan::bench(args = [10_000, 100_000])]
fn lex_and_parse(bencher: divan::Bencher, lines: usize) {
    let text = source(lines);
    bencher
        .counter(divan::counter::BytesCount::of_str(&text))
        .bench(|| syntax::parse(FileId(0), divan::black_box(&text)));
}
