//! Diagnostic codes of `ael.toml` (`src/project.rs`, `E06xx`/`W06xx`), of prompt-template
//! syntax (`E072x`) and of `@pattern` syntax (`src/sema/pattern.rs`, `E0350`).
//!
//! Each `example` is a small archive of files with its fix (`-- PATH --`, `-- fix --`; see
//! `book/src/diagnostics.md`), executed by `tests/it/book.rs`.

use super::CodeInfo;

pub(super) static CODES: &[CodeInfo] = &[
    CodeInfo {
        code: "E0350",
        title: "pattern outside the common regex syntax",
        explanation: "A `@pattern` (or `matches`) is run by RE2 (the gateway), by ECMA-262 engines (other JSON Schema validators) and by the Rust `regex` crate (the runtime), so only their common syntax is accepted: literals, `.`, `^`, `$`, classes of literals and ranges, groups `(…)` and `(?:…)`, alternation and the quantifiers `* + ? {n} {m,} {m,n}` (counts up to 1000, lazy forms too), and the escapes `\\xHH \\t \\n \\r \\f \\v` and of the syntax characters. Anything else is refused here, each with a fix: backreferences, lookaround, atomic groups and possessive quantifiers, `\\p{…}` classes, class set operations, nested and POSIX classes, inline flags, named groups, `\\A \\z`, other escapes, repetition counts over 1000, and text that is no regex at all (`(abc`). Constructs that every engine accepts but reads differently (`\\d \\w \\s \\b`) are `E0307`.",
        example: r#"type Digits = Str<8> @pattern(r"^(a)\1$");
-- fix --
type Digits = Str<8> @pattern(r"^(aa)$");"#,
    },
    CodeInfo {
        code: "E0600",
        title: "ael.toml is not valid TOML",
        explanation: "`ael.toml` must be a TOML document (https://toml.io). The error points at the first place the parser could not read; a key written twice is such an error too.",
        example: r#"-- ael.toml --
[package
name = "acme/review"
version = "0.1.0"
-- fix --
-- ael.toml --
[package]
name = "acme/review"
version = "0.1.0""#,
    },
    CodeInfo {
        code: "E0601",
        title: "unknown key in ael.toml",
        explanation: "Every key of `ael.toml` has a meaning; a key the compiler does not know is an error rather than silently ignored, because it is usually a typo of one that matters (`[binding.x]` for `[bindings.x]`). The help names the closest known key. The keys: `[package]` name, version, description; `[bindings.NAME]` provider, model, base_url, api_key_env, accepts, price (input_per_mtok, output_per_mtok, currency); `[limits]` max_input_bytes, max_stored_bytes_per_account.",
        example: r#"-- ael.toml --
[package]
name = "acme/review"
versoin = "0.1.0"
-- fix --
-- ael.toml --
[package]
name = "acme/review"
version = "0.1.0""#,
    },
    CodeInfo {
        code: "E0602",
        title: "wrong type of value in ael.toml",
        explanation: "Each key of `ael.toml` takes one kind of value: text for names, versions, providers and models, an array of strings for `accepts`, a table for `price`, an integer for the `[limits]` keys.",
        example: r#"-- ael.toml --
[package]
name = "acme/review"
version = 1
-- fix --
-- ael.toml --
[package]
name = "acme/review"
version = "1.0.0""#,
    },
    CodeInfo {
        code: "E0603",
        title: "missing required key in ael.toml",
        explanation: "`[package]` needs `name` and `version`; each binding needs `provider` and `model`; a `price` needs `input_per_mtok`, `output_per_mtok` and `currency`.",
        example: r#"-- ael.toml --
[package]
name = "acme/review"
-- fix --
-- ael.toml --
[package]
name = "acme/review"
version = "0.1.0""#,
    },
    CodeInfo {
        code: "E0604",
        title: "secret written in ael.toml",
        explanation: "`ael.toml` is committed and published with the project, so it must never hold a credential. A binding names the environment variable that holds its key (`api_key_env = \"OPENAI_API_KEY\"`); keys such as `api_key`, `token` or `password`, and an `api_key_env` whose value looks like a key itself, are refused.",
        example: r#"-- ael.toml --
[package]
name = "acme/review"
version = "0.1.0"

[bindings.main]
provider = "openai"
model = "gpt-4o-mini"
api_key = "sk-proj-…"
-- fix --
-- ael.toml --
[package]
name = "acme/review"
version = "0.1.0"

[bindings.main]
provider = "openai"
model = "gpt-4o-mini"
api_key_env = "OPENAI_API_KEY""#,
    },
    CodeInfo {
        code: "E0605",
        title: "invalid package name",
        explanation: "A package is named `owner/name`; each part has 1 to 64 lowercase ASCII letters, digits, `-` and `_`, starting with a letter or digit. The name identifies the published agents.",
        example: r#"-- ael.toml --
[package]
name = "Review"
version = "0.1.0"
-- fix --
-- ael.toml --
[package]
name = "acme/review"
version = "0.1.0""#,
    },
    CodeInfo {
        code: "E0606",
        title: "invalid package version",
        explanation: "A version is `MAJOR.MINOR.PATCH` (numbers without leading zeros), optionally followed by `-pre.release` and `+build` labels, as in semantic versioning.",
        example: r#"-- ael.toml --
[package]
name = "acme/review"
version = "1.0"
-- fix --
-- ael.toml --
[package]
name = "acme/review"
version = "1.0.0""#,
    },
    CodeInfo {
        code: "E0607",
        title: "unknown provider",
        explanation: "A binding's `provider` is `openai` (any OpenAI-compatible endpoint, with `base_url`), `anthropic`, `gemini` (the Gemini API), or `replay` (answers replayed from examples, for tests).",
        example: r#"-- ael.toml --
[package]
name = "acme/review"
version = "0.1.0"

[bindings.main]
provider = "openia"
model = "gpt-4o-mini"
-- fix --
-- ael.toml --
[package]
name = "acme/review"
version = "0.1.0"

[bindings.main]
provider = "openai"
model = "gpt-4o-mini""#,
    },
    CodeInfo {
        code: "E0608",
        title: "unknown part kind",
        explanation: "`accepts` lists the kinds of parts the endpoint takes: `text`, `image`, `audio`, `video`, `file`. The compiler checks every node's input parts against it.",
        example: r#"-- ael.toml --
[package]
name = "acme/review"
version = "0.1.0"

[bindings.main]
provider = "openai"
model = "gpt-4o-mini"
accepts = ["text", "picture"]
-- fix --
-- ael.toml --
[package]
name = "acme/review"
version = "0.1.0"

[bindings.main]
provider = "openai"
model = "gpt-4o-mini"
accepts = ["text", "image"]"#,
    },
    CodeInfo {
        code: "E0609",
        title: "malformed value in ael.toml",
        explanation: "A value has the right type but not the right shape: a `base_url` must be an `http://` or `https://` URL, an `api_key_env` an environment variable name, a price a plain non-negative decimal (kept exactly as written, never as a float), a currency three capital letters (ISO 4217), `constrain` one of `grammar`, `schema`, `output_format` or `none` (`grammar` only with `provider = \"openai\"`, `output_format` only with `provider = \"anthropic\"`).",
        example: r#"-- ael.toml --
[package]
name = "acme/review"
version = "0.1.0"

[bindings.main]
provider = "openai"
model = "gpt-4o-mini"
price = { input_per_mtok = -1, output_per_mtok = 0.6, currency = "EUR" }
-- fix --
-- ael.toml --
[package]
name = "acme/review"
version = "0.1.0"

[bindings.main]
provider = "openai"
model = "gpt-4o-mini"
price = { input_per_mtok = 0.15, output_per_mtok = 0.6, currency = "EUR" }"#,
    },
    CodeInfo {
        code: "E0610",
        title: "unusable limit",
        explanation: "Each key of `[limits]` is a positive number of bytes. `max_input_bytes` is the largest input payload the runtime accepts (`runtime.limits.max_input_bytes` in the manifest; default 1048576, 1 MiB); `max_stored_bytes_per_account` is the most a gateway account's uploaded files may take (default 1073741824, 1 GiB).",
        example: r#"-- ael.toml --
[package]
name = "acme/review"
version = "0.1.0"

[limits]
max_input_bytes = 0
-- fix --
-- ael.toml --
[package]
name = "acme/review"
version = "0.1.0"

[limits]
max_input_bytes = 65536"#,
    },
    CodeInfo {
        code: "E0611",
        title: "invalid binding name",
        explanation: "Bindings are named from AEL as `binding(\"name\")` and in generated code, so a binding's name must be an identifier: letters, digits and `_`, not starting with a digit.",
        example: r#"-- ael.toml --
[package]
name = "acme/review"
version = "0.1.0"

[bindings."my model"]
provider = "openai"
model = "gpt-4o-mini"
-- fix --
-- ael.toml --
[package]
name = "acme/review"
version = "0.1.0"

[bindings.my_model]
provider = "openai"
model = "gpt-4o-mini""#,
    },
    CodeInfo {
        code: "W0600",
        title: "part kind listed twice",
        explanation: "A part kind in `accepts` is listed more than once; the repetition has no effect.",
        example: r#"-- ael.toml --
[package]
name = "acme/review"
version = "0.1.0"

[bindings.main]
provider = "openai"
model = "gpt-4o-mini"
accepts = ["text", "text"]
-- fix --
-- ael.toml --
[package]
name = "acme/review"
version = "0.1.0"

[bindings.main]
provider = "openai"
model = "gpt-4o-mini"
accepts = ["text"]"#,
    },
    CodeInfo {
        code: "E0720",
        title: "unclosed template tag",
        explanation: "In a prompt template, every `{{` needs its `}}` and every `{%` its `%}`. A tag whose close comes only after the next tag opens (`{{ a }` … `{{ b }}`) is unclosed too: the error points at the opening that was never closed, and checking goes on from the next tag. To write `{{` as text, there is no escape in v0: rephrase it.",
        example: r#"-- ael.toml --
[package]
name = "acme/demo"
version = "0.1.0"

[bindings.main]
provider = "replay"
model = "recorded"
-- prompts/answer.md --
Answer the question: {{ q.text
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
        code: "E0721",
        title: "unknown template tag",
        explanation: "The tags of a prompt template are `{% if COND %}`, `{% else %}`, `{% for NAME in LIST %}` and `{% end %}` (spec §6); the help names the AEL spelling of tags from other template languages. There is no `elif` (nest an `if` in the `else`), no `unless` (write `{% if !COND %}`), and every block is closed by `{% end %}`, not `endif` or `endfor`.",
        example: r#"-- ael.toml --
[package]
name = "acme/demo"
version = "0.1.0"

[bindings.main]
provider = "replay"
model = "recorded"
-- prompts/answer.md --
{% unless q.text.is_empty() %}Answer the question: {{ q.text }}{% end %}
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
{% if !q.text.is_empty() %}Answer the question: {{ q.text }}{% end %}"#,
    },
    CodeInfo {
        code: "E0722",
        title: "`else` or `end` without an opening tag",
        explanation: "`{% else %}` continues the nearest open `{% if %}` and `{% end %}` closes the nearest open `if` or `for`; here there is none, the `if` already has its `else`, or the nearest open block is a `for` (close it first).",
        example: r#"-- ael.toml --
[package]
name = "acme/demo"
version = "0.1.0"

[bindings.main]
provider = "replay"
model = "recorded"
-- prompts/answer.md --
Answer the question: {{ q.text }}{% end %}
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
        code: "E0723",
        title: "template block never closed",
        explanation: "Every `{% if %}` and `{% for %}` needs its `{% end %}`; the error points at the opening tag.",
        example: r#"-- ael.toml --
[package]
name = "acme/demo"
version = "0.1.0"

[bindings.main]
provider = "replay"
model = "recorded"
-- prompts/answer.md --
{% if q.text.ends_with("?") %}Answer the question: {{ q.text }}
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
{% if q.text.ends_with("?") %}Answer the question: {{ q.text }}{% end %}"#,
    },
    CodeInfo {
        code: "E0724",
        title: "malformed template tag",
        explanation: "A known tag has the wrong shape: `{{ }}` or `{% %}` with nothing inside, `{% if %}` with no condition, a `for` not written `{% for NAME in LIST %}` (NAME an identifier), or `{% else %}` and `{% end %}` followed by anything.",
        example: r#"-- ael.toml --
[package]
name = "acme/demo"
version = "0.1.0"

[bindings.main]
provider = "replay"
model = "recorded"
-- prompts/answer.md --
{% if %}Answer the question: {{ q.text }}{% end %}
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
{% if q.text.ends_with("?") %}Answer the question: {{ q.text }}{% end %}"#,
    },
    CodeInfo {
        code: "E0725",
        title: "template blocks nested too deeply",
        explanation: "In a prompt template, `{% if %}` and `{% for %}` blocks may nest at most 128 levels, the bound of brackets in AEL source (`E0104`). The lowered template is a tree that the compiler and the runtime walk recursively, so a deeper one could exhaust the stack: the tag that goes deeper is reported and the rest of the template is not checked. Join conditions with `&&` instead of nesting `if`s.",
        example: r#"-- ael.toml --
[package]
name = "acme/demo"
version = "0.1.0"

[bindings.main]
provider = "replay"
model = "recorded"
-- prompts/answer.md --
{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}{% if q.text.is_empty() %}Answer the question: {{ q.text }}
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
{% if q.text.is_empty() %}Answer the question: {{ q.text }}{% end %}"#,
    },
];
