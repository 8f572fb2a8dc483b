//! The terminal the view draws on: the terminal itself (`/dev/tty`; standard error on
//! Windows), never standard output, which carries only the command the user picks. Raw mode,
//! the alternate screen, the mouse and bracketed paste (a paste is text, never keys) are taken
//! on open and given back on close, on a panic or a signal too, so that the shell finds its
//! terminal as it left it.

use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::cursor::{Hide, Show};
use ratatui::crossterm::event::{DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture};
use ratatui::crossterm::execute;
use ratatui::crossterm::terminal::{disable_raw_mode, enable_raw_mode, EnterAlternateScreen, LeaveAlternateScreen};
use ratatui::Terminal;
use std::io::{self, IsTerminal, Write};

/// The view's terminal.
pub type Term = Terminal<CrosstermBackend<Tty>>;

/// Where the screen is written.
pub struct Tty(Box<dyn Write + Send>);

impl Write for Tty {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

/// The terminal, for writing; an error when there is none (a pipe, a service).
fn tty() -> io::Result<Tty> {
    #[cfg(unix)]
    {
        match std::fs::OpenOptions::new().write(true).open("/dev/tty") {
            Ok(f) => return Ok(Tty(Box::new(f))),
            Err(e) => return Err(io::Error::new(e.kind(), format!("ccmemctl ui needs a terminal (/dev/tty: {e})"))),
        }
    }
    #[allow(unreachable_code)]
    if io::stderr().is_terminal() {
        Ok(Tty(Box::new(io::stderr())))
    } else {
        Err(io::Error::other("ccmemctl ui needs a terminal: its standard error is not one"))
    }
}

/// Takes the terminal: raw mode, the alternate screen, the mouse, the cursor hidden.
pub fn open() -> io::Result<Term> {
    let mut out = tty()?;
    enable_raw_mode()?;
    if let Err(e) = execute!(out, EnterAlternateScreen, EnableMouseCapture, EnableBracketedPaste, Hide) {
        let _ = disable_raw_mode();
        return Err(e);
    }
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if let Ok(mut t) = tty() {
            restore(&mut t);
        }
        previous(info);
    }));
    match Terminal::new(CrosstermBackend::new(out)) {
        Ok(t) => Ok(t),
        Err(e) => {
            if let Ok(mut t) = tty() {
                restore(&mut t);
            }
            Err(e)
        }
    }
}

/// Gives the terminal back as it was.
pub fn close(mut t: Term) {
    restore(t.backend_mut());
}

fn restore(out: &mut impl Write) {
    let _ = execute!(out, DisableBracketedPaste, DisableMouseCapture, LeaveAlternateScreen, Show);
    let _ = disable_raw_mode();
    let _ = out.flush();
}
