//! `aelc build [DIR] [--out D] [--check]`: emits schemas, model-facing variants, MCP tools,
//! manifests and `ir.json` (spec §9) under `target/ael/` of the project, or `--out`.
//!
//! `--check` writes nothing and exits 1 naming every file that is out of date, missing or no
//! longer produced. Publishing rules are checked before anything is written.
//!
//! A build whose inputs, compiler and outputs are those of the last build (the stamp,
//! [`driver::stamp`]) prints the diagnostics that build printed and does nothing else;
//! `--check` always checks.

use std::path::PathBuf;

use super::args::BuildArgs;
use super::{Output, Status};
use crate::codegen::write;
use crate::driver::{self, build, stamp, DiskWorld};

pub fn run(out: &Output, args: &BuildArgs) -> Status {
    let start = args.path.clone().unwrap_or_else(|| PathBuf::from("."));
    let world = DiskWorld;
    let Some(root) = driver::find_project_root(&world, &start) else {
        return out.fatal(&format!("no ael.toml at or above {}", start.display()));
    };
    let out_dir = args
        .out
        .clone()
        .unwrap_or_else(|| root.join("target").join("ael"));
    if !args.check {
        if let Some(fresh) = stamp::up_to_date(&root, &out_dir, &out.replay_key()) {
            out.print(&fresh.replay);
            super::eprint_line(&format!(
                "up to date: {} file(s) in {}, nothing changed since the last build",
                fresh.files,
                out_dir.display()
            ));
            return Status::Ok;
        }
    }
    // Every question asked of the disk is recorded for the stamp of a clean build.
    let recorder = stamp::Recorder::new(&world, &out_dir);
    let mut emitted = match build::emit_project(&recorder, &root) {
        Ok(e) => e,
        Err(message) => return out.fatal(&message),
    };
    super::shown::name_from_current_dir(&mut emitted.sources, &root);
    let printed = out.render(&emitted.sources, &emitted.diagnostics);
    out.print(&printed);
    let Some(files) = &emitted.files else {
        return Status::Failed;
    };
    if args.check {
        return match write::check(&out_dir, files) {
            Ok(stale) if stale.is_empty() => Status::Ok,
            Ok(stale) => {
                for s in &stale {
                    super::eprint_line(&format!(
                        "stale: {} ({})",
                        out_dir.join(s.path()).display(),
                        s.reason()
                    ));
                }
                super::eprint_line(&format!(
                    "{} emitted file(s) out of date; run `aelc build` to update them",
                    stale.len()
                ));
                Status::Failed
            }
            Err(err) => out.fatal(&format!("cannot check {}: {err}", out_dir.display())),
        };
    }
    match build::write(&root, &out_dir, &recorder, files, &printed) {
        Ok(written) => {
            super::eprint_line(&format!(
                "built {} file(s) in {}: {} written, {} unchanged, {} removed",
                files.len(),
                out_dir.display(),
                written.written.len(),
                written.unchanged,
                written.removed.len()
            ));
            Status::Ok
        }
        Err(err) => out.fatal(&format!("cannot write {}: {err}", out_dir.display())),
    }
}
