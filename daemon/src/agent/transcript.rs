//! Reads a conversation's transcript as it grows, for what the hook payloads do not carry:
//! the assistant's own words (its last message, decisions and findings), Claude Code's
//! compaction summaries, and prompts a missed hook did not deliver.
//!
//! Incremental and bounded: each read starts where the last one stopped (the offset and the
//! file's identity are kept in the conversation's [`Digest`]), takes whole lines only, and
//! at most [`MAX_READ`] bytes of lines (an over-long line is looked through for its end, not
//! kept), streamed so that memory holds one line (at most
//! [`MAX_LINE`]) and no more than two reads run at once daemon-wide. A file that shrank or was replaced is read again from the
//! start; one that is missing is skipped. Only regular files are read, opened without
//! blocking, so a FIFO or a device named as a transcript cannot hang or flood the daemon.
//! Runs on the blocking pool, never on the project task.

use ccmem_proto::model::session::{truncate_chars, Digest};
use ccmem_proto::model::transcript::{self, Entry};
use std::io::{BufRead, Read, Seek, SeekFrom};
use std::path::Path;

/// Bytes of lines read at most per call; the rest waits for the next event.
pub const MAX_READ: u64 = 64 << 20;
/// Bytes of over-long lines looked through for their end at most per call.
const MAX_SKIP: u64 = 4 * MAX_READ;
/// Characters of the last assistant message kept.
const LAST_WORDS: usize = 1500;
/// Characters of each compaction-summary part kept.
const SUMMARY_PART: usize = 1500;
/// Findings kept (the newest).
const FINDINGS: usize = 40;
/// Longest finding.
const FINDING_CHARS: usize = 280;
/// Bold-led points kept (see [`points`]).
const POINTS: usize = 20;

/// What one read found besides the digest's own fields.
#[derive(Debug, Default, PartialEq)]
pub struct Delta {
    /// Assistant texts new since the last read, for `[REMEMBER: …]` and the like.
    pub texts: Vec<String>,
    /// The first prompt seen in this read, redacted.
    pub first_prompt: Option<String>,
    /// Tool calls seen in this read.
    pub tool_calls: u64,
    /// Pull requests linked to the conversation in this read: number, `owner/name`, when.
    pub pull_requests: Vec<(u64, String, String)>,
}

impl Delta {
    /// Keeps an assistant text that can hold an intent marker, within [`INTENT_TEXT`] per
    /// read (a read of a long transcript does not hold all its prose at once).
    fn keep_text(&mut self, text: String) {
        let kept: usize = self.texts.iter().map(String::len).sum();
        if text.contains('[') && text.contains(':') && kept + text.len() <= INTENT_TEXT {
            self.texts.push(text);
        }
    }
}

