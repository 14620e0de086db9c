//! `CHECK_ROWS=1`: the `aelc check` binary, as a user runs it, on generated projects written
//! to disk, one row per size (10k, 100k and 1M lines by default): wall time, lines per second
//! and peak resident memory per source line, beside a baseline binary run in the same rounds
//! (`CHECK_BASELINE=path/to/aelc`, e.g. a build of main), the two taking turns so that a drift
//! of the machine's speed reaches both. `CHECK_BINARY=path/to/aelc` times that binary instead
//! of the one cargo built beside the bench.
//!
//! The peak is the kernel's maximum resident set size of the process as `/usr/bin/time -f %M`
//! reports it (the crate forbids the `unsafe` a `wait4` would need); without that program the
//! rows have times only. Each figure is the median of `CHECK_ROUNDS` runs (default 5), after
//! one run of each binary that is not counted (it brings the project's files into the page
//! cache). `CHECK_ROW_SIZES=10000,100000` changes the sizes.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// One run of `aelc check DIR`: its wall time in seconds and its peak resident memory in
/// bytes (0 when `/usr/bin/time` is missing).
fn run_once(binary: &Path, dir: &Path) -> (f64, u64) {
    const TIME: &str = "/usr/bin/time";
    let timed = Path::new(TIME).exists();
    let mut command = if timed {
        let mut c = Command::new(TIME);
        c.args(["-f", "peak-kib %M"]).arg(binary);
        c
    } else {
        Command::new(binary)
    };
    command
        .arg("check")
        .arg(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let started = Instant::now();
    let output = match command.output() {
        Ok(output) => output,
        Err(err) => {
            eprintln!("cannot run {}: {err}", binary.display());
            std::process::exit(1);
        }
    };
    let seconds = started.elapsed().as_secs_f64();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let peak_kib: u64 = stderr
        .lines()
        .rev()
        .find_map(|line| line.strip_prefix("peak-kib "))
        .and_then(|kib| kib.trim().parse().ok())
        .unwrap_or(0);
    (seconds, peak_kib * 1024)
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs.get(xs.len() / 2).copied().unwrap_or(0.0)
}

/// The median time and peak of `binary` over its runs.
struct Row {
    seconds: f64,
    peak: f64,
}

impl Row {
    fn of(runs: &[(f64, u64)]) -> Row {
        Row {
            seconds: median(runs.iter().map(|r| r.0).collect()),
            peak: median(runs.iter().map(|r| r.1 as f64).collect()),
        }
    }

    fn cells(&self, lines: usize) -> String {
        format!(
            "{:>9.1} ms {:>6.2} M lines/s {:>7.1} MiB {:>6.0} B/line",
            self.seconds * 1e3,
            lines as f64 / self.seconds / 1e6,
            self.peak / (1024.0 * 1024.0),
            self.peak / lines as f64
        )
    }
}

fn number_list(name: &str, default: &[usize]) -> Vec<usize> {
    match std::env::var(name) {
        Ok(text) => text
            .split(',')
            .filter_map(|n| n.trim().replace('_', "").parse().ok())
            .collect(),
        Err(_) => default.to_vec(),
    }
}

/// Runs the rows and prints them.
pub fn run() {
    // `CHECK_BINARY` times another build of this tree (a release build from a debug bench).
    let ours = std::env::var_os("CHECK_BINARY")
        .map_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_aelc")), PathBuf::from);
    let baseline = std::env::var_os("CHECK_BASELINE").map(PathBuf::from);
    let rounds = number_list("CHECK_ROUNDS", &[5])
        .first()
        .copied()
        .unwrap_or(5)
        .max(1);
    let sizes = number_list("CHECK_ROW_SIZES", &[10_000, 100_000, 1_000_000]);
    let scratch = std::env::temp_dir().join(format!("aelc-check-rows-{}", std::process::id()));
    println!(
        "`aelc check DIR` (process start included), median of {rounds} runs; peak = max resident set size"
    );
    for lines in sizes {
        let project = super::common::project(lines);
        let dir = scratch.join(format!("p{lines}"));
        let _ = std::fs::remove_dir_all(&dir);
        if let Err(err) = project.write(&dir) {
            eprintln!("cannot write the project to {}: {err}", dir.display());
            std::process::exit(1);
        }
        let binaries: Vec<&Path> = std::iter::once(ours.as_path())
            .chain(baseline.as_deref())
            .collect();
        let mut runs: Vec<Vec<(f64, u64)>> = vec![Vec::new(); binaries.len()];
        for binary in &binaries {
            run_once(binary, &dir); // warm-up: the files into the page cache
        }
        for _ in 0..rounds {
            for (at, binary) in binaries.iter().enumerate() {
                runs[at].push(run_once(binary, &dir));
            }
        }
        let lines = project.ael_lines;
        let ours_row = Row::of(&runs[0]);
        println!("{lines:>8} lines  this build: {}", ours_row.cells(lines));
        if let Some(base) = runs.get(1) {
            let base_row = Row::of(base);
            println!("{lines:>8} lines  baseline:   {}", base_row.cells(lines));
            let time_ratio = median(
                runs[0]
                    .iter()
                    .zip(base)
                    .map(|(a, b)| a.0 / b.0.max(1e-9))
                    .collect(),
            );
            println!(
                "{lines:>8} lines  this/baseline: time {time_ratio:.2}x, peak {:.2}x",
                ours_row.peak / base_row.peak.max(1.0)
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
    let _ = std::fs::remove_dir_all(&scratch);
}
