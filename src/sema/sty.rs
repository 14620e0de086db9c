//! Types of expressions while checking (spec §5): intermediate values are unbounded, so an
//! expression's type forgets the bounds of the declared types it came from.

use aelc_runtime::ty::{DefId, DefKind, MediaKind, Ty, TypeTable};

#[derive(Clone, Debug, PartialEq)]
pub enum STy {
    Bool,
    Int,
    Float,
    Str,
    List {
        item: Box<STy>,
        unique: bool,
    },
    Map {
        key: Box<STy>,
        value: Box<STy>,
    },
    Option(Box<STy>),
    Def(DefId),
    Media(MediaKind),
    /// The type of `none` or `[]` before an expected type is known.
    Unknown,
    /// An expression whose error was already reported: compatible with everything.
    Error,
}

impl STy {
    /// The unbounded view of a declared type; aliases are followed.
    pub fn of(ty: &Ty, table: &TypeTable) -> STy {
        Self::of_depth(ty, table, 0)
    }

    fn of_depth(ty: &Ty, table: &TypeTable, depth: usize) -> STy {
        if depth > table.defs.len() + 1 {
            return STy::Error;
        }
        match ty {
            Ty::Bool => STy::Bool,
            Ty::Int(_) => STy::Int,
            Ty::Float(_) => STy::Float,
            Ty::Str(_) => STy::Str,
            Ty::List(l) => STy::List {
                item: Box::new(Self::of_depth(&l.item, table, depth)),
                unique: l.unique,
            },
            Ty::Map(m) => STy::Map {
                key: Box::new(Self::of_depth(&m.key, table, depth)),
                value: Box::new(Self::of_depth(&m.value, table, depth)),
            },
            Ty::Option { some } => STy::Option(Box::new(Self::of_depth(some, table, depth))),
            Ty::Ref { def } => match table.get(*def).map(|d| &d.kind) {
                Some(DefKind::Alias { ty }) => Self::of_depth(ty, table, depth + 1),
                Some(_) => STy::Def(*def),
                None => STy::Error,
            },
            Ty::Media(m) => STy::Media(m.kind),
        }
    }

    pub fn is_error(&self) -> bool {
        matches!(self, STy::Error)
    }

    /// Whether a value of `self` may stand where `expected` is wanted (bounds are checked later,
    /// at run time, except for constants).
    pub fn fits(&self, expected: &STy) -> bool {
        match (self, expected) {
            (STy::Error, _) | (_, STy::Error) | (STy::Unknown, _) => true,
            (STy::List { item: a, unique: _ }, STy::List { item: b, .. }) => a.fits(b),
            (STy::Map { key: k1, value: v1 }, STy::Map { key: k2, value: v2 }) => {
                k1.fits(k2) && v1.fits(v2)
            }
            (STy::Option(a), STy::Option(b)) => a.fits(b),
            (a, b) => a == b,
        }
    }

    /// How the type reads in a message: `Str`, `List<Finding>`, `Option<u8>` as `Option<int>`.
    pub fn describe(&self, table: &TypeTable) -> String {
        match self {
            STy::Bool => "bool".into(),
            STy::Int => "an integer".into(),
            STy::Float => "a float".into(),
            STy::Str => "Str".into(),
            STy::List { item, unique } => {
                let word = if *unique { "Set" } else { "List" };
                format!("{word}<{}>", item.describe_short(table))
            }
            STy::Map { key, value } => format!(
                "Map<{}, {}>",
                key.describe_short(table),
                value.describe_short(table)
            ),
            STy::Option(inner) => format!("Option<{}>", inner.describe_short(table)),
            STy::Def(id) => table
                .get(*id)
                .map_or_else(|| "?".to_owned(), |d| d.name.clone()),
            STy::Media(kind) => match kind {
                MediaKind::Image => "Image".into(),
                MediaKind::Audio => "Audio".into(),
                MediaKind::Video => "Video".into(),
                MediaKind::File => "File".into(),
            },
            STy::Unknown => "an unknown type".into(),
            STy::Error => "{error}".into(),
        }
    }

    fn describe_short(&self, table: &TypeTable) -> String {
        match self {
            STy::Int => "int".into(),
            STy::Float => "float".into(),
            other => other.describe(table),
        }
    }
}
