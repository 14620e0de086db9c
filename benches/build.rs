//! Benchmark `build`: `aelc build` of a generated project, end to end, with its time, its
//! peak memory, and what it writes.
//!
//! Two projects (`BUILD_NODES` chooses):
//! - by default, `benches/common`'s generator of the `check` benchmark, about `BUILD_LINES`
//!   lines (100,000);
//! - with `BUILD_NODES=N`, N structs in modules of [`MODULE`], each referring to its module's
//!   six shared types and, in chains of [`CHAIN`], to the struct before it, with **one node per
//!   struct**: the shape of issue 23, whose schemas copied every definition a node reaches into
//!   each of its files.
//!
//! The project is written once to a temporary folder. Then, for a number of rounds:
//!
//! - **in process**: the phases of `aelc build` on the real disk — check the project
//!   (`driver::check_project` with `DiskWorld`), emit every file (`codegen::emit::emit`), write
//!   them atomically into an empty output folder (`codegen::write::write_all`) — each timed,
//!   with the peak resident memory the build adds (Linux `VmHWM`, reset before each build);
//! - **the binary**: `aelc build DIR --out OUT` as a user runs it (process start included),
//!   wall clock: a full build into an empty folder, then the same build again with nothing
//!   changed (an unchanged rebuild). With `AELC_BASELINE=/path/to/aelc` (say, main's binary),
//!   that binary does the same in the same rounds, turn about, so the two rows compare.
//!
//! Each binary's row also gives the files and bytes its full build wrote, in total and by
//! folder (`schemas/`, `model/`, ...). The generated agents have no examples folder, so `emit`
//! gets no examples, as `aelc build` does for them. The table reports the median of the
//! rounds. Run: `cargo bench --bench build` (`BUILD_ROUNDS=N` to change the default of 5;
//! `BUILD_WRITE=DIR` only writes the project into DIR, to time binaries as whole processes).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use aelc::codegen::{emit, write};
use aelc::driver::{self, DiskWorld};

/// A value in kB from `/proc/self/status` (`VmRSS`, `VmHWM`), in bytes; 0 when unreadable.
fn status_bytes(key: &str) -> usize {
    let Ok(text) = std::fs::read_to_string("/proc/self/status") else {
        return 0;
    };
    text.lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<usize>().ok())
        .map_or(0, |kb| kb * 1024)
}

/// Starts a peak measurement: resets the resident high-water mark (`5` to `clear_refs`,
/// Linux) and returns what is resident now, the baseline. The crate forbids `unsafe`, so the
/// peak is the kernel's count of resident memory rather than a counting global allocator.
fn reset_peak() -> usize {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
    status_bytes("VmRSS")
}

/// The resident high-water mark since [`reset_peak`].
fn peak() -> usize {
    status_bytes("VmHWM")
}

struct Round {
    check: Duration,
    emit: Duration,
    write: Duration,
    total: Duration,
    peak_bytes: usize,
    files: usize,
    bytes_out: usize,
}

fn env_number(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.replace('_', "").parse().ok())
        .unwrap_or(default)
}

fn fail(message: String) -> ! {
    eprintln!("{message}");
    std::process::exit(1);
}

/// One in-process build of `root` into the empty folder `out`.
fn build_in_process(root: &Path, out: &Path) -> Round {
    let baseline = reset_peak();
    let start = Instant::now();
    let compilation = driver::check_project(&DiskWorld, root)
        .unwrap_or_else(|e| fail(format!("cannot read {}: {e}", root.display())));
    let checked = Instant::now();
    let Some(program) = compilation.program.as_ref() else {
        fail(format!(
            "the generated project does not check clean: {} diagnostics",
            compilation.diagnostics.len()
        ));
    };
    let emission = emit::emit(program, &[]);
    if emission.has_errors() {
        fail(format!(
            "emitting the generated project fails: {:?}",
            emission.diagnostics.first()
        ));
    }
    let emitted = Instant::now();
    let report = write::write_all(out, &emission.files)
        .unwrap_or_else(|e| fail(format!("cannot write {}: {e}", out.display())));
    let done = Instant::now();
    let peak_bytes = peak().saturating_sub(baseline);
    Round {
        check: checked - start,
        emit: emitted - checked,
        write: done - emitted,
        total: done - start,
        peak_bytes,
        files: report.written.len(),
        bytes_out: emission.files.values().map(Vec::len).sum(),
    }
}

/// Structs per chain of the `BUILD_NODES` project: each refers to the one before, so a node's
/// schema reaches up to this many structs (short, as OpenAI's strict mode allows 10 levels of
/// nesting in all).
const CHAIN: usize = 6;

/// Structs per module of the `BUILD_NODES` project, which all use the module's shared types.
const MODULE: usize = 48;

