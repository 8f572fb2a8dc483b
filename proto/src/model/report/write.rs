//! The report written: [`SessionMemory`] to markdown, sections in the seed's order.

use super::table::*;
use super::*;
use std::fmt::Write;

/// The markdown form of `m` (seed 000's template).
pub fn serialize(m: &SessionMemory) -> String {
    let mut o = String::new();
    let md = &m.metadata;
    // The project's and the branch's names are the repository's choice: code spans.
    let _ = writeln!(o, "# Session Memory: {}\n", code_name(&md.project_name));
    let _ = writeln!(o, "**Generated**: {}", esc(&md.generated_at));
    let _ = writeln!(o, "**Branch**: {}", code_name(&md.branch));
    if let Some(d) = &md.session_duration {
        let _ = writeln!(o, "**Session Duration**: {}", esc(d));
    }
    let _ = writeln!(o, "**Format Version**: {}", esc(&md.version));
    if !md.left_out.is_empty() {
        let _ = writeln!(o, "**Left Out**: {}", esc(&md.left_out.join(LEFT_OUT_SEPARATOR)));
    }
    o.push('\n');

    let s = &m.summary;
    let _ = writeln!(o, "## Executive Summary\n");
    let _ = writeln!(o, "1. {}", esc(&s.project_description));
    let _ = writeln!(o, "2. {}", esc(&s.completion_status));
    let _ = writeln!(o, "3. Current phase: {}", esc(&s.current_phase));
    match &s.major_blocker {
        Some(b) => {
            let _ = writeln!(o, "4. Major blocker: {}", esc(b));
        }
        None => o.push_str("4. No critical blockers\n"),
    }
    let _ = writeln!(o, "5. Next action: {}\n", esc(&s.next_action));

    if !m.work.is_empty() {
        let _ = writeln!(o, "## {WORK}\n");
        for l in &m.work {
            // Only what would end the section or read as something else needs a mark.
            let marked = l.starts_with('#') || l.starts_with('\\') || l.trim_end() == "---";
            if l.starts_with("### ") {
                let _ = writeln!(o, "\n{l}\n");
            } else if marked {
                let _ = writeln!(o, "\\{l}");
            } else {
                let _ = writeln!(o, "{l}");
            }
        }
        o.push('\n');
    }

    let t = &m.task_status;
    let _ = writeln!(o, "## Task Status\n");
    if t.source_file.is_empty() {
        o.push_str("**Source**: none\n\n");
    } else if t.source_file == AGENT_TODOS {
        let _ = writeln!(o, "**Source**: {AGENT_TODOS}\n");
    } else {
        let _ = writeln!(o, "**Source**: `{}`\n", esc(&t.source_file));
    }
    if t.phases.is_empty() {
        o.push_str("No phases.\n\n");
    } else {
        let rows = t
            .phases
            .iter()
            .map(|p| {
                // A phase's name and a task's title are the task list's text: quoted.
                vec![quote(&p.name), p.completed.to_string(), p.total.to_string(), format!("{:.1}%", p.percentage)]
            })
            .collect();
        write_table(&mut o, &["Phase", "Completed", "Total", "Progress"], rows);
        o.push('\n');
    }
    let task_rows =
        |ts: &[TaskReference]| ts.iter().map(|r| vec![esc(&r.id), quote(&r.title), quote(&r.phase)]).collect();
    match &t.current_task {
        None => o.push_str("**Current Task**: none\n\n"),
        Some(r) => {
            o.push_str("**Current Task**:\n\n");
            write_table(&mut o, &["ID", "Task", "Phase"], task_rows(std::slice::from_ref(r)));
            o.push('\n');
        }
    }
    if t.next_tasks.is_empty() {
        o.push_str("**Next Tasks**: none\n\n");
    } else {
        o.push_str("**Next Tasks**:\n\n");
        write_table(&mut o, &["ID", "Task", "Phase"], task_rows(&t.next_tasks));
        o.push('\n');
    }

    let _ = writeln!(o, "## Blockers\n");
    if m.blockers.is_empty() {
        o.push_str("No blockers.\n\n");
    }
    for p in [Priority::High, Priority::Medium, Priority::Low] {
        let rows: Vec<Vec<String>> = m
            .blockers
            .iter()
            .filter(|b| b.priority == p)
            .map(|b| {
                vec![
                    esc(&opt(&b.task_id)),
                    esc(&b.title),
                    esc(&b.description),
                    esc(&b.required_action),
                    esc(&opt(&b.detected_at)),
                ]
            })
            .collect();
        if !rows.is_empty() {
            let name = priority_name(p);
            let _ = writeln!(o, "### {}{} Priority\n", name[..1].to_uppercase(), &name[1..]);
            write_table(&mut o, &["Task", "Title", "Description", "Required Action", "Detected"], rows);
            o.push('\n');
        }
    }

    let tr = &m.test_results;
    let _ = writeln!(o, "## Test Results\n");
    if *tr == TestResults::default() {
        let _ = writeln!(o, "{NO_TESTS}\n");
    } else {
        let _ = writeln!(o, "**Last Run**: {}\n", tr.last_run.as_deref().map(esc).unwrap_or_else(|| "never".into()));
        for (title, suite) in [("Unit Tests", &tr.unit), ("E2E Tests", &tr.e2e)] {
            let _ = writeln!(o, "### {title}\n");
            if *suite == TestSuite::default() {
                let _ = writeln!(o, "Not run.\n");
            } else {
                write_suite(&mut o, suite);
            }
        }
    }

    let e = &m.environment;
    let _ = writeln!(o, "## Environment State\n");
    let _ = writeln!(o, "### Servers\n");
    if e.servers.is_empty() {
        o.push_str("No servers.\n\n");
    } else {
        let rows = e
            .servers
            .iter()
            .map(|v| {
                // A process's name and command line are whatever the project's scripts chose.
                vec![
                    quote(&v.process),
                    v.port.to_string(),
                    esc(&v.url),
                    opt_num(v.pid),
                    match v.status {
                        ServerStatus::Running => "running".into(),
                        ServerStatus::Stopped => "stopped".into(),
                    },
                    quote(&v.command),
                    esc(&v.started_at),
                    esc(&opt(&v.stopped_at)),
                ]
            })
            .collect();
        write_table(&mut o, &["Process", "Port", "URL", "PID", "Status", "Command", "Started", "Stopped"], rows);
        o.push('\n');
    }
    let d = &e.dependencies;
    if d.seen() {
        let _ = writeln!(o, "### Dependencies\n");
        let _ = writeln!(o, "- Status: {}", dep_state(d.status));
        let _ = writeln!(o, "- Package Manager: {}", esc(&d.package_manager));
        let _ = writeln!(o, "- Last Install: {}", d.last_install.as_deref().map(esc).unwrap_or_else(|| "never".into()));
        if let Some(n) = d.outdated_count {
            let _ = writeln!(o, "- Outdated Packages: {n}");
        }
        o.push('\n');
        if !d.managers.is_empty() {
            let rows = d
                .managers
                .iter()
                .map(|x| {
                    vec![
                        esc(&x.package_manager),
                        esc(&x.lockfile),
                        dep_state(x.status).into(),
                        esc(&opt(&x.last_install)),
                        esc(&x.detail),
                    ]
                })
                .collect();
            write_table(&mut o, &["Manager", "Lockfile", "Status", "Last Install", "Detail"], rows);
            o.push('\n');
        }
    }
    let b = &e.build;
    if *b != BuildStatus::default() {
        let _ = writeln!(o, "### Build\n");
        let _ = writeln!(o, "- Status: {}", build_state(b.status));
        let _ = writeln!(o, "- Last Build: {}", b.last_build.as_deref().map(esc).unwrap_or_else(|| "never".into()));
        if let Some(dir) = &b.output_dir {
            let _ = writeln!(o, "- Output Directory: {}", esc(dir));
        }
        if !b.command.is_empty() {
            let _ = writeln!(o, "- Command: {}", esc(&b.command));
        }
        o.push('\n');
        if !b.errors.is_empty() {
            // The build's own output: quoted.
            write_table(&mut o, &["Error"], b.errors.iter().map(|x| vec![quote(x)]).collect());
            o.push('\n');
        }
    }

    let _ = writeln!(o, "## Files Needing Attention\n");
    if m.files_needing_attention.is_empty() {
        o.push_str("None.\n\n");
    } else {
        for (i, f) in m.files_needing_attention.iter().enumerate() {
            let line = f.line.map(|l| format!(":{l}")).unwrap_or_default();
            let _ =
                writeln!(o, "{}. [{}] `{}`{line} — {}", i + 1, priority_name(f.priority), esc(&f.path), esc(&f.reason));
        }
        o.push('\n');
    }

    let _ = writeln!(o, "## Next Steps\n");
    if m.next_steps.is_empty() {
        o.push_str("None.\n\n");
    }
    for p in [StepPriority::Immediate, StepPriority::ShortTerm, StepPriority::MediumTerm, StepPriority::LongTerm] {
        let steps: Vec<&NextStep> = m.next_steps.iter().filter(|s| s.priority == p).collect();
        if steps.is_empty() {
            continue;
        }
        let _ = writeln!(o, "### {}\n", step_name(p));
        for (i, s) in steps.iter().enumerate() {
            let reference = s.reference.as_deref().map(|r| format!(" → `{}`", esc(r))).unwrap_or_default();
            let _ = writeln!(o, "{}. {}{reference}", i + 1, esc(&s.action));
        }
        o.push('\n');
    }
    o.push_str("---\n\n");
    let _ = writeln!(o, "*Generated by ccmem session memory v{}*", esc(&md.version));
    o
}

