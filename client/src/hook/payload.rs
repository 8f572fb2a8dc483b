//! The hook's payload, read from the agent's pipe.
//!
//! One JSON object, read to the end of input or, from an agent that keeps its end of the pipe
//! open, to the end of the object: the hook must not wait for what never comes. The bytes are
//! followed as they come ([`Scanner`]), which finds the object's end (so the payload is
//! parsed once, whatever its shape) and cuts any one string longer than [`STRING_HEAD`] +
//! [`STRING_TAIL`] bytes to its start and its end. A tool's output of hundreds of megabytes
//! then costs the hook a few megabytes, and the event still gets through: the daemon keeps
//! far less of any string than that anyway.

use crate::cut_json::{Scanner, STRING_HEAD, STRING_TAIL};
use serde_json::Value;
use std::io::Read;
use std::time::Duration;

/// How long the payload's input may stay silent before the hook gives up on it (see
/// [`read`]): an agent's payload comes at once, even on a loaded machine.
pub const INPUT_IDLE: Duration = Duration::from_secs(5);
/// The whole read takes at most this many idle times (30 s).
const INPUT_TOTAL_IDLES: u32 = 6;
/// A payload larger than this once its strings are cut is not taken (thousands of long
/// strings: nothing an agent sends).
const MAX_KEPT: usize = 64 << 20;
/// Bytes read at most: a pipe that never ends is not read for ever.
const READ_AT_MOST: u64 = 1 << 30;
/// Values (elements, keys, containers) taken at most: 31 million `0,` in 62 MB made the
/// hook's parse take 4.4 GB (round four's tester). No agent sends a million.
const MAX_VALUES: usize = 1_000_000;

/// The payload on `input`. An input silent for `idle` before the payload is whole is given
/// up: an agent writes the whole payload as it starts the hook, and a pipe kept open with
/// nothing (or half an object) in it would otherwise hold the hook, and the agent, for ever.
/// The read goes on in a thread of its own, left behind then (it ends with the process).
pub fn read(input: impl Read + Send + 'static, idle: Duration) -> Result<Value, String> {
    let (tx, rx) = std::sync::mpsc::channel::<Result<Option<Vec<u8>>, String>>();
    std::thread::spawn(move || {
        let done = read_object(input, |kept| {
            let _ = tx.send(Ok(Some(kept)));
        });
        let _ = tx.send(done.map(|()| None));
    });
    let mut bytes = Vec::new();
    // A payload trickled in (a byte every few seconds) is bounded too: at most this long
    // in all, however it comes.
    let end = std::time::Instant::now() + idle * INPUT_TOTAL_IDLES;
    loop {
        let left = end.saturating_duration_since(std::time::Instant::now());
        match rx.recv_timeout(idle.min(left)) {
            Ok(Ok(Some(kept))) => bytes.extend_from_slice(&kept),
            Ok(Ok(None)) | Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
            Ok(Err(e)) => return Err(e),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                return Err(format!(
                "no whole payload on stdin after {} ms of silence, or {} ms in all ({} bytes read): the hook gave up",
                idle.as_millis(),
                (idle * INPUT_TOTAL_IDLES).as_millis(),
                bytes.len()
            ))
            }
        }
    }
    crate::cut_json::parse(&bytes).map_err(|e| format!("the payload is not JSON: {e}"))
}

