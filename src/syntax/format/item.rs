//! Printing modules, items and the blocks, entries and statements inside them.

use crate::span::Span;
use crate::syntax::ast::{
    Arg, Block, Body, CheckDef, Entry, Expr, ExprKind, Field, FnDef, Ident, Item, ItemKind, Module,
    NodeDef, NodeKind, Param, Path, Require, Stmt, UseItem, UseName, Variant,
};

use super::doc::{concat, Doc};
use super::printer::{author_blank, doc_comment, Located, Place, Printer};

/// A member of a node's body: its blocks, then its statements.
enum NodeMember<'t> {
    Block(&'t Block),
    Stmt(&'t Stmt),
}

impl Located for NodeMember<'_> {
    fn place(&self) -> Place {
        match self {
            NodeMember::Block(block) => block.place(),
            NodeMember::Stmt(stmt) => stmt.place(),
        }
    }
}

/// A member of a block expression: its statements, then its value.
pub enum BlockMember<'t> {
    Stmt(&'t Stmt),
    Value(&'t Expr),
}

impl Located for BlockMember<'_> {
    fn place(&self) -> Place {
        match self {
            BlockMember::Stmt(stmt) => stmt.place(),
            BlockMember::Value(expr) => expr.place(),
        }
    }
}

fn is_use(item: &Item) -> bool {
    matches!(item.kind, ItemKind::Use(_))
}

