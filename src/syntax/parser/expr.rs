//! Grammar of names, literals, types, expressions and patterns (spec §3, §5).
//!
//! Precedence, loosest first: `||`, `&&`, comparisons (non-associative), `+ -`, `* / %`,
//! prefix `! -`, postfix `.field` / `.method(args)`. Binary levels are left folds, so nothing
//! backtracks more than one token.

use chumsky::prelude::*;

use super::{Ctx, Exact, Extra, Fail, In};
use crate::syntax::ast::*;
use crate::syntax::error::SyntaxError;
use crate::syntax::lexer::TokenSpan;
use crate::syntax::token::{unescape, Rate, Token, UnitValue};

/// A parser of `O` over the token slice, type-erased to keep compile times sane.
pub type P<'tok, 'src, O, E> = Boxed<'tok, 'tok, In<'tok, 'src>, O, Extra<E>>;

/// A name. Not boxed, unlike most rules: it is the most frequent leaf, and inlined it costs one
/// token match rather than a dynamic call.
pub fn ident<'tok, 'src: 'tok, E: Fail<'tok, 'src>>(
    cx: Ctx<'src>,
) -> impl Parser<'tok, In<'tok, 'src>, Ident, Extra<E>> + Clone {
    select! { Token::Ident(name) = e => Ident { name: name.into(), span: cx.span(e.span()) } }
        .labelled("a name")
}

/// A block entry's key: a name or a keyword (`check not_blank;`, `builder parts;`).
pub fn key<'tok, 'src: 'tok, E: Fail<'tok, 'src>>(cx: Ctx<'src>) -> P<'tok, 'src, Ident, E> {
    any()
        .filter(|t: &Token<'src>| matches!(t, Token::Ident(_)) || t.keyword_text().is_some())
        .map_with(move |t: Token<'src>, e| Ident {
            name: match t {
                Token::Ident(name) => name.into(),
                other => other.symbol().into(),
            },
            span: cx.span(e.span()),
        })
        .labelled("a key")
        .boxed()
}

pub fn path<'tok, 'src: 'tok, E: Fail<'tok, 'src>>(cx: Ctx<'src>) -> P<'tok, 'src, Path, E> {
    ident(cx)
        .separated_by(just(Token::ColonColon))
        .at_least(1)
        .collect::<Segments>()
        // The path's span is its segments' (see `Path::span`).
        .map(|segments| Path { segments })
        .labelled("a path")
        .boxed()
}

fn is_currency(name: &str) -> bool {
    Currency::new(name).is_some()
}

/// Every literal but money.
fn plain_literal<'tok, 'src: 'tok, E: Fail<'tok, 'src>>(
    cx: Ctx<'src>,
) -> P<'tok, 'src, Literal, E> {
    select! {
        Token::Int(value) => LitKind::Int(value),
        Token::Float(text) => float(text),
        Token::Unit(UnitValue::Duration(value, unit)) => LitKind::Duration { value, unit },
        Token::Unit(UnitValue::Size(value, unit)) => LitKind::Size { value, unit },
        Token::Rate(Rate { count, per }) => LitKind::Rate { count, per },
        // The lexer reported bad escapes; the text as written stands in for the value.
        Token::Str(body) => LitKind::Str {
            value: unescape(body).unwrap_or_else(|_| body.to_owned()).into(),
            raw: None,
        },
        Token::RawStr(raw) => LitKind::Str { value: raw.body().into(), raw: Some(raw.hashes()) },
        Token::True => LitKind::Bool(true),
        Token::False => LitKind::Bool(false),
    }
    .map_with(move |kind, e| Literal {
        kind,
        span: cx.span(e.span()),
    })
    .boxed()
}

fn float(text: &str) -> LitKind {
    LitKind::Float {
        text: text.replace('_', "").into(),
    }
}

/// Any literal; `0.05 EUR` (a number, then three uppercase letters) is money.
pub fn literal<'tok, 'src: 'tok, E: Fail<'tok, 'src>>(cx: Ctx<'src>) -> P<'tok, 'src, Literal, E> {
    let number = select! { Token::Int(_) => (), Token::Float(_) => () }.map_with(|_, e| e.span());
    // `XXX`, ISO 4217's "no currency", never stands in: the guard lets only codes through.
    let currency = select! { Token::Ident(name) if is_currency(name) => Currency::new(name).unwrap_or_default() };
    let money = number
        .then(currency)
        .map_with(move |(amount, currency), e| Literal {
            kind: LitKind::Money {
                amount: cx.text(amount).replace('_', "").into(),
                currency,
            },
            span: cx.span(e.span()),
        });
    money.or(plain_literal(cx)).labelled("a literal").boxed()
}

