//! The `aelc` binary: everything lives in the library's [`aelc::cli`].

/// mimalloc, kept warm: see [`aelc::allocator`].
#[global_allocator]
static GLOBAL: aelc::allocator::Allocator = aelc::allocator::Allocator;

fn main() -> std::process::ExitCode {
    aelc::allocator::configure();
    aelc::cli::main()
}
