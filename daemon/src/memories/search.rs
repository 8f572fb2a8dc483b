//! Full-text search over one scope's memories: BM25 with field weights (a title word counts
//! three times, a tag twice, a content word once), prefix matches at half weight, and an
//! inverted index kept up to date on every change, so a query touches only its terms.

use ccmem_proto::model::memory::Memory;
use std::collections::{BTreeMap, HashMap};

const K1: f32 = 1.2;
const B: f32 = 0.75;
const TITLE_WEIGHT: f32 = 3.0;
const TAG_WEIGHT: f32 = 2.0;
/// A query word this long or longer also matches words it begins (`auth` → `authentication`).
const PREFIX_MIN: usize = 3;
const PREFIX_WEIGHT: f32 = 0.5;
/// Prefix expansion stops after this many vocabulary words, so a one-letter-rich prefix
/// cannot make a query slow.
const PREFIX_TERMS: usize = 64;

/// Documents holding a term, with the term's weighted frequency in each.
type Postings = Vec<(u32, f32)>;

/// The inverted index of one scope. Terms are numbered once, so a document keeps the
/// numbers of its terms (to be removed again) rather than copies of the words.
#[derive(Debug, Default)]
pub struct Index {
    docs: Vec<Option<Doc>>,
    by_slug: HashMap<String, u32>,
    free: Vec<u32>,
    /// Every term ever seen, to its number; sorted, for prefix matches.
    vocabulary: BTreeMap<String, u32>,
    /// Postings by term number.
    postings: Vec<Postings>,
    total_len: f64,
    live: usize,
}

#[derive(Debug)]
struct Doc {
    slug: String,
    len: f32,
    terms: Box<[u32]>,
}

impl Index {
    /// Adds or replaces a memory.
    pub fn put(&mut self, m: &Memory) {
        self.remove(&m.slug);
        let mut tf: HashMap<u32, f32> = HashMap::new();
        let mut len = 0.0;
        let tags = m.tags.iter().map(|t| (t.as_str(), TAG_WEIGHT));
        for (text, weight) in [(m.title.as_str(), TITLE_WEIGHT), (m.content.as_str(), 1.0)].into_iter().chain(tags) {
            for t in tokens(text) {
                let id = self.term(t);
                *tf.entry(id).or_default() += weight;
                len += weight;
            }
        }
        let id = self.free.pop().unwrap_or(self.docs.len() as u32);
        for (t, f) in &tf {
            self.postings[*t as usize].push((id, *f));
        }
        let doc = Doc { slug: m.slug.clone(), len, terms: tf.into_keys().collect() };
        if id as usize == self.docs.len() {
            self.docs.push(Some(doc));
        } else {
            self.docs[id as usize] = Some(doc);
        }
        self.by_slug.insert(m.slug.clone(), id);
        self.total_len += len as f64;
        self.live += 1;
    }

    fn term(&mut self, t: String) -> u32 {
        if let Some(id) = self.vocabulary.get(&t) {
            return *id;
        }
        let id = self.postings.len() as u32;
        self.vocabulary.insert(t, id);
        self.postings.push(Vec::new());
        id
    }

    /// Forgets a memory.
    pub fn remove(&mut self, slug: &str) {
        let Some(id) = self.by_slug.remove(slug) else { return };
        let Some(doc) = self.docs[id as usize].take() else { return };
        for t in doc.terms.iter() {
            self.postings[*t as usize].retain(|(d, _)| *d != id);
        }
        self.total_len -= doc.len as f64;
        self.live -= 1;
        self.free.push(id);
    }

    /// Memories in this index.
    pub fn len(&self) -> usize {
        self.live
    }

    /// Whether the index is empty.
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// BM25 scores of every memory matching any query word, best first, those `keep`
    /// refuses left out; at most `limit`.
    pub fn search(&self, query: &str, limit: usize, keep: impl Fn(&str) -> bool) -> Vec<(String, f32)> {
        if self.live == 0 {
            return Vec::new();
        }
        let n = self.live as f32;
        let avg = (self.total_len / self.live as f64).max(1.0) as f32;
        // Dense: a few thousand floats are cheaper to clear than a hash map is to fill.
        let mut scores = vec![0f32; self.docs.len()];
        let mut words = tokens(query);
        words.sort();
        words.dedup();
        for word in &words {
            let mut terms: Vec<(u32, f32)> = Vec::new();
            if let Some(id) = self.vocabulary.get(word) {
                terms.push((*id, 1.0));
            }
            if word.chars().count() >= PREFIX_MIN {
                terms.extend(
                    self.vocabulary
                        .range::<str, _>((std::ops::Bound::Excluded(word.as_str()), std::ops::Bound::Unbounded))
                        .take_while(|(t, _)| t.starts_with(word.as_str()))
                        .take(PREFIX_TERMS)
                        .map(|(_, id)| (*id, PREFIX_WEIGHT)),
                );
            }
            for (term, weight) in terms {
                let postings = &self.postings[term as usize];
                if postings.is_empty() {
                    continue;
                }
                let df = postings.len() as f32;
                let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
                for &(id, tf) in postings {
                    let Some(doc) = &self.docs[id as usize] else { continue };
                    let norm = tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * doc.len / avg));
                    scores[id as usize] += weight * idf * norm;
                }
            }
        }
        let mut hits: Vec<(&str, f32)> = scores
            .into_iter()
            .enumerate()
            .filter(|(_, s)| *s > 0.0)
            .filter_map(|(id, s)| self.docs[id].as_ref().map(|d| (d.slug.as_str(), s)))
            .filter(|(slug, _)| keep(slug))
            .collect();
        let by_score = |a: &(&str, f32), b: &(&str, f32)| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0));
        // Only the best `limit` need ordering.
        if hits.len() > limit {
            hits.select_nth_unstable_by(limit, by_score);
            hits.truncate(limit);
        }
        hits.sort_by(by_score);
        hits.into_iter().map(|(s, v)| (s.to_string(), v)).collect()
    }
}

