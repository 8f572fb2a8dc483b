//! What the view waits on: the terminal's keys and size, and the daemon's word that the
//! journal took something (a subscription on a connection of its own). Each comes from a
//! thread blocked in a read, so that at rest the view uses no CPU at all.

use ccmem_proto::wire::api::{self, method};
use ccmem_proto::wire::frame::read_frame;
use ccmem_proto::wire::rpc;
use ratatui::crossterm::event::{self, Event};
use std::io::{BufReader, Write};
use std::path::PathBuf;
use std::sync::mpsc::Sender;
use std::time::Duration;

/// What the view is told.
#[derive(Debug)]
pub enum Input {
    /// The terminal: a key, the mouse, a new size.
    Terminal(Event),
    /// The terminal cannot be read any more (it was closed).
    TerminalLost,
    /// The journal took something for these projects (empty: any).
    Changed(Vec<PathBuf>),
    /// The subscription is up (true) or lost, and tried again.
    Live(bool),
}

/// A notification's size at most.
const MAX_FRAME: usize = 1024 * 1024;

/// How long a lost subscription waits before it is tried again, at first and at most.
const RETRY_FIRST: Duration = Duration::from_secs(1);
const RETRY_MOST: Duration = Duration::from_secs(30);

/// Reads the terminal's events into `tx` until the terminal goes or the view does.
pub fn terminal(tx: Sender<Input>) {
    let spawned = std::thread::Builder::new().name("ccmem-ui-keys".into()).spawn(move || loop {
        let input = match event::read() {
            Ok(e) => Input::Terminal(e),
            Err(_) => Input::TerminalLost,
        };
        let lost = matches!(input, Input::TerminalLost);
        if tx.send(input).is_err() || lost {
            return;
        }
    });
    if spawned.is_err() {
        // No thread, no keys: the view could not be left but by a signal.
        std::process::exit(1);
    }
}

/// Tells `tx` when the process is asked to stop (`SIGTERM`, `SIGINT`, `SIGHUP`, `SIGQUIT`):
/// the view then quits as on `q`, giving the terminal back, instead of dying in raw mode.
pub fn signals(tx: Sender<Input>) {
    #[cfg(unix)]
    let _ = std::thread::Builder::new().name("ccmem-ui-signals".into()).spawn(move || {
        use tokio::signal::unix::{signal, SignalKind};
        let Ok(rt) = tokio::runtime::Builder::new_current_thread().enable_io().build() else { return };
        rt.block_on(async {
            let (Ok(mut term), Ok(mut int), Ok(mut hup), Ok(mut quit)) = (
                signal(SignalKind::terminate()),
                signal(SignalKind::interrupt()),
                signal(SignalKind::hangup()),
                signal(SignalKind::quit()),
            ) else {
                return;
            };
            tokio::select! {
                _ = term.recv() => {}
                _ = int.recv() => {}
                _ = hup.recv() => {}
                _ = quit.recv() => {}
            }
            let _ = tx.send(Input::TerminalLost);
        });
    });
    #[cfg(not(unix))]
    drop(tx);
}

/// Subscribes to the daemon at `socket` and tells `tx` of every change, subscribing again
/// (with a growing wait) when the connection is lost.
pub fn subscribe(socket: PathBuf, tx: Sender<Input>) {
    let _ = std::thread::Builder::new().name("ccmem-ui-live".into()).spawn(move || {
        let mut wait = RETRY_FIRST;
        let mut first = true;
        loop {
            let up = listen(&socket, &tx, &mut first);
            if tx.send(Input::Live(false)).is_err() {
                return;
            }
            if up {
                wait = RETRY_FIRST;
            }
            std::thread::sleep(wait);
            wait = (wait * 2).min(RETRY_MOST);
        }
    });
}

/// One subscription, until it is lost; whether it was up at all.
fn listen(socket: &std::path::Path, tx: &Sender<Input>, first: &mut bool) -> bool {
    #[cfg(unix)]
    if let Some(dir) = ccmem_proto::wire::paths::socket_dir(socket) {
        if ccmem_proto::wire::paths::check_private_dir(dir).is_err() {
            return false;
        }
    }
    let Ok(stream) = crate::conn::open(socket) else { return false };
    let mut reader = BufReader::new(stream);
    let request = rpc::encode_request(Some(1), method::VIEW_SUBSCRIBE, &api::SubscribeParams {});
    if reader.get_mut().write_all(&request).and_then(|()| reader.get_mut().flush()).is_err() {
        return false;
    }
    let mut frame = Vec::new();
    match read_frame(&mut reader, &mut frame, MAX_FRAME) {
        Ok(true) if rpc::Response::parse(&frame).is_ok_and(|r| r.into_result().is_ok()) => {}
        _ => return false,
    }
    if tx.send(Input::Live(true)).is_err() {
        return true;
    }
    // What changed while it was down is not known: everything is read again.
    if !std::mem::take(first) && tx.send(Input::Changed(Vec::new())).is_err() {
        return true;
    }
    loop {
        frame.clear();
        match read_frame(&mut reader, &mut frame, MAX_FRAME) {
            Ok(true) => {}
            _ => return true,
        }
        let Ok(v) = serde_json::from_slice::<serde_json::Value>(&frame) else { continue };
        if v.get("method").and_then(|m| m.as_str()) != Some(method::VIEW_CHANGED) {
            continue;
        }
        let changed: api::Changed =
            v.get("params").cloned().and_then(|p| serde_json::from_value(p).ok()).unwrap_or_default();
        if tx.send(Input::Changed(changed.projects)).is_err() {
            return true;
        }
    }
}
