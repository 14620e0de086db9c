//! Generated AEL projects of a chosen size, shared by the `check` and `build` benchmarks.
//!
//! A project is made of *domains*. Domain `k` is three files:
//! - `types/t{k}.ael`: unit and data enums (one `@tag`ged), structs whose fields carry bounds,
//!   refinements, `@pattern`/`@format` attributes, defaults, options, lists, sets and maps, an
//!   alias, an `errors` set, checks and `fn`s; it `use`s the previous domain's types, so names
//!   resolve across modules;
//! - `nodes/n{k}.node.ael`: request and answer types, checks and transforms over them, an
//!   `extern fn`, a node with a body, a node wired to checks/transform/failure policy/budget, a
//!   node with two inputs, and a published agent; it `use`s its domain's types module;
//! - `prompts/p{k}.md`: the prompt template of the domain's nodes, using `{{ }}`, `{% if %}`
//!   and `{% for %}` over the request.
//!
//! The text is what an author would write, so sema does the work it does on real projects:
//! every rule that applies to these items runs, and the project checks clean (the benchmarks
//! assert it, so a generator that drifts from the language fails loudly instead of timing error
//! paths).

#![allow(dead_code)] // each benchmark uses part of it

pub mod cold;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use aelc::driver::MemoryWorld;

/// Structs per types module (each with a check and a `fn`).
const STRUCTS: usize = 6;

/// A generated project, as files relative to its root.
pub struct Project {
    pub files: Vec<(String, String)>,
    /// Lines of the `.ael` modules (prompts and `ael.toml` not counted).
    pub ael_lines: usize,
    pub domains: usize,
}

impl Project {
    /// The project under `root` in a [`MemoryWorld`] (no disk).
    pub fn world(&self, root: &Path) -> MemoryWorld {
        let mut world = MemoryWorld::new();
        for (path, text) in &self.files {
            world
                .files
                .insert(root.join(path), text.clone().into_bytes());
        }
        world
    }

    /// Writes the project under `root` (which must not exist or be empty).
    pub fn write(&self, root: &Path) -> std::io::Result<()> {
        for (path, text) in &self.files {
            let full: PathBuf = root.join(path);
            if let Some(parent) = full.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(full, text)?;
        }
        Ok(())
    }
}

const MANIFEST: &str = r#"[package]
name = "bench/generated"
version = "0.1.0"
description = "A generated project for the benchmarks."

[bindings.primary_model]
provider = "openai"
model = "gpt-4o-mini"
base_url = "http://127.0.0.1:8080/v1"
api_key_env = "OPENAI_API_KEY"
accepts = ["text"]
price = { input_per_mtok = 0.15, output_per_mtok = 0.60, currency = "EUR" }

[bindings.backup_model]
provider = "replay"
model = "recorded"
accepts = ["text"]

[limits]
max_input_bytes = 65536
"#;

/// A project of about `lines` lines of AEL (at least one domain; rounded up to whole domains).
pub fn project(lines: usize) -> Project {
    let mut files = vec![("ael.toml".to_owned(), MANIFEST.to_owned())];
    let mut ael_lines = 0;
    let mut k = 0;
    while ael_lines < lines.max(1) {
        let types = types_module(k);
        let nodes = nodes_module(k);
        ael_lines += types.lines().count() + nodes.lines().count();
        files.push((format!("types/t{k}.ael"), types));
        files.push((format!("nodes/n{k}.node.ael"), nodes));
        files.push((format!("prompts/p{k}.md"), prompt(k)));
        k += 1;
    }
    Project {
        files,
        ael_lines,
        domains: k,
    }
}

