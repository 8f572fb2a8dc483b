//! The project's task list: spec-kit's `specs/*/tasks.md` (the most recently modified), or
//! a plain checklist in a root `TODO.md`, `PLAN.md` or `tasks.md`.
//!
//! Read as CommonMark with task-list items (pulldown-cmark): `## Phase N: Name` starts a
//! phase; `- [ ]`, `* [x]`, `1. [X]` and `- ✅` items are tasks, their sub-items are not; a
//! leading `T001`-style id is kept apart and markers such as `[P]` and `[US1]` are kept out
//! of the title. Code, HTML and comments hold no tasks.

use ccmem_proto::model::report::{PhaseStatus, TaskReference, TaskStatus};
use ccmem_proto::model::session::{Phase, Plan, Session};
use std::path::{Path, PathBuf};

/// Task files larger than this are not read.
const MAX_BYTES: u64 = 4 << 20;
/// Tasks read at most: the rest of a longer list is left out, and the session says so. A
/// list a person keeps is far shorter; a repository's 4 MiB of items must not cost the
/// project's task seconds at every checkpoint.
pub const MAX_TASKS: usize = 10_000;
/// The start of the session's warning about a task list that cannot be read.
const NOT_READ: &str = "task list not read: ";
/// The start of the session's warning about a task list read only in part.
const CUT: &str = "task list cut short: ";
/// Root checklists looked for, in order, when there is no spec-kit task list.
const ROOT_LISTS: &[&str] = &["tasks.md", "TODO.md", "todo.md", "PLAN.md", "plan.md", "TASKS.md"];

/// One task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Task {
    /// `T001`, or empty.
    pub id: String,
    /// The title without id and markers.
    pub title: String,
    /// Its phase's name.
    pub phase: String,
    /// Done.
    pub done: bool,
    /// 1-based line in the file.
    pub line: usize,
    /// Paths the title names (in backticks, or path-like words).
    pub paths: Vec<String>,
}

/// A parsed task list.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TaskList {
    /// Relative to the project root, forward slashes.
    pub file: String,
    /// Phase names in file order.
    pub phases: Vec<String>,
    /// All tasks in file order.
    pub tasks: Vec<Task>,
    /// The file's modification time.
    pub modified: Option<chrono::DateTime<chrono::Utc>>,
    /// Tasks past [`MAX_TASKS`], not read.
    pub left_out: usize,
}

/// Whether a changed file (relative path) may be the project's task list.
pub fn is_task_list(rel: &str) -> bool {
    ROOT_LISTS.contains(&rel)
        || rel.strip_prefix("specs/").is_some_and(|r| r.split('/').count() == 2 && r.ends_with("/tasks.md"))
}

/// The task list of the project at `root`, if it has one: the one `tasks.file` in the
/// project's `.claude/ccmem.toml` names, else the newest spec-kit list, else a root checklist.
/// An error says why a list that is there cannot be read (over 4 MiB, not a file, a link
/// out of the project).
pub fn find(root: &Path) -> Result<Option<TaskList>, String> {
    let configured = crate::config::project(root).ok().and_then(|p| p.tasks_file).map(|f| root.join(f));
    let file = match configured {
        Some(f) => f,
        None => match spec_kit(root).or_else(|| ROOT_LISTS.iter().map(|f| root.join(f)).find(|p| p.is_file())) {
            Some(f) => f,
            None => return Ok(None),
        },
    };
    let rel = file.strip_prefix(root).unwrap_or(&file).to_string_lossy().replace('\\', "/");
    let text = match ccmem_proto::files::untrusted::read_string_in(root, &file, MAX_BYTES) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        // The file is named by the repository (its `tasks.file` can be any text): a code
        // span of one line in the warning that `status` and the agent read.
        Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
            return Err(format!("{} is larger than {} MiB", ccmem_proto::quote::name_code(&rel), MAX_BYTES >> 20))
        }
        Err(e) => return Err(format!("{}: {e}", ccmem_proto::quote::name_code(&rel))),
    };
    let modified = std::fs::metadata(&file).and_then(|m| m.modified()).ok();
    let mut list = parse_once(&file, &text);
    list.file = rel;
    list.modified = modified.map(chrono::DateTime::from);
    Ok(Some(list))
}

/// Lists parsed lately, by file, with a hash of the text they were parsed from: a list is
/// read at every checkpoint and status, and most of the time it has not changed. Keyed by
/// content, not by modification time, so that a list rewritten within one clock tick is
/// never served stale.
type Parsed = std::collections::HashMap<PathBuf, (u64, TaskList)>;
static PARSED: std::sync::Mutex<Option<Parsed>> = std::sync::Mutex::new(None);
/// Files remembered at most (one per active project, in practice).
const PARSED_FILES: usize = 64;