/// The shared types of module `m`: what every struct of the module refers to.
fn shared_types(m: usize) -> String {
    format!(
        r#"/// How much an item matters.
enum Level{m} {{
    /// Can wait.
    low,
    /// Soon.
    medium,
    /// Now.
    high,
}}

/// Where an item sits, tagged by `kind`.
@tag("kind")
enum Shape{m} {{
    /// A round one.
    circle {{ radius: f64<0.0..=1000.0> }},
    /// A square one.
    square {{ side: f64<0.0..=1000.0>, label: Option<Str<40>> }},
    /// No extent at all.
    point,
}}

/// A short lowercase code.
type Code{m} = Str<2..=16> @pattern(r"^[a-z][a-z0-9_]*$");

/// A postal address.
struct Address{m} {{
    /// Street and number.
    street: Str<200>,
    /// The city.
    city: Str<100>,
    /// The postal code.
    postcode: Str<2..=12>,
    /// ISO 3166 country code.
    country: Str<2> @pattern(r"^[A-Z]{{2}}$"),
}}

/// Someone to write to.
struct Contact{m} {{
    /// The name.
    name: Str<1..=100>,
    /// The address to write to.
    email: Option<Str<254>> @format("email"),
    /// Where they are.
    address: Option<Address{m}>,
}}

/// An amount of money.
struct Money{m} {{
    /// The amount in cents.
    cents: i64<-1000000000..=1000000000>,
    /// ISO 4217 currency code.
    currency: Str<3> @pattern(r"^[A-Z]{{3}}$"),
}}

"#
    )
}

/// The `BUILD_NODES` project: `nodes` structs in modules of [`MODULE`], each using its module's
/// shared types and (but the first of a chain of [`CHAIN`]) the struct before it, and one node
/// per struct taking and answering it.
fn chain_project(nodes: usize) -> common::Project {
    use std::fmt::Write as _;
    let manifest = r#"[package]
name = "bench/chain"
version = "0.1.0"
description = "A generated project: one node per struct."

[bindings.primary_model]
provider = "openai"
model = "gpt-4o-mini"
base_url = "http://127.0.0.1:8080/v1"
api_key_env = "OPENAI_API_KEY"
accepts = ["text"]
"#;
    let prompt = "Improve the item {{ item.name }}.\n\nAnswer with one JSON value that matches \
                  this schema:\n{{ output_schema }}\n";
    let mut files = vec![
        ("ael.toml".to_owned(), manifest.to_owned()),
        ("prompts/improve.md".to_owned(), prompt.to_owned()),
    ];
    let mut ael_lines = 0;
    let nodes = nodes.max(1);
    let modules = nodes.div_ceil(MODULE);
    for m in 0..modules {
        let mut s = format!("//! Module {m}: structs in chains, and one node per struct.\n\n");
        s.push_str(&shared_types(m));
        for k in m * MODULE..nodes.min((m + 1) * MODULE) {
            let prev = if k % CHAIN > 0 {
                format!(
                    "    /// The item it replaces.\n    previous: Option<S{}>,\n",
                    k - 1
                )
            } else {
                String::new()
            };
            let _ = write!(
                s,
                r#"/// Item {k}.
struct S{k} {{
    /// The name, as shown.
    name: Str<1..=100>,
    /// The catalogue code.
    code: Code{m},
    /// How many there are.
    count: u32<1..=10000> = 1,
    /// What one costs.
    price: Money{m},
    /// How much it matters.
    level: Level{m} = medium,
    /// Where it sits.
    shape: Option<Shape{m}>,
    /// Who answers for it.
    owner: Contact{m},
    /// Free tags, each once.
    tags: Set<Str<32>, 16>,
{prev}}}

/// Improves item {k}.
node improve{k}(item: S{k}) -> S{k} {{
    config {{
        prompt: file("prompts/improve.md");
        model: binding("primary_model");
    }}
}}

"#
            );
        }
        ael_lines += s.lines().count();
        files.push((format!("items/m{m}.ael"), s));
    }
    common::Project {
        files,
        ael_lines,
        domains: modules,
    }
}

/// Files and bytes below `dir` (the build's own `.aelc-*` files left out), in total and by
/// first folder.
fn written(dir: &Path) -> (usize, u64, std::collections::BTreeMap<String, (usize, u64)>) {
    let mut by_folder = std::collections::BTreeMap::new();
    let (mut files, mut bytes) = (0, 0);
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = entry.path();
            let Ok(meta) = entry.metadata() else { continue };
            if meta.is_dir() {
                stack.push(path);
                continue;
            }
            let rel = path.strip_prefix(dir).unwrap_or(&path);
            if rel.to_string_lossy().starts_with(".aelc-") {
                continue;
            }
            let folder = match rel.components().count() {
                1 => "(top)".to_owned(),
                _ => rel.components().next().map_or_else(String::new, |c| {
                    format!("{}/", c.as_os_str().to_string_lossy())
                }),
            };
            let slot: &mut (usize, u64) = by_folder.entry(folder).or_default();
            slot.0 += 1;
            slot.1 += meta.len();
            files += 1;
            bytes += meta.len();
        }
    }
    (files, bytes, by_folder)
}