/// Reads what was appended to `path` since `d.offset`, updating `d`. Streams line by line:
/// memory holds one line (at most [`MAX_LINE`]), whatever the file's size, and at most
/// `READERS` reads run at once across the daemon.
pub fn read(path: &Path, d: &mut Digest, max: u64) -> std::io::Result<Delta> {
    let (mut f, meta) = ccmem_proto::files::untrusted::open(path)?;
    let id = file_id(&meta);
    if d.file_id != id || meta.len() < d.offset {
        d.offset = 0;
        d.file_id = id;
        d.tool_uses = 0;
    }
    let mut out = Delta::default();
    if meta.len() == d.offset {
        return Ok(out);
    }
    let _slot = Slot::take();
    f.seek(SeekFrom::Start(d.offset))?;
    let mut r = std::io::BufReader::with_capacity(64 << 10, f.take(meta.len() - d.offset));
    let max_line = MAX_LINE.min(max) as usize;
    let mut line = Vec::new();
    // Whether the line being read is over the limit (read through, not kept).
    let mut skipping = false;
    // Bytes consumed; up to the end of the last whole line; of lines kept, which count
    // against `max` (an over-long line is only looked through for its end, up to
    // `MAX_SKIP`, so that what follows it is read in the same call: an import's last words
    // come after a huge tool result, and no event follows to read them later).
    let (mut pos, mut done, mut kept) = (0u64, 0u64, 0u64);
    let mut eof = false;
    loop {
        if kept >= max || pos - kept >= MAX_SKIP {
            break;
        }
        let avail = r.fill_buf()?;
        if avail.is_empty() {
            eof = true;
            break;
        }
        let (chunk, whole) = match avail.iter().position(|b| *b == b'\n') {
            Some(i) => (&avail[..i], true),
            None => (avail, false),
        };
        let n = chunk.len() + usize::from(whole);
        if !skipping {
            if line.len() + chunk.len() > max_line {
                skipping = true;
                kept -= line.len() as u64;
                line = Vec::new();
            } else {
                line.extend_from_slice(chunk);
                kept += n as u64;
            }
        }
        r.consume(n);
        pos += n as u64;
        if whole {
            if !skipping {
                take_line(d, &mut out, &line);
            }
            line.clear();
            skipping = false;
            done = pos;
        }
    }
    let used = if skipping {
        // Inside an over-long line: what of it was read is dropped (the rest is garbage to
        // the parser next time, and is dropped there).
        pos
    } else if eof && !line.is_empty() && serde_json::from_slice::<serde::de::IgnoredAny>(&line).is_ok() {
        // A finished file may end without a newline: its last line counts once it is
        // whole JSON (a line still being written is not).
        take_line(d, &mut out, &line);
        pos
    } else {
        // A trailing partial line, which may still grow, is read again next time.
        done
    };
    d.offset += used;
    Ok(out)
}

/// Longest transcript line read (a tool result can hold a whole file or an image); longer
/// ones are skipped.
pub const MAX_LINE: u64 = 16 << 20;
/// Transcript reads running at once, across all projects: each holds up to a line.
const READERS: usize = 2;
/// Assistant text kept per read for intents (only texts that can hold a marker).
const INTENT_TEXT: usize = 4 << 20;

/// One of the [`READERS`] places; waits for one to be free.
struct Slot;

static SLOTS: std::sync::Mutex<usize> = std::sync::Mutex::new(0);
static FREED: std::sync::Condvar = std::sync::Condvar::new();

impl Slot {
    fn take() -> Slot {
        let mut n = SLOTS.lock().unwrap_or_else(|e| e.into_inner());
        while *n >= READERS {
            n = FREED.wait(n).unwrap_or_else(|e| e.into_inner());
        }
        *n += 1;
        Slot
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut n = SLOTS.lock().unwrap_or_else(|e| e.into_inner());
        *n -= 1;
        FREED.notify_one();
    }
}

/// Takes one whole line of the transcript into the digest.
fn take_line(d: &mut Digest, out: &mut Delta, line: &[u8]) {
    let Ok(line) = std::str::from_utf8(line) else { return };
    if line.trim().is_empty() {
        return;
    }
    let Some(rec) = transcript::parse_line(line) else { return };
    if rec.sidechain {
        return; // a subagent's conversation, not the agent's own words
    }
    let at = rec.timestamp.clone().unwrap_or_default();
    for e in rec.entries {
        apply(d, out, e, &at);
    }
}

/// Takes one of the agent's messages into the digest: its findings, and its words as the
/// conversation's last. For a transcript's messages, and for the last message an agent's
/// hook gives when the daemon reads no transcript of that agent's.
pub fn take_message(d: &mut Digest, text: &str, at: &str) {
    let clean = message(text);
    if clean.trim().is_empty() {
        return; // nothing but intents
    }
    let own = OwnWords::of(&clean);
    for f in findings_in(&own) {
        push_finding(d, f);
    }
    for p in points_in(&own) {
        push_point(d, p);
    }
    d.last_words = crate::text::clean_lines(&tail(&clean, LAST_WORDS), LAST_WORDS);
    d.last_words_at = at.to_string();
    d.messages_since_summary = d.messages_since_summary.saturating_add(1);
    // Once said, what comes next stays said: a later "done" does not bring the plan back.
    d.plan_overtaken |= states_next(&own);
}

/// A message's own words, read once for its findings, points and what comes next: without
/// what it quotes as blocks (block quotes, code, HTML), and a mask of it with what it quotes
/// inline blanked byte for byte (a sentence says something only where its words are the
/// agent's own, not inside a quotation or a code span).
struct OwnWords {
    text: String,
    mask: String,
}

