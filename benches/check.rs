//! Benchmark `check`: parse + check of generated projects of 10k and 100k lines, end to end
//! through the driver on a [`MemoryWorld`] (no disk), and each half alone so that sema's share
//! is visible:
//!
//! - `parse_and_check`: `driver::check_project` (read `ael.toml`, parse every module, check,
//!   read and check the prompt templates) — what `aelc check` does minus the disk;
//! - `parse_only`: `driver::parse_project`, the first half;
//! - `check_only`: `ParsedProject::check` on an already parsed project (parsing happens
//!   outside the timed part): semantic analysis alone;
//! - `parse_and_check_cold`, `check_only_cold`: the same, each run from cold caches
//!   (`common/cold.rs`), as a one-shot `aelc check` runs. The hot 10k-line runs find their
//!   data still cached from the run before, the 100k-line ones cannot, so the hot ratio
//!   mixes cache capacity into the growth; the cold ratio is the growth of the work.
//!
//! The projects come from `benches/common` (the same generator as the `build` benchmark) and
//! must check clean: the run stops before timing anything if they do not, so that an error
//! path is never what gets measured.
//!
//! With `CHECK_PROFILE=LINES[:RUNS]` set, the binary only parses and checks a project of that size,
//! for a profiler to watch. With `CHECK_ROWS=1` it times the `aelc check` binary instead, a
//! row per size from 10k to 1M lines with lines per second and peak memory per line, beside a
//! baseline binary (`check/rows.rs`). `CHECK_WRITE=LINES:DIR` writes a generated project.
//!
//! Run: `cargo bench --bench check -- --sample-count 10`. Targets: 100k lines checked in under
//! 250 ms on one core (parse ≈ 100 ms of it once the parser meets its own target), and a
//! 100k/10k ratio under 12 (linear growth).

mod common;
#[path = "check/rows.rs"]
mod rows;

use std::path::Path;

use aelc::driver::{self, MemoryWorld};

const SIZES: [usize; 2] = [10_000, 100_000];

/// The allocator the `aelc` binaries ship with, so that the figures are theirs.
#[global_allocator]
static GLOBAL: aelc::allocator::Allocator = aelc::allocator::Allocator;

fn main() {
    aelc::allocator::configure();
    if let Some(lines) = profile_request() {
        profile(lines);
        return;
    }
    if std::env::var_os("CHECK_ROWS").is_some() {
        rows::run();
        return;
    }
    if let Some((lines, dir)) = write_request() {
        write_project(lines, &dir);
        return;
    }
    for lines in SIZES {
        preflight(lines);
    }
    divan::main();
    cpu_times();
}

/// On-CPU time of this thread in nanoseconds (`/proc/thread-self/schedstat`, Linux), or `None`.
/// Wall time is what divan reports; on a machine shared with other jobs it also counts the
/// time the thread waited for a core, which on-CPU time does not.
fn thread_cpu_ns() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    text.split_whitespace().next()?.parse().ok()
}

/// The mean on-CPU time of each phase over enough runs that the clock's granularity does not
/// matter, printed after divan's table, with the 100k/10k ratios (linear growth: under 12).
///
/// `schedstat` advances in scheduler ticks on some kernels (4 ms here): a single 10k-line
/// check reads as 0 or 4 ms, so the least of a few runs (what this printed before) made
/// nonsense of the ratio. Each size runs until every phase has used at least a second.
fn cpu_times() {
    let Some(_) = thread_cpu_ns() else {
        return;
    };
    const ENOUGH_NS: u64 = 1_000_000_000;
    let mut rows = Vec::new();
    for lines in SIZES {
        let world = world(lines);
        let mut spent = [0u64; 2];
        let mut runs = 0u64;
        while spent.iter().any(|&ns| ns < ENOUGH_NS) && runs < 1000 {
            let t0 = thread_cpu_ns().unwrap_or(0);
            let parsed = driver::parse_project(&world, root());
            let t1 = thread_cpu_ns().unwrap_or(0);
            let Ok(parsed) = parsed else { return };
            let t2 = thread_cpu_ns().unwrap_or(0);
            let checked = parsed.check(&world);
            let t3 = thread_cpu_ns().unwrap_or(0);
            divan::black_box(checked);
            spent[0] += t1 - t0;
            spent[1] += t3 - t2;
            runs += 1;
        }
        let mean = |ns: u64| ns / runs.max(1);
        rows.push((
            lines,
            runs,
            [mean(spent[0]), mean(spent[1]), mean(spent[0] + spent[1])],
        ));
    }
    println!("on-CPU time, mean per run (parse, sema alone, parse + check):");
    for (lines, runs, [parse, sema, total]) in &rows {
        let ms = |ns: &u64| *ns as f64 / 1e6;
        println!(
            "  {lines:>7} lines ({runs} runs): parse {:.2} ms, sema {:.2} ms, total {:.2} ms",
            ms(parse),
            ms(sema),
            ms(total)
        );
    }
    if let [(_, _, small), (_, _, large)] = rows.as_slice() {
        let ratio = |i: usize| large[i] as f64 / small[i].max(1) as f64;
        println!(
            "  100k/10k: parse {:.1}, sema {:.1}, total {:.1}",
            ratio(0),
            ratio(1),
            ratio(2)
        );
    }
}

