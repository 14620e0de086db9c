//! `aelc-lsp`: the AEL language server over stdio (the same server as `aelc lsp`).
//!
//! Editors start it with no argument or with `--stdio` (stdio is the only transport);
//! `--version` and `--help` answer without serving, and anything else is a usage error (exit 2)
//! rather than a server silently waiting for input.

use std::process::ExitCode;

const USAGE: &str = "usage: aelc-lsp [--stdio]\n\nServes the AEL language server protocol on stdin/stdout until the client says `exit`.\nSee editors/README.md for editor set-ups.";

aelc::ship_allocator!();

fn main() -> ExitCode {
    aelc::allocator::configure();
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--stdio" => {}
            "--version" | "-V" => {
                println!("aelc-lsp {}", env!("CARGO_PKG_VERSION"));
                return ExitCode::SUCCESS;
            }
            "--help" | "-h" => {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            other => {
                eprintln!("aelc-lsp: unknown argument `{other}`\n{USAGE}");
                return ExitCode::from(2);
            }
        }
    }
    aelc::lsp::run_stdio()
}
