//! The sensitive-data filter: every string the daemon keeps, writes or prints into the
//! agent's context passes through [`redact`] first. A match becomes `[REDACTED:<kind>]`;
//! `<private>…</private>` spans are dropped whole (nested ones with them; `<private >` too).
//!
//! The rules follow gitleaks' default configuration (`config/gitleaks.toml` of gitleaks
//! v8.30.1, 222 rules) and trufflehog's detectors for the formats gitleaks lacks or finds
//! only after a service's name:
//!
//! - private keys: PEM blocks (cut ones too), base64-encoded PEM (a kubeconfig's
//!   `client-key-data`), PuTTY keys, age secret keys, 64 hexadecimal digits (`0x…`) near a
//!   word that says they are a private or secret key ("my private key is 0x4c08…");
//! - token formats with a prefix of their own, wherever they start (as gitleaks' rules for
//!   GitHub, GitLab or Slack tokens do: after a JSON escape `\nghp_…`, in `%22ghp_…`,
//!   `Bearerghp_…`; run into a word, a token must look generated): AWS (`AKIA…` and the other key-id prefixes,
//!   and secret keys after their label), GitHub, GitLab, Atlassian and Bitbucket, Slack
//!   tokens and webhooks, Discord bot tokens and webhooks, Teams webhooks, Telegram bot
//!   tokens, Stripe, Anthropic, OpenAI (and OpenRouter), npm, PyPI, RubyGems, Clojars,
//!   NuGet, Docker Hub, Google API keys and OAuth tokens (`ya29.`, `GOCSPX-`, `1//0`), JWTs,
//!   Vault (`hvs.`, `hvb.`, `hvr.`; `s.` near the word "vault"), Hugging Face, SendGrid,
//!   Twilio (`SK…`; `AC…` near "twilio"), Mailgun, Mailchimp, Shopify, DigitalOcean,
//!   Doppler, Databricks, Grafana, Linear, Postman, PlanetScale, Pulumi, Sentry, Square,
//!   New Relic, Heroku, Fly.io, Netlify, Supabase, Figma, Airtable, Cloudflare, Alibaba,
//!   Tencent, Adafruit, Terraform Cloud, Groq, xAI, Replicate, Perplexity, LangSmith,
//!   Pinecone, 1Password, Artifactory, Dynatrace, EasyPost, Brevo, Notion, Sourcegraph,
//!   SonarQube, Buildkite, CircleCI, Tailscale, Mapbox, Prefect, Shippo, Duffel, OpenShift,
//!   Facebook, Azure (connection-string keys, AD client secrets);
//! - credentials in URLs (`scheme://user:PASS@`, `redis://:PASS@`, `https://TOKEN@`),
//!   signed URLs' signatures (an Azure SAS `sig=`, `X-Amz-Signature`), `Authorization` and
//!   `Bearer` credentials, Digest's `response=`, session cookies in `Cookie` and
//!   `Set-Cookie` headers;
//! - passwords given to well-known commands (`curl -u user:PASS`, `docker login -p`,
//!   `redis-cli -a`, `redis-cli AUTH PASS`, `mysql -pPASS`, `sshpass -p`, `htpasswd -b`,
//!   `security add-generic-password -w`, `npm adduser -p`, `vercel -t`, `pulumi config set
//!   --secret KEY VALUE`, …; see `commands`), piped into them (`echo PASS | docker login
//!   --password-stdin`) or given as a here-string (`gh auth login --with-token <<< TOKEN`);
//! - base64 decoded where it is given (`echo <b64> | base64 -d`, `base64 -D <<< <b64>`,
//!   `openssl base64 -d`, `atob("…")`, `b64decode("…")`), and hexadecimal (`xxd -r -p`,
//!   `bytes.fromhex("…")`), when what it decodes to holds a secret: it is masked as the
//!   kind of that secret;
//! - options, environment variables and keys that name a credential, with their value:
//!   `--token VALUE`, `--api-key=VALUE`, `-storepass VALUE`, `-passout pass:VALUE`,
//!   `DB_PASS=…`, `SECRET_KEY_BASE=…`, `"auth": "…"` (a docker `config.json`),
//!   `<password>…</password>`, `.netrc`, `.pgpass` lines, a YAML block scalar (`secret: |`
//!   and its lines), a wallet's recovery phrase after its name (`MNEMONIC='abandon …'`);
//!   and in prose ("the password hunter2hunter2", "my API key is …", "token Tk12345678d"),
//!   a password's name in other languages and scripts too ("пароль: …", "密码是…",
//!   "パスワードは …", "비밀번호: …", "Passwort: …").
//!
//! The rules read a text twice: as it is seen, then as it is written. As it is seen (see
//! `view`), look-alike letters are read as the Latin ones they look like (`ｇｈｐ＿…`, a
//! Cyrillic `А` in `AKIA…`), escapes as what they spell (`\u0067hp_…`), and the pieces of a
//! string as one (`"ghp_abc" + "def…"`, a token wrapped across lines); what is found there
//! is masked where it stands in the text, escapes and glue with it.
//!
//! Near-misses are kept: commit hashes, UUIDs, base64 images, colours, references
//! (`$TOKEN`, `${{ secrets.X }}`, `env:PASS`, `--token-file PATH`, `--password-stdin`),
//! placeholders (`<token>`, `***`), names that name no secret (`KEY_FILE`, `max_tokens`,
//! `public_key`) and code (`let token = lexer.next()`, `password: string`).
//!
//! Redaction is idempotent: a mask is never taken for a secret again (nor is a prefix such
//! as `Bearer` before one), and [`Redactor::redact`] repeats its rules until nothing
//! changes, so `redact(redact(x)) == redact(x)` and [`finds`] is false on redacted text.
//! What follows a mask is still read: a password's mask stands for its name
//! (`[REDACTED:password] hunter2hunter2`), and a mask where a header's credential stands
//! hides nothing after it.
//!
//! [`Redactor::spans`] says where in a text redaction changes it: a text derived from
//! another (markdown as it reads) can have its secrets masked in the text it came from.

