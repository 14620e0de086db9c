//! Grammar of items (spec §1, §3, §5, §6, §7.1), with the recovery that keeps one broken item,
//! field or entry from hiding errors in the next ones.
//!
//! Recovery levels, innermost first: a broken expression inside `(…)`, `[…]` or `{…}` becomes
//! `ExprKind::Error`; a broken field, variant, error code or entry is skipped up to its `,` / `;`
//! (or the closing `}`); a broken item is skipped up to the next item keyword, skipping nested
//! `{…}` as a whole, and becomes `ItemKind::Error`. Every recovery consumes at least one token,
//! so no loop can stall.

use chumsky::prelude::*;

use super::expr::{attribute, expr_parsers, ident, key, path, ExprParsers, P};
use super::{balanced, Ctx, Exact, Fail};
use crate::allocator::without_slack;
use crate::syntax::ast::*;
use crate::syntax::token::Token;

/// Skips at least one token up to `sep` (consumed) or the closing `}` (not consumed).
fn skip_to<'tok, 'src: 'tok, E: Fail<'tok, 'src>>(sep: Token<'src>) -> P<'tok, 'src, (), E> {
    let stops = [sep, Token::RBrace, Token::RParen, Token::RBracket];
    // Look before skipping: at a closer or the end nothing is skipped, and trying to skip a
    // group there would add `(`, `[` and `{` to the expected tokens of the error reported
    // there.
    //
    // An opener still open at the end of the file, or a `{` ended by a closer of the wrong
    // kind, is skipped with all it holds: no closer in between can end this list, and parsed,
    // what follows it was read as this list's own items by each enclosing level in turn (120
    // levels left open: 2.1 s for 57 KB in a release build; found by `aelc-fuzz parse` and
    // `fmt`). A `(` or `[` ended by a wrong closer (`binding(; }`) is a slip inside one item:
    // it is skipped alone, and the list goes on after it.
    let skippable = none_of(stops).rewind().ignore_then(choice((
        super::unclosed_rest(),
        balanced(),
        none_of(stops).ignored(),
    )));
    choice((
        skippable
            .repeated()
            .at_least(1)
            .then(just(sep).or_not())
            .ignored(),
        just(sep).ignored(),
    ))
    .boxed()
}

/// `item sep item sep …` inside braces, where a broken item is skipped up to its separator.
/// With `optional_last`, the separator may be left out before the closing `}`.
fn recovering_list<'tok, 'src: 'tok, O: 'tok, E: Fail<'tok, 'src>>(
    item: P<'tok, 'src, O, E>,
    sep: Token<'src>,
    optional_last: bool,
) -> P<'tok, 'src, Vec<O>, E> {
    let end = if optional_last {
        just(sep)
            .ignored()
            .or(just(Token::RBrace).rewind().ignored())
            .boxed()
    } else {
        just(sep).ignored().boxed()
    };
    item.then_ignore(end)
        .map(Some)
        .recover_with(via_parser(skip_to(sep).map(|_| None)))
        .repeated()
        .collect::<Vec<Option<O>>>()
        .map(|items| without_slack(items.into_iter().flatten().collect()))
        .boxed()
}

fn braced<'tok, 'src: 'tok, O: 'tok, E: Fail<'tok, 'src>>(
    inner: P<'tok, 'src, Vec<O>, E>,
) -> P<'tok, 'src, Vec<O>, E> {
    inner
        .delimited_by(just(Token::LBrace), just(Token::RBrace))
        .boxed()
}

/// A check's `{ require …; … }`.
fn check_body<'tok, 'src: 'tok, E: Fail<'tok, 'src>>(
    cx: Ctx<'src>,
    parsers: &ExprParsers<'tok, 'src, E>,
) -> P<'tok, 'src, Vec<Require>, E> {
    let message = parsers
        .literal
        .clone()
        .filter(|lit: &Literal| matches!(lit.kind, LitKind::Str { .. }));
    let require = just(Token::Require)
        .ignore_then(parsers.expr.clone())
        .then_ignore(just(Token::Else))
        .then(ident(cx))
        .then(message.or_not())
        .map_with(move |((cond, code), message), e| Require {
            cond,
            code,
            message,
            span: cx.span(e.span()),
        })
        .labelled("a `require`")
        .as_context()
        .boxed();
    braced(recovering_list(require, Token::Semi, false))
}

