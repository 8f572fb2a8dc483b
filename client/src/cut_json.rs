//! JSON whose strings may be of any length, kept with each string cut to its start and its
//! end: a tool's output of hundreds of megabytes in a hook's payload or a transcript's line
//! costs a few megabytes, and the record still gets through (the daemon keeps far less of
//! any string than that anyway).

use std::collections::VecDeque;

/// Bytes kept of a string's start, at most...
pub const STRING_HEAD: usize = 4 << 20;
/// ...and of its end, where a runner prints its summary.
pub const STRING_TAIL: usize = 4 << 20;
/// Past this much kept in all, each string that follows keeps [`CROWDED_KEEP`] bytes of each
/// end: a payload of many strings under the cut (a `Write` of a file of a million short
/// lines) stays under what the hook takes, and the event gets through.
const CROWDED: usize = 32 << 20;
const CROWDED_KEEP: usize = 64 << 10;

/// Follows a JSON text byte by byte, linear in the input however it is cut into reads: tells
/// when the top-level object closes, and keeps of each string its first [`STRING_HEAD`] and
/// last [`STRING_TAIL`] bytes, cut where no character or escape is split, with a note of
/// what was left out between them.
#[derive(Default)]
pub struct Scanner {
    /// Bytes kept of a string's start and of its end; of the current string's.
    head: usize,
    tail_len: usize,
    limits: (usize, usize),
    /// Bytes kept in all, before the current call to `feed`.
    emitted: usize,
    /// Values begun so far outside strings (each `,`, `[` and `{`): what parsing them costs.
    values: usize,
    depth: usize,
    started: bool,
    in_string: bool,
    escaped: bool,
    /// Hex digits of a `\u` escape still to come, and its value so far.
    hex_left: u8,
    hex: u16,
    /// The last escape was the first half of a surrogate pair: no cut before its second.
    after_high: bool,
    /// Bytes of the current string kept so far.
    kept: usize,
    /// Once the current string is past its head: its last bytes, and how many were dropped.
    tail: Option<VecDeque<u8>>,
    cut: usize,
}

impl Scanner {
    /// A scanner keeping `head` bytes of each string's start and `tail` of its end.
    pub fn new(head: usize, tail: usize) -> Self {
        Scanner { head, tail_len: tail, ..Scanner::default() }
    }

    /// Values begun so far outside strings (every element, key and container): parsed, each
    /// costs tens of bytes of memory, however few bytes it takes in the text (`0,`).
    pub fn values(&self) -> usize {
        self.values
    }

    /// Takes the next bytes, adding what is kept to `out`; true once the first top-level
    /// object or array has closed.
    pub fn feed(&mut self, bytes: &[u8], out: &mut Vec<u8>) -> bool {
        let before = out.len();
        let whole = self.feed_bytes(bytes, out, before);
        self.emitted += out.len() - before;
        whole
    }

    fn feed_bytes(&mut self, bytes: &[u8], out: &mut Vec<u8>, before: usize) -> bool {
        for &b in bytes {
            if self.in_string {
                self.string_byte(b, out);
                continue;
            }
            out.push(b);
            match b {
                b',' => self.values += 1,
                b'"' => {
                    self.in_string = true;
                    self.kept = 0;
                    let crowded = self.emitted + out.len() - before > CROWDED;
                    self.limits = match crowded {
                        true => (self.head.min(CROWDED_KEEP), self.tail_len.min(CROWDED_KEEP)),
                        false => (self.head, self.tail_len),
                    };
                }
                b'{' | b'[' => {
                    self.depth += 1;
                    self.values += 1;
                    self.started = true;
                }
                b'}' | b']' => {
                    self.depth = self.depth.saturating_sub(1);
                    if self.started && self.depth == 0 {
                        return true;
                    }
                }
                _ => {}
            }
        }
        false
    }

