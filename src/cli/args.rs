//! The command-line grammar (clap derive).

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

#[derive(Parser, Debug)]
#[command(
    name = "aelc",
    version,
    about = "The AEL compiler: check, build, test and run typed LLM nodes"
)]
pub struct Args {
    /// How diagnostics are printed: `human` on stderr, or `json` (one object per line) on stdout.
    #[arg(long, global = true, value_enum, default_value_t = MessageFormat::Human)]
    pub message_format: MessageFormat,
    /// Colour in human output.
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum MessageFormat {
    Human,
    Json,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Report diagnostics; exit 1 on any error.
    Check(CheckArgs),
    /// Print the long explanation of a diagnostic code.
    Explain(ExplainArgs),
    /// Format AEL files canonically.
    Fmt(FmtArgs),
    /// Create a new project that checks, builds and tests green.
    New(NewArgs),
}

#[derive(clap::Args, Debug)]
pub struct CheckArgs {
    /// A project folder or one `.ael` file (default: the current folder).
    pub path: Option<PathBuf>,
}

#[derive(clap::Args, Debug)]
pub struct ExplainArgs {
    /// A diagnostic code such as `E0101`.
    pub code: String,
}

#[derive(clap::Args, Debug)]
pub struct FmtArgs {
    /// Do not write; exit 1 if any file is not formatted.
    #[arg(long)]
    pub check: bool,
    /// Files or folders (default: the current folder).
    pub files: Vec<PathBuf>,
}

#[derive(clap::Args, Debug)]
pub struct NewArgs {
    /// The folder to create; its last component is the project name.
    pub path: PathBuf,
}
