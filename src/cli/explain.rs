//! `aelc explain CODE`: the long explanation of a diagnostic code (or, for a retired code, the
//! code reported instead).

use super::args::ExplainArgs;
use super::Status;
use crate::diagnostics::codes;

pub fn run(args: &ExplainArgs) -> Status {
    if let Some(info) = codes::lookup(&args.code) {
        println!(
            "{}: {}\n\n{}\n",
            info.code,
            info.title,
            info.explanation.trim()
        );
        if !info.example.is_empty() {
            println!("Example:\n\n{}", info.example.trim_end());
        }
        return Status::Ok;
    }
    if let Some((code, instead, why)) = codes::retired(&args.code) {
        println!("{code} is no longer emitted: {why}, as {instead}.\n");
        println!("Run `aelc explain {instead}` for that code.");
        return Status::Ok;
    }
    eprintln!(
        "error: `{}` is not a diagnostic code of aelc (codes look like E0101 or W0201)",
        args.code
    );
    Status::Usage
}
