//! The piece of a hit's text that shows why it was found: the text around its first match,
//! on one line, each match between `«` and `»`.

use super::query::Mark;

/// Characters shown before the first match, and in all.
const BEFORE: usize = 60;
const WIDTH: usize = 220;

/// Where `marks` match in `text` (byte ranges, in order, apart).
fn matches(text: &str, marks: &[Mark]) -> Vec<(usize, usize)> {
    let lower = Lower::of(text);
    let mut out: Vec<(usize, usize)> = Vec::new();
    // Each term whole where the text holds it so (`test_login`), else its words.
    let mut words: Vec<(&str, bool)> = Vec::new();
    for m in marks {
        match m {
            Mark::Words(whole, parts, prefix) => {
                // One word is marked as a word (`token`, not inside `tokens`).
                let found =
                    if whole.is_empty() || parts.len() < 2 { Vec::new() } else { lower.find_whole(text, whole) };
                if found.is_empty() {
                    let last = parts.len().saturating_sub(1);
                    words.extend(parts.iter().enumerate().map(|(i, w)| (w.as_str(), *prefix && i == last)));
                }
                out.extend(found);
            }
            Mark::Run(run) => out.extend(text.match_indices(run.as_str()).map(|(i, r)| (i, i + r.len()))),
        }
    }
    // Words: whole runs of letters and digits, compared lowercase.
    let mut start = None;
    for (i, c) in text.char_indices().chain(std::iter::once((text.len(), ' '))) {
        if c.is_alphanumeric() && !crate::journal::grams::unspaced(c) {
            start.get_or_insert(i);
            continue;
        }
        let Some(s) = start.take() else { continue };
        let word = text[s..i].to_lowercase();
        if words.iter().any(|(w, prefix)| word == *w || (*prefix && word.starts_with(w))) {
            out.push((s, i));
        }
    }
    out.sort_unstable();
    let mut apart: Vec<(usize, usize)> = Vec::with_capacity(out.len());
    for (s, e) in out {
        match apart.last_mut() {
            Some(last) if s < last.1 => last.1 = last.1.max(e),
            _ => apart.push((s, e)),
        }
    }
    apart
}

/// A text lowercased, with where each of its characters came from: a match found in the
/// lowercase text is marked in the text as written.
struct Lower {
    text: String,
    /// For each byte of `text`, the byte of the original it came from; then the original's
    /// length.
    from: Vec<usize>,
    end: usize,
}

impl Lower {
    fn of(original: &str) -> Lower {
        let mut text = String::with_capacity(original.len());
        let mut from = Vec::with_capacity(original.len());
        for (i, c) in original.char_indices() {
            for l in c.to_lowercase() {
                text.push(l);
                from.extend(std::iter::repeat_n(i, l.len_utf8()));
            }
        }
        Lower { text, from, end: original.len() }
    }

    /// Where `needle` (lowercase) stands in `original` (the text this was made of) between
    /// two characters that are not letters or digits, as byte ranges of the original.
    fn find_whole(&self, original: &str, needle: &str) -> Vec<(usize, usize)> {
        let at = |i: usize| self.from.get(i).copied().unwrap_or(self.end);
        let word = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
        self.text
            .match_indices(needle)
            .map(|(i, m)| (at(i), at(i + m.len())))
            .filter(|&(s, e)| !word(original[..s].chars().next_back()) && !word(original[e..].chars().next()))
            .collect()
    }
}

/// `text` around its first match of `marks`, on one line, matches marked; its start when
/// nothing matches (a hit through a word's other form).
pub fn of(text: &str, marks: &[Mark]) -> String {
    let found = matches(text, marks);
    let first = found.first().map_or(0, |m| m.0);
    // The window, in characters: BEFORE before the first match, WIDTH in all.
    let starts: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
    let at = starts.partition_point(|&i| i < first);
    let from_char = at.saturating_sub(BEFORE);
    let to_char = (from_char + WIDTH).min(starts.len());
    let from = starts.get(from_char).copied().unwrap_or(text.len());
    let to = starts.get(to_char).copied().unwrap_or(text.len());
    let mut out = String::new();
    if from > 0 {
        out.push('…');
    }
    let mut at = from;
    for &(s, e) in found.iter().filter(|(s, e)| *s >= from && *e <= to) {
        out.push_str(&text[at..s]);
        out.push('«');
        out.push_str(&text[s..e]);
        out.push('»');
        at = e;
    }
    out.push_str(&text[at..to]);
    if to < text.len() {
        out.push('…');
    }
    one_line(&out)
}

/// `text` on one line: runs of white space (line breaks among them) as one space.
pub fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The first line of `text` with something on it, `max` characters at most.
pub fn first_line(text: &str, max: usize) -> String {
    let line = text.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
    ccmem_proto::model::session::truncate_chars(line, max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_are_marked_around_the_first() {
        let marks = [
            Mark::Words("token".into(), vec!["token".into()], false),
            Mark::Words("refresh".into(), vec!["refresh".into()], true),
        ];
        let text = format!("{}We decided the Token\nrefreshes on 401.", "x ".repeat(100));
        let s = of(&text, &marks);
        assert!(s.starts_with('…'), "{s}");
        assert!(s.contains("«Token» «refreshes» on 401."), "{s}");
        assert_eq!(of("tokens", &[Mark::Words(String::new(), vec!["token".into()], false)]), "tokens");
        let marks = [Mark::Words("test_login".into(), vec!["test".into(), "login".into()], false)];
        assert_eq!(of("cargo test TEST_LOGIN", &marks), "cargo test «TEST_LOGIN»");
    }

    #[test]
    fn runs_are_marked_inside_words() {
        let s = of("DB 마이그레이션을 끝냈다", &[Mark::Run("마이그레이션".into())]);
        assert_eq!(s, "DB «마이그레이션»을 끝냈다");
    }
}
