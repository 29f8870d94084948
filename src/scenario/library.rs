//! The bundled scenario library: every file of `scenarios/`, built into the binary so that
//! `leasesim run NAME` works anywhere.

include!(concat!(env!("OUT_DIR"), "/library.rs"));

/// The names of the bundled scenarios, sorted.
pub fn names() -> Vec<&'static str> {
    LIBRARY.iter().map(|(n, _)| *n).collect()
}

/// The RON text of the bundled scenario `name`.
pub fn text(name: &str) -> Option<&'static str> {
    LIBRARY.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}

/// The names among `known` that `name` most likely meant, best first: those that contain it or
/// that it contains (a prefix before other substrings), else those closest by edit distance,
/// if any is close (at most a third of the name's length, and at least 2, edits away). At
/// most `MAX_SUGGESTIONS`.
pub fn closest<'k>(name: &str, known: &'k [String]) -> Vec<&'k str> {
    const MAX_SUGGESTIONS: usize = 3;
    let lower = name.to_lowercase();
    let mut hits: Vec<(u8, &str)> = known
        .iter()
        .filter_map(|k| {
            let kl = k.to_lowercase();
            if kl.starts_with(&lower) {
                Some((0, k.as_str()))
            } else if kl.contains(&lower) || (!kl.is_empty() && lower.contains(&kl)) {
                Some((1, k.as_str()))
            } else {
                None
            }
        })
        .collect();
    if lower.is_empty() {
        hits.clear();
    }
    if hits.is_empty() {
        let limit = (lower.chars().count() / 3).max(2);
        let scored: Vec<(usize, &str)> = known
            .iter()
            .map(|k| (edit_distance(&lower, &k.to_lowercase()), k.as_str()))
            .filter(|(d, _)| *d <= limit)
            .collect();
        let best = scored.iter().map(|(d, _)| *d).min();
        return scored
            .into_iter()
            .filter(|(d, _)| Some(*d) == best)
            .map(|(_, k)| k)
            .take(MAX_SUGGESTIONS)
            .collect();
    }
    hits.sort();
    hits.into_iter()
        .map(|(_, k)| k)
        .take(MAX_SUGGESTIONS)
        .collect()
}

/// The Levenshtein distance between `a` and `b`, in characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let here = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != cb)).min(row[j] + 1).min(here + 1);
            prev = here;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distance_counts_insertions_deletions_and_changes() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("abc", "abc"), 0);
    }
}
