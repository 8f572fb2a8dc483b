//! Search as you type: the journal's past (every project), or a project's memories. Enter
//! opens the hit: a step in its session's timeline, or a memory in full.

use super::detail::Detail;
use super::list::Cursor;
use super::screen::{failed, Look, Src, Step};
use super::text::{cut, fit};
use super::timeline::Timeline;
use super::Screen;
use ccmem_proto::wire::api::Hit;
use ccmem_proto::wire::memory::SearchHit;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::{Position, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;
use std::path::PathBuf;

/// What is searched.
pub enum Over {
    /// The journal, every project.
    Past(Vec<Hit>),
    /// The memories the project at this root sees.
    Memories(PathBuf, Vec<SearchHit>),
}

/// A search being typed, and what it found.
pub struct Search {
    pub query: String,
    pub over: Over,
    pub cursor: Cursor,
    /// Why the last search found nothing (a query the index cannot read, say).
    pub problem: Option<String>,
}

impl Search {
    /// A search of the past.
    pub fn past() -> Self {
        Self { query: String::new(), over: Over::Past(Vec::new()), cursor: Cursor::default(), problem: None }
    }

    /// A search of the memories of the project at `root`.
    pub fn memories(root: PathBuf) -> Self {
        Self { over: Over::Memories(root, Vec::new()), ..Self::past() }
    }

    fn len(&self) -> usize {
        match &self.over {
            Over::Past(h) => h.len(),
            Over::Memories(_, h) => h.len(),
        }
    }

    /// Searches again for the query as it is now.
    fn run(&mut self, src: Src<'_>) {
        self.problem = None;
        let q = self.query.trim().to_string();
        match &mut self.over {
            Over::Past(hits) => {
                hits.clear();
                if !q.is_empty() {
                    match src.search(&q) {
                        Ok(h) => *hits = h.hits,
                        Err(e) => self.problem = Some(e),
                    }
                }
            }
            Over::Memories(root, hits) => {
                hits.clear();
                if !q.is_empty() {
                    match src.search_memories(root, &q) {
                        Ok(h) => *hits = h.hits,
                        Err(e) => self.problem = Some(e),
                    }
                }
            }
        }
        let len = self.len();
        self.cursor = Cursor { len, ..Cursor::default() };
    }

    /// Types the search; arrows move among the results, Enter opens one.
    pub fn key(&mut self, key: &KeyEvent, src: Src<'_>) -> Step {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Up => self.cursor.up(1),
            KeyCode::Down => self.cursor.down(1),
            KeyCode::PageUp => self.cursor.up(self.cursor.height),
            KeyCode::PageDown => self.cursor.down(self.cursor.height),
            KeyCode::Home => self.cursor.at = 0,
            KeyCode::End => self.cursor.at = self.cursor.len.saturating_sub(1),
            KeyCode::Char('p') if ctrl => self.cursor.up(1),
            KeyCode::Char('n') if ctrl => self.cursor.down(1),
            KeyCode::Char('u') if ctrl => {
                self.query.clear();
                self.run(src);
            }
            KeyCode::Char('w') if ctrl => {
                let kept = self.query.trim_end().rfind(' ').map_or(0, |i| i + 1);
                self.query.truncate(kept);
                self.run(src);
            }
            KeyCode::Backspace => {
                self.query.pop();
                self.run(src);
            }
            // A search is one line of a thousand characters at most (the daemon's limit).
            KeyCode::Char(c) if !ctrl && !c.is_control() && self.query.chars().count() < 1000 => {
                self.query.push(c);
                self.run(src);
            }
            KeyCode::Enter => return self.open(src),
            _ => {}
        }
        Step::Stay
    }

    /// A paste: text for the search (its line breaks and controls as spaces), never keys.
    pub fn paste(&mut self, text: &str, src: Src<'_>) {
        let room = 1000usize.saturating_sub(self.query.chars().count());
        self.query.extend(text.chars().map(|c| if c.is_control() { ' ' } else { c }).take(room));
        self.run(src);
    }

    /// The selected hit, opened.
    fn open(&mut self, src: Src<'_>) -> Step {
        match &self.over {
            Over::Past(hits) => {
                let Some(hit) = hits.get(self.cursor.at) else { return Step::Stay };
                let sessions = match src.sessions(&hit.project) {
                    Ok(s) => s,
                    Err(e) => return Step::Say(failed("read the hit's session", &e)),
                };
                let Some(row) = sessions.sessions.into_iter().find(|r| r.session == hit.session) else {
                    return Step::Say("the hit's session is no longer listed (forgotten, or pruned)".into());
                };
                match Timeline::load(src, &hit.project, &row, Some(hit)) {
                    Ok(t) => Step::Open(Box::new(Screen::Timeline(t))),
                    Err(e) => Step::Say(failed("read the timeline", &e)),
                }
            }
            Over::Memories(root, hits) => {
                let Some(hit) = hits.get(self.cursor.at) else { return Step::Stay };
                match src.memory(root, hit.scope, &hit.slug) {
                    Ok(m) => Step::Open(Box::new(Screen::Detail(Detail::memory(m)))),
                    Err(e) => Step::Say(failed("show the memory", &e)),
                }
            }
        }
    }

    pub fn draw(&mut self, f: &mut Frame, area: Rect, look: &Look) {
        let t = &look.theme;
        let what = match &self.over {
            Over::Past(_) => "search every project's past",
            Over::Memories(..) => "search the memories",
        };
        let input = Line::from(vec![Span::styled("/ ", t.key()), Span::raw(self.query.clone())]);
        f.render_widget(Paragraph::new(input), Rect { height: 1, ..area });
        let cursor_x = area.x + 2 + super::text::width(&self.query) as u16;
        f.set_cursor_position(Position::new(cursor_x.min(area.right().saturating_sub(1)), area.y));
        let w = area.width as usize;
        let note = match (&self.problem, self.query.trim().is_empty(), self.len()) {
            (Some(p), _, _) => Line::styled(cut(p, w), t.bad()),
            (None, true, _) => Line::styled(format!("{what}: type words, \"a phrase\", prefix*, -word"), t.dim()),
            (None, false, 0) => Line::styled("nothing found", t.dim()),
            (None, false, n) => Line::styled(
                format!("{n} found{}", if n >= super::source::SEARCH_HITS { " (the best)" } else { "" }),
                t.dim(),
            ),
        };
        f.render_widget(Paragraph::new(note), Rect { y: area.y + 1, height: 1, ..area });
        let list = Rect { y: area.y + 2, height: area.height.saturating_sub(2), ..area };
        let window = self.cursor.place(list);
        let mut lines = Vec::new();
        for i in window {
            let line = match &self.over {
                Over::Past(hits) => past_line(&hits[i], look, w),
                Over::Memories(_, hits) => memory_line(&hits[i], look, w),
            };
            lines.push(line.style(t.row(i == self.cursor.at)));
        }
        f.render_widget(Paragraph::new(lines), list);
    }
}

