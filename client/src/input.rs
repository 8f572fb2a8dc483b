//! What the user hands ccmemctl on stdin or as a file, read with a size cap: a command
//! pointed at `/dev/zero` or an endless pipe by mistake ends with a clear error instead of
//! eating the machine's memory. FIFOs the user names are read (`--file <(cmd)` is one).

use std::io::{self, Read};
use std::path::Path;

/// At most `max` bytes of `r`, or an error naming `what` when there are more.
pub fn capped(r: impl Read, max: u64, what: &str) -> Result<Vec<u8>, String> {
    let mut buf = Vec::new();
    r.take(max + 1).read_to_end(&mut buf).map_err(|e| format!("cannot read {what}: {e}"))?;
    if buf.len() as u64 > max {
        return Err(format!("{what} is over {} (the most ccmemctl takes here)", size(max)));
    }
    Ok(buf)
}

/// [`capped`] as UTF-8 text, refusing text that is not.
pub fn capped_text(r: impl Read, max: u64, what: &str) -> Result<String, String> {
    String::from_utf8(capped(r, max, what)?).map_err(|_| format!("{what} is not UTF-8 text"))
}

/// The file at `path` (`-` is stdin) as text, at most `max` bytes.
pub fn file_text(path: &Path, max: u64) -> Result<String, String> {
    if path.as_os_str() == "-" {
        return capped_text(io::stdin().lock(), max, "stdin");
    }
    let what = path.display().to_string();
    let f = std::fs::File::open(path).map_err(|e| format!("cannot read {what}: {e}"))?;
    if f.metadata().is_ok_and(|m| m.is_dir()) {
        return Err(format!("{what} is a directory"));
    }
    capped_text(f, max, &what)
}

/// A runner's output: its first `head` bytes and its last `tail` (where summaries are),
/// streamed, so that an output of any length costs at most `head + tail` of memory.
pub fn head_and_tail(mut r: impl Read, head: usize, tail: usize) -> io::Result<String> {
    let mut first = Vec::with_capacity(head.min(1 << 20));
    (&mut r).take(head as u64).read_to_end(&mut first)?;
    let mut last = std::collections::VecDeque::<u8>::new();
    let mut cut = 0u64;
    let mut chunk = vec![0u8; 64 << 10];
    // `test-report < /dev/zero` must end: past this much, the rest is not read.
    let mut budget = READ_AT_MOST;
    let mut unread = false;
    loop {
        if budget == 0 {
            unread = true;
            break;
        }
        let n = match r.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        budget = budget.saturating_sub(n as u64);
        last.extend(&chunk[..n]);
        if last.len() > tail {
            let extra = last.len() - tail;
            last.drain(..extra);
            cut += extra as u64;
        }
    }
    if cut > 0 {
        first.extend_from_slice(format!("\n[… {cut} bytes cut by ccmemctl …]\n").as_bytes());
    }
    first.extend(last);
    if unread {
        first.extend_from_slice(format!("\n[… not read past {} GiB by ccmemctl …]\n", READ_AT_MOST >> 30).as_bytes());
    }
    Ok(String::from_utf8_lossy(&first).into_owned())
}

/// Most of a runner's output read by [`head_and_tail`].
const READ_AT_MOST: u64 = 1 << 30;

fn size(n: u64) -> String {
    if n >= 1 << 20 {
        format!("{} MiB", n >> 20)
    } else {
        format!("{} KiB", n >> 10)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endless_input_is_an_error_not_a_flood() {
        let e = capped(io::repeat(b'x'), 1 << 20, "stdin").unwrap_err();
        assert!(e.contains("stdin is over 1 MiB"), "{e}");
        assert_eq!(capped(&b"abc"[..], 3, "x").unwrap(), b"abc");
        assert!(capped_text(&[0xff, 0xfe][..], 10, "x").unwrap_err().contains("not UTF-8"));
        let e = file_text(Path::new("/dev/zero"), 1 << 10).unwrap_err();
        assert!(e.contains("/dev/zero is over 1 KiB"), "{e}");
        assert!(file_text(Path::new("/"), 10).unwrap_err().contains("is a directory"));
    }

    #[test]
    fn long_output_keeps_its_start_and_its_end() {
        let text: String = (0..10_000).map(|i| format!("line {i}\n")).collect();
        let marker = format!("\n[… {} bytes cut by ccmemctl …]\n", text.len() - 2000);
        assert_eq!(head_and_tail(text.as_bytes(), 1000, 1000).unwrap().len(), 2000 + marker.len());
        let kept = head_and_tail(text.as_bytes(), 20, 30).unwrap();
        assert!(kept.starts_with("line 0\nline 1\n"), "{kept}");
        assert!(kept.ends_with("line 9998\nline 9999\n"), "{kept}");
        assert!(kept.contains("bytes cut by ccmemctl"), "{kept}");
        assert_eq!(head_and_tail(&b"short"[..], 20, 30).unwrap(), "short");
        // An endless stream is read through in bounded memory.
        let kept = head_and_tail(io::repeat(b'y').take(50 << 20), 10, 10).unwrap();
        assert!(kept.len() < 100, "{}", kept.len());
    }
}