/// [`parse`], or the list already parsed from this very text.
fn parse_once(file: &Path, text: &str) -> TaskList {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    let hash = h.finish();
    let lock = || PARSED.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((_, list)) = lock().as_ref().and_then(|m| m.get(file)).filter(|(h, _)| *h == hash) {
        return list.clone();
    }
    let list = parse(text);
    let mut memo = lock();
    let memo = memo.get_or_insert_with(Parsed::new);
    if memo.len() >= PARSED_FILES {
        memo.clear();
    }
    memo.insert(file.to_path_buf(), (hash, list.clone()));
    list
}

/// The most recently modified `specs/*/tasks.md`.
fn spec_kit(root: &Path) -> Option<PathBuf> {
    std::fs::read_dir(root.join("specs"))
        .ok()?
        .flatten()
        .map(|e| e.path().join("tasks.md"))
        .filter_map(|p| std::fs::metadata(&p).and_then(|m| m.modified()).ok().map(|t| (t, p)))
        .max_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.cmp(&b.1)))
        .map(|(_, p)| p)
}

/// Reads a task list's text as CommonMark (GitHub's task-list items): what a renderer shows
/// as a checkbox is a task, nothing else is. Checkboxes in fenced or indented code, HTML
/// blocks and comments are not tasks; neither are the sub-items of a task (`  - [x] a
/// sub-check`, `  - ✅ done`), which are part of it.
///
/// Phases are the sections of the outermost heading level below the title (`##` in
/// spec-kit), and any heading named `Phase …`; deeper headings inside a phase (spec-kit's
/// `### Tests for User Story 1`, `### Tasks`) are parts of it. Tasks before any phase are
/// in the phase "Tasks".
pub fn parse(text: &str) -> TaskList {
    use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
    // Front matter (spec-kit's template has one) is not a heading.
    let options = Options::ENABLE_TASKLISTS | Options::ENABLE_YAML_STYLE_METADATA_BLOCKS;
    let phase_level = Parser::new_ext(text, options)
        .filter_map(|e| match e {
            Event::Start(Tag::Heading { level, .. }) => Some(level as usize),
            _ => None,
        })
        .filter(|l| *l >= 2)
        .min();
    let line_starts: Vec<usize> = std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1)).collect();
    let line_of = |offset: usize| line_starts.partition_point(|&s| s <= offset);

    let mut list = TaskList::default();
    let mut phase = String::new();
    let mut heading: Option<(usize, String)> = None;
    let mut items: Vec<Item> = Vec::new();
    // How many items on the stack are tasks: whether an item is under a task is asked at
    // every checkbox, and a deeply nested list must not make that a walk of the stack.
    let mut open_tasks = 0usize;
    let mut phases_seen: std::collections::HashSet<String> = std::collections::HashSet::new();
    for (event, range) in Parser::new_ext(text, options).into_offset_iter() {
        match event {
            Event::Start(Tag::Heading { level, .. }) => heading = Some((level as usize, String::new())),
            Event::End(TagEnd::Heading(_)) => {
                if let Some((level, h)) = heading.take() {
                    if let Some(name) = phase_name(&h, level, phase_level) {
                        phase = crate::text::clean(&name);
                    }
                }
            }
            Event::Start(Tag::Item) => items.push(Item { line: line_of(range.start), ..Item::default() }),
            // A list inside an item: the item's own text has ended.
            Event::Start(Tag::List(_)) => {
                if let Some(top) = items.last_mut() {
                    top.own_text_done = true;
                }
            }
            Event::TaskListMarker(checked) => {
                let top_is_task = items.last().is_some_and(|i| i.task);
                let under_a_task = open_tasks > usize::from(top_is_task);
                if let Some(top) = items.last_mut().filter(|i| !under_a_task && !i.task) {
                    top.task = true;
                    top.done = checked;
                    open_tasks += 1;
                }
            }
            Event::Text(t) => push_text(&mut heading, &mut items, &t),
            Event::Code(c) => push_text(&mut heading, &mut items, &format!("`{c}`")),
            Event::SoftBreak | Event::HardBreak => push_text(&mut heading, &mut items, " "),
            Event::End(TagEnd::Item) => {
                let Some(item) = items.pop() else { continue };
                open_tasks -= usize::from(item.task);
                let under_a_task = open_tasks > 0;
                let checkmark = item.text.trim_start().starts_with('✅');
                if under_a_task || !(item.task || checkmark) {
                    continue;
                }
                if list.tasks.len() >= MAX_TASKS {
                    list.left_out += 1;
                    continue;
                }
                add_task(&mut list, &mut phases_seen, &phase, item);
            }
            _ => {}
        }
    }
    list
}

