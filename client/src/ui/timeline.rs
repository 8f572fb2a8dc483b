//! A session's story in order: prompts, todos changing state, edits folded per file, test
//! runs and builds red or green, commits, compactions, agents handing over. Above it the
//! test runs as a strip over time, and the tests failing now; Enter shows a step in full.

use super::detail::Detail;
use super::list::Cursor;
use super::screen::{concerns, failed, resume_command, Look, Src, Step, NO_RESUME};
use super::text::{cut, fit};
use super::Screen;
use ccmem_proto::wire::api::{Brief, Hit, SessionRow};
use ratatui::crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;
use std::path::{Path, PathBuf};

/// One session's timeline.
pub struct Timeline {
    pub root: PathBuf,
    pub session: SessionRow,
    pub steps: Vec<Hit>,
    /// The test runs among the steps, in time order: passed (true) or failed. Told again
    /// only when the steps are read again, not at every frame.
    pub runs: Vec<(i64, bool)>,
    pub cursor: Cursor,
}

/// How close (ms) a test run's failure and its results are: one run, told once in the strip.
const SAME_RUN_MS: i64 = 60_000;

impl Timeline {
    /// Read from the daemon; `at` an event to select (a search's hit), else the newest step.
    /// A hit the timeline folds into another step (one of a read's findings, an edit again)
    /// is shown on its own line after that step, and selected.
    pub fn load(src: Src<'_>, root: &Path, session: &SessionRow, at: Option<&Hit>) -> Result<Self, String> {
        let hits = src.timeline(&session.session)?;
        let mut t = Self {
            root: root.to_path_buf(),
            session: session.clone(),
            steps: hits.hits,
            runs: Vec::new(),
            cursor: Cursor::default(),
        };
        t.cursor.at = match at {
            Some(hit) => match t.steps.iter().position(|h| h.seq == hit.seq) {
                Some(i) => i,
                None => {
                    let i = t.steps.iter().rposition(|h| h.seq < hit.seq).map_or(0, |i| i + 1);
                    t.steps.insert(i, Hit { folded: 0, ..hit.clone() });
                    i
                }
            },
            None => t.steps.len().saturating_sub(1),
        };
        t.cursor.resize(t.steps.len());
        t.runs = runs(&t.steps);
        Ok(t)
    }

    /// The step that tells event `seq`: itself, else the last before it (a folded edit).
    fn step_of(&self, seq: i64) -> usize {
        self.steps.iter().rposition(|h| h.seq <= seq).unwrap_or(0)
    }

    /// Read again when its project changed; a view at the newest step follows what comes.
    pub fn changed(&mut self, src: Src<'_>, changed: &[PathBuf]) -> Option<String> {
        if !concerns(changed, &self.root) {
            return None;
        }
        let follow = self.cursor.at_end();
        let keep = self.steps.get(self.cursor.at).map(|h| h.seq);
        let hits = match src.timeline(&self.session.session) {
            Ok(h) => h,
            Err(e) => return Some(failed("read the timeline", &e)),
        };
        if let Ok(s) = src.sessions(&self.root) {
            if let Some(row) = s.sessions.into_iter().find(|r| r.session == self.session.session) {
                self.session = row;
            }
        }
        self.steps = hits.hits;
        self.runs = runs(&self.steps);
        self.cursor.resize(self.steps.len());
        self.cursor.at = match (follow, keep) {
            (false, Some(seq)) => self.step_of(seq),
            _ => self.steps.len().saturating_sub(1),
        };
        None
    }

    pub fn key(&mut self, key: &KeyEvent, src: Src<'_>) -> Step {
        if self.cursor.key(key) {
            return Step::Stay;
        }
        let Some(hit) = self.steps.get(self.cursor.at).cloned() else { return Step::Stay };
        match key.code {
            KeyCode::Enter | KeyCode::Right | KeyCode::Char('l') => match src.show(hit.seq) {
                Ok(reply) => Step::Open(Box::new(Screen::Detail(Detail::event(reply, &self.root)))),
                Err(e) => Step::Say(failed("show the step", &e)),
            },
            KeyCode::Char('r') => self.resume(&hit),
            _ => Step::Stay,
        }
    }

    /// The command that resumes the step's conversation (its own, else the session's
    /// newest that can be).
    fn resume(&self, hit: &Hit) -> Step {
        let conversations = &self.session.conversations;
        let own = match &hit.conversation {
            Some(id) => conversations.iter().find(|c| &c.id == id).and_then(|c| c.resume.as_deref()),
            None => conversations.iter().find_map(|c| c.resume.as_deref()),
        };
        match hit.resume.as_deref().or(own) {
            Some(r) => Step::Print(resume_command(&self.root, r)),
            None => Step::Say(NO_RESUME.into()),
        }
    }