impl OwnWords {
    fn of(message: &str) -> Self {
        let text = crate::agent::intents::own_lines(message);
        let mask = introduced_blanked(&text, crate::agent::intents::quotation_mask(&text));
        OwnWords { text, mask }
    }

    /// Its lines outside code fences, each with its mask.
    fn lines(&self) -> impl Iterator<Item = (&str, &str)> {
        let mut fence = false;
        self.text.split('\n').zip(self.mask.split('\n')).filter(move |(line, _)| {
            if line.trim().starts_with("```") {
                fence = !fence;
                return false;
            }
            !fence
        })
    }
}

/// `mask` (of `text`, line for line) with what `text` introduces as someone else's words made
/// blank too (`*` kept): after a line ending in a colon after someone else's label
/// (`README.md:`, ``Output of `cat NOTES.md`:``, `Laut README:`), or a line that introduces a
/// source's words however it ends (`The webpage said`, `The README states the following.`,
/// `Quoting issue #12 verbatim...`), the rest of its paragraph or, after a blank line, the
/// next block; and a parenthesis right after
/// words that name a source (`The README's instructions (we decided …)`).
fn introduced_blanked(text: &str, mask: String) -> String {
    if mask.len() != text.len() {
        return mask;
    }
    let lines: Vec<&str> = text.split('\n').collect();
    // Where each line starts in `text`.
    let starts: Vec<usize> = lines
        .iter()
        .scan(0, |at, l| {
            let start = *at;
            *at += l.len() + 1;
            Some(start)
        })
        .collect();
    let empty = |l: &str| l.trim().is_empty();
    let mut hide = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let t = lines[i].trim().trim_start_matches(['-', '*', '•', '>', ' ']).trim();
        let introduces = match t.strip_suffix([':', '：']) {
            Some(head) => !head.trim().is_empty() && labels::another_label(head),
            // A paragraph of its own, whatever ends it (`The README states the following.`,
            // `The webpage said`); inside a paragraph, a line that ends as a lead-in does
            // (`The web page reads —`, `Quoting issue #12 verbatim...`): a line that names a
            // file and goes on is the agent's sentence going on.
            None => {
                let alone = (i == 0 || empty(lines[i - 1])) && lines.get(i + 1).is_none_or(|l| empty(l));
                let leads_in = t.ends_with(['—', '–', '…']) || t.ends_with("...") || t.ends_with(" -");
                !t.is_empty() && (alone || leads_in) && crate::agent::intents::quotes_what_follows(t)
            }
        };
        if !introduces {
            i += 1;
            continue;
        }
        // The rest of its paragraph, or after blank lines the next block.
        let mut j = i + 1;
        while lines.get(j).is_some_and(|l| empty(l)) {
            j += 1;
        }
        while j < lines.len() && !empty(lines[j]) {
            hide.push((starts[j], starts[j] + lines[j].len()));
            j += 1;
        }
        i = j;
    }
    // A parenthesis after words that name a source, in its line.
    for (line, start) in lines.iter().zip(&starts) {
        let mut from = 0;
        while let Some(open) = line[from..].find('(').map(|k| k + from) {
            let Some(close) = line[open..].find(')').map(|k| k + open) else { break };
            let sentence = line[..open].rsplit(['.', '!', '?']).next().unwrap_or("");
            if crate::agent::intents::names_a_source(sentence) {
                hide.push((start + open, start + close));
            }
            from = close + 1;
        }
    }
    crate::agent::intents::masked(&mask, hide)
}

/// Words with which an agent says what comes next, in the languages of [`CUES`].
const NEXT_CUES: &[&str] = &[
    "next",
    "remaining",
    "still need",
    "i'll now",
    "i will now",
    "left to do",
    "todo",
    "to do:",
    "pending",
    "then ",
    "would you like",
    "should i",
    "shall i",
    "próximo",
    "próxima",
    "siguiente",
    "falta",
    "pendiente",
    "pendente",
    "prochaine",
    "ensuite",
    "reste à",
    "nächste",
    "als nächstes",
    "danach",
    "prossimo",
    "poi ",
    "следующ",
    "осталось",
    "дальше",
    "далее",
    "下一步",
    "接下来",
    "次に",
    "次は",
    "次のステップ",
    "次の手順",
    "残り",
    "다음",
    "남은",
];

