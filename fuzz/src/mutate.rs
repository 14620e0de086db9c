//! Inputs: a seed from the corpus, changed by a short program of mutations that `arbitrary`
//! builds from random bytes. Deterministic for a given `--seed`.

use arbitrary::{Arbitrary, Unstructured};

/// SplitMix64: small, fast and good enough to drive mutations; no dependency for it.
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }

    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next_u64() as u8).collect()
    }
}

/// One change to an input. Positions and lengths are taken modulo the input's length.
#[derive(Arbitrary, Debug)]
pub enum Mutation {
    FlipBit {
        at: u32,
        bit: u8,
    },
    SetByte {
        at: u32,
        byte: u8,
    },
    Insert {
        at: u32,
        bytes: Vec<u8>,
    },
    /// A word of the target's dictionary (keywords, punctuation, JSON tokens).
    InsertWord {
        at: u32,
        word: u16,
    },
    Delete {
        at: u32,
        len: u16,
    },
    /// A slice of the input repeated: what finds nesting and quadratic blow-ups.
    Repeat {
        at: u32,
        len: u16,
        times: u8,
    },
    /// A slice of another seed spliced in.
    Splice {
        at: u32,
        seed: u16,
        from: u32,
        len: u16,
    },
    Truncate {
        at: u32,
    },
}

/// What mutations may draw from.
pub struct Pool<'a> {
    pub seeds: &'a [Vec<u8>],
    pub words: &'a [&'a str],
    /// Inputs are cut to this many bytes.
    pub max_len: usize,
}

/// A new input: a random seed (or nothing) changed by 0–8 random mutations.
pub fn input(rng: &mut Rng, pool: &Pool<'_>) -> Vec<u8> {
    let mut data = if pool.seeds.is_empty() || rng.below(16) == 0 {
        Vec::new()
    } else {
        pool.seeds[rng.below(pool.seeds.len())].clone()
    };
    let noise_len = 64 + rng.below(192);
    let noise = rng.bytes(noise_len);
    let mut u = Unstructured::new(&noise);
    let count = rng.below(9);
    for _ in 0..count {
        let Ok(mutation) = Mutation::arbitrary(&mut u) else {
            break;
        };
        apply(&mut data, &mutation, pool);
    }
    data.truncate(pool.max_len);
    data
}

fn at(at: u32, len: usize) -> usize {
    at as usize % (len + 1)
}

/// Applies one mutation.
pub fn apply(data: &mut Vec<u8>, mutation: &Mutation, pool: &Pool<'_>) {
    let len = data.len();
    match mutation {
        Mutation::FlipBit { at: i, bit } if len > 0 => data[*i as usize % len] ^= 1 << (bit % 8),
        Mutation::SetByte { at: i, byte } if len > 0 => data[*i as usize % len] = *byte,
        Mutation::Insert { at: i, bytes } => {
            let i = at(*i, len);
            data.splice(i..i, bytes.iter().copied().take(64));
        }
        Mutation::InsertWord { at: i, word } if !pool.words.is_empty() => {
            let i = at(*i, len);
            let word = pool.words[*word as usize % pool.words.len()].as_bytes();
            data.splice(i..i, word.iter().copied());
        }
        Mutation::Delete { at: i, len: n } if len > 0 => {
            let i = *i as usize % len;
            let end = (i + *n as usize % 64 + 1).min(len);
            data.drain(i..end);
        }
        Mutation::Repeat {
            at: i,
            len: n,
            times,
        } if len > 0 => {
            let i = *i as usize % len;
            let end = (i + *n as usize % 256 + 1).min(len);
            let chunk = data[i..end].to_vec();
            let times = (*times as usize).min(pool.max_len / chunk.len().max(1));
            let repeated: Vec<u8> = chunk
                .iter()
                .copied()
                .cycle()
                .take(chunk.len() * times)
                .collect();
            data.splice(end..end, repeated);
        }
        Mutation::Splice {
            at: i,
            seed,
            from,
            len: n,
        } if !pool.seeds.is_empty() => {
            let other = &pool.seeds[*seed as usize % pool.seeds.len()];
            if other.is_empty() {
                return;
            }
            let from = *from as usize % other.len();
            let end = (from + *n as usize % 512 + 1).min(other.len());
            let i = at(*i, len);
            data.splice(i..i, other[from..end].iter().copied());
        }
        Mutation::Truncate { at: i } => data.truncate(at(*i, len)),
        _ => {}
    }
    data.truncate(pool.max_len);
}
