//! Doc-comment attachment, a pass after parsing.
//!
//! The lexer keys every `///` block by the start offset of the token that follows it. An item,
//! field, variant or error code whose span starts at that offset receives the block; a block
//! that nothing receives is reported as `W0001` and dropped.

use std::collections::HashMap;

use crate::syntax::ast::{Doc, Field, ItemKind, Module};
use crate::syntax::error::SyntaxError;
use crate::syntax::lexer::DocBlock;

/// Attaches `blocks` to `module` and reports the blocks that document nothing.
pub fn attach(module: &mut Module, blocks: Vec<DocBlock>, errors: &mut Vec<SyntaxError>) {
    // foldhash: std's SipHash made this look-up per item, field and variant a hot spot.
    let mut by_offset: ByOffset = ByOffset::default();
    for block in blocks {
        match block.next_token {
            // Two blocks before one token cannot happen: a token ends a block.
            Some(offset) => {
                by_offset.insert(offset, block.doc);
            }
            None => errors.push(SyntaxError::DanglingDoc {
                span: block.doc.span,
            }),
        }
    }
    if by_offset.is_empty() {
        return;
    }
    for item in &mut module.items {
        item.docs = by_offset.remove(&item.span.start);
        match &mut item.kind {
            ItemKind::Struct(def) => attach_fields(&mut def.fields, &mut by_offset),
            ItemKind::Enum(def) => {
                for variant in &mut def.variants {
                    variant.docs = by_offset.remove(&variant.span.start);
                    if let Some(fields) = &mut variant.fields {
                        attach_fields(fields, &mut by_offset);
                    }
                }
            }
            ItemKind::Errors(def) => {
                for code in &mut def.codes {
                    code.docs = by_offset.remove(&code.span.start);
                }
            }
            _ => {}
        }
    }
    let mut dangling: Vec<Doc> = by_offset.into_values().collect();
    dangling.sort_by_key(|d| d.span.start);
    errors.extend(
        dangling
            .into_iter()
            .map(|doc| SyntaxError::DanglingDoc { span: doc.span }),
    );
}

type ByOffset = HashMap<u32, Doc, foldhash::fast::FixedState>;

fn attach_fields(fields: &mut [Field], by_offset: &mut ByOffset) {
    for field in fields {
        field.docs = by_offset.remove(&field.span().start);
    }
}