/// Agent messages after a compaction summary past which its plan is history whatever they
/// said: the work has moved on, and the todos and last words say where to.
pub const PLAN_AGE: u32 = 10;

/// Whether the compaction summary's plan (its current work and next step) was overtaken:
/// the agent said after it what comes next, or spoke [`PLAN_AGE`] times since. Its plan is
/// then an old one a fresh agent would take for the current (a summary 50 messages old still
/// names the step that was done 40 messages ago).
pub fn plan_superseded(d: &Digest) -> bool {
    d.messages_since_summary > 0 && (d.plan_overtaken || d.messages_since_summary >= PLAN_AGE)
}

/// Whether the agent, in its own words (not a quotation, code or a question), says what
/// comes next.
fn states_next(own: &OwnWords) -> bool {
    own.lines().flat_map(|(_, masked)| sentences(masked)).any(|s| {
        let lower = s.trim().to_lowercase();
        !lower.ends_with('?') && NEXT_CUES.iter().any(|c| has_word(&lower, c))
    })
}

/// Whether `cue` stands in `text` as words of its own: `next` in "Next, the tests" but not in
/// `next.config.js` or "nextjs" (scripts without spaces match anywhere).
fn has_word(text: &str, cue: &str) -> bool {
    let cue = cue.trim_end();
    text.match_indices(cue).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = &text[i + cue.len()..];
        let mut rest = after.chars();
        let next = rest.next();
        let joined = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
        let dotted = matches!(next, Some('.' | '/' | '-')) && joined(rest.next());
        !cue.is_ascii() || (!joined(before) && !joined(next) && !dotted)
    })
}

/// Takes a compaction's summary into the digest: its pending work, current work and next
/// step, and its findings.
pub fn take_summary(d: &mut Digest, text: &str, at: &str) {
    // Claude Code's summary is markdown too.
    let clean = crate::text::clean_lines(&crate::text::redact_markdown(text), 200_000);
    let parts = transcript::summary_parts(&clean);
    // What is kept of it is redacted once taken out (idempotent: whatever cutting it brought
    // together is read again).
    d.pending = crate::text::clean_lines(&parts.pending, SUMMARY_PART);
    d.current_work = crate::text::clean_lines(&parts.current, SUMMARY_PART);
    d.next_step = crate::text::clean_lines(&parts.next, SUMMARY_PART);
    d.compactions += 1;
    d.summary_at = at.to_string();
    d.messages_since_summary = 0;
    d.plan_overtaken = false;
    for f in findings(&without_sections(&clean, &["all user messages", "files and code sections"])) {
        push_finding(d, f);
    }
}

fn apply(d: &mut Digest, out: &mut Delta, e: Entry, at: &str) {
    match e {
        Entry::AssistantText { text } => {
            take_message(d, &text, at);
            out.keep_text(text);
        }
        Entry::CompactSummary { text } => take_summary(d, &text, at),
        Entry::Prompt { text } => {
            let prompt = crate::text::clean(&transcript::readable_prompt(&text));
            if out.first_prompt.is_none() && !prompt.is_empty() {
                out.first_prompt = Some(prompt);
            }
        }
        // A command the user ran with `!` is not the agent's work. (What it did is read on
        // import, in order; read here, a whole turn late, it would undo what came after it.)
        Entry::ToolUse { id, .. } if id == transcript::USER_BASH => {}
        Entry::ToolUse { .. } => {
            out.tool_calls += 1;
            d.tool_uses += 1;
        }
        Entry::PullRequest { number, repository, .. } => {
            let name_ok = |p: &str| !p.is_empty() && p.chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c));
            let well_formed = repository.len() <= 200
                && repository.split_once('/').is_some_and(|(owner, name)| name_ok(owner) && name_ok(name));
            if well_formed && out.pull_requests.len() < 100 {
                out.pull_requests.push((number, repository, at.to_string()));
            }
        }
        Entry::ToolResult { .. } | Entry::CompactBoundary | Entry::Clear => {}
    }
}