/// `CHECK_PROFILE=LINES[:RUNS]`: no timing, RUNS (default 1) parses and checks of a generated
/// project, for a profiler (`valgrind --tool=callgrind --toggle-collect='*ParsedProject*check*'`,
/// `perf stat`).
fn profile_request() -> Option<(usize, usize)> {
    let request = std::env::var("CHECK_PROFILE").ok()?;
    let (lines, runs) = request.split_once(':').unwrap_or((&request, "1"));
    Some((lines.parse().ok()?, runs.parse().ok()?))
}

fn profile((lines, runs): (usize, usize)) {
    let world = world(lines);
    for _ in 0..runs {
        match driver::parse_project(&world, root()) {
            Ok(parsed) => {
                divan::black_box(parsed.check(&world));
            }
            Err(err) => eprintln!("cannot read the generated project: {err}"),
        }
    }
}

/// `CHECK_WRITE=LINES:DIR`: writes the generated project of that size to DIR (for timing the
/// `aelc check` binary on it from outside) and exits.
fn write_request() -> Option<(usize, std::path::PathBuf)> {
    let request = std::env::var("CHECK_WRITE").ok()?;
    let (lines, dir) = request.split_once(':')?;
    Some((lines.replace('_', "").parse().ok()?, dir.into()))
}

fn write_project(lines: usize, dir: &Path) {
    let project = common::project(lines);
    if let Err(err) = project.write(dir) {
        eprintln!("cannot write the project to {}: {err}", dir.display());
        std::process::exit(1);
    }
    eprintln!(
        "wrote {} lines of AEL in {} modules to {}",
        project.ael_lines,
        project.domains * 2,
        dir.display()
    );
}

fn root() -> &'static Path {
    Path::new("/bench/project")
}

fn world(lines: usize) -> MemoryWorld {
    common::project(lines).world(root())
}

/// Checks the generated project once and stops the run if it has an error.
fn preflight(lines: usize) {
    let project = common::project(lines);
    let world = project.world(root());
    let compilation = match driver::check_project(&world, root()) {
        Ok(c) => c,
        Err(err) => {
            eprintln!("cannot read the generated project: {err}");
            std::process::exit(2);
        }
    };
    if compilation.has_errors() || compilation.program.is_none() {
        let shown = aelc::diagnostics::render::human(
            &compilation.sources,
            &compilation.diagnostics[..compilation.diagnostics.len().min(10)],
            aelc::diagnostics::render::Color::Never,
        );
        eprintln!(
            "the generated {lines}-line project does not check clean ({} diagnostics):\n{shown}",
            compilation.diagnostics.len()
        );
        std::process::exit(1);
    }
    eprintln!(
        "generated project: {} lines of AEL in {} modules ({} domains), {} diagnostics",
        project.ael_lines,
        project.domains * 2,
        project.domains,
        compilation.diagnostics.len()
    );
}

#[divan::bench(args = SIZES)]
fn parse_and_check(bencher: divan::Bencher, lines: usize) {
    let world = world(lines);
    bencher
        .counter(divan::counter::ItemsCount::new(lines))
        .bench(|| driver::check_project(divan::black_box(&world), root()));
}

/// `parse_and_check` again, each run from cold caches ([`common::cold`]): what a one-shot
/// `aelc check` meets, and the fair test of linear growth.
#[divan::bench(args = SIZES)]
fn parse_and_check_cold(bencher: divan::Bencher, lines: usize) {
    let world = world(lines);
    bencher
        .counter(divan::counter::ItemsCount::new(lines))
        .with_inputs(common::cold::evict)
        .bench_local_values(|()| driver::check_project(divan::black_box(&world), root()));
}

#[divan::bench(args = SIZES)]
fn parse_only(bencher: divan::Bencher, lines: usize) {
    let world = world(lines);
    bencher
        .counter(divan::counter::ItemsCount::new(lines))
        .bench(|| driver::parse_project(divan::black_box(&world), root()));
}

/// The generated project of `world`, parsed (outside the timed part of `check_only`).
fn parsed(world: &MemoryWorld) -> driver::ParsedProject {
    match driver::parse_project(world, root()) {
        Ok(p) => p,
        Err(err) => panic!("cannot read the generated project: {err}"),
    }
}

#[divan::bench(args = SIZES)]
fn check_only(bencher: divan::Bencher, lines: usize) {
    let world = world(lines);
    let parsed = parsed(&world);
    bencher
        .counter(divan::counter::ItemsCount::new(lines))
        .with_inputs(|| parsed.clone())
        .bench_local_values(|p| p.check(divan::black_box(&world)));
}

/// `check_only` from cold caches: the parsed project is cloned, then the caches emptied.
#[divan::bench(args = SIZES)]
fn check_only_cold(bencher: divan::Bencher, lines: usize) {
    let world = world(lines);
    let parsed = parsed(&world);
    bencher
        .counter(divan::counter::ItemsCount::new(lines))
        .with_inputs(|| {
            let copy = parsed.clone();
            common::cold::evict();
            copy
        })
        .bench_local_values(|p| p.check(divan::black_box(&world)));
}
