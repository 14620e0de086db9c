//! "Did you mean …?": the closest known name to a misspelt one.

/// The candidate closest to `name` by edit distance, if it is close enough to be a likely typo
/// (distance at most a third of the name's length, and at least 1). Ties go to the first
/// candidate in iteration order, so pass candidates in a deterministic order.
pub fn did_you_mean<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let limit = (name.chars().count() / 3).max(1);
    let mut best: Option<(usize, &'a str)> = None;
    for candidate in candidates {
        if candidate == name {
            continue;
        }
        let distance = levenshtein(&name.to_lowercase(), &candidate.to_lowercase());
        if distance <= limit && best.is_none_or(|(d, _)| distance < d) {
            best = Some((distance, candidate));
        }
    }
    best.map(|(_, c)| c)
}

/// Edit distance (insertions, deletions, substitutions) over chars.
pub fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut previous = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let substitution = previous + usize::from(ca != cb);
            previous = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(previous + 1);
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_names_only() {
        let names = ["ReviewRequest", "Review", "Finding"];
        assert_eq!(did_you_mean("ReviewRequst", names), Some("ReviewRequest"));
        assert_eq!(did_you_mean("Findng", names), Some("Finding"));
        assert_eq!(did_you_mean("Severity", names), None);
        assert_eq!(levenshtein("kitten", "sitting"), 3);
    }
}
