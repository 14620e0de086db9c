//! What sema found each name to denote: the resolution the language server answers from.
//!
//! Sema resolves every name while it checks (items through the module scopes, fields through
//! the type of the value, locals through the expression scopes, codes through the `fails`
//! set, bindings through `ael.toml`); when [`super::CheckInput::record`] is set it writes each
//! answer down here as it goes, so hover, go to definition, references, rename and completion
//! are queries, not a second resolver. `aelc check` and `aelc build` do not record: each
//! recording point is one `Option` test for them.
//!
//! Invariants: [`Resolution::occurrences`] is sorted by (file, start, end) and holds no
//! duplicates; every symbol has at most one [`Definition`]; a local is keyed by the span of
//! the name that declares it, so two locals of the same name never meet. The resolution is
//! produced even when the project has errors: what could be resolved is recorded.

use std::collections::HashMap;

use super::methods::Receiver;
use super::ItemRef;
use crate::span::{FileId, Span};
use crate::syntax::ast::TypeExpr;

/// What a name denotes; two occurrences with equal symbols name the same thing.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Symbol {
    /// A top-level item.
    Item(ItemRef),
    /// A field of the struct (or of a variant of the enum) `owner`, a `DefId` of the type
    /// table.
    Field { owner: u32, name: Box<str> },
    /// A variant of the enum `owner`.
    Variant { owner: u32, name: Box<str> },
    /// A code of the `errors` set `set`.
    ErrorCode { set: u32, name: Box<str> },
    /// A parameter, `let`, closure parameter, pattern binding or template loop variable,
    /// declared by the name at this span.
    Local(Span),
    /// `[bindings.NAME]` of `ael.toml`.
    Binding(Box<str>),
    /// A file named by `file("…")`, relative to the project root.
    File(Box<str>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SymbolKind {
    Struct,
    Enum,
    Alias,
    Stream,
    Errors,
    Fn,
    Check,
    Builder,
    Node,
    Agent,
    Field,
    Variant,
    ErrorCode,
    Param,
    Local,
    Binding,
}

impl SymbolKind {
    pub fn is_type(self) -> bool {
        matches!(
            self,
            SymbolKind::Struct
                | SymbolKind::Enum
                | SymbolKind::Alias
                | SymbolKind::Stream
                | SymbolKind::Errors
        )
    }
}

/// The type sema gave a value, as much as an editor needs of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TypeInfo {
    /// As sema writes it in messages (`Author`, `list of Finding`, `text`).
    pub text: String,
    /// The struct or enum whose fields a `.` reaches, seen through `Option`, `List` and `Set`.
    pub def: Option<u32>,
    /// Which built-in methods apply to the value itself.
    pub receiver: Option<Receiver>,
}

/// A declared symbol.
#[derive(Clone, Debug)]
pub struct Definition {
    pub symbol: Symbol,
    pub kind: SymbolKind,
    pub name: String,
    /// The name where it is declared.
    pub span: Span,
    /// The whole declaration.
    pub full: Span,
    pub docs: Option<String>,
    /// The declaring struct or enum of a field or variant, the set of an error code.
    pub owner: Option<String>,
    /// The type as written, for fields, parameters and `let`s with a type.
    pub declared: Option<TypeExpr>,
    /// The type sema gave it (fields, parameters, locals).
    pub ty: Option<TypeInfo>,
}

/// A name in the source and what it denotes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Occurrence {
    pub span: Span,
    pub symbol: Symbol,
    pub is_definition: bool,
}

/// Everything recorded for one check.
#[derive(Clone, Debug, Default)]
pub struct Resolution {
    pub definitions: Vec<Definition>,
    /// Every occurrence, definitions included, sorted by (file, start, end).
    pub occurrences: Vec<Occurrence>,
    /// The type of each name or field access sema typed, sorted by (file, end): what a `.`
    /// typed after it reaches.
    pub types: Vec<(Span, TypeInfo)>,
    /// Per prompt file, the locals a template sees from its first byte (the parameters of the
    /// node it was checked for), as indices into `definitions`.
    pub prompt_scopes: Vec<(FileId, Vec<usize>)>,
    by_symbol: HashMap<Symbol, usize>,
}

