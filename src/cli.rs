//! The `aelc` command line: argument parsing and one module per subcommand.
//!
//! Exit status (spec §11): 0 ok, 1 errors found, 2 usage or I/O error. Only this module and its
//! children know clap.

mod account;
mod args;
mod build;
mod check;
mod explain;
mod files;
mod fmt;
mod lsp;
mod mandate;
mod new;
mod read;
mod run;
mod schema;
mod serve;
mod shown;
mod stream;
mod test;
mod validate;

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use clap::Parser;

pub use args::{Args, ColorChoice, Command, MessageFormat};

use crate::diagnostics::render::{self, Color};
use crate::diagnostics::Diagnostic;
use crate::driver::stamp::Replay;
use crate::source::SourceMap;

/// How a subcommand ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Exit 0.
    Ok,
    /// Exit 1: the input has errors.
    Failed,
    /// Exit 2: usage or I/O error.
    Usage,
}

impl From<Status> for ExitCode {
    fn from(status: Status) -> ExitCode {
        ExitCode::from(match status {
            Status::Ok => 0,
            Status::Failed => 1,
            Status::Usage => 2,
        })
    }
}

/// Parses `std::env::args` and runs the command.
pub fn main() -> ExitCode {
    let args = match Args::try_parse() {
        Ok(args) => args,
        Err(err) => {
            let code = if err.use_stderr() { 2 } else { 0 };
            let _ = err.print();
            return ExitCode::from(code);
        }
    };
    run(&args).into()
}

/// Runs parsed arguments.
pub fn run(args: &Args) -> Status {
    let out = Output::new(args);
    match &args.command {
        Command::Check(cmd) => check::run(&out, cmd),
        Command::Explain(cmd) => explain::run(cmd),
        Command::Fmt(cmd) => fmt::run(&out, cmd),
        Command::New(cmd) => new::run(cmd),
        Command::Lsp(_) => lsp::run(),
        Command::Build(cmd) => build::run(&out, cmd),
        Command::Schema(cmd) => schema::run(&out, cmd),
        Command::Validate(cmd) => validate::run(&out, cmd),
        Command::Test(cmd) => exported(Some("aelc test"), || test::run(&out, cmd)),
        Command::Run(cmd) => exported(Some("aelc run"), || run::run(&out, cmd)),
        Command::Serve(cmd) => exported(None, || serve::run(&out, cmd)),
        Command::Account(cmd) => account::run(&out, cmd),
        Command::Fund(cmd) => account::fund(&out, cmd),
        Command::Mandate(cmd) => mandate::run(&out, cmd),
        Command::Approve(cmd) => mandate::approve(&out, cmd),
        Command::Reject(cmd) => mandate::reject(&out, cmd),
        Command::Mcp(cmd) => exported(None, || mandate::mcp(&out, cmd)),
        Command::Files(cmd) => files::run(&out, cmd),
    }
}

/// Runs a command that runs agents with its traces exported, when the `OTEL_*` variables ask
/// for it (`aelc-telemetry`), and delivered before the process exits. `root`: the one span
/// over the whole command (a CLI run is one trace); a server's requests are traces of their
/// own.
fn exported(root: Option<&'static str>, command: impl FnOnce() -> Status) -> Status {
    let telemetry = match aelc_telemetry::init() {
        Ok(telemetry) => telemetry,
        Err(e) => {
            eprintln!("warning: {e}");
            aelc_telemetry::Telemetry::off()
        }
    };
    let status = {
        let _span = root.map(|name| {
            aelc_runtime::trace::Scope::start(name, aelc_runtime::trace::SpanKind::Internal, |_| {})
        });
        command()
    };
    telemetry.shutdown();
    status
}

/// Where and how a command prints diagnostics.
pub struct Output {
    pub format: MessageFormat,
    pub color: Color,
}

impl Output {
    fn new(args: &Args) -> Output {
        let color = match args.color {
            ColorChoice::Always => Color::Always,
            ColorChoice::Never => Color::Never,
            ColorChoice::Auto => {
                if std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none() {
                    Color::Always
                } else {
                    Color::Never
                }
            }
        };
        Output {
            format: args.message_format,
            color,
        }
    }

    /// Prints diagnostics: human text (and a summary line) on stderr, or JSON Lines on stdout.
    pub fn diagnostics(&self, sources: &SourceMap, diagnostics: &[Diagnostic]) {
        self.print(&self.render(sources, diagnostics));
    }

    /// What [`Output::diagnostics`] prints, as text: `stdout` and `stderr` of a [`Replay`]
    /// keyed by [`Output::replay_key`] (a skipped build prints it again).
    pub fn render(&self, sources: &SourceMap, diagnostics: &[Diagnostic]) -> Replay {
        let mut replay = Replay {
            key: self.replay_key(),
            ..Replay::default()
        };
        match self.format {
            MessageFormat::Human => {
                let (shown, hidden) =
                    diagnostics.split_at(diagnostics.len().min(render::MAX_SHOWN));
                let text = &mut replay.stderr;
                *text = render::human(sources, shown, self.color);
                if let Some(line) = render::not_shown(hidden) {
                    text.push_str(&line);
                    text.push('\n');
                }
                if let Some(summary) = render::summary(diagnostics) {
                    text.push_str(&summary);
                    text.push('\n');
                }
            }
            MessageFormat::Json => replay.stdout = render::json_lines(sources, diagnostics),
        }
        replay
    }

    /// Prints what [`Output::render`] made.
    pub fn print(&self, replay: &Replay) {
        if !replay.stdout.is_empty() {
            let _ = std::io::stdout().write_all(replay.stdout.as_bytes());
        }
        if !replay.stderr.is_empty() {
            let _ = std::io::stderr().write_all(replay.stderr.as_bytes());
        }
    }

    /// Everything the rendered diagnostics depend on besides the project: the format, the
    /// colour, and the current folder (files are named from it, `cli::shown`).
    pub fn replay_key(&self) -> String {
        let cwd = std::env::current_dir().unwrap_or_default();
        format!(
            "{:?} {:?} {}",
            self.format,
            self.color,
            cwd.to_string_lossy()
        )
    }

    /// Reports a usage or I/O error (exit 2).
    pub fn fatal(&self, message: &str) -> Status {
        eprint_line(&format!("error: {message}"));
        Status::Usage
    }
}

/// Prints one line on stdout. A closed or full pipe (`aelc fmt --check | head -1`, stdout
/// closed) loses the line but is no reason to panic, which `println!` would do.
pub fn print_line(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out
        .write_all(line.as_bytes())
        .and_then(|()| out.write_all(b"\n"));
}

/// [`print_line`] for stderr.
pub fn eprint_line(line: &str) {
    let mut err = std::io::stderr().lock();
    let _ = err
        .write_all(line.as_bytes())
        .and_then(|()| err.write_all(b"\n"));
}