/// An assistant message as the digest keeps it: redacted as markdown (as written and as
/// it reads), without ccmem's own tags (and redacted again when taking them out brought
/// two halves of a token together), within its size.
fn message(text: &str) -> String {
    let redacted = crate::text::redact_markdown(text);
    let untagged = without_tags(&redacted);
    let clean = if untagged == redacted { untagged } else { crate::text::redact_markdown(&untagged) };
    // Printable, blank lines around it gone; the first line's indent and tabs kept: an
    // indented code block at its start is code, not the agent's prose.
    let clean = ccmem_proto::redact::redact(&clean);
    let body = clean.trim_end();
    let first = body.find(|c: char| !c.is_whitespace()).unwrap_or(body.len());
    let start = body[..first].rfind('\n').map_or(0, |i| i + 1);
    truncate_chars(&body[start..], 200_000)
}

/// The text without ccmem's own `[REMEMBER: …]`-style tags, which are read as intents.
fn without_tags(text: &str) -> String {
    use ccmem_proto::model::facts;
    let mut out = String::with_capacity(text.len());
    // Each `[` is tried: where each closes is found once for all (read from each `[` to its
    // `]`, a run of `[` with no `]` costs the square of its length). A tag is read no
    // further than its `:`, which stands before any `]`.
    let closings = facts::Closings::new(text);
    // What is copied so far, and where the next `[` is looked for.
    let (mut copied, mut from) = (0, 0);
    while let Some(open) = text[from..].find('[').map(|i| i + from) {
        // (The text is redacted: a mask inside a marker does not end it.)
        match facts::tag(&text[open + 1..]).and_then(|_| closings.after(open + 1)) {
            Some(close) => {
                out.push_str(&text[copied..open]);
                (copied, from) = (close + 1, close + 1);
            }
            None => from = open + 1,
        }
    }
    out.push_str(&text[copied..]);
    out
}

fn push_finding(d: &mut Digest, f: String) {
    // Redacted as it is taken out: `**` taken away, a sentence cut, can make a secret whole
    // (`the API key is **Zx9Qa7Lm3Kp2Wd8R**`).
    let f = truncate_chars(&crate::text::clean(&f), FINDING_CHARS);
    if f.is_empty() {
        return;
    }
    let key = normal(&f);
    if d.findings.iter().any(|x| normal(x) == key) {
        return;
    }
    d.findings.push(f);
    let excess = d.findings.len().saturating_sub(FINDINGS);
    d.findings.drain(..excess);
}

/// Keeps a point (see [`points`]), redacted, once, the newest [`POINTS`].
fn push_point(d: &mut Digest, p: String) {
    let p = truncate_chars(&crate::text::clean(&p), FINDING_CHARS);
    let key = normal(&p);
    if p.is_empty() || d.points.iter().any(|x| normal(x) == key) {
        return;
    }
    d.points.push(p);
    let excess = d.points.len().saturating_sub(POINTS);
    d.points.drain(..excess);
}

/// Letters and digits only, lower case: two texts that differ only in punctuation or case
/// say the same thing.
pub fn normal(s: &str) -> String {
    s.chars().filter(|c| c.is_alphanumeric()).flat_map(char::to_lowercase).collect()
}

#[cfg(unix)]
fn file_id(m: &std::fs::Metadata) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    Some((m.dev(), m.ino()))
}

#[cfg(not(unix))]
fn file_id(_: &std::fs::Metadata) -> Option<(u64, u64)> {
    None
}

/// The last words of an assistant message as the digest keeps them (redacted, intents
/// taken out, its end), or None when nothing is left: for a Stop hook's
/// `last_assistant_message`, so that they are there even before the transcript is read.
pub fn last_words(text: &str) -> Option<String> {
    let clean = message(text);
    (!clean.trim().is_empty()).then(|| crate::text::clean_lines(&tail(&clean, LAST_WORDS), LAST_WORDS))
}