    pub fn draw(&mut self, f: &mut Frame, area: Rect, look: &Look) {
        let t = &look.theme;
        let w = area.width as usize;
        let head = strip(&self.runs, &self.session.brief, look, w);
        let head_h = (head.len() as u16).min(area.height / 3);
        f.render_widget(Paragraph::new(head), Rect { height: head_h, ..area });
        let list = Rect { y: area.y + head_h, height: area.height - head_h, ..area };
        if self.steps.is_empty() {
            f.render_widget(Paragraph::new("  Nothing in this session's timeline yet."), list);
            return;
        }
        let wide = w >= 120;
        let mut lines = Vec::new();
        let mut day_before = String::new();
        let window = self.cursor.place(list);
        if let Some(first) = window.start.checked_sub(1).and_then(|i| self.steps.get(i)) {
            day_before = day(first, look);
        }
        for i in window {
            let h = &self.steps[i];
            let ms = super::text::Clock::parse(&h.at).unwrap_or(0);
            let d = look.clock.format(ms, "%F");
            // The date where it changes; the time of day on every step.
            let when = match (wide, d != day_before) {
                (true, _) => look.clock.format(ms, "%m-%d %H:%M"),
                (false, true) => look.clock.format(ms, "%m-%d"),
                (false, false) => look.clock.format(ms, "%H:%M"),
            };
            day_before = d;
            let mut spans = vec![Span::styled(fit(&when, if wide { 12 } else { 6 }), t.dim())];
            if wide {
                let agent = h.agent.as_deref().map(super::projects::short_agent).unwrap_or("");
                spans.push(Span::styled(fit(agent, 9), t.dim()));
            }
            let style = t.kind(&h.kind, &h.outcome);
            spans.push(Span::styled(fit(&h.kind, 11), style));
            let mut text = super::text::first_line(&h.snippet).to_string();
            if h.folded > 0 {
                text.push_str(&format!(" (×{})", h.folded + 1));
            }
            let used: usize = spans.iter().map(Span::width).sum();
            let room = w.saturating_sub(used);
            if text.contains('«') {
                // A search's hit, shown on its own line: its matches marked.
                spans.extend(super::search::marked(&text, room, look));
            } else {
                let plain = ratatui::style::Style::new();
                let text_style =
                    if matches!(h.kind.as_str(), "prompt" | "failure" | "session") { style } else { plain };
                spans.push(Span::styled(cut(&text, room), text_style));
            }
            lines.push(Line::from(spans).style(t.row(i == self.cursor.at)));
        }
        f.render_widget(Paragraph::new(lines), list);
    }
}

/// The test runs among `steps`, in time order: passed (true) or failed.
fn runs(steps: &[Hit]) -> Vec<(i64, bool)> {
    let mut runs: Vec<(i64, bool)> = Vec::new();
    let at = |h: &Hit| super::text::Clock::parse(&h.at).unwrap_or(0);
    for h in steps {
        let test = h.kind == "test" && !h.outcome.is_empty();
        // A failed test command whose results were not read: a red run of its own,
        // unless its results follow.
        let failed_tests = h.kind == "failure" && h.snippet.starts_with("tests failed");
        if test {
            runs.push((at(h), h.outcome == "passed"));
        } else if failed_tests {
            let told = steps.iter().any(|n| n.kind == "test" && (at(n) - at(h)).abs() <= SAME_RUN_MS);
            if !told {
                runs.push((at(h), false));
            }
        }
    }
    // In time order: an imported conversation's results are journaled after its steps.
    runs.sort_by_key(|r| r.0);
    runs
}

/// The date of a step, for where the day changes.
fn day(h: &Hit, look: &Look) -> String {
    look.clock.format(super::text::Clock::parse(&h.at).unwrap_or(0), "%F")
}

/// The test runs as a strip (the newest that fit), the last run's counts, and the tests
/// failing now.
fn strip(runs: &[(i64, bool)], brief: &Brief, look: &Look, w: usize) -> Vec<Line<'static>> {
    let t = &look.theme;
    let mut head = vec![Span::styled("tests ", t.dim())];
    if runs.is_empty() {
        head.push(Span::styled("none run in this session", t.dim()));
    } else {
        let room = w.saturating_sub(40).max(10);
        let shown = &runs[runs.len().saturating_sub(room)..];
        if shown.len() < runs.len() {
            head.push(Span::styled("…", t.dim()));
        }
        for (_, passed) in shown {
            // Without colour, the mark itself tells.
            let (mark, style) = match (passed, t.colored()) {
                (true, true) => ("▮", t.good()),
                (false, true) => ("▮", t.bad()),
                (true, false) => ("✓", t.good()),
                (false, false) => ("✗", t.bad()),
            };
            head.push(Span::styled(mark, style));
        }
        let (first, last) = (runs[0].0, runs[runs.len() - 1].0);
        // The day too when the runs span more than one.
        let format =
            if look.clock.format(first, "%F") == look.clock.format(last, "%F") { "%H:%M" } else { "%m-%d %H:%M" };
        let (first, last) = (look.clock.format(first, format), look.clock.format(last, format));
        let span = match runs.len() {
            1 => format!("  1 run at {first}"),
            n => format!("  {n} runs {first}–{last}"),
        };
        head.push(Span::styled(span, t.dim()));
    }
    let mut lines = vec![Line::from(head)];
    match brief.tests.as_str() {
        "failed" => {
            let mut l = vec![Span::styled(format!("✗ {} failed, {} passed", brief.failed, brief.passed), t.bad())];
            if !brief.failing.is_empty() {
                l.push(Span::raw("  "));
                l.push(Span::styled(cut(&brief.failing.join(", "), w.saturating_sub(30)), t.bad()));
            }
            lines.push(Line::from(l));
        }
        "passed" => lines.push(Line::styled(format!("✓ all {} passed at the last run", brief.passed), t.good())),
        _ => {}
    }
    if !brief.task.is_empty() {
        lines.push(Line::from(vec![Span::styled("task ", t.dim()), Span::raw(cut(&brief.task, w.saturating_sub(5)))]));
    }
    lines.push(Line::styled("─".repeat(w), t.dim()));
    lines
}
