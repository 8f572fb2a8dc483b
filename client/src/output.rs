//! Text and JSON output.

use ccmem_proto::api::StatusReply;
use serde::Serialize;
use std::fmt::Write;

/// Prints `v` as pretty JSON on stdout.
pub fn print_json<T: Serialize>(v: &T) {
    match serde_json::to_string_pretty(v) {
        Ok(s) => println!("{s}"),
        Err(e) => eprintln!("ccmemctl: cannot encode output: {e}"),
    }
}

/// Prints `json` in JSON mode, `text` otherwise.
pub fn say(json_mode: bool, json: serde_json::Value, text: &str) {
    if json_mode {
        print_json(&json);
    } else {
        println!("{text}");
    }
}

/// The human form of a status reply.
pub fn status(r: &StatusReply) -> String {
    let d = &r.daemon;
    let c = &d.connections;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "ccmemd {} (protocol {}) · pid {} · up {} · ready in {:.1} ms",
        d.version,
        d.protocol_version,
        d.pid,
        human_duration(d.uptime_secs),
        d.ready_ms
    );
    let _ = writeln!(s, "socket       {}", d.socket.display());
    let refused = c.refused_busy + c.refused_peer;
    let _ = writeln!(
        s,
        "connections  {} open (max {}) · {} accepted · {} refused · {} requests",
        c.active, c.max, c.accepted, refused, c.requests
    );
    let _ = writeln!(s, "projects     {} live", d.live_projects);
    if let Some(p) = &r.project {
        let _ = writeln!(s, "project      {}", p.root.display());
        let _ = writeln!(s, "session      {}", if p.live { "live" } else { "none yet" });
    }
    s
}

/// `3d 4h`, `2h 5m`, `4m 10s`, `12s`.
pub fn human_duration(secs: f64) -> String {
    let t = secs.max(0.0) as u64;
    let (d, h, m, s) = (t / 86_400, t / 3600 % 24, t / 60 % 60, t % 60);
    match (d, h, m) {
        (0, 0, 0) => format!("{s}s"),
        (0, 0, _) => format!("{m}m {s}s"),
        (0, _, _) => format!("{h}h {m}m"),
        _ => format!("{d}d {h}h"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_naturally() {
        assert_eq!(human_duration(0.4), "0s");
        assert_eq!(human_duration(59.0), "59s");
        assert_eq!(human_duration(250.0), "4m 10s");
        assert_eq!(human_duration(7500.0), "2h 5m");
        assert_eq!(human_duration(273_600.0), "3d 4h");
    }
}
