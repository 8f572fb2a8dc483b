//! One thing in full, scrolled: a step of a timeline (the prompt, the failure's output, the
//! decision's text, with its details) or a memory (its text and links).

use super::screen::{resume_command, Look, Step, NO_RESUME};
use ccmem_proto::wire::api::ShowReply;
use ccmem_proto::wire::memory::MemoryReply;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};
use ratatui::Frame;
use std::path::Path;

/// Characters of an event's details shown at most.
const DATA_CHARS: usize = 20_000;

/// What is shown, and where it is scrolled to.
pub struct Detail {
    /// The breadcrumb's name for it.
    pub name: String,
    /// Heading lines (label, value, whether it is the main thing).
    head: Vec<(String, String)>,
    /// The text in full.
    pub body: String,
    /// Its details (an event's data), pretty.
    extra: String,
    /// The command that resumes its conversation, if any.
    resume: Option<String>,
    scroll: u16,
    /// Lines the text takes at the last draw (to stop scrolling past it).
    height: u16,
    lines: u16,
    /// Kind and outcome, for the heading's colour.
    kind: (String, String),
}

impl Detail {
    /// An event from `recall.show`.
    pub fn event(r: ShowReply, root: &Path) -> Self {
        let h = &r.hit;
        let mut head = vec![("when".to_string(), h.at.clone())];
        if let Some(a) = &h.agent {
            head.push(("agent".into(), a.clone()));
        }
        if let Some(c) = &h.conversation {
            head.push(("conversation".into(), c.clone()));
        }
        head.push(("session".into(), h.session.clone()));
        if let Some(p) = &h.path {
            head.push(("file".into(), p.clone()));
        }
        head.push(("event".into(), format!("#{}", h.seq)));
        let extra = r
            .data
            .as_ref()
            .filter(|d| d.as_object().is_none_or(|o| !o.is_empty()))
            .and_then(|d| serde_json::to_string_pretty(d).ok())
            .map(|s| ccmem_proto::model::session::truncate_chars(&s, DATA_CHARS))
            .unwrap_or_default();
        Self {
            name: format!("{} #{}", h.kind, h.seq),
            head,
            body: h.snippet.clone(),
            extra,
            resume: h.resume.as_deref().map(|c| resume_command(root, c)),
            scroll: 0,
            height: 0,
            lines: 0,
            kind: (h.kind.clone(), h.outcome.clone()),
        }
    }

    /// A memory from `memory.show`.
    pub fn memory(r: MemoryReply) -> Self {
        let m = &r.memory;
        let mut head = vec![
            ("type".to_string(), m.memory_type.as_str().to_string()),
            ("scope".into(), m.scope.as_str().to_string()),
            ("tags".into(), m.tags.join(", ")),
            ("updated".into(), m.updated.format("%Y-%m-%d %H:%M").to_string()),
            ("file".into(), r.file.display().to_string()),
        ];
        for e in &r.edges {
            head.push(("link".into(), format!("{} → {}", e.label, e.target)));
        }
        Self {
            name: m.slug.clone(),
            head,
            body: format!("{}\n\n{}", m.title, m.content),
            extra: String::new(),
            resume: None,
            scroll: 0,
            height: 0,
            lines: 0,
            kind: ("memory".into(), String::new()),
        }
    }

    /// Whether `r` has a conversation to resume.
    pub fn resumable(&self) -> bool {
        self.resume.is_some()
    }

    pub fn key(&mut self, key: &KeyEvent) -> Step {
        let page = self.height.max(1);
        let last = self.lines.saturating_sub(self.height);
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Up | KeyCode::Char('k') => self.scroll = self.scroll.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') => self.scroll = (self.scroll + 1).min(last),
            KeyCode::PageUp | KeyCode::Char('b') => self.scroll = self.scroll.saturating_sub(page),
            KeyCode::Char('u') if ctrl => self.scroll = self.scroll.saturating_sub(page / 2),
            KeyCode::PageDown | KeyCode::Char(' ') => self.scroll = (self.scroll + page).min(last),
            KeyCode::Char('d') if ctrl => self.scroll = (self.scroll + page / 2).min(last),
            KeyCode::Home | KeyCode::Char('g') => self.scroll = 0,
            KeyCode::End | KeyCode::Char('G') => self.scroll = last,
            KeyCode::Char('r') => {
                return match &self.resume {
                    Some(c) => Step::Print(c.clone()),
                    None => Step::Say(NO_RESUME.into()),
                }
            }
            _ => {}
        }
        Step::Stay
    }

    pub fn draw(&mut self, f: &mut Frame, area: Rect, look: &Look) {
        let t = &look.theme;
        let mut lines: Vec<Line<'static>> = Vec::new();
        lines.push(Line::styled(self.name.clone(), t.kind(&self.kind.0, &self.kind.1).patch(t.title())));
        for (label, value) in &self.head {
            lines.push(Line::from(vec![Span::styled(format!("{label:>12}  "), t.dim()), Span::raw(value.clone())]));
        }
        lines.push(Line::styled("─".repeat(area.width as usize), t.dim()));
        lines.extend(self.body.lines().map(|l| Line::raw(l.to_string())));
        if !self.extra.is_empty() {
            lines.push(Line::raw(""));
            lines.push(Line::styled("details", t.dim()));
            lines.extend(self.extra.lines().map(|l| Line::styled(l.to_string(), t.dim())));
        }
        let p = Paragraph::new(lines).wrap(Wrap { trim: false });
        self.lines = u16::try_from(p.line_count(area.width)).unwrap_or(u16::MAX);
        self.height = area.height;
        self.scroll = self.scroll.min(self.lines.saturating_sub(self.height));
        f.render_widget(p.scroll((self.scroll, 0)), area);
    }
}
