//! Whether a finding's words are led by someone else's label: `stdout: We decided …`,
//! `docs/adr.md:12: We decided …`, `Commit a1b2c3d: Decided …`, `Result → …`, `Log excerpt —
//! the root cause is …`, `npm ERR! We decided …`, `Der Build meldet: …`. What follows such a
//! label is a program's output or a document's line that the agent shows, not a decision
//! of its own. The agent's own labels (`Root cause: …`, `**Decision:** …`) lead its own.

/// Labels with which the agent sets out its own findings, in the languages of its cues.
const OWN_LABELS: &[&str] = &[
    "decision",
    "decisions",
    "decided",
    "root cause",
    "cause",
    "finding",
    "findings",
    "fix",
    "the fix",
    "fixed",
    "note",
    "notes",
    "conclusion",
    "summary",
    "why",
    "reason",
    "update",
    "answer",
    "outcome",
    "so",
    "issue",
    "problem",
    "bug",
    "insight",
    "key insight",
    "lesson",
    "learned",
    "tl;dr",
    "important",
    "verdict",
    "diagnosis",
    "explanation",
    "causa",
    "causa raíz",
    "decisión",
    "décision",
    "cause racine",
    "ursache",
    "entscheidung",
    "причина",
    "решение",
    "原因",
    "决定",
    "結論",
    "원인",
    "결정",
];

/// What separates a label from what it labels.
const SEPARATORS: &[&str] = &[": ", "> ", "→", " — ", "—", " – ", " | ", "：", " => ", " -> "];

/// Words of a log line's level, as programs print them (`npm ERR!`, `ERROR`, `WARN`).
const LEVELS: &[&str] = &["ERR!", "ERROR", "ERR", "WARN", "WARNING", "FATAL", "INFO", "DEBUG", "TRACE", "PANIC"];

/// Whether the words before a finding's cue (`before`, lowercase, in its sentence) or the
/// line before its sentence (`line_before`, as written) are someone else's label.
pub(super) fn led_by_another(before: &str, line_before: &str) -> bool {
    if line_before.split(|c: char| !(c.is_alphanumeric() || c == '!')).any(|w| LEVELS.contains(&w)) {
        return true;
    }
    let t = before.trim_start();
    if t.starts_with(':') {
        return true; // a definition's line (`Term` then `: …`)
    }
    let Some((at, sep)) = SEPARATORS.iter().filter_map(|s| t.rfind(s).map(|i| (i, *s))).max_by_key(|(i, _)| *i) else {
        return false;
    };
    // A prompt or an arrow (`stderr> `, `Result → `) leads a program's words.
    if matches!(sep, "> " | "→" | " => " | " -> ") {
        return !is_own(&t[..at]);
    }
    another_label(&t[..at])
}

/// `label` (what stands before a colon or a dash) without its marks, its last clause only
/// (`So, root cause`), a parenthesis at its end left out (`The docs say (paraphrasing)`).
fn clause(label: &str) -> String {
    let mut l = label.trim().trim_matches(|c: char| c == '*' || c == '_' || c == '`').trim().to_lowercase();
    if l.ends_with(')') {
        if let Some(open) = l.rfind('(') {
            l.truncate(open);
        }
    }
    let l = l.trim_end();
    l.rsplit([',', ';']).next().unwrap_or(l).trim().to_string()
}

/// Whether `label` is one with which the agent sets out its own words (`Root cause`,
/// `**Decision:**`).
fn is_own(label: &str) -> bool {
    OWN_LABELS.contains(&clause(label).as_str())
}

/// Whether `label`, before a colon or a dash, leads someone else's words: not the agent's
/// own label, and a place in code (`docs/adr.md:12`, `line 12`, `commit a1b2c3d`), an
/// output or a source (`stdout`, `Log excerpt`, `README.md`), a verb that reports (`Der
/// Build meldet`, `The docs say (paraphrasing)`, `Der Hook gab aus`), or a source's text
/// said to be what follows (`The error message was`). A colon after a topic (`Unknown flag
/// error: …`) is the agent's own.
pub(crate) fn another_label(label: &str) -> bool {
    let c = clause(label);
    // `Fixed in src/lib.rs`: the agent telling what it did, where.
    let did = c.split_whitespace().next().is_some_and(|w| DID.contains(&w));
    if OWN_LABELS.contains(&c.as_str()) || did {
        return false;
    }
    let words: Vec<&str> = c.split(|ch: char| !ch.is_alphanumeric()).filter(|w| !w.is_empty()).collect();
    let said_to_be = matches!(words.as_slice(), [.., noun, "was" | "were" | "is" | "are"] if SAID.contains(noun) || crate::agent::intents::names_a_source(noun));
    let particle = matches!(words.as_slice(), [.., verb, "aus" | "an" | "zurück"] if GERMAN_REPORTING.contains(verb));
    said_to_be || particle || code_place(&c) || crate::agent::intents::names_a_source(&c)
}

/// Verbs with which the agent's label tells what it did (`Fixed in src/lib.rs: …`).
const DID: &[&str] = &[
    "fixed",
    "changed",
    "updated",
    "added",
    "edited",
    "modified",
    "removed",
    "refactored",
    "implemented",
    "created",
    "moved",
    "renamed",
    "tested",
    "checked",
    "verified",
];

/// Nouns for someone else's text, which a colon after `… was` introduces.
const SAID: &[&str] = &[
    "message",
    "error",
    "errors",
    "output",
    "response",
    "reply",
    "answer",
    "page",
    "webpage",
    "comment",
    "body",
    "text",
    "description",
    "title",
    "result",
];

/// German verbs whose particle comes last (`gab … aus`, `zeigte … an`, `gab … zurück`).
const GERMAN_REPORTING: &[&str] = &["gab", "gibt", "spuckte", "spuckt", "zeigte", "zeigt", "wies", "gaben", "geben"];

/// `docs/adr.md:12`, `L12`, `line 12`, `commit a1b2c3d`: a place in code or history.
fn code_place(label: &str) -> bool {
    let words: Vec<&str> = label.split_whitespace().collect();
    let hex = |w: &str| w.len() >= 7 && w.bytes().all(|b| b.is_ascii_hexdigit());
    (words.len() == 1 && label.ends_with(|c: char| c.is_ascii_digit()) && label.contains([':', 'l', 'L']))
        || matches!(words.as_slice(), [w, n] if (*w == "line" || *w == "lines") && n.bytes().all(|b| b.is_ascii_digit()))
        || matches!(words.as_slice(), [w, h] if *w == "commit" && hex(h))
}

#[cfg(test)]
mod tests {
    use super::led_by_another;

    #[test]
    fn someone_elses_labels_and_the_agents_own() {
        for (before, line) in [
            ("stdout: ", ""),
            ("docs/adr.md:12: ", ""),
            ("line 12: ", ""),
            ("commit a1b2c3d: ", ""),
            ("stderr> the ", ""),
            ("result → ", ""),
            ("log excerpt — the ", ""),
            ("der build meldet: ", ""),
            (": ", ""),
            ("", "npm ERR! "),
        ] {
            assert!(led_by_another(before, line), "{before:?} {line:?}");
        }
        for before in [
            "",
            "root cause: the ",
            "**decision:** ",
            "so, root cause: ",
            "i think the ",
            "after the rebase, ",
            "unknown flag error: parseflags threw unknownflagerror ",
        ] {
            assert!(!led_by_another(before, ""), "{before:?}");
        }
    }
}
