//! Budgets shared down a run's tree of calls (spec §6 `budget`, §12): money is reserved before
//! it is spent.
//!
//! A [`Meter`] holds one frame per node being run, outermost first: the run's first node, then
//! each delegated call under it. Every model call, in whichever node, must fit in **every**
//! frame: the calls a delegate makes count against its callers' `max_calls`, its cost against
//! their `max_cost`, and the earliest `max_time` deadline of the chain is the one that holds.
//!
//! Before a call, [`Meter::reserve`] takes the call's worst case (what the call would cost if
//! the prompt and the answer were as large as they may be) out of what is left of each
//! `max_cost`; a call whose worst case does not fit is never made. After the call,
//! [`Meter::settle`] replaces the reservation by what the call really cost. So `max_cost` is
//! never exceeded, as long as a provider bills no more tokens than it was allowed (the
//! reservation counts one token per byte of what is sent, plus a margin, and the output-token
//! limit the provider is asked for; see [`worst_case`]).

use crate::money::{Amount, Price};
use crate::provider::request::{max_output_tokens, TOKEN_MARGIN};

/// `budget { … }` of one node, in the meter's terms.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Limits {
    pub max_calls: Option<u32>,
    pub max_cost: Option<Amount>,
    pub max_time_ms: Option<u64>,
}

/// One node's share of the run.
#[derive(Clone, Debug)]
struct Frame {
    limits: Limits,
    /// When the frame was entered, on the run's clock.
    started_ms: u64,
    calls: u32,
    spent: Amount,
    /// Reserved for calls under way and not settled yet.
    held: Amount,
    /// Every reservation made in this frame or below it (what a receipt reports).
    reserved: Amount,
}

/// What a frame used, when it is left.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Used {
    pub calls: u32,
    /// What the calls made in the frame and below it cost.
    pub spent: Amount,
    /// The sum of the reservations made in the frame and below it.
    pub reserved: Amount,
}

/// Why a call may not be made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Exceeded {
    /// A sentence naming the limit.
    pub message: String,
}

/// A reservation made by [`Meter::reserve`], to hand back to [`Meter::settle`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use = "a reservation is settled after the call"]
pub struct Reservation {
    pub worst: Amount,
}

/// The frames of a run (see the module doc).
#[derive(Clone, Debug, Default)]
pub struct Meter {
    frames: Vec<Frame>,
}

impl Meter {
    pub fn new() -> Meter {
        Meter::default()
    }

    /// A meter with one frame: a pipeline run on its own.
    pub fn single(limits: Limits, now_ms: u64) -> Meter {
        let mut meter = Meter::new();
        meter.enter(limits, now_ms);
        meter
    }

    /// Enters a node's frame.
    pub fn enter(&mut self, limits: Limits, now_ms: u64) {
        self.frames.push(Frame {
            limits,
            started_ms: now_ms,
            calls: 0,
            spent: Amount::ZERO,
            held: Amount::ZERO,
            reserved: Amount::ZERO,
        });
    }

    /// Leaves the innermost frame; what it used.
    pub fn leave(&mut self) -> Used {
        self.frames.pop().map_or(Used::default(), |f| Used {
            calls: f.calls,
            spent: f.spent,
            reserved: f.reserved,
        })
    }

    /// How deep the frames go.
    pub fn depth(&self) -> usize {
        self.frames.len()
    }

    /// What the innermost frame has used so far.
    pub fn used(&self) -> Used {
        self.frames.last().map_or(Used::default(), |f| Used {
            calls: f.calls,
            spent: f.spent,
            reserved: f.reserved,
        })
    }

    /// `Err` when some frame's `max_time` has run out at `now_ms`.
    pub fn check_time(&self, now_ms: u64) -> Result<(), Exceeded> {
        for f in &self.frames {
            if let Some(max) = f.limits.max_time_ms {
                if now_ms.saturating_sub(f.started_ms) >= max {
                    return Err(Exceeded {
                        message: format!("the budget's max_time ({max} ms) has run out"),
                    });
                }
            }
        }
        Ok(())
    }

    /// Whether an answer that arrived at `now_ms` came after some frame's `max_time`.
    pub fn late(&self, now_ms: u64) -> bool {
        self.frames.iter().any(|f| {
            f.limits
                .max_time_ms
                .is_some_and(|max| now_ms.saturating_sub(f.started_ms) > max)
        })
    }