impl Printer<'_> {
    /// The whole file: module docs, items separated by one empty line (consecutive `use` items
    /// stay together unless the author separated them), then the comments after the last item.
    pub fn module(&mut self, module: &Module) -> Doc {
        let mut docs = Vec::new();
        if let Some(module_docs) = &module.docs {
            docs.push(Doc::HardLine);
            // The comments above the module docs, but not those inside the items: a `//!` line
            // written after an item is printed at the top, its neighbours stay where they are.
            let first_item = module.items.first().map_or(u32::MAX, |i| i.place().start);
            docs.push(self.comments_before(module_docs.span.start.min(first_item)));
            docs.push(doc_comment(Some(module_docs), "//!"));
        }
        let seq = self.vertical(
            &module.items,
            u32::MAX,
            "",
            |previous, next, author| match previous {
                None => false,
                Some(previous) => author || !(is_use(previous) && is_use(next)),
            },
            |p, item| p.item(item),
        );
        docs.push(seq.doc);
        Doc::Concat(docs)
    }

    fn item(&mut self, item: &Item) -> Doc {
        let mut docs = vec![doc_comment(item.docs.as_ref(), "///")];
        if item.docs.is_some() {
            docs.push(self.comments_before(item.span.start));
        }
        for (i, attr) in item.attrs.iter().enumerate() {
            docs.push(self.attribute(attr));
            docs.push(Doc::HardLine);
            // Comments between an attribute and what follows it go on their own lines here,
            // so that they do not drift into the item's first line (and back) on a re-format.
            let next = item.attrs.get(i + 1).map(|a| a.span.start);
            if let Some(next) = next.or_else(|| item_body_start(&item.kind)) {
                docs.push(self.comments_before(next));
            }
        }
        let end = item.span.end;
        let body = match &item.kind {
            ItemKind::Use(def) => self.use_item(def, end),
            ItemKind::TypeAlias(def) => {
                concat!["type ", ident(&def.name), " = ", self.ty(&def.ty), ";"]
            }
            ItemKind::Struct(def) => {
                let fields = self.vertical(&def.fields, end, ",", author_blank, |p, f| p.field(f));
                concat!["struct ", ident(&def.name), " ", Printer::braced(fields)]
            }
            ItemKind::Enum(def) => {
                let unit_only = def
                    .variants
                    .iter()
                    .all(|v| v.fields.is_none() && v.docs.is_none());
                let variants = if unit_only {
                    self.delimited("{", "}", true, &def.variants, end, |p, v| p.variant(v))
                } else {
                    let seq =
                        self.vertical(&def.variants, end, ",", author_blank, |p, v| p.variant(v));
                    Printer::braced(seq)
                };
                concat!["enum ", ident(&def.name), " ", variants]
            }
            ItemKind::Errors(def) => {
                let codes = if def.codes.iter().all(|c| c.docs.is_none()) {
                    self.delimited("{", "}", true, &def.codes, end, |_, c| ident(&c.name))
                } else {
                    let seq = self.vertical(&def.codes, end, ",", author_blank, |p, c| {
                        concat![
                            doc_comment(c.docs.as_ref(), "///"),
                            p.comments_before(c.span.start),
                            ident(&c.name)
                        ]
                    });
                    Printer::braced(seq)
                };
                concat!["errors ", ident(&def.name), " ", codes]
            }
            ItemKind::Fn(def) => self.fn_item(def, end),
            ItemKind::Check(def) => self.check_item(def, end),
            ItemKind::Builder(def) => {
                let header = concat![
                    "builder ",
                    ident(&def.name),
                    self.params(&def.name, &def.params, def.ret.span().start),
                    " -> ",
                    self.ty(&def.ret),
                ];
                // Parts are written one per line without separators, as the spec writes them;
                // a comma stays only where the next part could otherwise continue this one.
                let mut next = def.parts.iter().skip(1);
                let parts = self.vertical(&def.parts, end, "", author_blank, |p, e| {
                    let part = p.expr(e);
                    match next.next() {
                        Some(following) if !starts_with_a_word(following) => concat![part, ","],
                        _ => part,
                    }
                });
                concat![Doc::group(header), " ", Printer::braced(parts)]
            }
            ItemKind::Stream(def) => {
                let entries =
                    self.vertical(&def.entries, end, ";", author_blank, |p, e| p.entry(e));
                concat![
                    "stream ",
                    ident(&def.name),
                    " of ",
                    self.ty(&def.of),
                    " ",
                    Printer::braced(entries)
                ]
            }
            ItemKind::Node(def) => self.node_item(def, end),
            ItemKind::Error => "".into(),
        };
        docs.push(body);
        Doc::Concat(docs)
    }

    fn use_item(&mut self, def: &UseItem, end: u32) -> Doc {
        let module = def.module.to_text();
        if let (false, [name]) = (def.braced, def.names.as_slice()) {
            let path = if module.is_empty() {
                use_name(name)
            } else {
                concat![module, "::", use_name(name)]
            };
            return concat!["use ", path, ";"];
        }
        let prefix = if module.is_empty() {
            "use ".to_owned()
        } else {
            format!("use {module}::")
        };
        let names = self.delimited("{", "}", false, &def.names, end, |_, n| use_name(n));
        concat![prefix, names, ";"]
    }

    fn field(&mut self, field: &Field) -> Doc {
        let mut docs = vec![doc_comment(field.docs.as_ref(), "///")];
        if field.docs.is_some() {
            docs.push(self.comments_before(field.span().start));
        }
        docs.push(ident(&field.name));
        docs.push(": ".into());
        docs.push(self.ty(&field.ty));
        if let Some(default) = &field.default {
            docs.push(" = ".into());
            docs.push(self.expr(default));
        }
        Doc::Concat(docs)
    }

    fn variant(&mut self, variant: &Variant) -> Doc {
        let mut docs = vec![doc_comment(variant.docs.as_ref(), "///")];
        if variant.docs.is_some() {
            docs.push(self.comments_before(variant.span.start));
        }
        for attr in &variant.attrs {
            docs.push(self.attribute(attr));
            docs.push(" ".into());
        }
        docs.push(ident(&variant.name));
        if let Some(fields) = &variant.fields {
            docs.push(" ".into());
            let end = variant.span.end;
            docs.push(self.delimited("{", "}", true, fields, end, |p, f| p.field(f)));
        }
        Doc::Concat(docs)
    }

    /// `(a: T, b: U)`; `limit` is where the list ends at the latest (the next thing after it).
    fn params(&mut self, name: &Ident, params: &[Param], limit: u32) -> Doc {
        let from = params.last().map_or(name.span.end, |p| p.span().end);
        let close = self.comments.closing_paren(from).map_or(limit, |at| at + 1);
        self.delimited("(", ")", false, params, close, |p, param| {
            concat![ident(&param.name), ": ", p.ty(&param.ty)]
        })
    }

    fn fn_item(&mut self, def: &FnDef, end: u32) -> Doc {
        let keyword = if def.is_extern { "extern fn " } else { "fn " };
        let header = concat![
            keyword,
            ident(&def.name),
            self.params(&def.name, &def.params, def.ret.span().start),
            " -> ",
            self.ty(&def.ret),
        ];
        match &def.body {
            None => concat![Doc::group(header), ";"],
            Some(Body::Parsed(body)) => {
                concat![Doc::group(header), " ", self.body_block(body, end)]
            }
            Some(Body::Deferred(span)) => concat![Doc::group(header), " ", self.written(*span)],
        }
    }

    /// A body the parse deferred ([`Body::Deferred`]), as written: no parse the formatter
    /// makes itself defers one ([`crate::syntax::parse`]), and text as written loses nothing.
    fn written(&self, span: Span) -> Doc {
        let source = self.comments.source();
        Doc::text(
            source
                .get(span.start as usize..span.end as usize)
                .unwrap_or(""),
        )
    }

    fn check_item(&mut self, def: &CheckDef, end: u32) -> Doc {
        let keyword = if def.is_extern {
            "extern check "
        } else {
            "check "
        };
        let limit = def
            .fails
            .as_ref()
            .map(|f| f.span().start)
            .or_else(|| match def.body.as_ref()? {
                Body::Parsed(requires) => requires.first().map(|r| r.span.start),
                Body::Deferred(span) => Some(span.start),
            })
            .unwrap_or(end);
        let mut header = vec![
            keyword.into(),
            ident(&def.name),
            self.params(&def.name, &def.params, limit),
        ];
        if let Some(fails) = &def.fails {
            header.push(" fails ".into());
            header.push(path(fails));
        }
        let header = Doc::group(Doc::Concat(header));
        match &def.body {
            None => concat![header, ";"],
            Some(Body::Parsed(requires)) => {
                let seq = self.vertical(requires, end, ";", author_blank, |p, r| p.require(r));
                concat![header, " ", Printer::braced(seq)]
            }
            Some(Body::Deferred(span)) => concat![header, " ", self.written(*span)],
        }
    }

    /// `require COND else CODE "message"` on one line when it fits; otherwise the `else` part
    /// goes to the next line, indented, after a condition that fits on its own line, or stays
    /// on the last line of a condition that breaks (`) else code "…";`, as rustfmt's `let else`).
    fn require(&mut self, require: &Require) -> Doc {
        let mut otherwise = vec!["else ".into(), ident(&require.code)];
        if let Some(message) = &require.message {
            otherwise.push(" ".into());
            otherwise.push(super::literal::literal(message).into());
        }
        let otherwise = Doc::Concat(otherwise);
        Doc::group(concat![
            "require ",
            Doc::group_then(
                self.expr(&require.cond),
                Doc::nest(concat![Doc::Line, otherwise.clone()]),
                concat![" ", otherwise],
            ),
        ])
    }

    fn node_item(&mut self, def: &NodeDef, end: u32) -> Doc {
        let keyword = match def.kind {
            NodeKind::Node => "node ",
            NodeKind::Agent => "agent ",
        };
        let mut header = vec![
            keyword.into(),
            ident(&def.name),
            self.params(&def.name, &def.params, def.ret.span().start),
            " -> ".into(),
            self.ty(&def.ret),
        ];
        if let Some(fails) = &def.fails {
            header.push(" fails ".into());
            header.push(path(fails));
        }
        // The tree keeps blocks and statements apart; print them in the order they were written.
        let mut members: Vec<NodeMember> = def
            .blocks
            .iter()
            .map(NodeMember::Block)
            .chain(def.body.iter().map(NodeMember::Stmt))
            .collect();
        members.sort_by_key(|m| m.place().start);
        let seq = self.vertical(&members, end, "", author_blank, |p, member| match member {
            NodeMember::Block(block) => p.block(block),
            NodeMember::Stmt(stmt) => concat![p.stmt(stmt), ";"],
        });
        concat![Doc::group(Doc::Concat(header)), " ", Printer::braced(seq)]
    }

    fn block(&mut self, block: &Block) -> Doc {
        let end = block.span.end;
        let entries = self.vertical(&block.entries, end, ";", author_blank, |p, e| p.entry(e));
        concat![ident(&block.name), " ", Printer::braced(entries)]
    }

    fn entry(&mut self, entry: &Entry) -> Doc {
        let key = if entry.colon {
            format!("{}:", entry.key.name)
        } else {
            entry.key.name.to_string()
        };
        if entry.args.is_empty() {
            return key.into();
        }
        let mut args = Vec::new();
        for (i, arg) in entry.args.iter().enumerate() {
            if i > 0 {
                args.push(",".into());
            }
            args.push(Doc::Line);
            args.push(self.arg(arg));
        }
        Doc::group(concat![key, Doc::nest(Doc::Concat(args))])
    }

    fn arg(&mut self, arg: &Arg) -> Doc {
        match &arg.qualifier {
            None => self.expr(&arg.value),
            Some(qualifier) => concat![
                self.expr(&arg.value),
                " ",
                super::literal::literal(qualifier)
            ],
        }
    }

    /// A statement without its `;`.
    pub fn stmt(&mut self, stmt: &Stmt) -> Doc {
        match stmt {
            Stmt::Let {
                name, ty, value, ..
            } => {
                let mut docs = vec!["let ".into(), ident(name)];
                if let Some(ty) = ty {
                    docs.push(": ".into());
                    docs.push(self.ty(ty));
                }
                docs.push(" = ".into());
                docs.push(self.expr(value));
                Doc::Concat(docs)
            }
            Stmt::Return { value, .. } => concat!["return ", self.expr(value)],
        }
    }

    /// A `fn` body: always `{`, one statement per line, the value, `}`.
    fn body_block(&mut self, body: &Expr, end: u32) -> Doc {
        match &body.kind {
            ExprKind::Block { stmts, value } => self.block_lines(stmts, value, body.span.end),
            _ => {
                let seq =
                    self.vertical(std::slice::from_ref(body), end, "", author_blank, |p, e| {
                        p.expr(e)
                    });
                Printer::braced(seq)
            }
        }
    }

    /// `{ stmt; … value }` with one member per line.
    pub fn block_lines(&mut self, stmts: &[Stmt], value: &Expr, end: u32) -> Doc {
        let members: Vec<BlockMember> = stmts
            .iter()
            .map(BlockMember::Stmt)
            .chain(std::iter::once(BlockMember::Value(value)))
            .collect();
        let seq = self.vertical(&members, end, "", author_blank, |p, member| match member {
            BlockMember::Stmt(stmt) => concat![p.stmt(stmt), ";"],
            BlockMember::Value(value) => p.expr(value),
        });
        Printer::braced(seq)
    }
}

