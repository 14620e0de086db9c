//! `aelc-lsp`: the AEL language server over stdio (the same server as `aelc lsp`).

use std::process::ExitCode;

fn main() -> ExitCode {
    aelc::lsp::run_stdio()
}
