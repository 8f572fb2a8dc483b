//! A blocking connection to the daemon: one request at a time, each answered in order.

use ccmem_proto::wire::api::{self, method};
use ccmem_proto::wire::frame::{read_frame, FrameError};
use ccmem_proto::wire::rpc::{self, RpcError};
use ccmem_proto::{wire::paths, PROTOCOL_VERSION, VERSION};
use interprocess::local_socket::{prelude::*, ConnectOptions, Stream};
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::io::{self, BufReader, Write};
use std::path::Path;
use std::time::Duration;

/// How long a request may take before the client gives up on the daemon.
const IO_TIMEOUT: Duration = Duration::from_secs(30);

/// Largest reply read. Requests are bounded by `MAX_FRAME`; a reply carrying a whole
/// session may be larger.
const MAX_REPLY: usize = 64 << 20;

/// Why a call failed.
#[derive(Debug)]
pub enum CallError {
    /// The connection broke or timed out.
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

/// An open connection.
pub struct Conn {
    reader: BufReader<Stream>,
    frame: Vec<u8>,
    next_id: u64,
}

impl Conn {
    /// Connects to `socket`. Refuses a socket in a directory others could tamper with, and a
    /// daemon running as another user: the hooks send it the agent's prompts.
    pub fn connect(socket: &Path) -> io::Result<Self> {
        #[cfg(unix)]
        if let Some(dir) = paths::socket_dir(socket) {
            paths::check_private_dir(dir)?;
        }
        let stream = ConnectOptions::new().name(paths::socket_name(socket)?).connect_sync()?;
        stream.set_recv_timeout(Some(IO_TIMEOUT))?;
        stream.set_send_timeout(Some(IO_TIMEOUT))?;
        #[cfg(unix)]
        check_server_uid(&stream, socket)?;
        Ok(Self { reader: BufReader::new(stream), frame: Vec::new(), next_id: 1 })
    }

    /// Sends one request and waits for its answer.
    pub fn call<P: Serialize, R: DeserializeOwned>(&mut self, method: &str, params: &P) -> Result<R, CallError> {
        let id = self.next_id;
        self.next_id += 1;
        let line = rpc::encode_request(Some(id), method, params);
        let mut stream = self.reader.get_ref();
        stream.write_all(&line)?;
        stream.flush()?;
        match read_frame(&mut self.reader, &mut self.frame, MAX_REPLY) {
            Ok(true) => {}
            Ok(false) => {
                return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "the daemon closed the connection").into())
            }
            Err(FrameError::Io(e)) => return Err(e.into()),
            Err(FrameError::TooLarge) => return Err(CallError::BadReply("reply larger than 64 MiB".into())),
        }
        let resp =
            rpc::Response::parse(&self.frame).map_err(|e| CallError::BadReply(format!("unreadable reply: {e}")))?;
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

    /// Sets how long a request may wait for the daemon.
    pub fn set_timeout(&self, t: Duration) -> io::Result<()> {
        self.reader.get_ref().set_recv_timeout(Some(t))?;
        self.reader.get_ref().set_send_timeout(Some(t))
    }

    /// The version exchange every command starts with.
    pub fn hello(&mut self) -> Result<api::HelloReply, CallError> {
        self.call(method::HELLO, &api::Hello::this_build("ccmemctl"))
    }
}

#[cfg(unix)]
fn check_server_uid(stream: &Stream, socket: &Path) -> io::Result<()> {
    let me = paths::euid();
    match stream.peer_creds()?.euid() {
        Some(uid) if uid != me => Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "the daemon on {} runs as uid {uid}, not as you (uid {me}); refusing to talk to it",
                socket.display()
            ),
        )),
        _ => Ok(()),
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