impl Resolution {
    /// Records the declaration of `definition.symbol` (the first one wins) and its occurrence.
    pub(crate) fn define(&mut self, definition: Definition) {
        if self.by_symbol.contains_key(&definition.symbol) {
            return;
        }
        self.occurrences.push(Occurrence {
            span: definition.span,
            symbol: definition.symbol.clone(),
            is_definition: true,
        });
        self.by_symbol
            .insert(definition.symbol.clone(), self.definitions.len());
        self.definitions.push(definition);
    }

    pub(crate) fn refer(&mut self, span: Span, symbol: Symbol) {
        self.occurrences.push(Occurrence {
            span,
            symbol,
            is_definition: false,
        });
    }

    /// Sorts and deduplicates what was recorded (a name may be resolved twice: a parameter's
    /// type is looked up for its signature and again for its stream).
    pub(crate) fn finish(&mut self) {
        let key = |o: &Occurrence| (o.span.file, o.span.start, o.span.end, !o.is_definition);
        self.occurrences.sort_by_key(key);
        self.occurrences
            .dedup_by(|b, a| a.span == b.span && a.symbol == b.symbol);
        self.types
            .sort_by_key(|(span, _)| (span.file, span.end, u32::MAX - span.start));
        self.types.dedup_by(|b, a| a.0 == b.0);
    }

    /// The innermost occurrence at byte `offset` of `file` (touching its end counts, so a
    /// cursor just after a name finds it).
    pub fn at(&self, file: FileId, offset: u32) -> Option<&Occurrence> {
        let end = self
            .occurrences
            .partition_point(|o| (o.span.file, o.span.start) <= (file, offset));
        self.occurrences
            .get(..end)?
            .iter()
            .rev()
            .take_while(|o| o.span.file == file)
            // Names are short; a string literal (`binding("…")`) at most a line: nothing
            // further back can contain `offset`.
            .take_while(|o| offset - o.span.start <= 4096)
            .filter(|o| offset <= o.span.end)
            .min_by_key(|o| o.span.len())
    }

    /// The index in `definitions` of `symbol`'s declaration.
    pub(crate) fn index_of(&self, symbol: &Symbol) -> Option<usize> {
        self.by_symbol.get(symbol).copied()
    }

    pub fn definition(&self, symbol: &Symbol) -> Option<&Definition> {
        self.by_symbol
            .get(symbol)
            .and_then(|&i| self.definitions.get(i))
    }

    /// Every occurrence of `symbol`, its declaration included, in source order.
    pub fn references<'a>(&'a self, symbol: &'a Symbol) -> impl Iterator<Item = &'a Occurrence> {
        self.occurrences.iter().filter(move |o| o.symbol == *symbol)
    }

    /// The longest typed expression of `file` ending at byte `end` (`a.b` rather than `b`).
    pub fn type_ending_at(&self, file: FileId, end: u32) -> Option<&TypeInfo> {
        let at = self
            .types
            .partition_point(|(span, _)| (span.file, span.end) < (file, end));
        self.types
            .get(at)
            .filter(|(span, _)| span.file == file && span.end == end)
            .map(|(_, ty)| ty)
    }

    /// The fields of the struct or enum `owner` (a `DefId`), in declaration order.
    pub fn fields_of(&self, owner: u32) -> impl Iterator<Item = &Definition> {
        self.definitions
            .iter()
            .filter(move |d| matches!(&d.symbol, Symbol::Field { owner: o, .. } if *o == owner))
    }

