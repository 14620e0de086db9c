//! Grammars for constrained decoding: `grammar/<node>.gbnf` (llama.cpp) and
//! `grammar/<node>.lark` (llguidance), derived from a node's output type (issue 26).
//!
//! A grammar restricts what a local inference server may sample, so an answer that breaks a
//! bound the grammar expresses cannot be produced at all. The rule that keeps the grammar
//! honest: **every text it accepts is an answer step 2 of the pipeline accepts** (the decoder,
//! after the optional code fence) — up to the bounds listed in the file's header as not
//! expressed, which the pipeline still enforces. Where the grammar is stricter than the
//! decoder (fields in declared order, canonical numbers, bounded whitespace, …) the header
//! says so too; within those spellings, the grammar accepts every answer the decoder does.
//!
//! What is expressed: JSON syntax; string length as repetitions of JSON characters (an
//! unescaped character, a short escape, a `\u` escape, a surrogate pair as two — each one
//! character, as the decoder counts them); integer ranges as digit automata exact at both
//! edges ([`range`]); unit enums; data enums with their tag first; list and map minimums and
//! caps; optional and defaulted fields (absent, or `null` for an `Option`); map keys with
//! their bounds; media references ([`aelc_runtime::media`]); anchored `@pattern`s
//! ([`pattern`]); finite floats in their printers' spellings, and float ranges (one end or
//! two, of any magnitude), exact in fixed notation and in scientific notation with a negative
//! exponent, or past 10^16 a positive one ([`float`]); the `date`,
//! `uuid` and `date-time` formats exactly, `email` and `uri` as a sound subset ([`format`]); the
//! ```` ```json ```` fence. Sizes are linear in the type: every named type
//! is one rule, and a list item, map entry or optional-field chain used twice is named once.

mod expr;
mod float;
mod format;
#[cfg(test)]
mod matcher;
mod pattern;
mod range;
mod render;

use std::collections::BTreeMap;

use aelc_runtime::media::{content_type_prefix, MediaFieldKind, MEDIA_FIELDS, REF_PREFIX};
use aelc_runtime::ty::{
    limits, DefId, DefKind, FieldTy, FloatBound, FloatKind, FloatTy, IntTy, ListTy, MapTy, MediaTy,
    StrTy, Ty, TypeTable,
};

use self::expr::{Class, Grammar, G};
use crate::ir::{NodeIr, Program};

/// Most whitespace characters between two tokens (the decoder takes any amount; a model that
/// starts emitting spaces should not be able to go on for its whole token budget).
pub const MAX_WHITESPACE: u32 = 24;

/// Largest repetition count written into GBNF: llama.cpp expands `x{m,n}` into `n` rules, so
/// a `Str<16777216>` would not load. Longer strings repeat without an upper bound there, and
/// the header says so. Lark (llguidance) takes the exact count.
pub const GBNF_MAX_REPEAT: u32 = 10_000;

/// The header's sentence on how a float in an expressed range is spelled.
const FLOAT_RANGE_SPELLING: &str = "a float in a range is written in fixed notation with at most 21 digits before the point and 22 after it, or as `d.ddd…e-N` (a digit 1 to 9, at most 16 after the point, an exponent of at most 3 digits), or from 10^16 on as `d.ddd…e+N` (the `+` optional); in these spellings the grammar accepts exactly the numbers the decoder accepts";

/// The two grammar files of a node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeGrammars {
    pub gbnf: String,
    pub lark: String,
}

/// The grammars of `node`'s answer; `None` for a raw-mode node, whose answer is text.
pub fn node_grammars(program: &Program, node: &NodeIr) -> Option<NodeGrammars> {
    if node.output_stage.raw_parse.is_some() {
        return None;
    }
    let checks: Vec<&str> = node
        .output_stage
        .checks
        .iter()
        .filter_map(|id| program.checks.get(id.0 as usize))
        .map(|c| c.name.as_str())
        .collect();
    let build = |cap: Option<u32>| {
        let mut g = answer_grammar(&program.types, &node.output, cap);
        if !checks.is_empty() {
            g.not_expressed
                .insert(format!("the output checks: {}", checks.join(", ")));
        }
        g.not_expressed.insert(format!(
            "step 1's answer size limit ({} bytes)",
            node.config.max_answer
        ));
        g
    };
    Some(NodeGrammars {
        gbnf: render::gbnf(&build(Some(GBNF_MAX_REPEAT))),
        lark: render::lark(&build(None)),
    })
}