/// Whether `expr`'s first token is a name or a literal, which no expression before it can
/// take as its own continuation: then a `builder`'s parts need no separator between them (the
/// grammar accepts whitespace, `,` or `;`). A part opening with `(`, `[`, `{`, `-`, `!` or `|`
/// could be read as the call, operand or operator of the part before it, so it keeps its comma.
fn starts_with_a_word(expr: &Expr) -> bool {
    match &expr.kind {
        ExprKind::Lit(_)
        | ExprKind::None
        | ExprKind::Some(_)
        | ExprKind::Path(_)
        | ExprKind::Call { .. }
        | ExprKind::StructLit { .. } => true,
        ExprKind::Field { base, .. } => starts_with_a_word(base),
        ExprKind::MethodCall { operands, .. } => ExprKind::method_operands(operands)
            .is_some_and(|(receiver, _)| starts_with_a_word(receiver)),
        ExprKind::Binary { lhs, .. } => starts_with_a_word(lhs),
        ExprKind::List(_)
        | ExprKind::Paren(_)
        | ExprKind::Block { .. }
        | ExprKind::If { .. }
        | ExprKind::Match { .. }
        | ExprKind::Unary { .. }
        | ExprKind::Closure { .. }
        | ExprKind::Error => false,
    }
}

pub fn ident(ident: &Ident) -> Doc {
    Doc::text(ident.name.clone())
}

pub fn path(path: &Path) -> Doc {
    Doc::text(path.to_text())
}

fn use_name(name: &UseName) -> Doc {
    match &name.alias {
        None => ident(&name.name),
        Some(alias) => concat![ident(&name.name), " as ", ident(alias)],
    }
}

/// Where an item's own text starts after its attributes: the start of its name (or, for `use`,
/// of its module path). Comments between the keyword and the name are rare and stay put.
fn item_body_start(kind: &ItemKind) -> Option<u32> {
    match kind {
        ItemKind::Use(def) => Some(def.module.span().start),
        other => other.name().map(|name| name.span.start),
    }
}
