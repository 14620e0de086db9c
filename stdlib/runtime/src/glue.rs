//! What generated Rust glue (spec §9.4, `aelc build`'s `rust/<package>.rs`) links against,
//! beside [`crate::bounded`].
//!
//! Generated code is typed façades over the one executor ([`crate::exec`]); the rules are the
//! runtime's:
//! - [`Glue`] converts between generated types and [`Value`]s, the currency of the evaluator
//!   and the executor. Decoding is the runtime [`Decoder`] driven by the project's embedded
//!   [`Program`], straight into the generated types ([`Decode`], [`decode_one`],
//!   [`decode_params`]): the errors are the decoder's by construction.
//! - The glue embeds the whole program (`ir.json`, [`read_program`]) and the nodes' output
//!   schemas as `schemas/` holds them ([`EmbeddedSchemas`]), read once into an [`Executor`]
//!   that derives a node's model-facing variants when it first calls its model
//!   ([`embedded_executor`]); each JSON subtree they repeat is embedded once
//!   ([`expand_shared`]).
//! - Each generated struct's impls and each node's module are one call of [`glue_struct!`] and
//!   [`glue_node!`], which write them: the glue holds a line per struct and node, not the
//!   code.
//! - [`Context`] is what a run and an `extern fn` receive: the model, the clock, media
//!   downloads, receipt ids.
//! - [`NodeGlue`] is the generated dispatch of the program's externs, by id, to the author's
//!   trait methods; [`run`] runs a node through the executor with it, so a node with a body,
//!   delegated calls or raw mode runs exactly as under `aelc run`.

mod macros;
mod schemas;
mod shared;
pub use schemas::{EmbeddedNode, EmbeddedSchemas};
pub use shared::SHARED_OPEN;
// The macros generated glue calls for each struct and node (`rt::glue_struct!`, …), written
// once here; `#[macro_export]` puts them at the crate root.
pub use crate::{glue_fields, glue_node, glue_struct};

use crate::decode::Decoder;
pub use crate::decode::{Decode, DecodeFields, Decoded, Fill, Session};
pub use crate::error::Trail;
use crate::eval::{EvalError, EvalErrorKind};
use crate::exec::{CallContext, Env, ExternHost, MediaAccess};
pub use crate::exec::{CheckVerdict, Executor, Run as ExecRun, Schemas, Unrunnable};
pub use crate::expr::FnId;
pub use crate::files::{Files, MediaStore};
use crate::model::{Model, ModelAnswer, ModelError, ModelRequest};
pub use crate::program::{NodeId, Program};
use crate::receipt::sha256_hex;
pub use crate::receipt::{CountingIds, IdSource, Receipt, UuidIds};
pub use crate::ty::{FieldTy, FloatKind, Format, Ty};
pub use crate::value::Value;

// Generated code names everything through this module (`use ::aelc_runtime::glue as rt;`), so
// it needs no dependency of its own: serde's derives are re-exported with it.
pub use crate::bounded::*;
pub use crate::error::{Code, DecodeError};
pub use crate::eval::EvalError as Error;
pub use crate::pipeline::{CheckFailure as Failure, Clock, Outcome, Status};
pub use crate::value::MediaRef;
pub use serde;
pub use serde_json;

/// A key that names no variant of a unit enum (the decoder's `unknown_variant`).
pub fn unknown_key(key: &str, what: &str) -> BoundError {
    BoundError {
        code: Code::UnknownVariant,
        message: format!("{key:?} is not {what}"),
    }
}

/// An extern fn id the glue does not know (only a hand-edited program has one).
pub fn unknown_extern(id: u32) -> EvalError {
    EvalError::new(
        EvalErrorKind::UnknownFn,
        format!("extern fn #{id} is not in the generated glue"),
    )
}

/// An extern check id the glue does not know.
pub fn unknown_check(id: u32) -> EvalError {
    EvalError::new(
        EvalErrorKind::UnknownFn,
        format!("extern check #{id} is not in the generated glue"),
    )
}

