//! The syntax tree of one AEL module, exactly as written.
//!
//! The tree knows nothing of types or names: `Str<4000>` is a [`TypeExpr`] named `Str` with one
//! argument, and `request.document` is a field access on a name. Every node has a [`Span`].
//! Doc comments are attached to the item, field, variant or error code they document; ordinary
//! comments are kept beside the tree (see [`Comment`]) for the formatter.
//!
//! Invariants:
//! - the parser always returns a tree, even for broken input: what could not be parsed becomes
//!   an `Error` node ([`ItemKind::Error`], [`ExprKind::Error`], [`TypeKind::Error`]) and a
//!   diagnostic;
//! - spans of children lie inside the span of their parent, on `char` boundaries.
//!
//! The tree is not `Serialize` on purpose: emitted formats have their own output types.

use crate::span::Span;

/// A parsed module: one `.ael` file.
#[derive(Clone, Debug, PartialEq)]
pub struct Module {
    /// `//!` lines at the top of the file.
    pub docs: Option<Doc>,
    pub items: Vec<Item>,
    pub span: Span,
}

/// A doc comment: consecutive `///` (or `//!`) lines, joined with `\n`, each with the marker and
/// one following space removed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Doc {
    /// A boxed string: a doc never grows once lexed, and without a capacity word a documented
    /// field (the most frequent documented node) is 8 bytes smaller. Empty in the trees of
    /// [`crate::syntax::parse_lean`], which keep where a doc is, not what it says.
    pub text: Box<str>,
    pub span: Span,
}

/// An ordinary comment (`// …` or `/* … */`), kept for the formatter and never in the tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Comment {
    /// The comment's full text, markers included.
    pub text: String,
    pub span: Span,
}

/// A name as written. The text is a [`Name`]: names of up to 24 bytes (nearly all) live
/// inside the node rather than in an allocation of their own, which was a tenth of the trees'
/// memory and of the parser's allocations on a large project.
///
/// `repr(C)` with the span first puts the name's spare bit patterns (the niche an enum stores
/// its tag in) in the node's last bytes, where the other variants of an enum around it can fit
/// before them: that is what makes an [`Expr`] 72 bytes rather than 80 and a [`TypeArg`] 80
/// rather than 88. `Debug` and `Hash` keep the name first, as when they were derived.
#[derive(Clone, PartialEq, Eq)]
#[repr(C)]
pub struct Ident {
    pub span: Span,
    pub name: Name,
}

impl std::hash::Hash for Ident {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.name.hash(state);
        self.span.hash(state);
    }
}

impl std::fmt::Debug for Ident {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ident")
            .field("name", &self.name)
            .field("span", &self.span)
            .finish()
    }
}

/// The text of a name: a string stored inline when it is short (see [`Ident`]). It derefs to
/// `str`, compares with `&str` and `String`, and prints (`{:?}` too) as a `String` would.
pub type Name = compact_str::CompactString;

/// `a`, `types::common::Review`: segments separated by `::`.
///
/// The lists of the most frequent nodes (a path's segments, a type's arguments) are boxed
/// slices: the tree is never edited after parsing, and a slice has no capacity to keep, so each
/// of these nodes is 8 bytes smaller per list.
///
/// A path's span is not stored: it runs from its first segment to its last, which the parser
/// guarantees ([`Path::span`]). Without it a path is 40 bytes, as large as the one segment that
/// nearly every path has, which [`Segments`] keeps inline: a one-segment path was 32 bytes and
/// a 40-byte allocation (a type's name, a name in an expression: 33 B per source line).
#[derive(Clone)]
pub struct Path {
    pub segments: Segments,
}

/// The segments of a [`Path`]: one inline, or more (or, for a broken `use`, none) in a boxed
/// slice. Derefs to `[Ident]`; one segment is always `One`, so equal paths have equal parts.
#[derive(Clone)]
pub struct Segments(Repr);

#[derive(Clone)]
enum Repr {
    One(Ident),
    Many(Box<[Ident]>),
}

impl From<Vec<Ident>> for Segments {
    fn from(mut segments: Vec<Ident>) -> Segments {
        match segments.pop() {
            Some(only) if segments.is_empty() => Segments(Repr::One(only)),
            Some(last) => {
                segments.push(last);
                let segments = crate::allocator::without_slack(segments);
                Segments(Repr::Many(segments.into_boxed_slice()))
            }
            None => Segments(Repr::Many(Box::default())),
        }
    }
}