/// The end of a message, from a line start, without blank lines, table rules and fences.
fn tail(text: &str, max: usize) -> String {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.trim().is_empty())
        .filter(|l| !l.trim_start().starts_with("```"))
        .filter(|l| !l.trim().chars().all(|c| matches!(c, '|' | '-' | ':' | ' ')))
        .collect();
    let mut kept: Vec<&str> = Vec::new();
    let mut size = 0;
    for l in lines.iter().rev() {
        let n = l.chars().count() + 1;
        if size + n > max && !kept.is_empty() {
            break;
        }
        kept.push(l);
        size += n;
    }
    kept.reverse();
    truncate_chars(&kept.join("\n"), max)
}

/// A compaction summary without the sections that only repeat (the user's messages, which
/// ccmem keeps itself; code excerpts).
fn without_sections(summary: &str, skip: &[&str]) -> String {
    let mut out = Vec::new();
    let mut on = true;
    for line in summary.lines() {
        let top = !line.starts_with(' ') && line.trim_end().ends_with(':');
        if top {
            let head = line.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.' || c == '#').trim();
            let h = head.trim_matches('*').to_ascii_lowercase();
            on = !skip.iter().any(|s| h.starts_with(s));
            continue;
        }
        if on {
            out.push(line);
        }
    }
    out.join("\n")
}

/// Words that mark a sentence as a decision or a finding.
const CUES: &[&str] = &[
    "decided",
    "decision",
    "we'll use",
    "we will use",
    "going with",
    "chose ",
    "opted",
    "agreed",
    "instead of",
    "rather than",
    "root cause",
    "the issue is",
    "the issue was",
    "the problem is",
    "the problem was",
    "the bug ",
    "bug in ",
    // What a verification showed: the state the next agent starts from.
    "tests pass",
    "tests passed",
    "tests passing",
    " 0 failures",
    ", 0 failed",
    "is a bug",
    "caused by",
    "because",
    "turns out",
    "found that",
    "fixed by",
    "fixed with",
    "→ fixed",
    "fix:",
    "cause:",
    "only has",
    "doesn't have",
    "does not have",
    "already exists",
    "doesn't exist",
    "does not exist",
    "conflict",
    "flaky",
    "pre-existing",
    "requires",
    "must ",
    "never ",
    "note:",
    "important:",
    "expects",
    "is not used",
    "isn't used",
    "not needed",
    "doesn't need",
    "no longer",
    "now uses",
    "now stores",
    "now counts",
    "now shows",
    "changed from",
    "down from",
    "was wrong",
    "mismatch",
    "missing",
    "store it",
    "stored in",
    // The same cues in the other languages developers most often write to agents in:
    // Spanish, Portuguese, French, German, Italian, Russian, Chinese, Japanese, Korean.
    "decidí",
    "decidimos",
    "decisión",
    "en lugar de",
    "en vez de",
    "porque",
    "causa raíz",
    "el problema es",
    "el problema era",
    "se debe a",
    "resulta que",
    "ya existe",
    "no existe",
    "decidi ",
    "decisão",
    "em vez de",
    "ao invés de",
    "causa raiz",
    "o problema é",
    "o problema era",
    "acontece que",
    "já existe",
    "não existe",
    "décidé",
    "décision",
    "au lieu de",
    "plutôt que",
    "parce que",
    "cause racine",
    "le problème est",
    "le problème était",
    "existe déjà",
    "n'existe pas",
    "entschieden",
    "entscheidung",
    "anstatt",
    "statt ",
    "weil ",
    "ursache",
    "das problem ist",
    "das problem war",
    "liegt daran",
    "stellt sich heraus",
    "existiert bereits",
    "existiert nicht",
    "deciso",
    "decisione",
    "invece di",
    "perché",
    "il problema è",
    "esiste già",
    "non esiste",
    "решил",
    "решение",
    "вместо",
    "потому что",
    "так как",
    "причина",
    "проблема в",
    "оказалось",
    "уже существует",
    "не существует",
    "决定",
    "決定",
    "改用",
    "而不是",
    "因为",
    "因為",
    "原因",
    "问题是",
    "問題是",
    "问题在于",
    "发现",
    "已经存在",
    "不存在",
    "決めた",
    "代わりに",
    "ではなく",
    "なので",
    "問題は",
    "判明",
    "既に存在",
    "存在しない",
    "결정",
    "대신",
    "때문에",
    "원인",
    "문제는",
    "알고 보니",
    "이미 존재",
    "존재하지 않",
    "누락",
    "반드시",
];