/// The `index`th argument of an extern check, converted.
pub fn arg<T: Glue>(args: &[&Value], index: usize, name: &str) -> Result<T, EvalError> {
    match args.get(index) {
        Some(v) => T::from_value((*v).clone()),
        None => Err(EvalError::new(
            EvalErrorKind::TypeMismatch,
            format!("the check has no argument `{name}`"),
        )),
    }
}

/// The errors of a generated type's `Deserialize` (the runtime decoder's, in order).
#[derive(Clone, Debug, PartialEq)]
pub struct DecodeErrors(pub Vec<DecodeError>);

impl std::fmt::Display for DecodeErrors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for DecodeErrors {}

/// Reads a value of the program's type definition `def` from JSON with the runtime decoder
/// (spec §4: defaults filled in, every bound checked), straight into `T`.
///
/// Generated types whose fields have defaults deserialize through this
/// (`#[serde(try_from = "rt::serde_json::Value")]`), so a default is the one the decoder
/// fills in from the compiled program, and no code path constructs one that could fail.
pub fn from_json<T: Decode>(
    program: &Program,
    def: u32,
    json: &serde_json::Value,
) -> Result<T, DecodeErrors> {
    const ROOT: &str = "value";
    let bytes = serde_json::to_vec(json).map_err(|e| {
        DecodeErrors(vec![DecodeError::new(
            Code::WrongType,
            &crate::error::PathBuf::new(ROOT),
            format!("the value cannot be written as JSON: {e}"),
        )])
    })?;
    let ty = Ty::Ref {
        def: crate::ty::DefId(def),
    };
    Decoder::new(&program.types)
        .with_max_input_bytes(usize::MAX)
        .decode_into(&bytes, &ty, ROOT)
        .map_err(DecodeErrors)
}

/// A failure code of a generated `errors` set.
pub trait ErrorCode {
    fn as_str(&self) -> &'static str;
}

/// The code type of an `extern check` without `fails`: it cannot fail with a code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoCode {}

impl ErrorCode for NoCode {
    fn as_str(&self) -> &'static str {
        match *self {}
    }
}

/// What an `extern check` answers: `None` when it passes.
pub type CheckResult<E> = Result<Option<(E, Option<String>)>, EvalError>;

/// Converts an extern check's typed answer into the pipeline's.
pub fn check_answer<E: ErrorCode>(
    answer: CheckResult<E>,
) -> Result<Option<(String, Option<String>)>, EvalError> {
    answer.map(|a| a.map(|(code, message)| (code.as_str().to_owned(), message)))
}

/// A decoded value that the generated type does not accept (a bug in aelc: the decoder and
/// the generated types read the same description), reported as a decode error at the root.
pub fn conversion_error(root: &str, e: EvalError) -> DecodeError {
    DecodeError::new(
        Code::WrongType,
        &crate::error::PathBuf::new(root),
        format!(
            "the decoded value does not fit the generated type: {}",
            e.message
        ),
    )
}

/// A node run (the executor's [`ExecRun`]: outcome, receipt tree, refusals) with its accepted
/// output converted to the generated type.
#[derive(Clone, Debug)]
pub struct Run<T> {
    pub run: ExecRun,
    /// The accepted output, typed.
    pub output: Option<T>,
}

impl<T: Glue> Run<T> {
    pub fn new(run: ExecRun) -> Run<T> {
        let output = run
            .outcome
            .output
            .as_ref()
            .and_then(|v| T::from_value(v.clone()).ok());
        Run { run, output }
    }
}

impl<T> Run<T> {
    /// How the run ended: status, code, attempts, cost.
    pub fn outcome(&self) -> &Outcome {
        &self.run.outcome
    }

    /// The run's receipt, with the receipts of its delegated calls under `delegated`.
    pub fn receipt(&self) -> &Receipt {
        &self.run.receipt
    }
}

/// A generated type's conversion to and from the runtime's [`Value`].
pub trait Glue: Sized {
    /// Converts a value of this type (as the decoder or the evaluator made it); a value of
    /// another shape or outside the bounds is an error, never a panic.
    fn from_value(value: Value) -> Result<Self, EvalError>;
    fn to_value(&self) -> Value;
}

/// The error for a value of the wrong shape.
pub fn mismatch(expected: &str, found: &Value) -> EvalError {
    EvalError::new(
        EvalErrorKind::TypeMismatch,
        format!("expected {expected}, found {}", found.kind_name()),
    )
}

