//! Node bodies in the Rust glue (issue 6, spec §6, §12): a node whose body has `let`s, a pure
//! fn with an `if`, a `match`, an `extern fn` written in Rust and a struct literal runs
//! through the generated `run` (the one executor), compiled here into a throw-away crate and
//! run on fixed inputs; every ending is reached (answer, input check, bounds broken by the
//! answer, extern failure) and its result is the one the body's source says. A body that
//! calls another node (a delegated call) runs there too, the child's receipt under the
//! parent's `delegated`; an `extern fn` that stands for a node's model call (the seed's
//! `return write_review(request);`) has no trait method, the executor makes the call. The
//! same crate checks that a type with a default deserializes through serde with the default
//! filled in by the runtime decoder, and that a bad document is an error, not a panic
//! (`rt::from_json`).

use crate::glue_gen;

use std::path::Path;
use std::process::Command;

const SOURCE: &str = r#"//! A node with a body.

/// The request.
struct Req {
    text: Str<1..=50>,
    extra: u8<0..=10> = 3,
}

/// How the text reads.
enum Mood { calm, loud }

/// The answer.
struct Res {
    label: Str<20>,
    size: u32,
    mood: Mood,
}

/// Why a request is refused.
errors BodyError {
    /// The text is blank.
    blank,
}

check not_blank(req: Req) fails BodyError {
    require req.text.trim().len() > 0 else blank "the text is blank";
}

fn mood_of(text: Str<50>) -> Mood {
    if text.to_upper() == text { loud } else { calm }
}

/// Makes a text louder (in Rust).
extern fn shout(text: Str<50>) -> Str<20>;

/// Labels a text.
node label(req: Req) -> Res fails BodyError {
    input {
        check not_blank;
    }
    let mood = mood_of(req.text);
    let said = match mood { calm => shout(req.text), loud => req.text };
    return Res { label: said, size: req.text.len() + req.extra, mood: mood };
}

/// Asks the model for a label.
node ask(req: Req) -> Res {
    config {
        model: binding("recorded");
    }
}

/// Writes a label (the seed's form: it stands for the model call of `seeded`).
extern fn write_label(req: Req) -> Res;

/// Labels with the model, through its model-call extern.
node seeded(req: Req) -> Res {
    config {
        model: binding("recorded");
    }
    return write_label(req);
}

/// Looks at a file (media access: the reference is checked in the run's file store).
node look(doc: File<1KiB>) -> Res {
    return Res { label: "seen", size: 1, mood: calm };
}

/// Labels through `ask` (a delegated call), one bigger.
node relay(req: Req) -> Res {
    let asked = ask(req);
    return Res { label: asked.label, size: asked.size + 1, mood: asked.mood };
}
"#;

const MAIN: &str = r##"//! Runs the generated `body` of `label` on the inputs given as arguments.
#![deny(warnings)]

// Items a binary does not use are dead code; every other warning is an error.
#[allow(dead_code)]
mod glue {
    include!("../glue/body.rs");
}

use aelc_runtime::eval::EvalErrorKind;
use aelc_runtime::glue as rt;
use aelc_runtime::model::{FinishReason, ModelAnswer, ReplayModel, Usage};
use aelc_runtime::pipeline::TickClock;

struct Shouter;

impl glue::externs::NodesBody for Shouter {
    fn shout(
        &mut self,
        _ctx: &mut rt::Context<'_>,
        text: rt::BoundedStr<50>,
    ) -> Result<rt::BoundedStr<20>, rt::Error> {
        if text.as_str().contains("boom") {
            return Err(rt::Error::new(EvalErrorKind::Extern, "shout refused boom"));
        }
        let loud: String = format!("{}!", text.as_str().to_uppercase());
        rt::BoundedStr::new(loud.chars().take(20).collect::<String>())
            .map_err(|e| rt::Error::new(EvalErrorKind::Extern, e.to_string()))
    }
}

