//! Newline-delimited framing: one JSON message per line, at most [`MAX_FRAME`] bytes.
//!
//! [`scan`] holds the rules (where a frame ends, when it is too large) so that the
//! blocking reader here and the daemon's async reader cannot disagree.

use std::io::{self, BufRead};

/// Largest frame accepted, newline excluded: 1 MiB.
pub const MAX_FRAME: usize = 1 << 20;

/// What [`scan`] made of the bytes it was shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scan {
    /// The frame is complete; `consumed` bytes (newline included) were used.
    Complete {
        /// Bytes of input used.
        consumed: usize,
    },
    /// No newline yet; all `consumed` bytes were appended.
    Partial {
        /// Bytes of input used.
        consumed: usize,
    },
    /// The frame would exceed the limit. Nothing was consumed.
    TooLarge,
}

/// Appends bytes from `avail` to `frame` up to the first newline. A trailing `\r` is dropped
/// so that CRLF senders work.
pub fn scan(frame: &mut Vec<u8>, avail: &[u8], max: usize) -> Scan {
    match avail.iter().position(|&b| b == b'\n') {
        Some(i) => {
            if frame.len() + i > max {
                return Scan::TooLarge;
            }
            frame.extend_from_slice(&avail[..i]);
            if frame.last() == Some(&b'\r') {
                frame.pop();
            }
            Scan::Complete { consumed: i + 1 }
        }
        None => {
            if frame.len() + avail.len() > max {
                return Scan::TooLarge;
            }
            frame.extend_from_slice(avail);
            Scan::Partial { consumed: avail.len() }
        }
    }
}

/// Errors of [`read_frame`].
#[derive(Debug)]
pub enum FrameError {
    /// The peer sent more than the limit without a newline.
    TooLarge,
    /// The transport failed.
    Io(io::Error),
}

impl std::fmt::Display for FrameError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FrameError::TooLarge => write!(f, "frame larger than {MAX_FRAME} bytes"),
            FrameError::Io(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for FrameError {}

/// Reads one frame into `frame` (cleared first). Returns `Ok(false)` at end of stream; a
/// partial line before the end is discarded, since only complete lines are messages.
pub fn read_frame<R: BufRead>(r: &mut R, frame: &mut Vec<u8>, max: usize) -> Result<bool, FrameError> {
    frame.clear();
    loop {
        let avail = match r.fill_buf() {
            Ok(a) => a,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(FrameError::Io(e)),
        };
        if avail.is_empty() {
            return Ok(false);
        }
        match scan(frame, avail, max) {
            Scan::Complete { consumed } => {
                r.consume(consumed);
                return Ok(true);
            }
            Scan::Partial { consumed } => r.consume(consumed),
            Scan::TooLarge => return Err(FrameError::TooLarge),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::BufReader;

    #[test]
    fn splits_lines_across_small_reads() {
        let data = b"{\"a\":1}\r\n{\"b\":2}\npartial";
        // A 3-byte buffer forces frames to span many fill_buf calls.
        let mut r = BufReader::with_capacity(3, &data[..]);
        let mut f = Vec::new();
        assert!(read_frame(&mut r, &mut f, 100).unwrap());
        assert_eq!(f, b"{\"a\":1}");
        assert!(read_frame(&mut r, &mut f, 100).unwrap());
        assert_eq!(f, b"{\"b\":2}");
        assert!(!read_frame(&mut r, &mut f, 100).unwrap(), "a partial last line is not a frame");
    }

    #[test]
    fn enforces_the_limit_exactly() {
        let mut f = Vec::new();
        let ok = [b'x'; 8];
        assert_eq!(scan(&mut f, &[&ok[..], b"\n"].concat(), 8), Scan::Complete { consumed: 9 });
        f.clear();
        assert_eq!(scan(&mut f, &[b'x'; 9], 8), Scan::TooLarge);
        let mut r = BufReader::with_capacity(4, &[b'y'; 20][..]);
        assert!(matches!(read_frame(&mut r, &mut f, 8), Err(FrameError::TooLarge)));
    }
}
