//! Hand-built programs for the codegen tests: what sema would lower the example projects to.

use aelc::ir::*;
use aelc_runtime::ty::*;
use serde_json::json;

pub fn str_ty(max: u32) -> Ty {
    Ty::Str(StrTy {
        min: 0,
        max,
        pattern: None,
        format: None,
    })
}

pub fn int(kind: IntKind, min: i128, max: i128) -> Ty {
    Ty::Int(IntTy {
        kind,
        min,
        max,
        max_exclusive: false,
    })
}

pub fn list(item: Ty, max: u32) -> Ty {
    Ty::List(ListTy {
        item: Box::new(item),
        min: 0,
        max,
        unique: false,
    })
}

pub fn option(t: Ty) -> Ty {
    Ty::Option { some: Box::new(t) }
}

pub fn field(name: &str, docs: Option<&str>, ty: Ty) -> FieldTy {
    FieldTy {
        name: name.into(),
        docs: docs.map(Into::into),
        ty,
        default: None,
    }
}

pub fn def(name: &str, module: &str, docs: Option<&str>, kind: DefKind) -> TypeDef {
    TypeDef {
        name: name.into(),
        module: module.into(),
        docs: docs.map(Into::into),
        kind,
    }
}

pub fn unit_variant(name: &str) -> VariantTy {
    VariantTy {
        name: name.into(),
        docs: None,
        fields: None,
    }
}

pub fn config() -> NodeConfig {
    NodeConfig {
        prompt: Some("prompts/review.md".into()),
        model: Some("primary_model".into()),
        max_answer: 0,
        max_answer_explicit: false,
        max_prompt: None,
        timeout_ms: Some(60_000),
        temperature: Some(0.2),
    }
}

pub fn node(name: &str, kind: NodeKind, params: Vec<Param>, output: Ty) -> NodeIr {
    NodeIr {
        name: name.into(),
        module: "nodes::review".into(),
        kind,
        docs: None,
        params,
        output,
        fails: None,
        config: config(),
        input: InputStage::default(),
        output_stage: OutputStage::default(),
        inputs: None,
        budget: Budget::default(),
        publish: None,
        delegates: vec![],
        has_body: false,
        model_call: None,
        body: None,
        template: None,
    }
}

