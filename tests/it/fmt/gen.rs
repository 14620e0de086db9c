//! A generator of random but valid syntax trees, for the formatter's round-trip properties.
//!
//! Trees are generated loosely and then made printable: children whose precedence is too low
//! for their place get a `Paren`, the way a parsed tree has them. Names are never keywords,
//! value paths are lowercase (only `Upper { … }` opens a struct literal), and no all-uppercase
//! three-letter name exists (that is a currency after a number). Spans are all empty: the
//! properties compare trees with spans stripped.

use aelc::span::Span;
use aelc::syntax::ast::*;
use proptest::prelude::*;

const KEYWORDS: &[&str] = &[
    "use", "type", "struct", "enum", "errors", "fn", "extern", "check", "node", "agent", "stream",
    "builder", "require", "example", "let", "return", "if", "else", "match", "true", "false",
    "none", "some", "fails", "as", "of",
];

fn span() -> Span {
    Span::default()
}

fn mk_ident(name: String) -> Ident {
    Ident {
        name: name.into(),
        span: span(),
    }
}

/// A lowercase name: fields, variables, functions, variants.
pub fn lower() -> impl Strategy<Value = Ident> {
    prop_oneof![
        3 => prop::sample::select(vec![
            "request", "output", "document", "findings", "len", "trim", "severity", "line", "x",
            "y", "config", "input", "publish", "low", "high", "r", "s", "m", "ms", "h", "b",
            "kb", "e", "_under", "n1",
        ])
        .prop_map(str::to_owned),
        1 => "[a-z_][a-z0-9_]{0,7}",
    ]
    .prop_filter("not a keyword", |n| {
        !KEYWORDS.contains(&n.as_str()) && n != "_"
    })
    .prop_map(mk_ident)
}

/// An uppercase name: types and struct literals.
pub fn upper() -> impl Strategy<Value = Ident> {
    prop_oneof![
        3 => prop::sample::select(vec![
            "Review", "Str", "List", "Option", "Map", "Set", "Image", "Finding", "T", "Parts",
            "Raw", "ReviewRequest", "Ab",
        ])
        .prop_map(str::to_owned),
        1 => "[A-Z][A-Za-z0-9_]{0,7}",
    ]
    .prop_filter("not a currency", |n| {
        !(n.len() == 3 && n.bytes().all(|b| b.is_ascii_uppercase()))
    })
    .prop_map(mk_ident)
}

fn mk_path(segments: Vec<Ident>) -> Path {
    Path::new(segments)
}

/// `a`, `a::b`: a value path.
fn value_path() -> impl Strategy<Value = Path> {
    prop::collection::vec(lower(), 1..3).prop_map(mk_path)
}

/// `Review`, `common::Review`.
fn type_path() -> impl Strategy<Value = Path> {
    (prop::collection::vec(lower(), 0..2), upper()).prop_map(|(mut segments, last)| {
        segments.push(last);
        mk_path(segments)
    })
}

fn lit(kind: LitKind) -> Literal {
    Literal { kind, span: span() }
}

fn float_text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[0-9]{1,3}\\.[0-9]{1,3}",
        "[0-9]{1,2}(\\.[0-9]{1,2})?e-?[0-9]{1,2}",
    ]
}

fn duration_unit() -> impl Strategy<Value = DurationUnit> {
    prop::sample::select(vec![
        DurationUnit::Millis,
        DurationUnit::Seconds,
        DurationUnit::Minutes,
        DurationUnit::Hours,
    ])
}

fn size_unit() -> impl Strategy<Value = SizeUnit> {
    prop::sample::select(vec![
        SizeUnit::B,
        SizeUnit::KiB,
        SizeUnit::MiB,
        SizeUnit::GiB,
        SizeUnit::KB,
        SizeUnit::MB,
        SizeUnit::GB,
    ])
}

fn string_value() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => "[a-z .:/^$*+?()\\[\\]{}-]{0,12}",
        1 => "[\"\\\\\n\t\r\u{0}\u{7f}é✓ a-z]{0,8}",
    ]
}

fn str_lit() -> impl Strategy<Value = Literal> {
    prop_oneof![
        3 => string_value().prop_map(|value| lit(LitKind::Str { value: value.into(), raw: None })),
        1 => ("[a-z .^$\\[\\]{}()#\\\\-]{0,12}", 0u8..3).prop_map(|(value, hashes)| {
            lit(LitKind::Str { value: value.into(), raw: Some(hashes) })
        }),
    ]
}

