//! Benchmark `build`: `aelc build` of a generated 100k-line project, end to end, with its time
//! and its peak memory.
//!
//! The project (`benches/common`, the generator of the `check` benchmark) is written once to a
//! temporary folder. Then, for a number of rounds:
//!
//! - **in process**: the phases of `aelc build` on the real disk — check the project
//!   (`driver::check_project` with `DiskWorld`), emit every file (`codegen::emit::emit`), write
//!   them atomically into an empty output folder (`codegen::write::write_all`) — each timed,
//!   with the peak resident memory the build adds (Linux `VmHWM`, reset before each build);
//! - **the binary**: `aelc build DIR --out OUT` as a user runs it (process start included),
//!   wall clock only.
//!
//! The generated agents have no examples folder, so `emit` gets no examples, as `aelc build`
//! does for them. The table reports the median of the rounds. Run: `cargo bench --bench build`
//! (`BUILD_ROUNDS=N`, `BUILD_LINES=N` to change the defaults of 5 rounds and 100,000 lines).

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

fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort();
    xs.get(xs.len() / 2).copied().unwrap_or_default()
}

/// The allocator the `aelc` binaries ship with, so that the figures are theirs.
#[global_allocator]
static GLOBAL: aelc::allocator::Allocator = aelc::allocator::Allocator;

fn main() {
    aelc::allocator::configure();
    let lines = env_number("BUILD_LINES", 100_000);
    let rounds = env_number("BUILD_ROUNDS", 5).max(1);
    let project = common::project(lines);
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

    let mut in_process = Vec::new();
    let mut binary = Vec::new();
    for round in 0..rounds {
        let out = scratch.join(format!("out-{round}"));
        in_process.push(build_in_process(&root, &out));
        let out = scratch.join(format!("bin-out-{round}"));
        let start = Instant::now();
        let status = Command::new(env!("CARGO_BIN_EXE_aelc"))
            .arg("build")
            .arg(&root)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap_or_else(|e| fail(format!("cannot run aelc: {e}")));
        binary.push(start.elapsed());
        if !status.status.success() {
            fail(format!(
                "aelc build failed: {}",
                String::from_utf8_lossy(&status.stderr)
            ));
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);

    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let first = &in_process[0];
    let peak = in_process.iter().map(|r| r.peak_bytes).max().unwrap_or(0);
    println!(
        "build benchmark: {} lines of AEL in {} modules, {} files emitted ({:.1} MiB), median of {rounds} rounds",
        project.ael_lines,
        project.domains * 2,
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
    println!(
        "`aelc build DIR --out OUT` (process start included): {:.1} ms",
        ms(median(binary))
    );
}