mod commands;
mod output;
mod rules;
mod stdin;
mod values;
mod view;

use regex::{Captures, Match, Regex, RegexBuilder};
use std::borrow::Cow;
use std::collections::HashMap;
use std::ops::Range;
use std::sync::{Arc, OnceLock, RwLock};

/// What a secret of `kind` becomes.
pub fn mask(kind: &str) -> String {
    format!("[REDACTED:{kind}]")
}

/// A secret a rule found: where it is, and its kind when it is not the rule's.
#[derive(Debug)]
struct Hit {
    range: Range<usize>,
    kind: Option<Cow<'static, str>>,
}

/// Decides what of a match is secret (see `rules`).
type Check = fn(&Captures<'_>, &mut Vec<Hit>);

/// Finds the secrets of a text itself (see `rules::Spec::scan`).
type Scan = fn(&str, &mut Vec<Hit>);

/// The secret of a built-in rule's match: its group `s` (or `s2`, … in other
/// alternatives).
fn secret<'h>(c: &Captures<'h>) -> Option<Match<'h>> {
    ["s", "s2", "s3", "s4", "s5", "s6"].iter().find_map(|n| c.name(n))
}

#[derive(Debug, Clone)]
struct Rule {
    kind: String,
    /// The pattern, compiled the first time the rule runs: most rules wait for a keyword
    /// that most texts never hold, and the compiled automata of all of them take a daemon's
    /// whole memory budget (about 17 MB for 145 rules).
    pattern: String,
    re: OnceLock<Regex>,
    /// Indices in the prefilter of the words one of which a match holds; none: always run.
    keywords: Vec<usize>,
    check: Option<Check>,
    /// Reads the text itself, with no pattern.
    scan: Option<Scan>,
    /// The user's rules take their whole match.
    whole: bool,
    /// Shorter texts cannot hold a match (for a rule without keywords).
    min_len: usize,
    /// The check sees all of a match: the search goes on after it.
    consumes: bool,
    /// A token right after a letter or a digit must look generated.
    glued: bool,
    /// The secret is encoded, a secret if what it decodes to holds one.
    decoded: Option<rules::Encoding>,
}

/// The rules' keywords (any case): a rule none of whose words occurs is not run. One
/// search for all of them (the longest first at a place), started again one character
/// after each find, so that every place where words start is seen; the words that start
/// there are the one found and its prefixes. Words in other scripts (`пароль`, `密码`) have
/// a search of their own, in Unicode's cases, run only on a text that is not all ASCII.
#[derive(Debug, Clone)]
struct Keywords {
    re: Regex,
    wide: Option<Regex>,
    index: HashMap<String, usize>,
    /// For each word, itself and the words that are prefixes of it.
    prefixes: Vec<Vec<usize>>,
}

impl Keywords {
    fn new(words: &[&str]) -> Self {
        let pattern = |ascii: bool| {
            let mut sorted: Vec<&str> = words.iter().copied().filter(|w| w.is_ascii() == ascii).collect();
            sorted.sort_by_key(|w| std::cmp::Reverse(w.len()));
            sorted.iter().map(|w| regex::escape(w)).collect::<Vec<_>>().join("|")
        };
        let re =
            RegexBuilder::new(&pattern(true)).case_insensitive(true).unicode(false).build().expect("keyword prefilter");
        let wide = words
            .iter()
            .any(|w| !w.is_ascii())
            .then(|| RegexBuilder::new(&pattern(false)).case_insensitive(true).build().expect("keyword prefilter"));
        let index = words.iter().enumerate().map(|(i, w)| (w.to_string(), i)).collect();
        let prefixes = words.iter().map(|w| (0..words.len()).filter(|&j| w.starts_with(words[j])).collect()).collect();
        Self { re, wide, index, prefixes }
    }

