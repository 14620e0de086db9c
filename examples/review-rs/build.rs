//! Compiles `examples/review` into `$OUT_DIR/review.rs` and re-runs when any of its sources,
//! prompts or `ael.toml` change. For the differential tests it also writes the project's
//! `ir.json` (what the runtime interpreter runs) as `$OUT_DIR/review.ir.json`, and the glue
//! of `bench/` (the runtime's review payloads in AEL) as `$OUT_DIR/review_bench.rs` for
//! `benches/glue.rs`.

use std::path::Path;

fn main() {
    for project in ["../review/ael.toml", "bench/ael.toml"] {
        if let Err(e) = aelc::build::compile(project) {
            // A build script reports failure by exiting non-zero; the diagnostics say why.
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
    let out = std::env::var_os("OUT_DIR").unwrap_or_default();
    let compilation = aelc::driver::check_path(&aelc::driver::DiskWorld, Path::new("../review"));
    if let Ok(Some(program)) = compilation.map(|c| c.program) {
        let ir = aelc::codegen::emit::ir_json(&program);
        if let Err(e) = std::fs::write(Path::new(&out).join("review.ir.json"), ir) {
            eprintln!("cannot write review.ir.json: {e}");
            std::process::exit(1);
        }
    }
}
