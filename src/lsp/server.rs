//! The event loop: one thread, messages handled in arrival order, stale work skipped.
//!
//! - Notifications about documents update the [`Overlay`] at once (cheap) and mark the project
//!   stale; diagnostics are recomputed and published only when no message is waiting, so a burst
//!   of `didChange`s costs one compilation (coalescing).
//! - A request looks at the queue first: when a `$/cancelRequest` for it is already waiting, it
//!   is answered `RequestCancelled` without running.
//! - Every handler runs under `catch_unwind`: a panic becomes an `InternalError` response (or a
//!   line on stderr for a notification), never a dead server.
//! - Requests before `initialize` get `ServerNotInitialized`; unknown methods `MethodNotFound`.
//!
//! Nothing here writes to stdout except through the transport.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::mpsc::Sender;

use lsp_server::{ErrorCode, Message, Notification, Request, RequestId, Response};
use lsp_types::notification::{self as note, Notification as _};
use lsp_types::request::{self as req, Request as _};
use lsp_types::{
    InitializeParams, InitializeResult, PositionEncodingKind, ServerInfo,
    TextDocumentPositionParams, Uri,
};
use serde_json::Value;

use super::analysis::{self, Analysis};
use super::convert::{Encoding, Lines};
use super::handlers;
use super::overlay::{Document, Overlay, OverlayWorld};
use super::publish;
use super::transport::{Incoming, Transport};
use super::uri;
use crate::span::FileId;

/// An error a handler answers with.
#[derive(Debug)]
pub struct HandlerError {
    pub code: i32,
    pub message: String,
}

impl HandlerError {
    pub fn invalid_params(message: impl Into<String>) -> HandlerError {
        HandlerError {
            code: ErrorCode::InvalidParams as i32,
            message: message.into(),
        }
    }

    pub fn request_failed(message: impl Into<String>) -> HandlerError {
        HandlerError {
            code: ErrorCode::RequestFailed as i32,
            message: message.into(),
        }
    }
}

pub type HandlerResult<T> = Result<T, HandlerError>;

/// A request that panics on purpose, so tests can prove a panicking handler becomes an error
/// response. It exists only when the server runs with [`CRASH_TEST_ENV`] set.
pub const CRASH_TEST: &str = "aelc/crashTest";
pub const CRASH_TEST_ENV: &str = "AELC_LSP_CRASH_TEST";

/// The id of the server's one request, the file watcher registration.
const WATCH_REGISTRATION: &str = "aelc/watch-files";

/// The server's state between messages.
pub struct Server {
    out: Sender<Message>,
    pub encoding: Encoding,
    pub overlay: Overlay,
    /// Analyses by project root (or lone file).
    analyses: HashMap<PathBuf, Analysis>,
    /// Roots whose analysis is out of date.
    stale: BTreeSet<PathBuf>,
    /// Roots whose diagnostics have not been published since they changed.
    unpublished: BTreeSet<PathBuf>,
    /// Per root, the files that were last sent non-empty diagnostics (to clear them later).
    published: HashMap<PathBuf, BTreeSet<PathBuf>>,
    initialized: bool,
    /// Whether the client lets the server register file watchers (see [`Server::watch_files`]).
    can_watch_files: bool,
    /// The project folders of the workspace given at `initialize`, for `workspace/symbol`.
    workspace_projects: Vec<PathBuf>,
    shutdown: bool,
}

/// A position in a document, resolved against its project's analysis.
pub struct Located<'a> {
    pub analysis: &'a Analysis,
    pub file: FileId,
    pub offset: u32,
    pub encoding: Encoding,
}

impl Located<'_> {
    pub fn text(&self) -> &str {
        self.analysis
            .compilation
            .sources
            .get(self.file)
            .map_or("", |f| f.text.as_str())
    }
}

impl Server {
    pub fn new(out: Sender<Message>) -> Server {
        Server {
            out,
            encoding: Encoding::Utf16,
            overlay: Overlay::default(),
            analyses: HashMap::new(),
            stale: BTreeSet::new(),
            unpublished: BTreeSet::new(),
            published: HashMap::new(),
            initialized: false,
            can_watch_files: false,
            workspace_projects: Vec::new(),
            shutdown: false,
        }
    }

    fn send(&self, message: impl Into<Message>) {
        // The writer only goes away when the client does; then there is nobody to tell.
        let _ = self.out.send(message.into());
    }

