//! The parser's grammar is built per module and per template tag, and the language server
//! rebuilds it on every keystroke: building and dropping it must give its memory back. A
//! grammar that refers to itself through a strong handle (`Recursive::declare`) is a reference
//! cycle and leaked tens of kilobytes per build, which showed as page faults in `aelc check`.
//!
//! The measure is the process's resident memory, and the test crate runs every file's tests
//! in one process: the measuring test runs in a child process of this binary, alone.

fn resident_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Runs [`grammar_builds_measured_alone`] in a fresh process of this test binary, where no
/// other test allocates while it measures.
#[test]
fn building_the_grammar_again_and_again_does_not_grow_memory() {
    // `it::syntax_memory` → `syntax_memory::grammar_builds_measured_alone`, the test's name.
    let module = module_path!().split_once("::").map_or("", |(_, m)| m);
    let name = format!("{module}::grammar_builds_measured_alone");
    let exe = std::env::current_exe().expect("the test binary's path");
    let out = std::process::Command::new(exe)
        .args([name.as_str(), "--exact", "--ignored", "--test-threads=1"])
        .output()
        .expect("run the test binary");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "{name} alone:\n{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The measure itself; ignored in the shared process (other tests allocate beside it), run
/// alone by the test above.
#[test]
#[ignore = "run alone, in a child process, by the test above"]
fn grammar_builds_measured_alone() {
    let file = aelc::span::FileId(0);
    let parse = |n: usize| {
        for _ in 0..n {
            let (expr, diagnostics) =
                aelc::syntax::parse_expr(file, "request.findings.len() + 1 > limit", 0);
            assert!(diagnostics.is_empty());
            assert!(matches!(
                expr.kind,
                aelc::syntax::ast::ExprKind::Binary { .. }
            ));
            // A broken one too: the second, `Rich` pass builds the grammar again.
            let (_, diagnostics) = aelc::syntax::parse_expr(file, "a + * 2", 0);
            assert!(!diagnostics.is_empty());
        }
    };
    parse(200); // warm up: allocator pools, lazy statics
    let Some(before) = resident_kib() else {
        return; // not Linux: nothing to read
    };
    parse(3000);
    let after = resident_kib().unwrap_or(before);
    // 6,000 grammar builds; a leak of even 1 KiB each would show as 6 MiB.
    assert!(
        after.saturating_sub(before) < 2048,
        "resident memory grew from {before} KiB to {after} KiB over 6,000 grammar builds"
    );
}
