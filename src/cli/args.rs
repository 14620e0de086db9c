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
    /// Run the language server over stdin/stdout (also the `aelc-lsp` binary).
    Lsp(LspArgs),
    /// Emit schemas, model-facing variants, MCP tools, manifests and ir.json.
    Build(BuildArgs),
    /// Print one node's input or output schema.
    Schema(SchemaArgs),
    /// Decode a JSON file against a node's input or output type; exit 1 if invalid.
    Validate(ValidateArgs),
    /// Replay every example of every agent; exit 1 on any failure.
    Test(TestArgs),
    /// Run a node on one input; prints the output and the receipt.
    Run(RunArgs),
    /// Serve the project's agents over HTTP (the gateway).
    Serve(ServeArgs),
    /// Manage the accounts (tenants) of the gateway and the MCP server.
    Account(AccountArgs),
    /// Credit money to an account (`aelc fund demo "5 EUR"`).
    Fund(FundArgs),
    /// Manage mandates: what an agent may hire on an account's money.
    Mandate(MandateArgs),
    /// Approve a call an agent asked for (runs it unless --no-run).
    Approve(ApproveArgs),
    /// Reject a call an agent asked for.
    Reject(RejectArgs),
    /// The MCP server over stdio: an agent hires the project's agents within a mandate.
    Mcp(McpArgs),
    /// The project's file store (`.ael/files/`): `files put FILE` prints its reference;
    /// `files list ACCOUNT` and `files delete ID` manage the gateway's uploads.
    #[command(subcommand)]
    Files(FilesCommand),
}

#[derive(clap::Args, Debug)]
pub struct MandateArgs {
    #[command(subcommand)]
    pub command: MandateCommand,
}

