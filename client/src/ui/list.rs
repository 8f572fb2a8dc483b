//! A list's cursor: which row is selected and which is at the top, moved by the keys every
//! screen shares (arrows and vi keys, pages, home and end).

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// A cursor over `len` rows shown `height` at a time.
#[derive(Debug, Clone, Default)]
pub struct Cursor {
    /// The selected row.
    pub at: usize,
    /// The first row shown.
    pub top: usize,
    /// Rows.
    pub len: usize,
    /// Rows shown at last draw (a page).
    pub height: usize,
    /// The screen line of the first row shown, at last draw (for a click).
    pub y: u16,
}

impl Cursor {
    /// Moves by `key`; whether it was a moving key.
    pub fn key(&mut self, key: &KeyEvent) -> bool {
        let page = self.height.max(1);
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Up | KeyCode::Char('k') => self.up(1),
            KeyCode::Down | KeyCode::Char('j') => self.down(1),
            KeyCode::PageUp => self.up(page),
            KeyCode::PageDown => self.down(page),
            KeyCode::Char('u') if ctrl => self.up(page / 2),
            KeyCode::Char('d') if ctrl => self.down(page / 2),
            KeyCode::Char('b') if ctrl => self.up(page),
            KeyCode::Char('f') if ctrl => self.down(page),
            KeyCode::Home | KeyCode::Char('g') => self.at = 0,
            KeyCode::End | KeyCode::Char('G') => self.at = self.len.saturating_sub(1),
            _ => return false,
        }
        true
    }

    pub fn up(&mut self, n: usize) {
        self.at = self.at.saturating_sub(n.max(1));
    }

    pub fn down(&mut self, n: usize) {
        self.at = (self.at + n.max(1)).min(self.len.saturating_sub(1));
    }

    /// The rows changed to `len`: the selection stays where it was, within them.
    pub fn resize(&mut self, len: usize) {
        self.len = len;
        self.at = self.at.min(len.saturating_sub(1));
    }

    /// Whether the last row is selected (a timeline then follows what is added).
    pub fn at_end(&self) -> bool {
        self.len == 0 || self.at + 1 >= self.len
    }

    /// The rows to draw in `height` lines, the selection kept in sight: their range.
    pub fn window(&mut self, height: usize) -> std::ops::Range<usize> {
        self.height = height;
        if height == 0 {
            return 0..0;
        }
        if self.at < self.top {
            self.top = self.at;
        } else if self.at >= self.top + height {
            self.top = self.at + 1 - height;
        }
        self.top = self.top.min(self.len.saturating_sub(height));
        self.top..(self.top + height).min(self.len)
    }

    /// [`Self::window`] for a list drawn in `area`, remembered for a click.
    pub fn place(&mut self, area: ratatui::layout::Rect) -> std::ops::Range<usize> {
        self.y = area.y;
        self.window(area.height as usize)
    }

    /// A click on screen line `line`: the row drawn there is selected.
    pub fn click(&mut self, line: u16) {
        let Some(line) = line.checked_sub(self.y).map(usize::from) else { return };
        let row = self.top + line;
        if row < self.len && line < self.height {
            self.at = row;
        }
    }

    /// The rows were read again, `len` of them: the row that `keep` names (found by
    /// `position`) stays selected, else the selection stays where it was, within them.
    pub fn refill(&mut self, len: usize, position: Option<usize>) {
        self.resize(len);
        if let Some(i) = position {
            self.at = i;
        }
    }
}