/// One segment inline with no allocation at all, more in a boxed slice: the parser collects a
/// path's segments straight into this, so the million one-segment paths of a million-line
/// project allocate nothing (through a `Vec`, each took a box and gave it back).
impl FromIterator<Ident> for Segments {
    fn from_iter<I: IntoIterator<Item = Ident>>(segments: I) -> Segments {
        let mut segments = segments.into_iter();
        let Some(first) = segments.next() else {
            return Segments(Repr::Many(Box::default()));
        };
        let Some(second) = segments.next() else {
            return Segments(Repr::One(first));
        };
        let mut many = vec![first, second];
        many.extend(segments);
        let many = crate::allocator::without_slack(many);
        Segments(Repr::Many(many.into_boxed_slice()))
    }
}

impl std::ops::Deref for Segments {
    type Target = [Ident];

    fn deref(&self) -> &[Ident] {
        match &self.0 {
            Repr::One(one) => std::slice::from_ref(one),
            Repr::Many(many) => many,
        }
    }
}

impl Path {
    pub fn new(segments: Vec<Ident>) -> Path {
        Path {
            segments: segments.into(),
        }
    }

    /// From the first segment to the last; empty (at 0) for a path without segments, which only
    /// a broken `use` makes.
    pub fn span(&self) -> Span {
        match (self.segments.first(), self.segments.last()) {
            (Some(first), Some(last)) => first.span.to(last.span),
            _ => Span::default(),
        }
    }

    /// The last segment: the name the path points at.
    pub fn last(&self) -> Option<&Ident> {
        self.segments.last()
    }

    /// `a::b::c`, as written.
    pub fn to_text(&self) -> String {
        let names: Vec<&str> = self.segments.iter().map(|s| s.name.as_str()).collect();
        names.join("::")
    }
}

/// By segments: the span follows from them.
impl PartialEq for Path {
    fn eq(&self, other: &Path) -> bool {
        *self.segments == *other.segments
    }
}

impl Eq for Path {}

/// As when it was derived over the stored segments and span.
impl std::hash::Hash for Path {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        (*self.segments).hash(state);
        self.span().hash(state);
    }
}

/// `Debug` for a node whose span is derived ([`Path::span`], [`Field::span`], …): the stored
/// fields, then `span` last, as when the span was a field, so tree dumps (the parser's
/// snapshots) read the same.
macro_rules! debug_with_span {
    ($node:ident { $($field:ident),* }) => {
        impl std::fmt::Debug for $node {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($node))
                    $(.field(stringify!($field), &self.$field))*
                    .field("span", &self.span())
                    .finish()
            }
        }
    };
}

debug_with_span!(Path { segments });

/// As the list of segments.
impl std::fmt::Debug for Segments {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&**self, f)
    }
}

/// `@name` or `@name(arg, …)`. Attributes of an item stand before it; attributes of a field, a
/// parameter or an alias follow the type (they live in [`TypeExpr::attrs`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Attribute {
    pub name: Ident,
    pub args: Vec<Expr>,
    pub span: Span,
}