/// `examples/review`, lowered by hand.
pub fn review_program() -> Program {
    let severity = def(
        "Severity",
        "types::common",
        Some("How much a finding matters."),
        DefKind::Enum {
            tag: "type".into(),
            variants: vec![
                unit_variant("low"),
                unit_variant("medium"),
                unit_variant("high"),
            ],
        },
    );
    let finding = def(
        "Finding",
        "types::common",
        Some("One problem found in the document."),
        DefKind::Struct {
            fields: vec![
                field(
                    "line",
                    Some("The 1-based line the finding is about."),
                    int(IntKind::U32, 1, u32::MAX as i128),
                ),
                field("severity", None, Ty::Ref { def: DefId(0) }),
                field(
                    "message",
                    Some("What is wrong, in one sentence."),
                    str_ty(500),
                ),
            ],
        },
    );
    let review = def(
        "Review",
        "types::common",
        Some("The review of one document."),
        DefKind::Struct {
            fields: vec![
                field(
                    "summary",
                    Some("A short summary of the document's quality."),
                    str_ty(1000),
                ),
                field("findings", None, list(Ty::Ref { def: DefId(1) }, 50)),
            ],
        },
    );
    let request = def(
        "ReviewRequest",
        "nodes::review",
        Some("What the caller asks for."),
        DefKind::Struct {
            fields: vec![
                field("document", Some("The text to review."), str_ty(4000)),
                FieldTy {
                    default: Some(Box::new(json!(false))),
                    ..field("strict", None, Ty::Bool)
                },
                FieldTy {
                    default: Some(Box::new(json!(10))),
                    ..field("max_findings", None, int(IntKind::U16, 1, 50))
                },
                field(
                    "locale",
                    None,
                    option(Ty::Str(StrTy {
                        min: 0,
                        max: 16,
                        pattern: Some("^[a-z]{2}(-[A-Z]{2})?$".into()),
                        format: None,
                    })),
                ),
            ],
        },
    );
    let mut agent = node(
        "review",
        NodeKind::Agent,
        vec![Param {
            name: "request".into(),
            ty: Ty::Ref { def: DefId(3) },
            raw: false,
            stream: None,
        }],
        Ty::Ref { def: DefId(2) },
    );
    agent.docs = Some("Reviews a document: a summary and findings, most severe first.".into());
    agent.fails = Some(ErrorSetId(0));
    agent.output_stage.on_failure = vec![
        Policy::Repair { times: 2 },
        Policy::Fallback {
            binding: "backup_model".into(),
        },
        Policy::Fail {
            code: "too_many_findings".into(),
        },
    ];
    agent.publish = Some(Publish {
        capability: Some("review.document".into()),
        price: Some(Money {
            amount: "0.01".into(),
            currency: "EUR".into(),
        }),
        examples: Some("examples/review/*.json".into()),
    });
    Program {
        package: Package {
            name: "acme/review".into(),
            version: "0.1.0".into(),
            description: Some("Reviews a document and returns findings by severity.".into()),
        },
        types: TypeTable::new(vec![severity, finding, review, request]),
        errors: vec![ErrorSet {
            name: "ReviewError".into(),
            module: "nodes::review".into(),
            docs: Some("The errors the review node declares.".into()),
            codes: vec![
                ErrorCode {
                    name: "empty_document".into(),
                    docs: Some("The document has no text.".into()),
                },
                ErrorCode {
                    name: "too_many_findings".into(),
                    docs: Some(
                        "The model kept returning more findings than were asked for.".into(),
                    ),
                },
            ],
        }],
        nodes: vec![agent],
        bindings: vec![
            Binding {
                name: "backup_model".into(),
                provider: aelc::ir::Provider::Replay,
                model: "recorded".into(),
                base_url: None,
                api_key_env: None,
                accepts: vec![aelc::ir::PartKind::Text],
                price: None,
                constrain: None,
            },
            Binding {
                name: "primary_model".into(),
                provider: aelc::ir::Provider::OpenAi,
                model: "gpt-4o-mini".into(),
                base_url: Some("http://127.0.0.1:8080/v1".into()),
                api_key_env: Some("OPENAI_API_KEY".into()),
                accepts: vec![aelc::ir::PartKind::Text],
                price: Some(Price {
                    input_per_mtok: "0.15".into(),
                    output_per_mtok: "0.60".into(),
                    currency: "EUR".into(),
                }),
                constrain: None,
            },
        ],
        limits: Limits {
            max_input_bytes: 65536,
            max_stored_bytes_per_account: None,
        },
        ..Program::default()
    }
}

