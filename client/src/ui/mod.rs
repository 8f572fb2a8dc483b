//! `ccmemctl ui`: the projects, their sessions and timelines, search and memories, in the
//! terminal, live. It talks to the daemon over its socket like every other command (a
//! second connection subscribes to what the journal takes); the screen is drawn on the
//! terminal itself, so that standard output carries only the command a user picks to resume
//! (`eval "$(ccmemctl ui)"`), as atuin hands back a command.
//!
//! One module per screen; [`App`] keeps their stack and turns keys into steps between them.

mod detail;
mod list;
mod live;
mod memories;
mod projects;
mod screen;
mod search;
mod sessions;
mod source;
mod term;
mod text;
mod theme;
mod timeline;

pub use live::Input;
pub use screen::{resume_command, Look};
pub use source::Source;
pub use text::Clock;
pub use theme::Theme;

use ratatui::crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEventKind};
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};
use ratatui::Frame;
use screen::Step;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// A screen of the view.
pub enum Screen {
    Projects(projects::Projects),
    Sessions(sessions::Sessions),
    Timeline(timeline::Timeline),
    Detail(detail::Detail),
    Search(search::Search),
    Memories(memories::Memories),
}

impl Screen {
    /// Its name in the breadcrumb.
    fn name(&self) -> String {
        match self {
            Screen::Projects(_) => "projects".into(),
            Screen::Sessions(s) => s.name.clone(),
            Screen::Timeline(t) => t.session.session.clone(),
            Screen::Detail(d) => d.name.clone(),
            Screen::Search(_) => "search".into(),
            Screen::Memories(m) => format!("memories of {}", m.name),
        }
    }

    /// Its keys, for the footer.
    fn hints(&self) -> &'static str {
        match self {
            Screen::Projects(_) => "↑↓ move  ⏎ sessions  / search  m memories  r resume  ? help  q quit",
            Screen::Sessions(_) => "↑↓ move  ⏎ timeline  r resume  m memories  / search  esc back  q quit",
            Screen::Timeline(_) => "↑↓ move  ⏎ show  r resume  / search  esc back  q quit",
            Screen::Detail(d) if d.resumable() => "↑↓ scroll  r resume  esc back  q quit",
            Screen::Detail(_) => "↑↓ scroll  esc back  q quit",
            Screen::Search(_) => "type to search  ↑↓ move  ⏎ open  esc back",
            Screen::Memories(_) => "↑↓ move  ⏎ show  / search memories  esc back  q quit",
        }
    }

    fn draw(&mut self, f: &mut Frame, area: Rect, look: &Look) {
        match self {
            Screen::Projects(s) => s.draw(f, area, look),
            Screen::Sessions(s) => s.draw(f, area, look),
            Screen::Timeline(s) => s.draw(f, area, look),
            Screen::Detail(s) => s.draw(f, area, look),
            Screen::Search(s) => s.draw(f, area, look),
            Screen::Memories(s) => s.draw(f, area, look),
        }
    }

    fn key(&mut self, key: &KeyEvent, src: &mut Source) -> Step {
        match self {
            Screen::Projects(s) => s.key(key, src),
            Screen::Sessions(s) => s.key(key, src),
            Screen::Timeline(s) => s.key(key, src),
            Screen::Detail(s) => s.key(key),
            Screen::Search(s) => s.key(key, src),
            Screen::Memories(s) => s.key(key, src),
        }
    }

    /// A click on screen line `line`: the row drawn there is selected.
    fn click(&mut self, line: u16) {
        match self {
            Screen::Projects(s) => s.cursor.click(line),
            Screen::Sessions(s) => s.cursor.click(line),
            Screen::Timeline(s) => s.cursor.click(line),
            Screen::Search(s) => s.cursor.click(line),
            Screen::Memories(s) => s.cursor.click(line),
            Screen::Detail(_) => {}
        }
    }

    /// Read again what the journal changed for `changed` (empty: anything).
    fn changed(&mut self, src: &mut Source, changed: &[PathBuf]) -> Option<String> {
        match self {
            Screen::Projects(s) => s.changed(src, changed),
            Screen::Sessions(s) => s.changed(src, changed),
            Screen::Timeline(s) => s.changed(src, changed),
            Screen::Detail(_) | Screen::Search(_) | Screen::Memories(_) => None,
        }
    }

    /// Whether keys are text typed into it (a search): `q` and `?` are letters then.
    fn typing(&self) -> bool {
        matches!(self, Screen::Search(_))
    }
}

/// What the view does after an input.
#[derive(Debug, PartialEq, Eq)]
pub enum Flow {
    /// Goes on.
    Continue,
    /// Leaves, printing the command when there is one.
    Quit(Option<String>),
}

/// How often the view reads again what the journal changed, at most: a burst of hooks (an
/// agent at work) costs the daemon one read of the screen a second, not one per event.
const RELOAD_EVERY: Duration = Duration::from_secs(1);

