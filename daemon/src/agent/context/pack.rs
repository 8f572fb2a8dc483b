//! Fitting the sections into the budget: essentials first, then each section capped, the
//! rest as room allows.

use super::*;

/// The first lines that fit in `max` characters, and a note of how many were left out.
pub(super) fn cap(lines: Vec<String>, max: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut used = 0;
    let total = lines.len();
    for (n, l) in lines.into_iter().enumerate() {
        let l = truncate_chars(&l, LINE);
        let len = l.chars().count() + 1;
        if used + len > max && n > 0 {
            out.push(format!("- … and {} more", total - n));
            break;
        }
        used += len;
        out.push(l);
    }
    out
}

/// The last lines that fit in `max` characters (the end of a message matters most).
pub(super) fn cap_tail(lines: Vec<String>, max: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut used = 0;
    for l in lines.into_iter().rev() {
        let l = truncate_chars(&l, LINE);
        let len = l.chars().count() + 1;
        if used + len > max && !out.is_empty() {
            break;
        }
        used += len;
        out.push(l);
    }
    out.reverse();
    out
}

pub(super) fn size(lines: &[String]) -> usize {
    lines.iter().map(|l| l.chars().count() + 1).sum()
}

pub(super) fn push(sections: &mut Vec<(String, Vec<String>)>, title: &str, lines: Vec<String>) {
    if !lines.is_empty() {
        sections.push((title.into(), lines));
    }
}

/// Sections kept whole before any other gets a second line: what is open and what fails.
pub(super) const ESSENTIAL: &[&str] = &["## Todos", "## Unresolved failures", "## Build failing"];

/// Joins sections in order within the budget. Breadth first: every section that fits gets
/// its title and first line before any section gets a second line, so that a tight budget
/// keeps one line of each thing (the failing tests, the todos) rather than all of the first.
/// Lines that do not fit are dropped, with "- … and N more" in a list; a section that cannot
/// show its title and one line is left out. The result never exceeds `budget` characters.
pub(super) fn pack(sections: Vec<(String, Vec<String>)>, budget: usize) -> String {
    let sections: Vec<(String, Vec<String>)> = sections
        .into_iter()
        .map(|(t, lines)| (t, lines.into_iter().map(|l| truncate_chars(&l, LINE)).collect()))
        .collect();
    let chars = |l: &str| l.chars().count() + 1;
    // Lists say what they leave out ("- … and N more"); other blocks are just cut.
    let lists: Vec<bool> =
        sections.iter().map(|(_, l)| l.iter().all(|l| l.starts_with("- ") || l.starts_with("> "))).collect();
    // How many lines of each section are shown; 0: the section is left out.
    let mut shown = vec![0usize; sections.len()];
    let mut used = 0;
    // Pass 1: a line of every section; all of the essential ones (what is open and what is
    // failing). Pass 2: the other sections' further lines, in order.
    let more = |i: usize, lines: &[String], shown: &mut [usize], used: &mut usize| {
        while shown[i] < lines.len() {
            let left = lines.len() - shown[i] - 1;
            // Room for the note of what would still be left out after this line.
            let note = if left > 0 && lists[i] { chars(&format!("- … and {left} more")) } else { 0 };
            let len = chars(&lines[shown[i]]);
            if *used + len + note > budget {
                break;
            }
            *used += len;
            shown[i] += 1;
        }
    };
    for (i, (title, lines)) in sections.iter().enumerate() {
        // Title, its first line, and the blank line after the block.
        let need = chars(title) + lines.first().map_or(0, |l| chars(l)) + 1;
        if !lines.is_empty() && used + need <= budget {
            shown[i] = 1;
            used += need;
            if ESSENTIAL.iter().any(|e| title.starts_with(e)) {
                more(i, lines, &mut shown, &mut used);
            }
        }
    }
    for (i, (_, lines)) in sections.iter().enumerate() {
        if shown[i] == 0 {
            continue;
        }
        more(i, lines, &mut shown, &mut used);
    }
    let mut out = String::new();
    for (i, (title, lines)) in sections.iter().enumerate() {
        if shown[i] == 0 {
            continue;
        }
        out.push_str(title);
        out.push('\n');
        for l in &lines[..shown[i]] {
            out.push_str(l);
            out.push('\n');
        }
        let left = lines.len() - shown[i];
        if left > 0 && lists[i] {
            let note = format!("- … and {left} more\n");
            // Reserved above for all but a section cut at its first line.
            if used + note.chars().count() <= budget {
                used += note.chars().count();
                out.push_str(&note);
            }
        }
        out.push('\n');
    }
    let trimmed = out.trim_end().to_string();
    truncate_chars(&trimmed, budget)
}

/// Share of a line's words found in a line kept before it past which it only restates it.
const RESTATES: f64 = 0.6;

/// `lines` (newest first) with those that restate a newer one left out: "All 1447 tests
/// passed." after "1447 tests passed, 1 failed (a flaky timeout)", the same cause said twice
/// in other words. A line restates one kept when most of its words (three letters or digits
/// and more, case aside) are that line's, or a line's left out before it: the budget goes to
/// other facts.
pub(super) fn one_per_fact(lines: Vec<String>) -> Vec<String> {
    let words = |l: &str| -> std::collections::HashSet<String> {
        l.split(|c: char| !c.is_alphanumeric())
            .filter(|w| w.chars().count() >= 3 || w.chars().all(|c| c.is_ascii_digit()) && !w.is_empty())
            .map(str::to_lowercase)
            .collect()
    };
    // Every line read so far: one that restates a line left out restates its fact too.
    let mut seen: Vec<std::collections::HashSet<String>> = Vec::new();
    let mut out = Vec::new();
    for l in lines {
        let w = words(&l);
        let restates = w.len() >= 3
            && seen.iter().any(|k| w.iter().filter(|x| k.contains(*x)).count() as f64 >= RESTATES * w.len() as f64);
        seen.push(w);
        if !restates {
            out.push(l);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// From a real session's findings (the dev transcript admarble_sequant_170a6d5b): the
    /// test run said five ways, each after the first left out; other facts kept.
    #[test]
    fn a_fact_said_again_in_other_words_is_kept_once() {
        let lines: Vec<String> = [
            "- Tests pass (1447 passed, 1 pre-existing flaky timeout)",
            "- Cause: Used `diffStats` as field name but `createPhaseLogFromTiming` expects `filesModified` and `fileDiffStats`",
            "- AC-4: All tests pass ✅ (1447 passed, 1 flaky timeout)",
            "- All 1447 tests passed.",
            "- AC-4: All tests pass",
            "- Lines 3156-3740: `executeBatch` and `runIssueWithLogging` - extracted to `batch-executor.ts`",
        ]
        .map(String::from)
        .to_vec();
        let kept = one_per_fact(lines);
        assert_eq!(
            kept,
            [
                "- Tests pass (1447 passed, 1 pre-existing flaky timeout)",
                "- Cause: Used `diffStats` as field name but `createPhaseLogFromTiming` expects `filesModified` and `fileDiffStats`",
                "- Lines 3156-3740: `executeBatch` and `runIssueWithLogging` - extracted to `batch-executor.ts`",
            ]
        );
    }
}
