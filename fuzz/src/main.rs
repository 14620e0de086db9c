//! `aelc-fuzz`: in-process fuzzers of aelc on the stable toolchain.
//!
//! `aelc-fuzz TARGET [--runs N] [--seconds S] [--seed X]` (`TARGET` is one of `list`'s names,
//! or `all`) runs the target on its seeds (the corpus and `fuzz/regressions/`), then on inputs
//! mutated from them, each under `catch_unwind` and within the target's bound: time linear in
//! the input's size and peak live heap per input byte (counted by `aelc::allocator::Counting`,
//! this binary's allocator). A failing input is written to `fuzz/findings/TARGET-<hash>` and the run exits 1
//! naming it. `aelc-fuzz TARGET --replay FILE` runs one input. A stack overflow aborts the
//! process (Rust cannot catch it): rerun with the printed `--seed` to reproduce it.
//!
//! See `book/src/reference/fuzzing.md`.

mod clock;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use aelc::allocator::Counting;
use aelc_fuzz::mutate::{self, Pool, Rng};
use aelc_fuzz::targets::{self, Bound, Target};
use aelc_fuzz::{corpus, hash};

#[global_allocator]
static GLOBAL: Counting = Counting;

/// The message of the last panic, taken by the hook (the default hook would print each one).
static PANIC: Mutex<Option<String>> = Mutex::new(None);

struct Options {
    target: String,
    runs: Option<u64>,
    seconds: Option<f64>,
    seed: u64,
    replay: Option<PathBuf>,
}

fn parse_args() -> Result<Options, String> {
    let mut args = std::env::args().skip(1);
    let target = args.next().ok_or(
        "usage: aelc-fuzz TARGET|all|list [--runs N] [--seconds S] [--seed X] [--replay FILE]",
    )?;
    let mut options = Options {
        target,
        runs: None,
        seconds: None,
        seed: 1,
        replay: None,
    };
    while let Some(flag) = args.next() {
        let value = args
            .next()
            .ok_or_else(|| format!("`{flag}` needs a value"))?;
        let bad = |_| format!("`{flag}`: `{value}` is not a number");
        match flag.as_str() {
            "--runs" => options.runs = Some(value.parse().map_err(bad)?),
            "--seconds" => {
                options.seconds = Some(
                    value
                        .parse()
                        .map_err(|_| format!("`{flag}`: `{value}` is not a number"))?,
                )
            }
            "--seed" => options.seed = value.parse().map_err(bad)?,
            "--replay" => options.replay = Some(PathBuf::from(value)),
            _ => return Err(format!("unknown option `{flag}`")),
        }
    }
    Ok(options)
}

/// The time an input of `len` bytes may take. Unoptimized (CI runs the smoke so), the bounds
/// are 20 times the release ones: the parser's combinators run tens of times slower without
/// inlining, and a 57 KB input of 5,000 unclosed `struct X {` took 2.9 s unoptimized on a host
/// running at half its usual speed, against a bound of 2.7 s at 10 times. It is linear (half
/// the input, half the time: `fuzz/regressions/parse-unclosed-structs` keeps it so); what the
/// bound is for, growth faster than linear, still shows at 20.
fn time_limit(bound: &Bound, len: usize) -> Duration {
    let scale = if cfg!(debug_assertions) { 20 } else { 1 };
    Duration::from_millis(bound.fixed_ms * scale)
        + Duration::from_nanos(bound.ns_per_byte * scale * len as u64)
}

/// The peak live heap an input of `len` bytes may need.
fn memory_limit(bound: &Bound, len: usize) -> usize {
    (bound.fixed_mb << 20) + bound.bytes_per_byte * len
}

/// How a finding over the time bound starts (open findings may be counted, not stopped at).
const SLOW: &str = "slow: ";

/// What one input did: `Err` says why it is a finding.
struct Measured {
    elapsed: Duration,
    peak: usize,
}