/// Every construct at once: data enum with a custom tag, alias, map keyed by an enum, set,
/// media, recursion, float bounds, exclusive range, two modules sharing a name, several
/// parameters.
pub fn kitchen_program() -> Program {
    let color = def(
        "Color",
        "shapes",
        None,
        DefKind::Enum {
            tag: "type".into(),
            variants: vec![unit_variant("red"), unit_variant("green")],
        },
    );
    let shape = def(
        "Shape",
        "shapes",
        Some("A shape."),
        DefKind::Enum {
            tag: "kind".into(),
            variants: vec![
                VariantTy {
                    name: "circle".into(),
                    docs: Some("A round one.".into()),
                    fields: Some(vec![field(
                        "radius",
                        None,
                        Ty::Float(FloatTy {
                            kind: FloatKind::F64,
                            min: Some(FloatBound {
                                value: 0.0,
                                exclusive: true,
                            }),
                            max: Some(FloatBound {
                                value: 100.0,
                                exclusive: false,
                            }),
                        }),
                    )]),
                },
                VariantTy {
                    name: "square".into(),
                    docs: None,
                    fields: Some(vec![field(
                        "side",
                        None,
                        Ty::Float(FloatTy {
                            kind: FloatKind::F32,
                            min: None,
                            max: None,
                        }),
                    )]),
                },
                unit_variant("point"),
            ],
        },
    );
    let locale = def(
        "Locale",
        "shapes",
        Some("A language code."),
        DefKind::Alias {
            ty: Ty::Str(StrTy {
                min: 2,
                max: 2,
                pattern: Some("^[a-z]{2}$".into()),
                format: None,
            }),
        },
    );
    let tree = def(
        "Tree",
        "shapes",
        Some("A tree of labels."),
        DefKind::Struct {
            fields: vec![
                field("label", None, str_ty(20)),
                field("children", None, list(Ty::Ref { def: DefId(3) }, 4)),
            ],
        },
    );
    // Two `Item`s in two modules.
    let item_a = def(
        "Item",
        "shapes",
        None,
        DefKind::Struct {
            fields: vec![field(
                "id",
                None,
                Ty::Int(IntTy {
                    kind: IntKind::I8,
                    min: -5,
                    max: 5,
                    max_exclusive: true,
                }),
            )],
        },
    );
    let item_b = def(
        "Item",
        "other::place",
        None,
        DefKind::Struct {
            fields: vec![field(
                "when",
                None,
                Ty::Str(StrTy {
                    min: 0,
                    max: 40,
                    pattern: None,
                    format: Some(Format::DateTime),
                }),
            )],
        },
    );
    let drawing = def(
        "Drawing",
        "shapes",
        Some("What the node returns."),
        DefKind::Struct {
            fields: vec![
                field(
                    "shapes",
                    Some("Every shape."),
                    list(Ty::Ref { def: DefId(1) }, 10),
                ),
                field(
                    "tags",
                    None,
                    Ty::List(ListTy {
                        item: Box::new(str_ty(12)),
                        min: 1,
                        max: 5,
                        unique: true,
                    }),
                ),
                field(
                    "counts",
                    Some("How many shapes of each color."),
                    Ty::Map(MapTy {
                        key: Box::new(Ty::Ref { def: DefId(0) }),
                        value: Box::new(int(IntKind::U8, 0, 255)),
                        min: 0,
                        max: 2,
                    }),
                ),
                field("locale", None, option(Ty::Ref { def: DefId(2) })),
                field("tree", None, option(Ty::Ref { def: DefId(3) })),
                field("a", None, Ty::Ref { def: DefId(4) }),
                field("b", None, Ty::Ref { def: DefId(5) }),
                field(
                    "photo",
                    None,
                    option(Ty::Media(Box::new(MediaTy {
                        kind: MediaKind::Image,
                        max_bytes: 5 * 1024 * 1024,
                        content_types: vec!["image/png".into(), "image/jpeg".into()],
                        max_pixels: Some((4096, 4096)),
                        max_duration_ms: None,
                        sample_rate: None,
                    }))),
                ),
            ],
        },
    );
    let mut draw = node(
        "draw",
        NodeKind::Agent,
        vec![
            Param {
                name: "prompt".into(),
                ty: str_ty(200),
                raw: false,
                stream: None,
            },
            Param {
                name: "clip".into(),
                ty: option(Ty::Media(Box::new(MediaTy {
                    kind: MediaKind::Audio,
                    max_bytes: 20 * 1024 * 1024,
                    content_types: vec![],
                    max_pixels: None,
                    max_duration_ms: Some(30_000),
                    sample_rate: Some(16_000),
                }))),
                raw: false,
                stream: None,
            },
        ],
        Ty::Ref { def: DefId(6) },
    );
    draw.module = "shapes".into();
    draw.docs = Some("Draws shapes.".into());
    draw.inputs = Some(Inputs {
        combine: Combine::Together,
        fresh: vec![],
    });
    let mut count = node(
        "count",
        NodeKind::Node,
        vec![Param {
            name: "shape".into(),
            ty: Ty::Ref { def: DefId(1) },
            raw: false,
            stream: None,
        }],
        list(Ty::Ref { def: DefId(0) }, 3),
    );
    count.module = "shapes".into();
    Program {
        package: Package {
            name: "acme/kitchen".into(),
            version: "1.2.3".into(),
            description: None,
        },
        types: TypeTable::new(vec![color, shape, locale, tree, item_a, item_b, drawing]),
        nodes: vec![draw, count],
        ..Program::default()
    }
}