/// The view: a stack of screens over the daemon.
pub struct App {
    src: Source,
    look: Look,
    stack: Vec<Screen>,
    /// For each screen of the stack, the changes it has seen (only the top one is read
    /// again as they come; one below, when it is back on top).
    seen: Vec<u64>,
    /// Changes told so far.
    changes: u64,
    /// What changed and is not read yet (empty: anything), and when the top was last read.
    pending: Option<Vec<PathBuf>>,
    last_read: Option<Instant>,
    help: bool,
    /// The status line's message, until the next key.
    said: Option<String>,
    /// The subscription is up.
    live: bool,
}

impl App {
    /// Opens on the projects, read from the daemon `src` asks.
    pub fn new(mut src: Source, look: Look) -> Self {
        let (projects, said) = projects::Projects::load(&mut src);
        Self {
            src,
            look,
            stack: vec![Screen::Projects(projects)],
            seen: vec![0],
            changes: 0,
            pending: None,
            last_read: None,
            help: false,
            said,
            live: false,
        }
    }

    /// How long until what changed is read (None: nothing waits; the view sleeps until told).
    pub fn wait(&self) -> Option<Duration> {
        self.pending.as_ref()?;
        Some(self.last_read.map_or(Duration::ZERO, |t| RELOAD_EVERY.saturating_sub(t.elapsed())))
    }

    /// Reads what changed into the top screen, when it is time.
    pub fn tick(&mut self) {
        if self.wait().is_some_and(|w| w.is_zero()) {
            let roots = self.pending.take().unwrap_or_default();
            self.last_read = Some(Instant::now());
            self.reload(&roots);
        }
    }

    /// The top screen read again for `roots` (empty: anything).
    fn reload(&mut self, roots: &[PathBuf]) {
        let last = self.stack.len() - 1;
        self.seen[last] = self.changes;
        if let Some(e) = self.stack[last].changed(&mut self.src, roots) {
            self.said = Some(e);
        }
    }

    fn push(&mut self, s: Screen) {
        self.stack.push(s);
        self.seen.push(self.changes);
    }

    /// Back to the screen before, read again if the journal changed meanwhile.
    fn pop(&mut self) {
        if self.stack.len() > 1 {
            self.stack.pop();
            self.seen.pop();
            if self.seen[self.stack.len() - 1] < self.changes {
                self.reload(&[]);
            }
        }
    }

    /// Takes one input.
    pub fn input(&mut self, input: Input) -> Flow {
        match input {
            Input::Terminal(Event::Key(k)) if k.kind != KeyEventKind::Release => self.key(k),
            Input::Terminal(Event::Mouse(m)) => {
                match m.kind {
                    MouseEventKind::ScrollUp => return self.key(KeyEvent::from(KeyCode::Up)),
                    MouseEventKind::ScrollDown => return self.key(KeyEvent::from(KeyCode::Down)),
                    MouseEventKind::Down(_) => self.top().click(m.row),
                    _ => {}
                }
                Flow::Continue
            }
            Input::Terminal(Event::Paste(text)) => {
                let last = self.stack.len() - 1;
                if let Screen::Search(s) = &mut self.stack[last] {
                    s.paste(&text, &mut self.src);
                }
                Flow::Continue
            }
            Input::Terminal(_) => Flow::Continue,
            Input::TerminalLost => Flow::Quit(None),
            Input::Changed(roots) => {
                self.changes += 1;
                self.pending = Some(match self.pending.take() {
                    // Anything (empty) stays anything.
                    Some(before) if before.is_empty() || roots.is_empty() => Vec::new(),
                    Some(mut before) => {
                        before.extend(roots);
                        before
                    }
                    None => roots,
                });
                self.tick();
                Flow::Continue
            }
            Input::Live(up) => {
                self.live = up;
                Flow::Continue
            }
        }
    }

    fn top(&mut self) -> &mut Screen {
        let last = self.stack.len() - 1;
        &mut self.stack[last]
    }

    fn key(&mut self, k: KeyEvent) -> Flow {
        self.said = None;
        let ctrl = k.modifiers.contains(KeyModifiers::CONTROL);
        if ctrl && matches!(k.code, KeyCode::Char('c')) {
            return Flow::Quit(None);
        }
        if self.help {
            // Any key closes the help (q still quits).
            self.help = false;
            return if k.code == KeyCode::Char('q') { Flow::Quit(None) } else { Flow::Continue };
        }
        let typing = self.top().typing();
        match k.code {
            KeyCode::Esc | KeyCode::Left | KeyCode::Char('h') if !typing || k.code == KeyCode::Esc => {
                self.pop();
                return Flow::Continue;
            }
            KeyCode::Char('q') if !typing => return Flow::Quit(None),
            KeyCode::Char('?') if !typing => {
                self.help = true;
                return Flow::Continue;
            }
            KeyCode::Char('/') if !typing => {
                let search = match self.top() {
                    Screen::Memories(m) => search::Search::memories(m.root.clone()),
                    _ => search::Search::past(),
                };
                self.push(Screen::Search(search));
                return Flow::Continue;
            }
            _ => {}
        }
        let last = self.stack.len() - 1;
        match self.stack[last].key(&k, &mut self.src) {
            Step::Stay => Flow::Continue,
            Step::Open(s) => {
                self.push(*s);
                Flow::Continue
            }
            Step::Print(c) => Flow::Quit(Some(c)),
            Step::Say(s) => {
                self.said = Some(s);
                Flow::Continue
            }
        }
    }

