//! Diagnostic codes of the `sema` layer: `E02xx` names and modules, `E03xx` types and bounds,
//! `E04xx` expressions, checks and fns, `E05xx` nodes and agents, `E07xx` prompt templates;
//! `W02xx`–`W07xx` likewise for warnings.
//!
//! Each `example` is a small archive of files with its fix (`-- PATH --`, `-- fix --`; see
//! `book/src/diagnostics.md`), executed by `tests/it/book.rs`.

use super::CodeInfo;

pub(super) static CODES: &[CodeInfo] = &[
    CodeInfo {
        code: "E0201",
        title: "unknown module",
        explanation: "A `use` names a module that does not exist. A module is a file path from the project root without `.node.ael`/`.ael`, with `/` written `::`; `std` modules come with the compiler.",
        example: r#"use typs::common::Review;

fn short(r: Review) -> bool { r.summary.len() < 10 }
-- types/common.ael --
struct Review { summary: Str<100> }
-- fix --
use types::common::Review;

fn short(r: Review) -> bool { r.summary.len() < 10 }"#,
    },
    CodeInfo {
        code: "E0202",
        title: "unknown imported name",
        explanation: "A `use` names an item that the module does not declare. Every top-level item can be imported; the suggestion lists a close name.",
        example: r#"use types::common::Reveiw;

fn short(r: Review) -> bool { r.summary.len() < 10 }
-- types/common.ael --
struct Review { summary: Str<100> }
-- fix --
use types::common::Review;

fn short(r: Review) -> bool { r.summary.len() < 10 }"#,
    },
    CodeInfo {
        code: "E0203",
        title: "duplicate definition",
        explanation: "Two items, fields, variants or parameters share a name in one scope. Both places are shown; rename or remove one.",
        example: r#"struct A { x: u8 }
struct A { y: u8 }
-- fix --
struct A { x: u8 }
struct B { y: u8 }"#,
    },
    CodeInfo {
        code: "E0204",
        title: "unknown type",
        explanation: "A type name is not a built-in type and no struct, enum or alias of that name is in scope.",
        example: r#"struct A { x: Strr<10> }
-- fix --
struct A { x: Str<10> }"#,
    },
    CodeInfo {
        code: "E0205",
        title: "unknown name",
        explanation: "An expression, `fails` clause or block entry names something that is not in scope: a parameter, a `let`, a fn, a check or an errors set.",
        example: r#"fn f(a: u8) -> u8 { b }
-- fix --
fn f(a: u8) -> u8 { a }"#,
    },
    CodeInfo {
        code: "E0206",
        title: "unknown field",
        explanation: "The value has no field of this name (structs, struct literals, media references, variant patterns).",
        example: r#"struct Review { summary: Str<100> }

fn f(r: Review) -> u32 { r.sumary.len() }
-- fix --
struct Review { summary: Str<100> }

fn f(r: Review) -> u32 { r.summary.len() }"#,
    },
    CodeInfo {
        code: "E0207",
        title: "unknown variant",
        explanation: "The enum has no variant of this name; the allowed variants are listed.",
        example: r#"enum Severity { low, high }

fn f(s: Severity) -> u8 { match s { hgh => 1, _ => 0 } }
-- fix --
enum Severity { low, high }

fn f(s: Severity) -> u8 { match s { high => 1, _ => 0 } }"#,
    },
    CodeInfo {
        code: "E0208",
        title: "unknown method",
        explanation: "Only the built-in methods of spec §5 exist: on text `len is_empty trim to_lower to_upper contains starts_with ends_with matches`; on lists and sets `len is_empty contains first last all any count filter map sort_by sum`; on maps `len is_empty contains`; on options `is_some is_none unwrap_or`.",
        example: r#"fn f(s: Str<10>) -> Str<10> { s.strip() }
-- fix --
fn f(s: Str<10>) -> Str<10> { s.trim() }"#,
    },
    CodeInfo {
        code: "E0209",
        title: "wrong kind of item",
        explanation: "The name refers to an item of another kind than the place wants (e.g. a fn where a check is wired, a struct in `fails`).",
        example: r#"struct Review { summary: Str<100> }

check c(x: u8) fails Review { require x > 0 else bad; }
-- fix --
errors ReviewError { bad }

check c(x: u8) fails ReviewError { require x > 0 else bad; }"#,
    },
    CodeInfo {
        code: "E0210",
        title: "import clashes with a name",
        explanation: "An imported name is already the name of an item of this module or of another import. Import it under another name with `as`.",
        example: r#"use types::common::Review;

struct Review { x: u8 }
-- types/common.ael --
struct Review { summary: Str<100> }
-- fix --
use types::common::Review;

struct Draft { review: Review }"#,
    },
    CodeInfo {
        code: "E0211",
        title: "binding outside a project",
        explanation: "`binding(\"…\")` names an endpoint declared in `ael.toml`; a file checked on its own has no bindings. Add `ael.toml` with `[bindings.NAME]` at the project root.",
        example: r#"struct Question { text: Str<200> }
struct Answer { text: Str<200> }

node answer(q: Question) -> Answer {
    config {
        model: binding("main");
    }
}
-- fix --
-- ael.toml --
[package]
name = "acme/demo"
version = "0.1.0"

[bindings.main]
provider = "replay"
model = "recorded"
-- prompts/answer.md --
Answer the question: {{ q.text }}
-- main.ael --
struct Question { text: Str<200> }
struct Answer { text: Str<200> }

node answer(q: Question) -> Answer {
    config {
        prompt: file("prompts/answer.md");
        model: binding("main");
    }
}"#,
    },
    CodeInfo {
        code: "E0212",
        title: "unknown binding",
        explanation: "The binding is not declared in `ael.toml`. Declare `[bindings.NAME]` or fix the name.",
        example: r#"-- ael.toml --
[package]
name = "acme/demo"
version = "0.1.0"

[bindings.main]
provider = "replay"
model = "recorded"
-- prompts/answer.md --
Answer the question: {{ q.text }}
-- nodes/answer.node.ael --
struct Question { text: Str<200> }
struct Answer { text: Str<200> }

node answer(q: Question) -> Answer {
    config {
        prompt: file("prompts/answer.md");
        model: binding("mian");
    }
}
-- fix --
-- nodes/answer.node.ael --
struct Question { text: Str<200> }
struct Answer { text: Str<200> }

node answer(q: Question) -> Answer {
    config {
        prompt: file("prompts/answer.md");
        model: binding("main");
    }
}"#,
    },
    CodeInfo {
        code: "E0213",
        title: "unknown attribute",
        explanation: "Only `@pattern`, `@format` (text) and `@types`, `@max_pixels`, `@max_duration`, `@sample_rate` (media) may follow a type.",
        example: r#"struct A { s: Str<10> @patern(r"^a$") }
-- fix --
struct A { s: Str<10> @pattern(r"^a$") }"#,
    },
    CodeInfo {
        code: "E0301",
        title: "refinement outside the base range",
        explanation: "A refined integer or float range must lie inside its base type: `u8` holds 0..=255, so `u8<0..=300>` is an error. Use a wider base type.",
        example: r#"struct A { x: u8<0..=300> }
-- fix --
struct A { x: u16<0..=300> }"#,
    },
    CodeInfo {
        code: "E0302",
        title: "invalid text bound",
        explanation: "`Str<N>` holds at most N Unicode scalar values with 1 <= N <= 16777216, so that every value has a known largest size; `Str<0>` could only hold the empty text.",
        example: r#"struct A { s: Str<0> }
-- fix --
struct A { s: Str<1> }"#,
    },
    CodeInfo {
        code: "E0303",
        title: "invalid list, set or map bound",
        explanation: "A `List` holds at most 10000 items and a `Map` at most 10000 entries (spec §8); a `Set` at most 1000, because `uniqueItems` is only allowed with `maxItems <= 1000`. Every collection needs an upper bound.",
        example: r#"struct A { xs: List<u8, 20000> }
-- fix --
struct A { xs: List<u8, 10000> }"#,
    },
    CodeInfo {
        code: "E0304",
        title: "wrong type arguments",
        explanation: "The type takes other arguments: `Str<N>`, `List<T, N>`, `Set<T, N>`, `Map<K, V, N>`, `Option<T>`, `u8<lo..=hi>`, `Image<5MiB>`; named types take none; enums need a variant. `Option<T>` does not take an option, even through an alias: absent and `null` both mean `none`, so `some(none)` could not be told from `none`.",
        example: r#"struct A { x: Option<u8, 3> }
-- fix --
struct A { x: Option<u8> }"#,
    },
    CodeInfo {
        code: "E0305",
        title: "refinement for another type",
        explanation: "`@pattern` and `@format` refine text; `@types` media; `@max_pixels` images and video; `@max_duration` audio and video; `@sample_rate` audio.",
        example: r#"struct A { x: u8 @pattern(r"^1$") }
-- fix --
struct A { x: u8<1..=1> }"#,
    },
    CodeInfo {
        code: "E0306",
        title: "invalid format",
        explanation: "`@format` takes one of `email`, `uri`, `date`, `date-time`, `uuid`.",
        example: r#"struct A { s: Str<100> @format("e-mail") }
-- fix --
struct A { s: Str<100> @format("email") }"#,
    },
    CodeInfo {
        code: "E0307",
        title: "pattern read differently across engines",
        explanation: "A `@pattern` (or `matches`) is run by RE2 (the gateway), by ECMA-262 engines (other JSON Schema validators) and by the Rust `regex` crate (the runtime), so it must mean the same to all three. This construct is accepted by all of them, but they match different texts with it, so a value could pass one check and fail another: `\\d \\w \\s` and the word boundaries `\\b \\B` (and their negations) are Unicode-aware in Rust and ASCII elsewhere; a `]` first in a class (`[]a]`) is a member in Rust but closes an empty class in ECMA-262; a bare `[` inside a class is read differently too. Write the ASCII class that means the same everywhere (`[0-9]`, `[A-Za-z0-9_]`, `[ \\t\\n\\r\\f\\v]`) or escape the bracket. Constructs that some engine refuses outright are `E0350`.",
        example: r#"struct A { s: Str<10> @pattern(r"^\d+$") }
-- fix --
struct A { s: Str<10> @pattern(r"^[0-9]+$") }"#,
    },
    CodeInfo {
        code: "E0308",
        title: "invalid map key",
        explanation: "JSON object keys are text, so a map key is a `Str<…>` or a unit enum.",
        example: r#"struct A { m: Map<u8, u8, 10> }
-- fix --
struct A { m: Map<Str<3>, u8, 10> }"#,
    },
    CodeInfo {
        code: "E0309",
        title: "misplaced item attribute",
        explanation: "`@tag(\"kind\")` names the tag field of a data enum and stands before `enum`; it means nothing on unit enums, structs or aliases.",
        example: r#"@tag("kind") enum Severity { low, high }
-- fix --
enum Severity { low, high }"#,
    },
    CodeInfo {
        code: "E0310",
        title: "invalid default",
        explanation: "A default is a constant of the field's type (a literal, a list of literals or a variant name), checked against the type's bounds at compile time.",
        example: r#"struct A { n: u8<1..=10> = 20 }
-- fix --
struct A { n: u8<1..=10> = 10 }"#,
    },
    CodeInfo {
        code: "E0311",
        title: "default on an option",
        explanation: "An absent `Option` field is already `none`, so an `Option` field takes no default.",
        example: r#"struct A { s: Option<Str<10>> = "x" }
-- fix --
struct A { s: Str<10> = "x" }"#,
    },
    CodeInfo {
        code: "E0312",
        title: "recursive type",
        explanation: "A type may contain itself only through `Option`, `List`, `Set` or `Map`, so that a finite value exists. The cycle is named.",
        example: r#"struct Node { next: Node }
-- fix --
struct Node { next: Option<Node> }"#,
    },
    CodeInfo {
        code: "E0313",
        title: "type too deep",
        explanation: "Payloads nest at most 64 arrays and objects (spec §8). A type whose every value nests deeper can never be sent.",
        example: r#"use types::chain::S2;

/// Nests 65 objects deep: one more than a payload may.
struct S1 { next: S2 }
-- types/chain.ael --
struct S2 { next: S3 }
struct S3 { next: S4 }
struct S4 { next: S5 }
struct S5 { next: S6 }
struct S6 { next: S7 }
struct S7 { next: S8 }
struct S8 { next: S9 }
struct S9 { next: S10 }
struct S10 { next: S11 }
struct S11 { next: S12 }
struct S12 { next: S13 }
struct S13 { next: S14 }
struct S14 { next: S15 }
struct S15 { next: S16 }
struct S16 { next: S17 }
struct S17 { next: S18 }
struct S18 { next: S19 }
struct S19 { next: S20 }
struct S20 { next: S21 }
struct S21 { next: S22 }
struct S22 { next: S23 }
struct S23 { next: S24 }
struct S24 { next: S25 }
struct S25 { next: S26 }
struct S26 { next: S27 }
struct S27 { next: S28 }
struct S28 { next: S29 }
struct S29 { next: S30 }
struct S30 { next: S31 }
struct S31 { next: S32 }
struct S32 { next: S33 }
struct S33 { next: S34 }
struct S34 { next: S35 }
struct S35 { next: S36 }
struct S36 { next: S37 }
struct S37 { next: S38 }
struct S38 { next: S39 }
struct S39 { next: S40 }
struct S40 { next: S41 }
struct S41 { next: S42 }
struct S42 { next: S43 }
struct S43 { next: S44 }
struct S44 { next: S45 }
struct S45 { next: S46 }
struct S46 { next: S47 }
struct S47 { next: S48 }
struct S48 { next: S49 }
struct S49 { next: S50 }
struct S50 { next: S51 }
struct S51 { next: S52 }
struct S52 { next: S53 }
struct S53 { next: S54 }
struct S54 { next: S55 }
struct S55 { next: S56 }
struct S56 { next: S57 }
struct S57 { next: S58 }
struct S58 { next: S59 }
struct S59 { next: S60 }
struct S60 { next: S61 }
struct S61 { next: S62 }
struct S62 { next: S63 }
struct S63 { next: S64 }
struct S64 { next: S65 }
struct S65 { value: u8 }
-- fix --
use types::chain::S2;

/// Nests at most 65 objects deep, and only when `next` is given.
struct S1 { next: Option<S2> }"#,
    },
    CodeInfo {
        code: "E0314",
        title: "invalid media declaration",
        explanation: "A media type takes its largest size (`Image<5MiB>`); `@types` takes content types of the kind; `@max_pixels(w, h)`, `@max_duration(30s)` and `@sample_rate(16000)` take positive values.",
        example: r#"struct A { p: Image }
-- fix --
struct A { p: Image<5MiB> }"#,
    },
    CodeInfo {
        code: "E0315",
        title: "empty range",
        explanation: "The range holds no value: its lower bound is above its upper bound.",
        example: r#"struct A { x: u8<10..=2> }
-- fix --
struct A { x: u8<2..=10> }"#,
    },
    CodeInfo {
        code: "E0316",
        title: "not a data type",
        explanation: "`Raw` is only the parameter of an output's `parse:` fn and `Parts` only what a builder returns; no field can hold either.",
        example: r#"struct A { r: Raw }
-- fix --
struct A { r: Str<10000> }"#,
    },
    CodeInfo {
        code: "E0401",
        title: "type mismatch",
        explanation: "The expression has another type than the place wants. AEL has no implicit conversions.",
        example: r#"fn f(a: u8) -> bool { a }
-- fix --
fn f(a: u8) -> bool { a > 0 }"#,
    },
    CodeInfo {
        code: "E0402",
        title: "wrong number of arguments",
        explanation: "A fn, node, method or part was called with more or fewer arguments than it takes.",
        example: r#"fn f(a: u8) -> u8 { a }
fn g() -> u8 { f(1, 2) }
-- fix --
fn f(a: u8) -> u8 { a }
fn g() -> u8 { f(1) }"#,
    },
    CodeInfo {
        code: "E0403",
        title: "non-exhaustive match",
        explanation: "Every case of the scrutinee must be covered by an arm (every variant, `some`/`none`, `true`/`false`), or a final `_ => …` must catch the rest.",
        example: r#"enum Severity { low, high }

fn f(s: Severity) -> u8 { match s { low => 1 } }
-- fix --
enum Severity { low, high }

fn f(s: Severity) -> u8 { match s { low => 1, high => 2 } }"#,
    },
    CodeInfo {
        code: "E0405",
        title: "missing fields",
        explanation: "A struct literal must give every field that has no default and is not an `Option`, or copy the rest from a value with `..base`.",
        example: r#"struct Review { summary: Str<100>, score: u8 }

fn f() -> Review { Review { summary: "x" } }
-- fix --
struct Review { summary: Str<100>, score: u8 }

fn f() -> Review { Review { summary: "x", score: 0 } }"#,
    },
    CodeInfo {
        code: "E0406",
        title: "field given twice",
        explanation: "A struct literal gives the same field twice.",
        example: r#"struct Review { summary: Str<100>, score: u8 }

fn f(r: Review) -> Review { Review { summary: "a", summary: "b", ..r } }
-- fix --
struct Review { summary: Str<100>, score: u8 }

fn f(r: Review) -> Review { Review { summary: "a", ..r } }"#,
    },
    CodeInfo {
        code: "E0407",
        title: "code not in the fails set",
        explanation: "`require … else CODE` and `fail(CODE)` must use a code of the declared `fails` set.",
        example: r#"errors E { bad }

check c(x: u8) fails E { require x > 0 else nope; }
-- fix --
errors E { bad }

check c(x: u8) fails E { require x > 0 else bad; }"#,
    },
    CodeInfo {
        code: "E0408",
        title: "reserved code",
        explanation: "The platform's own codes (`invalid_input invalid_output rejected_input truncated_output undecodable_output stale_input timeout budget_exceeded model_unavailable cancelled internal_error`) cannot be declared.",
        example: r#"errors E { timeout }
-- fix --
errors E { too_slow }"#,
    },
    CodeInfo {
        code: "E0409",
        title: "fn call cycle",
        explanation: "Calls between fns may not form a cycle, so that every check terminates; the only iteration is the built-in list methods.",
        example: r#"fn a(x: u8) -> u8 { b(x) }
fn b(x: u8) -> u8 { a(x) }
-- fix --
fn a(x: u8) -> u8 { b(x) }
fn b(x: u8) -> u8 { x }"#,
    },
    CodeInfo {
        code: "E0410",
        title: "fn without a body",
        explanation: "A `fn` is written with its body, a block whose last expression is the result: `fn f(x: u8) -> u8 { x + 1 }`. A `fn` implemented in Rust instead is declared `extern fn` and ends with `;` (the generated glue asks for its implementation).",
        example: r#"fn f(x: u8) -> u8;
-- fix --
extern fn f(x: u8) -> u8;"#,
    },
    CodeInfo {
        code: "E0411",
        title: "code without a fails set",
        explanation: "A check or node that uses failure codes must declare `fails ErrorSet`.",
        example: r#"check c(x: u8) { require x > 0 else bad; }
-- fix --
errors E { bad }

check c(x: u8) fails E { require x > 0 else bad; }"#,
    },
    CodeInfo {
        code: "E0412",
        title: "duplicate code",
        explanation: "A failure code is declared twice in one `errors` set.",
        example: r#"errors E { a, a }
-- fix --
errors E { a, b }"#,
    },
    CodeInfo {
        code: "E0413",
        title: "bound always violated",
        explanation: "The compiler proved that a value can never satisfy its bound (a constant outside a declared type, a division by zero).",
        example: r#"fn f() -> u8<1..=5> { 9 }
-- fix --
fn f() -> u8<1..=5> { 5 }"#,
    },
    CodeInfo {
        code: "E0414",
        title: "invalid operands",
        explanation: "An operator was applied to values it does not take: `&& || !` need bools, arithmetic needs two numbers of the same kind, `+` also joins texts, comparisons need comparable values of one type.",
        example: r#"fn f(a: u8, b: f64) -> f64 { a + b }
-- fix --
fn f(a: f64, b: f64) -> f64 { a + b }"#,
    },
    CodeInfo {
        code: "E0415",
        title: "misplaced closure",
        explanation: "A closure `|x| …` is only the argument of the list methods `all any count filter map sort_by`, with one parameter.",
        example: r#"fn f(a: u8) -> u8 { |x| x }
-- fix --
fn f(a: u8) -> u8 { a }"#,
    },
    CodeInfo {
        code: "E0416",
        title: "option of an option",
        explanation: "An expression would be an option of an option: `some(x)` where `x` is an option already, or `first()`/`last()` of a list of options. Such a value could not be told from `none` (see E0304), so it has no type in AEL.",
        example: r#"fn f(x: Option<u8>) -> Option<u8> { some(x) }
-- fix --
fn f(x: Option<u8>) -> Option<u8> { x }"#,
    },
    CodeInfo {
        code: "E0501",
        title: "unknown block",
        explanation: "A node or agent has the blocks `config`, `input`, `output`, `inputs`, `budget` and (agents) `publish`.",
        example: r#"-- ael.toml --
[package]
name = "acme/demo"
version = "0.1.0"

[bindings.main]
provider = "replay"
model = "recorded"
-- prompts/answer.md --
Answer the question: {{ q.text }}
-- nodes/answer.node.ael --
struct Question { text: Str<200> }
struct Answer { text: Str<200> }

node answer(q: Question) -> Answer {
    confg {
        prompt: file("prompts/answer.md");
        model: binding("main");
    }
}
-- fix --
-- nodes/answer.node.ael --
struct Question { text: Str<200> }
struct Answer { text: Str<200> }

node answer(q: Question) -> Answer {
    config {
        prompt: file("prompts/answer.md");
        model: binding("main");
    }
}"#,
    },
    CodeInfo {
        code: "E0502",
        title: "unknown key",
        explanation: "A block entry has a key that the block does not know; the suggestion names a close key.",
        example: r#"-- ael.toml --
[package]
name = "acme/demo"
version = "0.1.0"

[bindings.main]
provider = "replay"
model = "recorded"
-- prompts/answer.md --
Answer the question: {{ q.text }}
-- nodes/answer.node.ael --
struct Question { text: Str<200> }
struct Answer { text: Str<200> }

node answer(q: Question) -> Answer {
    config {
        prompt: file("prompts/answer.md");
        model: binding("main");
        temprature: 0.2;
    }
}
-- fix --
-- nodes/answer.node.ael --
struct Question { text: Str<200> }
struct Answer { text: Str<200> }

node answer(q: Question) -> Answer {
    config {
        prompt: file("prompts/answer.md");
        model: binding("main");
        temperature: 0.2;
    }
}"#,
    },
    CodeInfo {
        code: "E0503",
        title: "file not found",
        explanation: "`file(\"…\")` paths are relative to the project root and must exist.",
        example: r#"-- ael.toml --
[package]
name = "acme/demo"
version = "0.1.0"

[bindings.main]
provider = "replay"
model = "recorded"
-- prompts/answer.md --
Answer the question: {{ q.text }}
-- nodes/answer.node.ael --
struct Question { text: Str<200> }
struct Answer { text: Str<200> }

node answer(q: Question) -> Answer {
    config {
        prompt: file("prompts/anser.md");
        model: binding("main");
    }
}
-- fix --
-- nodes/answer.node.ael --
struct Question { text: Str<200> }
struct Answer { text: Str<200> }

node answer(q: Question) -> Answer {
    config {
        prompt: file("prompts/answer.md");
        model: binding("main");
    }
}"#,
    },
    CodeInfo {
        code: "E0504",
        title: "invalid block value",
        explanation: "An entry's value has the wrong form: sizes (`32KiB`), durations (`60s`), money (`0.05 EUR`), counts, strings, `combine: together | latest | zip`, every stream limit.",
        example: r#"-- ael.toml --
[package]
name = "acme/demo"
version = "0.1.0"

[bindings.main]
provider = "replay"
model = "recorded"
-- prompts/answer.md --
Answer the question: {{ q.text }}
-- nodes/answer.node.ael --
struct Question { text: Str<200> }
struct Answer { text: Str<200> }

node answer(q: Question) -> Answer {
    config {
        prompt: file("prompts/answer.md");
        model: binding("main");
        timeout: 60;
    }
}
-- fix --
-- nodes/answer.node.ael --
struct Question { text: Str<200> }
struct Answer { text: Str<200> }

node answer(q: Question) -> Answer {
    config {
        prompt: file("prompts/answer.md");
        model: binding("main");
        timeout: 60s;
    }
}"#,
    },
    CodeInfo {
        code: "E0505",
        title: "duplicate block or entry",
        explanation: "A block or a non-repeatable entry is written twice.",
        example: r#"-- ael.toml --
[package]
name = "acme/demo"
version = "0.1.0"

[bindings.main]
provider = "replay"
model = "recorded"
-- prompts/answer.md --
Answer the question: {{ q.text }}
-- nodes/answer.node.ael --
struct Question { text: Str<200> }
struct Answer { text: Str<200> }

node answer(q: Question) -> Answer {
    config {
        prompt: file("prompts/answer.md");
        model: binding("main");
        timeout: 1s;
        timeout: 2s;
    }
}
-- fix --
-- nodes/answer.node.ael --
struct Question { text: Str<200> }
struct Answer { text: Str<200> }

node answer(q: Question) -> Answer {
    config {
        prompt: file("prompts/answer.md");
        model: binding("main");
        timeout: 2s;
    }
}"#,
    },
    CodeInfo {
        code: "E0506",
        title: "check does not fit the node",
        explanation: "A check wired to a node's `input` takes the node's parameters; one wired to `output` takes the output first, then parameters; its failure codes must be the node's.",
        example: r#"-- ael.toml --
[package]
name = "acme/demo"
version = "0.1.0"

[bindings.main]
provider = "replay"
model = "recorded"
-- prompts/answer.md --
Answer the question: {{ q.text }}
-- nodes/answer.node.ael --
struct Question { text: Str<200> }
struct Answer { text: Str<200> }

errors AnswerError { blank }

check not_blank(q: Question) fails AnswerError {
    require q.text.trim().len() > 0 else blank;
}

node answer(q: Question) -> Answer fails AnswerError {
    config {
        prompt: file("prompts/answer.md");
        model: binding("main");
    }
    output {
        check not_blank;
    }
}
-- fix --
-- nodes/answer.node.ael --
struct Question { text: Str<200> }
struct Answer { text: Str<200> }

errors AnswerError { blank }

check not_blank(q: Question) fails AnswerError {
    require q.text.trim().len() > 0 else blank;
}

node answer(q: Question) -> Answer fails AnswerError {
    config {
        prompt: file("prompts/answer.md");
        model: binding("main");
    }
    input {
        check not_blank;
    }
}"#,
    },
    CodeInfo {
        code: "E0507",
        title: "transform signature",
        explanation: "A transform is `fn(output: Output) -> Output` for the node's output type.",
        example: r#"-- ael.toml --
[package]
name = "acme/demo"
version = "0.1.0"

[bindings.main]
provider = "replay"
model = "recorded"
-- prompts/answer.md --
Answer the question: {{ q.text }}
-- nodes/answer.node.ael --
struct Question { text: Str<200> }
struct Answer { text: Str<200> }

fn shout(q: Question) -> Str<200> { q.text.to_upper() }

node answer(q: Question) -> Answer {
    config {
        prompt: file("prompts/answer.md");
        model: binding("main");
    }
    output {
        transform shout;
    }
}
-- fix --
-- nodes/answer.node.ael --
struct Question { text: Str<200> }
struct Answer { text: Str<200> }

fn shout(a: Answer) -> Answer { Answer { text: a.text.to_upper() } }

node answer(q: Question) -> Answer {
    config {
        prompt: file("prompts/answer.md");
        model: binding("main");
    }
    output {
        transform shout;
    }
}"#,
    },
    CodeInfo {
        code: "E0508",
        title: "misplaced fail policy",
        explanation: "`fail(code)` ends the failure policy: at most one, and only last.",
        example: r#"-- ael.toml --
[package]
name = "acme/demo"
version = "0.1.0"

[bindings.main]
provider = "replay"
model = "recorded"
-- prompts/answer.md --
Answer the question: {{ q.text }}
-- nodes/answer.node.ael --
struct Question { text: Str<200> }
struct Answer { text: Str<200> }

errors AnswerError { unanswerable }

node answer(q: Question) -> Answer fails AnswerError {
    config {
        prompt: file("prompts/answer.md");
        model: binding("main");
    }
    output {
        on_failure: fail(unanswerable), retry(1);
    }
}
-- fix --
-- nodes/answer.node.ael --
struct Question { text: Str<200> }
struct Answer { text: Str<200> }

errors AnswerError { unanswerable }

node answer(q: Question) -> Answer fails AnswerError {
    config {
        prompt: file("prompts/answer.md");
        model: binding("main");
    }
    output {
        on_failure: retry(1), fail(unanswerable);
    }
}"#,
    },
    CodeInfo {
        code: "E0510",
        title: "several inputs without combine",
        explanation: "A node with two or more parameters must say how inputs combine: `inputs { combine: together | latest | zip; }`. There is no default.",
        example: r#"-- ael.toml --
[package]
name = "acme/demo"
version = "0.1.0"

[bindings.main]
provider = "replay"
model = "recorded"
-- prompts/answer.md --
Answer the question: {{ q.text }}
-- nodes/answer.node.ael --
struct Question { text: Str<200> }
struct Answer { text: Str<200> }

struct Context { notes: Str<500> }

node answer(q: Question, c: Context) -> Answer {
    config {
        prompt: file("prompts/answer.md");
        model: binding("main");
    }
}
-- fix --
-- nodes/answer.node.ael --
struct Question { text: Str<200> }
struct Answer { text: Str<200> }

struct Context { notes: Str<500> }

node answer(q: Question, c: Context) -> Answer {
    config {
        prompt: file("prompts/answer.md");
        model: binding("main");
    }
    inputs {
        combine: together;
    }
}"#,
    },
    CodeInfo {
        code: "E0511",
        title: "fresh names no parameter",
        explanation: "`fresh:` bounds the age of named parameters; the name must be a parameter of the node.",
        example: r#"-- ael.toml --
[package]
name = "acme/demo"
version = "0.1.0"

[bindings.main]
provider = "replay"
model = "recorded"
-- prompts/answer.md --
Answer the question: {{ q.text }}
-- nodes/answer.node.ael --
struct Question { text: Str<200> }
struct Answer { text: Str<200> }

struct Context { notes: Str<500> }

node answer(q: Question, c: Context) -> Answer {
    config {
        prompt: file("prompts/answer.md");
        model: binding("main");
    }
    inputs {
        combine: latest;
        fresh: qq 200ms, c 1s;
    }
}
-- fix --
-- nodes/answer.node.ael --
struct Question { text: Str<200> }
struct Answer { text: Str<200> }

struct Context { notes: Str<500> }

node answer(q: Question, c: Context) -> Answer {
    config {
        prompt: file("prompts/answer.md");
        model: binding("main");
    }
    inputs {
        combine: latest;
        fresh: q 200ms, c 1s;
    }
}"#,
    },
    CodeInfo {
        code: "E0512",
        title: "publish on a node",
        explanation: "Only agents are published; declare it `agent`.",
        example: r#"-- ael.toml --
[package]
name = "acme/demo"
version = "0.1.0"

[bindings.main]
provider = "replay"
model = "recorded"
-- prompts/answer.md --
Answer the question: {{ q.text }}
-- nodes/answer.node.ael --
struct Question { text: Str<200> }
struct Answer { text: Str<200> }

node answer(q: Question) -> Answer {
    config {
        prompt: file("prompts/answer.md");
        model: binding("main");
    }
    publish {
        capability: "qa.answer";
    }
}
-- fix --
-- nodes/answer.node.ael --
struct Question { text: Str<200> }
struct Answer { text: Str<200> }

agent answer(q: Question) -> Answer {
    config {
        prompt: file("prompts/answer.md");
        model: binding("main");
    }
    publish {
        capability: "qa.answer";
    }
}"#,
    },
    CodeInfo {
        code: "E0513",
        title: "part kind not accepted",
        explanation: "A builder produces parts (image, audio, …) that the binding's `accepts` in ael.toml does not list.",
        example: r#"-- ael.toml --
[package]
name = "acme/demo"
version = "0.1.0"

[bindings.main]
provider = "replay"
model = "recorded"
-- nodes/describe.node.ael --
struct Photo { image: Image<5MiB> @types("image/png") }
struct Caption { text: Str<200> }

builder parts(p: Photo) -> Parts {
    text("Describe this picture.")
    image(p.image)
}

node describe(p: Photo) -> Caption {
    config {
        model: binding("main");
    }
    input {
        builder parts;
    }
}
-- fix --
-- ael.toml --
[package]
name = "acme/demo"
version = "0.1.0"

[bindings.main]
provider = "replay"
model = "recorded"
accepts = ["text", "image"]"#,
    },
    CodeInfo {
        code: "E0514",
        title: "raw output",
        explanation: "`raw;` needs `parse: f;` with `extern fn f(raw: Raw) -> Output`, and `parse:` needs `raw;`.",
        example: r#"-- ael.toml --
[package]
name = "acme/demo"
version = "0.1.0"

[bindings.main]
provider = "replay"
model = "recorded"
-- prompts/answer.md --
Answer the question: {{ q.text }}
-- nodes/answer.node.ael --
struct Question { text: Str<200> }
struct Answer { text: Str<200> }

node answer(q: Question) -> Answer {
    config {
        prompt: file("prompts/answer.md");
        model: binding("main");
    }
    output {
        raw;
    }
}
-- fix --
-- nodes/answer.node.ael --
struct Question { text: Str<200> }
struct Answer { text: Str<200> }

extern fn parse_answer(raw: Raw) -> Answer;

node answer(q: Question) -> Answer {
    config {
        prompt: file("prompts/answer.md");
        model: binding("main");
    }
    output {
        raw;
        parse: parse_answer;
    }
}"#,
    },
    CodeInfo {
        code: "E0515",
        title: "invalid builder",
        explanation: "A builder returns `Parts`, takes the node's parameters and lists parts `system text image audio video file` with one argument each.",
        example: r#"-- ael.toml --
[package]
name = "acme/demo"
version = "0.1.0"

[bindings.main]
provider = "replay"
model = "recorded"
-- prompts/answer.md --
Answer the question: {{ q.text }}
-- nodes/answer.node.ael --
struct Question { text: Str<200> }
struct Answer { text: Str<200> }

builder parts(q: Question) -> Str<10> {
    text(q.text)
}

node answer(q: Question) -> Answer {
    config {
        model: binding("main");
    }
    input {
        builder parts;
    }
}
-- fix --
-- nodes/answer.node.ael --
struct Question { text: Str<200> }
struct Answer { text: Str<200> }

builder parts(q: Question) -> Parts {
    text(q.text)
}

node answer(q: Question) -> Answer {
    config {
        model: binding("main");
    }
    input {
        builder parts;
    }
}"#,
    },
    CodeInfo {
        code: "E0516",
        title: "unknown failure policy",
        explanation: "Policies are `retry(n)`, `repair(n)`, `fallback(binding(\"…\"))` and `fail(code)`.",
        example: r#"-- ael.toml --
[package]
name = "acme/demo"
version = "0.1.0"

[bindings.main]
provider = "replay"
model = "recorded"
-- prompts/answer.md --
Answer the question: {{ q.text }}
-- nodes/answer.node.ael --
struct Question { text: Str<200> }
struct Answer { text: Str<200> }

node answer(q: Question) -> Answer {
    config {
        prompt: file("prompts/answer.md");
        model: binding("main");
    }
    output {
        on_failure: retyr(2);
    }
}
-- fix --
-- nodes/answer.node.ael --
struct Question { text: Str<200> }
struct Answer { text: Str<200> }

node answer(q: Question) -> Answer {
    config {
        prompt: file("prompts/answer.md");
        model: binding("main");
    }
    output {
        on_failure: retry(2);
    }
}"#,
    },
    CodeInfo {
        code: "E0517",
        title: "budget in another currency",
        explanation: "A node's `budget { max_cost: … }` is in another currency than the price of a binding it may call. Each model call reserves its worst case, at the binding's price, out of `max_cost` before it is made; amounts in two currencies cannot be compared, and money is never converted.",
        example: r#"-- ael.toml --
[package]
name = "acme/demo"
version = "0.1.0"

[bindings.main]
provider = "replay"
model = "recorded"
price = { input_per_mtok = 0.15, output_per_mtok = 0.60, currency = "USD" }
-- prompts/answer.md --
Answer the question: {{ q.text }}
-- nodes/answer.node.ael --
struct Question { text: Str<200> }
struct Answer { text: Str<200> }

node answer(q: Question) -> Answer {
    config {
        prompt: file("prompts/answer.md");
        model: binding("main");
    }
    budget {
        max_cost: 0.05 EUR;
    }
}
-- fix --
-- nodes/answer.node.ael --
struct Question { text: Str<200> }
struct Answer { text: Str<200> }

node answer(q: Question) -> Answer {
    config {
        prompt: file("prompts/answer.md");
        model: binding("main");
    }
    budget {
        max_cost: 0.05 USD;
    }
}"#,
    },
    CodeInfo {
        code: "E0701",
        title: "template type error",
        explanation: "An expression of a prompt template (`{{ … }}`, `{% if %}`, `{% for %}`) has the wrong type; it is reported at its line and column in the `.md` file.",
        example: r#"-- ael.toml --
[package]
name = "acme/demo"
version = "0.1.0"

[bindings.main]
provider = "replay"
model = "recorded"
-- prompts/answer.md --
{% for word in q.text %}{{ word }} {% end %}
-- nodes/answer.node.ael --
struct Question { text: Str<200> }
struct Answer { text: Str<200> }

node answer(q: Question) -> Answer {
    config {
        prompt: file("prompts/answer.md");
        model: binding("main");
    }
}
-- fix --
-- prompts/answer.md --
Answer the question: {{ q.text }}"#,
    },
    CodeInfo {
        code: "E0702",
        title: "template expression does not parse",
        explanation: "The expression inside a `{{ … }}`, `{% if … %}` or `{% for NAME in … %}` tag is an AEL expression (spec §6) and must parse as one; the message is the parser's, at its line and column in the `.md` file. The tags themselves have their own codes: never closed `E0720`, unknown `E0721`, `else`/`end` with nothing open `E0722`, a block never closed `E0723`, a tag of the wrong shape `E0724`, blocks nested too deeply `E0725`.",
        example: r#"-- ael.toml --
[package]
name = "acme/demo"
version = "0.1.0"

[bindings.main]
provider = "replay"
model = "recorded"
-- prompts/answer.md --
Answer the question: {{ q.text + }}
-- nodes/answer.node.ael --
struct Question { text: Str<200> }
struct Answer { text: Str<200> }

node answer(q: Question) -> Answer {
    config {
        prompt: file("prompts/answer.md");
        model: binding("main");
    }
}
-- fix --
-- prompts/answer.md --
Answer the question: {{ q.text }}"#,
    },
    CodeInfo {
        code: "W0201",
        title: "unused import",
        explanation: "An imported name is never used; remove it from the `use`.",
        example: r#"use types::common::{Review, Severity};

fn short(r: Review) -> bool { r.summary.len() < 10 }
-- types/common.ael --
enum Severity { low, high }
struct Review { summary: Str<100> }
-- fix --
use types::common::Review;

fn short(r: Review) -> bool { r.summary.len() < 10 }"#,
    },
    CodeInfo {
        code: "W0501",
        title: "max_answer below the largest answer",
        explanation: "An explicit `max_answer` is below the largest JSON encoding of the output type (plus one code fence), so a valid answer may be rejected as too large. The largest encoding counts how a model may write a value: every character escaped (12 bytes for one beyond U+FFFF), numbers as JSON writers print them, pretty-printed with up to four spaces per level.",
        example: r#"-- ael.toml --
[package]
name = "acme/demo"
version = "0.1.0"

[bindings.main]
provider = "replay"
model = "recorded"
-- prompts/answer.md --
Answer the question: {{ q.text }}
-- nodes/answer.node.ael --
struct Question { text: Str<200> }
struct Answer { text: Str<200> }

node answer(q: Question) -> Answer {
    config {
        prompt: file("prompts/answer.md");
        model: binding("main");
        max_answer: 100B;
    }
}
-- fix --
-- nodes/answer.node.ael --
struct Question { text: Str<200> }
struct Answer { text: Str<200> }

node answer(q: Question) -> Answer {
    config {
        prompt: file("prompts/answer.md");
        model: binding("main");
    }
}"#,
    },
    CodeInfo {
        code: "W0502",
        title: "max_answer far above the largest answer",
        explanation: "An explicit `max_answer` is more than four times the largest encoding of the output type; the model is asked for far more tokens than any valid answer needs.",
        example: r#"-- ael.toml --
[package]
name = "acme/demo"
version = "0.1.0"

[bindings.main]
provider = "replay"
model = "recorded"
-- prompts/answer.md --
Answer the question: {{ q.text }}
-- nodes/answer.node.ael --
struct Question { text: Str<200> }
struct Answer { text: Str<200> }

node answer(q: Question) -> Answer {
    config {
        prompt: file("prompts/answer.md");
        model: binding("main");
        max_answer: 1GiB;
    }
}
-- fix --
-- nodes/answer.node.ael --
struct Question { text: Str<200> }
struct Answer { text: Str<200> }

node answer(q: Question) -> Answer {
    config {
        prompt: file("prompts/answer.md");
        model: binding("main");
    }
}"#,
    },
];