/// A top-level item.
#[derive(Clone, Debug, PartialEq)]
pub struct Item {
    pub docs: Option<Doc>,
    /// Attributes written before the item, e.g. `@tag("kind")` on an enum. Behind one thin
    /// pointer ([`Attrs`]): most items have none, and a `Vec` made every item 16 bytes larger.
    pub attrs: Attrs,
    pub kind: ItemKind,
    /// From the first attribute (or keyword) to the closing `}` or `;`; docs excluded.
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ItemKind {
    Use(UseItem),
    TypeAlias(TypeAlias),
    Struct(StructDef),
    Enum(EnumDef),
    Errors(ErrorsDef),
    /// `fn` and `extern fn`.
    Fn(FnDef),
    /// `check` and `extern check`.
    Check(CheckDef),
    /// Boxed, as is `Node`: the two largest kinds, which made every item (most are structs,
    /// `fn`s and checks) 80 bytes larger.
    Builder(Box<BuilderDef>),
    Stream(StreamDef),
    /// `node` and `agent`.
    Node(Box<NodeDef>),
    /// An item that could not be parsed; its diagnostic was reported.
    Error,
}

impl ItemKind {
    /// The declared name, for every item but `use` and errors.
    pub fn name(&self) -> Option<&Ident> {
        match self {
            ItemKind::Use(_) | ItemKind::Error => None,
            ItemKind::TypeAlias(d) => Some(&d.name),
            ItemKind::Struct(d) => Some(&d.name),
            ItemKind::Enum(d) => Some(&d.name),
            ItemKind::Errors(d) => Some(&d.name),
            ItemKind::Fn(d) => Some(&d.name),
            ItemKind::Check(d) => Some(&d.name),
            ItemKind::Builder(d) => Some(&d.name),
            ItemKind::Stream(d) => Some(&d.name),
            ItemKind::Node(d) => Some(&d.name),
        }
    }
}

/// `use types::common::{ReviewRequest, Review as R};` or `use std::text::non_blank;`.
#[derive(Clone, Debug, PartialEq)]
pub struct UseItem {
    /// The module path: `types::common`, `std::text`.
    pub module: Path,
    /// The names brought in (one when not braced).
    pub names: Vec<UseName>,
    /// Whether the names were written in braces.
    pub braced: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct UseName {
    pub name: Ident,
    /// `as Other` (`as` is a contextual keyword).
    pub alias: Option<Ident>,
    pub span: Span,
}

/// `type Locale = Str<16> @pattern(r"^[a-z]{2}$");`
#[derive(Clone, Debug, PartialEq)]
pub struct TypeAlias {
    pub name: Ident,
    pub ty: TypeExpr,
}

#[derive(Clone, Debug, PartialEq)]
pub struct StructDef {
    pub name: Ident,
    pub fields: Vec<Field>,
}

/// `name: Type @attr(…) = default` in a struct or a data-enum variant.
///
/// Its span runs from the name to the end of the default, the attributes or the type
/// ([`Field::span`]); stored, it made a field 168 bytes rather than 152.
#[derive(Clone, PartialEq)]
pub struct Field {
    pub docs: Option<Doc>,
    pub name: Ident,
    /// The field's type, with the field's attributes in [`TypeExpr::attrs`].
    pub ty: TypeExpr,
    /// Boxed: most fields have none, and inline the room for one made a field 296 bytes
    /// rather than 208 (the trees of every module live through the whole check).
    pub default: Option<Box<Expr>>,
}

impl Field {
    /// From the name to the end of what was written last: the default, the attributes or the
    /// type.
    pub fn span(&self) -> Span {
        let end = self.default.as_ref().map_or(0, |d| d.span.end);
        Span {
            end: end.max(self.ty.span_with_attrs().end),
            ..self.name.span
        }
    }
}

debug_with_span!(Field {
    docs,
    name,
    ty,
    default
});

#[derive(Clone, Debug, PartialEq)]
pub struct EnumDef {
    pub name: Ident,
    pub variants: Vec<Variant>,
}

/// `low`, or `circle { radius: f64 }` in a data enum.
#[derive(Clone, Debug, PartialEq)]
pub struct Variant {
    pub docs: Option<Doc>,
    pub attrs: Attrs,
    pub name: Ident,
    /// `None` for a unit variant; `Some` (possibly empty) when braces were written.
    pub fields: Option<Vec<Field>>,
    pub span: Span,
}

/// `errors ReviewError { empty_document, too_many_findings }`
#[derive(Clone, Debug, PartialEq)]
pub struct ErrorsDef {
    pub name: Ident,
    pub codes: Vec<ErrorCode>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ErrorCode {
    pub docs: Option<Doc>,
    pub name: Ident,
    pub span: Span,
}

/// `name: Type @attr(…)` in a parameter list.
///
/// Its span runs from the name to the end of the attributes or the type ([`Param::span`]);
/// stored, it made a parameter 128 bytes rather than 112.
#[derive(Clone, PartialEq)]
pub struct Param {
    pub name: Ident,
    pub ty: TypeExpr,
}

impl Param {
    /// From the name to the end of the attributes or the type.
    pub fn span(&self) -> Span {
        Span {
            end: self.ty.span_with_attrs().end,
            ..self.name.span
        }
    }
}

debug_with_span!(Param { name, ty });

/// `fn name(p: T) -> U { expr }` or `extern fn name(p: T) -> U;`
///
/// Parameters (here and in checks, builders and nodes) are a boxed slice: a `Vec`'s capacity
/// word made the largest item kinds, and so every item, 8 bytes larger.
#[derive(Clone, Debug, PartialEq)]
pub struct FnDef {
    pub is_extern: bool,
    pub name: Ident,
    pub params: Box<[Param]>,
    pub ret: TypeExpr,
    /// The body block; `None` for `extern fn`. Boxed, so that a `fn` is not the largest item
    /// (an [`Item`] is as large as its largest kind).
    pub body: Option<Body<Box<Expr>>>,
}

/// `check name(p: T) fails E { require …; }` or `extern check name(p: T) fails E;`
#[derive(Clone, Debug, PartialEq)]
pub struct CheckDef {
    pub is_extern: bool,
    pub name: Ident,
    pub params: Box<[Param]>,
    pub fails: Option<Path>,
    /// The requirements in order; `None` for `extern check`.
    pub body: Option<Body<Vec<Require>>>,
}

/// A fn's or a check's body: parsed, or only delimited. `aelc check` parses a project with its
/// bodies deferred ([`crate::syntax::parse_lean`]) and sema parses them a module at a
/// time while it checks them ([`crate::syntax::parse_deferred`]), so that the bodies of a
/// whole project, about a third of its syntax trees, are never in memory at once. Every other
/// parse ([`crate::syntax::parse`]) gives `Parsed` bodies only.
#[derive(Clone, PartialEq)]
pub enum Body<T> {
    Parsed(T),
    /// From the `{` to the `}`. Only a module whose parse found no error defers its bodies.
    Deferred(Span),
}

/// Whose body a deferred span is ([`Module::deferred_bodies`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeferredKind {
    Fn,
    Check,
}

impl Module {
    /// The spans of the fn and check bodies the parse deferred, in source order, with whose
    /// each is: what [`crate::syntax::parse_deferred`] reads. None for a module parsed whole.
    pub fn deferred_bodies(&self) -> Vec<(Span, DeferredKind)> {
        self.items
            .iter()
            .filter_map(|item| match &item.kind {
                ItemKind::Fn(FnDef {
                    body: Some(Body::Deferred(span)),
                    ..
                }) => Some((*span, DeferredKind::Fn)),
                ItemKind::Check(CheckDef {
                    body: Some(Body::Deferred(span)),
                    ..
                }) => Some((*span, DeferredKind::Check)),
                _ => None,
            })
            .collect()
    }
}

/// A parsed body prints as the body itself, so that the parser's tree dumps read as they did
/// before bodies could be deferred.
impl<T: std::fmt::Debug> std::fmt::Debug for Body<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Body::Parsed(body) => body.fmt(f),
            Body::Deferred(span) => f.debug_tuple("Deferred").field(span).finish(),
        }
    }
}