/// A number that may start a range bound or a type size.
fn bound_literal() -> impl Strategy<Value = Literal> {
    prop_oneof![
        any::<u64>().prop_map(|v| lit(LitKind::Int(v))),
        float_text().prop_map(float_lit),
        (any::<u32>(), size_unit()).prop_map(|(value, unit)| lit(LitKind::Size {
            value: u64::from(value),
            unit
        })),
        (0u64..100_000, duration_unit())
            .prop_map(|(value, unit)| lit(LitKind::Duration { value, unit })),
    ]
}

fn float_lit(text: String) -> Literal {
    lit(LitKind::Float { text: text.into() })
}

pub fn literal() -> impl Strategy<Value = Literal> {
    prop_oneof![
        any::<bool>().prop_map(|b| lit(LitKind::Bool(b))),
        any::<u64>().prop_map(|v| lit(LitKind::Int(v))),
        float_text().prop_map(float_lit),
        str_lit(),
        (0u64..100_000, duration_unit())
            .prop_map(|(value, unit)| lit(LitKind::Duration { value, unit })),
        (0u64..100_000, size_unit()).prop_map(|(value, unit)| lit(LitKind::Size { value, unit })),
        (
            0u64..10_000,
            prop::sample::select(vec![
                DurationUnit::Seconds,
                DurationUnit::Minutes,
                DurationUnit::Hours
            ])
        )
            .prop_map(|(count, per)| lit(LitKind::Rate { count, per })),
        ("[0-9]{1,3}(\\.[0-9]{1,3})?", "[A-Z]{3}").prop_map(|(amount, currency)| lit(
            LitKind::Money {
                amount: amount.into(),
                currency: Currency::new(&currency).unwrap_or_default()
            }
        )),
    ]
}

fn expr_of(kind: ExprKind) -> Expr {
    Expr { kind, span: span() }
}

fn boxed(kind: ExprKind) -> Box<Expr> {
    Box::new(expr_of(kind))
}

fn binary_op() -> impl Strategy<Value = BinaryOp> {
    prop::sample::select(vec![
        BinaryOp::Or,
        BinaryOp::And,
        BinaryOp::Eq,
        BinaryOp::Ne,
        BinaryOp::Lt,
        BinaryOp::Le,
        BinaryOp::Gt,
        BinaryOp::Ge,
        BinaryOp::Add,
        BinaryOp::Sub,
        BinaryOp::Mul,
        BinaryOp::Div,
        BinaryOp::Rem,
    ])
}

fn let_stmt(expr: impl Strategy<Value = Expr>) -> impl Strategy<Value = Stmt> {
    (lower(), prop::option::of(ty()), expr).prop_map(|(name, ty, value)| Stmt::Let {
        name,
        ty,
        value,
        span: span(),
    })
}

fn pattern() -> impl Strategy<Value = Pattern> {
    let leaf = prop_oneof![
        Just(PatternKind::Wildcard),
        Just(PatternKind::None),
        lower().prop_map(PatternKind::Name),
        literal().prop_map(PatternKind::Lit),
    ]
    .prop_map(|kind| Pattern { kind, span: span() });
    let single = leaf.prop_recursive(3, 12, 3, |inner| {
        prop_oneof![
            inner.clone().prop_map(|p| PatternKind::Some(Box::new(p))),
            (
                lower(),
                prop::collection::vec((lower(), prop::option::of(inner)), 0..3),
                any::<bool>()
            )
                .prop_map(|(name, fields, rest)| PatternKind::Variant {
                    name,
                    fields: fields
                        .into_iter()
                        .map(|(name, pattern)| FieldPattern {
                            name,
                            pattern,
                            span: span(),
                        })
                        .collect(),
                    rest,
                }),
        ]
        .prop_map(|kind| Pattern { kind, span: span() })
    });
    prop_oneof![
        4 => single.clone(),
        1 => prop::collection::vec(single, 2..4).prop_map(|alternatives| Pattern {
            kind: PatternKind::Or(alternatives.into_iter().map(flatten_or).collect()),
            span: span(),
        }),
    ]
}

/// An `Or` alternative is never itself an `Or`: `a | b | c` parses flat.
fn flatten_or(pattern: Pattern) -> Pattern {
    match pattern.kind {
        PatternKind::Or(_) => Pattern {
            kind: PatternKind::Wildcard,
            span: pattern.span,
        },
        _ => pattern,
    }
}