fn run_one(check: &targets::Check, input: &[u8]) -> Result<Measured, String> {
    Counting::take_peak();
    let base = Counting::live();
    let started = clock::now();
    let outcome = catch_unwind(AssertUnwindSafe(|| check(input)));
    let elapsed = clock::since(started);
    let peak = Counting::take_peak().saturating_sub(base);
    // A panic caught inside the code under test (the language server catches its handlers')
    // is a finding too: the hook saw it.
    let caught = PANIC.lock().ok().and_then(|mut p| p.take());
    match outcome {
        Err(_) => Err(format!("panic: {}", caught.unwrap_or_default())),
        Ok(Err(why)) => Err(why),
        Ok(Ok(())) => match caught {
            Some(message) => Err(format!("panic caught inside: {message}")),
            None => Ok(Measured { elapsed, peak }),
        },
    }
}

/// Runs one input and checks its bound; a slow input is run twice more and judged by its
/// fastest run, so a busy machine does not make findings.
fn judge(target: &Target, check: &targets::Check, input: &[u8]) -> Result<Measured, String> {
    let mut measured = run_one(check, input)?;
    let time = time_limit(&target.bound, input.len());
    let memory = memory_limit(&target.bound, input.len());
    if measured.peak > memory {
        return Err(format!(
            "peak heap {} bytes over the bound {} for {} input bytes",
            measured.peak,
            memory,
            input.len()
        ));
    }
    for _ in 0..2 {
        if measured.elapsed <= time {
            break;
        }
        let again = run_one(check, input)?;
        measured.elapsed = measured.elapsed.min(again.elapsed);
    }
    if measured.elapsed > time {
        return Err(format!(
            "{SLOW}took {:?}, over the bound {:?} for {} input bytes",
            measured.elapsed,
            time,
            input.len()
        ));
    }
    Ok(measured)
}

fn write_finding(target: &str, input: &[u8], why: &str) -> PathBuf {
    let dir = corpus::root().join("fuzz/findings");
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join(format!("{target}-{:016x}", hash(input)));
    if let Err(e) = std::fs::write(&path, input) {
        eprintln!("cannot write {}: {e}", path.display());
    }
    let _ = std::fs::write(path.with_extension("txt"), why);
    path
}

/// Runs `target`; `Err` names the finding.
fn fuzz(
    target: &Target,
    options: &Options,
    runs: Option<u64>,
    seconds: Option<f64>,
) -> Result<(), String> {
    let (mut seeds, check) = (target.prepare)();
    let regressions = corpus::regressions(target.name);
    let prepared = Instant::now();
    let cpu = clock::now();
    let mut rng = Rng(options.seed ^ hash(target.name.as_bytes()));
    let mut executions = 0u64;
    let (mut slowest, mut slowest_len, mut worst_ratio) = (Duration::ZERO, 0, 0.0f64);
    let mut known = 0u64;
    let mut finish = |input: &[u8], executions: &mut u64| -> Result<(), String> {
        *executions += 1;
        match judge(target, &check, input) {
            Err(why) if why.starts_with(SLOW) && target.known_slow.is_some_and(|f| f(input)) => {
                known += 1;
                if known == 1 {
                    let path = write_finding(&format!("{}-known", target.name), input, &why);
                    eprintln!("  {}: an input of the open finding over the bound ({why}), kept as {}; counting the others", target.name, path.display());
                }
                Ok(())
            }
            Ok(m) => {
                if m.elapsed > slowest {
                    (slowest, slowest_len) = (m.elapsed, input.len());
                }
                let ratio = m.peak as f64 / input.len().max(1) as f64;
                if input.len() >= 1024 && ratio > worst_ratio {
                    worst_ratio = ratio;
                }
                Ok(())
            }
            Err(why) => {
                let path = write_finding(target.name, input, &why);
                Err(format!(
                    "{}: {why}\n  input: {} ({} bytes)",
                    target.name,
                    path.display(),
                    input.len()
                ))
            }
        }
    };
    for input in &regressions {
        finish(input, &mut executions)?;
    }
    // The seeds count against `--runs` and `--seconds` too, so a short smoke (a debug build in
    // CI) stays short: they run in a shuffled order, so each smoke tries others.
    let mut order: Vec<usize> = (0..seeds.len()).collect();
    for i in (1..order.len()).rev() {
        order.swap(i, rng.below(i + 1));
    }
    for &i in &order {
        if runs.is_some_and(|n| executions >= n)
            || seconds.is_some_and(|s| prepared.elapsed().as_secs_f64() >= s)
        {
            break;
        }
        finish(&seeds[i], &mut executions)?;
    }
    seeds.retain(|s| s.len() <= target.max_len);
    let pool = Pool {
        seeds: &seeds,
        words: target.words,
        max_len: target.max_len,
    };
    let deadline = seconds.map(Duration::from_secs_f64);
    let keep_current = std::env::var_os("AELC_FUZZ_KEEP_CURRENT").is_some();
    let current = corpus::root().join(format!("fuzz/findings/{}-current", target.name));
    if keep_current {
        let _ = std::fs::create_dir_all(corpus::root().join("fuzz/findings"));
    }
    loop {
        if runs.is_some_and(|n| executions >= n)
            || deadline.is_some_and(|d| prepared.elapsed() >= d)
        {
            break;
        }
        if runs.is_none() && deadline.is_none() {
            break;
        }
        let input = mutate::input(&mut rng, &pool);
        if keep_current {
            // A stack overflow aborts the process: the input that did it stays on disk.
            let _ = std::fs::write(&current, &input);
        }
        finish(&input, &mut executions)?;
        // Often enough that a run stopped from outside (it has no other end) leaves its count.
        if executions % 10_000 == 0 {
            eprintln!(
                "  {}: {executions} executions, {:.0}/s, {:.0}/s of CPU",
                target.name,
                executions as f64 / prepared.elapsed().as_secs_f64(),
                executions as f64 / clock::since(cpu).as_secs_f64()
            );
        }
    }
    let elapsed = prepared.elapsed().as_secs_f64();
    let busy = clock::since(cpu).as_secs_f64();
    let timed_by = if clock::counts_cpu() {
        "CPU"
    } else {
        "wall clock"
    };
    println!(
        "{:<9} {executions:>9} executions in {elapsed:>7.1} s ({:>8.0}/s; {busy:.1} s of CPU, {:.0}/s); seeds {}, regressions {}; slowest {slowest:.1?} of {timed_by} ({slowest_len} bytes); worst heap {worst_ratio:.0} bytes per input byte (inputs of 1 KB or more); no finding; {known} inputs of an open finding over the bound",
        target.name,
        executions as f64 / elapsed,
        executions as f64 / busy.max(1e-9),
        seeds.len(),
        regressions.len(),
    );
    Ok(())
}