    /// Which words occur in `text`.
    fn find(&self, text: &str) -> Vec<bool> {
        let mut found = vec![false; self.prefixes.len()];
        let mut pos = 0;
        while pos <= text.len() {
            let Some(m) = self.re.find_at(text, pos) else { break };
            // The words are ASCII and short: lower-cased on the stack.
            let mut buf = [0u8; 64];
            let word = match buf.get_mut(..m.len()) {
                Some(b) => {
                    b.copy_from_slice(m.as_str().as_bytes());
                    b.make_ascii_lowercase();
                    std::str::from_utf8(b).unwrap_or("")
                }
                None => "",
            };
            self.mark(word, &mut found);
            pos = next_char(text, m.start());
        }
        if let Some(wide) = self.wide.as_ref().filter(|_| !text.is_ascii()) {
            let mut pos = 0;
            while pos <= text.len() {
                let Some(m) = wide.find_at(text, pos) else { break };
                self.mark(&m.as_str().to_lowercase(), &mut found);
                pos = next_char(text, m.start());
            }
        }
        found
    }

    /// Marks `word` (lower-case) and the words that are prefixes of it as found.
    fn mark(&self, word: &str, found: &mut [bool]) {
        if let Some(&i) = self.index.get(word) {
            for &j in &self.prefixes[i] {
                found[j] = true;
            }
        }
    }
}

impl Rule {
    /// The compiled pattern. A built-in pattern that does not compile is a bug every test
    /// of the rules would show (`every_built_in_rule_compiles`).
    fn re(&self) -> &Regex {
        self.re.get_or_init(|| Regex::new(&self.pattern).unwrap_or_else(|e| panic!("built-in rule {}: {e}", self.kind)))
    }
}

/// The filter: the built-in rules and any the user added.
#[derive(Debug)]
pub struct Redactor {
    rules: Vec<Rule>,
    keywords: Keywords,
    /// For each keyword, the rules that wait for it: the words a text holds are few, and
    /// asking each rule about each of its words (some have 55) was a tenth of the time.
    rules_of: Vec<Vec<usize>>,
    /// `<private>` and `</private>` (any case, spaces before the `>`).
    private: Regex,
    masks: Regex,
}

/// A place where redaction changed a text: the range of the text it replaced, and what it
/// put there (a mask; nothing for a private span).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Span {
    /// Byte range in the text given to [`Redactor::spans`].
    pub range: Range<usize>,
    /// `[REDACTED:<kind>]`, or empty.
    pub replacement: String,
}

/// Where each position of the text being redacted was in the text given, and the changes
/// made so far in the given text's terms: for [`Redactor::spans`].
struct Track {
    /// Where a range starting at a position starts in the original (inside a mask: where
    /// what it replaced started).
    start: Vec<usize>,
    /// Where a range ending at a position ends in the original (inside a mask: where what
    /// it replaced ended).
    end: Vec<usize>,
    /// The changes, in the original's terms.
    spans: Vec<Span>,
}

impl Track {
    fn new(len: usize) -> Self {
        Self { start: (0..=len).collect(), end: (0..=len).collect(), spans: Vec::new() }
    }

    /// Records that `edits` (in order, apart, of the current text of `len` bytes) were
    /// replaced.
    fn replaced(&mut self, len: usize, edits: &[(Range<usize>, &str)]) {
        let (mut start, mut end) = (Vec::with_capacity(len + 1), Vec::with_capacity(len + 1));
        let mut last = 0;
        for (r, with) in edits {
            start.extend_from_slice(&self.start[last..r.start]);
            end.extend_from_slice(&self.end[last..r.start]);
            let mut orig = self.start[r.start]..self.end[r.end];
            // A new change takes in the older ones it covers (a mask inside a private span),
            // and those it overlaps (in a view, two characters read from one: `ﬁ`).
            while let Some(i) = self.spans.iter().position(|s| s.range.end > orig.start && s.range.start < orig.end) {
                let old = self.spans.swap_remove(i);
                orig = orig.start.min(old.range.start)..orig.end.max(old.range.end);
            }
            for i in 0..with.len() {
                start.push(orig.start);
                end.push(if i == 0 { self.end[r.start] } else { orig.end });
            }
            self.spans.push(Span { range: orig, replacement: with.to_string() });
            last = r.end;
        }
        start.extend_from_slice(&self.start[last..]);
        end.extend_from_slice(&self.end[last..]);
        self.start = start;
        self.end = end;
    }
}

