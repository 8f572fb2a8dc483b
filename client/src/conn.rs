//! A blocking connection to the daemon: one request at a time, each answered in order.

use ccmem_proto::wire::api::{self, method};
use ccmem_proto::wire::frame::{read_frame, FrameError};
use ccmem_proto::wire::rpc::{self, RpcError};
use ccmem_proto::{wire::paths, PROTOCOL_VERSION, VERSION};
use interprocess::local_socket::{ConnectOptions, Stream};
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::io::{self, BufReader, Write};
use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

/// How long a request may take before the client gives up on the daemon.
pub(crate) const IO_TIMEOUT: Duration = Duration::from_secs(30);

/// Largest reply read. Requests are bounded by `MAX_FRAME`; a reply carrying a whole
/// session may be larger.
const MAX_REPLY: usize = 64 << 20;

/// Why a call failed.
#[derive(Debug)]
pub enum CallError {
    /// The connection broke or timed out (then it is not used again).
    Io(io::Error),
    /// The daemon answered with an error.
    Rpc(RpcError),
    /// The daemon's answer made no sense.
    BadReply(String),
}

impl From<io::Error> for CallError {
    fn from(e: io::Error) -> Self {
        CallError::Io(e)
    }
}

/// An open connection. The socket is owned by a thread of its own and every exchange waits
/// for it with a deadline: named pipes have no I/O timeouts, and even a Unix socket's connect
/// can block on a wedged daemon's full backlog. A client must never hang on the daemon (the
/// hook's time limit rests on this), so the same code runs on every platform. After a
/// timeout the connection is dropped: its thread stays blocked until the process exits or
/// the daemon closes the socket.
pub struct Conn {
    requests: mpsc::Sender<Vec<u8>>,
    replies: mpsc::Receiver<Reply>,
    timeout: Duration,
    broken: bool,
    next_id: u64,
}

/// What the socket's thread read for one request.
enum Reply {
    Frame(Vec<u8>),
    Closed,
    TooLarge,
    Failed(io::Error),
}

impl Conn {
    /// Connects to `socket` (within the default 30 s). Refuses a socket in a directory others
    /// could tamper with, and a daemon running as another user: the hooks send it the agent's
    /// prompts.
    pub fn connect(socket: &Path) -> io::Result<Self> {
        Self::connect_within(socket, IO_TIMEOUT)
    }