fn main() -> ExitCode {
    std::panic::set_hook(Box::new(|info| {
        if let Ok(mut slot) = PANIC.lock() {
            *slot = Some(info.to_string());
        }
    }));
    let options = match parse_args() {
        Ok(options) => options,
        Err(why) => {
            eprintln!("aelc-fuzz: {why}");
            return ExitCode::from(2);
        }
    };
    let all = targets::all();
    if options.target == "list" {
        for target in &all {
            let b = target.bound;
            println!("{:<9} {}\n          bound: {} ms + {} ns per byte; {} MB + {} bytes per byte of peak heap", target.name, target.what, b.fixed_ms, b.ns_per_byte, b.fixed_mb, b.bytes_per_byte);
        }
        return ExitCode::SUCCESS;
    }
    let chosen: Vec<&Target> = if options.target == "all" {
        all.iter().collect()
    } else {
        match all.iter().find(|t| t.name == options.target) {
            Some(t) => vec![t],
            None => {
                eprintln!(
                    "aelc-fuzz: no target `{}` (see `aelc-fuzz list`)",
                    options.target
                );
                return ExitCode::from(2);
            }
        }
    };
    if let Some(file) = &options.replay {
        let Ok(input) = std::fs::read(file) else {
            eprintln!("aelc-fuzz: cannot read {}", file.display());
            return ExitCode::from(2);
        };
        for target in chosen {
            let (_, check) = (target.prepare)();
            match judge(target, &check, &input) {
                Ok(m) => println!(
                    "{}: ok in {:?}, peak heap {} bytes",
                    target.name, m.elapsed, m.peak
                ),
                Err(why) => {
                    println!("{}: {why}", target.name);
                    return ExitCode::FAILURE;
                }
            }
        }
        return ExitCode::SUCCESS;
    }
    // `all` shares the time between the targets.
    let seconds = options.seconds.map(|s| s / chosen.len() as f64);
    println!("aelc-fuzz: seed {}", options.seed);
    for target in chosen {
        if let Err(finding) = fuzz(target, &options, options.runs, seconds) {
            eprintln!("aelc-fuzz: finding in {finding}");
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}
