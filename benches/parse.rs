//! Benchmark `parse`: lexing and parsing generated modules of 10k and 100k lines.
//!
//! Run: `cargo bench --bench parse`. The target is 100k lines in under 100 ms on one core, and
//! a 100k/10k ratio under 12 (linear growth). `lex` alone is measured too, so that a change in
//! the parser's share of the time shows, and so is `lex_and_parse_cold`, every run from cold
//! caches (see `common/cold.rs` for why the hot and the cold ratio differ).
//!
//! The source is built (and checked to parse without errors, so that recovery is not what is
//! measured) once per size, outside the timed closure. The closure runs only `syntax::parse`
//! (lex, parse, doc attachment, diagnostics); divan drops the returned tree after the clock
//! stopped, so freeing it is not measured either.

mod common;

use aelc::span::FileId;
use aelc::syntax;

/// The allocator the `aelc` binaries ship with, so that the figures are theirs.
#[global_allocator]
static GLOBAL: aelc::allocator::Allocator = aelc::allocator::Allocator;

fn main() {
    aelc::allocator::configure();
    if let Some((lines, runs)) = profile_request() {
        let text = source(lines);
        for _ in 0..runs {
            divan::black_box(syntax::parse(FileId(0), divan::black_box(&text)));
        }
        return;
    }
    divan::main();
}

/// `PARSE_PROFILE=LINES[:RUNS]`: no timing, RUNS (default 1) parses of a generated module, for a
/// profiler (`valgrind --tool=callgrind`, `perf stat`).
fn profile_request() -> Option<(usize, usize)> {
    let request = std::env::var("PARSE_PROFILE").ok()?;
    let (lines, runs) = request.split_once(':').unwrap_or((&request, "1"));
    Some((lines.parse().ok()?, runs.parse().ok()?))
}

/// One chunk of a realistic module: every item kind (use, type alias, struct with defaults and
/// attributes, unit and tagged data enums, errors, fn and extern fn, check and extern check,
/// builder, stream, node and agent with every block), the expression language (precedence,
/// `if`/`match`, closures, method chains, struct literals, lists, unary operators), literals
/// of every kind, and plain, block and doc comments.
fn chunk(n: usize) -> String {
    format!(
        r#"use std::text::{{trim, lower as lowercase}};
use models::review::Finding{n};

/// A bounded name.
type Name{n} = Str<1..=64>;

/// Request number {n}.
struct Request{n} {{
    /// The text.
    document: Str<4000>,
    strict: bool = false, // trailing comment
    max_findings: u16<1..=50> = 10,
    locale: Option<Str<16>> @pattern(r"^[a-z]{{2}}(-[A-Z]{{2}})?$"),
    tags: List<Name{n}, 0..8> = [],
    /* a block comment /* nested */ inside */
    ratio: f64<-1.0..=1.0> = 0.5,
}}

enum Severity{n} {{ low, medium, high }}

/// Shapes, tagged by `kind`.
@tag("kind")
enum Shape{n} {{
    circle {{ radius: f64 }},
    square {{ side: f64, }},
    point,
}}

errors ReviewError{n} {{
    /// The document has no text.
    empty_document,
    too_many_findings,
}}

extern fn parse_invoice{n}(raw: Raw) -> Invoice;
extern check signature_valid{n}(request: Request{n}) fails ReviewError{n};

check not_blank{n}(request: Request{n}) fails ReviewError{n} {{
    require request.document.trim().len() > 0 else empty_document "the document is blank";
    require !request.strict || request.max_findings <= 20 else too_many_findings;
}}

fn score{n}(s: Severity{n}, x: u8) -> u8 {{
    let base: u8 = if x > 10 {{ x * 2 + 1 }} else if x == 0 {{ 0 }} else {{ x - 1 }};
    let all = [1, 2, 3, -x, (x + 1) % 7];
    match s {{ low => base, medium | high => base + 1, _ => base / 2 }}
}}

builder parts{n}(request: Request{n}) -> Parts {{
    system("You review documents.")
    text(render(request.document)),
    text("done")
}}

stream Readings{n} of SensorReading {{
    chunk: 1KiB;           // largest encoded chunk
    rate: 50/s;
    fresh: 500ms;
    on_full: drop_oldest;
}}

// The node every earlier item serves.
node review{n}(request: Request{n}) -> Review fails ReviewError{n} {{
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
    let base = Review {{ findings: [], score: score{n}(Severity{n}::low, 3) }};
    return Review {{ findings: request.findings.filter(|f| f.line > 0 && f.severity != none), ..base }};
}}

/// An agent that publishes.
agent publish{n}(request: Request{n}) -> Review fails ReviewError{n} {{
    config {{ prompt: file("prompts/review.md"); model: binding("primary_model"); }}
    budget {{ max_calls: 2; max_cost: 0.01 EUR; }}
    publish {{
        capability: "review.document";
        price: 0.01 EUR;
        examples: "examples/review/*.json";
    }}
}}

"#
    )
}

/// A module of about `lines` lines, made of whole chunks.
fn source(lines: usize) -> String {
    let mut out = String::new();
    out.push_str("//! A generated module for the parse benchmark.\n\n");
    let mut n = 0;
    let mut count = 2;
    while count < lines {
        let chunk = chunk(n);
        count += chunk.lines().count();
        out.push_str(&chunk);
        n += 1;
    }
    out
}

#[divan::bench(args = [10_000, 100_000])]
fn lex_and_parse(bencher: divan::Bencher, lines: usize) {
    let text = source(lines);
    let errors: Vec<_> = syntax::parse(FileId(0), &text)
        .diagnostics
        .into_iter()
        .filter(|d| d.is_error())
        .map(|d| d.message)
        .collect();
    assert!(
        errors.is_empty(),
        "the generated source must parse: {errors:?}"
    );
    bencher
        .counter(divan::counter::BytesCount::of_str(&text))
        .bench(|| syntax::parse(FileId(0), divan::black_box(&text)));
}

/// `lex_and_parse` again, each run starting from cold caches ([`common::cold`]): the way a
/// one-shot `aelc check` meets a file, and the fair test of linear growth (the hot 10k-line
/// run finds most of its memory still cached from the run before; a 100k-line one cannot).
#[divan::bench(args = [10_000, 100_000])]
fn lex_and_parse_cold(bencher: divan::Bencher, lines: usize) {
    let text = source(lines);
    bencher
        .counter(divan::counter::BytesCount::of_str(&text))
        .with_inputs(common::cold::evict)
        .bench_local_values(|()| syntax::parse(FileId(0), divan::black_box(&text)));
}

#[divan::bench(args = [10_000, 100_000])]
fn lex_only(bencher: divan::Bencher, lines: usize) {
    let text = source(lines);
    bencher
        .counter(divan::counter::BytesCount::of_str(&text))
        .bench(|| syntax::lex(FileId(0), divan::black_box(&text)));
}
