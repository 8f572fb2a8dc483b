//! The knowledge memories a project sees (its own and the user's), newest first, with their
//! type, tags and links; Enter shows one in full, `/` searches them.

use super::detail::Detail;
use super::list::Cursor;
use super::screen::{failed, Look, Src, Step};
use super::text::{cut, fit};
use super::Screen;
use ccmem_proto::wire::memory::ListEntry;
use ratatui::crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;
use std::path::{Path, PathBuf};

/// A project's memories.
pub struct Memories {
    /// The project's name, for the breadcrumb.
    pub name: String,
    pub root: PathBuf,
    pub rows: Vec<ListEntry>,
    pub cursor: Cursor,
    /// Why they could not be listed.
    pub problem: Option<String>,
}

impl Memories {
    pub fn load(src: Src<'_>, root: &Path) -> Self {
        let (rows, problem) = match src.memories(root) {
            Ok(l) => (l.memories, None),
            Err(e) => (Vec::new(), Some(failed("list the memories", &e))),
        };
        let cursor = Cursor { len: rows.len(), ..Cursor::default() };
        let name = root.file_name().map_or_else(|| root.display().to_string(), |n| n.to_string_lossy().into_owned());
        Self { name, root: root.to_path_buf(), rows, cursor, problem }
    }

    pub fn key(&mut self, key: &KeyEvent, src: Src<'_>) -> Step {
        if self.cursor.key(key) {
            return Step::Stay;
        }
        match key.code {
            KeyCode::Enter | KeyCode::Right | KeyCode::Char('l') => {
                let Some(e) = self.rows.get(self.cursor.at) else { return Step::Stay };
                match src.memory(&self.root, e.scope, &e.entry.slug) {
                    Ok(m) => Step::Open(Box::new(Screen::Detail(Detail::memory(m)))),
                    Err(e) => Step::Say(failed("show the memory", &e)),
                }
            }
            _ => Step::Stay,
        }
    }

    pub fn draw(&mut self, f: &mut Frame, area: Rect, look: &Look) {
        let t = &look.theme;
        if let Some(p) = &self.problem {
            f.render_widget(Paragraph::new(Line::styled(format!("  {p}"), t.bad())), area);
            return;
        }
        if self.rows.is_empty() {
            let text = vec![
                Line::from(""),
                Line::from("  No knowledge memory here yet."),
                Line::from("  Agents write them with the memory tools; you with `ccmemctl memory write`."),
            ];
            f.render_widget(Paragraph::new(text), area);
            return;
        }
        let w = area.width as usize;
        let mut lines = Vec::new();
        for i in self.cursor.place(area) {
            let m = &self.rows[i];
            let links = if m.links == 0 { String::new() } else { ccmem_proto::count(m.links as u64, "link", "links") };
            let mut spans = vec![
                Span::styled(fit(m.scope.as_str(), 9), t.dim()),
                Span::styled(fit(m.entry.memory_type.as_str(), 11), t.decision()),
                Span::styled(fit(&m.entry.title, 40.min(w / 2)), t.title()),
                Span::styled(fit(&links, 9), t.dim()),
            ];
            let used: usize = spans.iter().map(Span::width).sum();
            spans.push(Span::styled(cut(&m.entry.tags.join(" "), w.saturating_sub(used)), t.dim()));
            lines.push(Line::from(spans).style(t.row(i == self.cursor.at)));
        }
        f.render_widget(Paragraph::new(lines), area);
    }
}