    pub fn notify<N: lsp_types::notification::Notification>(&self, params: N::Params) {
        self.send(Notification::new(N::METHOD.to_owned(), params));
    }

    fn root_of(&self, path: &Path) -> PathBuf {
        analysis::root_of(&OverlayWorld::new(&self.overlay), path)
    }

    fn mark_stale(&mut self, path: &Path) {
        let root = self.root_of(path);
        self.stale.insert(root.clone());
        self.unpublished.insert(root);
    }

    /// The up-to-date analysis of the project holding `path`.
    pub fn analysis(&mut self, path: &Path) -> &Analysis {
        let root = self.root_of(path);
        let stale = self.stale.remove(&root);
        let mut carried = None;
        if stale {
            // The old analysis goes before the new one is computed, all but its program: both
            // alive at once doubled the server's peak (issue 25, finding G).
            if let Some(previous) = self.analyses.remove(&root) {
                carried = previous.program.clone();
                drop(previous);
                crate::allocator::release_freed();
            }
        }
        let world = OverlayWorld::new(&self.overlay);
        self.analyses.entry(root).or_insert_with_key(|root| {
            let mut fresh = Analysis::compute(&world, root);
            fresh.carry_program(carried);
            fresh
        })
    }

    /// What `workspace/symbol` analyses: a path inside each workspace project and each project
    /// (or lone file) analysed so far, once each.
    pub fn workspace_targets(&self) -> Vec<PathBuf> {
        let mut roots: BTreeSet<PathBuf> = self.workspace_projects.iter().cloned().collect();
        roots.extend(self.analyses.keys().cloned());
        roots
            .into_iter()
            .map(|root| {
                if root.join("ael.toml").is_file() {
                    root.join("ael.toml")
                } else {
                    root
                }
            })
            .collect()
    }

