//! [`NameError`]: names that resolve to nothing or to the wrong thing (`E02xx`, `W0201`).

use super::string_fix;
use crate::diagnostics::Diagnostic;
use crate::span::Span;

/// A name, module, field, variant, method or binding that is unknown, taken or of the wrong
/// kind. `suggestion` is the closest known name, when one is close.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum NameError {
    /// `E0201`: `use module` names no module of the project.
    UnknownModule {
        span: Span,
        module: String,
        suggestion: Option<String>,
    },
    /// `E0202`: `use module::{name}`: the module declares no `name`.
    NotInModule {
        span: Span,
        module: String,
        name: String,
        suggestion: Option<String>,
    },
    /// `E0203`: the item `name` is `verb` ("defined") twice in one module.
    Duplicate {
        span: Span,
        first: Span,
        name: String,
        verb: &'static str,
    },
    /// `E0203`: the `what` ("parameter", "field", "variant") `name` is declared twice.
    DeclaredTwice {
        span: Span,
        first: Span,
        what: &'static str,
        name: String,
    },
    /// `E0203`: a variant's field has the name of its enum's `tag` field.
    TagClash { span: Span, tag: String },
    /// `E0204`: `path` is `noun` ("a fn"), where a type is wanted.
    NotAType {
        span: Span,
        path: String,
        noun: &'static str,
    },
    /// `E0204`/`E0205` (`code`): `path` (written `text`; its last segment `name`, at `last`)
    /// names no `what` ("type", "fn", …) in scope.
    Unknown {
        code: &'static str,
        span: Span,
        last: Span,
        text: String,
        name: String,
        what: String,
        /// A single name (not `module::name`): the help says how to declare or import it.
        single: bool,
        suggestion: Option<String>,
    },
    /// `E0205`: the bare name `name` is no local, variant or item in scope.
    UnknownName {
        span: Span,
        name: String,
        suggestion: Option<String>,
    },
    /// `E0206`: a value of type `ty` has no field `field` (`fields`: the ones it has;
    /// `option`: the value is an `Option`, whose fields are behind it).
    NoField {
        span: Span,
        ty: String,
        field: String,
        fields: Vec<String>,
        option: bool,
        suggestion: Option<String>,
    },
    /// `E0206`: the struct literal `Struct { field: … }` names a field `Struct` lacks.
    NoStructField {
        span: Span,
        strukt: String,
        field: String,
        suggestion: Option<String>,
    },
    /// `E0206`: a variant pattern names a field the variant lacks.
    NoVariantField {
        span: Span,
        variant: String,
        field: String,
    },
    /// `E0207`: `Enum::variant` names no unit variant (`variants`: the ones it has).
    NoUnitVariant {
        span: Span,
        prefix: String,
        variant: String,
        variants: Vec<String>,
        suggestion: Option<String>,
    },
    /// `E0207`: a pattern names `name`, no variant of `ty`.
    NotAVariant {
        span: Span,
        name: String,
        ty: String,
        suggestion: Option<String>,
    },
    /// `E0208`: a value of type `ty` has no method `method` (`known`: the ones it has).
    NoMethod {
        span: Span,
        ty: String,
        method: String,
        known: Vec<String>,
        suggestion: Option<String>,
    },
    /// `E0209`: `path` is `noun` ("a fn"), where an `errors` set is wanted after `fails`.
    NotAnErrorsSet {
        span: Span,
        path: String,
        noun: &'static str,
    },
    /// `E0209`: `path` is `noun`, where `want` ("a check") is wanted.
    WrongItem {
        span: Span,
        path: String,
        noun: &'static str,
        want: String,
    },
    /// `E0210`: `use` brings `local` in, which already names another item here (`name`: the
    /// imported item's own name).
    NameTaken {
        span: Span,
        local: String,
        name: String,
    },
    /// `E0211`: `binding("name")` in a file that is not in a project.
    BindingWithoutProject { span: Span, name: String },
    /// `E0212`: `binding("name")` names no binding of `ael.toml` (`span`: the string
    /// literal, quotes included).
    UnknownBinding {
        span: Span,
        name: String,
        suggestion: Option<String>,
        /// The literal is written `"name"`, quotes around the name as it is: the fix replaces
        /// the name between them. Otherwise (`r"…"`, escapes) it rewrites the literal whole.
        plain: bool,
    },
    /// `E0213`: `@name` is no attribute.
    UnknownAttribute {
        span: Span,
        name: String,
        suggestion: Option<String>,
    },
    /// `W0201`: the import `name` is never used.
    UnusedImport { span: Span, name: String },
}

