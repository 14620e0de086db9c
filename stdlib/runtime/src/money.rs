//! Exact money arithmetic for budgets and receipts: no floats anywhere.
//!
//! An [`Amount`] is an integer count of 10⁻¹⁸ of a currency unit (u128: up to 3.4·10²⁰ units).
//! Prices are per million tokens as decimal text (`"0.15"`), so one token costs the price's
//! atto-units divided by 10⁶; that division is exact when the price has at most 12 decimals,
//! and [`Price::parse`] refuses more.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt;

const SCALE: u32 = 18;

/// An exact non-negative amount in 10⁻¹⁸ units.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Amount(pub u128);

impl Amount {
    pub const ZERO: Amount = Amount(0);

    /// Parses decimal text (`"0.05"`, `"12"`); `None` for signs, exponents, more than 18
    /// decimals or overflow.
    pub fn parse(text: &str) -> Option<Amount> {
        let (int, frac) = match text.split_once('.') {
            Some((i, f)) => (i, f),
            None => (text, ""),
        };
        if int.is_empty()
            || frac.len() > SCALE as usize
            || !int.bytes().all(|b| b.is_ascii_digit())
            || !frac.bytes().all(|b| b.is_ascii_digit())
            || (text.contains('.') && frac.is_empty())
        {
            return None;
        }
        let mut v: u128 = 0;
        for d in int.bytes().chain(frac.bytes()) {
            v = v.checked_mul(10)?.checked_add(u128::from(d - b'0'))?;
        }
        let pad = SCALE - frac.len() as u32;
        v.checked_mul(10u128.checked_pow(pad)?).map(Amount)
    }

    pub fn checked_add(self, other: Amount) -> Option<Amount> {
        self.0.checked_add(other.0).map(Amount)
    }

    pub fn saturating_add(self, other: Amount) -> Amount {
        Amount(self.0.saturating_add(other.0))
    }

    /// `self - other`, or zero when `other` is larger.
    pub fn saturating_sub(self, other: Amount) -> Amount {
        Amount(self.0.saturating_sub(other.0))
    }
}

impl fmt::Display for Amount {
    /// The shortest exact decimal: `0.0021`, `3`, `0`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Most amounts written are nothing (a refusal's cost, spent and reserved).
        if self.0 == 0 {
            return f.write_str("0");
        }
        let unit = 10u128.pow(SCALE);
        let int = self.0 / unit;
        let frac = self.0 % unit;
        if frac == 0 {
            return write!(f, "{int}");
        }
        let digits = format!("{frac:018}");
        write!(f, "{int}.{}", digits.trim_end_matches('0'))
    }
}

/// A binding's price per million tokens (from `ael.toml`), exact.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Price {
    pub input_per_mtok: String,
    pub output_per_mtok: String,
    pub currency: String,
}

/// A price ready for arithmetic: atto-units per token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TokenPrice {
    pub input: u128,
    pub output: u128,
}

impl Price {
    /// `None` when a price is not decimal text or has more than 12 decimals.
    pub fn per_token(&self) -> Option<TokenPrice> {
        let per = |text: &str| {
            let a = Amount::parse(text)?;
            (a.0 % 1_000_000 == 0).then_some(a.0 / 1_000_000)
        };
        Some(TokenPrice {
            input: per(&self.input_per_mtok)?,
            output: per(&self.output_per_mtok)?,
        })
    }
}

impl TokenPrice {
    /// The exact cost of a call's usage (saturating far beyond any real bill).
    pub fn cost(&self, input_tokens: u64, output_tokens: u64) -> Amount {
        Amount(
            self.input
                .saturating_mul(u128::from(input_tokens))
                .saturating_add(self.output.saturating_mul(u128::from(output_tokens))),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_are_exact() {
        assert_eq!(
            Amount::parse("0.05").map(|a| a.to_string()),
            Some("0.05".into())
        );
        assert_eq!(
            Amount::parse("12").map(|a| a.to_string()),
            Some("12".into())
        );
        for bad in ["", "-1", "1e3", "1.", ".5", "0.0000000000000000001"] {
            assert_eq!(Amount::parse(bad), None, "{bad}");
        }
        let price = Price {
            input_per_mtok: "0.15".into(),
            output_per_mtok: "0.60".into(),
            currency: "EUR".into(),
        };
        let per = price.per_token();
        // 1000 in × 0.15/M + 3000 out × 0.60/M = 0.00015 + 0.0018 = 0.00195
        let cost = per.map(|p| p.cost(1000, 3000).to_string());
        assert_eq!(cost, Some("0.00195".into()));
        // 0.1 + 0.2 is exactly 0.3 here.
        let sum = Amount::parse("0.1").and_then(|a| a.checked_add(Amount::parse("0.2")?));
        assert_eq!(sum, Amount::parse("0.3"));
    }
}