/// `@name` or `@name(args)`.
pub fn attribute<'tok, 'src: 'tok, E: Fail<'tok, 'src>>(
    cx: Ctx<'src>,
    expr: P<'tok, 'src, Expr, E>,
) -> P<'tok, 'src, Attribute, E> {
    just(Token::At)
        .ignore_then(ident(cx))
        .then(
            expr.separated_by(just(Token::Comma))
                .allow_trailing()
                .collect::<Exact<_>>()
                .map(Exact::into_vec)
                .delimited_by(just(Token::LParen), just(Token::RParen))
                .or_not(),
        )
        .map_with(move |(name, args), e| Attribute {
            name,
            args: args.unwrap_or_default(),
            span: cx.span(e.span()),
        })
        .labelled("an attribute")
        .boxed()
}

/// `Name`, `a::Name<args>`, followed by attributes.
pub fn type_expr<'tok, 'src: 'tok, E: Fail<'tok, 'src>>(
    cx: Ctx<'src>,
    expr: P<'tok, 'src, Expr, E>,
) -> P<'tok, 'src, TypeExpr, E> {
    let attrs = attribute(cx, expr)
        .repeated()
        .collect::<Exact<_>>()
        .map(|attrs| Attrs::from(attrs.into_vec()))
        .boxed();
    recursive(move |ty| {
        let number = select! {
            Token::Int(value) => LitKind::Int(value),
            Token::Float(text) => float(text),
            Token::Unit(UnitValue::Size(value, unit)) => LitKind::Size { value, unit },
            Token::Unit(UnitValue::Duration(value, unit)) => LitKind::Duration { value, unit },
        }
        .map_with(move |kind, e| Literal {
            kind,
            span: cx.span(e.span()),
        });
        let bound = just(Token::Minus)
            .or_not()
            .then(number)
            .map_with(move |(minus, lit), e| Bound {
                negative: minus.is_some(),
                lit,
                start: cx.span(e.span()).start,
            })
            .boxed();
        let range_op = just(Token::DotDotEq)
            .to(true)
            .or(just(Token::DotDot).to(false));
        let range = bound
            .clone()
            .or_not()
            .then(range_op)
            .then(bound.clone().or_not())
            // `..` alone bounds nothing.
            .filter(|((start, _), end)| start.is_some() || end.is_some())
            .map_with(move |((start, inclusive), end), e| RangeArg {
                start,
                end,
                inclusive,
                span: cx.span(e.span()),
            });
        let error_arg = just(Token::Error).map_with(move |_, e| {
            let span = cx.span(e.span());
            TypeArg::Type(TypeExpr {
                kind: TypeKind::Error { span },
                attrs: Attrs::default(),
                end: span.end,
            })
        });
        let arg = choice((
            range.map(|r| TypeArg::Range(Box::new(r))),
            bound.map(TypeArg::Bound),
            ty.map(TypeArg::Type),
            error_arg,
        ))
        .labelled("a type argument");
        let args = arg
            .separated_by(just(Token::Comma))
            .allow_trailing()
            .collect::<Exact<_>>()
            .map(Exact::into_boxed)
            .delimited_by(just(Token::Lt), just(Token::Gt))
            .or_not()
            .map(Option::unwrap_or_default);
        let named = path(cx)
            .then(args)
            .map(|(path, args)| TypeKind::Named { path, args });
        let error = just(Token::Error).map_with(move |_, e| TypeKind::Error {
            span: cx.span(e.span()),
        });
        named
            .or(error)
            .map_with(move |kind, e| (kind, cx.span(e.span())))
            .then(attrs.clone())
            // The start is the path's (or the error's own): see `TypeExpr::span`.
            .map(|((kind, span), attrs)| TypeExpr {
                kind,
                attrs,
                end: span.end,
            })
            .labelled("a type")
    })
    .boxed()
}

fn expr_at(kind: ExprKind, span: crate::span::Span) -> Expr {
    Expr { kind, span }
}

/// The parsers that both items and expressions need, built once.
pub struct ExprParsers<'tok, 'src: 'tok, E: Fail<'tok, 'src>> {
    pub expr: P<'tok, 'src, Expr, E>,
    pub ty: P<'tok, 'src, TypeExpr, E>,
    pub literal: P<'tok, 'src, Literal, E>,
    pub let_stmt: P<'tok, 'src, Stmt, E>,
    pub block: P<'tok, 'src, Expr, E>,
}

