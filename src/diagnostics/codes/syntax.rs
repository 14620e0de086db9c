//! Diagnostic codes of the `syntax` layer: `E00xx` lexing, `E01xx` parsing, `W00xx` warnings.
//!
//! Each `example` is a small archive of files with its fix (`-- PATH --`, `-- fix --`; see
//! `book/src/diagnostics.md`), executed by `tests/it/book.rs`.

use super::CodeInfo;

pub(super) static CODES: &[CodeInfo] = &[
    CodeInfo {
        code: "E0001",
        title: "invalid UTF-8",
        explanation: "AEL source files, `ael.toml` and prompt templates are UTF-8. The first \
                      byte that is not part of a valid UTF-8 sequence is reported with its byte \
                      offset; the rest of the file is still checked, with the bad bytes \
                      replaced, and a prompt template that is not UTF-8 is never used.",
        example: r#"-- main.ael (latin-1) --
/// A café order.
struct Order { item: Str<20> }
-- fix --
-- main.ael --
/// A café order.
struct Order { item: Str<20> }"#,
    },
    CodeInfo {
        code: "E0002",
        title: "unexpected character",
        explanation: "No token starts with this character. Identifiers are ASCII \
                      (`[A-Za-z_][A-Za-z0-9_]*`); other text belongs in strings.",
        example: r#"struct Café { x: u8 }
-- fix --
struct Cafe { x: u8 }"#,
    },
    CodeInfo {
        code: "E0003",
        title: "number too large",
        explanation: "Integer literals must fit in 64 bits (at most 18446744073709551615).",
        example: r#"struct A { x: u64 = 18446744073709551616 }
-- fix --
struct A { x: u64 = 18446744073709551615 }"#,
    },
    CodeInfo {
        code: "E0004",
        title: "unknown unit",
        explanation: "A number written directly before letters is a duration (`ms s m h`) or \
                      a size (`B KiB MiB GiB kB MB GB`). Any other suffix is an error.",
        example: r#"stream Readings of Reading {
    chunk: 1KiB;
    buffer: 64KiB;
    rate: 50/s;
    duration: 5min;
    fresh: 500ms;
    on_full: reject;
    duplicates: reject;
    stale: reject;
}
struct Reading { celsius: f64 }
-- fix --
stream Readings of Reading {
    chunk: 1KiB;
    buffer: 64KiB;
    rate: 50/s;
    duration: 5m;
    fresh: 500ms;
    on_full: reject;
    duplicates: reject;
    stale: reject;
}
struct Reading { celsius: f64 }"#,
    },
    CodeInfo {
        code: "E0005",
        title: "fractional duration or size",
        explanation: "Durations and sizes are whole numbers of their unit; write a smaller \
                      unit instead of a fraction.",
        example: r#"stream Readings of Reading {
    chunk: 1KiB;
    buffer: 64KiB;
    rate: 50/s;
    duration: 5m;
    fresh: 1.5s;
    on_full: reject;
    duplicates: reject;
    stale: reject;
}
struct Reading { celsius: f64 }
-- fix --
stream Readings of Reading {
    chunk: 1KiB;
    buffer: 64KiB;
    rate: 50/s;
    duration: 5m;
    fresh: 1500ms;
    on_full: reject;
    duplicates: reject;
    stale: reject;
}
struct Reading { celsius: f64 }"#,
    },
    CodeInfo {
        code: "E0006",
        title: "invalid escape",
        explanation: "Strings accept the escapes `\\n \\t \\r \\\\ \\\" \\0` and `\\u{…}` (1 to 6 \
                      hex digits naming a Unicode scalar value). Patterns, which use many \
                      backslashes, read best as raw strings `r\"…\"`.",
        example: r#"type Digits = Str<8> @pattern("^\d+$");
-- fix --
type Digits = Str<8> @pattern(r"^[0-9]+$");"#,
    },
    CodeInfo {
        code: "E0007",
        title: "unterminated string",
        explanation: "A string or raw string is never closed. A raw string `r#\"…\"#` closes \
                      only with a quote followed by as many `#` as it opened with.",
        example: r#"type Code = Str<8> @pattern("never closed);
-- fix --
type Code = Str<8> @pattern("^[a-z]+$");"#,
    },
    CodeInfo {
        code: "E0008",
        title: "unterminated block comment",
        explanation: "Block comments nest: every `/*` needs its own `*/`.",
        example: r#"/* open /* nested */ but never closed
struct A { x: u8 }
-- fix --
/* open /* nested */ and closed */
struct A { x: u8 }"#,
    },
    CodeInfo {
        code: "E0009",
        title: "unknown rate unit",
        explanation: "A number directly followed by `/` and letters is a rate: `50/s`, \
                      `600/m`, `10/h`. For a division, put spaces around `/`.",
        example: r#"stream Readings of Reading {
    chunk: 1KiB;
    buffer: 64KiB;
    rate: 10/x;
    duration: 5m;
    fresh: 500ms;
    on_full: reject;
    duplicates: reject;
    stale: reject;
}
struct Reading { celsius: f64 }
-- fix --
stream Readings of Reading {
    chunk: 1KiB;
    buffer: 64KiB;
    rate: 10/s;
    duration: 5m;
    fresh: 500ms;
    on_full: reject;
    duplicates: reject;
    stale: reject;
}
struct Reading { celsius: f64 }"#,
    },
    CodeInfo {
        code: "E0010",
        title: "too many `#` in a raw string",
        explanation: "A raw string may open with at most 255 `#`.",
        example: "type T = Str<8> @pattern(r################################################################################################################################################################################################################################################################\"^x$\"################################################################################################################################################################################################################################################################);\n-- fix --\ntype T = Str<8> @pattern(r#\"^x$\"#);",
    },
    CodeInfo {
        code: "E0011",
        title: "module too large",
        explanation: "A module may hold at most 2 MiB (2,097,152 bytes). A larger file is \
                      refused whole, before it is parsed, by `aelc check` and by the language \
                      server alike: the language server needs about 120 bytes of memory for \
                      each byte of source, so the bound keeps one file from taking gigabytes. \
                      Hand-written modules are a thousand times smaller; split a generated one \
                      into modules and `use` them.",
        example: r#"-- main.ael (repeated past 2 MiB) --
/// One of many generated types.
struct Row { id: u32, name: Str<40> }
-- fix --
-- main.ael --
/// One of many generated types.
struct Row { id: u32, name: Str<40> }"#,
    },
    CodeInfo {
        code: "E0101",
        title: "unexpected token",
        explanation: "The parser expected something else here. The message lists what would \
                      have been accepted; the parser then skips to the next field, entry or \
                      item and keeps going, so later errors are still reported.",
        example: r#"struct S { a: u8 b: u8 }
-- fix --
struct S { a: u8, b: u8 }"#,
    },
    CodeInfo {
        code: "E0102",
        title: "`if` without `else`",
        explanation: "`if` is an expression: it needs a value in both cases, so `else` is \
                      required. Chains are written `if a { … } else if b { … } else { … }`.",
        example: r#"fn f(a: bool) -> u8 { if a { 1 } }
-- fix --
fn f(a: bool) -> u8 { if a { 1 } else { 0 } }"#,
    },
    CodeInfo {
        code: "E0103",
        title: "chained comparison",
        explanation: "Comparison operators do not associate: `a < b < c` is not `a < b && b \
                      < c`. Write the conjunction, or add parentheses.",
        example: r#"fn f(a: u8, b: u8, c: u8) -> bool { a < b < c }
-- fix --
fn f(a: u8, b: u8, c: u8) -> bool { a < b && b < c }"#,
    },
    CodeInfo {
        code: "E0104",
        title: "nested too deeply",
        explanation: "Brackets, or runs of prefix operators, may nest at most 128 levels. \
                      Chains count as nesting too: `a + b + c`, `x.a.b`, `else if` and \
                      `List<List<…>>` each add a level per link, up to the next `,` or `;`. \
                      Deeper input is refused so that no input can exhaust the compiler's \
                      stack; name the parts instead.",
        example: r#"fn f() -> u8 { (((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((1))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))) }
-- fix --
fn f() -> u8 { 1 }"#,
    },
    CodeInfo {
        code: "W0001",
        title: "doc comment documents nothing",
        explanation: "A `///` comment documents the item, field, variant or error code that \
                      follows it. One followed by nothing of the kind (the end of the file, a \
                      closing brace, an entry) is dropped; write `//` for a plain comment \
                      (`aelc fmt` does, so that moving it cannot make it document something).",
        example: r#"struct A { x: u8 }
/// documents nothing
-- fix --
/// Documents `A`.
struct A { x: u8 }"#,
    },
];