/// The error for a value outside its bounds.
pub fn out_of_bounds(e: BoundError) -> EvalError {
    EvalError::new(EvalErrorKind::TypeMismatch, e.to_string())
}

/// Takes the next field of a struct or variant being converted.
pub fn field<T: Glue>(
    fields: &mut impl Iterator<Item = Value>,
    name: &str,
) -> Result<T, EvalError> {
    match fields.next() {
        Some(v) => T::from_value(v),
        None => Err(EvalError::new(
            EvalErrorKind::TypeMismatch,
            format!("the value has no field `{name}`"),
        )),
    }
}

impl Glue for bool {
    fn from_value(value: Value) -> Result<Self, EvalError> {
        match value {
            Value::Bool(b) => Ok(b),
            other => Err(mismatch("a bool", &other)),
        }
    }
    fn to_value(&self) -> Value {
        Value::Bool(*self)
    }
}

macro_rules! glue_int {
    ($($t:ty),*) => {$(
        impl Glue for $t {
            fn from_value(value: Value) -> Result<Self, EvalError> {
                match value {
                    Value::Int(v) => <$t>::try_from(v).map_err(|_| {
                        EvalError::new(
                            EvalErrorKind::Overflow,
                            format!("{v} does not fit in {}", stringify!($t)),
                        )
                    }),
                    other => Err(mismatch("an integer", &other)),
                }
            }
            fn to_value(&self) -> Value {
                Value::Int(i128::from(*self))
            }
        }
    )*};
}
glue_int!(u8, u16, u32, u64, i8, i16, i32, i64);

impl<T: IntPrim, const MIN: i128, const MAX: i128, const EXCL: bool> Glue
    for BoundedInt<T, MIN, MAX, EXCL>
{
    fn from_value(value: Value) -> Result<Self, EvalError> {
        match value {
            Value::Int(v) => BoundedInt::from_wide(v).map_err(out_of_bounds),
            other => Err(mismatch("an integer", &other)),
        }
    }
    fn to_value(&self) -> Value {
        Value::Int(self.get().to_i128())
    }
}

impl<R: FloatRules> Glue for BoundedFloat<R> {
    fn from_value(value: Value) -> Result<Self, EvalError> {
        match value {
            Value::Float(v) => BoundedFloat::new(v).map_err(out_of_bounds),
            other => Err(mismatch("a float", &other)),
        }
    }
    fn to_value(&self) -> Value {
        Value::Float(self.get())
    }
}

impl<const MAX: u32, const MIN: u32> Glue for BoundedStr<MAX, MIN> {
    fn from_value(value: Value) -> Result<Self, EvalError> {
        match value {
            Value::Str(s) => BoundedStr::new(s).map_err(out_of_bounds),
            other => Err(mismatch("text", &other)),
        }
    }
    fn to_value(&self) -> Value {
        Value::Str(self.as_str().into())
    }
}

impl<R: TextRules> Glue for RuledStr<R> {
    fn from_value(value: Value) -> Result<Self, EvalError> {
        match value {
            Value::Str(s) => RuledStr::new(s).map_err(out_of_bounds),
            other => Err(mismatch("text", &other)),
        }
    }
    fn to_value(&self) -> Value {
        Value::Str(self.as_str().into())
    }
}

impl<T: Glue> Glue for Option<T> {
    fn from_value(value: Value) -> Result<Self, EvalError> {
        match value {
            Value::None => Ok(None),
            some => T::from_value(some).map(Some),
        }
    }
    fn to_value(&self) -> Value {
        match self {
            Some(v) => v.to_value(),
            None => Value::None,
        }
    }
}

// Recursive types reach themselves through a box (`Option<Box<Tree>>`).
impl<T: Glue> Glue for Box<T> {
    fn from_value(value: Value) -> Result<Self, EvalError> {
        T::from_value(value).map(Box::new)
    }
    fn to_value(&self) -> Value {
        (**self).to_value()
    }
}

fn items<T: Glue>(value: Value) -> Result<Vec<T>, EvalError> {
    match value {
        Value::List(items) => items.into_iter().map(T::from_value).collect(),
        other => Err(mismatch("a list", &other)),
    }
}

