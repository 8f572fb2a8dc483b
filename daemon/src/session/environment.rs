//! A project's environment as its session keeps it (seed 000's EnvironmentState and
//! TestResults): servers from the port scanner, dependencies and build outputs from the
//! project's files, test and build results from the agent's commands.
//!
//! Pure rules over [`Session`], like `session`; the text kept is cleaned (redacted) here.

use crate::clock::{iso, modified};
use crate::text::clean;
use ccmem_proto::model::environment::{
    limits, BuildState, BuildStatus, DependencyState, ServerInfo, ServerStatus, SuiteStatus, TestFailure, TestSuite,
};
use ccmem_proto::model::session::{truncate_chars, Session, TimelineEntry};
use chrono::{DateTime, Utc};

/// Timeline entries kept.
const TIMELINE: usize = 100;
/// Characters of a server's command line kept.
const SERVER_COMMAND_CHARS: usize = 300;

/// Build output directories, most specific first.
const OUTPUT_DIRS: &[&str] = &[".next", "dist", "build", "out", "target"];

fn log(s: &mut Session, now: DateTime<Utc>, kind: &str, text: String) {
    s.timeline.push(TimelineEntry { timestamp: iso(now), kind: kind.into(), text });
    let excess = s.timeline.len().saturating_sub(TIMELINE);
    s.timeline.drain(..excess);
}

/// `known` is the entry for `seen`: the same port, and the same process unless the one
/// known is gone (a server restarted on its port is the same server).
fn same(known: &ServerInfo, seen: &ServerInfo) -> bool {
    known.port == seen.port
        && (known.status == ServerStatus::Stopped || known.pid.is_none() || seen.pid.is_none() || known.pid == seen.pid)
}

/// A server started (`running`) or went away (`stopped`). False when that was known already.
pub fn apply_server(s: &mut Session, mut info: ServerInfo, now: DateTime<Utc>) -> bool {
    info.process = truncate_chars(&clean(&info.process), 100);
    info.command = truncate_chars(&clean(&info.command), SERVER_COMMAND_CHARS);
    info.url = ServerInfo::url_for(info.port);
    let t = iso(now);
    let servers = &mut s.environment.servers;
    let known = servers.iter().position(|x| same(x, &info));
    let text = match (info.status, known) {
        (ServerStatus::Running, Some(i))
            if servers[i].status == ServerStatus::Running && servers[i].pid == info.pid =>
        {
            return false;
        }
        (ServerStatus::Running, known) => {
            info.started_at = t;
            info.stopped_at = None;
            if let Some(i) = known {
                servers.remove(i);
            }
            let text = format!("{} started listening on {}", info.process, info.url);
            servers.push(info);
            ("server_started", text)
        }
        (ServerStatus::Stopped, Some(i)) if servers[i].status == ServerStatus::Running => {
            let x = &mut servers[i];
            x.status = ServerStatus::Stopped;
            x.stopped_at = Some(t);
            ("server_stopped", format!("{} on {} stopped", x.process, x.url))
        }
        (ServerStatus::Stopped, _) => return false,
    };
    // Running first, by port; then the most recently stopped; at most 20.
    servers.sort_by(|a, b| {
        (a.status != ServerStatus::Running)
            .cmp(&(b.status != ServerStatus::Running))
            .then_with(|| b.stopped_at.cmp(&a.stopped_at))
            .then(a.port.cmp(&b.port))
    });
    servers.truncate(limits::SERVERS);
    log(s, now, text.0, text.1);
    true
}

/// The port scanner's view of the project: the servers listening now. Those new are
/// started, those gone are stopped. True when anything changed.
pub fn apply_scan(s: &mut Session, listening: &[ServerInfo], now: DateTime<Utc>) -> bool {
    let mut changed = false;
    let gone: Vec<ServerInfo> = s
        .environment
        .servers
        .iter()
        .filter(|x| x.status == ServerStatus::Running && !listening.iter().any(|l| l.port == x.port && l.pid == x.pid))
        .cloned()
        .collect();
    for mut g in gone {
        g.status = ServerStatus::Stopped;
        changed |= apply_server(s, g, now);
    }
    for l in listening {
        changed |= apply_server(s, ServerInfo { status: ServerStatus::Running, ..l.clone() }, now);
    }
    changed
}

/// Whether what happened at `now` is older than what is recorded as of `recorded`: an
/// imported transcript replayed after a newer one must not take the place of the newer
/// results.
fn older(recorded: Option<&String>, now: DateTime<Utc>) -> bool {
    // Only a replayed event happens in the past: a live one is now, whatever the wall clock
    // did (set back, it must not make live results look older than the last ones).
    let replayed = now < Utc::now() - chrono::Duration::minutes(1);
    replayed && recorded.and_then(|t| crate::clock::parse_iso(t)).is_some_and(|t| t > now)
}