/// The GBNF grammar of one answer of type `ty` (for tests and tools).
pub fn gbnf_for(types: &TypeTable, ty: &Ty) -> String {
    render::gbnf(&answer_grammar(types, ty, Some(GBNF_MAX_REPEAT)))
}

/// The Lark grammar of one answer of type `ty` (for tests and tools).
pub fn lark_for(types: &TypeTable, ty: &Ty) -> String {
    render::lark(&answer_grammar(types, ty, None))
}

/// The grammar of an answer: one value of `ty`, with whitespace around it, optionally inside
/// one ```` ```json ```` (or ```` ``` ````) fence, as step 2 takes it
/// (`aelc_runtime::pipeline::strip_fence`). `cap` bounds repetition counts (GBNF).
fn answer_grammar(types: &TypeTable, ty: &Ty, cap: Option<u32>) -> Grammar {
    let mut b = Builder {
        types,
        cap,
        grammar: Grammar::default(),
        def_rules: BTreeMap::new(),
        pending: Vec::new(),
        anonymous: 0,
        int_rules: BTreeMap::new(),
        float_rules: BTreeMap::new(),
    };
    b.grammar
        .rules
        .push(("root".to_owned(), G::Seq(Vec::new())));
    let space = G::class(&[(' ', ' '), ('\t', '\t'), ('\n', '\n'), ('\r', '\r')]);
    // GBNF repeats the class up to the bound; llguidance takes no lexeme that matches nothing,
    // so its whitespace is an optional lexeme of one or more.
    let ws = if cap.is_some() {
        G::rep(space, 0, Some(MAX_WHITESPACE))
    } else {
        G::opt(G::token(G::rep(space, 1, Some(MAX_WHITESPACE))))
    };
    b.grammar.rules.push(("ws".to_owned(), ws));
    let value = b.value(ty);
    let value = b.share(value, "answer");
    while let Some((id, name)) = b.pending.pop() {
        let body = b.def_body(id, &name);
        b.grammar.rules.push((name, body));
    }
    let ws = || G::Rule("ws".to_owned());
    let fence = G::seq(vec![
        G::lit("```"),
        G::opt(G::lit("json")),
        G::lit("\n"),
        ws(),
        value.clone(),
        ws(),
        G::lit("```"),
    ]);
    if let Some(root) = b.grammar.rules.first_mut() {
        root.1 = G::seq(vec![ws(), G::Alt(vec![value, fence]), ws()]);
    }
    let stricter = &mut b.grammar.stricter;
    for sentence in [
        "object fields come in their declared order, a data enum's tag first (the decoder takes any order)",
        "numbers are spelled canonically: integers as plain digits (the decoder also takes `3.0` or `3e0`); floats as shortest-round-trip printers write them: at most 21 digits before the point and 22 after it, then an exponent of at most 2 digits, or one digit, at most 16 after the point and an exponent of at most 3 digits",
        "enum names, tags, field names and media-reference prefixes are spelled without escapes",
        "at most 24 whitespace characters between two tokens; the fence's info string is `json` or nothing",
    ] {
        stricter.insert(sentence.to_owned());
    }
    b.grammar
        .not_expressed
        .insert("the platform bounds: nesting at most 64 deep, at most 200,000 values".to_owned());
    b.grammar
}

struct Builder<'t> {
    types: &'t TypeTable,
    cap: Option<u32>,
    grammar: Grammar,
    /// The rule of each named type met so far.
    def_rules: BTreeMap<DefId, String>,
    /// Named types whose rule is still to be written.
    pending: Vec<(DefId, String)>,
    /// Counter of rules that name a shared piece (`item3`, `entry4`, …).
    anonymous: u32,
    /// The rule of each integer range met so far (a `u64` spelled out is 1 KB; a type with
    /// many counts would repeat it).
    int_rules: BTreeMap<(i128, i128), String>,
    /// The rule of each expressed float range met so far (several KB each: a struct of many
    /// scores in the same range names it once).
    float_rules: BTreeMap<FloatKey, String>,
}

