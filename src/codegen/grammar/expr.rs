//! The grammar as data, before it is written in either dialect: expressions over literals and
//! character classes, rules that name them, and lexemes (where llguidance's Lark wants a
//! regular expression rather than rules).

/// A set of characters: inclusive ranges, or every character outside them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Class {
    pub negated: bool,
    pub ranges: Vec<(char, char)>,
}

impl Class {
    #[cfg(test)]
    pub fn contains(&self, c: char) -> bool {
        self.ranges.iter().any(|(a, b)| *a <= c && c <= *b) != self.negated
    }
}

/// A grammar expression.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum G {
    /// Exactly this text.
    Lit(String),
    Class(Class),
    Seq(Vec<G>),
    Alt(Vec<G>),
    /// `min..=max` repetitions (`None`: no upper bound).
    Rep(Box<G>, u32, Option<u32>),
    /// A named rule.
    Rule(String),
    /// A regular piece the lexer takes whole: a `/regex/` in Lark, inline in GBNF. Holds no
    /// `Rule`.
    Token(Box<G>),
    /// One character of JSON string content: an unescaped character, a short escape, a `\u`
    /// escape of a non-surrogate, or a surrogate pair spelled as two `\u` escapes. GBNF names it
    /// as a rule (`char`); Lark writes it inside the string's regex.
    JsonChar,
}

impl G {
    pub fn lit(s: &str) -> G {
        G::Lit(s.to_owned())
    }

    pub fn class(ranges: &[(char, char)]) -> G {
        G::Class(Class {
            negated: false,
            ranges: ranges.to_vec(),
        })
    }

    /// ASCII digits `a..=b` (`b'0'..=b'9'`).
    pub fn digits(a: u8, b: u8) -> G {
        if a == b {
            G::Lit(char::from(a).to_string())
        } else {
            G::class(&[(char::from(a), char::from(b))])
        }
    }

    /// An alternative of `alts`, flattened when there is one.
    pub fn alt(mut alts: Vec<G>) -> G {
        if alts.len() == 1 {
            alts.pop().unwrap_or(G::Seq(Vec::new()))
        } else {
            G::Alt(alts)
        }
    }

    pub fn seq(parts: Vec<G>) -> G {
        let mut flat = Vec::with_capacity(parts.len());
        for p in parts {
            match p {
                G::Seq(inner) => flat.extend(inner),
                p => flat.push(p),
            }
        }
        if flat.len() == 1 {
            flat.pop().unwrap_or(G::Seq(Vec::new()))
        } else {
            G::Seq(flat)
        }
    }

    pub fn rep(inner: G, min: u32, max: Option<u32>) -> G {
        match (min, max) {
            (_, Some(0)) => G::Seq(Vec::new()),
            (1, Some(1)) => inner,
            _ => G::Rep(Box::new(inner), min, max),
        }
    }

    pub fn opt(inner: G) -> G {
        G::rep(inner, 0, Some(1))
    }

    pub fn token(inner: G) -> G {
        G::Token(Box::new(inner))
    }

    /// Whether the expression matches only the empty text.
    pub fn is_empty(&self) -> bool {
        matches!(self, G::Seq(parts) if parts.is_empty())
    }
}

/// A whole grammar: rules in the order they are written (the start rule first) and what it
/// does not express.
#[derive(Clone, Debug, Default)]
pub struct Grammar {
    pub rules: Vec<(String, G)>,
    /// Sentences for the header: bounds the grammar leaves to the pipeline.
    pub not_expressed: std::collections::BTreeSet<String>,
    /// Sentences for the header: where the grammar is stricter than the decoder.
    pub stricter: std::collections::BTreeSet<String>,
}