/// A test run's results replace the suite's last ones (unless those are newer).
pub fn apply_tests(s: &mut Session, mut suite: TestSuite, e2e: bool, now: DateTime<Utc>) {
    if older(s.test_results.suite_mut(e2e).ran_at.as_ref(), now) {
        return;
    }
    suite.framework = truncate_chars(&clean(&suite.framework), 50);
    suite.command = clean(&suite.command);
    suite.failures = suite.failures.into_iter().map(clean_failure).collect();
    suite.settle();
    suite.ran_at = Some(iso(now));
    let kind = if e2e { "e2e" } else { "unit" };
    let text = match suite.status {
        SuiteStatus::Failed => {
            format!("{kind} tests ({}) failed: {} passed, {} failed", suite.framework, suite.passed, suite.failed)
        }
        _ => format!("{kind} tests ({}) passed: {} passed", suite.framework, suite.passed),
    };
    s.test_results.last_run = Some(iso(now));
    if suite.status == SuiteStatus::Passed && !suite.command.is_empty() {
        crate::session::shell::tests_passed(s, &suite.command, now);
    }
    *s.test_results.suite_mut(e2e) = suite;
    log(s, now, "tests", text);
}

fn clean_failure(f: TestFailure) -> TestFailure {
    TestFailure {
        file: truncate_chars(&clean(&f.file), 300),
        line: f.line,
        test_name: truncate_chars(&clean(&f.test_name), 300),
        message: f.message.map(|m| truncate_chars(&clean(&m), limits::MESSAGE_CHARS)).filter(|m| !m.is_empty()),
    }
}

/// A build's outcome.
pub fn apply_build(s: &mut Session, mut b: BuildStatus, now: DateTime<Utc>) {
    if older(s.environment.build.last_build.as_ref(), now) {
        return;
    }
    b.command = clean(&b.command);
    b.errors =
        b.errors.iter().map(|e| truncate_chars(&clean(e), limits::MESSAGE_CHARS)).take(limits::BUILD_ERRORS).collect();
    b.last_build = Some(iso(now));
    if b.output_dir.is_none() {
        b.output_dir = s.environment.build.output_dir.clone();
    }
    let text = match b.status {
        BuildState::Failed => format!("build failed ({}): {}", b.command, b.errors.first().map_or("", String::as_str)),
        _ => format!("build succeeded ({})", b.command),
    };
    s.environment.build = b;
    log(s, now, "build", text);
}

/// Re-reads what the project's files say: dependencies, and the build output directory's
/// time when no build command was seen since. A few `stat` calls.
pub fn refresh_files(s: &mut Session) {
    let root = s.project_root.clone();
    s.environment.dependencies = crate::observe::deps::detect(&root);
    let newest = OUTPUT_DIRS.iter().filter_map(|d| modified(&root.join(d)).map(|t| (*d, t))).max_by_key(|(_, t)| *t);
    let b = &mut s.environment.build;
    if let Some((dir, t)) = newest {
        b.output_dir = Some(format!("{dir}/"));
        // Outputs newer than the last build seen were built since, by something else (an
        // editor, a watcher, the user's terminal): a success.
        let seen = b.last_build.as_deref().and_then(crate::clock::parse_iso);
        if seen.is_none_or(|k| t > k + chrono::Duration::seconds(2)) {
            *b = BuildStatus {
                status: BuildState::Success,
                last_build: Some(iso(t)),
                output_dir: b.output_dir.take(),
                ..Default::default()
            };
        }
    }
}

