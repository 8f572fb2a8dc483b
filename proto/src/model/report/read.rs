//! The report read back: markdown to [`SessionMemory`], partial data and warnings where it is damaged.

use super::table::*;
use super::*;

/// What [`parse`] read, and what it could not.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    /// The report, with defaults where it was damaged.
    pub memory: SessionMemory,
    /// What was missing or unreadable.
    pub warnings: Vec<String>,
}

struct Lines<'a> {
    all: Vec<&'a str>,
}

impl<'a> Lines<'a> {
    /// The lines of the `## title` section (without the heading), if present.
    fn section(&self, title: &str) -> Option<&[&'a str]> {
        let start = self.all.iter().position(|l| l.trim_end() == format!("## {title}"))? + 1;
        let end = self.all[start..]
            .iter()
            .position(|l| l.starts_with("## ") || l.trim_end() == "---")
            .map_or(self.all.len(), |e| start + e);
        Some(&self.all[start..end])
    }
}

/// The `### title` subsection of a section.
fn sub<'a, 'b>(lines: &'b [&'a str], title: &str) -> Option<&'b [&'a str]> {
    let start = lines.iter().position(|l| l.trim_end() == format!("### {title}"))? + 1;
    let end = lines[start..].iter().position(|l| l.starts_with("### ")).map_or(lines.len(), |e| start + e);
    Some(&lines[start..end])
}

/// The rows of the first table in `lines` at or after `from`: (rows, the line after it).
fn read_table(
    lines: &[&str],
    from: usize,
    cols: usize,
    what: &str,
    warn: &mut Vec<String>,
) -> (Vec<Vec<String>>, usize) {
    let Some(head) =
        lines[from.min(lines.len())..].iter().position(|l| l.trim_start().starts_with('|')).map(|p| p + from)
    else {
        return (Vec::new(), lines.len());
    };
    let mut rows = Vec::new();
    let mut i = head + 2; // the header and the rule
    while i < lines.len() && lines[i].trim_start().starts_with('|') {
        match cells(lines[i]) {
            Some(c) if c.len() == cols => rows.push(c),
            _ => warn.push(format!("{what}: a table row could not be read: {}", lines[i].trim())),
        }
        i += 1;
    }
    (rows, i)
}

/// `- Key: value` items of a block, unescaped.
fn items(lines: &[&str]) -> Vec<(String, String)> {
    lines
        .iter()
        .filter_map(|l| l.strip_prefix("- "))
        .filter_map(|l| {
            l.split_once(':').map(|(k, v)| (k.trim().to_string(), unesc(v.strip_prefix(' ').unwrap_or(v).trim_end())))
        })
        .collect()
}

fn item<'a>(items: &'a [(String, String)], key: &str) -> Option<&'a str> {
    items.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
}

fn num<T: std::str::FromStr + Default>(v: Option<&str>, what: &str, warn: &mut Vec<String>) -> T {
    match v.map(str::trim) {
        Some(x) => x.parse().unwrap_or_else(|_| {
            warn.push(format!("{what}: {x:?} is not a number"));
            T::default()
        }),
        None => T::default(),
    }
}

fn opt_cell(c: &str) -> Option<String> {
    (!c.is_empty()).then(|| c.to_string())
}

fn pct(v: &str) -> Option<f64> {
    v.trim().trim_end_matches('%').parse().ok()
}

/// Splits `text` ending in `` <sep>`code` `` into (text, code); the code span's backticks
/// are the unescaped ones.
fn trailing_code(text: &str, sep: &str) -> (String, Option<String>) {
    let b = text.as_bytes();
    let unescaped = |i: usize| b[..i].iter().rev().take_while(|&&c| c == b'\\').count() % 2 == 0;
    if b.len() >= 2 && b[b.len() - 1] == b'`' && unescaped(b.len() - 1) {
        if let Some(open) = (0..b.len() - 1).rev().find(|&i| b[i] == b'`' && unescaped(i)) {
            if text[..open].ends_with(sep) {
                return (text[..open - sep.len()].to_string(), Some(unesc(&text[open + 1..b.len() - 1])));
            }
        }
    }
    (text.to_string(), None)
}

