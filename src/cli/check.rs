//! `aelc check [DIR|FILE]`: diagnostics only.

use std::path::PathBuf;

use super::args::CheckArgs;
use super::{Output, Status};
use crate::driver::{self, DiskWorld};

pub fn run(out: &Output, args: &CheckArgs) -> Status {
    let path = args.path.clone().unwrap_or_else(|| PathBuf::from("."));
    let compilation = match driver::check_path(&DiskWorld, &path) {
        Ok(c) => c,
        Err(err) => return out.fatal(&format!("cannot read {}: {err}", path.display())),
    };
    out.diagnostics(&compilation.sources, &compilation.diagnostics);
    if compilation.has_errors() {
        Status::Failed
    } else {
        Status::Ok
    }
}