/// A fn's or a check's body: `parsed`, or, when the context defers bodies, the span of its
/// balanced `{…}` ([`Body::Deferred`]), which sema parses later ([`super::parse_deferred`]).
fn body<'tok, 'src: 'tok, T: 'tok, E: Fail<'tok, 'src>>(
    cx: Ctx<'src>,
    parsed: P<'tok, 'src, T, E>,
) -> P<'tok, 'src, Body<T>, E> {
    if cx.defer_bodies {
        super::closed_group(
            Token::LBrace,
            Token::RBrace,
            [
                (Token::LParen, Token::RParen),
                (Token::LBracket, Token::RBracket),
            ],
            move |span| Body::Deferred(cx.span(span)),
        )
        .boxed()
    } else {
        parsed.map(Body::Parsed).boxed()
    }
}

/// The parsers of deferred bodies ([`super::parse_deferred`]): a fn's block and a check's
/// requirements, each up to the end of its input.
pub fn bodies<'tok, 'src: 'tok, E: Fail<'tok, 'src>>(
    cx: Ctx<'src>,
) -> (P<'tok, 'src, Expr, E>, P<'tok, 'src, Vec<Require>, E>) {
    let parsers = expr_parsers(cx);
    let check = check_body(cx, &parsers).then_ignore(end()).boxed();
    (parsers.block.then_ignore(end()).boxed(), check)
}

