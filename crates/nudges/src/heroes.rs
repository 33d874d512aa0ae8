use std::collections::HashMap;

/// The most mentioned Hero of the Shift names (trimmed, compared case-folded), with the count;
/// ties are all named, each as first written.
pub fn top_heroes(mentions: &[String]) -> Option<(Vec<String>, u32)> {
    let mut counts: HashMap<String, (u32, String, usize)> = HashMap::new();
    for (order, raw) in mentions.iter().enumerate() {
        let name = raw.trim();
        if name.is_empty() {
            continue;
        }
        let entry = counts.entry(name.to_lowercase()).or_insert((0, name.to_owned(), order));
        entry.0 += 1;
    }
    let best = counts.values().map(|(count, _, _)| *count).max()?;
    let mut top: Vec<(usize, String)> =
        counts.into_values().filter(|(count, _, _)| *count == best).map(|(_, name, order)| (order, name)).collect();
    top.sort();
    Some((top.into_iter().map(|(_, name)| name).collect(), best))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn counts_case_folded_trimmed_names_and_keeps_ties() {
        assert_eq!(top_heroes(&names(&["Maria", " maria ", "Ben", "MARIA"])), Some((names(&["Maria"]), 3)));
        assert_eq!(top_heroes(&names(&["Ben", "Ana", "ana", "ben"])), Some((names(&["Ben", "Ana"]), 2)));
        assert_eq!(top_heroes(&names(&["", "  "])), None);
    }
}