/// Any expression, made printable by [`fix`].
pub fn expr() -> impl Strategy<Value = Expr> {
    raw_expr().prop_map(|e| fix(e, 0))
}

fn raw_expr() -> impl Strategy<Value = Expr> {
    let leaf = prop_oneof![
        4 => literal().prop_map(ExprKind::Lit),
        1 => Just(ExprKind::None),
        5 => value_path().prop_map(ExprKind::Path),
    ]
    .prop_map(expr_of);
    leaf.prop_recursive(4, 48, 4, |inner| {
        let args = prop::collection::vec(inner.clone(), 0..3);
        prop_oneof![
            inner.clone().prop_map(|e| ExprKind::Some(Box::new(e))),
            (inner.clone(), lower()).prop_map(|(base, name)| ExprKind::Field {
                base: Box::new(base),
                name
            }),
            (inner.clone(), lower(), args.clone()).prop_map(|(receiver, method, args)| {
                ExprKind::MethodCall {
                    method,
                    operands: std::iter::once(receiver).chain(args).collect(),
                }
            }),
            (value_path(), args.clone()).prop_map(|(callee, args)| ExprKind::Call {
                callee: Box::new(callee),
                args: args.into()
            }),
            (
                type_path(),
                prop::collection::vec((lower(), prop::option::of(inner.clone())), 0..3),
                prop::option::of(inner.clone())
            )
                .prop_map(|(path, fields, base)| ExprKind::StructLit {
                    path: Box::new(path),
                    fields: fields
                        .into_iter()
                        .map(|(name, value)| FieldInit {
                            name,
                            value,
                            span: span(),
                        })
                        .collect(),
                    base: base.map(Box::new),
                }),
            args.clone().prop_map(ExprKind::List),
            inner.clone().prop_map(|e| ExprKind::Paren(Box::new(e))),
            (
                prop::collection::vec(let_stmt(inner.clone()), 0..2),
                inner.clone()
            )
                .prop_map(|(stmts, value)| ExprKind::Block {
                    stmts,
                    value: Box::new(value)
                }),
            (
                inner.clone(),
                prop::collection::vec(let_stmt(inner.clone()), 0..2),
                inner.clone(),
                inner.clone()
            )
                .prop_map(|(cond, stmts, then_value, else_value)| ExprKind::If {
                    cond: Box::new(cond),
                    then_branch: boxed(ExprKind::Block {
                        stmts,
                        value: Box::new(then_value),
                    }),
                    else_branch: as_else(else_value),
                }),
            (
                inner.clone(),
                prop::collection::vec((pattern(), inner.clone()), 0..4)
            )
                .prop_map(|(scrutinee, arms)| ExprKind::Match {
                    scrutinee: Box::new(scrutinee),
                    arms: arms
                        .into_iter()
                        .map(|(pattern, body)| MatchArm {
                            pattern,
                            body,
                            span: span(),
                        })
                        .collect(),
                }),
            (prop::bool::ANY, inner.clone()).prop_map(|(not, operand)| ExprKind::Unary {
                op: if not { UnaryOp::Not } else { UnaryOp::Neg },
                operand: Box::new(operand),
            }),
            (binary_op(), inner.clone(), inner.clone()).prop_map(|(op, lhs, rhs)| {
                ExprKind::Binary {
                    op,
                    lhs: Box::new(lhs),
                    rhs: Box::new(rhs),
                }
            }),
            (prop::collection::vec(lower(), 1..3), inner).prop_map(|(params, body)| {
                ExprKind::Closure {
                    params,
                    body: Box::new(body),
                }
            }),
        ]
        .prop_map(expr_of)
    })
}

/// An `else` branch is a block, or an `if` when the generated value is one (`else if`).
fn as_else(value: Expr) -> Box<Expr> {
    if matches!(value.kind, ExprKind::If { .. }) {
        Box::new(value)
    } else {
        boxed(ExprKind::Block {
            stmts: Vec::new(),
            value: Box::new(value),
        })
    }
}

/// How tightly an expression binds: what it may stand under without parentheses.
fn level(expr: &Expr) -> u8 {
    match &expr.kind {
        ExprKind::Closure { .. } => 0,
        ExprKind::Binary { op, .. } => op.precedence(),
        ExprKind::Unary { .. } => 6,
        ExprKind::Field { .. } | ExprKind::MethodCall { .. } => 7,
        _ => 8,
    }
}

fn paren(expr: Expr) -> Expr {
    expr_of(ExprKind::Paren(Box::new(expr)))
}