/// Reads a report. Never fails: what is missing or damaged is reported in `warnings` and
/// left at its default; an empty file reads as [`SessionMemory::no_data`].
pub fn parse(text: &str) -> Parsed {
    let mut w: Vec<String> = Vec::new();
    if text.trim().is_empty() {
        return Parsed {
            memory: SessionMemory::no_data(),
            warnings: vec!["the file is empty: no session data".into()],
        };
    }
    let lines = Lines { all: text.lines().collect() };
    let mut m = SessionMemory::default();

    match lines.all.iter().find_map(|l| l.strip_prefix("# Session Memory: ")) {
        Some(name) => m.metadata.project_name = uncode_name(name.trim_end()),
        None => w.push("no `# Session Memory:` title".into()),
    }
    let raw_field =
        |key: &str| lines.all.iter().find_map(|l| l.strip_prefix(&format!("**{key}**: ")).map(str::trim_end));
    let field = |key: &str| raw_field(key).map(unesc);
    m.metadata.generated_at = field("Generated").unwrap_or_else(|| {
        w.push("no **Generated** time".into());
        "unknown".into()
    });
    m.metadata.branch = raw_field("Branch").map(uncode_name).unwrap_or_else(|| {
        w.push("no **Branch**".into());
        "unknown".into()
    });
    m.metadata.session_duration = field("Session Duration");
    m.metadata.version = field("Format Version").unwrap_or_else(|| FORMAT_VERSION.into());
    m.metadata.left_out =
        field("Left Out").map(|l| l.split(LEFT_OUT_SEPARATOR).map(str::to_string).collect()).unwrap_or_default();

    match lines.section("Executive Summary") {
        None => w.push("missing section: Executive Summary".into()),
        Some(sec) => {
            let n = |i: &str| sec.iter().find_map(|l| l.strip_prefix(&format!("{i}. "))).map(|v| v.trim_end());
            let s = &mut m.summary;
            s.project_description = n("1").map(unesc).unwrap_or_default();
            s.completion_status = n("2").map(unesc).unwrap_or_default();
            s.current_phase =
                n("3").map(|v| unesc(v.strip_prefix("Current phase:").unwrap_or(v).trim_start())).unwrap_or_default();
            s.major_blocker = n("4").and_then(|v| v.strip_prefix("Major blocker:").map(|b| unesc(b.trim_start())));
            s.next_action =
                n("5").map(|v| unesc(v.strip_prefix("Next action:").unwrap_or(v).trim_start())).unwrap_or_default();
            if (1..=5).any(|i| n(&i.to_string()).is_none()) {
                w.push("Executive Summary: fewer than five items".into());
            }
        }
    }

    if let Some(sec) = lines.section(WORK) {
        m.work = sec
            .iter()
            .filter(|l| !l.trim().is_empty())
            .map(|l| l.strip_prefix('\\').unwrap_or(l).to_string())
            .collect();
    }

    match lines.section("Task Status") {
        None => w.push("missing section: Task Status".into()),
        Some(sec) => {
            warn_if_empty(sec, "Task Status", &mut w);
            read_tasks(sec, &mut m.task_status, &mut w)
        }
    }

    match lines.section("Blockers") {
        None => w.push("missing section: Blockers".into()),
        Some(sec) => {
            for p in [Priority::High, Priority::Medium, Priority::Low] {
                let name = priority_name(p);
                let title = format!("{}{} Priority", name[..1].to_uppercase(), &name[1..]);
                if let Some(block) = sub(sec, &title) {
                    let (rows, _) = read_table(block, 0, 5, "Blockers", &mut w);
                    for r in rows {
                        m.blockers.push(BlockerEntry {
                            priority: p,
                            task_id: opt_cell(&r[0]),
                            title: r[1].clone(),
                            description: r[2].clone(),
                            required_action: r[3].clone(),
                            detected_at: opt_cell(&r[4]),
                        });
                    }
                }
            }
        }
    }

    match lines.section("Test Results") {
        None => w.push("missing section: Test Results".into()),
        Some(sec) => {
            warn_if_empty(sec, "Test Results", &mut w);
            let last = sec.iter().find_map(|l| l.strip_prefix("**Last Run**: ")).map(|v| unesc(v.trim_end()));
            m.test_results.last_run = last.filter(|v| v != "never");
            // A suite that never ran has no block (older reports said `Not run.` in it).
            for (title, e2e) in [("Unit Tests", false), ("E2E Tests", true)] {
                match sub(sec, title) {
                    Some(block) if block.iter().any(|l| l.trim_end() == "Not run.") => {}
                    Some(block) => *m.test_results.suite_mut(e2e) = read_suite(block, title, &mut w),
                    None => {}
                }
            }
        }
    }

    match lines.section("Environment State") {
        None => w.push("missing section: Environment State".into()),
        Some(sec) => {
            warn_if_empty(sec, "Environment State", &mut w);
            read_environment(sec, &mut m.environment, &mut w)
        }
    }

    match lines.section("Files Needing Attention") {
        None => w.push("missing section: Files Needing Attention".into()),
        Some(sec) => {
            // `None.` is what older reports said for no file.
            for l in sec.iter().filter(|l| !["None.", NO_FILES, ""].contains(&l.trim())) {
                match read_file_ref(l) {
                    Some(f) => m.files_needing_attention.push(f),
                    None => w.push(format!("Files Needing Attention: cannot read {:?}", l.trim())),
                }
            }
        }
    }

    match lines.section("Next Steps") {
        None => w.push("missing section: Next Steps".into()),
        Some(sec) => {
            for p in
                [StepPriority::Immediate, StepPriority::ShortTerm, StepPriority::MediumTerm, StepPriority::LongTerm]
            {
                let Some(block) = sub(sec, step_name(p)) else { continue };
                for l in block.iter().filter(|l| !l.trim().is_empty()) {
                    let Some((n, rest)) = l.split_once(". ") else {
                        w.push(format!("Next Steps: cannot read {:?}", l.trim()));
                        continue;
                    };
                    if n.parse::<u32>().is_err() {
                        w.push(format!("Next Steps: cannot read {:?}", l.trim()));
                        continue;
                    }
                    let (action, reference) = trailing_code(rest.trim_end(), " → ");
                    m.next_steps.push(NextStep { priority: p, action: unesc(&action), reference });
                }
            }
        }
    }
    Parsed { memory: m, warnings: w }
}