impl<T: Glue, const MAX: u32, const MIN: u32> Glue for BoundedVec<T, MAX, MIN> {
    fn from_value(value: Value) -> Result<Self, EvalError> {
        BoundedVec::new(items(value)?).map_err(out_of_bounds)
    }
    fn to_value(&self) -> Value {
        Value::List(self.as_slice().iter().map(Glue::to_value).collect())
    }
}

impl<T: Glue + PartialEq, const MAX: u32, const MIN: u32> Glue for BoundedSet<T, MAX, MIN> {
    fn from_value(value: Value) -> Result<Self, EvalError> {
        BoundedSet::new(items(value)?).map_err(out_of_bounds)
    }
    fn to_value(&self) -> Value {
        Value::List(self.as_slice().iter().map(Glue::to_value).collect())
    }
}

impl<K: Glue + MapKey, V: Glue, const MAX: u32, const MIN: u32> Glue
    for BoundedMap<K, V, MAX, MIN>
{
    fn from_value(value: Value) -> Result<Self, EvalError> {
        match value {
            Value::Map(entries) => {
                let entries = entries
                    .into_iter()
                    .map(|(k, v)| Ok((K::from_key(k).map_err(out_of_bounds)?, V::from_value(v)?)))
                    .collect::<Result<Vec<_>, EvalError>>()?;
                BoundedMap::new(entries).map_err(out_of_bounds)
            }
            other => Err(mismatch("a map", &other)),
        }
    }
    fn to_value(&self) -> Value {
        Value::Map(
            self.entries()
                .iter()
                .map(|(k, v)| (k.key_str().to_owned(), v.to_value()))
                .collect(),
        )
    }
}

impl Glue for MediaRef {
    fn from_value(value: Value) -> Result<Self, EvalError> {
        match value {
            Value::Media(m) => Ok(*m),
            other => Err(mismatch("a media reference", &other)),
        }
    }
    fn to_value(&self) -> Value {
        Value::Media(Box::new(self.clone()))
    }
}

/// Reads the embedded program (`ir.json` as `aelc build` writes it). Generated code embeds
/// what `aelc` wrote, so this fails only on a hand-edited file; the result is then an empty
/// program, where every run is [`Unrunnable`] rather than a panic.
pub fn read_program(text: &str) -> Program {
    Program::from_json(text).unwrap_or_default()
}

/// Reads the embedded output schemas (every node's document and model-facing variants, as
/// `aelc build` computes them). A hand-edited text that does not read gives no schemas:
/// `{{ output_schema }}` then inserts `null` and no structured output is asked for.
pub fn read_schemas(text: &str) -> Schemas {
    serde_json::from_str(text).unwrap_or_default()
}

/// [`read_program`] of a text whose repeated parts are in `shared` (the glue's `SHARED_JSON`:
/// see [`expand_shared`]).
pub fn read_program_shared(text: &str, shared: &str) -> Program {
    read_program(&expand_shared(text, shared))
}

/// Reads the glue's `SCHEMAS_JSON` (`text`, an [`EmbeddedSchemas`] whose repeated parts are in
/// `shared`). A hand-edited text that does not read gives no schemas, as [`read_schemas`].
pub fn read_embedded_schemas(text: &str, shared: &str) -> EmbeddedSchemas {
    serde_json::from_str(&expand_shared(text, shared)).unwrap_or_default()
}

/// The glue's executor: `program` with the schemas of [`read_embedded_schemas`], each node's
/// made self-contained and its model-facing variants derived on the node's first model call
/// ([`Executor::lazy`]).
pub fn embedded_executor<'p>(program: &'p Program, text: &str, shared: &str) -> Executor<'p> {
    let embedded = read_embedded_schemas(text, shared);
    Executor::lazy(
        program,
        Box::new(move |node| embedded.node_schemas(program, node)),
    )
}

/// The embedded text whole: every `{"$shared":N}` marker replaced by line `N` of `shared`,
/// expanded in turn, which gives back the very text the compiler would have embedded without
/// sharing (the glue embeds each repeated subtree once; `glue/shared.rs`).
pub fn expand_shared(text: &str, shared: &str) -> String {
    shared::expand(text, shared)
}