/// Builds the expression grammar, with types (which need expressions for their attributes).
pub fn expr_parsers<'tok, 'src: 'tok, E: Fail<'tok, 'src>>(
    cx: Ctx<'src>,
) -> ExprParsers<'tok, 'src, E> {
    // `recursive` rather than `Recursive::declare`: the grammar refers to itself through a weak
    // handle, while a declared parser holds a strong one to itself, a reference cycle that
    // leaked the whole expression grammar on every build (every module, every template tag,
    // every keystroke in the language server). The parsers that the items also need are built
    // inside and handed out through `shared`.
    let mut shared = None;
    let expr = recursive(|expr| {
        let expr_p: P<'tok, 'src, Expr, E> = expr.boxed();
        let ty = type_expr(cx, expr_p.clone());
        let literal = literal(cx);
        let ident = ident(cx);
        let path = path(cx);

        let args = expr_p
            .clone()
            .separated_by(just(Token::Comma))
            .allow_trailing()
            .collect::<Exact<_>>()
            .map(Exact::into_vec)
            .delimited_by(just(Token::LParen), just(Token::RParen))
            .recover_with(via_parser(super::closed_group(
                Token::LParen,
                Token::RParen,
                [
                    (Token::LBrace, Token::RBrace),
                    (Token::LBracket, Token::RBracket),
                ],
                move |s| vec![expr_at(ExprKind::Error, cx.span(s))],
            )))
            .labelled("arguments")
            .boxed();

        let let_stmt = just(Token::Let)
            .ignore_then(ident.clone())
            .then(just(Token::Colon).ignore_then(ty.clone()).or_not())
            .then_ignore(just(Token::Eq))
            .then(expr_p.clone())
            .then_ignore(just(Token::Semi))
            .map_with(move |((name, ty), value), e| Stmt::Let {
                name,
                ty,
                value,
                span: cx.span(e.span()),
            })
            .labelled("a `let` statement")
            .as_context()
            .boxed();

        // Junk after a block's value (`{ a + * 2 }`) is skipped up to the block's `}`, so the
        // block still ends where it should and errors found inside it are kept (a failed block
        // would drop them); such a block becomes `ExprKind::Error`, as before.
        let close = just(Token::RBrace).to(true).recover_with(via_parser(
            super::brace_ahead()
                .ignore_then(none_of([Token::RBrace]))
                .rewind()
                .ignore_then(
                    super::balanced()
                        .or(none_of([Token::RBrace]).ignored())
                        .repeated()
                        .at_least(1),
                )
                .then_ignore(just(Token::RBrace))
                .to(false),
        ));
        let block = just(Token::LBrace)
            .ignore_then(
                let_stmt
                    .clone()
                    .repeated()
                    .collect::<Exact<_>>()
                    .map(Exact::into_vec),
            )
            .then(expr_p.clone())
            .then(close)
            .map_with(move |((stmts, value), closed), e| {
                let kind = match closed {
                    true => ExprKind::Block {
                        stmts,
                        value: Box::new(value),
                    },
                    false => ExprKind::Error,
                };
                expr_at(kind, cx.span(e.span()))
            })
            .recover_with(via_parser(super::closed_group(
                Token::LBrace,
                Token::RBrace,
                [
                    (Token::LParen, Token::RParen),
                    (Token::LBracket, Token::RBracket),
                ],
                move |s| expr_at(ExprKind::Error, cx.span(s)),
            )))
            .labelled("a block")
            .boxed();

        let if_expr = recursive(|if_expr| {
            just(Token::If)
                .map_with(|_, e| e.span())
                .then(expr_p.clone())
                .then(block.clone())
                .then(
                    just(Token::Else)
                        .ignore_then(if_expr.or(block.clone()))
                        .or_not(),
                )
                .validate(
                    move |(((if_span, cond), then_branch), else_branch), e, emitter| {
                        let else_branch = else_branch.unwrap_or_else(|| {
                            let end = e.span().end;
                            let at = TokenSpan::from(end..end);
                            emitter.emit(E::custom(
                                at,
                                SyntaxError::MissingElse {
                                    if_span: cx.span(if_span),
                                    at: cx.span(at),
                                },
                            ));
                            expr_at(ExprKind::Error, cx.span(at))
                        });
                        expr_at(
                            ExprKind::If {
                                cond: Box::new(cond),
                                then_branch: Box::new(then_branch),
                                else_branch: Box::new(else_branch),
                            },
                            cx.span(e.span()),
                        )
                    },
                )
        })
        .boxed();

        let pattern = pattern(cx, literal.clone());
        let arm = pattern
            .then_ignore(just(Token::FatArrow))
            .then(expr_p.clone())
            .map_with(move |(pattern, body), e| MatchArm {
                pattern,
                body,
                span: cx.span(e.span()),
            })
            .labelled("a match arm")
            .as_context();
        let match_expr = just(Token::Match)
            .ignore_then(expr_p.clone())
            .then(
                arm.separated_by(just(Token::Comma))
                    .allow_trailing()
                    .collect::<Exact<_>>()
                    .map(Exact::into_vec)
                    .delimited_by(just(Token::LBrace), just(Token::RBrace))
                    .map(Some)
                    .recover_with(via_parser(super::closed_group(
                        Token::LBrace,
                        Token::RBrace,
                        [
                            (Token::LParen, Token::RParen),
                            (Token::LBracket, Token::RBracket),
                        ],
                        |_| None,
                    ))),
            )
            .map_with(move |(scrutinee, arms), e| {
                let kind = match arms {
                    Some(arms) => ExprKind::Match {
                        scrutinee: Box::new(scrutinee),
                        arms,
                    },
                    None => ExprKind::Error,
                };
                expr_at(kind, cx.span(e.span()))
            })
            .boxed();

        let closure = ident
            .clone()
            .separated_by(just(Token::Comma))
            .collect::<Exact<_>>()
            .map(Exact::into_vec)
            .delimited_by(just(Token::Pipe), just(Token::Pipe))
            .then(expr_p.clone())
            .map(|(params, body)| ExprKind::Closure {
                params,
                body: Box::new(body),
            });

        let field_init = ident
            .clone()
            .then(just(Token::Colon).ignore_then(expr_p.clone()).or_not())
            .map_with(move |(name, value), e| FieldInit {
                name,
                value,
                span: cx.span(e.span()),
            })
            .labelled("a field");
        let struct_body = field_init
            .separated_by(just(Token::Comma))
            .allow_trailing()
            .collect::<Exact<_>>()
            .map(Exact::into_vec)
            .then(
                just(Token::DotDot)
                    .ignore_then(expr_p.clone())
                    .then_ignore(just(Token::Comma).or_not())
                    .or_not(),
            )
            .delimited_by(just(Token::LBrace), just(Token::RBrace));
        // Only `Upper { … }` opens a struct literal: `if c { … }` stays unambiguous. The test
        // looks ahead over the raw tokens first, so that the common case, a path that opens no
        // struct literal, is not built (and its names allocated) twice.
        let name = select! { Token::Ident(name) => name };
        let opens_struct_lit = name
            .foldl(
                just(Token::ColonColon).ignore_then(name).repeated(),
                |_, last| last,
            )
            .filter(|last: &&str| last.starts_with(|c: char| c.is_ascii_uppercase()))
            .then(just(Token::LBrace))
            .rewind();
        let struct_lit = opens_struct_lit
            .ignore_then(path.clone())
            .then(struct_body)
            .map(|(path, (fields, base))| ExprKind::StructLit {
                path: Box::new(path),
                fields: Vec::into_boxed_slice(fields),
                base: base.map(Box::new),
            });
        let path_or_call =
            path.clone()
                .then(args.clone().or_not())
                .map(|(callee, args)| match args {
                    Some(args) => ExprKind::Call {
                        callee: Box::new(callee),
                        args: args.into_boxed_slice(),
                    },
                    None => ExprKind::Path(callee),
                });
        let list = expr_p
            .clone()
            .separated_by(just(Token::Comma))
            .allow_trailing()
            .collect::<Exact<_>>()
            .map(Exact::into_vec)
            .delimited_by(just(Token::LBracket), just(Token::RBracket))
            .map(ExprKind::List)
            .recover_with(via_parser(super::closed_group(
                Token::LBracket,
                Token::RBracket,
                [
                    (Token::LParen, Token::RParen),
                    (Token::LBrace, Token::RBrace),
                ],
                |_| ExprKind::Error,
            )));
        let paren = expr_p
            .clone()
            .delimited_by(just(Token::LParen), just(Token::RParen))
            .map(|inner| ExprKind::Paren(Box::new(inner)))
            .recover_with(via_parser(super::closed_group(
                Token::LParen,
                Token::RParen,
                [
                    (Token::LBracket, Token::RBracket),
                    (Token::LBrace, Token::RBrace),
                ],
                |_| ExprKind::Error,
            )));
        let some = just(Token::Some)
            .ignore_then(
                expr_p
                    .clone()
                    .delimited_by(just(Token::LParen), just(Token::RParen)),
            )
            .map(|inner| ExprKind::Some(Box::new(inner)));

        // Every alternative starts with its own tokens, so the order only decides how many are
        // tried first: names (paths, calls, struct literals) are the most frequent atoms.
        let simple = choice((
            struct_lit,
            path_or_call,
            literal.clone().map(ExprKind::Lit),
            paren,
            list,
            just(Token::None).to(ExprKind::None),
            some,
            closure,
            just(Token::Error).to(ExprKind::Error),
        ))
        .map_with(move |kind, e| expr_at(kind, cx.span(e.span())));
        let atom = choice((simple, block.clone(), if_expr, match_expr))
            .labelled("an expression")
            .boxed();

        enum Postfix {
            Field(Ident),
            Method(Ident, Vec<Expr>),
        }
        let postfix = just(Token::Dot)
            .ignore_then(ident.clone())
            .then(args.or_not())
            .map(|(name, args)| match args {
                Some(args) => Postfix::Method(name, args),
                None => Postfix::Field(name),
            });
        let postfixed = atom.foldl_with(postfix.repeated(), move |base, op, e| {
            let kind = match op {
                Postfix::Field(name) => ExprKind::Field {
                    base: Box::new(base),
                    name,
                },
                Postfix::Method(method, args) => ExprKind::MethodCall {
                    method,
                    operands: std::iter::once(base).chain(args).collect(),
                },
            };
            expr_at(kind, cx.span(e.span()))
        });

        let prefix_op = choice((
            just(Token::Bang).to(UnaryOp::Not),
            just(Token::Minus).to(UnaryOp::Neg),
        ))
        .map_with(move |op, e| (op, cx.span(e.span())));
        let unary = prefix_op
            .repeated()
            .foldr(postfixed, |(op, op_span), operand: Expr| {
                let span = op_span.to(operand.span);
                expr_at(
                    ExprKind::Unary {
                        op,
                        operand: Box::new(operand),
                    },
                    span,
                )
            })
            .boxed();

        // Every binary operator is read by one token match, and the tree is built by precedence
        // afterwards ([`fold_binary`]): one level of the grammar instead of five nested folds, each
        // of which tried its own operators after every operand.
        let binary_op = select! {
            Token::OrOr => BinaryOp::Or,
            Token::AndAnd => BinaryOp::And,
            Token::EqEq => BinaryOp::Eq,
            Token::Ne => BinaryOp::Ne,
            Token::Lt => BinaryOp::Lt,
            Token::Le => BinaryOp::Le,
            Token::Gt => BinaryOp::Gt,
            Token::Ge => BinaryOp::Ge,
            Token::Plus => BinaryOp::Add,
            Token::Minus => BinaryOp::Sub,
            Token::Star => BinaryOp::Mul,
            Token::Slash => BinaryOp::Div,
            Token::Percent => BinaryOp::Rem,
        }
        .map_with(|op, e| (op, e.span()))
        .labelled("an operator");
        let binary = unary
            .clone()
            .then(binary_op.then(unary).repeated().collect::<Vec<_>>())
            .validate(move |(first, rest), _, emitter| {
                fold_binary(first, rest, |first_op, second_op| {
                    emitter.emit(E::custom(
                        second_op,
                        SyntaxError::ChainedComparison {
                            first: cx.span(first_op),
                            second: cx.span(second_op),
                        },
                    ))
                })
            });
        shared = Some((ty, literal, let_stmt, block));
        binary.labelled("an expression")
    })
    .boxed();
    // `recursive` calls its closure before it returns: `shared` is set whatever the input.
    let (ty, literal, let_stmt, block) = shared.expect("`recursive` runs its closure at once");
    ExprParsers {
        expr,
        ty,
        literal,
        let_stmt,
        block,
    }
}

