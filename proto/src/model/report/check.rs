//! The seed's rules on a report: field limits, formats, imperative next steps.

use super::*;

/// Verbs an action may start with (seed 000: "Create", "Fix", "Install", "Run", "Complete"…).
pub const IMPERATIVE_VERBS: &[&str] = &[
    "Add",
    "Address",
    "Adjust",
    "Apply",
    "Ask",
    "Build",
    "Bump",
    "Change",
    "Check",
    "Clean",
    "Clear",
    "Commit",
    "Complete",
    "Configure",
    "Confirm",
    "Connect",
    "Continue",
    "Copy",
    "Create",
    "Debug",
    "Decide",
    "Define",
    "Delete",
    "Deploy",
    "Document",
    "Download",
    "Enable",
    "Ensure",
    "Export",
    "Extract",
    "Finish",
    "Fix",
    "Generate",
    "Implement",
    "Import",
    "Improve",
    "Install",
    "Investigate",
    "Merge",
    "Migrate",
    "Move",
    "Open",
    "Optimize",
    "Plan",
    "Prepare",
    "Push",
    "Read",
    "Rebuild",
    "Refactor",
    "Reinstall",
    "Release",
    "Remove",
    "Rename",
    "Replace",
    "Resolve",
    "Restart",
    "Restore",
    "Resume",
    "Review",
    "Revert",
    "Rewrite",
    "Run",
    "Set",
    "Split",
    "Start",
    "Stop",
    "Test",
    "Update",
    "Upgrade",
    "Use",
    "Validate",
    "Verify",
    "Write",
];

/// Whether `s` starts with one of [`IMPERATIVE_VERBS`].
pub fn is_imperative(s: &str) -> bool {
    let first = s.split(|c: char| !c.is_alphabetic()).next().unwrap_or("");
    IMPERATIVE_VERBS.iter().any(|v| v.eq_ignore_ascii_case(first))
}

fn is_iso(s: &str) -> bool {
    chrono::DateTime::parse_from_rfc3339(s).is_ok()
}

/// One line for every reader: no line break of any kind (U+2028 and NEL included, which
/// renderers and models break lines at), no surrounding space.
fn single_line(s: &str) -> bool {
    !s.chars().any(crate::printable::is_line_break) && s.trim() == s
}