/// Decodes node `node`'s input document (spec §4): one parameter's value, or an object with
/// one field per parameter. The errors are the runtime decoder's.
pub fn decode_input(
    exec: &Executor<'_>,
    node: usize,
    bytes: &[u8],
) -> Result<Vec<Value>, Vec<DecodeError>> {
    let ir = node_ir(exec, node)?;
    exec.decode_input(ir, bytes)
}

/// Decodes the input document of node `node`, of one parameter, straight into its generated
/// type (the generated `decode`): the same rules and errors as [`decode_input`].
pub fn decode_one<T: Decode>(
    exec: &Executor<'_>,
    node: usize,
    bytes: &[u8],
) -> Result<T, Vec<DecodeError>> {
    let ir = node_ir(exec, node)?;
    let Some(param) = ir.params.first() else {
        return Err(vec![DecodeError::new(
            Code::WrongType,
            &crate::error::PathBuf::new("input"),
            format!("node #{node} of the embedded program has no parameter"),
        )]);
    };
    with_decoder(exec, |d| d.decode_into(bytes, &param.ty, &param.name))
}

/// Decodes the input document of node `node`, an object with one field per parameter,
/// straight into its generated `Input`: the same rules and errors as [`decode_input`].
pub fn decode_params<T: DecodeFields>(
    exec: &Executor<'_>,
    node: usize,
    bytes: &[u8],
) -> Result<T, Vec<DecodeError>> {
    let ir = node_ir(exec, node)?;
    let params: Vec<(&str, &Ty)> = ir.params.iter().map(|p| (p.name.as_str(), &p.ty)).collect();
    with_decoder(exec, |d| d.decode_params_into(bytes, &params))
}

thread_local! {
    /// The unescaping buffer of the glue's decoders on this thread, kept from document to
    /// document as a long-lived [`Decoder`] keeps its own (a decoder is made per call).
    static SCRATCH: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
}

/// Runs `read` with the decoder of the executor's program under its `max_input_bytes`, as
/// [`Executor::decode_input`] makes it, lending it this thread's unescaping buffer.
fn with_decoder<'e, T>(exec: &'e Executor<'_>, read: impl FnOnce(&mut Decoder<'e>) -> T) -> T {
    let program = exec.program();
    let max = usize::try_from(program.limits.max_input_bytes).unwrap_or(usize::MAX);
    let mut decoder = Decoder::new(&program.types)
        .with_max_input_bytes(max)
        .with_scratch(SCRATCH.take());
    let result = read(&mut decoder);
    SCRATCH.set(decoder.into_scratch());
    result
}

fn node_ir<'e>(
    exec: &'e Executor<'_>,
    node: usize,
) -> Result<&'e crate::program::NodeIr, Vec<DecodeError>> {
    exec.program().nodes.get(node).ok_or_else(|| {
        vec![DecodeError::new(
            Code::WrongType,
            &crate::error::PathBuf::new("input"),
            format!("the embedded program has no node #{node}"),
        )]
    })
}

/// Where media bytes come from (the platform's file store, or a test double).
pub trait MediaSource {
    fn fetch(&mut self, media: &MediaRef) -> Result<Vec<u8>, String>;
}

/// No media store: every download is an error.
pub struct NoMedia;

impl MediaSource for NoMedia {
    fn fetch(&mut self, media: &MediaRef) -> Result<Vec<u8>, String> {
        Err(format!("no media store can fetch {}", media.reference))
    }
}

/// A model that is not reachable from here: every call is an error (for runs that must not
/// call one, e.g. a body that only computes).
pub struct NoModel;

impl Model for NoModel {
    fn call(&mut self, _request: &ModelRequest) -> Result<ModelAnswer, ModelError> {
        Err(ModelError::Unavailable(
            "no model is reachable from this context".to_owned(),
        ))
    }
}

/// Where receipt ids come from: UUIDv7 unless the caller gives a source.
enum Ids<'r> {
    Uuid(UuidIds),
    Given(&'r mut dyn IdSource),
}

