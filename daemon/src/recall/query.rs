//! A person's search, as full-text queries: words for `events_fts`, runs of Chinese,
//! Japanese or Korean for `events_cjk` (see [`crate::journal::grams`]). Every word is quoted
//! for FTS5, so nothing typed is read as its query syntax (`NEAR`, `:`, `^`, parentheses).

use crate::journal::grams;

/// What to look for.
#[derive(Debug, Default, PartialEq)]
pub struct Query {
    /// FTS5 queries for `events_fts` and `events_cjk`: every term must match.
    pub words: Option<String>,
    /// Any of the words (two or more were given): asked when no event holds them all.
    pub any_words: Option<String>,
    pub runs: Option<String>,
    /// What must not match (`-word`).
    pub not_words: Option<String>,
    pub not_runs: Option<String>,
    /// What to mark in a snippet: words (lowercase; `prefix` ones match the start of a
    /// word) and runs (found as they are).
    pub marks: Vec<Mark>,
}

/// A term to mark in a snippet.
#[derive(Debug, Clone, PartialEq)]
pub enum Mark {
    /// A term of words as typed (`test_login`, lowercase), marked whole where the text holds
    /// it so; else each of its words (lowercase; true: the last is a prefix).
    Words(String, Vec<String>, bool),
    /// A run of unspaced characters, found anywhere.
    Run(String),
}

/// One term of what was typed: `word`, `"a phrase"`, `prefix*`, `-word`.
struct Term {
    text: String,
    phrase: bool,
    prefix: bool,
    not: bool,
}

/// Reads `typed` into a [`Query`], or says why it finds nothing.
pub fn parse(typed: &str) -> Result<Query, String> {
    let mut q = Query::default();
    let (mut words, mut runs, mut not_words, mut not_runs) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for t in terms(typed) {
        let (spaced, unspaced) = grams::split(&t.text);
        let spaced: Vec<String> = spaced.iter().flat_map(|w| tokens(w)).collect();
        if !spaced.is_empty() {
            let body = spaced.join(" ").replace('"', "\"\"");
            let fts = if t.prefix && !t.phrase { format!("\"{body}\"*") } else { format!("\"{body}\"") };
            if t.not {
                not_words.push(fts);
            } else {
                words.push(fts);
                let whole = if unspaced_in(&t.text) { String::new() } else { t.text.to_lowercase() };
                q.marks.push(Mark::Words(whole, spaced.iter().map(|w| w.to_lowercase()).collect(), t.prefix));
            }
        }
        for run in unspaced {
            if t.not {
                not_runs.push(grams::query(&run));
            } else {
                runs.push(grams::query(&run));
                q.marks.push(Mark::Run(run));
            }
        }
    }
    if words.is_empty() && runs.is_empty() {
        return Err(if typed.trim().is_empty() {
            "nothing to search for: give a word or two".into()
        } else {
            format!("{typed:?} holds no word to search for (only signs, or only words to leave out)")
        });
    }
    let join = |v: Vec<String>, op: &str| (!v.is_empty()).then(|| v.join(op));
    if words.len() > 1 && runs.is_empty() {
        q.any_words = Some(words.join(" OR "));
    }
    q.words = join(words, " AND ");
    q.runs = join(runs, " AND ");
    q.not_words = join(not_words, " OR ");
    q.not_runs = join(not_runs, " OR ");
    Ok(q)
}

/// Whether `text` holds a character of a script written without spaces.
fn unspaced_in(text: &str) -> bool {
    text.chars().any(grams::unspaced)
}

/// The words of `text` as SQLite's word tokenizer splits them (letters and digits; `_`,
/// `-`, `.` and the rest separate).
pub fn tokens(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_string).collect()
}

/// The terms typed, `"quoted phrases"` kept whole.
fn terms(typed: &str) -> Vec<Term> {
    let mut out = Vec::new();
    let mut rest = typed.trim();
    while !rest.is_empty() {
        let not = rest.len() > 1 && rest.starts_with('-') && !rest[1..].starts_with(char::is_whitespace);
        let body = if not { &rest[1..] } else { rest };
        let (text, phrase, after) = match body.strip_prefix('"') {
            Some(quoted) => match quoted.find('"') {
                Some(end) => (&quoted[..end], true, &quoted[end + 1..]),
                None => (quoted, true, ""),
            },
            None => {
                let end = body.find(char::is_whitespace).unwrap_or(body.len());
                (&body[..end], false, &body[end..])
            }
        };
        let prefix = after.starts_with('*') || (!phrase && text.ends_with('*'));
        let text = text.trim_end_matches('*');
        if !text.is_empty() {
            out.push(Term { text: text.to_string(), phrase, prefix, not });
        }
        rest = after.trim_start_matches('*').trim_start();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_phrases_prefixes_and_exclusions() {
        let q = parse("token refresh \"pull request\" auth* -flaky").unwrap();
        assert_eq!(q.words.as_deref(), Some("\"token\" AND \"refresh\" AND \"pull request\" AND \"auth\"*"));
        assert_eq!(q.not_words.as_deref(), Some("\"flaky\""));
        assert_eq!(q.runs, None);
        assert!(q.marks.contains(&Mark::Words("auth".into(), vec!["auth".into()], true)));
    }

    #[test]
    fn query_syntax_typed_is_only_words() {
        let q = parse("NEAR(a b) col:x ^y \"unclosed").unwrap();
        assert_eq!(q.words.as_deref(), Some("\"NEAR a\" AND \"b\" AND \"col x\" AND \"y\" AND \"unclosed\""));
        assert!(parse("  ").is_err());
        assert!(parse("-only").is_err());
        assert!(parse("*** ---").is_err());
    }

    #[test]
    fn unspaced_scripts_are_searched_as_pairs() {
        let q = parse("마이그레이션 API決定").unwrap();
        assert_eq!(q.words.as_deref(), Some("\"API\""));
        assert_eq!(q.runs.as_deref(), Some("\"마이 이그 그레 레이 이션\" AND \"決定\""));
        assert!(q.marks.contains(&Mark::Run("決定".into())));
    }

    #[test]
    fn identifiers_split_as_the_index_splits_them() {
        let q = parse("test_login src/auth.rs").unwrap();
        assert_eq!(q.words.as_deref(), Some("\"test login\" AND \"src auth rs\""));
    }
}
