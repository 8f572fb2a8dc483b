//! A tool's use: its edits counted in lines, its plan, its shell command, and the test or
//! build results its output holds.

use super::*;

pub(super) fn tool_use(
    s: &mut Session,
    conv: &str,
    tool: &Tool,
    cwd: Option<&Path>,
    now: DateTime<Utc>,
    fx: &mut Effects,
) {
    match tool {
        Tool::Edits(files) => {
            for f in files {
                let Ok(rel) = crate::text::relative(&s.project_root, &f.path) else { continue };
                if f.deleted {
                    let _ = session::apply_quietly(s, SessionEvent::FileDeleted { path: rel }, now);
                    continue;
                }
                s.agent_lines.added += f.added;
                s.agent_lines.deleted += f.removed;
                fx.agent_edits.push(AgentEdit {
                    rel,
                    summary: f.summary.clone(),
                    tool: f.tool.clone(),
                    created: f.created,
                });
            }
            if s.git_start.is_none() {
                // Outside git, the agent's own patches are all there is to count.
                s.activity_summary.lines_added = s.agent_lines.added;
                s.activity_summary.lines_deleted = s.agent_lines.deleted;
            }
        }
        Tool::Plan(todos) => {
            if let Some(c) = find(s, conv) {
                c.todos = todos.clone();
                c.todos_at = c.message_count;
            }
            // A plan carried on from another conversation (another agent's, a handoff) is one
            // plan: the same items in the others' lists take their new status.
            for c in s.conversations.iter_mut().filter(|c| c.id != conv) {
                for t in &mut c.todos {
                    if let Some(new) = todos.iter().find(|n| n.content == t.content) {
                        t.status = new.status;
                    }
                }
            }
            let _ = session::apply_quietly(s, SessionEvent::Todos { todos: todos.clone() }, now);
        }
        Tool::Task(change) => change_task(s, conv, change.clone()),
        Tool::Shell { command, output, failed, interrupted, .. } => {
            // Redacted once, whole, for the command kept and for all that `results` cuts
            // out of it.
            let redacted = ccmem_proto::redact::redact(command);
            let kept =
                ccmem_proto::model::session::truncate_chars(&crate::text::clean_redacted(&redacted), PROMPT_CHARS);
            if !kept.is_empty() {
                s.shell_commands.push(ShellCommand {
                    timestamp: crate::clock::iso(now),
                    command: kept,
                    conversation: conv.to_string(),
                });
                let excess = s.shell_commands.len().saturating_sub(SHELL_COMMANDS);
                s.shell_commands.drain(..excess);
            }
            // A run cut short says nothing about the code.
            if !*interrupted {
                // What a command that prints a secret printed is redacted whole, after the
                // command (`pass show db` then the password alone on a line): every
                // failure and finding derived from it is then clear of it.
                let output = if ccmem_proto::redact::prints_secret(command) {
                    ccmem_proto::redact::redact_output(command, output)
                } else {
                    std::borrow::Cow::Borrowed(output.as_str())
                };
                results(s, &redacted, &output, *failed, cwd, now);
                fx.commit |= !*failed
                    && !crate::session::shell::nothing_committed(&output)
                    && crate::observe::work::parts(command)
                        .iter()
                        .any(|(w, _)| *w == crate::observe::work::Work::Commit);
            }
        }
        Tool::Other => {}
    }
}

/// Test and build results from a shell command's output, and what the command means for
/// the session's unresolved failures and finished work.
///
/// `cmd` is redacted whole by the caller: what is derived from it (a failure's one-line
/// form, a test run's command, a commit's words) is cut out of it, and a secret a rule finds
/// only across its lines (a here-document's `user NAME PASS`, expect's `send`) or with a word
/// the derivation drops (`auth=…BasicAuth('bob', 'PASS')`) would pass in the cut form.
pub(super) fn results(s: &mut Session, cmd: &str, output: &str, failed: bool, cwd: Option<&Path>, now: DateTime<Utc>) {
    // A command that works in another project (`cd ../other && npm test`) says nothing of
    // this one's tests or failures; one in a part of it is named with its place, relative to
    // the root (`cd packages/api && npm test`), the root itself needing none.
    let within = |p: &Path| ccmem_proto::files::within::strip_root(p, &s.project_root);
    let base = cwd.filter(|c| within(c).is_some()).unwrap_or(&s.project_root);
    let cmd = match crate::observe::cmdline::work_dir(cmd, base) {
        Some(dir) => match within(&dir) {
            None => return,
            Some(rel) if rel.as_os_str().is_empty() => crate::observe::cmdline::without_cd(cmd).to_string(),
            Some(rel) => format!("cd {} && {}", rel.display(), crate::observe::cmdline::without_cd(cmd)),
        },
        None => cmd.to_string(),
    };
    let parsed_failure = parsed_results(s, &cmd, output, failed, now);
    crate::session::shell::record(s, &cmd, output, failed, parsed_failure, now);
}