/// Builds the tree of `first (op operand)*` by precedence ([`BinaryOp::precedence`]), every
/// level left-associative, with an operator-precedence stack (no recursion, however long the
/// chain). Comparisons do not associate: `a < b < c` is reported through `chained` with the
/// spans of its first two comparison operators, once per chain.
fn fold_binary(
    first: Expr,
    rest: Vec<((BinaryOp, TokenSpan), Expr)>,
    mut chained: impl FnMut(TokenSpan, TokenSpan),
) -> Expr {
    /// What an operand's last fold was, for the chained-comparison check.
    #[derive(Clone, Copy)]
    enum Last {
        Other,
        Comparison(TokenSpan),
        Reported,
    }
    fn reduce(
        operands: &mut Vec<(Expr, Last)>,
        (op, op_span): (BinaryOp, TokenSpan),
        chained: &mut impl FnMut(TokenSpan, TokenSpan),
    ) {
        let (Some((rhs, _)), Some((lhs, lhs_last))) = (operands.pop(), operands.pop()) else {
            return; // the stacks are kept in step: one more operand than operators
        };
        let last = match (op.precedence() == COMPARISON, lhs_last) {
            (false, _) => Last::Other,
            (true, Last::Comparison(first)) => {
                chained(first, op_span);
                Last::Reported
            }
            (true, Last::Reported) => Last::Reported,
            (true, Last::Other) => Last::Comparison(op_span),
        };
        let span = lhs.span.to(rhs.span);
        let kind = ExprKind::Binary {
            op,
            lhs: Box::new(lhs),
            rhs: Box::new(rhs),
        };
        operands.push((expr_at(kind, span), last));
    }
    const COMPARISON: u8 = 3;
    let Some((_, last)) = rest.last() else {
        return first;
    };
    let whole = first.span.to(last.span);
    let mut operands = vec![(first, Last::Other)];
    let mut operators: Vec<(BinaryOp, TokenSpan)> = Vec::new();
    for (op, operand) in rest {
        while let Some(&top) = operators.last() {
            if top.0.precedence() < op.0.precedence() {
                break;
            }
            operators.pop();
            reduce(&mut operands, top, &mut chained);
        }
        operators.push(op);
        operands.push((operand, Last::Other));
    }
    while let Some(top) = operators.pop() {
        reduce(&mut operands, top, &mut chained);
    }
    // One operand is left: each reduction took two and gave one back.
    match operands.pop() {
        Some((expr, _)) => expr,
        None => expr_at(ExprKind::Error, whole),
    }
}

