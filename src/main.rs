//! The `aelc` binary: everything lives in the library's [`aelc::cli`].

aelc::ship_allocator!();

fn main() -> std::process::ExitCode {
    aelc::allocator::configure();
    aelc::cli::main()
}