/// `types/t{k}.ael`.
fn types_module(k: usize) -> String {
    let mut s = String::with_capacity(16 * 1024);
    let p = k.saturating_sub(1);
    let _ = writeln!(
        s,
        "//! The types of domain {k}: items, shapes, levels and their rules.\n"
    );
    if k > 0 {
        let _ = writeln!(s, "use types::t{p}::{{Level{p}, Code{p}}};\n");
    }
    let _ = write!(
        s,
        r#"/// How much an item matters.
enum Level{k} {{
    /// Can wait.
    low,
    /// Soon.
    medium,
    /// Now.
    high,
    /// Everything else stops.
    critical,
}}

/// Where an item sits, tagged by `kind`.
@tag("kind")
enum Shape{k} {{
    /// A round one.
    circle {{ radius: f64<0.0..=1000.0> }},
    /// A square one.
    square {{ side: f64<0.0..=1000.0>, label: Option<Str<40>> }},
    /// No extent at all.
    point,
}}

/// A short lowercase code.
type Code{k} = Str<2..=16> @pattern(r"^[a-z][a-z0-9_]*$");

/// What can go wrong with the items of domain {k}.
errors Fault{k} {{
    /// The name is blank.
    empty_name,
    /// More notes than allowed.
    too_many_notes,
    /// The ratio makes no sense for the level.
    bad_ratio,
    /// No item came back.
    no_items,
}}

/// The weight of a level, for sorting.
fn weight{k}(level: Level{k}) -> u32 {{
    match level {{ low => 1, medium => 2, high => 3, critical => 4 }}
}}

/// The area of a shape, zero for a point.
fn area{k}(shape: Shape{k}) -> f64 {{
    match shape {{ circle => 3.0, square => 1.0, point => 0.0 }}
}}

"#
    );
    for i in 0..STRUCTS {
        let prev = if k > 0 {
            format!(
                "    /// The level the previous domain gave it.\n    previous: Option<Level{p}>,\n    /// The code it had there.\n    previous_code: Option<Code{p}>,\n"
            )
        } else {
            String::new()
        };
        let _ = write!(
            s,
            r#"/// Item {i} of domain {k}.
struct Item{k}x{i} {{
    /// The name, as shown.
    name: Str<1..=100>,
    /// The catalogue code.
    code: Str<16> @pattern(r"^[A-Z]{{2}}-[0-9]{{4}}$"),
    /// Who to write to.
    contact: Option<Str<254>> @format("email"),
    /// When it was made.
    made: Option<Str<10>> @format("date"),
    /// How many there are.
    count: u32<1..=10000> = 1,
    /// The share that is done.
    ratio: f64<0.0..=1.0> = 0.5,
    /// How much it matters.
    level: Level{k} = medium,
    /// Whether it is archived.
    archived: bool = false,
    /// Free tags, each once.
    tags: Set<Str<32>, 16>,
    /// Notes, oldest first.
    notes: List<Str<200>, 0..=20>,
    /// Counters by name.
    counters: Map<Str<32>, u16, 8>,
    /// Where it sits.
    shape: Option<Shape{k}>,
    /// A short code.
    short: Option<Code{k}>,
{prev}}}

/// Item {i} has a name and not too many notes.
check valid{k}x{i}(item: Item{k}x{i}) fails Fault{k} {{
    require item.name.trim().len() > 0 else empty_name "the name is blank";
    require item.notes.len() <= 10 else too_many_notes "at most 10 notes";
    require item.ratio < 1.0 || item.level != low else bad_ratio;
}}

/// The score of item {i}: its weight times its count, more when tagged.
fn score{k}x{i}(item: Item{k}x{i}) -> u32 {{
    let base = weight{k}(item.level) * item.count;
    let bonus = if item.tags.is_empty() {{ 0 }} else {{ item.tags.len() }};
    if item.archived {{ 0 }} else {{ base + bonus }}
}}

/// Whether item {i} mentions a word in its notes.
fn mentions{k}x{i}(item: Item{k}x{i}, word: Str<32>) -> bool {{
    item.notes.any(|n| n.to_lower().contains(word)) || item.name.starts_with(word)
}}

"#
        );
    }
    s
}