/// What in the environment needs the user's attention, for the checkpoint's warnings (which
/// `status` and the MCP tool `session_status` show). Tests' names, the framework's and build
/// errors are the tools' output, which the repository's code controls: code spans.
pub fn warnings(s: &Session) -> Vec<String> {
    let code = |t: &str| ccmem_proto::quote::code(t, 160);
    let mut w = Vec::new();
    for (kind, suite) in [("unit", &s.test_results.unit), ("e2e", &s.test_results.e2e)] {
        if suite.status == SuiteStatus::Failed {
            let names: Vec<String> = suite.failures.iter().take(3).map(|f| code(&f.test_name)).collect();
            let more = if suite.failures.len() > 3 || suite.more_failures > 0 { ", …" } else { "" };
            // A run cut short (`| tail`) may show the counts and no name.
            let which = if names.is_empty() { String::new() } else { format!(": {}{more}", names.join(", ")) };
            let n = suite.failed.max(1);
            w.push(format!(
                "{n} {kind} test{} failing ({}){which}",
                if n == 1 { "" } else { "s" },
                code(&suite.framework),
            ));
        }
    }
    let b = &s.environment.build;
    if b.status == BuildState::Failed {
        match b.errors.first() {
            Some(e) => w.push(format!("build failing: {}", code(e))),
            None => w.push(format!("build failing: {}", ccmem_proto::command_or(&b.command, "the build"))),
        }
    }
    for m in &s.environment.dependencies.managers {
        if m.status == DependencyState::Outdated {
            w.push(format!("{} dependencies outdated: {}", m.package_manager, m.detail));
        }
    }
    w.into_iter().map(|x| truncate_chars(&x, ccmem_proto::model::session::limits::WARNING_CHARS)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn session() -> Session {
        let now = Utc::now();
        crate::session::rules::start(
            PathBuf::from("/w/app"),
            "app".into(),
            crate::session::rules::new_id(now, None),
            now,
            None,
        )
    }

    fn server(port: u16, pid: u32) -> ServerInfo {
        ServerInfo {
            process: "node".into(),
            port,
            pid: Some(pid),
            command: "node server.js --token=s3cr3t-v4lue".into(),
            ..Default::default()
        }
    }

    /// Found by a tester: transcripts imported in glob order, an older one after a newer
    /// one, put the older test run and build in place of the newer ones.
    #[test]
    fn an_older_replayed_run_does_not_replace_a_newer_one() {
        let mut s = session();
        let suite = |framework: &str| TestSuite {
            framework: framework.into(),
            status: ccmem_proto::model::environment::SuiteStatus::Passed,
            passed: 1,
            total: 1,
            ..Default::default()
        };
        let newer = Utc::now() - chrono::Duration::days(30);
        let older = Utc::now() - chrono::Duration::days(300);
        apply_tests(&mut s, suite("go"), false, newer);
        apply_tests(&mut s, suite("vitest"), false, older);
        assert_eq!(s.test_results.unit.framework, "go");
        apply_build(&mut s, BuildStatus { command: "go build".into(), ..Default::default() }, newer);
        apply_build(&mut s, BuildStatus { command: "npm run build".into(), ..Default::default() }, older);
        assert_eq!(s.environment.build.command, "go build");
        // A live run replaces it, even when the wall clock was set back before it.
        apply_tests(&mut s, suite("jest"), false, Utc::now());
        assert_eq!(s.test_results.unit.framework, "jest");
    }

    #[test]
    fn servers_start_stop_and_stay_bounded() {
        let mut s = session();
        let now = Utc::now();
        assert!(apply_scan(&mut s, &[server(3000, 10)], now));
        assert!(!apply_scan(&mut s, &[server(3000, 10)], now), "a server still listening changes nothing");
        let x = &s.environment.servers[0];
        assert_eq!((x.status, x.url.as_str()), (ServerStatus::Running, "http://localhost:3000"));
        assert!(!x.command.contains("s3cr3t"), "commands are redacted: {}", x.command);
        assert!(apply_scan(&mut s, &[], now));
        assert_eq!(s.environment.servers[0].status, ServerStatus::Stopped);
        assert!(s.environment.servers[0].stopped_at.is_some());
        let kinds: Vec<&str> = s.timeline.iter().map(|t| t.kind.as_str()).collect();
        assert_eq!(kinds, ["server_started", "server_stopped"]);
        apply_scan(&mut s, &[server(3000, 11)], now);
        assert_eq!(s.environment.servers.len(), 1, "the same port restarted is one server");
        let many: Vec<ServerInfo> = (0..30).map(|i| server(4000 + i, 100 + i as u32)).collect();
        apply_scan(&mut s, &many, now);
        assert_eq!(s.environment.servers.len(), limits::SERVERS);
        assert!(s.environment.servers.iter().all(|x| x.status == ServerStatus::Running));
    }

    #[test]
    fn tests_and_builds_give_warnings() {
        let mut s = session();
        let now = Utc::now();
        let runs =
            crate::observe::testout::parse(&crate::observe::testout::tests::fixture("cargo-fail.txt"), Some("cargo"));
        let mut suite = runs[0].suite.clone();
        suite.command = "cargo test".into();
        apply_tests(&mut s, suite, false, now);
        assert_eq!(s.test_results.unit.status, SuiteStatus::Failed);
        assert_eq!(s.test_results.last_run, Some(iso(now)));
        let w = warnings(&s);
        assert_eq!(w, ["1 unit test failing (`cargo`): `tests::parses`"]);
        // A run whose names were cut off (`| tail`): the count alone.
        let mut cut = s.test_results.unit.clone();
        cut.failures.clear();
        let mut t = session();
        apply_tests(&mut t, cut, false, now);
        assert_eq!(warnings(&t), ["1 unit test failing (`cargo`)"]);
        apply_build(
            &mut s,
            BuildStatus {
                status: BuildState::Failed,
                errors: vec!["src/a.rs:1:1: error: x".into()],
                command: "cargo build".into(),
                ..Default::default()
            },
            now,
        );
        assert!(warnings(&s).iter().any(|w| w == "build failing: `src/a.rs:1:1: error: x`"));
        assert_eq!(s.timeline.len(), 2);
    }
}