/// `require COND else CODE ["message"];`
#[derive(Clone, Debug, PartialEq)]
pub struct Require {
    pub cond: Expr,
    pub code: Ident,
    pub message: Option<Literal>,
    pub span: Span,
}

/// `builder name(p: T) -> Parts { system("…") text(render(…)) image(p.photo) }`: the parts the
/// model receives, in order. Parts may be separated by whitespace, `,` or `;`.
#[derive(Clone, Debug, PartialEq)]
pub struct BuilderDef {
    pub name: Ident,
    pub params: Box<[Param]>,
    pub ret: TypeExpr,
    pub parts: Vec<Expr>,
}

/// `stream Readings of SensorReading { chunk: 1KiB; … }` (`of` is contextual).
#[derive(Clone, Debug, PartialEq)]
pub struct StreamDef {
    pub name: Ident,
    pub of: TypeExpr,
    pub entries: Vec<Entry>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NodeKind {
    Node,
    Agent,
}

/// `node`/`agent name(params) -> Output fails E { blocks… statements… }`
#[derive(Clone, Debug, PartialEq)]
pub struct NodeDef {
    pub kind: NodeKind,
    pub name: Ident,
    pub params: Box<[Param]>,
    pub ret: TypeExpr,
    pub fails: Option<Path>,
    /// `config`, `input`, `output`, `inputs`, `budget`, `publish`, in written order. The parser
    /// accepts any block name; sema rejects unknown ones.
    pub blocks: Vec<Block>,
    /// `let` and `return` statements after the blocks (the optional body).
    pub body: Vec<Stmt>,
}

/// `name { entry; entry; }` inside a node, e.g. `config { timeout: 60s; }`.
#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    pub name: Ident,
    pub entries: Vec<Entry>,
    pub span: Span,
}

/// One entry of a block or a stream: `key: arg, arg;`, `key arg;` or `key;`.
///
/// Examples: `prompt: file("prompts/review.md");` (key `prompt`, one arg), `check not_blank;`
/// (key `check`, no colon, one arg), `raw;` (no args), `on_failure: repair(2), fail(x);` (two
/// args), `fresh: camera 200ms, reading 1s;` (two args, each with a qualifier).
/// Keywords such as `check` and `builder` are allowed as keys.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub key: Ident,
    pub colon: bool,
    pub args: Vec<Arg>,
    pub span: Span,
}