/// Passes at most: each pass that changes the text takes out characters that are in no
/// mask, so repeating ends; one pass is what the corpus needs, this bound is a backstop.
const MAX_PASSES: usize = 64;

/// `\b` in the built-in rules is ASCII's word boundary: Unicode's stops the fast engines on
/// non-ASCII text (prose, build output with `✓`), and tokens are ASCII.
fn ascii_boundaries(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len() + 16);
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('b') => out.push_str(r"(?-u:\b)"),
            Some(n) => {
                out.push(c);
                out.push(n);
            }
            None => out.push(c),
        }
    }
    out
}

/// A kind as a mask can hold it (and the mask rule can find it again).
fn clean_kind(kind: &str) -> String {
    kind.chars().map(|c| if c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-') { c } else { '-' }).collect()
}

impl Redactor {
    /// The built-in rules plus `extra` (kind, regex) pairs; an invalid pattern is an error
    /// naming it. A user's rule takes its whole match.
    pub fn new(extra: &[(String, String)]) -> Result<Self, String> {
        let mut words: Vec<&'static str> = Vec::new();
        let mut rules = Vec::new();
        for spec in rules::built_in() {
            let keywords = spec
                .keywords
                .iter()
                .map(|w| match words.iter().position(|x| x == w) {
                    Some(i) => i,
                    None => {
                        words.push(w);
                        words.len() - 1
                    }
                })
                .collect();
            rules.push(Rule {
                kind: spec.kind.into(),
                pattern: ascii_boundaries(&spec.pattern),
                re: OnceLock::new(),
                keywords,
                check: spec.check,
                scan: spec.scan,
                whole: false,
                min_len: spec.min_len,
                consumes: spec.consumes,
                glued: spec.glued,
                decoded: spec.decoded,
            });
        }
        for (kind, pat) in extra {
            let re = Regex::new(pat).map_err(|e| format!("redaction pattern {kind:?} is not a valid regex: {e}"))?;
            rules.push(Rule {
                kind: clean_kind(kind),
                pattern: pat.clone(),
                re: OnceLock::from(re),
                keywords: Vec::new(),
                check: None,
                scan: None,
                whole: true,
                min_len: 0,
                consumes: false,
                glued: false,
                decoded: None,
            });
        }
        let mut rules_of = vec![Vec::new(); words.len()];
        for (i, r) in rules.iter().enumerate() {
            for &k in &r.keywords {
                rules_of[k].push(i);
            }
        }
        Ok(Self {
            rules,
            keywords: Keywords::new(&words),
            rules_of,
            private: Regex::new(r"(?i)</?private\s*>").expect("private rule"),
            masks: Regex::new(r"\[REDACTED:[A-Za-z0-9_.-]*\]").expect("mask rule"),
        })
    }

    /// The same rules with none of the built-in ones compiled (each is again the first time
    /// a text needs it), and no search's cache kept (a clone of a compiled regex starts with
    /// none): see [`release_compiled`].
    fn uncompiled(&self) -> Redactor {
        let rules = self
            .rules
            .iter()
            .map(|r| {
                let mut r = r.clone();
                if !r.whole {
                    r.re = OnceLock::new();
                }
                r
            })
            .collect();
        Redactor {
            rules,
            keywords: self.keywords.clone(),
            rules_of: self.rules_of.clone(),
            private: self.private.clone(),
            masks: self.masks.clone(),
        }
    }

    /// `text` with every secret replaced by `[REDACTED:<kind>]` and private spans dropped.
    /// Borrowed when nothing was found. Redacting the result again changes nothing.
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        // Escape sequences and control characters go first: `DB_PASSWORD=\x1b[0mhunter2` or a
        // token split by a BEL would otherwise pass the rules and come back whole once the
        // text is made printable. What is kept is printable anyway.
        let mut out = crate::printable::text(text);
        for _ in 0..MAX_PASSES {
            match self.pass(&out, None) {
                Some(next) => out = Cow::Owned(next),
                None => break,
            }
        }
        out
    }

    /// Where [`Redactor::redact`] changes `text`: the ranges of `text` it masks or drops,
    /// in order, apart, each with what it becomes. For a text derived from another (markdown
    /// as it reads) whose secrets are to be masked in the other. `text` is taken as it is:
    /// control and invisible characters are not taken out first, as `redact` does (positions
    /// would move); give it printable text.
    pub fn spans(&self, text: &str) -> Vec<Span> {
        let mut track = Track::new(text.len());
        let mut cur = Cow::Borrowed(text);
        for _ in 0..MAX_PASSES {
            match self.pass(&cur, Some(&mut track)) {
                Some(next) => cur = Cow::Owned(next),
                None => break,
            }
        }
        let mut spans = track.spans;
        spans.sort_by_key(|s| s.range.start);
        spans
    }

    /// Whether `text` holds anything the filter would take out.
    pub fn finds(&self, text: &str) -> bool {
        // Made printable is not "found": only what the rules take out is.
        self.redact(text) != crate::printable::text(text)
    }

    /// Every rule once, in order, on printable text ([`Redactor::redact`] takes out the
    /// characters no one sees first, so that one cannot split a token: `ghp_\u{200B}…`);
    /// `None` when nothing changed.
    fn pass(&self, text: &str, mut track: Option<&mut Track>) -> Option<String> {
        let mut cur = Cow::Borrowed(text);
        let private = self.private_spans(&cur);
        if !private.is_empty() {
            let edits: Vec<(Range<usize>, &str)> = private.into_iter().map(|r| (r, "")).collect();
            cur = Cow::Owned(replace(&cur, &edits, track.as_deref_mut()));
        }
        // The text as it reads (look-alikes, escapes, pieces of a string joined: see
        // `view`) first, so that a token split in two is found whole before a piece of it is
        // masked alone; what it finds is masked where it stands in the text.
        let read = self.read_as_seen(&cur);
        if !read.is_empty() {
            // What the rules find in the text as written goes with it: a view that joined a
            // line to the next (a token wrapped) may have taken the start of the next line's
            // own secret into the first one's mask, and what is left of it would be found
            // no more (`ghp_…⏎sk_live_…`).
            let wrapped = read.iter().any(|s| cur.get(s.range.clone()).is_some_and(|t| t.contains('\n')));
            let merged = if wrapped { union(read, self.direct_spans(&cur)) } else { read };
            let edits: Vec<(Range<usize>, &str)> =
                merged.iter().map(|s| (s.range.clone(), s.replacement.as_str())).collect();
            cur = Cow::Owned(replace(&cur, &edits, track.as_deref_mut()));
        }
        cur = self.run_rules(cur, track);
        match cur {
            Cow::Owned(s) if s != text => Some(s),
            _ => None,
        }
    }

    /// Every rule once, in order, on `cur`, each on what the ones before it left.
    fn run_rules<'a>(&self, mut cur: Cow<'a, str>, mut track: Option<&mut Track>) -> Cow<'a, str> {
        let mut wanted: Vec<bool> = self.rules.iter().map(|r| r.keywords.is_empty()).collect();
        for (word, _) in self.keywords.find(&cur).iter().enumerate().filter(|(_, f)| **f) {
            for &i in &self.rules_of[word] {
                wanted[i] = true;
            }
        }
        for (r, _) in self.rules.iter().zip(&wanted).filter(|(_, w)| **w) {
            if cur.len() < r.min_len {
                continue;
            }
            let hits = self.apply(r, &cur);
            if !hits.is_empty() {
                let masks: Vec<String> = hits.iter().map(|h| mask(h.kind.as_deref().unwrap_or(&r.kind))).collect();
                let edits: Vec<(Range<usize>, &str)> =
                    hits.iter().zip(&masks).map(|(h, m)| (h.range.clone(), m.as_str())).collect();
                cur = Cow::Owned(replace(&cur, &edits, track.as_deref_mut()));
            }
        }
        cur
    }

    /// What the rules find in `text` as it reads (see `view`), in the text's terms: the
    /// ranges to mask, in order, apart. None when the text reads as it is written.
    fn read_as_seen(&self, text: &str) -> Vec<Span> {
        let mut spans = Vec::new();
        for v in view::build(text) {
            let mut track = Track { start: v.start, end: v.end, spans: Vec::new() };
            self.run_rules(Cow::Owned(v.text), Some(&mut track));
            spans.append(&mut track.spans);
        }
        spans.sort_by_key(|s| s.range.start);
        spans
    }

    /// What the rules find in `text` as it is written, in order, apart (not applied).
    fn direct_spans(&self, text: &str) -> Vec<Span> {
        let mut track = Track::new(text.len());
        self.run_rules(Cow::Borrowed(text), Some(&mut track));
        let mut spans = track.spans;
        spans.sort_by_key(|s| s.range.start);
        spans
    }

    /// The private spans of `text`: from a `<private>` to its own `</private>` (nested ones
    /// inside it go with it), or to the end when it is not closed. A `</private>` that
    /// closes nothing hides nothing and is kept.
    fn private_spans(&self, text: &str) -> Vec<Range<usize>> {
        let mut out = Vec::new();
        if !text.contains('<') {
            return out;
        }
        let mut depth = 0usize;
        let mut start = 0;
        for m in self.private.find_iter(text) {
            let close = m.as_str().as_bytes().get(1) == Some(&b'/');
            if !close {
                if depth == 0 {
                    start = m.start();
                }
                depth += 1;
            } else if depth > 0 {
                depth -= 1;
                if depth == 0 {
                    out.push(start..m.end());
                }
            }
        }
        if depth > 0 {
            out.push(start..text.len());
        }
        out
    }

    /// The secrets `r` finds in `text`, in order, apart.
    fn apply(&self, r: &Rule, text: &str) -> Vec<Hit> {
        let masks: Vec<Range<usize>> = if text.contains("[REDACTED:") {
            self.masks.find_iter(text).map(|m| m.range()).collect()
        } else {
            Vec::new()
        };
        let mut found: Vec<Hit> = Vec::new();
        let mut hits = Vec::new();
        if let Some(scan) = r.scan {
            scan(text, &mut hits);
            hits.sort_by_key(|h| h.range.start);
            let mut done = 0;
            for h in hits {
                if h.range.start >= done && fits(text, &masks, &h.range) {
                    done = h.range.end;
                    found.push(h);
                }
            }
            return found;
        }
        let mut pos = 0;
        // Where the last secret ended.
        let mut done = 0;
        // Looking again one character into a match that held no secret finds the secrets an
        // overlapping match holds; on a long line of such matches (`key=key=key=…`) that
        // would take quadratic time, so past a budget the search goes on after the match.
        let mut budget = 8 * text.len() + 4096;
        while pos <= text.len() {
            let Some(c) = r.re().captures_at(text, pos) else { break };
            let Some(m) = c.get(0) else { break };
            budget = budget.saturating_sub(m.end() - pos);
            // A match that starts inside a mask reads its kind as a name (`[REDACTED:secret]: x`).
            if inside_mask(&masks, m.start()) {
                pos = next_char(text, m.start());
                continue;
            }
            match r.check {
                _ if r.decoded.is_some() => self.decoded(r.decoded, &c, &mut hits),
                Some(check) => check(&c, &mut hits),
                None => {
                    let s = if r.whole { m } else { secret(&c).unwrap_or(m) };
                    hits.push(Hit { range: s.range(), kind: None });
                }
            }
            // `foosk_live_…` is a key only if it looks like one; `task_live_notifications`
            // is a name.
            if r.glued && text[..m.start()].chars().next_back().is_some_and(|ch| ch.is_ascii_alphanumeric()) {
                hits.retain(|h| text.get(h.range.clone()).is_some_and(values::strongly_random));
            }
            let mut resume = None;
            for h in hits.drain(..) {
                let Range { start, end } = h.range;
                if start < done || !fits(text, &masks, &h.range) {
                    continue;
                }
                done = end;
                resume = Some(end);
                found.push(h);
            }
            // After a secret, on from its end (what followed it may start another); after
            // a match that held none, on from its second character (an alternative may).
            pos = match resume {
                _ if r.consumes || budget == 0 => m.end().max(resume.unwrap_or(0)).max(next_char(text, m.start())),
                Some(end) if end > m.start() => end,
                _ => next_char(text, m.start()),
            };
        }
        found
    }
}