    /// One byte inside a string (its closing quote included).
    fn string_byte(&mut self, b: u8, out: &mut Vec<u8>) {
        if !self.escaped && self.hex_left == 0 && b == b'"' {
            if let Some(mut tail) = self.tail.take() {
                // Nothing dropped: the tail follows the head as it came.
                if self.cut > 0 {
                    self.cut += clean_front(&mut tail);
                    out.extend_from_slice(format!("\\n[… {} bytes cut by ccmemctl …]\\n", self.cut).as_bytes());
                }
                out.extend(tail);
                self.cut = 0;
            }
            out.push(b);
            self.in_string = false;
            self.after_high = false;
            return;
        }
        let clean = !self.escaped && self.hex_left == 0 && !self.after_high && !is_continuation(b);
        let (head, tail_len) = self.limits;
        if self.tail.is_none() && self.kept >= head && clean {
            self.tail = Some(VecDeque::with_capacity(tail_len.min(1 << 20)));
        }
        self.step(b);
        match &mut self.tail {
            Some(tail) => {
                tail.push_back(b);
                if tail.len() > tail_len {
                    tail.pop_front();
                    self.cut += 1;
                }
            }
            None => {
                out.push(b);
                self.kept += 1;
            }
        }
    }

    /// Follows escapes: `\x`, and `\uXXXX` with its value (for surrogate pairs).
    fn step(&mut self, b: u8) {
        self.after_high = false;
        if self.escaped {
            self.escaped = false;
            if b == b'u' {
                (self.hex_left, self.hex) = (4, 0);
            }
        } else if self.hex_left > 0 {
            self.hex_left -= 1;
            self.hex = (self.hex << 4) | (b as char).to_digit(16).unwrap_or(0) as u16;
            self.after_high = self.hex_left == 0 && (0xD800..0xDC00).contains(&self.hex);
        } else if b == b'\\' {
            self.escaped = true;
        }
    }
}

/// Whether `tail` starts with the escape of the second half of a surrogate pair.
fn low_surrogate_first(tail: &VecDeque<u8>) -> bool {
    let head: Vec<u8> = tail.iter().take(6).copied().collect();
    head.starts_with(b"\\u")
        && std::str::from_utf8(&head[2..])
            .ok()
            .and_then(|h| u16::from_str_radix(h, 16).ok())
            .is_some_and(|v| (0xDC00..0xE000).contains(&v))
}

fn is_continuation(b: u8) -> bool {
    b & 0xC0 == 0x80
}

/// Drops from the start of a string's tail what a cut may have split (the rest of a UTF-8
/// character, of an escape, of a surrogate pair), so that it reads as a string's content on
/// its own; returns how many bytes went.
fn clean_front(tail: &mut VecDeque<u8>) -> usize {
    let before = tail.len();
    let drop_while = |tail: &mut VecDeque<u8>, most: usize, what: fn(u8) -> bool| {
        for _ in 0..most {
            match tail.front() {
                Some(&b) if what(b) => tail.pop_front(),
                _ => break,
            };
        }
    };
    // A quote here is the second half of `\"` (a bare one would have ended the string).
    drop_while(tail, 1, |b| b == b'"');
    drop_while(tail, 3, is_continuation);
    // The rest of a `\uXXXX` (text alike goes too: a few characters, counted as cut).
    drop_while(tail, 5, |b| b == b'u' || b.is_ascii_hexdigit());
    if tail.front() == Some(&b'\\') {
        // The run of backslashes and the character after it: whether the run began with
        // the second half of an escaped backslash or not, what follows starts afresh.
        drop_while(tail, usize::MAX, |b| b == b'\\');
        let escaped = tail.pop_front();
        if escaped == Some(b'u') {
            drop_while(tail, 4, |b| b.is_ascii_hexdigit());
        }
        drop_while(tail, 3, is_continuation);
    }
    // The escape dropped may have been the first half of a surrogate pair.
    if low_surrogate_first(tail) {
        tail.drain(..6);
    }
    before - tail.len()
}

/// `bytes` as JSON, lone surrogate escapes made replacement characters if they are all that
/// stood in the way (see [`repair_surrogates`]).
pub fn parse(bytes: &[u8]) -> serde_json::Result<serde_json::Value> {
    serde_json::from_slice(bytes).or_else(|e| match repair_surrogates(bytes) {
        Some(fixed) => serde_json::from_slice(&fixed),
        None => Err(e),
    })
}