/// How a sentence starts when it says what the agent is about to do, or what it is told to
/// do (the closing words Claude Code puts after a compaction summary: "Pick up the last task
/// as if the break never happened."): not a finding.
const PLAN: &[&str] = &[
    "let me ",
    "now ",
    "next, ",
    "then ",
    "first, ",
    "i'll ",
    "i will ",
    "let's ",
    "pick up ",
    "continue ",
    "please ",
    "resume ",
    "voy a ",
    "vamos a ",
    "ahora ",
    "vou ",
    "agora ",
    "je vais ",
    "maintenant ",
    "ensuite ",
    "ich werde ",
    "jetzt ",
    "als nächstes",
    "ora ",
    "сейчас ",
    "теперь ",
    "далее ",
    "现在",
    "接下来",
    "首先",
    "让我",
    "次に",
    "まず",
    "이제 ",
    "먼저 ",
    "다음으로",
];

fn is_plan(lower: &str) -> bool {
    PLAN.iter().any(|p| lower.starts_with(p))
}

/// Sentences (and list items) of `text` that state a decision or a finding, in order.
pub fn findings(text: &str) -> Vec<String> {
    findings_in(&OwnWords::of(text))
}

/// [`findings`] of a message read once.
fn findings_in(own: &OwnWords) -> Vec<String> {
    let mut out = Vec::new();
    // Where `part` (a slice of `of`) starts in it.
    let offset = |of: &str, part: &str| part.as_ptr() as usize - of.as_ptr() as usize;
    for (line, masked) in own.lines() {
        let t = line.trim();
        if t.is_empty() || t.starts_with('|') {
            continue; // table rows (cells are not sentences)
        }
        if t.starts_with('#') && t.trim_start_matches('#').starts_with(' ') {
            continue; // a heading names what follows; it finds nothing
        }
        let t = t.trim_start_matches(['-', '*', '•', '>', ' ']).trim();
        let t = numbered_item(t);
        let at = offset(line, t);

        // The mask keeps `*` where the line has it: both lose the same bold marks.
        let m = masked.get(at..at + t.len()).unwrap_or("").replace("**", "");
        let t = t.replace("**", "");
        let t = t.as_str();
        let all = sentences(t);
        let mut taken_next = false;
        for (n, sentence) in all.iter().copied().enumerate() {
            if std::mem::take(&mut taken_next) {
                continue; // said with the finding before it
            }
            let at = offset(t, sentence);
            let own_words = m.get(at..at + sentence.len()).unwrap_or("").to_lowercase();
            let lower = sentence.to_lowercase();
            let words = words(sentence);
            if !(4..=60).contains(&words) || sentence.ends_with('?') {
                continue;
            }
            if is_plan(&lower) || sentence.trim_end().ends_with(':') {
                continue;
            }
            // What a source says ("The log says …", "Per the README, …"): its words, not a
            // finding of the agent's.
            if crate::agent::intents::reports_a_source(sentence) {
                continue;
            }
            // Where its first cue stands: what leads up to it, and the line before the
            // sentence, may be someone else's label (`stdout: We decided …`).
            let cue_at = CUES.iter().filter_map(|c| own_words.find(c)).min();
            if let Some(cue_at) = cue_at {
                let before = own_words.get(..cue_at).unwrap_or("");
                if labels::led_by_another(before, &t[..at]) {
                    continue;
                }
            }
            if cue_at.is_some() {
                // A short finding that only announces one ("There's a bug in `parse`.") is
                // told by the sentence after it: both, as one.
                let next = all.get(n + 1).filter(|next| {
                    words < 10
                        && words + self::words(next) <= 60
                        && !next.ends_with(':')
                        && !next.ends_with('?')
                        && !is_plan(&next.to_lowercase())
                        && !crate::agent::intents::reports_a_source(next)
                });
                let finding = match next {
                    Some(next) => {
                        taken_next = true;
                        format!("{} {}", sentence.trim(), next.trim())
                    }
                    None => sentence.trim_end_matches(':').trim().to_string(),
                };
                out.push(truncate_chars(&finding, FINDING_CHARS));
            }
        }
    }
    out
}

