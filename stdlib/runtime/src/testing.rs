//! The review types of the spec (§3.1, §5) as a ready [`TypeTable`], shared by this crate's
//! tests, the `decode` benchmark and documentation examples. Not used at run time.
//!
//! ```text
//! struct ReviewRequest { document: Str<4000>, strict: bool = false,
//!                        max_findings: u16<1..=50> = 10,
//!                        locale: Option<Str<16>> @pattern(r"^[a-z]{2}(-[A-Z]{2})?$") }
//! enum Severity { low, medium, high }
//! struct Finding { line: u32<1..>, severity: Severity, message: Str<500>,
//!                  suggestion: Option<Str<500>>, tags: Set<Str<32>, 8> }
//! @tag("kind") enum Verdict { approve, request_changes { reasons: List<Str<200>, 1..=20> },
//!                             comment { text: Str<1000> } }
//! struct Review { summary: Str<2000>, score: f64<0.0..=1.0>,
//!                 findings: List<Finding, 10000>, verdict: Verdict }
//! ```
//!
//! [`rounds`] times contenders side by side for the benchmarks that compare them, on the
//! [`payloads`] they share.

pub mod payloads;
pub mod rounds;

use crate::ty::{
    DefId, DefKind, FieldTy, FloatBound, FloatKind, FloatTy, IntKind, IntTy, ListTy, StrTy, Ty,
    TypeDef, TypeTable, VariantTy,
};

pub const REVIEW_REQUEST: DefId = DefId(0);
pub const SEVERITY: DefId = DefId(1);
pub const FINDING: DefId = DefId(2);
pub const VERDICT: DefId = DefId(3);
pub const REVIEW: DefId = DefId(4);

/// `Str<max>`.
pub fn text(max: u32) -> Ty {
    Ty::Str(StrTy {
        min: 0,
        max,
        pattern: None,
        format: None,
    })
}

/// A reference to a named type.
pub fn named(def: DefId) -> Ty {
    Ty::Ref { def }
}

/// `List<item, max>`.
pub fn list(item: Ty, max: u32) -> Ty {
    Ty::List(ListTy {
        item: Box::new(item),
        min: 0,
        max,
        unique: false,
    })
}

/// `Option<some>`.
pub fn option(some: Ty) -> Ty {
    Ty::Option {
        some: Box::new(some),
    }
}

/// A required field.
pub fn field(name: &str, ty: Ty) -> FieldTy {
    FieldTy {
        name: name.to_owned(),
        docs: None,
        ty,
        default: None,
    }
}

fn def(name: &str, kind: DefKind) -> TypeDef {
    TypeDef {
        name: name.to_owned(),
        module: "types::review".to_owned(),
        docs: None,
        kind,
    }
}

fn variant(name: &str, fields: Option<Vec<FieldTy>>) -> VariantTy {
    VariantTy {
        name: name.to_owned(),
        docs: None,
        fields,
    }
}

