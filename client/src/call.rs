//! A command's way to the daemon: the context every command gets, connecting (starting the
//! daemon when allowed), the version check, and printing a reply as text or JSON.

use crate::autostart;
use crate::conn::{self, CallError, Compat, Conn};
use crate::output;
use crate::Error;
use ccmem_proto::wire::rpc::RpcError;
use ccmem_proto::wire::{api, paths};
use ccmem_proto::{PROTOCOL_VERSION, VERSION};
use std::io;
use std::path::PathBuf;
use std::time::Duration;

/// How long a started daemon has to answer.
pub(crate) const START_TIMEOUT: Duration = Duration::from_secs(5);

/// How long the daemon has to answer the hello. The connection's task answers it without
/// asking any project, so a daemon that is up answers in milliseconds even when busy; one
/// that takes longer is stopped (`SIGSTOP`, a debugger) or wedged, and a command says so
/// rather than wait out the 30 s every other request may take.
pub(crate) const HELLO_TIMEOUT: Duration = Duration::from_secs(5);

#[derive(Debug, Clone)]
pub(crate) struct Ctx {
    pub(crate) socket: PathBuf,
    pub(crate) json: bool,
    pub(crate) autostart: bool,
}

/// The absolute path for a command's PATH argument (default: the current directory).
pub(crate) fn project_path(path: Option<PathBuf>) -> Result<PathBuf, Error> {
    match path {
        Some(p) => std::path::absolute(&p),
        None => std::env::current_dir(),
    }
    .map(|p| paths::lexical(&p))
    .map_err(|e| Error::Failed(format!("cannot resolve the project path: {e}")))
}

/// Prints `value` as JSON with --json, else the text `human` makes.
pub(crate) fn show<T: serde::Serialize>(ctx: &Ctx, value: &T, human: impl FnOnce() -> String) {
    if ctx.json {
        output::print_json(value);
    } else {
        println!("{}", human().trim_end());
    }
}

/// Connects (starting the daemon if allowed), says hello and runs `f`. A connection lost
/// mid-request (a daemon that was just stopping, say) is retried once.
pub(crate) fn with_daemon<T>(
    ctx: &Ctx,
    f: impl FnMut(&mut Conn, &api::HelloReply) -> Result<T, CallError>,
) -> Result<T, Error> {
    with_daemon_of(ctx, true, f)
}

/// [`with_daemon`], with the versions checked or not: `shutdown` must reach a daemon of any
/// release, since the way out of a mismatch is to stop it.
pub(crate) fn with_daemon_of<T>(
    ctx: &Ctx,
    check: bool,
    mut f: impl FnMut(&mut Conn, &api::HelloReply) -> Result<T, CallError>,
) -> Result<T, Error> {
    let mut started = false;
    let mut attempt = 0;
    loop {
        attempt += 1;
        let mut conn = match Conn::connect(&ctx.socket) {
            Ok(c) => c,
            Err(e) if ctx.autostart && !started && autostart::is_absent(&e) => {
                started = true;
                autostart::start_and_connect(&ctx.socket, START_TIMEOUT).map_err(Error::Unreachable)?
            }
            Err(e) => return Err(unreachable(ctx, &e)),
        };
        let outcome = conn.hello_within(HELLO_TIMEOUT).and_then(|hello| {
            if check {
                check_versions(&hello)?;
            }
            f(&mut conn, &hello)
        });
        match outcome {
            // A daemon that does not answer is not retried: that would only double the wait.
            Err(CallError::Io(e)) if e.kind() == io::ErrorKind::TimedOut => {
                return Err(Error::Unreachable(format!(
                    "ccmemd at {} is not answering: {e} (is the process stopped or hung?)",
                    ctx.socket.display()
                )))
            }
            Err(CallError::Io(_)) if attempt == 1 => continue,
            other => return other.map_err(Error::from),
        }
    }
}

pub(crate) fn unreachable(ctx: &Ctx, e: &io::Error) -> Error {
    let hint = if autostart::is_absent(e) && !ctx.autostart {
        " (not started: --no-start or CCMEM_NO_AUTOSTART is set)"
    } else {
        ""
    };
    Error::Unreachable(format!("cannot reach ccmemd at {}: {e}{hint}", ctx.socket.display()))
}

pub(crate) fn check_versions(hello: &api::HelloReply) -> Result<(), CallError> {
    match conn::compat(hello) {
        Compat::Same => Ok(()),
        Compat::OtherRelease => {
            eprintln!(
                "ccmemctl: note: the running ccmemd is version {}, this ccmemctl is {VERSION}; run `ccmemctl shutdown` to restart it with this version",
                hello.daemon_version
            );
            Ok(())
        }
        Compat::Incompatible => Err(CallError::Rpc(RpcError::new(
            ccmem_proto::wire::rpc::code::INCOMPATIBLE,
            format!(
                "the running ccmemd {} speaks protocol {}, this ccmemctl {VERSION} speaks protocol {PROTOCOL_VERSION}; stop it with `ccmemctl shutdown` and try again",
                hello.daemon_version, hello.protocol_version
            ),
        ))),
    }
}

impl Ctx {
    pub(crate) fn socket_present(&self) -> bool {
        paths::is_named_pipe(&self.socket) || self.socket.exists()
    }
}