thread_local! {
    /// How deep in text decoded from base64 (or hex) the filter is (see [`Redactor::decoded`]).
    static DECODING: std::cell::Cell<u8> = const { std::cell::Cell::new(0) };
}

/// Base64 inside base64 is read this deep.
const MAX_DECODING: u8 = 3;

impl Redactor {
    /// An encoded secret of a rule whose secret is decoded where it is given (`echo <b64> |
    /// base64 -d`, `echo <hex> | xxd -r -p`): what it decodes to is redacted in turn, and if
    /// anything in it is a secret, so is the base64 (or hex), masked as the kind of the first
    /// one found. What is decoded
    /// is shorter than the base64 and is read only a few levels deep, so the time stays
    /// linear.
    fn decoded(&self, encoding: Option<rules::Encoding>, c: &Captures<'_>, hits: &mut Vec<Hit>) {
        let Some(s) = secret(c) else { return };
        let mut body = s.as_str();
        // A here-document's base64 ends before its delimiter's line.
        if let Some(eof) = c.name("eof") {
            let mut at = 0;
            for line in body.split_inclusive('\n') {
                if line.trim() == eof.as_str() {
                    break;
                }
                at += line.len();
            }
            body = &body[..at];
        }
        let body = body.trim_end();
        let compact: String = body.chars().filter(|ch| !ch.is_whitespace()).collect();
        if compact.len() < 12 {
            return;
        }
        let bytes = match encoding {
            Some(rules::Encoding::Hex | rules::Encoding::HexBare) => values::hex_decode(&compact),
            Some(rules::Encoding::Reversed) => compact.chars().rev().collect::<String>().into_bytes(),
            // Spaces kept: `cnffjbeq: uhagre2` reads `password: hunter2`.
            Some(rules::Encoding::Rot13) => body.chars().map(values::rot13).collect::<String>().into_bytes(),
            Some(rules::Encoding::CharCodes) => compact
                .split(',')
                .filter_map(|n| n.parse::<u32>().ok().and_then(char::from_u32))
                .collect::<String>()
                .into_bytes(),
            _ => values::base64_decode(&compact),
        };
        let bare = matches!(encoding, Some(rules::Encoding::Base64Bare | rules::Encoding::HexBare));
        if bare && !reads_as_text(&bytes) {
            return;
        }
        let decoded = String::from_utf8_lossy(&bytes);
        let decoded = crate::printable::text(&decoded);
        let depth = DECODING.with(|d| d.get());
        if depth >= MAX_DECODING {
            return;
        }
        DECODING.with(|d| d.set(depth + 1));
        let spans = self.spans(&decoded);
        DECODING.with(|d| d.set(depth));
        let Some(first) = spans.first() else { return };
        let kind = first
            .replacement
            .strip_prefix("[REDACTED:")
            .and_then(|k| k.strip_suffix(']'))
            .filter(|k| !k.is_empty())
            .unwrap_or("secret");
        hits.push(Hit { range: s.start()..s.start() + body.len(), kind: Some(Cow::Owned(kind.to_string())) });
    }
}