/// An entry argument: an expression, optionally followed by a literal qualifier
/// (`camera 200ms`).
#[derive(Clone, Debug, PartialEq)]
pub struct Arg {
    pub value: Expr,
    /// Boxed: rare (`fresh:` alone has them), and inline it made every argument 48 bytes larger.
    pub qualifier: Option<Box<Literal>>,
    pub span: Span,
}

/// A statement in a node body or a block expression.
#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    /// `let name[: Type] = value;`
    Let {
        name: Ident,
        ty: Option<TypeExpr>,
        value: Expr,
        span: Span,
    },
    /// `return value;`
    Return { value: Expr, span: Span },
}

/// A type as written: `Str<4000>`, `u16<1..=50>`, `List<Finding, 50>`, `Option<Str<16>>`,
/// `common::Review`, with the attributes that follow it.
///
/// Its span ([`TypeExpr::span`]) is not stored whole: it starts where its path does (an error
/// keeps its own), so only its end is kept. A stored span made a type 80 bytes rather than 72,
/// and so every field, parameter and type argument 8 bytes larger.
#[derive(Clone, PartialEq)]
pub struct TypeExpr {
    pub kind: TypeKind,
    /// `@pattern(…)`, `@format(…)`, `@types(…)` … written after the type.
    pub attrs: Attrs,
    /// Where the type itself ends (after its `>`, if any), attributes excluded.
    pub end: u32,
}

impl TypeExpr {
    /// The type itself, attributes excluded: from its path to its end.
    pub fn span(&self) -> Span {
        match &self.kind {
            TypeKind::Named { path, .. } => Span {
                end: self.end,
                ..path.span()
            },
            TypeKind::Error { span } => *span,
        }
    }

    /// The type and the attributes after it.
    pub fn span_with_attrs(&self) -> Span {
        let span = self.span();
        Span {
            end: self
                .attrs
                .last()
                .map_or(span.end, |a| a.span.end.max(span.end)),
            ..span
        }
    }
}

debug_with_span!(TypeExpr { kind, attrs });

/// The attributes after a type: behind one thin pointer, absent when there are none. Most types
/// have none, and as a boxed slice (two words) they made every type 8 bytes larger (88 rather
/// than 80). Derefs to `[Attribute]`; prints as the list.
#[derive(Clone, Default, PartialEq)]
// The box of a `Vec` is the point: one word where a `Vec` or a boxed slice takes three or two.
#[allow(clippy::box_collection)]
pub struct Attrs(Option<Box<Vec<Attribute>>>);

impl From<Vec<Attribute>> for Attrs {
    fn from(attrs: Vec<Attribute>) -> Attrs {
        if attrs.is_empty() {
            Attrs(None)
        } else {
            Attrs(Some(Box::new(attrs)))
        }
    }
}

impl std::ops::Deref for Attrs {
    type Target = [Attribute];

    fn deref(&self) -> &[Attribute] {
        self.0.as_deref().map_or(&[], Vec::as_slice)
    }
}

impl<'a> IntoIterator for &'a Attrs {
    type Item = &'a Attribute;
    type IntoIter = std::slice::Iter<'a, Attribute>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl std::fmt::Debug for Attrs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[derive(Clone, PartialEq)]
pub enum TypeKind {
    /// `Name` or `Name<args>`.
    Named { path: Path, args: Box<[TypeArg]> },
    /// A type that could not be parsed; its diagnostic was reported. With the span of the
    /// type (see [`TypeExpr`]: there is no path to start it).
    Error { span: Span },
}

/// As when it was derived with a unit `Error`, so tree dumps read the same.
impl std::fmt::Debug for TypeKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TypeKind::Named { path, args } => f
                .debug_struct("Named")
                .field("path", path)
                .field("args", args)
                .finish(),
            TypeKind::Error { .. } => f.write_str("Error"),
        }
    }
}

/// One argument inside `<…>` of a type.
#[derive(Clone, Debug, PartialEq)]
pub enum TypeArg {
    Type(TypeExpr),
    /// `4000`, `5MiB`, `-3`, `0.5`.
    Bound(Bound),
    /// `1..=50`, `1..50`, `1..`, `..=50`, `0.0..=1.0`. Boxed: two bounds inline made every
    /// type argument (most are a type or one bound) twice as large.
    Range(Box<RangeArg>),
}