/// The item parser for a whole module.
pub fn module<'tok, 'src: 'tok, E: Fail<'tok, 'src>>(cx: Ctx<'src>) -> P<'tok, 'src, Vec<Item>, E> {
    let parsers = expr_parsers(cx);
    let expr = parsers.expr.clone();
    let ty = parsers.ty.clone();
    let ident = ident(cx);
    let path = path(cx);

    let param = ident
        .clone()
        .then_ignore(just(Token::Colon))
        .then(ty.clone())
        // The span runs from the name to the type's end or its attributes' (`Param::span`).
        .map(|(name, ty)| Param { name, ty })
        .labelled("a parameter");
    let params = param
        .separated_by(just(Token::Comma))
        .allow_trailing()
        .collect::<Exact<_>>()
        .map(Exact::into_boxed)
        .delimited_by(just(Token::LParen), just(Token::RParen))
        .labelled("parameters `(name: Type, …)`")
        .boxed();
    let ret = just(Token::Arrow).ignore_then(ty.clone()).boxed();
    let fails = just(Token::Fails)
        .ignore_then(path.clone())
        .or_not()
        .boxed();

    // use a::b::{C, D as E};  use a::b::c;
    let use_name = ident
        .clone()
        .then(
            select! { Token::Ident("as") => () }
                .ignore_then(ident.clone())
                .or_not(),
        )
        .map_with(move |(name, alias), e| UseName {
            name,
            alias,
            span: cx.span(e.span()),
        });
    let use_item = just(Token::Use)
        .ignore_then(
            ident
                .clone()
                .then_ignore(just(Token::ColonColon))
                .repeated()
                .at_least(1)
                .collect::<Exact<_>>()
                .map(Exact::into_vec),
        )
        .then(choice((
            use_name
                .clone()
                .separated_by(just(Token::Comma))
                .allow_trailing()
                .collect::<Exact<_>>()
                .map(Exact::into_vec)
                .delimited_by(just(Token::LBrace), just(Token::RBrace))
                .map(|names| (names, true)),
            use_name.map(|name| (vec![name], false)),
        )))
        .then_ignore(just(Token::Semi))
        .map(|(segments, (names, braced))| {
            ItemKind::Use(UseItem {
                module: Path::new(segments),
                names,
                braced,
            })
        })
        .labelled("use")
        .as_context();

    let type_alias = just(Token::Type)
        .ignore_then(ident.clone())
        .then_ignore(just(Token::Eq))
        .then(ty.clone())
        .then_ignore(just(Token::Semi))
        .map(|(name, ty)| ItemKind::TypeAlias(TypeAlias { name, ty }))
        .labelled("type alias")
        .as_context();

    let field = ident
        .clone()
        .then_ignore(just(Token::Colon))
        .then(ty.clone())
        .then(just(Token::Eq).ignore_then(expr.clone()).or_not())
        // The span runs from the name to the end of what came last (`Field::span`).
        .map(|((name, ty), default)| Field {
            docs: None,
            name,
            ty,
            default: default.map(Box::new),
        })
        .labelled("a field")
        .as_context()
        .boxed();
    let fields = braced(recovering_list(field, Token::Comma, true));

    let struct_item = just(Token::Struct)
        .ignore_then(ident.clone())
        .then(fields.clone())
        .map(|(name, fields)| ItemKind::Struct(StructDef { name, fields }))
        .labelled("struct")
        .as_context();

    let item_attrs = attribute(cx, expr.clone())
        .repeated()
        .collect::<Exact<_>>()
        .map(|attrs| Attrs::from(attrs.into_vec()))
        .boxed();
    let variant = item_attrs
        .clone()
        .then(ident.clone())
        .then(fields.clone().or_not())
        .map_with(move |((attrs, name), fields), e| Variant {
            docs: None,
            attrs,
            name,
            fields,
            span: cx.span(e.span()),
        })
        .labelled("a variant")
        .as_context()
        .boxed();
    let enum_item = just(Token::Enum)
        .ignore_then(ident.clone())
        .then(braced(recovering_list(variant, Token::Comma, true)))
        .map(|(name, variants)| ItemKind::Enum(EnumDef { name, variants }))
        .labelled("enum")
        .as_context();

    let error_code = ident
        .clone()
        .map_with(move |name, e| ErrorCode {
            docs: None,
            name,
            span: cx.span(e.span()),
        })
        .labelled("an error code")
        .boxed();
    let errors_item = just(Token::Errors)
        .ignore_then(ident.clone())
        .then(braced(recovering_list(error_code, Token::Comma, true)))
        .map(|(name, codes)| ItemKind::Errors(ErrorsDef { name, codes }))
        .labelled("errors")
        .as_context();

    let fn_head = ident.clone().then(params.clone()).then(ret.clone()).boxed();
    let fn_item = choice((
        just(Token::Extern)
            .ignore_then(just(Token::Fn))
            .ignore_then(fn_head.clone())
            .then_ignore(just(Token::Semi))
            .map(|((name, params), ret)| FnDef {
                is_extern: true,
                name,
                params,
                ret,
                body: None,
            }),
        // A `;` instead of the body parses, so that the checker can say what is missing
        // (E0410: write the body, or declare the fn `extern`).
        just(Token::Fn)
            .ignore_then(fn_head)
            .then(
                body(cx, parsers.block.clone().map(Box::new).boxed())
                    .map(Some)
                    .or(just(Token::Semi).to(None)),
            )
            .map(|(((name, params), ret), body)| FnDef {
                is_extern: false,
                name,
                params,
                ret,
                body,
            }),
    ))
    .map(ItemKind::Fn)
    .labelled("fn")
    .as_context();

    let check_head = ident
        .clone()
        .then(params.clone())
        .then(fails.clone())
        .boxed();
    let check_item = choice((
        just(Token::Extern)
            .ignore_then(just(Token::Check))
            .ignore_then(check_head.clone())
            .then_ignore(just(Token::Semi))
            .map(|((name, params), fails)| CheckDef {
                is_extern: true,
                name,
                params,
                fails,
                body: None,
            }),
        just(Token::Check)
            .ignore_then(check_head)
            .then(body(cx, check_body(cx, &parsers)))
            .map(|(((name, params), fails), body)| CheckDef {
                is_extern: false,
                name,
                params,
                fails,
                body: Some(body),
            }),
    ))
    .map(ItemKind::Check)
    .labelled("check")
    .as_context();

    let parts = expr
        .clone()
        .then_ignore(one_of([Token::Comma, Token::Semi]).or_not())
        .repeated()
        .collect::<Exact<_>>()
        .map(Exact::into_vec)
        .delimited_by(just(Token::LBrace), just(Token::RBrace))
        .recover_with(via_parser(super::closed_group(
            Token::LBrace,
            Token::RBrace,
            [
                (Token::LParen, Token::RParen),
                (Token::LBracket, Token::RBracket),
            ],
            move |s| {
                vec![Expr {
                    kind: ExprKind::Error,
                    span: cx.span(s),
                }]
            },
        )));
    let builder_item = just(Token::Builder)
        .ignore_then(ident.clone())
        .then(params.clone())
        .then(ret.clone())
        .then(parts)
        .map(|(((name, params), ret), parts)| {
            ItemKind::Builder(Box::new(BuilderDef {
                name,
                params,
                ret,
                parts,
            }))
        })
        .labelled("builder")
        .as_context();

    // key: arg, arg;   key arg;   key;
    let arg = expr
        .clone()
        .then(parsers.literal.clone().or_not())
        .map_with(move |(value, qualifier), e| Arg {
            value,
            qualifier: qualifier.map(Box::new),
            span: cx.span(e.span()),
        });
    let args = arg
        .separated_by(just(Token::Comma))
        .allow_trailing()
        .collect::<Exact<_>>()
        .map(Exact::into_vec)
        .boxed();
    let entry = key(cx)
        .then(just(Token::Colon).or_not())
        .then(args)
        .map_with(move |((key, colon), args), e| Entry {
            key,
            colon: colon.is_some(),
            args,
            span: cx.span(e.span()),
        })
        .labelled("an entry")
        .as_context()
        .boxed();
    let entries = braced(recovering_list(entry, Token::Semi, false));

    let stream_item = just(Token::Stream)
        .ignore_then(ident.clone())
        .then_ignore(select! { Token::Ident("of") => () }.labelled("`of`"))
        .then(ty.clone())
        .then(entries.clone())
        .map(|((name, of), entries)| ItemKind::Stream(StreamDef { name, of, entries }))
        .labelled("stream")
        .as_context();

    enum BodyPart {
        Block(Block),
        Stmt(Stmt),
    }
    let block = key(cx)
        .then(entries)
        .map_with(move |(name, entries), e| Block {
            name,
            entries,
            span: cx.span(e.span()),
        })
        .map(BodyPart::Block);
    let return_stmt = just(Token::Return)
        .ignore_then(expr.clone())
        .map_with(move |value, e| Stmt::Return {
            value,
            span: cx.span(e.span()),
        })
        .labelled("a `return` statement")
        .as_context();
    // `let` carries its own `;`; `return` and blocks get theirs from the list.
    let stmt = choice((
        parsers.let_stmt.clone().map(BodyPart::Stmt),
        return_stmt
            .then_ignore(just(Token::Semi))
            .map(BodyPart::Stmt),
    ));
    let body_part = choice((stmt, block))
        .labelled("a block or statement")
        .map(Some)
        .recover_with(via_parser(skip_to(Token::Semi).map(|_| None)));
    let node_body = body_part
        .repeated()
        .collect::<Vec<Option<BodyPart>>>()
        .delimited_by(just(Token::LBrace), just(Token::RBrace))
        .map(|parts| {
            let mut blocks = Vec::new();
            let mut body = Vec::new();
            for part in parts.into_iter().flatten() {
                match part {
                    BodyPart::Block(block) => blocks.push(block),
                    BodyPart::Stmt(stmt) => body.push(stmt),
                }
            }
            (without_slack(blocks), without_slack(body))
        });
    let node_kind = choice((
        just(Token::Node).to(NodeKind::Node),
        just(Token::Agent).to(NodeKind::Agent),
    ));
    let node_item = node_kind
        .then(ident.clone())
        .then(params.clone())
        .then(ret.clone())
        .then(fails.clone())
        .then(node_body)
        .map(|(((((kind, name), params), ret), fails), (blocks, body))| {
            ItemKind::Node(Box::new(NodeDef {
                kind,
                name,
                params,
                ret,
                fails,
                blocks,
                body,
            }))
        })
        .labelled("node")
        .as_context();

    let item_kind = choice((
        use_item,
        type_alias,
        struct_item,
        enum_item,
        errors_item,
        fn_item,
        check_item,
        builder_item,
        stream_item,
        node_item,
    ))
    .labelled("an item")
    .boxed();

    let item_start = choice((
        just(Token::Use),
        just(Token::Type),
        just(Token::Struct),
        just(Token::Enum),
        just(Token::Errors),
        just(Token::Fn),
        just(Token::Extern),
        just(Token::Check),
        just(Token::Node),
        just(Token::Agent),
        just(Token::Stream),
        just(Token::Builder),
    ))
    .ignored()
    // An attribute starts an item only as `@name`: skipped one at a time, each bare `@` of a
    // run was an item of its own with its own error (20,000 `@` took 0.2 s and 90 MB of
    // errors in a release build; found by `aelc-fuzz parse`).
    .or(just(Token::At).then(ident.clone()).ignored())
    .boxed();
    let skip_one = balanced().or(any().ignored()).boxed();
    // A run of attributes is skipped whole: skipped one token at a time, each of its `@`s
    // (an item start) began a new item that parsed the rest of the run again, and 1,600
    // attributes before an unclosed brace took 0.6 s (quadratic; found by `aelc-fuzz parse`).
    let attribute_run = attribute(cx, expr.clone()).repeated().at_least(1).boxed();
    let skip_item = attribute_run
        .or(skip_one.clone())
        .then(skip_one.and_is(item_start.not()).repeated())
        .map_with(move |_, e| Item {
            docs: None,
            attrs: Attrs::default(),
            kind: ItemKind::Error,
            span: cx.span(e.span()),
        });

    let item = item_attrs
        .then(item_kind)
        .map_with(move |(attrs, kind), e| Item {
            docs: None,
            attrs,
            kind,
            span: cx.span(e.span()),
        })
        .recover_with(via_parser(skip_item));

    item.repeated()
        .collect::<Exact<_>>()
        .map(Exact::into_vec)
        .then_ignore(end())
        .boxed()
}

/// One expression and nothing after it (prompt templates).
pub fn lone_expr<'tok, 'src: 'tok, E: Fail<'tok, 'src>>(cx: Ctx<'src>) -> P<'tok, 'src, Expr, E> {
    expr_parsers(cx).expr.then_ignore(end()).boxed()
}