/// One line per run: how it ended, as the executor says.
fn line<T: rt::serde::Serialize>(ran: Result<rt::Run<T>, rt::Unrunnable>) -> String {
    let run = match ran {
        Ok(run) => run,
        Err(e) => return format!("unrunnable {e}"),
    };
    let typed = rt::serde_json::to_string(&run.output).unwrap_or_default();
    let outcome = run.outcome();
    match (&run.run.input_check, outcome.status) {
        (Some(f), _) => format!("input_check {} {}", f.check, f.code),
        (None, rt::Status::Succeeded) => format!(
            "done {typed} delegated {}",
            run.receipt().delegated.len()
        ),
        (None, status) => format!(
            "{status:?} {} {}{}",
            outcome.code.clone().unwrap_or_default(),
            run.run.refusal.clone().unwrap_or_default(),
            run.run
                .input_errors
                .iter()
                .map(|e| e.message.as_str())
                .collect::<Vec<_>>()
                .join("; ")
        ),
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let answer = args.next().unwrap_or_default();
    for input in args {
        let line = match glue::label::decode(input.as_bytes()) {
            Err(e) => format!("undecodable {}", e[0].code.as_str()),
            Ok(req) => {
                let mut model = rt::NoModel;
                let mut clock = TickClock { now: 0, tick: 0 };
                let mut media = rt::NoMedia;
                let mut ctx = rt::Context::new(&mut model, &mut clock, &mut media);
                line(glue::label::run(&mut Shouter, &mut ctx, &req))
            }
        };
        println!("{line}");
    }
    // A delegated call: `relay` runs `ask`, whose model answers from the replay.
    let recorded = ModelAnswer {
        text: answer,
        finish_reason: FinishReason::Stop,
        usage: Usage::default(),
    };
    let mut model = ReplayModel::new([recorded.clone()]);
    let mut clock = TickClock { now: 0, tick: 0 };
    let mut media = rt::NoMedia;
    let mut ctx = rt::Context::new(&mut model, &mut clock, &mut media);
    ctx.check_accepts = false;
    let ran = glue::relay::run_json(&mut Shouter, &mut ctx, br#"{"text": "hi"}"#);
    println!("relay {}", line(ran));
    // The seed's form: `write_label` has no trait method (`Shouter` implements none), the
    // executor makes the model call with the node's prompt.
    let mut model = ReplayModel::new([recorded]);
    let mut clock = TickClock { now: 0, tick: 0 };
    let mut ctx = rt::Context::new(&mut model, &mut clock, &mut media);
    ctx.check_accepts = false;
    let ran = glue::seeded::run_json(&mut Shouter, &mut ctx, br#"{"text": "hi"}"#);
    println!("seeded {} calls {}", line(ran), model.requests.len());
    // Media access: with a file store, a reference is checked there for the run's tenant
    // (another tenant's file is refused before anything runs); without one it is taken as
    // it is.
    let dir = std::env::temp_dir().join(format!("glue-files-{}", std::process::id()));
    let store = rt::Files::in_project(&dir);
    match store.put(b"hello", "acme", None, None) {
        Ok(stored) => {
            let reference = rt::serde_json::to_string(&stored.media).unwrap_or_default();
            // One parameter: the document is its value.
            let input = reference;
            for tenant in ["acme", "other"] {
                let mut model = rt::NoModel;
                let mut clock = TickClock { now: 0, tick: 0 };
                let mut ctx = rt::Context::new(&mut model, &mut clock, &mut media)
                    .with_files(&store, tenant);
                let ran = glue::look::run_json(&mut Shouter, &mut ctx, input.as_bytes());
                let shown = line(ran).replace(stored.media.reference.as_str(), "REF");
                println!("look {tenant} {shown}");
            }
        }
        Err(e) => println!("look store {e}"),
    }
    let _ = std::fs::remove_dir_all(&dir);
    // serde on a type with a default: filled in by the runtime decoder.
    match rt::serde_json::from_str::<glue::Req>(r#"{"text": "hi"}"#) {
        Ok(req) => println!("serde extra {}", req.extra.get()),
        Err(e) => println!("serde error {e}"),
    }
    match rt::serde_json::from_str::<glue::Req>(r#"{"text": "hi", "extra": 99}"#) {
        Ok(_) => println!("serde accepted 99"),
        Err(e) => println!("serde error {e}"),
    }
}
"##;

fn project(dir: &str, source: &str) -> std::path::PathBuf {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join(dir);
    glue_gen::write_files(
        &root,
        &[
            (
                "ael.toml".to_owned(),
                "[package]\nname = \"acme/body\"\nversion = \"0.1.0\"\n\n\
                 [bindings.recorded]\nprovider = \"replay\"\nmodel = \"recorded\"\n"
                    .to_owned(),
            ),
            ("nodes/body.node.ael".to_owned(), source.to_owned()),
        ],
    );
    root
}

#[test]
fn a_node_body_runs_in_the_glue() {
    let root = project("glue-body-project", SOURCE);
    let (program, glue) = glue_gen::glue_of(&root);
    assert!(program.nodes[0].body.is_some(), "the body is lowered");
    assert!(
        !glue.contains("pub fn body<"),
        "a body runs inside `run`, through the executor"
    );
    let exe = glue_gen::build_crate(
        "glue-body",
        &[
            ("glue/body.rs".to_owned(), glue),
            ("src/main.rs".to_owned(), MAIN.to_owned()),
        ],
    );
    let inputs = [
        r#"{"label": "asked", "size": 4, "mood": "calm"}"#,
        r#"{"text": "hello"}"#,
        r#"{"text": "LOUD TEXT", "extra": 1}"#,
        r#"{"text": "   "}"#,
        r#"{"text": "THIS IS A VERY LONG LOUD TEXT"}"#,
        r#"{"text": "x", "extra": 11}"#,
        r#"{"text": "boom"}"#,
    ];
    let out = Command::new(&exe).args(inputs).output().expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines,
        [
            // calm: the extern shouts; size = 5 characters + the default 3
            r#"done {"label":"HELLO!","size":8,"mood":"calm"} delegated 0"#,
            // loud: the text itself; 9 + 1
            r#"done {"label":"LOUD TEXT","size":10,"mood":"loud"} delegated 0"#,
            "input_check not_blank blank",
            // 29 characters do not fit `Str<20>`: the answer's bounds are checked
            "InvalidOutput invalid_output the body's answer was rejected: output.label: text has 29 characters, at most 20 are allowed (too_long)",
            "undecodable out_of_range",
            "Error internal_error the body of `label` could not be evaluated: shout refused boom",
            // `relay` ran `ask` (one child receipt) and added one to its size
            r#"relay done {"label":"asked","size":5,"mood":"calm"} delegated 1"#,
            // the model call of `seeded`, made by the executor
            r#"seeded done {"label":"asked","size":4,"mood":"calm"} delegated 0 calls 1"#,
            r#"look acme done {"label":"seen","size":1,"mood":"calm"} delegated 0"#,
            "look other RejectedInput invalid_input media reference REF (`ref`): no such file for tenant `other`; nothing was read or called",
            "serde extra 3",
            "serde error value.extra: 99 is out of range for u8 in 0..=10 (out_of_range)",
        ]
    );
}