#[derive(clap::Subcommand, Debug)]
pub enum MandateCommand {
    /// Create a mandate `ACCOUNT/NAME`.
    Create {
        /// `ACCOUNT/NAME`, e.g. `demo/sandbox`.
        id: String,
        /// The most the mandate may spend in all (`"5 EUR"`).
        #[arg(long)]
        budget: String,
        /// Calls whose worst case is above this need a human's approval (`"0.50 EUR"`).
        #[arg(long)]
        threshold: String,
        /// Agents or capabilities it may hire (globs: `extraction.*`, `acme/*`); repeatable.
        #[arg(long)]
        allow: Vec<String>,
        /// Agents or capabilities it may never hire; repeatable.
        #[arg(long)]
        deny: Vec<String>,
        /// When it ends: RFC 3339 (`2026-12-31T00:00:00Z`) or from now (`30m`, `24h`, `7d`).
        #[arg(long)]
        expires: Option<String>,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Print one mandate with what it spent.
    Show {
        id: String,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Print every mandate (of one account).
    List {
        #[arg(long)]
        account: Option<String>,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Print a new bearer token for MCP over HTTP (`/mcp`) bound to this mandate; shown once,
    /// only its hash is stored.
    Token {
        /// `ACCOUNT/NAME`.
        id: String,
        /// When it ends: RFC 3339 or from now (`30m`, `24h`, `7d`); default: with the mandate.
        #[arg(long)]
        expires: Option<String>,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// End a mandate token at once: its next request, on an open session too, is refused.
    Revoke {
        /// The token, as `aelc mandate token` printed it.
        token: String,
        #[command(flatten)]
        store: StoreArgs,
    },
}

#[derive(clap::Args, Debug)]
pub struct ApproveArgs {
    /// The approval id (`appr_…`) the agent was given.
    pub id: String,
    /// Only approve; the agent re-submits the call with `approval: ID`.
    #[arg(long)]
    pub no_run: bool,
    #[command(flatten)]
    pub store: StoreArgs,
}

#[derive(clap::Args, Debug)]
pub struct RejectArgs {
    /// The approval id (`appr_…`).
    pub id: String,
    #[command(flatten)]
    pub store: StoreArgs,
}

#[derive(clap::Args, Debug)]
pub struct McpArgs {
    /// The mandate the server acts under (`ACCOUNT/NAME`); no tool can change it.
    #[arg(long)]
    pub mandate: String,
    /// The project whose agents are hired (default: found from the current folder upwards).
    #[arg(long)]
    pub project: Option<PathBuf>,
    /// Hire from this build output (`target/ael/`) as it is, without building.
    #[arg(long, conflicts_with = "project")]
    pub built: Option<PathBuf>,
    /// `sqlite:PATH` or `postgres://…` (default: `AELC_STORE`, else `.ael/store.db`).
    #[arg(long)]
    pub store: Option<String>,
    /// Serve Streamable HTTP at `http://ADDR/mcp` instead of stdio (port 0: any free port).
    #[arg(long)]
    pub http: Option<String>,
    /// Hire the agents of this running gateway (`http://host:port`) instead of a project's;
    /// calls carry the mandate's account key from `AELC_API_KEY`, and `--store` must be the
    /// gateway's.
    #[arg(long, conflicts_with_all = ["project", "built"])]
    pub gateway: Option<String>,
    #[command(flatten)]
    pub limits: McpHttpArgs,
}

/// How MCP over Streamable HTTP (`/mcp`) is bounded; every request carries a mandate token.
#[derive(clap::Args, Debug, Clone)]
pub struct McpHttpArgs {
    /// MCP sessions open at once, all tokens together; one more is answered 503.
    #[arg(long, default_value_t = aelc_mcp::http::MAX_SESSIONS)]
    pub mcp_max_sessions: usize,
    /// MCP sessions one mandate token may hold at once; one more is answered 503.
    #[arg(long, default_value_t = aelc_mcp::http::MAX_SESSIONS_PER_TOKEN)]
    pub mcp_max_sessions_per_token: usize,
    /// Seconds an MCP session may stay idle (no message either way) before it is closed.
    #[arg(long, default_value_t = aelc_mcp::http::IDLE_TIMEOUT_SECS)]
    pub mcp_idle_timeout: u64,
    /// The largest request body /mcp reads, in bytes (413 beyond).
    #[arg(long, default_value_t = aelc_mcp::http::MAX_BODY_BYTES)]
    pub mcp_max_body: usize,
    /// A browser origin allowed to call /mcp (`https://app.example:443`,
    /// `http://localhost:*`); repeatable. A request with another `Origin` is answered 403; one
    /// without `Origin` (not a browser) passes.
    #[arg(long)]
    pub mcp_allowed_origin: Vec<String>,
    /// A `Host` /mcp answers to (`mcp.example.com`, `mcp.example.com:8443`), against DNS
    /// rebinding; repeatable. Default: localhost, 127.0.0.1 and ::1 only; `*`: any host.
    #[arg(long)]
    pub mcp_allowed_host: Vec<String>,
}

impl McpHttpArgs {
    pub fn limits(&self) -> aelc_mcp::http::HttpLimits {
        aelc_mcp::http::HttpLimits {
            max_sessions: self.mcp_max_sessions,
            max_sessions_per_token: self.mcp_max_sessions_per_token,
            idle_timeout: std::time::Duration::from_secs(self.mcp_idle_timeout.max(1)),
            max_body_bytes: self.mcp_max_body,
            allowed_origins: self.mcp_allowed_origin.clone(),
            allowed_hosts: match self.mcp_allowed_host.as_slice() {
                [] => aelc_mcp::http::loopback_hosts(),
                hosts if hosts.iter().any(|h| h == "*") => Vec::new(),
                hosts => hosts.to_vec(),
            },
        }
    }
}

#[derive(clap::Args, Debug)]
pub struct ServeArgs {
    /// The project folder (default: found from the current folder upwards). It is built first.
    pub path: Option<PathBuf>,
    /// Serve this build output (`target/ael/`) as it is, without building.
    #[arg(long, conflicts_with = "path")]
    pub built: Option<PathBuf>,
    /// The address to listen on (port 0: any free port, printed at start).
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub addr: String,
    /// Where uploaded files live: `s3://BUCKET/PREFIX` (configured by the `AWS_*` variables)
    /// or a folder (default: `AELC_FILES`, else the project's `.ael/files/`).
    #[arg(long)]
    pub files: Option<String>,
    /// `sqlite:PATH` or `postgres://…` (default: `AELC_STORE`, else `.ael/store.db`).
    #[arg(long)]
    pub store: Option<String>,
    /// Connections held at once; one more is answered 503.
    #[arg(long, default_value_t = 4096)]
    pub max_connections: usize,
    /// Runs executing at once; one more is answered 503.
    #[arg(long, default_value_t = 256)]
    pub max_runs: usize,
    /// Seconds a request body may take to arrive (408 after).
    #[arg(long, default_value_t = 30)]
    pub body_timeout: u64,
    /// Connections one client (an IPv4 address, an IPv6 /64) may hold; one more is answered 429
    /// (default: a sixteenth of --max-connections).
    #[arg(long)]
    pub max_connections_per_client: Option<usize>,
    /// Seconds a connection may take to send a complete request head, and a kept-alive one to
    /// begin its next request; it is closed after.
    #[arg(long, default_value_t = 10)]
    pub header_timeout: u64,
    /// Seconds a connection may stay open with no request in progress.
    #[arg(long, default_value_t = 60)]
    pub idle_timeout: u64,
    /// Uploads to /v1/files in progress at once; one more is answered 503.
    #[arg(long, default_value_t = 32)]
    pub max_uploads: usize,
    /// This gateway's name among the processes sharing the store (default:
    /// `gateway@HOST:PORT`). Its runs are stored with it; started again under the same name, it
    /// releases what its earlier life left open at once.
    #[arg(long)]
    pub instance: Option<String>,
    /// Seconds a gateway that stopped renewing its lease keeps its runs before another process
    /// voids them (it renews every third of it).
    #[arg(long, default_value_t = 30)]
    pub lease: u64,
    /// Keep only the SHA-256 of each run's input, not the input itself (which the console
    /// shows to the run's account).
    #[arg(long)]
    pub no_keep_inputs: bool,
    /// Where the console links a run's trace, `{trace_id}` standing for its id (Jaeger:
    /// `http://jaeger:16686/trace/{trace_id}`); runs record their trace id when traces are
    /// exported (`OTEL_EXPORTER_OTLP_ENDPOINT`).
    #[arg(long, value_name = "URL")]
    pub trace_url: Option<String>,
    #[command(flatten)]
    pub mcp: McpHttpArgs,
}

/// Where the accounts live.
#[derive(clap::Args, Debug)]
pub struct StoreArgs {
    /// `sqlite:PATH` or `postgres://…` (default: `AELC_STORE`, else the project's
    /// `.ael/store.db`).
    #[arg(long)]
    pub store: Option<String>,
    /// The project whose store to use (default: found from the current folder upwards).
    #[arg(long)]
    pub project: Option<PathBuf>,
}

#[derive(clap::Args, Debug)]
pub struct AccountArgs {
    #[command(subcommand)]
    pub command: AccountCommand,
}

#[derive(clap::Subcommand, Debug)]
pub enum AccountCommand {
    /// Create an account; prints its API key once (only its hash is stored).
    Add {
        /// Lowercase letters, digits, `_` and `-` (the owner part of `acme/review`).
        name: String,
        /// The account's currency.
        #[arg(long, default_value = "EUR")]
        currency: String,
        #[command(flatten)]
        store: StoreArgs,
    },
}

#[derive(clap::Args, Debug)]
pub struct FundArgs {
    /// The account to credit.
    pub name: String,
    /// `"5 EUR"`, `5EUR`, or `5` (the account's currency).
    pub amount: String,
    #[command(flatten)]
    pub store: StoreArgs,
}

#[derive(Subcommand, Debug)]
pub enum FilesCommand {
    /// Store a file; prints its media reference (type, size, SHA-256, expiry, source, and the
    /// dimensions, duration and sample rate its header gives).
    Put(FilesPutArgs),
    /// List an account's uploaded files (one JSON line each) and the bytes they take.
    List {
        /// The account (tenant) whose files to list.
        account: String,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Delete a file by its id (`holon://files/ID` or ID): its record in the store, its record
    /// in `.ael/files/` and its bytes, unless another reference shares them.
    Delete {
        /// The file's id or reference.
        id: String,
        #[command(flatten)]
        store: StoreArgs,
        /// Where the file store is: `s3://BUCKET/PREFIX` or a folder (default: `AELC_FILES`,
        /// else the project's `.ael/files/`).
        #[arg(long)]
        files: Option<String>,
    },
}

#[derive(clap::Args, Debug)]
pub struct FilesPutArgs {
    /// The file to store.
    pub file: PathBuf,
    /// The tenant that may use it (default: `local`, the tenant of `aelc run`).
    #[arg(long)]
    pub tenant: Option<String>,
    /// When the reference expires: an RFC 3339 date-time (`2026-12-02T15:00:00Z`) or a time
    /// from now (`30s`, `10m`, `2h`, `7d`).
    #[arg(long)]
    pub expires: Option<String>,
    /// The file was prepared from this stored file (`holon://files/ID`): the text of a PDF, a
    /// frame of a video. Its reference records where it came from (with `--step`).
    #[arg(long, requires = "step")]
    pub prepared_from: Option<String>,
    /// The preparation step (`pdf_text`, `video_frame:12`), with `--prepared-from`.
    #[arg(long, requires = "prepared_from")]
    pub step: Option<String>,
    /// Where the file store is: `s3://BUCKET/PREFIX` (configured by the `AWS_*` variables) or
    /// a folder (default: `AELC_FILES`, else the project's `.ael/files/`).
    #[arg(long)]
    pub files: Option<String>,
    /// The project folder (default: found from the current folder upwards).
    #[arg(long)]
    pub project: Option<PathBuf>,
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

#[derive(clap::Args, Debug)]
pub struct LspArgs {
    /// Accepted for editors that pass it; stdio is the only transport.
    #[arg(long)]
    pub stdio: bool,
}

#[derive(clap::Args, Debug)]
pub struct BuildArgs {
    /// The project folder (default: found from the current folder upwards).
    pub path: Option<PathBuf>,
    /// Where to write (default: `target/ael/` under the project root).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Do not write; exit 1 naming every emitted file that is out of date.
    #[arg(long)]
    pub check: bool,
}

#[derive(clap::Args, Debug)]
#[command(group(clap::ArgGroup::new("which").required(true).args(["input", "output"])))]
pub struct SchemaArgs {
    /// A node's or agent's name (`module::name` where two modules share it).
    pub node: String,
    /// The input schema.
    #[arg(long)]
    pub input: bool,
    /// The output schema.
    #[arg(long)]
    pub output: bool,
    /// A model-facing variant of the output schema: openai, gemini or anthropic.
    #[arg(long)]
    pub variant: Option<String>,
    /// The project folder (default: found from the current folder upwards).
    #[arg(long)]
    pub project: Option<PathBuf>,
}

#[derive(clap::Args, Debug)]
#[command(group(clap::ArgGroup::new("which").required(true).args(["input", "output"])))]
pub struct ValidateArgs {
    /// A node's or agent's name (`module::name` where two modules share it).
    pub node: String,
    /// A JSON file to decode as the node's input document.
    #[arg(long, value_name = "FILE")]
    pub input: Option<PathBuf>,
    /// A JSON file to decode as the node's output.
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// The project folder (default: found from the current folder upwards).
    #[arg(long)]
    pub project: Option<PathBuf>,
}

#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// A node's or agent's name (`module::name` where two modules share it).
    pub node: String,
    /// The input document (JSON); `-` reads it from stdin.
    #[arg(long, required_unless_present = "session", conflicts_with = "session")]
    pub input: Option<PathBuf>,
    /// Feed a node with several inputs (`combine: latest | zip`) its observations, one JSON
    /// line each: `{"input": "camera", "at": "2026-12-02T14:00:00.120Z", "value": …}`.
    #[arg(long, value_name = "F.jsonl")]
    pub session: Option<PathBuf>,
    /// Answer every model call with the next line of this JSON Lines file instead of calling
    /// the bindings: `{"text": "…", "finish_reason": "stop" | "length"}`.
    #[arg(long)]
    pub replay: Option<PathBuf>,
    /// Change a binding for this run: `NAME=KEY=VALUE` (provider, model, base_url, api_key_env,
    /// accepts) or `NAME=OTHER` to serve NAME with binding OTHER's settings. Repeatable.
    #[arg(long = "binding", value_name = "NAME=…")]
    pub bindings: Vec<String>,
    /// The project folder (default: found from the current folder upwards).
    #[arg(long)]
    pub project: Option<PathBuf>,
}

#[derive(clap::Args, Debug)]
pub struct TestArgs {
    /// The project folder (default: found from the current folder upwards).
    pub path: Option<PathBuf>,
}
