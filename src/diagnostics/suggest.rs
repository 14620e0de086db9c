//! "Did you mean …?": the closest known name to a misspelt one.

/// The candidate closest to `name` by edit distance, if it is close enough to be a likely typo
/// (distance at most a third of the name's length, and at least 1). The distance is
/// [`strsim::osa_distance`]: insertions, deletions, substitutions and a swap of two adjacent
/// letters each count one, since swaps are the commonest typo. Ties go to the first
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
        let distance = strsim::osa_distance(&name.to_lowercase(), &candidate.to_lowercase());
        if distance <= limit && best.is_none_or(|(d, _)| distance < d) {
            best = Some((distance, candidate));
        }
    }
    best.map(|(_, c)| c)
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
        // A swap of two letters is one edit: within the limit of a five-letter name.
        assert_eq!(did_you_mean("moedl", ["model", "prompt"]), Some("model"));
    }
}