/// Whether bytes decoded from base64 found alone read as text: UTF-8, with no control
/// characters but line breaks and tabs, and letters in it. Most base64 in the wild (ids,
/// hashes, images) decodes to bytes and is left alone.
fn reads_as_text(bytes: &[u8]) -> bool {
    std::str::from_utf8(bytes).is_ok_and(|t| {
        t.chars().all(|c| !c.is_control() || matches!(c, '\n' | '\r' | '\t'))
            && t.bytes().any(|b| b.is_ascii_alphabetic())
    })
}

/// Spans of two sets in one, in order, apart: overlapping or touching ones become one,
/// masked as the first of them.
fn union(a: Vec<Span>, b: Vec<Span>) -> Vec<Span> {
    let mut all: Vec<Span> = a.into_iter().chain(b).collect();
    all.sort_by_key(|s| (s.range.start, std::cmp::Reverse(s.range.end)));
    let mut out: Vec<Span> = Vec::with_capacity(all.len());
    for s in all {
        match out.last_mut() {
            Some(last) if s.range.start <= last.range.end => last.range.end = last.range.end.max(s.range.end),
            _ => out.push(s),
        }
    }
    out
}

/// `text` with each of `edits` (ranges in order, apart) replaced, recorded in `track`.
fn replace(text: &str, edits: &[(Range<usize>, &str)], track: Option<&mut Track>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for (r, with) in edits {
        out.push_str(&text[last..r.start]);
        out.push_str(with);
        last = r.end;
    }
    out.push_str(&text[last..]);
    if let Some(t) = track {
        t.replaced(text.len(), edits);
    }
    out
}