/// A signed literal: a bound of a range or a size in a type.
///
/// Its span is the literal's, from `start` (the `-`, which may stand apart) on: a stored span
/// made a bound 56 bytes rather than 48, and so a range (two bounds) 128 rather than 112 and a
/// type argument 88 rather than 80.
#[derive(Clone, PartialEq)]
pub struct Bound {
    pub negative: bool,
    pub lit: Literal,
    /// Where the bound starts: the `-` when negative, else the literal.
    pub start: u32,
}

impl Bound {
    /// From the sign (if any) to the end of the literal.
    pub fn span(&self) -> Span {
        Span {
            start: self.start,
            ..self.lit.span
        }
    }
}

debug_with_span!(Bound { negative, lit });

#[derive(Clone, Debug, PartialEq)]
pub struct RangeArg {
    pub start: Option<Bound>,
    pub end: Option<Bound>,
    /// `..=` rather than `..`.
    pub inclusive: bool,
    pub span: Span,
}

/// An expression of the pure language of spec §5.
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    Lit(Literal),
    /// `none`
    None,
    /// `some(x)`
    Some(Box<Expr>),
    /// A name or a path: `request`, `low`, `std::text::non_blank`.
    Path(Path),
    /// `base.name`
    Field {
        base: Box<Expr>,
        name: Ident,
    },
    /// `receiver.method(args)`, e.g. `request.document.trim()`: the receiver and then the
    /// arguments in one boxed slice ([`ExprKind::method_operands`] splits them). As a box of its
    /// own beside a slice of arguments the receiver made this the largest variant, and so every
    /// expression 8 bytes larger (88 bytes, which the allocator rounds to 96; 80 fits exactly).
    MethodCall {
        method: Ident,
        /// Never empty: the receiver comes first.
        operands: Box<[Expr]>,
    },
    /// `callee(args)`: fns, extern fns, nodes, and built-ins such as `file`, `binding`,
    /// `repair`, `system`. The callee is boxed: inline it made this variant as large as
    /// `MethodCall`, and two variants of the largest size leave the tag no room in their spare
    /// bits, which made every expression 80 bytes rather than 72 (calls are a few percent of
    /// expressions).
    Call {
        callee: Box<Path>,
        args: Box<[Expr]>,
    },
    /// `Review { summary: s, findings, ..output }`. Only a path whose last segment starts with an
    /// uppercase letter opens a struct literal, so `if c { … }` never parses as one. The path
    /// is boxed, as the callee of a call.
    StructLit {
        path: Box<Path>,
        fields: Box<[FieldInit]>,
        base: Option<Box<Expr>>,
    },
    /// `[a, b, c]`
    List(Vec<Expr>),
    /// `(e)`, kept so that the formatter reprints what was written.
    Paren(Box<Expr>),
    /// `{ let x = e; value }`
    Block {
        stmts: Vec<Stmt>,
        value: Box<Expr>,
    },
    /// `if c { a } else { b }`; `else if` chains nest in `else_branch`. `else` is required.
    If {
        cond: Box<Expr>,
        then_branch: Box<Expr>,
        else_branch: Box<Expr>,
    },
    /// `match s { low => 1, _ => 2 }`
    Match {
        scrutinee: Box<Expr>,
        arms: Vec<MatchArm>,
    },
    Unary {
        op: UnaryOp,
        operand: Box<Expr>,
    },
    Binary {
        op: BinaryOp,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    /// `|f| f.line > 0`, `|a, b| a + b`
    Closure {
        params: Vec<Ident>,
        body: Box<Expr>,
    },
    /// An expression that could not be parsed; its diagnostic was reported.
    Error,
}

impl ExprKind {
    /// The receiver and the arguments of a [`ExprKind::MethodCall`]'s operands; `None` for an
    /// empty list, which the parser never makes.
    pub fn method_operands(operands: &[Expr]) -> Option<(&Expr, &[Expr])> {
        operands.split_first()
    }
}