/// The points the agent set out with a bold lead (`**Issue:** …`, `1. **In a.ts** - …`,
/// `- **Fixed**: …`), in order: how agents write what they found and did, in any language.
/// Weaker than [`findings`] (a summary's every line can lead so), they are shown only where
/// the findings leave room.
pub fn points(text: &str) -> Vec<String> {
    points_in(&OwnWords::of(text))
}

/// [`points`] of a message read once.
fn points_in(own: &OwnWords) -> Vec<String> {
    let mut out = Vec::new();
    for (line, masked) in own.lines() {
        let t = line.trim();
        // A list item's marker (`- `, `* `, `1. `), not the bold that may follow it.
        let t = ["- ", "* ", "• "].iter().find_map(|m| t.strip_prefix(m)).unwrap_or(t).trim_start();
        let t = numbered_item(t);
        // Bold where the agent wrote it, not inside a quotation or a code span.
        let at = t.as_ptr() as usize - line.as_ptr() as usize;
        if t.starts_with("**") && masked.get(at..at + 2) == Some("**") {
            if let Some(point) = bold_led(t) {
                out.push(truncate_chars(&point, FINDING_CHARS));
            }
        }
    }
    out
}

/// A numbered list item's text without its number (`1. `, `2) `); other text as it is (`93
/// tests pass` keeps its count).
fn numbered_item(t: &str) -> &str {
    let digits = t.trim_start_matches(|c: char| c.is_ascii_digit());
    match digits.strip_prefix(". ").or_else(|| digits.strip_prefix(") ")) {
        Some(item) if digits.len() < t.len() => item.trim_start(),
        _ => t,
    }
}

/// A line that leads with a short bold label and goes on to say something (three words or
/// more after it), without its bold marks and closing colon; None for other lines, a bold
/// heading alone, or a label that is a sentence of its own.
fn bold_led(t: &str) -> Option<String> {
    let rest = t.strip_prefix("**")?;
    let end = rest.find("**")?;
    let (label, after) = (&rest[..end], &rest[end + 2..]);
    let label_words = label.split_whitespace().count();
    if label_words == 0 || label_words > 8 || label.ends_with('.') {
        return None;
    }
    let line = t.replace("**", "");
    let line = line.trim().trim_end_matches([':', '：']).trim();
    let said = after.trim_start_matches([':', '：', '-', '–', '—', ' ']).split_whitespace().count();
    (said >= 3 && words(line) <= 60 && !line.ends_with('?')).then(|| line.to_string())
}

/// Splits on `. ` / `! ` followed by a capital, keeping file names (`run.ts`) and versions whole.
fn sentences(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = line.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let end = i + c.len_utf8();
        // `。`, `！`, `？` end a sentence of Chinese or Japanese where they stand.
        if matches!(c, '。' | '！' | '？') {
            out.push(line[start..end].trim());
            start = end;
            continue;
        }
        // `. ` before a capital, or before a letter of a script without capitals (Korean).
        if matches!(c, '.' | '!') && line[end..].starts_with(' ') {
            let next = line[end + 1..].chars().next();
            if next.is_some_and(|n| n.is_uppercase() || (!n.is_ascii() && n.is_alphabetic() && !n.is_lowercase())) {
                out.push(line[start..end].trim());
                start = end + 1;
                chars.next();
            }
        }
    }
    out.push(line[start..].trim());
    out.into_iter().filter(|s| !s.is_empty()).collect()
}

/// A sentence's length in words: spaces separate them, but Chinese and Japanese write none,
/// where about two characters make a word.
fn words(sentence: &str) -> usize {
    let spaced = sentence.split_whitespace().count();
    let unspaced = sentence
        .chars()
        .filter(|c| matches!(*c as u32, 0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF))
        .count();
    spaced.max(unspaced / 2)
}

mod labels;
#[cfg(test)]
mod tests;
