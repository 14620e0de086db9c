//! `aelc explain CODE`: the long explanation of a diagnostic code.

use super::args::ExplainArgs;
use super::Status;
use crate::diagnostics::codes;

pub fn run(args: &ExplainArgs) -> Status {
    match codes::lookup(&args.code) {
        Some(info) => {
            println!(
                "{}: {}\n\n{}\n",
                info.code,
                info.title,
                info.explanation.trim()
            );
            if !info.example.is_empty() {
                println!("Example:\n\n{}", info.example.trim_end());
            }
            Status::Ok
        }
        None => {
            eprintln!(
                "error: `{}` is not a diagnostic code of aelc (codes look like E0101 or W0201)",
                args.code
            );
            Status::Usage
        }
    }
}
