//! The `aelc` binary: everything lives in the library's [`aelc::cli`].

fn main() -> std::process::ExitCode {
    aelc::cli::main()
}