/// Whether a hit's range is one to mask in `text`: not empty, on character boundaries, clear
/// of the masks already there.
fn fits(text: &str, masks: &[Range<usize>], r: &Range<usize>) -> bool {
    r.start < r.end
        && r.end <= text.len()
        && text.is_char_boundary(r.start)
        && text.is_char_boundary(r.end)
        && clear_of_masks(masks, r, text)
}

/// The position after the character at `at` (past the end when there is none).
fn next_char(text: &str, at: usize) -> usize {
    text[at..].chars().next().map_or(text.len() + 1, |ch| at + ch.len_utf8())
}

/// Whether `at` is inside one of `masks` (in order, apart), after its first character.
fn inside_mask(masks: &[Range<usize>], at: usize) -> bool {
    let i = masks.partition_point(|m| m.end <= at);
    masks.get(i).is_some_and(|m| m.start < at)
}

/// Whether `r` may be masked: it cuts no mask in two, and if it holds masks, something
/// else in it is a secret's (a letter or a digit): `[REDACTED:x]` is never taken again,
/// nor `_[REDACTED:x]`, but `abc_[REDACTED:x]` goes whole.
fn clear_of_masks(masks: &[Range<usize>], r: &Range<usize>, text: &str) -> bool {
    // The masks that end after `r` starts and start before it ends (`masks` are in order).
    let first = masks.partition_point(|m| m.end <= r.start);
    let last = masks.partition_point(|m| m.start < r.end);
    let inside = masks.get(first..last).unwrap_or(&[]);
    if inside.iter().any(|m| m.start < r.start || m.end > r.end) {
        return false;
    }
    if inside.is_empty() {
        return true;
    }
    let mut p = r.start;
    for m in inside {
        if text[p..m.start].chars().any(char::is_alphanumeric) {
            return true;
        }
        p = m.end;
    }
    text[p..r.end].chars().any(char::is_alphanumeric)
}

