//! The kinds a person asks for (`failure`, `file`, …, see [`ccmem_proto::wire::api::KINDS`])
//! and the journal's own kinds of event behind each.

/// Each asked-for kind, and the journal's kinds it stands for.
const MAP: &[(&str, &[&str])] = &[
    ("prompt", &["prompt"]),
    ("message", &["stop", "notification"]),
    ("decision", &["decision"]),
    ("failure", &["failure"]),
    ("fixed", &["fixed"]),
    ("command", &["command"]),
    ("test", &["test"]),
    ("build", &["build"]),
    ("commit", &["commit"]),
    ("file", &["edit", "delete", "created", "modified", "deleted", "files"]),
    ("todo", &["todos", "task"]),
    ("compaction", &["compacted", "precompact"]),
    ("session", &["start", "end", "event"]),
];

/// Journal kinds that tell nothing by themselves (a context given, a tool's bare name).
pub const QUIET: &[&str] = &["context", "tool", "other"];

/// The journal's kinds for the asked-for `kinds`, or why one is not known.
pub fn journal_kinds(kinds: &[String]) -> Result<Vec<&'static str>, String> {
    let mut out = Vec::new();
    for k in kinds {
        let k = k.trim().to_ascii_lowercase();
        let k = k.strip_suffix('s').filter(|s| MAP.iter().any(|(n, _)| n == s)).unwrap_or(&k);
        match MAP.iter().find(|(name, _)| *name == k) {
            Some((_, journal)) => out.extend_from_slice(journal),
            None => {
                let known: Vec<&str> = MAP.iter().map(|(n, _)| *n).collect();
                return Err(format!("unknown kind {k:?}: one of {}", known.join(", ")));
            }
        }
    }
    Ok(out)
}

/// The asked-for kind a journal kind is shown as.
pub fn shown(journal: &str) -> &str {
    MAP.iter().find(|(_, js)| js.contains(&journal)).map_or(journal, |(name, _)| name)
}

/// A test run's or a build's outcome, `passed` or `failed` (empty for other kinds), as the
/// session's rules word them (`session::environment`: `unit tests (cargo) failed: …`,
/// `build succeeded (…)`); a failure has failed.
pub fn outcome(journal: &str, text: &str) -> &'static str {
    let head = text.split(':').next().unwrap_or("");
    match journal {
        "failure" => "failed",
        "fixed" => "passed",
        "test" | "build" if head.contains(") failed") || head.starts_with("build failed") => "failed",
        "test" if head.contains(") passed") => "passed",
        "build" if head.starts_with("build succeeded") => "passed",
        _ => "",
    }
}

/// How much a hit of this (shown) kind weighs in a search: what was decided, asked, broken
/// and delivered comes before the commands and files around it.
pub fn weight(shown: &str) -> f64 {
    match shown {
        "decision" | "failure" | "fixed" | "commit" => 1.5,
        "prompt" | "compaction" => 1.3,
        "message" | "test" | "build" => 1.0,
        "todo" | "command" => 0.8,
        _ => 0.6,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_offered_is_mapped_and_plurals_are_read() {
        for (k, _) in ccmem_proto::wire::api::KINDS {
            assert!(journal_kinds(&[k.to_string()]).is_ok(), "{k}");
        }
        assert_eq!(journal_kinds(&["failures".into()]).unwrap(), ["failure"]);
        assert_eq!(shown("edit"), "file");
        assert!(journal_kinds(&["nope".into()]).unwrap_err().contains("one of prompt"));
    }

    /// Outcomes read from the words `session::environment` writes.
    #[test]
    fn test_runs_and_builds_tell_their_outcome() {
        assert_eq!(outcome("test", "unit tests (vitest) failed: 1447 passed, 1 failed"), "failed");
        assert_eq!(outcome("test", "e2e tests (playwright) passed: 12 passed"), "passed");
        assert_eq!(outcome("build", "build failed (npm run build): src/a.ts:1:2: error"), "failed");
        assert_eq!(outcome("build", "build succeeded (cargo build)"), "passed");
        assert_eq!(outcome("failure", "tests failed: npm test"), "failed");
        assert_eq!(outcome("prompt", "build failed (x): why"), "");
    }
}
