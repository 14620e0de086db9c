//! Compiles `examples/review` into `$OUT_DIR/review.rs` and re-runs when any of its sources,
//! prompts or `ael.toml` change.

fn main() {
    if let Err(e) = aelc::build::compile("../review/ael.toml") {
        // A build script reports failure by exiting non-zero; the diagnostics say why.
        eprintln!("{e}");
        std::process::exit(1);
    }
}