/// `_`, `none`, `some(p)`, `name`, `variant { field, field: p, .. }`, literals, `a | b`.
fn pattern<'tok, 'src: 'tok, E: Fail<'tok, 'src>>(
    cx: Ctx<'src>,
    literal: P<'tok, 'src, Literal, E>,
) -> P<'tok, 'src, Pattern, E> {
    recursive(move |pattern| {
        let field = ident(cx)
            .then(just(Token::Colon).ignore_then(pattern.clone()).or_not())
            .map_with(move |(name, pattern), e| FieldPattern {
                name,
                pattern,
                span: cx.span(e.span()),
            });
        let fields = field
            .separated_by(just(Token::Comma))
            .allow_trailing()
            .collect::<Exact<_>>()
            .map(Exact::into_vec)
            .then(
                just(Token::DotDot)
                    .then_ignore(just(Token::Comma).or_not())
                    .or_not(),
            )
            .delimited_by(just(Token::LBrace), just(Token::RBrace));
        let variant = ident(cx)
            .then(fields)
            .map(|(name, (fields, rest))| PatternKind::Variant {
                name,
                fields,
                rest: rest.is_some(),
            });
        let single = choice((
            select! { Token::Ident("_") => PatternKind::Wildcard },
            just(Token::None).to(PatternKind::None),
            just(Token::Some)
                .ignore_then(
                    pattern
                        .clone()
                        .delimited_by(just(Token::LParen), just(Token::RParen)),
                )
                .map(|inner| PatternKind::Some(Box::new(inner))),
            variant,
            ident(cx).map(PatternKind::Name),
            literal.map(PatternKind::Lit),
        ))
        .map_with(move |kind, e| Pattern {
            kind,
            span: cx.span(e.span()),
        });
        single
            .separated_by(just(Token::Pipe))
            .at_least(1)
            .collect::<Exact<_>>()
            .map(Exact::into_vec)
            .map_with(move |mut alternatives, e| {
                if alternatives.len() == 1 {
                    if let Some(only) = alternatives.pop() {
                        return only;
                    }
                }
                Pattern {
                    kind: PatternKind::Or(alternatives),
                    span: cx.span(e.span()),
                }
            })
            .labelled("a pattern")
    })
    .boxed()
}