/// A list item being read.
#[derive(Default)]
struct Item {
    /// 1-based line of its start.
    line: usize,
    /// It has a checkbox.
    task: bool,
    done: bool,
    /// Its own text (not its sub-items').
    text: String,
    own_text_done: bool,
}

fn push_text(heading: &mut Option<(usize, String)>, items: &mut [Item], t: &str) {
    if let Some((_, h)) = heading {
        h.push_str(t);
    } else if let Some(top) = items.last_mut().filter(|i| !i.own_text_done) {
        top.text.push_str(t);
    }
}

fn add_task(list: &mut TaskList, phases_seen: &mut std::collections::HashSet<String>, phase: &str, item: Item) {
    let (id, title) = split_id(item.text.trim());
    let done = item.done || title.contains('✅');
    // Task lists are the user's text like any other: filtered before they are kept.
    let title = crate::text::clean(title.replace('✅', "").trim());
    if title.is_empty() && id.is_empty() {
        return;
    }
    let phase_name = if phase.is_empty() { "Tasks".to_string() } else { phase.to_string() };
    if phases_seen.insert(phase_name.clone()) {
        list.phases.push(phase_name.clone());
    }
    list.tasks.push(Task { paths: paths_in(&title), id, title, phase: phase_name, done, line: item.line });
}

/// A heading's phase name, if it starts a phase: `## Phase 2: Core (MVP)` → `Core (MVP)`; a
/// heading of the phase level by its text. The document title (`#`) and deeper headings are
/// not phases, unless named `Phase …`.
fn phase_name(h: &str, level: usize, phase_level: Option<usize>) -> Option<String> {
    let h = h.trim().trim_matches('*').trim();
    let lower = h.to_ascii_lowercase();
    if let Some(rest) =
        lower.strip_prefix("phase").filter(|r| r.starts_with([' ', ':']) || r.starts_with(|c: char| c.is_ascii_digit()))
    {
        // `Phase 2: Name`, `Phase 2 - Name`, `Phase 2`.
        let after_num = rest.trim_start().trim_start_matches(|c: char| c.is_ascii_alphanumeric() || c == '.');
        let name_at = h.len() - after_num.len();
        let name = h[name_at..].trim_start_matches([':', '-', '–', '—', ' ']).trim();
        return Some(if name.is_empty() { h.to_string() } else { name.to_string() });
    }
    (level >= 2 && Some(level) == phase_level && !h.is_empty()).then(|| h.to_string())
}

/// A leading `T001` / `TASK-12` id (bold or bracketed too) and the markers after it.
fn split_id(rest: &str) -> (String, String) {
    let mut r = rest.trim();
    let mut id = String::new();
    let token = r.split_whitespace().next().unwrap_or("");
    let bare = token.trim_matches(|c| c == '*' || c == '[' || c == ']' || c == ':');
    let looks_like_id = {
        let letters = bare.bytes().take_while(u8::is_ascii_uppercase).count();
        let tail = bare[letters..].trim_start_matches('-');
        let numbered = (1..=5).contains(&letters) && !tail.is_empty() && tail.bytes().all(|b| b.is_ascii_digit());
        // spec-kit's placeholder `TXXX`.
        let b = bare.as_bytes();
        let placeholder = b.len() >= 3 && b[0] == b'T' && b[1..].iter().all(|&c| c == b'X');
        numbered || placeholder
    };
    if looks_like_id {
        id = bare.to_string();
        r = r[token.len()..].trim_start();
    }
    // Markers: `[P]`, `[US1]`, `[Story 2]` right after the id.
    while let Some(after) = r.strip_prefix('[') {
        match after.find(']') {
            Some(end) if end <= 16 => r = after[end + 1..].trim_start(),
            _ => break,
        }
    }
    (id, r.trim_start_matches([':', '-', '–', '—']).trim().to_string())
}