/// What a node run and an `extern fn` receive: the model (a run's model calls go to it), the
/// clock, media downloads and receipt ids.
///
/// An extern called during a run gets the run's model and clock (checks, transforms and
/// parsers get a model that refuses and a stopped clock: they run inside a model call), the
/// caller's media source, and UUIDv7 ids for any node it runs itself.
pub struct Context<'r> {
    pub model: &'r mut dyn Model,
    pub clock: &'r mut dyn Clock,
    pub media: &'r mut dyn MediaSource,
    /// Check each call's part kinds against its binding's `accepts` before the call (on by
    /// default; off for recorded answers, which answer whatever they are asked).
    pub check_accepts: bool,
    ids: Ids<'r>,
    /// The file store and tenant media references are checked and resolved in
    /// ([`Context::with_files`]); `None` takes references as they are, as a replay does.
    files: Option<MediaAccess<'r>>,
}

impl<'r> Context<'r> {
    pub fn new(
        model: &'r mut dyn Model,
        clock: &'r mut dyn Clock,
        media: &'r mut dyn MediaSource,
    ) -> Context<'r> {
        Context {
            model,
            clock,
            media,
            check_accepts: true,
            ids: Ids::Uuid(UuidIds),
            files: None,
        }
    }

    /// Checks every media reference of a run in `store` for `tenant` (spec §12.1: access,
    /// expiry, what the reference says, before anything is called), resolves the media parts
    /// of a model call into inline data there, and makes [`Context::download`] read and
    /// verify through it. The same rules as `aelc run` and the gateway.
    pub fn with_files(mut self, store: &'r dyn MediaStore, tenant: &'r str) -> Context<'r> {
        self.files = Some(MediaAccess { store, tenant });
        self
    }

    /// Takes receipt ids from `ids` (tests make them predictable with [`CountingIds`]).
    pub fn with_ids(mut self, ids: &'r mut dyn IdSource) -> Context<'r> {
        self.ids = Ids::Given(ids);
        self
    }

    /// Calls the model with a request of the caller's making (most code runs a node instead,
    /// which renders the node's prompt and calls the model with the node's pipeline around it).
    pub fn call_model(&mut self, request: &ModelRequest) -> Result<ModelAnswer, ModelError> {
        self.model.call(request)
    }

    /// Milliseconds on the run's clock.
    pub fn now_ms(&mut self) -> u64 {
        self.clock.now_ms()
    }

    /// Downloads a media reference and verifies its size and SHA-256 (spec §7); through the
    /// file store when one is given ([`Context::with_files`]), with its tenant and expiry
    /// checks.
    pub fn download(&mut self, media: &MediaRef) -> Result<Vec<u8>, EvalError> {
        if let Some(files) = self.files {
            let now = self.clock.unix_ms();
            return crate::files::fetch(files.store, media, files.tenant, now)
                .map_err(|e| EvalError::new(EvalErrorKind::Extern, e.to_string()));
        }
        let bytes = self
            .media
            .fetch(media)
            .map_err(|why| EvalError::new(EvalErrorKind::Extern, why))?;
        if bytes.len() as u64 != media.size {
            return Err(EvalError::new(
                EvalErrorKind::Extern,
                format!(
                    "{} has {} bytes, its reference says {}",
                    media.reference,
                    bytes.len(),
                    media.size
                ),
            ));
        }
        if sha256_hex(&bytes) != media.sha256 {
            return Err(EvalError::new(
                EvalErrorKind::Extern,
                format!("{} does not match its SHA-256", media.reference),
            ));
        }
        Ok(bytes)
    }
}

/// Generated code's dispatch of the program's externs, by the program's fn and check ids, to
/// the author's trait methods (the generated `match` over ids).
pub trait NodeGlue {
    /// Whether the glue answers `extern fn` `func` (every extern fn with a trait method; an
    /// extern fn that stands for a node's model call has none: the executor makes the call).
    fn has_fn(&self, func: FnId) -> bool;
    fn call_fn(
        &mut self,
        ctx: &mut Context<'_>,
        func: FnId,
        args: &[Value],
    ) -> Result<Value, EvalError>;
    /// Whether the glue answers `extern check` `check`.
    fn has_check(&self, check: u32) -> bool;
    /// Runs an `extern check` on its arguments: `None` when it passes, else its code and
    /// message.
    fn call_check(
        &mut self,
        ctx: &mut Context<'_>,
        check: u32,
        args: &[&Value],
    ) -> Result<CheckVerdict, EvalError>;
}

