//! The built-in type names of spec §3 and §6, the one list of them: sema resolves and suggests
//! ("did you mean `Str`?") with it, and the language server colours, completes and skips them
//! when it looks for a user's type.

/// The data types: what a field, a parameter or an output may be.
pub const DATA_TYPES: &[&str] = &[
    "bool", "u8", "u16", "u32", "u64", "i8", "i16", "i32", "i64", "f32", "f64", "Str", "List",
    "Set", "Map", "Option", "Image", "Audio", "Video", "File",
];

/// The types that are not data (spec §6): `Raw`, the parameter of a raw output's `parse:` fn,
/// and `Parts`, what a builder returns. Allowed only there (E0316 elsewhere).
pub const NON_DATA_TYPES: &[&str] = &["Raw", "Parts"];

/// Every built-in type name, data types first.
pub fn all() -> impl Iterator<Item = &'static str> {
    DATA_TYPES.iter().chain(NON_DATA_TYPES).copied()
}

/// Whether `name` is a built-in type's.
pub fn is_builtin(name: &str) -> bool {
    all().any(|t| t == name)
}