/// The table described in the module doc.
pub fn review_types() -> TypeTable {
    let request = DefKind::Struct {
        fields: vec![
            field("document", text(4000)),
            FieldTy {
                default: Some(Box::new(serde_json::json!(false))),
                ..field("strict", Ty::Bool)
            },
            FieldTy {
                default: Some(Box::new(serde_json::json!(10))),
                ..field(
                    "max_findings",
                    Ty::Int(IntTy {
                        kind: IntKind::U16,
                        min: 1,
                        max: 50,
                        max_exclusive: false,
                    }),
                )
            },
            field(
                "locale",
                option(Ty::Str(StrTy {
                    min: 0,
                    max: 16,
                    pattern: Some("^[a-z]{2}(-[A-Z]{2})?$".to_owned()),
                    format: None,
                })),
            ),
        ],
    };
    let severity = DefKind::Enum {
        tag: "type".to_owned(),
        variants: vec![
            variant("low", None),
            variant("medium", None),
            variant("high", None),
        ],
    };
    let finding = DefKind::Struct {
        fields: vec![
            field(
                "line",
                Ty::Int(IntTy {
                    min: 1,
                    ..IntTy::base(IntKind::U32)
                }),
            ),
            field("severity", named(SEVERITY)),
            field("message", text(500)),
            field("suggestion", option(text(500))),
            field(
                "tags",
                Ty::List(ListTy {
                    item: Box::new(text(32)),
                    min: 0,
                    max: 8,
                    unique: true,
                }),
            ),
        ],
    };
    let verdict = DefKind::Enum {
        tag: "kind".to_owned(),
        variants: vec![
            variant("approve", None),
            variant(
                "request_changes",
                Some(vec![field(
                    "reasons",
                    Ty::List(ListTy {
                        item: Box::new(text(200)),
                        min: 1,
                        max: 20,
                        unique: false,
                    }),
                )]),
            ),
            variant("comment", Some(vec![field("text", text(1000))])),
        ],
    };
    let review = DefKind::Struct {
        fields: vec![
            field("summary", text(2000)),
            field(
                "score",
                Ty::Float(FloatTy {
                    kind: FloatKind::F64,
                    min: Some(FloatBound {
                        value: 0.0,
                        exclusive: false,
                    }),
                    max: Some(FloatBound {
                        value: 1.0,
                        exclusive: false,
                    }),
                }),
            ),
            field("findings", list(named(FINDING), 10_000)),
            field("verdict", named(VERDICT)),
        ],
    };
    TypeTable::new(vec![
        def("ReviewRequest", request),
        def("Severity", severity),
        def("Finding", finding),
        def("Verdict", verdict),
        def("Review", review),
    ])
}

/// A valid `Review` document with `findings` findings (about 200 bytes each).
pub fn review_json(findings: usize) -> String {
    let mut out = String::from(
        r#"{"summary": "The change is mostly fine; a few lines need attention before it ships.", "score": 0.72, "findings": ["#,
    );
    for i in 0..findings {
        if i > 0 {
            out.push_str(", ");
        }
        let severity = ["low", "medium", "high"][i % 3];
        let suggestion = if i % 2 == 0 {
            r#""suggestion": "Use a bounded buffer here.", "#
        } else {
            r#""suggestion": null, "#
        };
        out.push_str(&format!(
            r#"{{"line": {}, "severity": "{severity}", "message": "Possible unbounded growth of the queue at this point (item {i}).", {suggestion}"tags": ["perf", "memory"]}}"#,
            i + 1
        ));
    }
    out.push_str(r#"], "verdict": {"kind": "request_changes", "reasons": ["unbounded queue"]}}"#);
    out
}

/// A valid `Review` document as a model writes one (compact, no spaces), with `findings`
/// findings of about 230 bytes: messages and suggestions quote code, so they carry `\"`, `\n`,
/// `\t` and `\u` escapes, and the strings with an escape hold over half of all string bytes
/// (52–62% in recorded model output; 55% here for one finding, 74% for more). The decode
/// benchmarks' payloads: `model_output_json(1)` is 328 bytes, `(87)` 19.7 KB, `(4500)` 1.04 MB.
pub fn model_output_json(findings: usize) -> String {
    let mut out = String::from(
        r#"{"summary":"Mostly fine; see \"queue.rs\":\n\t- unbounded growth","score":0.72,"findings":["#,
    );
    for i in 0..findings {
        if i > 0 {
            out.push(',');
        }
        let severity = ["low", "medium", "high"][i % 3];
        let suggestion = if i % 2 == 1 {
            r#""Bound it:\n\tlet q = ArrayQueue::new(64); // \"drops\" the oldest\n\u2014 see \"docs/queues.md\", \u00a73.""#
        } else {
            "null"
        };
        out.push_str(&format!(
            r#"{{"line":{},"severity":"{severity}","message":"Unbounded growth at item {i}:\n\tq.push_back(job); // \"never drained\"\n\tretry(\"{i}\")","suggestion":{suggestion},"tags":["perf","memory"]}}"#,
            i + 1
        ));
    }
    out.push_str(r#"],"verdict":{"kind":"request_changes","reasons":["unbounded queue"]}}"#);
    out
}