    /// Reserves one call whose worst case is `worst` in every frame, or says which limit it
    /// would break; nothing is changed then.
    pub fn reserve(&mut self, worst: Amount) -> Result<Reservation, Exceeded> {
        for f in &self.frames {
            if let Some(max) = f.limits.max_calls {
                if f.calls >= max {
                    return Err(Exceeded {
                        message: format!("the budget's max_calls ({max}) are used up"),
                    });
                }
            }
            if let Some(max) = f.limits.max_cost {
                let after = f
                    .spent
                    .checked_add(f.held)
                    .and_then(|a| a.checked_add(worst));
                if after.is_none_or(|after| after > max) {
                    return Err(Exceeded {
                        message: format!(
                            "the next call could cost up to {worst}, and only {} of the budget's max_cost {max} is left",
                            max.saturating_sub(f.spent.saturating_add(f.held))
                        ),
                    });
                }
            }
        }
        for f in &mut self.frames {
            f.calls = f.calls.saturating_add(1);
            f.held = f.held.saturating_add(worst);
            f.reserved = f.reserved.saturating_add(worst);
        }
        Ok(Reservation { worst })
    }

    /// Replaces a reservation by what the call cost.
    pub fn settle(&mut self, reservation: Reservation, actual: Amount) {
        for f in &mut self.frames {
            f.held = f.held.saturating_sub(reservation.worst);
            f.spent = f.spent.saturating_add(actual);
        }
    }
}

/// The worst case of one call at `price`: one input token per byte of `request_bytes` (the
/// prompt, its parts, a repair's reasons and quoted answer, the output schema) plus
/// [`TOKEN_MARGIN`] for the provider's message framing, and the output-token limit a provider
/// is asked for an answer of `max_answer` bytes ([`max_output_tokens`] before any model cap,
/// which only lowers it). Byte-level tokenizers never make more tokens than bytes.
pub fn worst_case(price: &Price, request_bytes: u64, max_answer: u64) -> Amount {
    let Some(per_token) = price.per_token() else {
        return Amount::ZERO;
    };
    let input = request_bytes.saturating_add(TOKEN_MARGIN);
    let output = u64::from(max_output_tokens(max_answer, u32::MAX));
    per_token.cost(input, output)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eur(text: &str) -> Amount {
        Amount::parse(text).unwrap_or(Amount::ZERO)
    }

    #[test]
    fn a_call_that_could_overshoot_is_never_reserved() {
        let limits = Limits {
            max_cost: Some(eur("0.25")),
            ..Limits::default()
        };
        let mut meter = Meter::single(limits, 0);
        for _ in 0..3 {
            let r = meter.reserve(eur("0.07"));
            assert!(r.is_ok(), "{r:?}");
            if let Ok(r) = r {
                meter.settle(r, eur("0.07"));
            }
        }
        // 0.21 spent: a fourth call of up to 0.07 would end at 0.28.
        let refused = meter.reserve(eur("0.07"));
        assert!(refused.is_err(), "{refused:?}");
        assert_eq!(meter.used().spent, eur("0.21"));
        // A cheaper worst case still fits exactly at the edge.
        assert!(meter.reserve(eur("0.04")).is_ok());
    }

    #[test]
    fn a_delegate_spends_from_every_caller() {
        let mut meter = Meter::single(
            Limits {
                max_cost: Some(eur("0.10")),
                max_calls: Some(2),
                ..Limits::default()
            },
            0,
        );
        meter.enter(Limits::default(), 0);
        let r = meter.reserve(eur("0.06"));
        assert!(r.is_ok());
        // Held by the outer frame while the call is under way.
        assert!(meter.reserve(eur("0.05")).is_err());
        if let Ok(r) = r {
            meter.settle(r, eur("0.01"));
        }
        let inner = meter.leave();
        assert_eq!(inner.spent, eur("0.01"));
        assert_eq!(inner.calls, 1);
        assert_eq!(inner.reserved, eur("0.06"));
        let outer = meter.used();
        assert_eq!((outer.calls, outer.spent), (1, eur("0.01")));
        assert!(meter.reserve(eur("0.09")).is_ok());
        assert!(meter.reserve(eur("0.0")).is_err(), "max_calls 2 used up");
    }

    #[test]
    fn the_earliest_deadline_holds() {
        let mut meter = Meter::single(
            Limits {
                max_time_ms: Some(100),
                ..Limits::default()
            },
            0,
        );
        meter.enter(
            Limits {
                max_time_ms: Some(1_000),
                ..Limits::default()
            },
            50,
        );
        assert!(meter.check_time(99).is_ok());
        assert!(meter.check_time(100).is_err());
        assert!(!meter.late(100));
        assert!(meter.late(101));
    }
}