/// `name: value`, or the shorthand `name` (meaning `name: name`).
#[derive(Clone, Debug, PartialEq)]
pub struct FieldInit {
    pub name: Ident,
    pub value: Option<Expr>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct MatchArm {
    pub pattern: Pattern,
    pub body: Expr,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Pattern {
    pub kind: PatternKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum PatternKind {
    /// `_`
    Wildcard,
    /// `none`
    None,
    /// `some(p)`
    Some(Box<Pattern>),
    /// A bare name: a variant (`low`) or, where no variant has that name, a binding.
    Name(Ident),
    /// `circle { radius, .. }`: a data-enum variant with field patterns.
    Variant {
        name: Ident,
        fields: Vec<FieldPattern>,
        rest: bool,
    },
    /// `1`, `"x"`, `true`
    Lit(Literal),
    /// `a | b`
    Or(Vec<Pattern>),
}

/// `radius` or `radius: r` inside a variant pattern.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldPattern {
    pub name: Ident,
    pub pattern: Option<Pattern>,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    /// `!`
    Not,
    /// `-`
    Neg,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    Or,
    And,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Add,
    Sub,
    Mul,
    Div,
    Rem,
}

impl BinaryOp {
    /// The operator as written.
    pub fn symbol(self) -> &'static str {
        match self {
            BinaryOp::Or => "||",
            BinaryOp::And => "&&",
            BinaryOp::Eq => "==",
            BinaryOp::Ne => "!=",
            BinaryOp::Lt => "<",
            BinaryOp::Le => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::Ge => ">=",
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::Rem => "%",
        }
    }

    /// Binding strength: higher binds tighter. `||` 1, `&&` 2, comparisons 3 (non-associative),
    /// `+ -` 4, `* / %` 5.
    pub fn precedence(self) -> u8 {
        match self {
            BinaryOp::Or => 1,
            BinaryOp::And => 2,
            BinaryOp::Eq
            | BinaryOp::Ne
            | BinaryOp::Lt
            | BinaryOp::Le
            | BinaryOp::Gt
            | BinaryOp::Ge => 3,
            BinaryOp::Add | BinaryOp::Sub => 4,
            BinaryOp::Mul | BinaryOp::Div | BinaryOp::Rem => 5,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Literal {
    pub kind: LitKind,
    pub span: Span,
}

#[derive(Clone, PartialEq)]
pub enum LitKind {
    Bool(bool),
    /// `42`, `1_000` (the value; underscores dropped). Negative numbers are `-` applied to it.
    Int(u64),
    /// `0.5`, `1e-3`. `text` is the literal as written minus underscores, so bounds such as
    /// `0.1` can be emitted exactly; its value is [`float_value`] of it (stored beside it, the
    /// value made every literal 8 bytes larger).
    Float {
        text: Box<str>,
    },
    /// A string with escapes resolved. `raw` is `Some(hashes)` for `r"…"` (0) / `r#"…"#` (1).
    /// A boxed string: a literal never grows, and a capacity word made every literal larger.
    Str {
        value: Box<str>,
        raw: Option<u8>,
    },
    /// `250ms`, `30s`, `5m`, `1h`.
    Duration {
        value: u64,
        unit: DurationUnit,
    },
    /// `512B`, `16KiB`, `5MiB`, `1GiB`, `16kB`, `5MB`, `1GB`.
    Size {
        value: u64,
        unit: SizeUnit,
    },
    /// `50/s`, `600/m`, `10/h`.
    Rate {
        count: u64,
        per: DurationUnit,
    },
    /// `0.05 EUR`: a decimal amount (as written, underscores dropped) and a three-letter
    /// currency code. Written as a number followed by an all-uppercase three-letter name.
    /// A boxed amount and the code inline: as two `String`s the variant made every literal (and
    /// so every bound, type argument and entry argument) 16 bytes larger, as two boxed strings 8.
    Money {
        amount: Box<str>,
        currency: Currency,
    },
}

/// The value of a float literal's text (underscores already dropped); NaN if it is not a number,
/// which the lexer never lets through.
pub fn float_value(text: &str) -> f64 {
    text.parse().unwrap_or(f64::NAN)
}

/// As when it was derived with the float's value stored, so tree dumps read the same.
impl std::fmt::Debug for LitKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LitKind::Bool(b) => f.debug_tuple("Bool").field(b).finish(),
            LitKind::Int(v) => f.debug_tuple("Int").field(v).finish(),
            LitKind::Float { text } => f
                .debug_struct("Float")
                .field("value", &float_value(text))
                .field("text", text)
                .finish(),
            LitKind::Str { value, raw } => f
                .debug_struct("Str")
                .field("value", value)
                .field("raw", raw)
                .finish(),
            LitKind::Duration { value, unit } => f
                .debug_struct("Duration")
                .field("value", value)
                .field("unit", unit)
                .finish(),
            LitKind::Size { value, unit } => f
                .debug_struct("Size")
                .field("value", value)
                .field("unit", unit)
                .finish(),
            LitKind::Rate { count, per } => f
                .debug_struct("Rate")
                .field("count", count)
                .field("per", per)
                .finish(),
            LitKind::Money { amount, currency } => f
                .debug_struct("Money")
                .field("amount", amount)
                .field("currency", currency)
                .finish(),
        }
    }
}

/// A money literal's currency: three ASCII uppercase letters (the parser takes no other), kept
/// inline. Derefs to `str`; prints (`{:?}` too) as the string would.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Currency([u8; 3]);

impl Currency {
    /// `None` unless `code` is three ASCII uppercase letters.
    pub fn new(code: &str) -> Option<Currency> {
        match code.as_bytes() {
            &[a, b, c] if code.bytes().all(|b| b.is_ascii_uppercase()) => Some(Currency([a, b, c])),
            _ => None,
        }
    }