static GLOBAL: OnceLock<RwLock<Arc<Redactor>>> = OnceLock::new();

/// Compiling the rules takes milliseconds: done on first use, not at start-up.
fn global() -> &'static RwLock<Arc<Redactor>> {
    GLOBAL.get_or_init(|| RwLock::new(Arc::new(Redactor::new(&[]).expect("built-in rules compile"))))
}

fn current() -> Arc<Redactor> {
    match global().read() {
        Ok(r) => r.clone(),
        Err(poisoned) => poisoned.into_inner().clone(),
    }
}

/// Checks extra patterns as [`Redactor::new`] would take them, without compiling the
/// built-in rules (a configuration check must stay cheap): the first bad one's error.
pub fn check_patterns(extra: &[(String, String)]) -> Result<(), String> {
    for (kind, pat) in extra {
        Regex::new(pat).map_err(|e| format!("redaction pattern {kind:?} is not a valid regex: {e}"))?;
    }
    Ok(())
}

/// Sets the filter used by [`redact`]: the built-in rules plus `extra`. On an invalid
/// pattern the filter in force stays and the error names the pattern.
pub fn install(extra: &[(String, String)]) -> Result<(), String> {
    if extra.is_empty() && GLOBAL.get().is_none() {
        return Ok(()); // the built-in rules, compiled when first needed
    }
    let r = Arc::new(Redactor::new(extra)?);
    match global().write() {
        Ok(mut g) => *g = r,
        Err(poisoned) => *poisoned.into_inner() = r,
    }
    Ok(())
}

/// Lets go of the compiled rules and their searches' caches: each rule compiles again
/// the next time a text needs it (a millisecond or so). For a process gone idle: the
/// automata of the rules a day's texts ran take several MB that nothing needs until the
/// next text. A redaction running meanwhile finishes with the rules it started with.
pub fn release_compiled() {
    let Some(g) = GLOBAL.get() else { return };
    let fresh = Arc::new(current().uncompiled());
    match g.write() {
        Ok(mut w) => *w = fresh,
        Err(poisoned) => *poisoned.into_inner() = fresh,
    }
}

/// `text` with every secret replaced by `[REDACTED:<kind>]`, through the installed filter
/// (the built-in rules if none was installed).
pub fn redact(text: &str) -> Cow<'_, str> {
    current().redact(text)
}

/// Whether `text` holds anything [`redact`] would take out.
pub fn finds(text: &str) -> bool {
    current().finds(text)
}

/// Whether `command` prints a secret (`pass show`, `pwgen`, `echo $TOKEN`, …): what it
/// printed is to be redacted with it, by [`redact_output`].
pub fn prints_secret(command: &str) -> bool {
    output::prints_secret_anywhere(command)
}

/// `output` redacted as what `command` printed, for a command that [`prints_secret`] (the
/// caller asks that once, for every output of the command): the rules that read a
/// command's output see the command before it (`pass show db` then a line holding only the
/// password), which they cannot in the output alone.
pub fn redact_output<'a>(command: &str, output: &'a str) -> Cow<'a, str> {
    let command = crate::printable::text(command);
    let printable = crate::printable::text(output);
    let base = command.len() + 1;
    let joined = format!("{command}\n{printable}");
    let mut out = String::with_capacity(printable.len());
    let mut at = base;
    for span in spans(&joined) {
        let start = span.range.start.max(base);
        if span.range.end <= start || start < at {
            continue;
        }
        out.push_str(&joined[at..start]);
        out.push_str(&span.replacement);
        at = span.range.end;
    }
    if at == base {
        return printable;
    }
    out.push_str(&joined[at.min(joined.len())..]);
    Cow::Owned(out)
}

/// Where [`redact`] changes `text` (printable text: see [`Redactor::spans`]), through the
/// installed filter.
pub fn spans(text: &str) -> Vec<Span> {
    current().spans(text)
}

/// Reads extra patterns: one per line, `kind = regex` or a bare regex (kind `custom`);
/// blank lines and `#` comments skipped. Errors name the line.
pub fn parse_patterns(text: &str, source: &str) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (kind, pat) = match line.split_once(" = ") {
            Some((k, p))
                if !k.trim().is_empty()
                    && k.trim().chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') =>
            {
                (k.trim().to_string(), p.trim().to_string())
            }
            _ => ("custom".to_string(), line.to_string()),
        };
        if let Err(e) = Regex::new(&pat) {
            return Err(format!("{source}:{}: {kind}: not a valid regex: {e}", n + 1));
        }
        out.push((kind, pat));
    }
    Ok(out)
}

#[cfg(test)]
mod corpus;
#[cfg(test)]
mod tests;
