//! The language server: the batch compiler plus an overlay of the editor's open buffers.
//!
//! `aelc lsp` and the `aelc-lsp` binary serve LSP over stdio. The pieces:
//!
//! | module | job |
//! |---|---|
//! | [`transport`] | JSON-RPC framing on stdin/stdout, tolerant of garbage |
//! | [`server`] | the synchronous event loop: coalescing, cancellation, panics → errors |
//! | [`overlay`] | open buffers, and the [`crate::driver::World`] that reads them over the disk |
//! | [`analysis`] | one project's compilation (the driver's, with sema's resolution of every name) |
//! | [`declaration`] | how a resolved definition reads in hovers and completion details |
//! | [`convert`] | byte offsets ↔ LSP positions (UTF-16 or UTF-8 columns) |
//! | [`publish`] | diagnostics → `publishDiagnostics`, spans → locations |
//! | [`schema`] | the JSON Schema fragment of a type or field, for hover |
//! | [`handlers`] | one module per request |
//!
//! Only this module names LSP types (lsp-server, lsp-types); nothing else in the crate uses it.

pub mod analysis;
pub mod convert;
pub mod declaration;
pub mod example_edits;
pub mod handlers;
pub mod overlay;
pub mod publish;
pub mod schema;
pub mod server;
pub mod std_files;
pub mod transport;
pub mod uri;

use std::process::ExitCode;

/// Serves LSP over stdin/stdout until the client says `exit` (see [`serve_stdio`]).
pub fn run_stdio() -> ExitCode {
    ExitCode::from(serve_stdio())
}

/// Serves LSP over stdin/stdout until the client says `exit`. Returns the exit status: 0 after
/// `shutdown` then `exit`, 1 when the client left without `shutdown` (as the protocol asks), 2
/// when stdio could not be set up.
pub fn serve_stdio() -> u8 {
    match transport::Transport::stdio() {
        Ok(transport) => server::serve(transport),
        Err(err) => {
            eprintln!("aelc-lsp: cannot start: {err}");
            2
        }
    }
}