    pub fn as_str(&self) -> &str {
        // Always ASCII (see `new`); the empty string stands in should that ever break.
        std::str::from_utf8(&self.0).unwrap_or_default()
    }
}

/// `XXX`: ISO 4217's code for "no currency".
impl Default for Currency {
    fn default() -> Currency {
        Currency(*b"XXX")
    }
}

impl std::ops::Deref for Currency {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl std::fmt::Display for Currency {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::fmt::Debug for Currency {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.as_str(), f)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DurationUnit {
    Millis,
    Seconds,
    Minutes,
    Hours,
}

impl DurationUnit {
    pub fn suffix(self) -> &'static str {
        match self {
            DurationUnit::Millis => "ms",
            DurationUnit::Seconds => "s",
            DurationUnit::Minutes => "m",
            DurationUnit::Hours => "h",
        }
    }

    pub fn millis(self) -> u64 {
        match self {
            DurationUnit::Millis => 1,
            DurationUnit::Seconds => 1_000,
            DurationUnit::Minutes => 60_000,
            DurationUnit::Hours => 3_600_000,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SizeUnit {
    B,
    KiB,
    MiB,
    GiB,
    KB,
    MB,
    GB,
}

impl SizeUnit {
    pub fn suffix(self) -> &'static str {
        match self {
            SizeUnit::B => "B",
            SizeUnit::KiB => "KiB",
            SizeUnit::MiB => "MiB",
            SizeUnit::GiB => "GiB",
            SizeUnit::KB => "kB",
            SizeUnit::MB => "MB",
            SizeUnit::GB => "GB",
        }
    }

    pub fn bytes(self) -> u64 {
        match self {
            SizeUnit::B => 1,
            SizeUnit::KiB => 1 << 10,
            SizeUnit::MiB => 1 << 20,
            SizeUnit::GiB => 1 << 30,
            SizeUnit::KB => 1_000,
            SizeUnit::MB => 1_000_000,
            SizeUnit::GB => 1_000_000_000,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The trees of every module live through a whole check, so the size of the most frequent
    /// nodes is the front end's memory (issue 23: under 300 bytes per source line). A node that
    /// grows fails here; box the rare large variant or shrink the list instead.
    #[test]
    fn the_frequent_nodes_keep_their_size() {
        use std::mem::size_of;
        let sizes = [
            ("Span", size_of::<Span>()),
            ("Ident", size_of::<Ident>()),
            ("Path", size_of::<Path>()),
            ("Literal", size_of::<Literal>()),
            ("Expr", size_of::<Expr>()),
            ("TypeExpr", size_of::<TypeExpr>()),
            ("TypeArg", size_of::<TypeArg>()),
            ("Bound", size_of::<Bound>()),
            ("RangeArg", size_of::<RangeArg>()),
            ("Field", size_of::<Field>()),
            ("Item", size_of::<Item>()),
            ("Entry", size_of::<Entry>()),
            ("Arg", size_of::<Arg>()),
            ("Param", size_of::<Param>()),
            ("Stmt", size_of::<Stmt>()),
        ];
        let expected = [
            ("Span", 12),
            ("Ident", 40),
            ("Path", 40),
            ("Literal", 40),
            ("Expr", 72),
            ("TypeExpr", 72),
            ("TypeArg", 72),
            ("Bound", 48),
            ("RangeArg", 112),
            ("Field", 152),
            // A fn's body may be deferred (`Body`): its span beside the box, 8 bytes more.
            ("Item", 208),
            ("Entry", 80),
            ("Arg", 96),
            ("Param", 112),
            ("Stmt", 200),
        ];
        assert_eq!(sizes, expected);
    }
}