/// Records the test runs and build a command's output shows; returns what failed in them
/// (a run piped into `tail` exits 0 whatever the tests did).
pub(super) fn parsed_results(
    s: &mut Session,
    cmd: &str,
    output: &str,
    failed: bool,
    now: DateTime<Utc>,
) -> Option<String> {
    let kind = testout::command::classify(cmd);
    if kind.test.is_none() && !kind.build {
        return None;
    }
    let mut failure = None;
    // The part of the line that ran them (`echo start && pytest -q | grep passed` ran
    // `pytest -q`), where it ran.
    let part = |is: fn(&testout::command::Kind) -> bool| {
        let seg = crate::observe::work::segments(cmd).into_iter().find(|seg| is(&testout::command::classify(seg)));
        let run = seg.map(|seg| format!("{}{seg}", crate::observe::cmdline::cd_prefix(cmd)));
        ccmem_proto::model::session::truncate_chars(run.as_deref().unwrap_or(cmd), PROMPT_CHARS)
    };
    let command = part(|k| k.test.is_some());
    if let Some(hint) = kind.test {
        let mut runs = testout::parse(output, hint);
        if runs.is_empty() {
            // Nothing a runner printed. A compiler's error means the tests did not build,
            // whatever the exit status (`cargo test 2>&1 | tail` exits 0); a failed command,
            // why it failed (a missing script) as its one failure. Anything else is not
            // recognised: no result, never a pass.
            let compile_error = testout::build::parse(output, false).errors.into_iter().next();
            let (name, why) = match compile_error {
                Some(e) => (testout::DID_NOT_BUILD, Some(e)),
                None if failed => (testout::DID_NOT_RUN, testout::build::parse(output, true).errors.into_iter().next()),
                None => return None,
            };
            let mut suite = TestSuite {
                framework: hint.unwrap_or("unknown").into(),
                status: SuiteStatus::Failed,
                ..Default::default()
            };
            suite.failures.push(TestFailure { test_name: name.into(), message: why, ..Default::default() });
            runs.push(testout::Run { e2e: kind.e2e, suite });
        }
        for mut run in runs {
            run.suite.command = command.clone();
            if failure.is_none() && run.suite.status == SuiteStatus::Failed {
                failure = Some(suite_failure(&run.suite));
            }
            let e2e = run.e2e || kind.e2e;
            let _ = session::apply_quietly(s, SessionEvent::Tests { suite: run.suite, e2e }, now);
        }
    }
    if kind.build {
        let mut b = testout::build::parse(output, failed);
        b.command = part(|k| k.build);
        if failure.is_none() && b.status == ccmem_proto::model::environment::BuildState::Failed {
            failure = b.errors.first().cloned().or_else(|| Some(String::new()));
        }
        let _ = session::apply_quietly(s, SessionEvent::Build(b), now);
    }
    // A failure whose parser found no words gets the output's key error line.
    failure.map(|f| if f.is_empty() { crate::session::shell::key_error(output).unwrap_or_default() } else { f })
}

/// `2 failed, 40 passed; parses_dates (src/a.rs:10): expected 3, got 4`.
pub(super) fn suite_failure(suite: &TestSuite) -> String {
    // A run that failed before any test (it did not build, the runner did not start): why.
    if let Some(f) = suite.failures.first().filter(|f| suite.passed + suite.failed == 0 && f.test_name.starts_with('('))
    {
        let why = f.message.clone().unwrap_or_default();
        return if f.test_name == testout::DID_NOT_BUILD { format!("the tests did not build: {why}") } else { why };
    }
    let mut text = format!("{} failed, {} passed", suite.failed, suite.passed);
    if let Some(f) = suite.failures.first() {
        let at = if f.file.is_empty() {
            String::new()
        } else {
            format!(" ({}{})", f.file, f.line.map(|l| format!(":{l}")).unwrap_or_default())
        };
        let msg = f.message.as_deref().map(|m| format!(": {m}")).unwrap_or_default();
        // The runner named no test: say where the error was, not the placeholder.
        let name =
            if f.test_name == testout::OUTSIDE_ANY_TEST { testout::OUTSIDE_ANY_TEST_WORDS } else { &f.test_name };
        text.push_str(&format!("; {name}{at}{msg}"));
    }
    text
}
