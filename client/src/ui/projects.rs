//! The first screen: every project the journal holds, live ones first, each with its agents,
//! its last activity, and its state in one line; the selected one's details below.

use super::list::Cursor;
use super::screen::{load, Look, Src, Step};
use super::text::{cut, fit, short_path};
use super::{sessions::Sessions, Screen};
use ccmem_proto::wire::api::{Brief, ProjectRow};
use ratatui::crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;
use std::path::PathBuf;

/// The projects.
pub struct Projects {
    pub rows: Vec<ProjectRow>,
    pub cursor: Cursor,
}

impl Projects {
    /// Read from the daemon, the project with the newest activity selected.
    pub fn load(src: Src<'_>) -> (Self, Option<String>) {
        let (got, err) = load("list the projects", src.projects());
        let rows = got.map(|p| p.projects).unwrap_or_default();
        let newest = rows.iter().enumerate().max_by_key(|(_, r)| r.last_ms).map_or(0, |(i, _)| i);
        let cursor = Cursor { at: newest, len: rows.len(), ..Cursor::default() };
        (Self { rows, cursor }, err)
    }

    pub fn selected(&self) -> Option<&ProjectRow> {
        self.rows.get(self.cursor.at)
    }

    /// Read again, the same project kept selected.
    pub fn changed(&mut self, src: Src<'_>, _changed: &[PathBuf]) -> Option<String> {
        let keep = self.selected().map(|r| r.root.clone());
        let (got, err) = load("list the projects", src.projects());
        if let Some(p) = got {
            self.rows = p.projects;
            let found = keep.and_then(|k| self.rows.iter().position(|r| r.root == k));
            self.cursor.refill(self.rows.len(), found);
        }
        err
    }

    pub fn key(&mut self, key: &KeyEvent, src: Src<'_>) -> Step {
        if self.cursor.key(key) {
            return Step::Stay;
        }
        let Some(row) = self.selected().cloned() else { return Step::Stay };
        match key.code {
            KeyCode::Enter | KeyCode::Right | KeyCode::Char('l') => {
                let (s, err) = Sessions::load(src, &row.root, &row.name);
                match err {
                    Some(e) => Step::Say(e),
                    None => Step::Open(Box::new(Screen::Sessions(s))),
                }
            }
            KeyCode::Char('m') => {
                Step::Open(Box::new(Screen::Memories(super::memories::Memories::load(src, &row.root))))
            }
            KeyCode::Char('r') => match src.sessions(&row.root) {
                Ok(s) => match s.sessions.first() {
                    Some(first) => super::screen::resume_of_session(&row.root, first),
                    None => Step::Say(super::screen::NO_RESUME.into()),
                },
                Err(e) => Step::Say(super::screen::failed("read its sessions", &e)),
            },
            _ => Step::Stay,
        }
    }

    pub fn draw(&mut self, f: &mut Frame, area: Rect, look: &Look) {
        let detail_h = if area.height >= 14 { 6 } else { 0 };
        let list = Rect { height: area.height - detail_h, ..area };
        let t = &look.theme;
        if self.rows.is_empty() {
            let text = vec![
                Line::from(""),
                Line::from("  No project in the journal yet."),
                Line::from("  Work with an agent whose hooks ccmem installed (`ccmemctl hooks install`),"),
                Line::from("  or take in what your agents did before: `ccmemctl import --all`."),
            ];
            f.render_widget(Paragraph::new(text), list);
            return;
        }
        let w = list.width as usize;
        let name_w = 22.min(w / 4);
        let agents_w = if w >= 100 { 26 } else { 14 };
        let ago_w = 11;
        let mut lines = Vec::new();
        for i in self.cursor.place(list) {
            let r = &self.rows[i];
            let mark = if r.live { Span::styled("● ", t.good()) } else { Span::styled("○ ", t.dim()) };
            let agents = r.agents.iter().map(|a| short_agent(a)).collect::<Vec<_>>().join(", ");
            let mut spans = vec![
                mark,
                Span::styled(fit(&r.name, name_w), t.title()),
                Span::raw(" "),
                Span::raw(fit(&agents, agents_w)),
                Span::raw(" "),
                Span::styled(fit(&look.clock.ago(r.last_ms), ago_w), t.dim()),
            ];
            spans.extend(brief_spans(&r.brief, look));
            let used: usize = spans.iter().map(Span::width).sum();
            if w > used + 20 && w >= 120 {
                let path = short_path(&r.root);
                let room = w - used - 2;
                spans.push(Span::styled(format!("  {}", cut(&path, room)), t.dim()));
            }
            lines.push(Line::from(spans).style(t.row(i == self.cursor.at)));
        }
        f.render_widget(Paragraph::new(lines), list);
        if detail_h > 0 {
            let d = Rect { y: list.y + list.height, height: detail_h, ..area };
            if let Some(r) = self.selected() {
                f.render_widget(Paragraph::new(detail(r, look, w)), d);
            }
        }
    }
}

/// An agent's display name, short for a column.
pub fn short_agent(a: &str) -> &str {
    match a {
        "Claude Code" => "Claude",
        "GitHub Copilot CLI" => "Copilot",
        "Gemini CLI" => "Gemini",
        other => other,
    }
}

/// A brief as spans: tests red or green, todos left.
pub fn brief_spans(b: &Brief, look: &Look) -> Vec<Span<'static>> {
    let t = &look.theme;
    let mut out = Vec::new();
    match b.tests.as_str() {
        "failed" => out.push(Span::styled(format!("✗ {} failing", b.failed), t.bad())),
        "passed" => out.push(Span::styled(format!("✓ {} passed", b.passed), t.good())),
        _ => out.push(Span::styled("no tests run", t.dim())),
    }
    match (b.todos_left, b.todos_done) {
        (0, 0) => {}
        (0, _) => out.push(Span::styled(" · todos done", t.good())),
        (n, _) => out.push(Span::raw(format!(" · {} left", ccmem_proto::count(n, "todo", "todos")))),
    }
    out
}

/// The selected project's details.
fn detail(r: &ProjectRow, look: &Look, w: usize) -> Vec<Line<'static>> {
    let t = &look.theme;
    let rule = Line::styled("─".repeat(200), t.dim());
    let mut head = vec![Span::styled(short_path(&r.root), t.title())];
    if !r.brief.branch.is_empty() {
        head.push(Span::styled(format!("  on {}", r.brief.branch), t.dim()));
    }
    head.push(Span::styled(format!("  {}", ccmem_proto::count(r.sessions, "session", "sessions")), t.dim()));
    let mut lines = vec![rule, Line::from(head)];
    if !r.brief.task.is_empty() {
        lines.push(Line::from(vec![
            Span::styled("task  ", t.dim()),
            Span::raw(cut(&r.brief.task, w.saturating_sub(6))),
        ]));
    }
    if !r.brief.failing.is_empty() {
        lines.push(Line::from(vec![
            Span::styled("failing  ", t.dim()),
            Span::styled(cut(&r.brief.failing.join(", "), w.saturating_sub(9)), t.bad()),
        ]));
    }
    if !r.agents.is_empty() {
        lines.push(Line::from(vec![
            Span::styled("agents  ", t.dim()),
            Span::raw(cut(&r.agents.join(", "), w.saturating_sub(8))),
        ]));
    }
    lines.truncate(6);
    lines
}