/// A hit of the past: its project, when, its kind, and its text with the matches marked.
fn past_line(h: &Hit, look: &Look, w: usize) -> Line<'static> {
    let t = &look.theme;
    let name = h.project.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let ms = super::text::Clock::parse(&h.at).unwrap_or(0);
    let mut spans = vec![
        Span::styled(fit(&name, if w >= 120 { 20 } else { 12 }), t.title()),
        Span::styled(
            fit(
                &look.clock.format(ms, if w >= 120 { "%Y-%m-%d %H:%M" } else { "%m-%d %H:%M" }),
                if w >= 120 { 17 } else { 12 },
            ),
            t.dim(),
        ),
        Span::styled(fit(&h.kind, 9), t.kind(&h.kind, &h.outcome)),
    ];
    let used: usize = spans.iter().map(Span::width).sum();
    spans.extend(marked(super::text::first_line(&h.snippet), w.saturating_sub(used), look));
    Line::from(spans)
}

/// A memory found: its title, type and what matched.
fn memory_line(h: &SearchHit, look: &Look, w: usize) -> Line<'static> {
    let t = &look.theme;
    let mut spans =
        vec![Span::styled(fit(&h.title, 36), t.title()), Span::styled(fit(h.memory_type.as_str(), 11), t.decision())];
    let used: usize = spans.iter().map(Span::width).sum();
    spans.extend(marked(super::text::first_line(&h.snippet), w.saturating_sub(used), look));
    Line::from(spans)
}

/// A snippet in `w` cells, its matches (between `«` and `»`) highlighted.
pub fn marked(s: &str, w: usize, look: &Look) -> Vec<Span<'static>> {
    let mut out = Vec::new();
    let mut left = w;
    let mut inside = false;
    for (i, part) in s.split(['«', '»']).enumerate() {
        if i > 0 {
            inside = !inside;
        }
        if part.is_empty() || left == 0 {
            continue;
        }
        let piece = cut(part, left);
        left = left.saturating_sub(super::text::width(&piece));
        out.push(if inside { Span::styled(piece, look.theme.matched()) } else { Span::raw(piece) });
    }
    out
}
