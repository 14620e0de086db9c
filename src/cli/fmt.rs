//! `aelc fmt [--check] [FILES]`: canonical formatting.

use super::args::FmtArgs;
use super::{Output, Status};

pub fn run(out: &Output, args: &FmtArgs) -> Status {
    let _ = args;
    out.fatal("`aelc fmt` is not built yet")
}