    /// Resolves a document position: the analysis, file id and byte offset.
    pub fn locate(&mut self, at: &TextDocumentPositionParams) -> HandlerResult<Located<'_>> {
        let path = uri::to_path(&at.text_document.uri)
            .ok_or_else(|| HandlerError::invalid_params("only file:// documents are analysed"))?;
        let encoding = self.encoding;
        let analysis = self.analysis(&path);
        let file = analysis
            .file_id(&path)
            .ok_or_else(|| HandlerError::request_failed("this file is not part of the analysis"))?;
        let source = analysis
            .compilation
            .sources
            .get(file)
            .ok_or_else(|| HandlerError::request_failed("no source for this file"))?;
        let offset = Lines::new(&source.text, source.lines(), encoding).offset(at.position);
        Ok(Located {
            analysis,
            file,
            offset,
            encoding,
        })
    }

    /// Recomputes and publishes the diagnostics of every project that changed.
    pub fn flush_diagnostics(&mut self) {
        let roots: Vec<PathBuf> = std::mem::take(&mut self.unpublished).into_iter().collect();
        for root in roots {
            let encoding = self.encoding;
            let previous = self.published.remove(&root).unwrap_or_default();
            let open: BTreeMap<PathBuf, i32> = self
                .overlay
                .documents
                .iter()
                .map(|(p, d)| (p.clone(), d.version))
                .collect();
            let analysis = self.analysis(&root);
            let batch = publish::diagnostics(analysis, encoding, &previous, &open);
            let mut now = BTreeSet::new();
            for (path, params) in batch {
                if !params.diagnostics.is_empty() {
                    now.insert(path);
                }
                self.notify::<note::PublishDiagnostics>(params);
            }
            self.published.insert(root, now);
        }
    }

    fn handle_request(&mut self, request: Request) {
        let id = request.id.clone();
        if !self.initialized && request.method != req::Initialize::METHOD {
            self.send(Response::new_err(
                id,
                ErrorCode::ServerNotInitialized as i32,
                "the server has not been initialized".into(),
            ));
            return;
        }
        if self.shutdown {
            self.send(Response::new_err(
                id,
                ErrorCode::InvalidRequest as i32,
                "the server is shutting down".into(),
            ));
            return;
        }
        let outcome = catch_unwind(AssertUnwindSafe(|| self.dispatch(request)));
        let response = match outcome {
            Ok(Ok(value)) => Response::new_ok(id, value),
            Ok(Err(err)) => Response::new_err(id, err.code, err.message),
            Err(panic) => {
                let why = panic_message(&panic);
                eprintln!("aelc-lsp: a request handler panicked: {why}");
                // The analyses may be half-built; rebuild them on the next use.
                self.invalidate_all();
                Response::new_err(
                    id,
                    ErrorCode::InternalError as i32,
                    format!("internal error (the server keeps running): {why}"),
                )
            }
        };
        self.send(response);
    }

    fn dispatch(&mut self, request: Request) -> HandlerResult<Value> {
        let params = request.params;
        match request.method.as_str() {
            req::Initialize::METHOD => {
                let params: InitializeParams = from_params(params)?;
                Ok(to_value(self.initialize(params)))
            }
            req::Shutdown::METHOD => {
                self.shutdown = true;
                Ok(Value::Null)
            }
            req::HoverRequest::METHOD => {
                run::<req::HoverRequest>(self, params, handlers::hover::handle)
            }
            req::GotoDefinition::METHOD => {
                run::<req::GotoDefinition>(self, params, handlers::definition::handle)
            }
            req::References::METHOD => {
                run::<req::References>(self, params, handlers::references::handle)
            }
            req::Completion::METHOD => {
                run::<req::Completion>(self, params, handlers::completion::handle)
            }
            req::DocumentSymbolRequest::METHOD => {
                run::<req::DocumentSymbolRequest>(self, params, handlers::symbols::handle)
            }
            req::WorkspaceSymbolRequest::METHOD => run::<req::WorkspaceSymbolRequest>(
                self,
                params,
                handlers::workspace_symbols::handle,
            ),
            req::CodeActionRequest::METHOD => {
                run::<req::CodeActionRequest>(self, params, handlers::code_action::handle)
            }
            req::Formatting::METHOD => {
                run::<req::Formatting>(self, params, handlers::formatting::handle)
            }
            req::Rename::METHOD => run::<req::Rename>(self, params, handlers::rename::handle),
            req::PrepareRenameRequest::METHOD => {
                run::<req::PrepareRenameRequest>(self, params, handlers::rename::prepare)
            }
            req::SemanticTokensFullRequest::METHOD => run::<req::SemanticTokensFullRequest>(
                self,
                params,
                handlers::semantic_tokens::handle,
            ),
            CRASH_TEST if std::env::var_os(CRASH_TEST_ENV).is_some() => {
                panic!("`{CRASH_TEST}` asked for a panic")
            }
            method => Err(HandlerError {
                code: ErrorCode::MethodNotFound as i32,
                message: format!("unknown method `{method}`"),
            }),
        }
    }

    fn initialize(&mut self, params: InitializeParams) -> InitializeResult {
        let offered = params
            .capabilities
            .general
            .and_then(|g| g.position_encodings)
            .unwrap_or_default();
        self.encoding = if offered.contains(&PositionEncodingKind::UTF8) {
            Encoding::Utf8
        } else {
            Encoding::Utf16
        };
        self.can_watch_files = params
            .capabilities
            .workspace
            .as_ref()
            .and_then(|w| w.did_change_watched_files.as_ref())
            .and_then(|w| w.dynamic_registration)
            .unwrap_or(false);
        #[allow(deprecated)] // `rootUri` is what clients without workspace folders send.
        let folders: Vec<Uri> = match (params.workspace_folders, params.root_uri) {
            (Some(folders), _) if !folders.is_empty() => {
                folders.into_iter().map(|f| f.uri).collect()
            }
            (_, Some(root)) => vec![root],
            _ => Vec::new(),
        };
        self.workspace_projects = folders
            .iter()
            .filter_map(uri::to_path)
            .flat_map(|folder| handlers::workspace_symbols::projects_below(&folder))
            .collect();
        self.initialized = true;
        let mut capabilities = handlers::capabilities();
        capabilities.position_encoding = Some(match self.encoding {
            Encoding::Utf8 => PositionEncodingKind::UTF8,
            Encoding::Utf16 => PositionEncodingKind::UTF16,
        });
        InitializeResult {
            capabilities,
            server_info: Some(ServerInfo {
                name: "aelc-lsp".into(),
                version: Some(env!("CARGO_PKG_VERSION").into()),
            }),
        }
    }

    /// Asks the client to report changes to project files made outside the editor (a `git
    /// checkout`, a generated file), so every check sees the disk as it is. Only clients that
    /// offered dynamic registration are asked; the answer needs no handling.
    fn watch_files(&self) {
        if !self.can_watch_files {
            return;
        }
        let watchers: Vec<lsp_types::FileSystemWatcher> =
            ["**/*.ael", "**/ael.toml", "**/*.md", "**/*.json"]
                .into_iter()
                .map(|glob| lsp_types::FileSystemWatcher {
                    glob_pattern: lsp_types::GlobPattern::String(glob.into()),
                    kind: None,
                })
                .collect();
        let options = lsp_types::DidChangeWatchedFilesRegistrationOptions { watchers };
        let params = lsp_types::RegistrationParams {
            registrations: vec![lsp_types::Registration {
                id: WATCH_REGISTRATION.into(),
                method: note::DidChangeWatchedFiles::METHOD.into(),
                register_options: Some(to_value(options)),
            }],
        };
        self.send(Request::new(
            RequestId::from(WATCH_REGISTRATION.to_owned()),
            req::RegisterCapability::METHOD.to_owned(),
            params,
        ));
    }

    fn invalidate_all(&mut self) {
        let roots: Vec<PathBuf> = self.analyses.keys().cloned().collect();
        self.analyses.clear();
        self.unpublished.extend(roots);
    }

    fn handle_notification(&mut self, notification: Notification) {
        if !self.initialized {
            // Before `initialize` only `exit` means anything (handled by the loop).
            return;
        }
        let method = notification.method.clone();
        let outcome = catch_unwind(AssertUnwindSafe(|| self.notification(notification)));
        match outcome {
            Ok(Ok(())) => {}
            Ok(Err(err)) => eprintln!("aelc-lsp: {method}: {}", err.message),
            Err(panic) => {
                eprintln!(
                    "aelc-lsp: the {method} handler panicked: {}",
                    panic_message(&panic)
                );
                self.invalidate_all();
            }
        }
    }

    fn notification(&mut self, notification: Notification) -> HandlerResult<()> {
        let params = notification.params;
        match notification.method.as_str() {
            note::DidOpenTextDocument::METHOD => {
                let p: lsp_types::DidOpenTextDocumentParams = from_params(params)?;
                let path = document_path(&p.text_document.uri)?;
                self.overlay.documents.insert(
                    path.clone(),
                    Document::new(p.text_document.text, p.text_document.version),
                );
                self.mark_stale(&path);
            }
            note::DidChangeTextDocument::METHOD => {
                let p: lsp_types::DidChangeTextDocumentParams = from_params(params)?;
                let path = document_path(&p.text_document.uri)?;
                let encoding = self.encoding;
                let Some(doc) = self.overlay.documents.get_mut(&path) else {
                    // A change before `didOpen`: only a full text can be trusted.
                    if let Some(full) = p
                        .content_changes
                        .into_iter()
                        .rev()
                        .find(|c| c.range.is_none())
                    {
                        self.overlay.documents.insert(
                            path.clone(),
                            Document::new(full.text, p.text_document.version),
                        );
                        self.mark_stale(&path);
                        return Ok(());
                    }
                    return Err(HandlerError::invalid_params(
                        "didChange for a document that was never opened",
                    ));
                };
                for change in p.content_changes {
                    match change.range {
                        Some(range) => {
                            let span =
                                Lines::new(&doc.text, &doc.lines, encoding).span_range(range);
                            doc.edit(span, &change.text);
                        }
                        None => doc.replace(change.text),
                    }
                }
                doc.version = p.text_document.version;
                self.mark_stale(&path);
            }
            note::DidSaveTextDocument::METHOD => {
                let p: lsp_types::DidSaveTextDocumentParams = from_params(params)?;
                let path = document_path(&p.text_document.uri)?;
                if let (Some(text), Some(doc)) = (p.text, self.overlay.documents.get_mut(&path)) {
                    doc.replace(text);
                }
                self.mark_stale(&path);
            }
            note::DidCloseTextDocument::METHOD => {
                let p: lsp_types::DidCloseTextDocumentParams = from_params(params)?;
                let path = document_path(&p.text_document.uri)?;
                let root = self.root_of(&path);
                self.overlay.documents.remove(&path);
                if root == path {
                    // A lone file: nothing else shows its diagnostics any more.
                    self.analyses.remove(&root);
                    self.stale.remove(&root);
                    self.unpublished.remove(&root);
                    if self
                        .published
                        .remove(&root)
                        .is_some_and(|files| !files.is_empty())
                    {
                        self.notify::<note::PublishDiagnostics>(
                            lsp_types::PublishDiagnosticsParams {
                                uri: p.text_document.uri,
                                diagnostics: Vec::new(),
                                version: None,
                            },
                        );
                    }
                } else {
                    self.mark_stale(&path);
                }
            }
            note::DidChangeWatchedFiles::METHOD => {
                let roots: Vec<PathBuf> = self.analyses.keys().cloned().collect();
                self.stale.extend(roots.iter().cloned());
                self.unpublished.extend(roots);
            }
            note::Initialized::METHOD => self.watch_files(),
            // `$/cancelRequest` for finished work, `$/setTrace`, …: nothing to do.
            _ => {}
        }
        Ok(())
    }
}

