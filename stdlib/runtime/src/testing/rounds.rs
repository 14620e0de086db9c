//! Side-by-side timing for the benchmarks that compare contenders on the same payloads (`decode`
//! in this crate, `glue` in `examples/review-rs`): every round runs each contender once, in an
//! order that rotates from round to round, so that drift of the machine hits all of them alike;
//! results are medians, and ratios are medians of the per-round ratios.

use std::time::Instant;

/// Mean seconds per call of `f` over `iters` calls (at least one).
pub fn seconds(iters: u32, mut f: impl FnMut()) -> f64 {
    let iters = iters.max(1);
    let start = Instant::now();
    for _ in 0..iters {
        f();
    }
    start.elapsed().as_secs_f64() / f64::from(iters)
}

/// One sample per round for each of `N` contenders: `run(k)` runs contender `k` once, and a
/// sample is [`seconds`] over `iters` runs. Round `r` starts with contender `r % N`.
pub fn interleaved<const N: usize>(
    rounds: usize,
    iters: u32,
    mut run: impl FnMut(usize),
) -> [Vec<f64>; N] {
    interleaved_timed(rounds, iters, |k, iters| seconds(iters, || run(k)))
}

/// [`interleaved`] where each contender times itself: `sample(k, iters)` gives contender `k`'s
/// seconds per call over `iters` calls (a contender in another process measures there).
pub fn interleaved_timed<const N: usize>(
    rounds: usize,
    iters: u32,
    mut sample: impl FnMut(usize, u32) -> f64,
) -> [Vec<f64>; N] {
    let mut samples: [Vec<f64>; N] = std::array::from_fn(|_| Vec::with_capacity(rounds));
    for round in 0..rounds {
        for k in 0..N {
            let which = (k + round) % N;
            let t = sample(which, iters);
            if let Some(s) = samples.get_mut(which) {
                s.push(t);
            }
        }
    }
    samples
}

/// The median (the upper one of an even count; NaN when empty).
pub fn median(xs: &[f64]) -> f64 {
    let mut sorted = xs.to_vec();
    sorted.sort_by(|a, b| a.total_cmp(b));
    sorted.get(sorted.len() / 2).copied().unwrap_or(f64::NAN)
}

/// The median of the per-round ratios `a[r] / b[r]`.
pub fn median_ratio(a: &[f64], b: &[f64]) -> f64 {
    let ratios: Vec<f64> = a.iter().zip(b).map(|(x, y)| x / y).collect();
    median(&ratios)
}

/// The median of `seconds` samples, as `12.3 µs`.
pub fn micros(seconds: &[f64]) -> String {
    format!("{:.1} µs", median(seconds) * 1e6)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_round_runs_every_contender_in_a_rotated_order() {
        let mut order = Vec::new();
        let samples = interleaved::<3>(4, 2, |k| order.push(k));
        assert_eq!(
            order,
            [0, 0, 1, 1, 2, 2, 1, 1, 2, 2, 0, 0, 2, 2, 0, 0, 1, 1, 0, 0, 1, 1, 2, 2]
        );
        assert!(samples.iter().all(|s| s.len() == 4));
    }

    #[test]
    fn medians_and_ratios() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 3.0);
        assert!(median(&[]).is_nan());
        assert_eq!(median_ratio(&[2.0, 9.0, 3.0], &[1.0, 3.0, 3.0]), 2.0);
        assert_eq!(micros(&[0.000_012_34]), "12.3 µs");
    }
}