fn write_suite(o: &mut String, s: &TestSuite) {
    let _ = writeln!(o, "- Framework: {}", esc(&s.framework));
    let _ = writeln!(o, "- Status: {}", suite_status(s.status));
    let _ = writeln!(o, "- Passed: {}", s.passed);
    let _ = writeln!(o, "- Failed: {}", s.failed);
    let _ = writeln!(o, "- Skipped: {}", s.skipped);
    let _ = writeln!(o, "- Total: {}", s.total);
    let _ = writeln!(o, "- Pass Rate: {:.1}%", s.percentage);
    if !s.command.is_empty() {
        let _ = writeln!(o, "- Command: {}", esc(&s.command));
    }
    if let Some(t) = &s.ran_at {
        let _ = writeln!(o, "- Ran At: {}", esc(t));
    }
    if s.more_failures > 0 {
        let _ = writeln!(o, "- More Failures: {}", s.more_failures);
    }
    o.push('\n');
    if !s.failures.is_empty() {
        let rows = s
            .failures
            .iter()
            // The test run's output: a test's name and message are quoted.
            .map(|f| vec![esc(&f.file), opt_num(f.line), quote(&f.test_name), quote(&opt(&f.message))])
            .collect();
        write_table(o, &["File", "Line", "Test", "Message"], rows);
        o.push('\n');
        if s.more_failures > 0 {
            let _ = writeln!(o, "... and {} more failures\n", s.more_failures);
        }
    }
}
