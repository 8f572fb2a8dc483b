//! The view's colours: the 16 of every terminal (no RGB, no 256-colour palette), or none at
//! all when `NO_COLOR` is set, where bold, dim and reverse video carry the meaning alone.

use ratatui::style::{Color, Modifier, Style};

/// Styles by meaning.
#[derive(Debug, Clone, Copy)]
pub struct Theme {
    color: bool,
}

impl Theme {
    /// Colours unless the user's `NO_COLOR` asks for none (<https://no-color.org>).
    pub fn from_env() -> Self {
        Self { color: std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()) }
    }

    /// With colours or without.
    pub fn new(color: bool) -> Self {
        Self { color }
    }

    /// Whether colours are used.
    pub fn colored(&self) -> bool {
        self.color
    }

    fn fg(&self, c: Color) -> Style {
        if self.color {
            Style::new().fg(c)
        } else {
            Style::new()
        }
    }

    /// The selected row.
    pub fn selected(&self) -> Style {
        Style::new().add_modifier(Modifier::REVERSED)
    }

    /// A list's row: selected, or as it is.
    pub fn row(&self, selected: bool) -> Style {
        if selected {
            self.selected()
        } else {
            Style::new()
        }
    }

    /// Titles and names.
    pub fn title(&self) -> Style {
        Style::new().add_modifier(Modifier::BOLD)
    }

    /// What matters less: times, ids, paths.
    pub fn dim(&self) -> Style {
        if self.color {
            Style::new().fg(Color::DarkGray)
        } else {
            Style::new().add_modifier(Modifier::DIM)
        }
    }

    /// Red: failed.
    pub fn bad(&self) -> Style {
        self.fg(Color::Red).add_modifier(Modifier::BOLD)
    }

    /// Green: passed, live.
    pub fn good(&self) -> Style {
        self.fg(Color::Green)
    }

    /// What the user said.
    pub fn prompt(&self) -> Style {
        self.fg(Color::Cyan).add_modifier(Modifier::BOLD)
    }

    /// Commits, pull requests.
    pub fn commit(&self) -> Style {
        self.fg(Color::Yellow)
    }

    /// Decisions and findings.
    pub fn decision(&self) -> Style {
        self.fg(Color::Magenta)
    }

    /// Sessions starting, ending, changing hands.
    pub fn session(&self) -> Style {
        self.fg(Color::Blue).add_modifier(Modifier::BOLD)
    }

    /// A search's matched words.
    pub fn matched(&self) -> Style {
        self.fg(Color::Yellow).add_modifier(Modifier::BOLD | Modifier::UNDERLINED)
    }

    /// Keys in the help and the footer.
    pub fn key(&self) -> Style {
        self.fg(Color::Cyan).add_modifier(Modifier::BOLD)
    }

    /// The style of a step of `kind` (recall's kinds) with `outcome`.
    pub fn kind(&self, kind: &str, outcome: &str) -> Style {
        match (kind, outcome) {
            (_, "failed") => self.bad(),
            (_, "passed") => self.good(),
            ("prompt", _) => self.prompt(),
            ("commit", _) => self.commit(),
            ("decision", _) => self.decision(),
            ("session" | "compaction", _) => self.session(),
            ("file", _) => self.dim(),
            _ => Style::new(),
        }
    }
}