/// Paths a task names: backticked ones, and words with a slash or a file extension.
pub fn paths_in(title: &str) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    let mut push = |p: &str| {
        let p = p.trim_matches(|c: char| "`'\"(),;:".contains(c)).trim_end_matches('.');
        let plausible = !p.is_empty()
            && !p.contains("://")
            && !p.starts_with('/')
            && !p.contains("..")
            && p.len() <= 200
            && (p.contains('/') || p.starts_with('.') || has_extension(p))
            && p.chars().all(|c| c.is_alphanumeric() || "._-/@+".contains(c));
        if plausible && !found.iter().any(|f| f == p) {
            found.push(p.to_string());
        }
    };
    let parts: Vec<&str> = title.split('`').collect();
    for (i, part) in parts.iter().enumerate() {
        if i % 2 == 1 {
            push(part);
        } else {
            part.split_whitespace().for_each(&mut push);
        }
    }
    found
}

fn has_extension(p: &str) -> bool {
    match p.rsplit_once('.') {
        Some((stem, ext)) => {
            stem.chars().count() >= 2
                && (1..=5).contains(&ext.len())
                && ext.chars().all(|c| c.is_ascii_alphanumeric())
                && ext.chars().any(|c| c.is_ascii_alphabetic())
        }
        None => false,
    }
}

impl TaskList {
    /// (done, total).
    pub fn counts(&self) -> (u64, u64) {
        (self.tasks.iter().filter(|t| t.done).count() as u64, self.tasks.len() as u64)
    }

    /// The first incomplete task.
    pub fn current(&self) -> Option<&Task> {
        self.tasks.iter().find(|t| !t.done)
    }

    /// Seed 000's TaskStatus: per phase, the current task and at most 5 next ones.
    pub fn status(&self) -> TaskStatus {
        // One pass over the tasks, however many phases there are.
        let mut counts: std::collections::HashMap<&str, (u64, u64)> = std::collections::HashMap::new();
        for t in &self.tasks {
            let c = counts.entry(t.phase.as_str()).or_default();
            c.0 += u64::from(t.done);
            c.1 += 1;
        }
        let phases = self
            .phases
            .iter()
            .map(|name| {
                let (done, total) = counts.get(name.as_str()).copied().unwrap_or_default();
                PhaseStatus { name: name.clone(), completed: done, total, percentage: percent(done, total) }
            })
            .collect();
        let mut open = self.tasks.iter().filter(|t| !t.done).map(|t| TaskReference {
            id: t.id.clone(),
            title: t.title.clone(),
            phase: t.phase.clone(),
        });
        let current_task = open.next();
        TaskStatus { source_file: self.file.clone(), phases, current_task, next_tasks: open.take(5).collect() }
    }
}

/// Reads the project's task list into the session: seed 000's TaskStatus, and seed 004's
/// plan and phase (the current task's phase and its progress). Returns the list read, for
/// the report built from the same state.
pub fn refresh(s: &mut Session) -> Option<TaskList> {
    s.warnings.retain(|w| !w.starts_with(NOT_READ) && !w.starts_with(CUT));
    let list = match find(&s.project_root) {
        Ok(Some(list)) => list,
        found => {
            // Gone or unreadable: no figures of a list that is no longer what the file says.
            s.task_status = TaskStatus::default();
            s.plan = None;
            if let Err(why) = found {
                // (It may name a path, which may hold a token.)
                s.warnings.push(ccmem_proto::redact::redact(&format!("{NOT_READ}{why}")).into_owned());
            }
            return None;
        }
    };
    if list.left_out > 0 {
        s.warnings.push(format!(
            "{CUT}{} has more than {MAX_TASKS} tasks: the first {MAX_TASKS} are read, {} left out",
            ccmem_proto::quote::name_code(&list.file),
            list.left_out
        ));
    }
    let (done, total) = list.counts();
    s.plan = Some(Plan {
        file: list.file.rsplit('/').next().unwrap_or(&list.file).to_string(),
        // Where the list is, for a reader; the project's path can hold a token.
        path: ccmem_proto::redact::redact(&s.project_root.join(&list.file).to_string_lossy()).into_owned(),
        total_tasks: total,
        completed_tasks: done,
        progress: percent(done, total),
        last_modified: list.modified.map(crate::clock::iso).unwrap_or_default(),
    });
    let status = list.status();
    if let Some(cur) = &status.current_task {
        let completion = status.phases.iter().find(|p| p.name == cur.phase).map_or(0.0, |p| p.percentage);
        let keep = s.phase.take().unwrap_or_default();
        s.phase = Some(Phase { name: cur.phase.clone(), completion, ..keep });
    }
    s.task_status = status;
    Some(list)
}

/// `part / whole × 100`, one decimal.
pub fn percent(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        (part as f64 * 1000.0 / whole as f64).round() / 10.0
    }
}

#[cfg(test)]
mod tests;
