//! Benchmark `check`: parse + check of generated projects of 10k and 100k lines, end to end
//! through the driver on a [`MemoryWorld`] (no disk), and each half alone so that sema's share
//! is visible:
//!
//! - `parse_and_check`: `driver::check_project` (read `ael.toml`, parse every module, check,
//!   read and check the prompt templates) — what `aelc check` does minus the disk;
//! - `parse_only`: `driver::parse_project`, the first half;
//! - `check_only`: `ParsedProject::check` on an already parsed project (parsing happens
//!   outside the timed part): semantic analysis alone.
//!
//! The projects come from `benches/common` (the same generator as the `build` benchmark) and
//! must check clean: the run stops before timing anything if they do not, so that an error
//! path is never what gets measured.
//!
//! Run: `cargo bench --bench check -- --sample-count 10`. Targets: 100k lines checked in under
//! 250 ms on one core (parse ≈ 100 ms of it once the parser meets its own target), and a
//! 100k/10k ratio under 12 (linear growth).

mod common;

use std::path::Path;

use aelc::driver::{self, MemoryWorld};

const SIZES: [usize; 2] = [10_000, 100_000];

fn main() {
    for lines in SIZES {
        preflight(lines);
    }
    divan::main();
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

#[divan::bench(args = SIZES)]
fn parse_only(bencher: divan::Bencher, lines: usize) {
    let world = world(lines);
    bencher
        .counter(divan::counter::ItemsCount::new(lines))
        .bench(|| driver::parse_project(divan::black_box(&world), root()));
}

#[divan::bench(args = SIZES)]
fn check_only(bencher: divan::Bencher, lines: usize) {
    let world = world(lines);
    let parsed = match driver::parse_project(&world, root()) {
        Ok(p) => p,
        Err(err) => panic!("cannot read the generated project: {err}"),
    };
    bencher
        .counter(divan::counter::ItemsCount::new(lines))
        .with_inputs(|| parsed.clone())
        .bench_local_values(|p| p.check(divan::black_box(&world)));
}