/// Makes `expr` stand where binding strength `min` is needed, fixing its children first.
pub fn fix(expr: Expr, min: u8) -> Expr {
    let kind = match expr.kind {
        ExprKind::Some(inner) => ExprKind::Some(Box::new(fix(*inner, 0))),
        ExprKind::Field { base, name } => ExprKind::Field {
            base: Box::new(receiver(*base)),
            name,
        },
        ExprKind::MethodCall { method, operands } => ExprKind::MethodCall {
            method,
            operands: operands
                .into_vec()
                .into_iter()
                .enumerate()
                .map(|(at, e)| if at == 0 { receiver(e) } else { fix(e, 0) })
                .collect(),
        },
        ExprKind::Call { callee, args } => ExprKind::Call {
            callee,
            args: args.into_vec().into_iter().map(|a| fix(a, 0)).collect(),
        },
        ExprKind::StructLit { path, fields, base } => ExprKind::StructLit {
            path,
            fields: fields
                .into_vec()
                .into_iter()
                .map(|f| FieldInit {
                    value: f.value.map(|v| fix(v, 0)),
                    ..f
                })
                .collect(),
            base: base.map(|b| Box::new(fix(*b, 0))),
        },
        ExprKind::List(items) => ExprKind::List(items.into_iter().map(|e| fix(e, 0)).collect()),
        ExprKind::Paren(inner) => ExprKind::Paren(Box::new(fix(*inner, 0))),
        ExprKind::Block { stmts, value } => ExprKind::Block {
            stmts: stmts.into_iter().map(fix_stmt).collect(),
            value: Box::new(fix(*value, 0)),
        },
        ExprKind::If {
            cond,
            then_branch,
            else_branch,
        } => ExprKind::If {
            cond: Box::new(fix(*cond, 1)),
            then_branch: Box::new(fix(*then_branch, 0)),
            else_branch: Box::new(fix(*else_branch, 0)),
        },
        ExprKind::Match { scrutinee, arms } => ExprKind::Match {
            scrutinee: Box::new(fix(*scrutinee, 1)),
            arms: arms
                .into_iter()
                .map(|arm| MatchArm {
                    body: fix(arm.body, 0),
                    ..arm
                })
                .collect(),
        },
        ExprKind::Unary { op, operand } => ExprKind::Unary {
            op,
            operand: Box::new(fix(*operand, 6)),
        },
        ExprKind::Binary { op, lhs, rhs } => {
            let prec = op.precedence();
            // Comparisons do not chain: both sides bind tighter.
            let left = if prec == 3 { 4 } else { prec };
            ExprKind::Binary {
                op,
                lhs: Box::new(fix(*lhs, left)),
                rhs: Box::new(fix(*rhs, prec + 1)),
            }
        }
        ExprKind::Closure { params, body } => ExprKind::Closure {
            params,
            body: Box::new(fix(*body, 0)),
        },
        other => other,
    };
    let fixed = Expr {
        kind,
        span: expr.span,
    };
    if level(&fixed) < min {
        paren(fixed)
    } else {
        fixed
    }
}

/// The base of `.field` / `.method()`: postfix strength, and no bare number (`1.x`).
fn receiver(expr: Expr) -> Expr {
    let fixed = fix(expr, 7);
    match &fixed.kind {
        ExprKind::Lit(Literal {
            kind: LitKind::Str { .. },
            ..
        }) => fixed,
        ExprKind::Lit(_) => paren(fixed),
        _ => fixed,
    }
}

fn fix_stmt(stmt: Stmt) -> Stmt {
    match stmt {
        Stmt::Let {
            name,
            ty,
            value,
            span,
        } => Stmt::Let {
            name,
            ty,
            value: fix(value, 0),
            span,
        },
        Stmt::Return { value, span } => Stmt::Return {
            value: fix(value, 0),
            span,
        },
    }
}

fn attribute() -> impl Strategy<Value = Attribute> {
    (
        prop::sample::select(vec![
            "pattern",
            "format",
            "tag",
            "types",
            "max_pixels",
            "doc",
        ]),
        prop::collection::vec(small_expr(), 0..3),
    )
        .prop_map(|(name, args)| Attribute {
            name: mk_ident(name.to_owned()),
            args,
            span: span(),
        })
}

/// Short expressions for attributes and defaults.
fn small_expr() -> impl Strategy<Value = Expr> {
    prop_oneof![
        literal().prop_map(|l| expr_of(ExprKind::Lit(l))),
        value_path().prop_map(|p| expr_of(ExprKind::Path(p))),
    ]
}