/// Lowercase words of letters and digits; a plural `s` is dropped so `tokens` finds `token`.
pub fn tokens(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| stem(&w.to_lowercase()))
        .filter(|w| !STOP.contains(&w.as_str()))
        .collect()
}

/// A light stemmer: plural `s` dropped, and a final consonant-`y` spelt `ie`, so that
/// `query`, `queries`; `cookie`, `cookies`; `library`, `libraries` meet.
fn stem(w: &str) -> String {
    let mut w = w.to_string();
    if w.len() > 3 && w.ends_with('s') && !w.ends_with("ss") && !w.ends_with("us") && !w.ends_with("is") {
        w.pop();
    }
    let b = w.as_bytes();
    if b.len() > 2
        && b[b.len() - 1] == b'y'
        && !b"aeiouy".contains(&b[b.len() - 2])
        && b[b.len() - 2].is_ascii_alphabetic()
    {
        w.pop();
        w.push_str("ie");
    }
    w
}

/// Words too common to tell memories apart.
const STOP: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "in", "into", "is", "it", "of", "on", "or", "that",
    "the", "this", "to", "was", "we", "with",
];

/// A line of `content` around the first query word found, at most about 160 characters.
pub fn snippet(content: &str, query: &str) -> String {
    let words = tokens(query);
    let lower = content.to_lowercase();
    let at = words.iter().filter_map(|w| lower.find(w.as_str())).min();
    let flat = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    match at {
        // `lower` may differ in byte length from `content` for some scripts: only use the
        // position when it falls on a boundary of the original.
        Some(i) if i < content.len() && content.is_char_boundary(i) => {
            let start = content[..i].char_indices().rev().nth(60).map_or(0, |(p, _)| p);
            let end = content[i..].char_indices().nth(100).map_or(content.len(), |(p, _)| i + p);
            let mut s = flat(&content[start..end]);
            if start > 0 {
                s.insert_str(0, "… ");
            }
            if end < content.len() {
                s.push_str(" …");
            }
            s
        }
        _ => {
            let s = flat(content);
            match s.char_indices().nth(160) {
                Some((p, _)) => format!("{} …", &s[..p]),
                None => s,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ccmem_proto::model::memory::{MemoryType, Scope};

    fn m(slug: &str, title: &str, tags: &[&str], content: &str) -> Memory {
        let now = chrono::Utc::now();
        Memory {
            slug: slug.into(),
            memory_type: MemoryType::Learning,
            title: title.into(),
            tags: tags.iter().map(|t| t.to_string()).collect(),
            created: now,
            updated: now,
            links: vec![],
            content: content.into(),
            scope: Scope::Project,
        }
    }

    fn index() -> Index {
        let mut i = Index::default();
        i.put(&m("a", "OAuth2 decision", &["auth"], "We use PKCE. Tokens refresh every hour."));
        i.put(&m("b", "Build cache", &["ci"], "The build cache lives in target; tokens are not involved."));
        i.put(&m("c", "Flaky test", &["testing"], "Authentication tests fail when the clock is skewed."));
        i
    }

    #[test]
    fn title_and_tag_words_outrank_content_words() {
        let i = index();
        let hits = i.search("oauth2", 10, |_| true);
        assert_eq!(hits.iter().map(|h| h.0.as_str()).collect::<Vec<_>>(), ["a"]);
        let hits = i.search("token", 10, |_| true);
        assert_eq!(hits.len(), 2, "{hits:?}");
        let hits = i.search("build", 10, |_| true);
        assert_eq!(hits[0].0, "b");
    }

    #[test]
    fn prefixes_plurals_and_filters() {
        let i = index();
        let hits = i.search("auth", 10, |_| true);
        assert_eq!(hits[0].0, "a", "the tag matches exactly: {hits:?}");
        assert!(hits.iter().any(|h| h.0 == "c"), "authentication starts with auth: {hits:?}");
        assert!(i.search("tests", 10, |_| true).iter().any(|h| h.0 == "c"));
        for (a, b) in [("query", "queries"), ("cookie", "cookies"), ("library", "libraries"), ("day", "days")] {
            assert_eq!(tokens(a), tokens(b));
        }
        assert!(i.search("auth", 10, |s| s != "a").iter().all(|h| h.0 != "a"));
        assert!(i.search("the and of", 10, |_| true).is_empty());
        assert!(i.search("", 10, |_| true).is_empty());
    }

    #[test]
    fn replacing_and_removing_keep_the_index_exact() {
        let mut i = index();
        i.put(&m("a", "Session storage", &["storage"], "Cookies."));
        assert!(i.search("oauth2", 10, |_| true).is_empty());
        assert_eq!(i.search("cookies", 10, |_| true)[0].0, "a");
        i.remove("a");
        i.remove("a");
        assert_eq!(i.len(), 2);
        assert!(i.search("cookies", 10, |_| true).is_empty());
        i.put(&m("d", "New", &["x"], "cookies"));
        assert_eq!(i.search("cookie", 10, |_| true)[0].0, "d");
    }

    #[test]
    fn snippets_show_the_match() {
        let long = format!("{} the needle is here {}", "word ".repeat(100), "tail ".repeat(100));
        let s = snippet(&long, "needle");
        assert!(s.contains("needle") && s.starts_with("… ") && s.ends_with(" …"), "{s}");
        assert_eq!(snippet("short\ntext", "nothing"), "short text");
        assert_eq!(snippet("İİİ needle", "needle"), "İİİ needle");
    }
}