    /// The locals a prompt template sees before any `{% for %}`.
    pub fn prompt_params(&self, file: FileId) -> impl Iterator<Item = &Definition> {
        self.prompt_scopes
            .iter()
            .filter(move |(f, _)| *f == file)
            .flat_map(|(_, defs)| defs.iter().filter_map(|&i| self.definitions.get(i)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sema::{check, CheckInput, NoFiles, SourceModule};
    use crate::source::SourceMap;
    use crate::syntax;

    /// Two structs declare `name`; `a` is typed only through `lead`'s result.
    const TEXT: &str = "struct A { name: Str<10> }\n\
        struct B { name: Str<10>, size: u8 }\n\
        fn lead(b: B) -> A { A { name: b.name } }\n\
        fn f(b: B) -> Str<10> {\n    let a = lead(b);\n    a.name\n}\n";

    fn resolve(text: &str, record: bool) -> (SourceMap, Option<Resolution>) {
        let mut sources = SourceMap::default();
        let file = sources.add("m.ael", text);
        let parsed = syntax::parse(file, text);
        let input = CheckInput {
            modules: vec![SourceModule {
                path: "m",
                file,
                ast: &parsed.module,
            }],
            project: None,
            files: &NoFiles,
            lean: false,
            record,
        };
        let checked = check(&input, &mut sources);
        (sources, checked.resolution)
    }

    /// The symbol at the `nth` `needle` of `TEXT`.
    fn symbol_at(resolution: &Resolution, needle: &str, nth: usize) -> Symbol {
        let at = TEXT.match_indices(needle).nth(nth).map_or(0, |(i, _)| i);
        resolution
            .at(FileId(0), at as u32)
            .map(|o| o.symbol.clone())
            .unwrap_or_else(|| panic!("nothing at `{needle}` #{nth}"))
    }

    #[test]
    fn fields_are_those_of_the_typed_struct_and_locals_their_declarations() {
        let (_, resolution) = resolve(TEXT, true);
        let resolution = resolution.expect("recorded");
        let a_name = symbol_at(&resolution, "name", 0);
        let b_name = symbol_at(&resolution, "name", 1);
        assert_ne!(a_name, b_name);
        assert_eq!(symbol_at(&resolution, "name: b.name", 0), a_name);
        assert_eq!(symbol_at(&resolution, "name }", 0), b_name);
        assert_eq!(symbol_at(&resolution, "name\n}", 0), a_name);
        assert_eq!(resolution.references(&b_name).count(), 2);
        // `a` in `a.name` is the `let`, which sema typed `A`.
        let a = symbol_at(&resolution, "a.name", 0);
        let declared = resolution.definition(&a).expect("the let");
        assert_eq!(declared.kind, SymbolKind::Local);
        assert_eq!(declared.ty.as_ref().map(|t| t.text.as_str()), Some("A"));
        let at = TEXT.find("a.name").unwrap_or(0) as u32 + 1;
        assert_eq!(
            resolution.type_ending_at(FileId(0), at).and_then(|t| t.def),
            Some(0)
        );
        // The two `b` parameters are two locals.
        assert_ne!(
            symbol_at(&resolution, "b.name", 0),
            symbol_at(&resolution, "b);", 0)
        );
    }

    #[test]
    fn nothing_is_recorded_unless_asked_and_spans_stay_in_their_file() {
        assert!(resolve(TEXT, false).1.is_none());
        let broken = "struct A { nàme: Str<10> }\nfn f(x: A) -> u8 { x.nàme. + y }\nfn g(";
        for text in [TEXT, broken] {
            let (sources, resolution) = resolve(text, true);
            let resolution = resolution.expect("recorded even with errors");
            for o in &resolution.occurrences {
                let file = sources.get(o.span.file).map_or("", |f| f.text.as_str());
                assert!(file.get(o.span.range()).is_some(), "{o:?} in {text:?}");
            }
            assert!(resolution
                .occurrences
                .windows(2)
                .all(|w| (w[0].span.file, w[0].span.start) <= (w[1].span.file, w[1].span.start)));
        }
    }
}
