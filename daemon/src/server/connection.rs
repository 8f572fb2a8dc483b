//! One client connection: read a frame, answer it, repeat, within the limits.
//!
//! Every wait is bounded (a frame must arrive within the idle timeout, a reply must be taken
//! within the write timeout), so a silent, slow or hostile client costs one task and one
//! permit until it is cut off, and never holds anyone else up.

use crate::server::rpc;
use crate::server::state::{Shared, Stats};
use ccmem_proto::wire::frame::{scan, Scan};
use ccmem_proto::wire::rpc::{code, encode_response, RpcError};
use interprocess::local_socket::tokio::Stream;
use serde_json::Value;
use std::io;
use std::sync::Arc;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, BufWriter};
use tokio::sync::OwnedSemaphorePermit;
use tokio::time::timeout;

/// Serves `stream` until the peer leaves, breaks a limit, or the daemon shuts down. The
/// permit is held for as long as the connection is open.
pub async fn serve(stream: Stream, shared: Arc<Shared>, _permit: OwnedSemaphorePermit) {
    let limits = shared.limits;
    let mut reader = FrameReader::new(&stream, limits.max_frame);
    let mut writer = BufWriter::new(&stream);
    let mut place = shared.idle.ticket();
    loop {
        // Biased: once shutdown is signalled, no new request is read; one being handled
        // (below) still completes and is answered.
        let evicted = shared.idle.enter(place);
        let next = tokio::select! {
            biased;
            _ = shared.shutdown.cancelled() => None,
            _ = evicted => {
                tracing::debug!("closing the connection idle longest, to make room for a new client");
                None
            }
            r = timeout(limits.idle_timeout, reader.next_frame()) => Some(r),
        };
        shared.idle.leave(place);
        place = shared.idle.ticket();
        let Some(next) = next else { break };
        let frame = match next {
            Err(_) => {
                tracing::debug!("closing idle connection");
                break;
            }
            Ok(Ok(Some(frame))) => frame,
            Ok(Ok(None)) => break,
            Ok(Err(ReadError::TooLarge)) => {
                tracing::warn!(limit = limits.max_frame, "frame too large; closing connection");
                let err = RpcError::new(
                    code::FRAME_TOO_LARGE,
                    format!("message larger than {} bytes; closing the connection", limits.max_frame),
                );
                let _ = send(&mut writer, &encode_response(&Value::Null, &Err(err)), &shared).await;
                break;
            }
            Ok(Err(ReadError::Io(e))) => {
                tracing::debug!(error = %e, "read failed");
                break;
            }
        };
        // A view's subscription: the connection carries notifications from now on.
        if let Some(id) = super::view::subscribe_id(frame) {
            Stats::bump(&shared.stats.requests);
            if send(&mut writer, &super::view::subscribed(&id), &shared).await.is_ok() {
                subscription(&mut reader, &mut writer, &shared).await;
            }
            return;
        }
        // A blank line is skipped, but still ends a pipelined burst: a request followed by
        // an empty line in one write is answered now, not when the next message comes.
        let reply = match frame.iter().all(u8::is_ascii_whitespace) {
            true => None,
            false => rpc::handle_frame(frame, &shared).await,
        };
        if let Some(reply) = reply {
            if timeout(limits.write_timeout, writer.write_all(&reply)).await.map_or(true, |r| r.is_err()) {
                tracing::debug!("peer does not take its replies; closing");
                break;
            }
        }
        // Pipelined requests are answered in one write: flush only when none is waiting.
        if !reader.has_buffered_frame() && flush(&mut writer, &shared).await.is_err() {
            break;
        }
    }
    let _ = flush(&mut writer, &shared).await;
}

/// Tells a subscriber what the journal takes, until it leaves, sends anything, does not
/// take what it is told, or has to make room (it waits among the idle connections: at the
/// cap, a hook's connection goes before it), or the daemon stops.
async fn subscription(reader: &mut FrameReader<'_>, writer: &mut BufWriter<&Stream>, shared: &Shared) {
    let mut changes = shared.projects.ctx().journal.changes();
    loop {
        let place = shared.idle.ticket();
        let evicted = shared.idle.enter(place);
        let next = tokio::select! {
            biased;
            _ = shared.shutdown.cancelled() => None,
            _ = evicted => None,
            // A subscriber only listens: whatever it sends, or its leaving, ends it.
            _ = reader.next_frame() => None,
            change = super::view::next_change(&mut changes) => change,
        };
        shared.idle.leave(place);
        let Some(roots) = next else { break };
        if send(writer, &super::view::changed(roots), shared).await.is_err() {
            break;
        }
    }
}

async fn send(writer: &mut BufWriter<&Stream>, bytes: &[u8], shared: &Shared) -> io::Result<()> {
    match timeout(shared.limits.write_timeout, writer.write_all(bytes)).await {
        Ok(r) => r?,
        Err(_) => return Err(io::ErrorKind::TimedOut.into()),
    }
    flush(writer, shared).await
}

async fn flush(writer: &mut BufWriter<&Stream>, shared: &Shared) -> io::Result<()> {
    match timeout(shared.limits.write_timeout, writer.flush()).await {
        Ok(r) => r,
        Err(_) => Err(io::ErrorKind::TimedOut.into()),
    }
}

/// Answers a connection refused at the connection cap, then closes it.
pub async fn refuse_busy(stream: Stream, max: usize) {
    let err = RpcError::new(
        code::SERVER_BUSY,
        format!("ccmemd is serving its maximum of {max} connections; try again shortly"),
    );
    let line = encode_response(&Value::Null, &Err(err));
    let _ = timeout(std::time::Duration::from_secs(1), (&stream).write_all(&line)).await;
}

#[derive(Debug)]
enum ReadError {
    TooLarge,
    Io(io::Error),
}

/// Async counterpart of `ccmem_proto::wire::frame::read_frame`, sharing its [`scan`] rules.
struct FrameReader<'s> {
    inner: BufReader<&'s Stream>,
    frame: Vec<u8>,
    max: usize,
}

impl<'s> FrameReader<'s> {
    fn new(rx: &'s Stream, max: usize) -> Self {
        Self { inner: BufReader::with_capacity(16 * 1024, rx), frame: Vec::new(), max }
    }

    /// The next complete frame, or `None` at end of stream (a partial line is dropped).
    async fn next_frame(&mut self) -> Result<Option<&[u8]>, ReadError> {
        self.frame.clear();
        loop {
            let avail = self.inner.fill_buf().await.map_err(ReadError::Io)?;
            if avail.is_empty() {
                if !self.frame.is_empty() {
                    tracing::debug!(bytes = self.frame.len(), "peer left mid-message; dropping it");
                }
                return Ok(None);
            }
            match scan(&mut self.frame, avail, self.max) {
                Scan::Complete { consumed } => {
                    self.inner.consume(consumed);
                    return Ok(Some(&self.frame));
                }
                Scan::Partial { consumed } => self.inner.consume(consumed),
                Scan::TooLarge => return Err(ReadError::TooLarge),
            }
        }
    }

    fn has_buffered_frame(&self) -> bool {
        self.inner.buffer().contains(&b'\n')
    }
}