/// Reads `input` to its end or to the end of its first object, handing what is kept of each
/// read to `take`.
fn read_object(input: impl Read, mut take: impl FnMut(Vec<u8>)) -> Result<(), String> {
    let mut input = input.take(READ_AT_MOST);
    let mut chunk = vec![0u8; 64 * 1024];
    let mut scanner = Scanner::new(STRING_HEAD, STRING_TAIL);
    let mut kept_in_all = 0usize;
    loop {
        let n = match input.read(&mut chunk) {
            Ok(0) if input.limit() == 0 => {
                return Err(format!("the payload goes on past {} MiB: not read", READ_AT_MOST >> 20))
            }
            Ok(0) => return Ok(()),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(format!("cannot read the payload: {e}")),
        };
        let mut kept = Vec::with_capacity(n);
        let whole = scanner.feed(&chunk[..n], &mut kept);
        kept_in_all += kept.len();
        if scanner.values() > MAX_VALUES {
            return Err(format!("the payload holds over {MAX_VALUES} values: not taken"));
        }
        if kept_in_all > MAX_KEPT {
            return Err(format!("the payload is over {} MiB once its long strings are cut: not taken", MAX_KEPT >> 20));
        }
        take(kept);
        if whole {
            return Ok(());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An agent's pipe that gives what it holds and stays open: reading on waits for ever.
    struct OpenPipe(Option<Vec<u8>>);

    impl std::io::Read for OpenPipe {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            match self.0.take() {
                Some(data) => {
                    buf[..data.len()].copy_from_slice(&data);
                    Ok(data.len())
                }
                None => loop {
                    std::thread::park();
                },
            }
        }
    }

    const IDLE: Duration = Duration::from_millis(300);

    #[test]
    fn a_whole_payload_is_read_without_waiting_for_the_pipe_to_close() {
        // Given well within the idle time (which a read on would wait out, and fail).
        let whole = b"{\"hook_event_name\": \"Stop\", \"x\": \"}\"}\n".to_vec();
        let p = read(OpenPipe(Some(whole)), Duration::from_secs(60));
        assert_eq!(p.expect("the payload")["hook_event_name"], "Stop");
        // A payload cut where an inner object ends is not taken for a whole one.
        let cut = b"{\"a\": {\"b\": 1}";
        assert!(read(&cut[..], IDLE).is_err());
        assert!(read(&b"not json"[..], IDLE).is_err());
    }

    /// A pipe that gives a byte now and then, never silent for the idle time, is given up
    /// too, once the read has taken six idle times in all.
    struct Trickle(Duration);

    impl std::io::Read for Trickle {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            std::thread::sleep(self.0);
            buf[0] = b'[';
            Ok(1)
        }
    }

    #[test]
    fn a_payload_trickled_in_is_given_up_in_bounded_time() {
        let start = std::time::Instant::now();
        let err = read(Trickle(IDLE / 3), IDLE).expect_err("no payload");
        assert!(err.contains("gave up"), "{err}");
        let took = start.elapsed();
        assert!(took >= IDLE * 5 && took < Duration::from_secs(30), "{took:?}");
    }

    /// A pipe kept open with half a payload in it, or nothing at all, is given up once it
    /// has been silent for the idle time: the hook returns, the agent goes on.
    #[test]
    fn a_pipe_kept_open_without_a_whole_payload_is_given_up() {
        for held in [Some(&b"{\"hook_event_name\": \"Stop\", \"x\": \"a"[..]), Some(b"  "), None] {
            let start = std::time::Instant::now();
            let err = read(OpenPipe(held.map(<[u8]>::to_vec)), IDLE).expect_err("no payload");
            assert!(err.contains("gave up"), "{err}");
            assert!(start.elapsed() < Duration::from_secs(30), "{:?}", start.elapsed());
        }
    }

    #[test]
    fn a_string_of_hundreds_of_megabytes_is_cut_to_its_start_and_end_and_the_event_kept() {
        // 80 MiB of output: over the old 64 MiB limit, at which the whole event was lost.
        let middle = 80usize << 20;
        let output = format!("running 12 tests\n{}\ntest result: FAILED. 11 passed; 1 failed", "x".repeat(middle));
        let payload = serde_json::json!({"hook_event_name": "PostToolUse", "tool_response": {"stdout": output}});
        let bytes = serde_json::to_vec(&payload).expect("json");
        let p = read(std::io::Cursor::new(bytes), Duration::from_secs(60)).expect("the payload");
        let out = p["tool_response"]["stdout"].as_str().expect("a string");
        assert!(out.starts_with("running 12 tests\n"), "{}", &out[..40]);
        assert!(out.ends_with("test result: FAILED. 11 passed; 1 failed"));
        assert!(out.len() <= STRING_HEAD + STRING_TAIL + 100, "{}", out.len());
        let encoded = serde_json::to_string(&output).expect("json").len() - 2;
        let note = format!("\n[… {} bytes cut by ccmemctl …]\n", encoded - STRING_HEAD - STRING_TAIL);
        assert!(out.contains(&note), "{note}");
        assert_eq!(p["hook_event_name"], "PostToolUse");
    }

    #[test]
    fn an_endless_payload_ends() {
        let err = read_object(std::io::repeat(b'['), |_| {}).expect_err("endless");
        assert!(err.contains("not taken"), "{err}");
        let err = read_object(std::io::repeat(b' '), |_| {}).expect_err("endless");
        assert!(err.contains("over 64 MiB"), "{err}");
    }

    /// Round three's tester: a tool's output cut in the middle of an emoji by the agent
    /// (`"\ud83d"` alone) lost the whole event.
    #[test]
    fn a_payload_with_a_lone_surrogate_is_taken() {
        let p = br#"{"hook_event_name": "PostToolUse", "tool_response": {"stdout": "emoji cut \ud83d"}}"#;
        let v = read(&p[..], IDLE).expect("taken");
        assert_eq!(v["tool_response"]["stdout"], "emoji cut \u{fffd}");
    }

    /// Round three's tester: a payload over 64 MiB made of many strings each under the cut
    /// (40 of 3.9 MB; a `Write` of a file of a million short lines) was not taken. Past
    /// 32 MiB kept, each string keeps 64 KiB of each end.
    #[test]
    fn a_payload_of_many_long_strings_is_taken() {
        let mut map = serde_json::Map::new();
        map.insert("hook_event_name".into(), "PostToolUse".into());
        for i in 0..20 {
            map.insert(format!("k{i:02}"), format!("start {i} {} end {i}", "y".repeat(3_900_000)).into());
        }
        let bytes = serde_json::to_vec(&Value::Object(map)).expect("json");
        assert!(bytes.len() > 64 << 20);
        let v = read(std::io::Cursor::new(bytes), Duration::from_secs(60)).expect("taken");
        let total: usize = v.as_object().expect("an object").values().filter_map(Value::as_str).map(str::len).sum();
        assert!(total < 48 << 20, "{total}");
        assert!(v["k19"].as_str().expect("kept").ends_with("end 19"));
        assert!(v["k19"].as_str().expect("kept").contains("bytes cut by ccmemctl"));
    }

    #[test]
    fn a_payload_of_millions_of_values_is_refused_before_it_is_parsed() {
        let mut p = b"{\"hook_event_name\": \"PostToolUse\", \"tool_response\": [".to_vec();
        p.extend(b"0,".repeat(MAX_VALUES + 10));
        p.extend(b"0]}");
        let err = read(std::io::Cursor::new(p), Duration::from_secs(60)).expect_err("refused");
        assert!(err.contains("values: not taken"), "{err}");
        // Commas inside strings are text, not values.
        let text = format!("{{\"hook_event_name\": \"Stop\", \"x\": \"{}\"}}", ",".repeat(MAX_VALUES + 10));
        assert!(read(std::io::Cursor::new(text.into_bytes()), Duration::from_secs(60)).is_ok());
    }
}