fn document_path(uri: &Uri) -> HandlerResult<PathBuf> {
    uri::to_path(uri).ok_or_else(|| {
        HandlerError::invalid_params(format!("`{}` is not a file:// URI", uri.as_str()))
    })
}

fn from_params<P: serde::de::DeserializeOwned>(params: Value) -> HandlerResult<P> {
    serde_json::from_value(params).map_err(|e| HandlerError::invalid_params(e.to_string()))
}

fn to_value(value: impl serde::Serialize) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

fn run<R: lsp_types::request::Request>(
    server: &mut Server,
    params: Value,
    handler: fn(&mut Server, R::Params) -> HandlerResult<R::Result>,
) -> HandlerResult<Value> {
    let params = from_params(params)?;
    Ok(to_value(handler(server, params)?))
}

fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(text) = panic.downcast_ref::<&str>() {
        (*text).to_owned()
    } else if let Some(text) = panic.downcast_ref::<String>() {
        text.clone()
    } else {
        "unknown panic".into()
    }
}

/// The id of a `$/cancelRequest` notification.
fn cancelled_id(message: &Incoming) -> Option<RequestId> {
    let Incoming::Message(Message::Notification(n)) = message else {
        return None;
    };
    if n.method != note::Cancel::METHOD {
        return None;
    }
    let params: lsp_types::CancelParams = serde_json::from_value(n.params.clone()).ok()?;
    Some(match params.id {
        lsp_types::NumberOrString::Number(n) => RequestId::from(n),
        lsp_types::NumberOrString::String(s) => RequestId::from(s),
    })
}