/// A section is written with at least a sentence in it ([`NO_TASKS`], [`NO_TESTS`],
/// [`NO_ENVIRONMENT`]); one with nothing lost its lines.
fn warn_if_empty(sec: &[&str], title: &str, w: &mut Vec<String>) {
    if sec.iter().all(|l| l.trim().is_empty()) {
        w.push(format!("{title}: the section is empty"));
    }
}

fn read_tasks(sec: &[&str], t: &mut TaskStatus, w: &mut Vec<String>) {
    // No source is no line (older reports wrote `**Source**: none`).
    match sec.iter().find_map(|l| l.strip_prefix("**Source**: ")).map(str::trim_end) {
        None | Some("none") => {}
        Some(v) if v.len() >= 2 && v.starts_with('`') && v.ends_with('`') => t.source_file = unesc(&v[1..v.len() - 1]),
        Some(v) => t.source_file = unesc(v),
    }
    let cur = sec.iter().position(|l| l.starts_with("**Current Task**:")).unwrap_or(sec.len());
    let next = sec.iter().position(|l| l.starts_with("**Next Tasks**:")).unwrap_or(sec.len());
    let phases_end = cur.min(next);
    let (rows, _) = read_table(&sec[..phases_end], 0, 4, "Task Status phases", w);
    for r in rows {
        let completed = num(Some(&r[1]), "phase completed", w);
        let total = num(Some(&r[2]), "phase total", w);
        let percentage = pct(&r[3]).unwrap_or_else(|| {
            w.push(format!("phase progress {:?} is not a percentage", r[3]));
            0.0
        });
        t.phases.push(PhaseStatus { name: unquote(&r[0]), completed, total, percentage });
    }
    let refs = |from: usize, to: usize, w: &mut Vec<String>| -> Vec<TaskReference> {
        if from >= sec.len() || sec[from].trim_end().ends_with("none") {
            return Vec::new();
        }
        let (rows, _) = read_table(&sec[from..to.max(from)], 1, 3, "Task Status tasks", w);
        rows.into_iter()
            .map(|r| TaskReference { id: r[0].clone(), title: unquote(&r[1]), phase: unquote(&r[2]) })
            .collect()
    };
    let end_of_cur = if next > cur { next } else { sec.len() };
    t.current_task = refs(cur, end_of_cur, w).into_iter().next();
    let end_of_next = if cur > next { cur } else { sec.len() };
    t.next_tasks = refs(next, end_of_next, w);
}

