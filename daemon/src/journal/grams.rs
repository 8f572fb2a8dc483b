//! Searching text written without spaces between words (Chinese, Japanese, Korean with its
//! particles attached), which SQLite's word tokenizer takes a whole run of at a time: each
//! run is kept as its overlapping pairs of characters (`마이그레이션을` → `마이 이그 그레 레이
//! 이션 션을`) in `events_cjk`, and a query's run is looked for as the phrase of its pairs.
//!
//! Pairs rather than SQLite's trigram tokenizer: two-character words are most of Chinese and
//! Japanese, which a trigram index cannot find, and an index of every event's trigrams costs
//! 2.5 times the space of its words (`../shared/design/search-figures.md`); only the text
//! that needs it is indexed this way.

/// Whether `c` belongs to a script written without spaces between words (Han, kana,
/// Hangul, and their compatibility and half-width forms).
pub fn unspaced(c: char) -> bool {
    matches!(c as u32,
        0x1100..=0x11FF      // Hangul Jamo
        | 0x2E80..=0x2FDF    // CJK radicals
        | 0x3005..=0x3007    // 々 〆 〇
        | 0x3040..=0x30FF    // Hiragana, Katakana
        | 0x3130..=0x318F    // Hangul compatibility Jamo
        | 0x31F0..=0x31FF    // Katakana phonetic extensions
        | 0x3400..=0x4DBF    // CJK extension A
        | 0x4E00..=0x9FFF    // CJK unified ideographs
        | 0xA960..=0xA97F    // Hangul Jamo extended A
        | 0xAC00..=0xD7AF    // Hangul syllables
        | 0xD7B0..=0xD7FF    // Hangul Jamo extended B
        | 0xF900..=0xFAFF    // CJK compatibility ideographs
        | 0xFF66..=0xFF9F    // half-width Katakana
        | 0xFFA0..=0xFFDC    // half-width Hangul
        | 0x20000..=0x3FFFF  // CJK extensions B and after
    )
}

/// The runs of unspaced characters in `text`, in order.
fn runs(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !unspaced(c)).filter(|r| !r.is_empty())
}

/// The pairs of `run`'s characters, space-separated (a run of one character: itself).
fn pairs(run: &str, out: &mut String) {
    let chars: Vec<char> = run.chars().collect();
    for w in chars.windows(2) {
        out.push(w[0]);
        out.push(w[1]);
        out.push(' ');
    }
    if chars.len() == 1 {
        out.push(chars[0]);
        out.push(' ');
    }
}

/// What `events_cjk` indexes of `text`: the pairs of each unspaced run, and each run's last
/// character alone (a one-character query is the prefix of a pair, or that character);
/// None when the text has no such run.
pub fn of(text: &str) -> Option<String> {
    let mut out = String::new();
    for run in runs(text) {
        pairs(run, &mut out);
        if let Some(last) = run.chars().last().filter(|_| run.chars().nth(1).is_some()) {
            out.push(last);
            out.push(' ');
        }
    }
    (!out.is_empty()).then(|| out.trim_end().to_string())
}

/// The FTS5 query that finds `run` (one run of unspaced characters) in `events_cjk`: the
/// phrase of its pairs; a single character as a prefix.
pub fn query(run: &str) -> String {
    let mut chars = run.chars();
    if let (Some(c), None) = (chars.next(), chars.next()) {
        return format!("\"{c}\"*");
    }
    let mut phrase = String::new();
    pairs(run, &mut phrase);
    format!("\"{}\"", phrase.trim_end())
}

/// `term` split into its spaced words and its unspaced runs (`API마이그레이션` → [`API`],
/// [`마이그레이션`]).
pub fn split(term: &str) -> (Vec<String>, Vec<String>) {
    let spaced: String = term.chars().map(|c| if unspaced(c) { ' ' } else { c }).collect();
    (spaced.split_whitespace().map(str::to_string).collect(), runs(term).map(str::to_string).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unspaced_runs_become_pairs_and_latin_text_nothing() {
        assert_eq!(of("마이그레이션을 했다"), Some("마이 이그 그레 레이 이션 션을 을 했다 다".to_string()));
        assert_eq!(of("決定: use 東京"), Some("決定 定 東京 京".to_string()));
        assert_eq!(of("a 字 b"), Some("字".to_string()));
        assert_eq!(of("plain English, и русский"), None);
    }

    #[test]
    fn a_query_is_the_phrase_of_its_pairs() {
        assert_eq!(query("マイグレ"), "\"マイ イグ グレ\"");
        assert_eq!(query("字"), "\"字\"*");
        assert_eq!(
            split("API마이그레이션 test"),
            (vec!["API".to_string(), "test".to_string()], vec!["마이그레이션".to_string()])
        );
    }
}