/// One `aelc build ROOT --out OUT` of `binary`, timed; exits on failure.
fn run_binary(binary: &Path, root: &Path, out: &Path) -> Duration {
    let start = Instant::now();
    let status = Command::new(binary)
        .arg("build")
        .arg(root)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap_or_else(|e| fail(format!("cannot run {}: {e}", binary.display())));
    let took = start.elapsed();
    if !status.status.success() {
        fail(format!(
            "{} build failed: {}",
            binary.display(),
            String::from_utf8_lossy(&status.stderr)
        ));
    }
    took
}

fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort();
    xs.get(xs.len() / 2).copied().unwrap_or_default()
}

// The allocator the `aelc` binaries ship with, so that the figures are theirs.
aelc::ship_allocator!();

fn main() {
    aelc::allocator::configure();
    let lines = env_number("BUILD_LINES", 100_000);
    let nodes = env_number("BUILD_NODES", 0);
    let rounds = env_number("BUILD_ROUNDS", 5).max(1);
    let project = if nodes > 0 {
        chain_project(nodes)
    } else {
        common::project(lines)
    };
    // `BUILD_WRITE=DIR`: only write the project there (to time binaries as whole processes).
    if let Some(dir) = std::env::var_os("BUILD_WRITE") {
        if let Err(e) = project.write(Path::new(&dir)) {
            fail(format!("cannot write the project: {e}"));
        }
        println!("{} lines of AEL written", project.ael_lines);
        return;
    }
    let scratch: PathBuf =
        std::env::temp_dir().join(format!("aelc-build-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    let root = scratch.join("project");
    if let Err(e) = project.write(&root) {
        fail(format!(
            "cannot write the project to {}: {e}",
            root.display()
        ));
    }
    let mut binaries = vec![("this aelc", PathBuf::from(env!("CARGO_BIN_EXE_aelc")))];
    if let Some(baseline) = std::env::var_os("AELC_BASELINE") {
        binaries.push(("AELC_BASELINE", PathBuf::from(baseline)));
    }

    let mut in_process = Vec::new();
    // Per binary: full build times, unchanged rebuild times.
    let mut timed: Vec<(Vec<Duration>, Vec<Duration>)> = vec![Default::default(); binaries.len()];
    for round in 0..rounds {
        let out = scratch.join(format!("out-{round}"));
        in_process.push(build_in_process(&root, &out));
        let _ = std::fs::remove_dir_all(&out);
        for (b, (_, binary)) in binaries.iter().enumerate() {
            let out = scratch.join(format!("bin-out-{b}"));
            let _ = std::fs::remove_dir_all(&out);
            timed[b].0.push(run_binary(binary, &root, &out));
            timed[b].1.push(run_binary(binary, &root, &out));
        }
    }

    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let mib = |b: u64| b as f64 / (1024.0 * 1024.0);
    let first = &in_process[0];
    let peak = in_process.iter().map(|r| r.peak_bytes).max().unwrap_or(0);
    let shape = if nodes > 0 {
        format!("{nodes} nodes, one per struct, chains of {CHAIN}")
    } else {
        format!("{} modules", project.domains * 2)
    };
    println!(
        "build benchmark: {} lines of AEL ({shape}), {} files emitted ({:.1} MiB), median of {rounds} rounds",
        project.ael_lines,
        first.files,
        first.bytes_out as f64 / (1024.0 * 1024.0),
    );
    println!(
        "in process: check {:.1} ms, emit {:.1} ms, write {:.1} ms, total {:.1} ms; peak resident memory added {:.1} MiB ({peak} bytes)",
        ms(median(in_process.iter().map(|r| r.check).collect())),
        ms(median(in_process.iter().map(|r| r.emit).collect())),
        ms(median(in_process.iter().map(|r| r.write).collect())),
        ms(median(in_process.iter().map(|r| r.total).collect())),
        peak as f64 / (1024.0 * 1024.0),
    );
    println!("`aelc build DIR --out OUT` (process start included):");
    println!(
        "| binary | full build ms | unchanged rebuild ms | files | MiB | by folder (files, MiB) |"
    );
    println!("|---|---|---|---|---|---|");
    for (b, (name, _)) in binaries.iter().enumerate() {
        let (files, bytes, by_folder) = written(&scratch.join(format!("bin-out-{b}")));
        let folders: Vec<String> = by_folder
            .iter()
            .map(|(f, (n, bytes))| format!("{f} {n}, {:.2}", mib(*bytes)))
            .collect();
        println!(
            "| {name} | {:.1} | {:.1} | {files} | {:.2} | {} |",
            ms(median(timed[b].0.clone())),
            ms(median(timed[b].1.clone())),
            mib(bytes),
            folders.join("; "),
        );
    }
    let _ = std::fs::remove_dir_all(&scratch);
}