fn read_suite(block: &[&str], title: &str, w: &mut Vec<String>) -> TestSuite {
    let it = items(block);
    let status = match item(&it, "Status") {
        Some("passed") => SuiteStatus::Passed,
        Some("failed") => SuiteStatus::Failed,
        Some("not-run") | None => SuiteStatus::NotRun,
        Some(x) => {
            w.push(format!("{title}: unknown status {x:?}"));
            SuiteStatus::NotRun
        }
    };
    let mut s = TestSuite {
        framework: item(&it, "Framework").unwrap_or("").to_string(),
        status,
        passed: num(item(&it, "Passed"), "passed", w),
        failed: num(item(&it, "Failed"), "failed", w),
        skipped: num(item(&it, "Skipped"), "skipped", w),
        total: num(item(&it, "Total"), "total", w),
        percentage: item(&it, "Pass Rate").and_then(pct).unwrap_or(0.0),
        command: item(&it, "Command").unwrap_or("").to_string(),
        ran_at: item(&it, "Ran At").map(str::to_string),
        more_failures: num(item(&it, "More Failures"), "more failures", w),
        failures: Vec::new(),
    };
    let (rows, _) = read_table(block, 0, 4, title, w);
    for r in rows {
        s.failures.push(TestFailure {
            file: r[0].clone(),
            line: opt_cell(&r[1]).and_then(|l| l.parse().ok()),
            test_name: unquote(&r[2]),
            message: opt_cell(&unquote(&r[3])),
        });
    }
    s
}

fn read_environment(sec: &[&str], e: &mut EnvironmentState, w: &mut Vec<String>) {
    // No server is no block (older reports said `No servers.` in it).
    if let Some(block) = sub(sec, "Servers") {
        let (rows, _) = read_table(block, 0, 8, "Servers", w);
        for r in rows {
            e.servers.push(ServerInfo {
                process: unquote(&r[0]),
                port: num(Some(&r[1]), "server port", w),
                url: r[2].clone(),
                pid: opt_cell(&r[3]).and_then(|p| p.parse().ok()),
                status: if r[4] == "stopped" { ServerStatus::Stopped } else { ServerStatus::Running },
                command: unquote(&r[5]),
                started_at: r[6].clone(),
                stopped_at: opt_cell(&r[7]),
            });
        }
    }
    let dep = |v: &str| match v {
        "up-to-date" => DependencyState::UpToDate,
        "outdated" => DependencyState::Outdated,
        _ => DependencyState::Unknown,
    };
    if let Some(block) = sub(sec, "Dependencies") {
        let it = items(block);
        e.dependencies = DependencyStatus {
            status: dep(item(&it, "Status").unwrap_or("unknown")),
            last_install: item(&it, "Last Install").filter(|v| *v != "never").map(str::to_string),
            package_manager: item(&it, "Package Manager").unwrap_or("unknown").to_string(),
            outdated_count: item(&it, "Outdated Packages").and_then(|v| v.parse().ok()),
            managers: Vec::new(),
        };
        let (rows, _) = read_table(block, 0, 5, "Dependencies", w);
        for r in rows {
            e.dependencies.managers.push(ManagerStatus {
                package_manager: r[0].clone(),
                lockfile: r[1].clone(),
                status: dep(&r[2]),
                last_install: opt_cell(&r[3]),
                detail: r[4].clone(),
            });
        }
    }
    if let Some(block) = sub(sec, "Build") {
        let it = items(block);
        e.build = BuildStatus {
            status: match item(&it, "Status") {
                Some("success") => BuildState::Success,
                Some("failed") => BuildState::Failed,
                _ => BuildState::NotRun,
            },
            last_build: item(&it, "Last Build").filter(|v| *v != "never").map(str::to_string),
            output_dir: item(&it, "Output Directory").map(str::to_string),
            command: item(&it, "Command").unwrap_or("").to_string(),
            errors: Vec::new(),
        };
        let (rows, _) = read_table(block, 0, 1, "Build", w);
        e.build.errors = rows.into_iter().map(|r| unquote(&r[0])).collect();
    }
}

fn read_file_ref(l: &str) -> Option<FileReference> {
    let (n, rest) = l.split_once(". [")?;
    n.trim().parse::<u32>().ok()?;
    let (prio, rest) = rest.split_once("] `")?;
    let priority = match prio {
        "high" => Priority::High,
        "medium" => Priority::Medium,
        "low" => Priority::Low,
        _ => return None,
    };
    // The path's closing backtick is the first unescaped one.
    let b = rest.as_bytes();
    let close =
        (0..b.len()).find(|&i| b[i] == b'`' && b[..i].iter().rev().take_while(|&&c| c == b'\\').count() % 2 == 0)?;
    let path = unesc(&rest[..close]);
    let rest = &rest[close + 1..];
    let (line, reason) = match rest.strip_prefix(':') {
        Some(r) => {
            let (n, reason) = r.split_once(" — ")?;
            (Some(n.parse().ok()?), reason)
        }
        None => (None, rest.strip_prefix(" — ")?),
    };
    Some(FileReference { path, line, reason: unesc(reason.trim_end()), priority })
}