    /// Draws the whole screen: the breadcrumb, the top screen, the keys or a message.
    pub fn draw(&mut self, f: &mut Frame) {
        let area = f.area();
        if area.height < 3 || area.width < 20 {
            f.render_widget(Paragraph::new("ccmem: the terminal is too small"), area);
            return;
        }
        let t = self.look.theme;
        let crumbs: Vec<String> = self.stack.iter().map(Screen::name).collect();
        let live = if self.live { Span::styled("● live", t.good()) } else { Span::styled("○ not live", t.dim()) };
        let room = (area.width as usize).saturating_sub(live.width() + 8);
        let head = Line::from(vec![
            Span::styled(" ccmem ", t.title()),
            Span::styled(text::cut(&crumbs.join(" › "), room), t.dim()),
        ]);
        f.render_widget(Paragraph::new(head), Rect { height: 1, ..area });
        let lw = live.width() as u16;
        f.render_widget(
            Paragraph::new(Line::from(live)),
            Rect { x: area.right() - lw - 1, width: lw, height: 1, ..area },
        );
        let body = Rect { y: area.y + 1, height: area.height - 2, ..area };
        let look = self.look;
        self.top().draw(f, body, &look);
        let foot = match &self.said {
            Some(s) => Line::styled(format!(" {}", text::cut(s, area.width as usize - 1)), t.bad()),
            None => Line::styled(format!(" {}", self.top().hints()), t.dim()),
        };
        f.render_widget(Paragraph::new(foot), Rect { y: area.bottom() - 1, height: 1, ..area });
        if self.help {
            help(f, body, &look);
        }
    }
}

/// The keys, over the screen.
fn help(f: &mut Frame, area: Rect, look: &Look) {
    const KEYS: &[(&str, &str)] = &[
        ("↑ ↓  k j", "move"),
        ("PgUp PgDn  ^u ^d", "a page, half a page"),
        ("g G  Home End", "first, last"),
        ("⏎  → l", "open: sessions, timeline, a step in full"),
        ("esc  ← h", "back"),
        ("/", "search the past (in memories: the memories)"),
        ("m", "the project's knowledge memories"),
        ("r", "print the resume command, and quit"),
        ("?", "this help"),
        ("q  ^c", "quit"),
    ];
    let t = &look.theme;
    let w = 66.min(area.width);
    let h = (KEYS.len() as u16 + 4).min(area.height);
    let r = Rect { x: area.x + (area.width - w) / 2, y: area.y + (area.height - h) / 2, width: w, height: h };
    let mut lines: Vec<Line<'static>> = KEYS
        .iter()
        .map(|(k, what)| Line::from(vec![Span::styled(format!("{k:>18}  "), t.key()), Span::raw(*what)]))
        .collect();
    lines.push(Line::styled("  eval \"$(ccmemctl ui)\" runs the resume command printed", t.dim()));
    f.render_widget(Clear, r);
    f.render_widget(Paragraph::new(lines).block(Block::default().borders(Borders::ALL).title(" keys ")), r);
}

/// Runs the view on the terminal until the user leaves; the command they picked, if any.
pub fn run(socket: &std::path::Path) -> std::io::Result<Option<String>> {
    let (tx, rx) = std::sync::mpsc::channel();
    let mut terminal = term::open()?;
    let look = Look { theme: Theme::from_env(), clock: Clock::real() };
    let mut app = App::new(Source::new(socket), look);
    live::terminal(tx.clone());
    live::signals(tx.clone());
    live::subscribe(socket.to_path_buf(), tx);
    let outcome = (|| loop {
        terminal.draw(|f| app.draw(f))?;
        // Blocked here, at rest: no timer, no polling (a change waiting to be read is the
        // one timer, and only while it waits).
        let first = match app.wait() {
            None => rx.recv().map_err(|_| ()),
            Some(wait) => match rx.recv_timeout(wait) {
                Ok(input) => Ok(input),
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                    app.tick();
                    continue;
                }
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => Err(()),
            },
        };
        let Ok(first) = first else { return Ok(None) };
        let mut flow = app.input(first);
        // What came meanwhile is taken before the next frame (a burst of changes, a held key).
        while flow == Flow::Continue {
            match rx.try_recv() {
                Ok(next) => flow = app.input(next),
                Err(_) => break,
            }
        }
        if let Flow::Quit(command) = flow {
            return Ok(command);
        }
    })();
    term::close(terminal);
    outcome
}
