//! `aelc lsp`: the language server over stdio (the same server as the `aelc-lsp` binary).

use super::Status;

pub fn run() -> Status {
    match crate::lsp::serve_stdio() {
        0 => Status::Ok,
        1 => Status::Failed,
        _ => Status::Usage,
    }
}