fn bound() -> impl Strategy<Value = Bound> {
    (any::<bool>(), bound_literal()).prop_map(|(negative, lit)| Bound {
        negative,
        lit,
        start: span().start,
    })
}

pub fn ty() -> impl Strategy<Value = TypeExpr> {
    let leaf = type_path().prop_map(|path| TypeKind::Named {
        path,
        args: Box::default(),
    });
    let kind = leaf.prop_recursive(3, 10, 3, |inner| {
        (
            type_path(),
            prop::collection::vec(
                prop_oneof![
                    inner.prop_map(|kind| TypeArg::Type(TypeExpr {
                        kind,
                        attrs: Attrs::default(),
                        end: span().end,
                    })),
                    bound().prop_map(TypeArg::Bound),
                    (
                        prop::option::of(bound()),
                        prop::option::of(bound()),
                        any::<bool>()
                    )
                        .prop_filter("a range has a bound", |(s, e, _)| s.is_some()
                            || e.is_some())
                        .prop_map(|(start, end, inclusive)| {
                            TypeArg::Range(Box::new(RangeArg {
                                start,
                                end,
                                inclusive,
                                span: span(),
                            }))
                        }),
                ],
                1..3,
            ),
        )
            .prop_map(|(path, args)| TypeKind::Named {
                path,
                args: args.into(),
            })
    });
    (kind, prop::collection::vec(attribute(), 0..2)).prop_map(|(kind, attrs)| TypeExpr {
        kind,
        attrs: attrs.into(),
        end: span().end,
    })
}

fn docs() -> impl Strategy<Value = Option<Doc>> {
    prop::option::weighted(
        0.3,
        prop::collection::vec(
            "([a-zA-Z0-9,.`]([a-zA-Z0-9 ,.`]{0,20}[a-zA-Z0-9,.`])?)?",
            1..3,
        ),
    )
    .prop_map(|lines| {
        lines.map(|lines| Doc {
            text: lines.join("\n").into(),
            span: span(),
        })
    })
}

fn field() -> impl Strategy<Value = Field> {
    (docs(), lower(), ty(), prop::option::of(expr())).prop_map(|(docs, name, ty, default)| Field {
        docs,
        name,
        ty,
        default: default.map(Box::new),
    })
}

fn param() -> impl Strategy<Value = Param> {
    (lower(), ty()).prop_map(|(name, ty)| Param { name, ty })
}

fn params() -> impl Strategy<Value = Vec<Param>> {
    prop::collection::vec(param(), 0..3)
}

fn entry() -> impl Strategy<Value = Entry> {
    let key = prop_oneof![
        prop::sample::select(vec![
            "prompt",
            "model",
            "check",
            "builder",
            "transform",
            "raw",
            "parse",
            "on_failure",
            "combine",
            "fresh",
            "max_calls",
            "price",
            "type",
            "timeout",
        ])
        .prop_map(|k| mk_ident(k.to_owned())),
        lower(),
    ];
    let arg = (
        expr().prop_filter("no block as an entry argument", |e| {
            !matches!(e.kind, ExprKind::Block { .. })
        }),
        prop::option::weighted(0.2, literal()),
    )
        .prop_map(|(value, qualifier)| Arg {
            value,
            qualifier: qualifier.map(Box::new),
            span: span(),
        });
    (key, any::<bool>(), prop::collection::vec(arg, 0..3)).prop_map(|(key, colon, args)| Entry {
        key,
        colon,
        args,
        span: span(),
    })
}

fn block() -> impl Strategy<Value = Block> {
    (
        prop_oneof![
            prop::sample::select(vec![
                "config", "input", "output", "inputs", "budget", "publish"
            ])
            .prop_map(|k| mk_ident(k.to_owned())),
            lower(),
        ],
        prop::collection::vec(entry(), 0..4),
    )
        .prop_map(|(name, entries)| Block {
            name,
            entries,
            span: span(),
        })
}

fn body_block() -> impl Strategy<Value = Expr> {
    (prop::collection::vec(let_stmt(expr()), 0..3), expr()).prop_map(|(stmts, value)| {
        expr_of(ExprKind::Block {
            stmts,
            value: Box::new(value),
        })
    })
}