/// `json` with each lone surrogate escape (`\ud83d` not followed by its second half, as
/// JavaScript's `JSON.stringify` writes a string cut in the middle of an emoji) made
/// `\ufffd`, the replacement character; None when there is none. serde_json refuses such a
/// text whole, and the event with it.
pub fn repair_surrogates(json: &[u8]) -> Option<Vec<u8>> {
    let hex4 = |at: usize| -> Option<u16> {
        let h = json.get(at..at + 4)?;
        u16::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok()
    };
    let escape_at = |at: usize| -> Option<u16> { (json.get(at..at + 2)? == b"\\u").then(|| hex4(at + 2)).flatten() };
    let mut out = Vec::with_capacity(json.len());
    let (mut i, mut in_string, mut changed) = (0, false, false);
    while i < json.len() {
        let b = json[i];
        if !in_string {
            in_string = b == b'"';
            out.push(b);
            i += 1;
            continue;
        }
        match b {
            b'"' => {
                in_string = false;
                out.push(b);
                i += 1;
            }
            b'\\' => match escape_at(i) {
                Some(0xD800..=0xDBFF) if escape_at(i + 6).is_some_and(|low| (0xDC00..0xE000).contains(&low)) => {
                    out.extend_from_slice(&json[i..i + 12]);
                    i += 12;
                }
                Some(0xD800..=0xDFFF) => {
                    out.extend_from_slice(b"\\ufffd");
                    changed = true;
                    i += 6;
                }
                _ => {
                    // Any other escape: the backslash and what it escapes, as they are.
                    out.extend_from_slice(&json[i..(i + 2).min(json.len())]);
                    i += 2;
                }
            },
            _ => {
                out.push(b);
                i += 1;
            }
        }
    }
    changed.then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    /// The payload, as a scanner keeping `keep` bytes of each end of a string keeps it,
    /// read in chunks of `chunk` bytes.
    fn scanned(json: &[u8], keep: usize, chunk: usize) -> Vec<u8> {
        let mut s = Scanner::new(keep, keep);
        let mut out = Vec::new();
        for c in json.chunks(chunk) {
            if s.feed(c, &mut out) {
                break;
            }
        }
        out
    }

    #[test]
    fn a_cut_splits_no_character_escape_or_surrogate_pair() {
        // Strings made of multi-byte characters, escapes and surrogate pairs, cut at every
        // offset around the head's end and the tail's start: each still parses, and holds
        // only whole characters of the original.
        let pieces = ["é", "\\n", "\\\\", "\\\"", "\\u00e9", "\\ud83d\\ude00", "😀", "a", "\\/"];
        for (i, p) in pieces.iter().enumerate() {
            for (j, q) in pieces.iter().enumerate() {
                for pad in 0..14 {
                    let body: String = format!("{}{}", "b".repeat(64 - pad), [*p, *q].repeat(40).concat());
                    let json = format!("{{\"s\": \"{body}\", \"k\": 1}}");
                    for chunk in [1, 5, 4096] {
                        let out = scanned(json.as_bytes(), 64, chunk);
                        let v: Value = serde_json::from_slice(&out).unwrap_or_else(|e| {
                            panic!("pieces {i} {j}, pad {pad}: {e}: {}", String::from_utf8_lossy(&out))
                        });
                        assert_eq!(v["k"], 1);
                        let s = v["s"].as_str().expect("a string");
                        assert!(s.contains("bytes cut by ccmemctl"), "pieces {i} {j}, pad {pad}");
                        assert!(s.len() < 64 + 64 + 64, "{}", s.len());
                    }
                }
            }
        }
    }

    #[test]
    fn short_strings_pass_untouched() {
        let json = br#"{"a": "x\"}\\", "b": [1, {"c": "\u00e9"}], "d": "}"}"#;
        assert_eq!(scanned(json, STRING_HEAD, 3), json.to_vec());
        // A string of just the head and the tail loses nothing.
        let json = br#"{"a": "abcdef\u00e9"}"#;
        assert_eq!(scanned(json, 6, 3), json.to_vec());
        assert_eq!(scanned(json, 6, 6), json.to_vec());
    }

    #[test]
    fn lone_surrogates_are_made_replacement_characters() {
        let cut = br#"{"stdout": "emoji cut \ud83d", "b": "\ude00 x", "pair": "\ud83d\ude00", "esc": "\\ud83d"}"#;
        assert!(serde_json::from_slice::<Value>(cut).is_err(), "serde_json refuses it");
        let fixed = repair_surrogates(cut).expect("repaired");
        let v: Value = serde_json::from_slice(&fixed).expect("now JSON");
        assert_eq!(v["stdout"], "emoji cut \u{fffd}");
        assert_eq!(v["b"], "\u{fffd} x");
        assert_eq!(v["pair"], "😀");
        assert_eq!(v["esc"], "\\ud83d", "an escaped backslash is no escape");
        assert_eq!(repair_surrogates(br#"{"a": "\ud83d\ude00 \n"}"#), None);
    }
}
