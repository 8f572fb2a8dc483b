//! A project's sessions, newest first, each with its state in one line; the selected one's
//! conversations below, with the agent, the prompts and whether it can be resumed here.

use super::list::Cursor;
use super::projects::{brief_spans, short_agent};
use super::screen::{concerns, failed, load, resume_of_session, Look, Src, Step};
use super::text::{cut, fit};
use super::{timeline::Timeline, Screen};
use ccmem_proto::wire::api::SessionRow;
use ratatui::crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;
use std::path::{Path, PathBuf};

/// The sessions of one project.
pub struct Sessions {
    pub root: PathBuf,
    pub name: String,
    pub rows: Vec<SessionRow>,
    pub more: bool,
    pub cursor: Cursor,
}

impl Sessions {
    /// Read from the daemon, the newest selected.
    pub fn load(src: Src<'_>, root: &Path, name: &str) -> (Self, Option<String>) {
        let (got, err) = load("read the project's sessions", src.sessions(root));
        let (rows, more) = got.map(|s| (s.sessions, s.more)).unwrap_or_default();
        let cursor = Cursor { len: rows.len(), ..Cursor::default() };
        (Self { root: root.to_path_buf(), name: name.to_string(), rows, more, cursor }, err)
    }

    pub fn selected(&self) -> Option<&SessionRow> {
        self.rows.get(self.cursor.at)
    }

    /// Read again when the project changed, the same session kept selected.
    pub fn changed(&mut self, src: Src<'_>, changed: &[PathBuf]) -> Option<String> {
        if !concerns(changed, &self.root) {
            return None;
        }
        let keep = self.selected().map(|r| r.session.clone());
        let (got, err) = load("read the project's sessions", src.sessions(&self.root));
        if let Some(s) = got {
            self.rows = s.sessions;
            self.more = s.more;
            let found = keep.and_then(|k| self.rows.iter().position(|r| r.session == k));
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
            KeyCode::Enter | KeyCode::Right | KeyCode::Char('l') => match Timeline::load(src, &self.root, &row, None) {
                Ok(t) => Step::Open(Box::new(Screen::Timeline(t))),
                Err(e) => Step::Say(failed("read the timeline", &e)),
            },
            KeyCode::Char('r') => resume_of_session(&self.root, &row),
            KeyCode::Char('m') => {
                Step::Open(Box::new(Screen::Memories(super::memories::Memories::load(src, &self.root))))
            }
            _ => Step::Stay,
        }
    }

    pub fn draw(&mut self, f: &mut Frame, area: Rect, look: &Look) {
        let t = &look.theme;
        let detail_h = if area.height >= 14 { (area.height / 3).clamp(6, 12) } else { 0 };
        let list = Rect { height: area.height - detail_h, ..area };
        if self.rows.is_empty() {
            f.render_widget(Paragraph::new("  No session of this project in the journal."), list);
            return;
        }
        let w = list.width as usize;
        let mut lines = Vec::new();
        for i in self.cursor.place(list) {
            let r = &self.rows[i];
            let live = r.ended_ms.is_none();
            let mark = if live { Span::styled("● ", t.good()) } else { Span::styled("○ ", t.dim()) };
            let state = match (live, r.end_reason.as_str()) {
                (true, _) => "live".to_string(),
                (false, "") => "ended".to_string(),
                (false, why) => why.to_string(),
            };
            let agents: Vec<&str> = r.conversations.iter().map(|c| short_agent(&c.agent)).collect();
            let mut agents_dedup: Vec<&str> = Vec::new();
            for a in agents {
                if !agents_dedup.contains(&a) {
                    agents_dedup.push(a);
                }
            }
            let mut spans = vec![
                mark,
                Span::styled(look.clock.format(r.started_ms, "%Y-%m-%d %H:%M"), t.title()),
                Span::raw("  "),
                Span::styled(fit(&state, 9), if live { t.good() } else { t.dim() }),
                Span::raw(" "),
                Span::raw(fit(&agents_dedup.join(", "), 14)),
                Span::styled(fit(&format!("{} events", r.events), 12), t.dim()),
            ];
            spans.extend(brief_spans(&r.brief, look));
            let used: usize = spans.iter().map(Span::width).sum();
            if w > used + 10 && !r.brief.task.is_empty() {
                spans.push(Span::styled(format!("  {}", cut(&r.brief.task, w - used - 2)), t.dim()));
            }
            lines.push(Line::from(spans).style(t.row(i == self.cursor.at)));
        }
        if self.more && lines.len() < list.height as usize {
            lines.push(Line::styled("  … older sessions are not listed", t.dim()));
        }
        f.render_widget(Paragraph::new(lines), list);
        if detail_h > 0 {
            if let Some(r) = self.selected() {
                let d = Rect { y: list.y + list.height, height: detail_h, ..area };
                f.render_widget(Paragraph::new(conversations(r, look, w)), d);
            }
        }
    }
}

/// A session's conversations, a line each.
fn conversations(r: &SessionRow, look: &Look, w: usize) -> Vec<Line<'static>> {
    let t = &look.theme;
    let mut lines = vec![Line::styled("─".repeat(w), t.dim())];
    lines.push(Line::from(vec![
        Span::styled(r.session.clone(), t.title()),
        Span::styled(format!("  last active {}", look.clock.ago(r.last_ms)), t.dim()),
    ]));
    if !r.brief.failing.is_empty() {
        lines.push(Line::from(vec![
            Span::styled("failing  ", t.dim()),
            Span::styled(cut(&r.brief.failing.join(", "), w.saturating_sub(9)), t.bad()),
        ]));
    }
    for c in &r.conversations {
        let id: String = c.id.chars().take(8).collect();
        let resumable = if c.resume.is_some() { Span::styled(" r ", t.key()) } else { Span::raw("   ") };
        let prompts = ccmem_proto::count(c.prompts, "prompt", "prompts");
        let head = format!("{} {}  {}  ", fit(short_agent(&c.agent), 8), id, fit(&prompts, 11));
        let room = w.saturating_sub(super::text::width(&head) + 3);
        lines.push(Line::from(vec![resumable, Span::raw(head), Span::styled(cut(&c.first_prompt, room), t.prompt())]));
    }
    lines
}
