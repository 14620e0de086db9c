//! `cargo bench --bench check_memory` (`CHECK_MEMORY=LINES`, default 100k): the live heap per
//! source line after each phase of what `aelc check` does (parse with bodies deferred, lean
//! check, publishing rules) and the most it held during each, counted by
//! [`aelc::allocator::Counting`] (the shipped allocator, counting). Bytes asked for, not the
//! resident memory the rows report: the allocator's rounding and the process's own pages come
//! on top. `CHECK_MEMORY_SIZES=1` also lists the live allocations by size, largest total first,
//! which names the node that costs (an `ast::Expr` box is 80 bytes, a one-segment path 40),
//! the first 12 sizes or `CHECK_MEMORY_TOP`. Those lists count every live allocation, the
//! generated files too, and an allocation of 2047 bytes or more as 2047 (`2047+`).

mod common;

use std::path::Path;

use aelc::allocator::Counting;

/// The shipped allocator, counting.
#[global_allocator]
static GLOBAL: Counting = Counting;

fn root() -> &'static Path {
    Path::new("/bench/project")
}

fn main() {
    aelc::allocator::configure();
    let lines = std::env::var("CHECK_MEMORY")
        .ok()
        .and_then(|l| l.replace('_', "").parse().ok())
        .unwrap_or(100_000);
    run(lines);
}

/// Prints one phase's line: live bytes now, the peak since the previous line.
fn mark(what: &str, lines: usize, base: usize) {
    let per_line = |bytes: usize| bytes.saturating_sub(base) as f64 / lines as f64;
    let peak = Counting::take_peak();
    println!(
        "{what:<18} live {:>6.1} B/line, peak during {:>6.1} B/line",
        per_line(Counting::live()),
        per_line(peak)
    );
    if std::env::var_os("CHECK_MEMORY_SIZES").is_some() {
        let mut sizes: Vec<(usize, usize)> = Counting::by_size()
            .into_iter()
            .enumerate()
            .filter(|&(_, n)| n > 0)
            .collect();
        sizes.sort_by_key(|&(size, n)| std::cmp::Reverse(size * n));
        let top = std::env::var("CHECK_MEMORY_TOP")
            .ok()
            .and_then(|t| t.parse().ok())
            .unwrap_or(12);
        for (size, n) in sizes.iter().take(top) {
            let more = if *size == aelc::allocator::SIZES - 1 {
                "+"
            } else {
                " "
            };
            println!(
                "    {size:>5}{more}B x {n:>8} = {:>5.1} B/line",
                (size * n) as f64 / lines as f64
            );
        }
    }
}

pub fn run(lines: usize) {
    let project = common::project(lines);
    let lines = project.ael_lines;
    let world = project.world(root());
    drop(project);
    let base = Counting::live();
    Counting::take_peak();
    println!("{lines} lines of AEL (the world's files not counted)");
    // As `aelc check` parses: fn and check bodies deferred, for sema to parse a module at a time.
    let parsed = match aelc::driver::parse_project_lean(&world, root()) {
        Ok(parsed) => parsed,
        Err(err) => return eprintln!("cannot read the generated project: {err}"),
    };
    mark("parsed", lines, base);
    let mut compilation = parsed.check_lean(&world);
    mark("checked (lean)", lines, base);
    if let Err(err) = aelc::driver::check_publishing_rules(&world, root(), &mut compilation) {
        return eprintln!("the publishing rules failed: {err}");
    }
    mark("publishing rules", lines, base);
    drop(compilation);
    mark("dropped", lines, base);
}
