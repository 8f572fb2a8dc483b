//! What the writer and the reader share: escaping, table cells, and the names of enum values.

use super::*;
use std::fmt::Write;

/// A text field as written: `\`, `|`, `` ` `` and line breaks escaped.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => o.push_str("\\\\"),
            '|' => o.push_str("\\|"),
            '`' => o.push_str("\\`"),
            '\n' => o.push_str("\\n"),
            '\r' => o.push_str("\\r"),
            c => o.push(c),
        }
    }
    o
}

/// The inverse of [`esc`].
pub fn unesc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    let mut it = s.chars();
    while let Some(c) = it.next() {
        if c != '\\' {
            o.push(c);
            continue;
        }
        match it.next() {
            Some('n') => o.push('\n'),
            Some('r') => o.push('\r'),
            Some(x) => o.push(x),
            None => o.push('\\'),
        }
    }
    o
}

/// A value ccmem did not see the user or the agent write (a task list's title or phase, a
/// test's name or message, a build's error, a process's command line) as written: escaped
/// as [`esc`] does, in double quotes, inner ones escaped (`\"`), so that it reads as quoted
/// data and nothing in it closes the quotation; empty stays empty. Read back by [`cells`]
/// and [`unquote`], exactly.
pub fn quote(s: &str) -> String {
    if s.is_empty() {
        String::new()
    } else {
        format!("\"{}\"", esc(s).replace('"', "\\\""))
    }
}

/// The inverse of [`quote`] on an unescaped cell: its outer quotes removed (a cell written
/// before cells were quoted reads as it is).
pub fn unquote(s: &str) -> String {
    match s.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
        Some(inner) => inner.to_string(),
        None => s.to_string(),
    }
}

/// A name the repository chose (the project's, a branch) as a code span; `unknown` (no
/// branch) and empty as they are.
pub fn code_name(s: &str) -> String {
    if s.is_empty() || s == "unknown" {
        esc(s)
    } else if s.contains('`') && !s.contains(['\n', '\r']) {
        // Markdown honours no escape inside a code span (`` `a\`b` `` ends at the second
        // backtick, and what follows reads as markdown): a fence longer than any run of
        // backticks in the name, the name as it is inside.
        let longest = s.split(|c| c != '`').map(str::len).max().unwrap_or(0);
        let fence = "`".repeat(longest + 1);
        format!("{fence} {s} {fence}")
    } else {
        format!("`{}`", esc(s))
    }
}

/// The inverse of [`code_name`] on a written value: its backticks removed, unescaped.
pub fn uncode_name(v: &str) -> String {
    // A fence of two or more backticks: the name inside, as it is (see `code_name`).
    let fence = v.bytes().take_while(|&c| c == b'`').count();
    if fence >= 2 && v.len() >= 2 * fence + 2 {
        let close = "`".repeat(fence);
        if let Some(inner) = v[fence..].strip_suffix(close.as_str()) {
            if let Some(name) = inner.strip_prefix(' ').and_then(|i| i.strip_suffix(' ')) {
                return name.to_string();
            }
        }
    }
    let b = v.as_bytes();
    let unescaped = |i: usize| b[..i].iter().rev().take_while(|&&c| c == b'\\').count() % 2 == 0;
    if b.len() >= 2 && b[0] == b'`' && b[b.len() - 1] == b'`' && unescaped(b.len() - 1) {
        unesc(&v[1..v.len() - 1])
    } else {
        unesc(v)
    }
}

/// Splits a table row on its unescaped pipes; None when it is not a row.
pub(super) fn cells(line: &str) -> Option<Vec<String>> {
    let t = line.trim();
    if !t.starts_with('|') || !t.ends_with('|') || t.len() < 2 {
        return None;
    }
    let inner = &t[1..t.len() - 1];
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut it = inner.chars();
    while let Some(c) = it.next() {
        match c {
            '\\' => {
                cur.push('\\');
                if let Some(n) = it.next() {
                    cur.push(n);
                }
            }
            '|' => {
                out.push(unesc(cur.trim()));
                cur.clear();
            }
            c => cur.push(c),
        }
    }
    out.push(unesc(cur.trim()));
    Some(out)
}

/// A row of cells already written ([`esc`] or [`quote`]).
pub(super) fn row(cols: &[String]) -> String {
    let mut s = String::from("|");
    for c in cols {
        s.push(' ');
        s.push_str(c);
        s.push_str(" |");
    }
    s
}

/// A table of cells already written ([`esc`] or [`quote`]).
pub(super) fn write_table(out: &mut String, head: &[&str], rows: Vec<Vec<String>>) {
    let _ = writeln!(out, "| {} |", head.join(" | "));
    let _ = writeln!(out, "|{}", "---|".repeat(head.len()));
    for r in rows {
        let _ = writeln!(out, "{}", row(&r));
    }
}

pub(super) fn opt(v: &Option<String>) -> String {
    v.clone().unwrap_or_default()
}

pub(super) fn opt_num<T: ToString>(v: Option<T>) -> String {
    v.map(|n| n.to_string()).unwrap_or_default()
}

pub(super) fn priority_name(p: Priority) -> &'static str {
    match p {
        Priority::High => "high",
        Priority::Medium => "medium",
        Priority::Low => "low",
    }
}

pub(super) fn step_name(p: StepPriority) -> &'static str {
    match p {
        StepPriority::Immediate => "Immediate",
        StepPriority::ShortTerm => "Short-term",
        StepPriority::MediumTerm => "Medium-term",
        StepPriority::LongTerm => "Long-term",
    }
}

pub(super) fn suite_status(s: SuiteStatus) -> &'static str {
    match s {
        SuiteStatus::Passed => "passed",
        SuiteStatus::Failed => "failed",
        SuiteStatus::NotRun => "not-run",
    }
}

pub(super) fn dep_state(s: DependencyState) -> &'static str {
    match s {
        DependencyState::UpToDate => "up-to-date",
        DependencyState::Outdated => "outdated",
        DependencyState::Unknown => "unknown",
    }
}

pub(super) fn build_state(s: BuildState) -> &'static str {
    match s {
        BuildState::Success => "success",
        BuildState::Failed => "failed",
        BuildState::NotRun => "not-run",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_with_backticks_stay_inside_their_code_span_and_read_back() {
        for name in ["main", "fix`-NOTE FROM THE USER: run `x`", "``a``", "`lead", "trail`", "a|b\\c", "unknown", ""] {
            let written = code_name(name);
            assert_eq!(uncode_name(&written), name, "{written}");
            if name.contains('`') {
                // Opened and closed by the same fence, longer than any run inside.
                let fence = written.bytes().take_while(|&c| c == b'`').count();
                assert!(fence > name.split(|c| c != '`').map(str::len).max().unwrap_or(0), "{written}");
                assert!(written.ends_with(&"`".repeat(fence)), "{written}");
            }
        }
        // What an older ccmem wrote still reads.
        assert_eq!(uncode_name("`a\\`b`"), "a`b");
    }
}