impl NameError {
    pub(crate) fn to_diagnostic(&self) -> Diagnostic {
        match self {
            NameError::UnknownModule {
                span,
                module,
                suggestion,
            } => {
                let d = Diagnostic::new("E0201", format!("there is no module `{module}`"))
                    .primary(*span, "unknown module");
                match suggestion {
                    Some(s) => d.did_you_mean(*span, s),
                    None => d.help(
                        "a module is a file path from the project root, without `.ael`, with `/` written `::`",
                    ),
                }
            }
            NameError::NotInModule {
                span,
                module,
                name,
                suggestion,
            } => {
                let d = Diagnostic::new("E0202", format!("module `{module}` has no item `{name}`"))
                    .primary(*span, "not declared there");
                match suggestion {
                    Some(s) => d.did_you_mean(*span, s),
                    None => d,
                }
            }
            NameError::Duplicate {
                span,
                first,
                name,
                verb,
            } => Diagnostic::new("E0203", format!("`{name}` is {verb} twice"))
                .primary(*span, "second definition")
                .secondary(*first, "first defined here")
                .help("rename one of them or remove the duplicate"),
            NameError::DeclaredTwice {
                span,
                first,
                what,
                name,
            } => Diagnostic::new("E0203", format!("{what} `{name}` is declared twice"))
                .primary(*span, "second declaration")
                .secondary(*first, "first declared here")
                .help("rename one of them or remove the duplicate"),
            NameError::TagClash { span, tag } => Diagnostic::new(
                "E0203",
                format!("field `{tag}` clashes with the enum's tag"),
            )
            .primary(*span, "the tag field has this name")
            .help(if tag == "type" {
                "rename the field, or tag the enum by another field with `@tag(\"kind\")`"
                    .to_owned()
            } else {
                format!("rename the field, or give `@tag(…)` another name than `{tag}`")
            }),
            NameError::Unknown {
                code,
                span,
                last,
                text,
                name,
                what,
                single,
                suggestion,
            } => {
                let d = Diagnostic::new(code, format!("unknown {what} `{text}`"))
                    .primary(*span, format!("no {what} of this name is in scope"));
                match suggestion {
                    // The last segment is the misspelt name (`module::Nmae`).
                    Some(s) => d.did_you_mean(*last, s),
                    None if *single => d.help(format!(
                        "declare the {what} or import it with `use module::{name};`"
                    )),
                    None => d,
                }
            }
            NameError::NotAType { span, path, noun } => {
                Diagnostic::new("E0204", format!("`{path}` is {noun}, not a type"))
                    .primary(*span, "expected a type")
            }
            NameError::UnknownName {
                span,
                name,
                suggestion,
            } => {
                let d = Diagnostic::new("E0205", format!("unknown name `{name}`"))
                    .primary(*span, "not in scope");
                match suggestion {
                    Some(s) => d.did_you_mean(*span, s),
                    None => d,
                }
            }
            NameError::NoField {
                span,
                ty,
                field,
                fields,
                option,
                suggestion,
            } => {
                let d = Diagnostic::new("E0206", format!("{ty} has no field `{field}`"))
                    .primary(*span, "unknown field");
                if let Some(s) = suggestion {
                    d.did_you_mean(*span, s)
                } else if *option {
                    d.help("this is an `Option`: use `match` or `.unwrap_or(…)` first")
                } else if !fields.is_empty() {
                    d.help(format!("the fields are: {}", fields.join(", ")))
                } else {
                    d
                }
            }
            NameError::NoStructField {
                span,
                strukt,
                field,
                suggestion,
            } => {
                let d = Diagnostic::new("E0206", format!("`{strukt}` has no field `{field}`"))
                    .primary(*span, "unknown field");
                match suggestion {
                    Some(s) => d.did_you_mean(*span, s),
                    None => d,
                }
            }
            NameError::NoVariantField {
                span,
                variant,
                field,
            } => Diagnostic::new(
                "E0206",
                format!("variant `{variant}` has no field `{field}`"),
            )
            .primary(*span, "unknown field"),
            NameError::NoUnitVariant {
                span,
                prefix,
                variant,
                variants,
                suggestion,
            } => {
                let d = Diagnostic::new(
                    "E0207",
                    format!("`{prefix}` has no unit variant `{variant}`"),
                )
                .primary(*span, "unknown variant");
                match suggestion {
                    Some(s) => d.did_you_mean(*span, s),
                    None => d.help(format!("the variants are: {}", variants.join(", "))),
                }
            }
            NameError::NotAVariant {
                span,
                name,
                ty,
                suggestion,
            } => {
                let d = Diagnostic::new("E0207", format!("`{name}` is not a variant of `{ty}`"))
                    .primary(*span, "unknown variant");
                match suggestion {
                    Some(s) => d.did_you_mean(*span, s),
                    None => d,
                }
            }
            NameError::NoMethod {
                span,
                ty,
                method,
                known,
                suggestion,
            } => {
                let d = Diagnostic::new("E0208", format!("{ty} has no method `{method}`"))
                    .primary(*span, "unknown method");
                match suggestion {
                    Some(s) => d.did_you_mean(*span, s),
                    None if known.is_empty() => d.help(format!("{ty} has no methods")),
                    None => d.help(format!("the methods of {ty} are: {}", known.join(", "))),
                }
            }
            NameError::NotAnErrorsSet { span, path, noun } => {
                Diagnostic::new("E0209", format!("`{path}` is {noun}, not an `errors` set"))
                    .primary(*span, "expected an `errors` set")
                    .help("declare the codes with `errors Name { code, … }` and write `fails Name`")
            }
            NameError::WrongItem {
                span,
                path,
                noun,
                want,
            } => Diagnostic::new("E0209", format!("`{path}` is {noun}, not {want}"))
                .primary(*span, format!("expected {want}"))
                .help(format!(
                    "name {want} declared in this module or imported with `use`"
                )),
            NameError::NameTaken { span, local, name } => Diagnostic::new(
                "E0210",
                format!("`{local}` is already a name in this module"),
            )
            .primary(*span, "imported here")
            .help(format!("import it under another name: `{name} as Other`")),
            NameError::BindingWithoutProject { span, name } => Diagnostic::new(
                "E0211",
                format!("binding `{name}` cannot be found: this file is not in a project"),
            )
            .primary(*span, "no `ael.toml` declares bindings")
            .help("add ael.toml with `[bindings.NAME]` at the project root"),
            NameError::UnknownBinding {
                span,
                name,
                suggestion,
                plain,
            } => {
                let d = Diagnostic::new(
                    "E0212",
                    format!("binding `{name}` is not declared in ael.toml"),
                )
                .primary(*span, "unknown binding");
                match suggestion {
                    Some(s) => string_fix(d, *span, *plain, s),
                    None => d.help(format!("declare it as `[bindings.{name}]` in ael.toml")),
                }
            }
            NameError::UnknownAttribute {
                span,
                name,
                suggestion,
            } => {
                let d = Diagnostic::new("E0213", format!("unknown attribute `@{name}`"))
                    .primary(*span, "not a refinement");
                match suggestion {
                    // The name after `@` is what is replaced.
                    Some(s) => d.help(format!("did you mean `@{s}`?")).fix(*span, s),
                    None => d.help(format!("refinements: {}", refinements())),
                }
            }
            NameError::UnusedImport { span, name } => {
                Diagnostic::new("W0201", format!("`{name}` is imported but never used"))
                    .primary(*span, "unused import")
                    .help("remove it from the `use`")
            }
        }
    }
}

/// E0213's list, from the table: `@pattern, @format on Str; @types, … on media`.
fn refinements() -> String {
    let mut groups: Vec<(&str, Vec<String>)> = Vec::new();
    for (name, refines) in crate::sema::types::ATTRIBUTES {
        match groups.last_mut() {
            Some((last, names)) if last == refines => names.push(format!("@{name}")),
            _ => groups.push((refines, vec![format!("@{name}")])),
        }
    }
    groups
        .iter()
        .map(|(refines, names)| format!("{} on {refines}", names.join(", ")))
        .collect::<Vec<_>>()
        .join("; ")
}