/// The executor's [`ExternHost`] over generated dispatch: each call gets a [`Context`] of the
/// run's model and clock and the caller's media source.
struct GlueHost<'a, 'm> {
    glue: &'a mut dyn NodeGlue,
    media: &'a mut (dyn MediaSource + 'm),
}

impl ExternHost for GlueHost<'_, '_> {
    fn has_fn(&self, _program: &Program, func: FnId) -> bool {
        self.glue.has_fn(func)
    }

    fn call_fn(
        &mut self,
        cx: CallContext<'_>,
        _program: &Program,
        func: FnId,
        args: &[Value],
    ) -> Result<Value, EvalError> {
        let CallContext { model, clock } = cx;
        let mut ctx = Context::new(model, clock, &mut *self.media);
        self.glue.call_fn(&mut ctx, func, args)
    }

    fn has_check(&self, _program: &Program, check: u32) -> bool {
        self.glue.has_check(check)
    }

    fn call_check(
        &mut self,
        cx: CallContext<'_>,
        _program: &Program,
        check: u32,
        args: &[&Value],
    ) -> Result<CheckVerdict, EvalError> {
        let CallContext { model, clock } = cx;
        let mut ctx = Context::new(model, clock, &mut *self.media);
        self.glue.call_check(&mut ctx, check, args)
    }
}

/// Runs node `node` of the executor's program on an input document through the one executor
/// (spec §12): the input gate and checks, the body or the model call (the prompt rendered by
/// the runtime), delegated calls, the output stage and policies, a receipt. Externs go to
/// `glue`; the model, clock, media and ids come from `ctx`.
pub fn run<T: Glue>(
    exec: &Executor<'_>,
    node: usize,
    bytes: &[u8],
    glue: &mut dyn NodeGlue,
    ctx: &mut Context<'_>,
) -> Result<Run<T>, Unrunnable> {
    let mut host = GlueHost {
        glue,
        media: &mut *ctx.media,
    };
    let ids: &mut dyn IdSource = match &mut ctx.ids {
        Ids::Uuid(ids) => ids,
        Ids::Given(ids) => &mut **ids,
    };
    let mut env = Env {
        model: &mut *ctx.model,
        clock: &mut *ctx.clock,
        ids,
        externs: &mut host,
        check_accepts: ctx.check_accepts,
        media: ctx.files,
    };
    let id = NodeId(u32::try_from(node).unwrap_or(u32::MAX));
    exec.run(id, bytes, &mut env).map(Run::new)
}

/// [`run`] on decoded input values (the generated `run` on a typed input): they are written
/// as the input document a caller would send, which the run's gate reads and its receipt
/// hashes, as for a delegated call.
pub fn run_values<T: Glue>(
    exec: &Executor<'_>,
    node: usize,
    values: &[Value],
    glue: &mut dyn NodeGlue,
    ctx: &mut Context<'_>,
) -> Result<Run<T>, Unrunnable> {
    let bytes = match exec.program().nodes.get(node) {
        Some(ir) => exec.input_json(ir, values),
        None => String::new(),
    };
    run(exec, node, bytes.as_bytes(), glue, ctx)
}

/// Whether generated glue answers `extern fn` `func` with a trait method: every `extern fn`
/// but one that stands for a node's model call ([`crate::program::NodeIr::model_call`]), which
/// the executor answers itself (the node's prompt rendered, the seven steps), as under
/// `aelc run`. The generator and the generated `has_fn` both ask this.
pub fn answers_fn(program: &Program, func: FnId) -> bool {
    program
        .fns
        .get(func.0 as usize)
        .is_some_and(|f| f.is_extern)
        && !program
            .nodes
            .iter()
            .any(|n| n.model_call.map(|m| m.0) == Some(func.0))
}

/// Whether generated glue answers check `check` with a trait method: every `extern check`.
pub fn answers_check(program: &Program, check: u32) -> bool {
    program
        .checks
        .get(check as usize)
        .is_some_and(|c| c.is_extern)
}