/// Seed 000's validation rules, and those that make the markdown form read back exactly:
/// each broken rule, naming the field.
pub fn validate(m: &SessionMemory) -> Vec<String> {
    let mut e: Vec<String> = Vec::new();
    let md = &m.metadata;
    if !is_iso(&md.generated_at) {
        e.push(format!("metadata.generatedAt must be ISO 8601, got {:?}", md.generated_at));
    }
    if md.branch.is_empty() {
        e.push("metadata.branch must be the git branch or \"unknown\"".into());
    }
    let semver = md.version.split('.').count() >= 2
        && md.version.split('.').all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    if !semver {
        e.push(format!("metadata.version must be a version such as 1.0, got {:?}", md.version));
    }
    let s = &m.summary;
    let mut texts: Vec<(String, &str)> = vec![
        ("metadata.projectName".into(), &md.project_name),
        ("metadata.branch".into(), &md.branch),
        ("summary.projectDescription".into(), &s.project_description),
        ("summary.completionStatus".into(), &s.completion_status),
        ("summary.currentPhase".into(), &s.current_phase),
        ("summary.nextAction".into(), &s.next_action),
        ("taskStatus.sourceFile".into(), &m.task_status.source_file),
    ];
    if let Some(b) = &s.major_blocker {
        texts.push(("summary.majorBlocker".into(), b));
    }
    if let Some(d) = &md.session_duration {
        texts.push(("metadata.sessionDuration".into(), d));
    }
    for (i, l) in md.left_out.iter().enumerate() {
        if l.is_empty() || l.contains(LEFT_OUT_SEPARATOR) {
            e.push(format!("metadata.leftOut[{i}] must be one item, got {l:?}"));
        }
        texts.push((format!("metadata.leftOut[{i}]"), l));
    }
    for (i, l) in m.work.iter().enumerate() {
        if l.trim().is_empty()
            || l.trim_end() != l
            || l.chars().any(|c| c.is_control() || crate::printable::is_line_break(c))
        {
            e.push(format!("work[{i}] must be one non-empty line without trailing space, got {l:?}"));
        }
    }
    let cs = &s.completion_status;
    if !(cs.contains('/') && cs.contains('%')) {
        e.push(format!("summary.completionStatus must give a fraction and a percentage, got {cs:?}"));
    }
    for (i, p) in m.task_status.phases.iter().enumerate() {
        texts.push((format!("taskStatus.phases[{i}].name"), &p.name));
        check_pct(&mut e, &format!("taskStatus.phases[{i}].percentage"), p.percentage);
        if p.completed > p.total {
            e.push(format!("taskStatus.phases[{i}]: completed {} exceeds total {}", p.completed, p.total));
        }
    }
    if m.task_status.next_tasks.len() > limits::NEXT_TASKS {
        e.push(format!(
            "taskStatus.nextTasks holds {} tasks (at most {})",
            m.task_status.next_tasks.len(),
            limits::NEXT_TASKS
        ));
    }
    for (i, r) in m.task_status.current_task.iter().chain(&m.task_status.next_tasks).enumerate() {
        texts.push((format!("task[{i}].id"), &r.id));
        texts.push((format!("task[{i}].title"), &r.title));
        texts.push((format!("task[{i}].phase"), &r.phase));
    }
    if m.blockers.len() > limits::BLOCKERS {
        e.push(format!("blockers holds {} entries (at most {})", m.blockers.len(), limits::BLOCKERS));
    }
    if m.blockers.windows(2).any(|p| p[0].priority > p[1].priority) {
        e.push("blockers must be listed high priority first".into());
    }
    for (i, b) in m.blockers.iter().enumerate() {
        if b.title.chars().count() > limits::TITLE_CHARS {
            e.push(format!("blockers[{i}].title is longer than {} characters", limits::TITLE_CHARS));
        }
        if !is_imperative(&b.required_action) {
            e.push(format!(
                "blockers[{i}].requiredAction must start with an imperative verb, got {:?}",
                b.required_action
            ));
        }
        if b.task_id.as_deref() == Some("") {
            e.push(format!("blockers[{i}].taskId is empty (use null)"));
        }
        check_time(&mut e, &format!("blockers[{i}].detectedAt"), b.detected_at.as_deref());
        texts.push((format!("blockers[{i}].title"), &b.title));
        texts.push((format!("blockers[{i}].description"), &b.description));
        texts.push((format!("blockers[{i}].requiredAction"), &b.required_action));
    }
    let tr = &m.test_results;
    check_time(&mut e, "testResults.lastRun", tr.last_run.as_deref());
    for (name, suite) in [("unit", &tr.unit), ("e2e", &tr.e2e)] {
        check_pct(&mut e, &format!("testResults.{name}.percentage"), suite.percentage);
        check_time(&mut e, &format!("testResults.{name}.ranAt"), suite.ran_at.as_deref());
        if suite.failures.len() > crate::model::environment::limits::FAILURES {
            e.push(format!("testResults.{name}.failures holds {} (at most 20)", suite.failures.len()));
        }
        texts.push((format!("testResults.{name}.framework"), &suite.framework));
        texts.push((format!("testResults.{name}.command"), &suite.command));
        for (i, f) in suite.failures.iter().enumerate() {
            texts.push((format!("testResults.{name}.failures[{i}].file"), &f.file));
            texts.push((format!("testResults.{name}.failures[{i}].testName"), &f.test_name));
            if let Some(msg) = &f.message {
                if msg.chars().count() > crate::model::environment::limits::MESSAGE_CHARS || msg.is_empty() {
                    e.push(format!("testResults.{name}.failures[{i}].message must be 1 to 200 characters"));
                }
                texts.push((format!("testResults.{name}.failures[{i}].message"), msg));
            }
        }
    }
    let env = &m.environment;
    if env.servers.len() > crate::model::environment::limits::SERVERS {
        e.push(format!("environment.servers holds {} (at most 20)", env.servers.len()));
    }
    for (i, v) in env.servers.iter().enumerate() {
        if v.url.contains('@') {
            e.push(format!("environment.servers[{i}].url must not hold credentials"));
        }
        if !v.started_at.is_empty() {
            check_time(&mut e, &format!("environment.servers[{i}].startedAt"), Some(&v.started_at));
        }
        check_time(&mut e, &format!("environment.servers[{i}].stoppedAt"), v.stopped_at.as_deref());
        texts.push((format!("environment.servers[{i}].process"), &v.process));
        texts.push((format!("environment.servers[{i}].url"), &v.url));
        texts.push((format!("environment.servers[{i}].command"), &v.command));
    }
    check_time(&mut e, "environment.dependencies.lastInstall", env.dependencies.last_install.as_deref());
    texts.push(("environment.dependencies.packageManager".into(), &env.dependencies.package_manager));
    for (i, x) in env.dependencies.managers.iter().enumerate() {
        check_time(&mut e, &format!("environment.dependencies.managers[{i}].lastInstall"), x.last_install.as_deref());
        texts.push((format!("environment.dependencies.managers[{i}].packageManager"), &x.package_manager));
        texts.push((format!("environment.dependencies.managers[{i}].lockfile"), &x.lockfile));
        texts.push((format!("environment.dependencies.managers[{i}].detail"), &x.detail));
    }
    let b = &env.build;
    check_time(&mut e, "environment.build.lastBuild", b.last_build.as_deref());
    if b.errors.len() > crate::model::environment::limits::BUILD_ERRORS {
        e.push(format!("environment.build.errors holds {} (at most 10)", b.errors.len()));
    }
    for (i, x) in b.errors.iter().enumerate() {
        if x.chars().count() > crate::model::environment::limits::MESSAGE_CHARS {
            e.push(format!("environment.build.errors[{i}] is longer than 200 characters"));
        }
        texts.push((format!("environment.build.errors[{i}]"), x));
    }
    texts.push(("environment.build.command".into(), &b.command));
    if let Some(d) = &b.output_dir {
        texts.push(("environment.build.outputDir".into(), d));
    }
    if m.files_needing_attention.len() > limits::FILES {
        e.push(format!("filesNeedingAttention holds {} (at most {})", m.files_needing_attention.len(), limits::FILES));
    }
    for (i, f) in m.files_needing_attention.iter().enumerate() {
        if f.path.is_empty() || f.path.starts_with('/') || f.path.contains('\\') || f.path.split('/').any(|p| p == "..")
        {
            e.push(format!("filesNeedingAttention[{i}].path must be relative with forward slashes, got {:?}", f.path));
        }
        if f.reason.is_empty() {
            e.push(format!("filesNeedingAttention[{i}].reason is empty"));
        }
        texts.push((format!("filesNeedingAttention[{i}].path"), &f.path));
        texts.push((format!("filesNeedingAttention[{i}].reason"), &f.reason));
    }
    if m.next_steps.len() > limits::NEXT_STEPS {
        e.push(format!("nextSteps holds {} (at most {})", m.next_steps.len(), limits::NEXT_STEPS));
    }
    if m.next_steps.windows(2).any(|p| p[0].priority > p[1].priority) {
        e.push("nextSteps must be listed most urgent first".into());
    }
    for (i, s) in m.next_steps.iter().enumerate() {
        if !is_imperative(&s.action) {
            e.push(format!("nextSteps[{i}].action must start with an imperative verb, got {:?}", s.action));
        }
        texts.push((format!("nextSteps[{i}].action"), &s.action));
        if let Some(r) = &s.reference {
            texts.push((format!("nextSteps[{i}].reference"), r));
        }
    }
    for (field, t) in texts {
        if !single_line(t) {
            e.push(format!("{field} must be one line without surrounding spaces"));
        }
    }
    let md_text = serialize(m);
    if md_text.len() > MAX_BYTES {
        e.push(format!("the report is {} bytes (at most {MAX_BYTES})", md_text.len()));
    }
    if crate::redact::finds(&md_text) {
        e.push("sensitive data detected in the report".into());
    }
    e
}

fn check_pct(e: &mut Vec<String>, field: &str, p: f64) {
    if !(0.0..=100.0).contains(&p) || ((p * 10.0).round() - p * 10.0).abs() > 1e-6 {
        e.push(format!("{field} must be 0.0 to 100.0 with one decimal, got {p}"));
    }
}

fn check_time(e: &mut Vec<String>, field: &str, t: Option<&str>) {
    if let Some(t) = t {
        if !is_iso(t) {
            e.push(format!("{field} must be ISO 8601, got {t:?}"));
        }
    }
}

/// Checks a report file's text: what could not be read, then what breaks the rules.
pub fn check(text: &str) -> Vec<String> {
    let p = parse(text);
    let mut problems = p.warnings;
    problems.extend(validate(&p.memory));
    problems
}