/// A float range as a map key: whether it is an `f32`, then each end's bits and exclusiveness.
type FloatKey = (bool, Option<(u64, bool)>, Option<(u64, bool)>);

impl Builder<'_> {
    fn ws() -> G {
        G::Rule("ws".to_owned())
    }

    /// `inner` as a rule of its own when it is more than a name or literal, so using it twice
    /// does not copy it (which would grow nested types exponentially).
    fn share(&mut self, inner: G, what: &str) -> G {
        if matches!(inner, G::Rule(_) | G::Lit(_)) || inner.is_empty() {
            return inner;
        }
        self.anonymous += 1;
        let name = format!("{what}{}", self.anonymous);
        self.grammar.rules.push((name.clone(), inner));
        G::Rule(name)
    }

    /// A repetition count as this dialect can write it.
    fn capped(&mut self, max: u32, what: &str) -> Option<u32> {
        match self.cap {
            Some(cap) if max > cap => {
                self.grammar.not_expressed.insert(format!(
                    "{what} above {cap} (llama.cpp expands repetitions; the Lark grammar has the exact bound)"
                ));
                None
            }
            _ => Some(max),
        }
    }

    fn value(&mut self, ty: &Ty) -> G {
        match ty {
            Ty::Bool => G::Alt(vec![G::lit("true"), G::lit("false")]),
            Ty::Int(it) => self.int(it),
            Ty::Float(ft) => self.float(ft),
            Ty::Str(st) => self.string(st),
            Ty::List(lt) => self.list(lt),
            Ty::Map(mt) => self.map(mt),
            Ty::Option { some } => {
                let some = self.value(some);
                G::Alt(vec![G::lit("null"), some])
            }
            Ty::Ref { def } => self.def_rule(*def),
            Ty::Media(mt) => self.media(mt),
        }
    }

    fn def_rule(&mut self, id: DefId) -> G {
        if let Some(name) = self.def_rules.get(&id) {
            return G::Rule(name.clone());
        }
        let base: String = self
            .types
            .get(id)
            .map(|d| d.name.as_str())
            .unwrap_or("missing")
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_lowercase()
                } else {
                    '_'
                }
            })
            .collect();
        let name = format!("t{}_{base}", id.0);
        self.def_rules.insert(id, name.clone());
        self.pending.push((id, name.clone()));
        G::Rule(name)
    }

    fn def_body(&mut self, id: DefId, name: &str) -> G {
        let Some(def) = self.types.get(id) else {
            return never();
        };
        match &def.kind {
            DefKind::Struct { fields } => self.object(None, fields, name),
            DefKind::Enum { tag, variants } => {
                if variants.iter().all(|v| v.fields.is_none()) {
                    G::alt(variants.iter().map(|v| json_string_lit(&v.name)).collect())
                } else {
                    let arms = variants
                        .iter()
                        .enumerate()
                        .map(|(i, v)| {
                            let fields = v.fields.as_deref().unwrap_or_default();
                            self.object(Some((tag, &v.name)), fields, &format!("{name}_v{i}"))
                        })
                        .collect();
                    G::alt(arms)
                }
            }
            DefKind::Alias { ty } => self.value(ty),
        }
    }

    fn int(&mut self, it: &IntTy) -> G {
        let hi = if it.max_exclusive { it.max - 1 } else { it.max };
        self.int_range(it.min, hi)
    }

    /// The integers `lo..=hi`, as one rule per distinct range.
    fn int_range(&mut self, lo: i128, hi: i128) -> G {
        if let Some(name) = self.int_rules.get(&(lo, hi)) {
            return G::Rule(name.clone());
        }
        let token = range::int_range(lo, hi).map_or_else(never, G::token);
        let rule = self.share(token, "int");
        if let G::Rule(name) = &rule {
            self.int_rules.insert((lo, hi), name.clone());
        }
        rule
    }

    fn float(&mut self, ft: &FloatTy) -> G {
        if ft.min.is_some() || ft.max.is_some() {
            // A range with an end is spelled exactly, as one rule per range.
            let end = |b: Option<FloatBound>| b.map(|b| (b.value.to_bits(), b.exclusive));
            let key = (ft.kind == FloatKind::F32, end(ft.min), end(ft.max));
            if let Some(name) = self.float_rules.get(&key) {
                return G::Rule(name.clone());
            }
            if let Some(range) = float_range(ft) {
                self.grammar
                    .stricter
                    .insert(FLOAT_RANGE_SPELLING.to_owned());
                let rule = self.share(G::token(range), "float");
                if let G::Rule(name) = &rule {
                    self.float_rules.insert(key, name.clone());
                }
                return rule;
            }
            self.grammar
                .not_expressed
                .insert("float ranges with an end that is not finite (the grammar takes any number of the spelling)".to_owned());
        }
        // A minimum of zero or more rules out every negative number but `-0`, which the
        // bounds compare as 0: it stays when the minimum is an inclusive 0.
        let nonnegative = ft.min.is_some_and(|m| m.value >= 0.0);
        let spelled = float::float(ft.kind, nonnegative);
        if ft.min.is_some_and(|m| m.value == 0.0 && !m.exclusive) {
            return G::token(G::alt(vec![spelled, float::negative_zero()]));
        }
        G::token(spelled)
    }

    fn string(&mut self, st: &StrTy) -> G {
        if let Some(f) = st.format {
            match format::spelled(f, st.min, st.max) {
                Some(spelled) if st.pattern.is_none() => {
                    self.grammar.stricter.insert(format!(
                        "text of the format `{}` is spelled without escapes",
                        f.as_str()
                    ));
                    if let Some(covers) = spelled.covers {
                        self.grammar.stricter.insert(covers);
                    }
                    return string_token(spelled.content);
                }
                _ => {
                    self.grammar.not_expressed.insert(format!(
                        "the text format `{}` (the grammar takes any text of the right length)",
                        f.as_str()
                    ));
                }
            }
        }
        if let Some(p) = &st.pattern {
            if let Some(content) = pattern::translate(p, st.min, st.max) {
                self.grammar.stricter.insert(
                    "text with a translated @pattern is spelled with escapes only for `\"`, `\\` and control characters".to_owned(),
                );
                return G::token(G::seq(vec![G::lit("\""), content, G::lit("\"")]));
            }
            self.grammar.not_expressed.insert(format!(
                "the pattern `{p}` (not anchored at both ends, or its length is not bounded by the type; the grammar takes any text of the right length)"
            ));
        }
        let max = self.capped(st.max, "text lengths");
        let min = st.min.min(self.cap.unwrap_or(u32::MAX));
        if min < st.min {
            self.grammar.not_expressed.insert(format!(
                "text minimum lengths above {}",
                self.cap.unwrap_or(0)
            ));
        }
        string_token(G::rep(G::JsonChar, min, max))
    }

    /// `open item (, item)* close` with `min..=max` items; `item` is named once.
    fn sequence(&mut self, open: &str, close: &str, item: G, min: u32, max: u32, what: &str) -> G {
        let ws = Builder::ws;
        if max == 0 {
            return G::seq(vec![G::lit(open), ws(), G::lit(close)]);
        }
        let item = self.share(item, what);
        let more_max = self.capped(max - 1, "list and map sizes");
        let more_min = min.saturating_sub(1).min(self.cap.unwrap_or(u32::MAX));
        let more = G::rep(
            G::seq(vec![ws(), G::lit(","), ws(), item.clone()]),
            more_min,
            more_max,
        );
        let body = G::seq(vec![item, more, ws()]);
        let body = if min == 0 { G::opt(body) } else { body };
        G::seq(vec![G::lit(open), ws(), body, G::lit(close)])
    }

    fn list(&mut self, lt: &ListTy) -> G {
        if lt.unique {
            self.grammar
                .not_expressed
                .insert("Set items are distinct".to_owned());
        }
        let item = self.value(&lt.item);
        self.sequence("[", "]", item, lt.min, lt.max, "item")
    }

    fn map(&mut self, mt: &MapTy) -> G {
        self.grammar
            .not_expressed
            .insert("map keys are distinct".to_owned());
        let key = match self.types.resolve(&mt.key) {
            Some(Ty::Str(st)) => self.string(st),
            Some(key @ Ty::Ref { .. }) => {
                let key = key.clone();
                self.value(&key)
            }
            _ => string_token(G::rep(G::JsonChar, 0, None)),
        };
        let value = self.value(&mt.value);
        let entry = G::seq(vec![key, Builder::ws(), G::lit(":"), Builder::ws(), value]);
        self.sequence("{", "}", entry, mt.min, mt.max, "entry")
    }

    /// A closed object: `fields` in declared order, each optional one (an `Option` or a field
    /// with a default) possibly absent, led by `"tag": "Variant"` for a data-enum arm.
    ///
    /// Commas go between present fields only. With the tag first every field has a comma
    /// before it, so the fields are a flat sequence. Without it, the first present field has
    /// none: the object is one of `f_i B_{i+1}` for each `i` up to the first required field,
    /// where `B_j` (the fields from `j` on, each after a comma) is the rule `piece_j B_{j+1}`,
    /// which keeps the grammar linear in the number of fields.
    fn object(&mut self, tag: Option<(&str, &str)>, fields: &[FieldTy], name: &str) -> G {
        let ws = Builder::ws;
        let mut members = Vec::with_capacity(fields.len());
        for f in fields {
            let value = self.value(&f.ty);
            members.push((
                G::seq(vec![
                    json_string_lit(&f.name),
                    ws(),
                    G::lit(":"),
                    ws(),
                    value,
                ]),
                f.is_required(),
            ));
        }
        self.members(tag, members, name)
    }

    fn members(&mut self, tag: Option<(&str, &str)>, members: Vec<(G, bool)>, name: &str) -> G {
        let ws = Builder::ws;
        let piece = |m: &G, required: bool| {
            let p = G::seq(vec![ws(), G::lit(","), ws(), m.clone()]);
            if required {
                p
            } else {
                G::opt(p)
            }
        };
        let close = |body: G, may_be_empty: bool| {
            let body = G::seq(vec![body, ws()]);
            let body = if may_be_empty { G::opt(body) } else { body };
            G::seq(vec![G::lit("{"), ws(), body, G::lit("}")])
        };
        if let Some((tag, variant)) = tag {
            let mut parts = vec![
                json_string_lit(tag),
                ws(),
                G::lit(":"),
                ws(),
                json_string_lit(variant),
            ];
            parts.extend(members.iter().map(|(m, r)| piece(m, *r)));
            return close(G::seq(parts), false);
        }
        let n = members.len();
        if n == 0 {
            return G::seq(vec![G::lit("{"), ws(), G::lit("}")]);
        }
        let first_required = members.iter().position(|(_, r)| *r).unwrap_or(n);
        if first_required == 0 {
            let mut parts = vec![members[0].0.clone()];
            parts.extend(members.iter().skip(1).map(|(m, r)| piece(m, *r)));
            return close(G::seq(parts), false);
        }
        // Members used twice (as a first field and after a comma) get a rule of their own.
        let members: Vec<(G, bool)> = members
            .into_iter()
            .enumerate()
            .map(|(i, (m, r))| {
                if i <= first_required {
                    (self.share(m, &format!("{name}_m")), r)
                } else {
                    (m, r)
                }
            })
            .collect();
        // `B_j` for j in 1..=last: the rest after a present field j-1.
        let last = (first_required + 1).min(n);
        let mut rest: Vec<G> = vec![G::Seq(Vec::new()); last + 1];
        let tail: Vec<G> = members
            .iter()
            .skip(last)
            .map(|(m, r)| piece(m, *r))
            .collect();
        let mut next = self.share(G::seq(tail), &format!("{name}_rest"));
        if let Some(slot) = rest.get_mut(last) {
            *slot = next.clone();
        }
        for j in (1..last).rev() {
            let (m, r) = &members[j];
            let body = G::seq(vec![piece(m, *r), next]);
            next = self.share(body, &format!("{name}_rest"));
            if let Some(slot) = rest.get_mut(j) {
                *slot = next.clone();
            }
        }
        let alts: Vec<G> = (0..=first_required.min(n - 1))
            .map(|i| G::seq(vec![members[i].0.clone(), rest[i + 1].clone()]))
            .collect();
        close(G::alt(alts), first_required == n)
    }

    fn media(&mut self, mt: &MediaTy) -> G {
        let any_text = |b: &mut Builder| {
            let max = b.capped(limits::MAX_STR_LEN, "text lengths");
            string_token(G::rep(G::JsonChar, 0, max))
        };
        let count =
            |b: &mut Builder, max: Option<u64>| b.int_range(0, i128::from(max.unwrap_or(u64::MAX)));
        let mut members = Vec::with_capacity(MEDIA_FIELDS.len());
        for f in MEDIA_FIELDS {
            let value = match f.name {
                "ref" => {
                    let max = self.capped(limits::MAX_STR_LEN, "text lengths");
                    let rest = max.map(|m| m - REF_PREFIX.len() as u32);
                    G::token(G::seq(vec![
                        G::lit("\""),
                        G::lit(REF_PREFIX),
                        G::rep(G::JsonChar, 1, rest),
                        G::lit("\""),
                    ]))
                }
                "content_type" if !mt.content_types.is_empty() => G::alt(
                    mt.content_types
                        .iter()
                        .map(|t| json_string_lit(t))
                        .collect(),
                ),
                "content_type" => match content_type_prefix(mt.kind) {
                    Some(prefix) => G::token(G::seq(vec![
                        G::lit("\""),
                        G::lit(prefix),
                        G::rep(G::JsonChar, 0, None),
                        G::lit("\""),
                    ])),
                    None => any_text(self),
                },
                "size" => count(self, Some(mt.max_bytes)),
                "sha256" => G::token(G::seq(vec![
                    G::lit("\""),
                    G::rep(G::class(&[('0', '9'), ('a', 'f')]), 64, Some(64)),
                    G::lit("\""),
                ])),
                "width" => count(self, mt.max_pixels.map(|p| u64::from(p.0))),
                "height" => count(self, mt.max_pixels.map(|p| u64::from(p.1))),
                "duration_ms" => count(self, mt.max_duration_ms),
                "sample_rate" => match mt.sample_rate {
                    Some(rate) => G::lit(&rate.to_string()),
                    None => count(self, None),
                },
                "expires_at" => {
                    self.grammar.not_expressed.insert(
                        "a media reference's `expires_at` is an RFC 3339 date-time".to_owned(),
                    );
                    any_text(self)
                }
                _ => match f.kind {
                    MediaFieldKind::Count => count(self, None),
                    MediaFieldKind::Text => any_text(self),
                },
            };
            members.push((
                G::seq(vec![
                    json_string_lit(f.name),
                    Builder::ws(),
                    G::lit(":"),
                    Builder::ws(),
                    value,
                ]),
                f.required,
            ));
        }
        self.anonymous += 1;
        let name = format!("media{}", self.anonymous);
        let body = self.members(None, members, &name);
        self.share(body, "media")
    }
}

