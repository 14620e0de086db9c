//! The blocks of a node and the keys each takes (spec §6), the failure policies, and the
//! limits of a stream (§7.1): the one table of each. Sema checks blocks and keys with it (E0501, E0502 and their "did you mean"),
//! and the language server completes keys inside a block from it.

/// Each block of a node or an agent, with its keys, in the spec's order.
pub const NODE_BLOCKS: &[(&str, &[&str])] = &[
    (
        "config",
        &[
            "prompt",
            "model",
            "max_answer",
            "max_prompt",
            "timeout",
            "temperature",
        ],
    ),
    ("input", &["check", "builder"]),
    (
        "output",
        &["check", "transform", "raw", "parse", "on_failure"],
    ),
    ("inputs", &["combine", "fresh"]),
    ("budget", &["max_calls", "max_cost", "max_time"]),
    ("publish", &["capability", "price", "examples"]),
];

/// The failure policies of `output { on_failure: … }`, each with how it is written (spec §6):
/// what sema accepts and suggests, and E0516's list.
pub const POLICIES: &[(&str, &str)] = &[
    ("retry", "retry(n)"),
    ("repair", "repair(n)"),
    ("fallback", "fallback(binding(\"…\"))"),
    ("fail", "fail(code)"),
];

/// The limits a `stream` declaration takes.
pub const STREAM_LIMITS: &[&str] = &[
    "chunk",
    "buffer",
    "rate",
    "duration",
    "fresh",
    "on_full",
    "duplicates",
    "stale",
];

/// The names of a node's blocks.
pub fn node_block_names() -> impl Iterator<Item = &'static str> {
    NODE_BLOCKS.iter().map(|(name, _)| *name)
}

/// The keys of the node block `name`; `None` when a node has no such block.
pub fn node_block_keys(name: &str) -> Option<&'static [&'static str]> {
    NODE_BLOCKS
        .iter()
        .find(|(block, _)| *block == name)
        .map(|(_, keys)| *keys)
}