fn item_kind() -> impl Strategy<Value = ItemKind> {
    let variant = (
        docs(),
        prop::collection::vec(attribute(), 0..2),
        lower(),
        prop::option::weighted(0.4, prop::collection::vec(field(), 0..3)),
    )
        .prop_map(|(docs, attrs, name, fields)| Variant {
            docs,
            attrs: attrs.into(),
            name,
            fields,
            span: span(),
        });
    let require =
        (expr(), lower(), prop::option::of(str_lit())).prop_map(|(cond, code, message)| Require {
            cond,
            code,
            message,
            span: span(),
        });
    prop_oneof![
        (
            prop::collection::vec(lower(), 1..3),
            prop::collection::vec(
                (
                    prop_oneof![lower(), upper()],
                    prop::option::weighted(0.3, lower())
                ),
                0..4
            ),
            any::<bool>()
        )
            .prop_map(|(module, names, braced)| {
                let mut names: Vec<UseName> = names
                    .into_iter()
                    .map(|(name, alias)| UseName {
                        name,
                        alias,
                        span: span(),
                    })
                    .collect();
                let braced = braced || names.len() != 1;
                if !braced {
                    names.truncate(1);
                }
                ItemKind::Use(UseItem {
                    module: mk_path(module),
                    names,
                    braced,
                })
            }),
        (upper(), ty()).prop_map(|(name, ty)| ItemKind::TypeAlias(TypeAlias { name, ty })),
        (upper(), prop::collection::vec(field(), 0..4))
            .prop_map(|(name, fields)| ItemKind::Struct(StructDef { name, fields })),
        (upper(), prop::collection::vec(variant, 0..4))
            .prop_map(|(name, variants)| ItemKind::Enum(EnumDef { name, variants })),
        (upper(), prop::collection::vec((docs(), lower()), 0..4)).prop_map(|(name, codes)| {
            ItemKind::Errors(ErrorsDef {
                name,
                codes: codes
                    .into_iter()
                    .map(|(docs, name)| ErrorCode {
                        docs,
                        name,
                        span: span(),
                    })
                    .collect(),
            })
        }),
        (any::<bool>(), lower(), params(), ty(), body_block()).prop_map(
            |(is_extern, name, params, ret, body)| ItemKind::Fn(FnDef {
                is_extern,
                name,
                params: params.into(),
                ret,
                body: (!is_extern).then(|| Body::Parsed(Box::new(body))),
            })
        ),
        (
            any::<bool>(),
            lower(),
            params(),
            prop::option::of(type_path()),
            prop::collection::vec(require, 0..3)
        )
            .prop_map(
                |(is_extern, name, params, fails, body)| ItemKind::Check(CheckDef {
                    is_extern,
                    name,
                    params: params.into(),
                    fails,
                    body: (!is_extern).then_some(Body::Parsed(body)),
                })
            ),
        (lower(), params(), ty(), prop::collection::vec(expr(), 0..3)).prop_map(
            |(name, params, ret, parts)| {
                ItemKind::Builder(Box::new(BuilderDef {
                    name,
                    params: params.into(),
                    ret,
                    parts,
                }))
            }
        ),
        (upper(), ty(), prop::collection::vec(entry(), 0..4))
            .prop_map(|(name, of, entries)| ItemKind::Stream(StreamDef { name, of, entries })),
        (
            any::<bool>(),
            lower(),
            params(),
            ty(),
            prop::option::of(type_path()),
            prop::collection::vec(block(), 0..3),
            prop::collection::vec(
                prop_oneof![
                    let_stmt(expr()),
                    expr().prop_map(|value| Stmt::Return {
                        value,
                        span: span()
                    }),
                ],
                0..3
            )
        )
            .prop_map(|(agent, name, params, ret, fails, blocks, body)| {
                ItemKind::Node(Box::new(NodeDef {
                    kind: if agent {
                        NodeKind::Agent
                    } else {
                        NodeKind::Node
                    },
                    name,
                    params: params.into(),
                    ret,
                    fails,
                    blocks,
                    body,
                }))
            }),
    ]
}

fn item() -> impl Strategy<Value = Item> {
    (
        docs(),
        prop::collection::vec(attribute(), 0..2),
        item_kind(),
    )
        .prop_map(|(docs, attrs, kind)| Item {
            docs,
            attrs: attrs.into(),
            kind,
            span: span(),
        })
}

pub fn module() -> impl Strategy<Value = Module> {
    (docs(), prop::collection::vec(item(), 0..5)).prop_map(|(docs, items)| Module {
        docs,
        items,
        span: span(),
    })
}