/// `nodes/n{k}.node.ael`.
fn nodes_module(k: usize) -> String {
    let mut s = String::with_capacity(8 * 1024);
    let _ = write!(
        s,
        r#"//! The nodes and the agent of domain {k}.

use types::t{k}::{{Item{k}x0, Item{k}x1, Level{k}, Fault{k}, score{k}x1, weight{k}}};

/// What the caller asks for.
struct Request{k} {{
    /// The text to read.
    document: Str<4000>,
    /// The item the text is about.
    item: Item{k}x0,
    /// Report every problem, however small.
    strict: bool = false,
    /// How many items to return.
    max_items: u16<1..=50> = 10,
    /// The language of the answer.
    locale: Option<Str<16>> @pattern(r"^[a-z]{{2}}(-[A-Z]{{2}})?$"),
    /// Words to look for.
    keywords: List<Str<32>, 20>,
}}

/// What comes back.
struct Answer{k} {{
    /// A short summary.
    summary: Str<1000>,
    /// The items found, most important first.
    items: List<Item{k}x1, 50>,
    /// The overall level.
    level: Level{k},
}}

/// A reading from a sensor, for the two-input node.
struct Reading{k} {{
    /// The value read.
    value: f64<-1000.0..=1000.0>,
    /// Which sensor.
    sensor: Str<32>,
}}

/// The request is not blank.
check not_blank{k}(request: Request{k}) fails Fault{k} {{
    require request.document.trim().len() > 0 else empty_name "the document is blank";
}}

/// The answer respects what was asked.
check answer_ok{k}(output: Answer{k}, request: Request{k}) fails Fault{k} {{
    require output.items.len() <= request.max_items else too_many_notes;
    require !output.summary.is_empty() else no_items "the summary is empty";
    require output.items.all(|i| i.count > 0) else bad_ratio;
}}

/// Most important items first.
fn sorted{k}(output: Answer{k}) -> Answer{k} {{
    Answer{k} {{ items: output.items.sort_by(|i| score{k}x1(i)), ..output }}
}}

/// The overall level of an answer.
fn level_of{k}(output: Answer{k}) -> u32 {{
    output.items.map(|i| weight{k}(i.level)).sum()
}}

/// Looks the item up in the catalogue (Rust).
extern fn lookup{k}(request: Request{k}) -> Answer{k};

/// Answers from the catalogue, with no model call.
node catalogue{k}(request: Request{k}) -> Answer{k} fails Fault{k} {{
    config {{
        prompt: file("prompts/p{k}.md");
        model: binding("primary_model");
    }}
    input {{
        check not_blank{k};
    }}
    return lookup{k}(request);
}}

/// Reads the document and returns the items it mentions.
node read{k}(request: Request{k}) -> Answer{k} fails Fault{k} {{
    config {{
        prompt: file("prompts/p{k}.md");
        model: binding("primary_model");
        timeout: 60s;
        temperature: 0.2;
    }}
    input {{
        check not_blank{k};
    }}
    output {{
        check answer_ok{k};
        transform sorted{k};
        on_failure: repair(2), fallback(binding("backup_model")), fail(no_items);
    }}
    budget {{
        max_calls: 4;
        max_cost: 0.05 EUR;
        max_time: 2m;
    }}
}}

/// Fuses a request with the latest sensor reading.
node fuse{k}(request: Request{k}, reading: Reading{k}) -> Answer{k} {{
    config {{
        prompt: file("prompts/p{k}.md");
        model: binding("primary_model");
    }}
    inputs {{ combine: latest; fresh: request 5s, reading 200ms; }}
}}

/// Reviews the document, published for other agents.
agent review{k}(request: Request{k}) -> Answer{k} fails Fault{k} {{
    config {{
        prompt: file("prompts/p{k}.md");
        model: binding("primary_model");
        timeout: 30s;
    }}
    input {{
        check not_blank{k};
    }}
    output {{
        check answer_ok{k};
        transform sorted{k};
        on_failure: retry(1), fail(no_items);
    }}
    publish {{
        capability: "review.domain{k}";
        price: 0.01 EUR;
    }}
}}
"#
    );
    s
}

/// `prompts/p{k}.md`.
fn prompt(k: usize) -> String {
    format!(
        r#"You read documents of domain {k} and list the items they mention.

Return at most {{{{ request.max_items }}}} items, most important first.
{{% if request.strict %}}Report every item, however small.{{% else %}}Report only items a reader would notice.{{% end %}}
{{% if request.locale.is_some() %}}Write the summary in {{{{ request.locale.unwrap_or("en") }}}}.{{% end %}}
Look for these words:
{{% for word in request.keywords %}}- {{{{ word }}}}
{{% end %}}
The item is {{{{ request.item.name }}}} ({{{{ request.item.code }}}}).

Answer with one JSON value that matches this schema:
{{{{ output_schema }}}}

The document:
{{{{ request.document }}}}
"#
    )
}