    /// Connects to `socket`, giving up after `timeout`, which then bounds each request too
    /// (see [`Self::set_timeout`]).
    pub fn connect_within(socket: &Path, timeout: Duration) -> io::Result<Self> {
        #[cfg(unix)]
        if let Some(dir) = paths::socket_dir(socket) {
            paths::check_private_dir(dir)?;
        }
        let (ready_tx, ready) = mpsc::channel();
        let (requests, jobs) = mpsc::channel::<Vec<u8>>();
        let (out, replies) = mpsc::channel();
        let path = socket.to_path_buf();
        std::thread::Builder::new().name("ccmem-conn".into()).spawn(move || {
            let stream = match open(&path) {
                Ok(s) => s,
                Err(e) => {
                    let _ = ready_tx.send(Err(e));
                    return;
                }
            };
            if ready_tx.send(Ok(())).is_err() {
                return;
            }
            serve(stream, &jobs, &out);
        })?;
        match ready.recv_timeout(timeout) {
            Ok(Ok(())) => Ok(Self { requests, replies, timeout, broken: false, next_id: 1 }),
            Ok(Err(e)) => Err(e),
            Err(mpsc::RecvTimeoutError::Timeout) => Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("ccmemd on {} did not accept the connection within {timeout:?}", socket.display()),
            )),
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                Err(io::Error::other(format!("the connection to {} failed", socket.display())))
            }
        }
    }

    /// Sends one request and waits for its answer.
    pub fn call<P: Serialize, R: DeserializeOwned>(&mut self, method: &str, params: &P) -> Result<R, CallError> {
        let id = self.next_id;
        self.next_id += 1;
        let frame = self.exchange(rpc::encode_request(Some(id), method, params))?;
        let resp = rpc::Response::parse(&frame).map_err(|e| CallError::BadReply(format!("unreadable reply: {e}")))?;
        if resp.id != id {
            // The daemon answered something else (a "busy" refusal carries a null id).
            return Err(match resp.into_result() {
                Err(e) => CallError::Rpc(e),
                Ok(_) => CallError::BadReply(format!("reply to another request (expected id {id})")),
            });
        }
        let value = resp.into_result().map_err(CallError::Rpc)?;
        serde_json::from_value(value).map_err(|e| CallError::BadReply(format!("unexpected reply to {method}: {e}")))
    }

    /// Hands one request line to the socket's thread and waits for the reply's frame.
    fn exchange(&mut self, line: Vec<u8>) -> Result<Vec<u8>, CallError> {
        let gone = || io::Error::new(io::ErrorKind::BrokenPipe, "the connection to the daemon was lost");
        if self.broken || self.requests.send(line).is_err() {
            self.broken = true;
            return Err(gone().into());
        }
        match self.replies.recv_timeout(self.timeout) {
            Ok(Reply::Frame(f)) => Ok(f),
            Ok(Reply::Closed) => {
                self.broken = true;
                Err(io::Error::new(io::ErrorKind::UnexpectedEof, "the daemon closed the connection").into())
            }
            Ok(Reply::TooLarge) => {
                self.broken = true;
                Err(CallError::BadReply("reply larger than 64 MiB".into()))
            }
            Ok(Reply::Failed(e)) => {
                self.broken = true;
                Err(e.into())
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                // A late reply would answer the wrong request: this connection is done.
                self.broken = true;
                Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("the daemon did not answer within {:?}", self.timeout),
                )
                .into())
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                self.broken = true;
                Err(gone().into())
            }
        }
    }

    /// Sets how long each request may wait for the daemon.
    pub fn set_timeout(&mut self, t: Duration) -> io::Result<()> {
        if t.is_zero() {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "a zero timeout"));
        }
        self.timeout = t;
        Ok(())
    }

    /// The version exchange every command starts with.
    pub fn hello(&mut self) -> Result<api::HelloReply, CallError> {
        self.call(method::HELLO, &api::Hello::this_build("ccmemctl"))
    }

    /// [`Self::hello`] within `limit` (a daemon that does not answer it is stopped or
    /// hung); the connection's own timeout applies again after it.
    pub fn hello_within(&mut self, limit: Duration) -> Result<api::HelloReply, CallError> {
        let usual = self.timeout;
        self.set_timeout(limit.min(usual))?;
        let hello = self.hello()?;
        self.set_timeout(usual)?;
        Ok(hello)
    }
}

/// Connects and checks that the daemon is this user's.
pub(crate) fn open(socket: &Path) -> io::Result<Stream> {
    let stream = ConnectOptions::new().name(paths::socket_name(socket)?).connect_sync()?;
    ccmem_proto::wire::peer::same_user(&stream).map_err(|who| {
        io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("the daemon on {} runs as {who}; refusing to talk to it", socket.display()),
        )
    })?;
    Ok(stream)
}

/// The socket's thread: writes each request, reads its reply frame, until the connection or
/// the [`Conn`] is gone.
fn serve(stream: Stream, jobs: &mpsc::Receiver<Vec<u8>>, out: &mpsc::Sender<Reply>) {
    let mut reader = BufReader::new(stream);
    let mut frame = Vec::new();
    for line in jobs {
        let mut w = reader.get_ref();
        let reply = match w.write_all(&line).and_then(|()| w.flush()) {
            Err(e) => Reply::Failed(e),
            Ok(()) => match read_frame(&mut reader, &mut frame, MAX_REPLY) {
                Ok(true) => Reply::Frame(std::mem::take(&mut frame)),
                Ok(false) => Reply::Closed,
                Err(FrameError::Io(e)) => Reply::Failed(e),
                Err(FrameError::TooLarge) => Reply::TooLarge,
            },
        };
        let last = !matches!(reply, Reply::Frame(_));
        if out.send(reply).is_err() || last {
            return;
        }
    }
}

/// How the daemon's versions compare with ours.
pub enum Compat {
    /// Same version.
    Same,
    /// Same protocol, another release: works, but the user may want to restart it.
    OtherRelease,
    /// Another protocol: requests may be misread.
    Incompatible,
}

/// Compares the daemon's hello with this build.
pub fn compat(h: &api::HelloReply) -> Compat {
    if h.protocol_version != PROTOCOL_VERSION || !h.compatible {
        Compat::Incompatible
    } else if h.daemon_version != VERSION {
        Compat::OtherRelease
    } else {
        Compat::Same
    }
}
