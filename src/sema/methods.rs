//! The built-in methods of spec §5: the one table of their names, receivers, arities and what
//! they do. Sema types a call with it (an unknown name is E0208, whose help lists the
//! receiver's methods from here), the language server completes and describes methods from
//! it, and E0208's explanation in the code registry is checked against it.

/// What a method is called on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Receiver {
    Text,
    /// Lists and sets.
    List,
    Map,
    Option,
}

/// One built-in method.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MethodInfo {
    pub receiver: Receiver,
    pub name: &'static str,
    /// How many arguments it takes (a closure counts as one).
    pub args: usize,
    /// What it does, for completion and hover.
    pub doc: &'static str,
}

const fn method(
    receiver: Receiver,
    name: &'static str,
    args: usize,
    doc: &'static str,
) -> MethodInfo {
    MethodInfo {
        receiver,
        name,
        args,
        doc,
    }
}

use Receiver::{List, Map, Option as Opt, Text};

/// Every built-in method, by receiver, in the order the spec lists them.
pub const METHODS: &[MethodInfo] = &[
    method(Text, "len", 0, "the number of characters"),
    method(Text, "is_empty", 0, "whether the text has no characters"),
    method(
        Text,
        "trim",
        0,
        "the text without leading and trailing whitespace",
    ),
    method(Text, "to_lower", 0, "the text in lowercase"),
    method(Text, "to_upper", 0, "the text in uppercase"),
    method(
        Text,
        "contains",
        1,
        "whether the text contains the given text",
    ),
    method(
        Text,
        "starts_with",
        1,
        "whether the text starts with the given text",
    ),
    method(
        Text,
        "ends_with",
        1,
        "whether the text ends with the given text",
    ),
    method(
        Text,
        "matches",
        1,
        "whether the text matches the pattern (a string literal)",
    ),
    method(List, "len", 0, "the number of items"),
    method(List, "is_empty", 0, "whether there are no items"),
    method(
        List,
        "contains",
        1,
        "whether an item equals the given value",
    ),
    method(List, "first", 0, "the first item, or none"),
    method(List, "last", 0, "the last item, or none"),
    method(List, "all", 1, "whether the closure holds for every item"),
    method(List, "any", 1, "whether the closure holds for some item"),
    method(List, "count", 1, "how many items the closure holds for"),
    method(List, "filter", 1, "the items the closure holds for"),
    method(List, "map", 1, "the closure's value for each item"),
    method(
        List,
        "sort_by",
        1,
        "the items sorted by the closure's value",
    ),
    method(List, "sum", 0, "the sum of the items (numbers)"),
    method(Map, "len", 0, "the number of entries"),
    method(Map, "is_empty", 0, "whether there are no entries"),
    method(Map, "contains", 1, "whether the map has the given key"),
    method(Opt, "is_some", 0, "whether there is a value"),
    method(Opt, "is_none", 0, "whether there is no value"),
    method(Opt, "unwrap_or", 1, "the value, or the given default"),
];

/// The methods of `receiver`, in table order.
pub fn of(receiver: Receiver) -> impl Iterator<Item = &'static MethodInfo> {
    METHODS.iter().filter(move |m| m.receiver == receiver)
}

/// The names of the methods of `receiver`.
pub fn names(receiver: Receiver) -> Vec<&'static str> {
    of(receiver).map(|m| m.name).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// E0208's explanation (the code registry, `aelc explain E0208`, the book) lists each
    /// receiver's methods as the table has them: a method added here and not there fails.
    #[test]
    fn the_e0208_explanation_lists_the_table() {
        let info = crate::diagnostics::codes::lookup("E0208").expect("E0208 is registered");
        for (receiver, words) in [
            (Text, "on text"),
            (List, "on lists and sets"),
            (Map, "on maps"),
            (Opt, "on options"),
        ] {
            let listed = format!("{words} `{}`", names(receiver).join(" "));
            assert!(
                info.explanation.contains(&listed),
                "E0208 should say {listed}: {}",
                info.explanation
            );
        }
    }

    #[test]
    fn no_method_is_listed_twice_for_one_receiver() {
        for (i, a) in METHODS.iter().enumerate() {
            for b in &METHODS[i + 1..] {
                assert!(a.receiver != b.receiver || a.name != b.name, "{a:?}");
            }
        }
    }
}