/// Serves until `exit` (or the end of the input). Exit status 0 after `shutdown`, 1 otherwise,
/// as the protocol asks.
pub fn serve(transport: Transport) -> u8 {
    let mut server = Server::new(transport.sender.clone());
    let mut queue: VecDeque<Incoming> = VecDeque::new();
    loop {
        if queue.is_empty() {
            // Nothing waiting: now the latest text is worth compiling.
            if catch_unwind(AssertUnwindSafe(|| server.flush_diagnostics())).is_err() {
                eprintln!("aelc-lsp: computing diagnostics panicked");
                server.invalidate_all();
                server.unpublished.clear();
            }
            match transport.receiver.recv() {
                Ok(incoming) => queue.push_back(incoming),
                Err(_) => break,
            }
        }
        while let Ok(incoming) = transport.receiver.try_recv() {
            queue.push_back(incoming);
        }
        let Some(incoming) = queue.pop_front() else {
            continue;
        };
        match incoming {
            Incoming::Malformed(why) => eprintln!("aelc-lsp: ignored a malformed message: {why}"),
            Incoming::Message(Message::Request(request)) => {
                let cancelled = queue
                    .iter()
                    .any(|waiting| cancelled_id(waiting).as_ref() == Some(&request.id));
                if cancelled {
                    server.send(Response::new_err(
                        request.id,
                        ErrorCode::RequestCanceled as i32,
                        "cancelled by the client".into(),
                    ));
                } else {
                    server.handle_request(request);
                }
            }
            Incoming::Message(Message::Notification(notification)) => {
                if notification.method == note::Exit::METHOD {
                    let status = if server.shutdown { 0 } else { 1 };
                    drop(server);
                    transport.finish();
                    return status;
                }
                server.handle_notification(notification);
            }
            // The only request the server sends is the watcher registration: nothing to do
            // with its answer, even an error (the client then simply does not watch).
            Incoming::Message(Message::Response(_)) => {}
        }
    }
    let status = if server.shutdown { 0 } else { 1 };
    drop(server);
    transport.finish();
    status
}