/// `"…"` around `content` as one lexeme.
/// Most float ranges [`float_range`] remembers (a language server sees ranges come and go).
const FLOAT_RANGES_KEPT: usize = 1024;

/// [`float::range`], remembered per thread: deriving a range's spelling is most of a
/// grammar's cost, and a build derives two grammars per node for every float range its
/// output reaches, mostly the same few ranges (a 100-node project spent 80% of its build
/// here). The function is pure, so the grammars are the same bytes.
fn float_range(ft: &FloatTy) -> Option<G> {
    use std::cell::RefCell;
    use std::collections::HashMap;
    type Key = (FloatKind, Option<(u64, bool)>, Option<(u64, bool)>);
    thread_local! {
        static KEPT: RefCell<HashMap<Key, Option<G>>> = RefCell::new(HashMap::new());
    }
    let end = |b: Option<FloatBound>| b.map(|b| (b.value.to_bits(), b.exclusive));
    let key = (ft.kind, end(ft.min), end(ft.max));
    if let Some(kept) = KEPT.with(|k| k.borrow().get(&key).cloned()) {
        return kept;
    }
    let range = float::range(ft);
    KEPT.with(|k| {
        let mut kept = k.borrow_mut();
        if kept.len() >= FLOAT_RANGES_KEPT {
            kept.clear();
        }
        kept.insert(key, range.clone());
    });
    range
}

fn string_token(content: G) -> G {
    G::token(G::seq(vec![G::lit("\""), content, G::lit("\"")]))
}

/// `text` as a JSON string literal, spelled as serde_json spells it.
fn json_string_lit(text: &str) -> G {
    G::Lit(serde_json::to_string(text).unwrap_or_default())
}

/// An expression no text matches (an empty integer range, a dangling type id: the compiler
/// rules both out).
fn never() -> G {
    G::token(G::Class(Class {
        negated: true,
        ranges: vec![('\0', char::MAX)],
    }))
}
