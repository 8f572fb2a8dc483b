//! Reports: the session-memory report written or checked, test output read into the session.

use super::*;

/// `report --check FILE`: what cannot be read and what breaks seed 000's rules; exit 1 when
/// anything does.
pub(super) fn check_report(ctx: &Ctx, file: &std::path::Path) -> Result<(), Error> {
    // A report is at most 50 KB by seed 000's rules; far larger is not one.
    let text = input::file_text(file, 16 << 20).map_err(Error::Failed)?;
    let problems = ccmem_proto::model::report::check(&text);
    if ctx.json {
        output::print_json(&json!({"file": file, "valid": problems.is_empty(), "problems": problems}));
    } else if problems.is_empty() {
        println!("{}: valid", file.display());
    } else {
        println!("{}: {} problem{}", file.display(), problems.len(), if problems.len() == 1 { "" } else { "s" });
        for p in &problems {
            println!("  - {p}");
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(Error::Quiet)
    }
}

/// A test runner's output from stdin: its start and its end (where summaries are) when it is
/// too long for one message.
pub(super) fn read_output() -> Result<String, Error> {
    input::head_and_tail(io::stdin().lock(), 128 << 10, 640 << 10)
        .map_err(|e| Error::Failed(format!("cannot read the test output from stdin: {e}")))
}

/// Writes or prints the session-memory report; checks one.
pub(super) fn report(ctx: &Ctx, path: Option<PathBuf>, stdout: bool, check: Option<PathBuf>) -> Result<(), Error> {
    if let Some(file) = check {
        return check_report(ctx, &file);
    }
    let params = api::ReportParams { path: project_path(path)?, write: !stdout };
    let r: api::ReportReply = with_daemon(ctx, |c, _| c.call(method::REPORT, &params))?;
    match (&r.path, stdout) {
        (_, true) => show(ctx, &r, || r.markdown.trim_end().to_string()),
        (Some(p), false) => show(ctx, &r, || format!("wrote {} ({} bytes)", output::path_line(p), r.markdown.len())),
        (None, false) => show(ctx, &r, || r.markdown.trim_end().to_string()),
    }
    Ok(())
}

/// Reads a test runner's output or a JUnit file into the session.
pub(super) fn test_report(
    ctx: &Ctx,
    path: Option<PathBuf>,
    framework: Option<String>,
    junit: Option<PathBuf>,
    command: Option<String>,
    e2e: bool,
) -> Result<(), Error> {
    let output = match &junit {
        Some(_) => None,
        None => Some(read_output()?),
    };
    let junit = junit
        .map(|f| std::path::absolute(&f).map_err(|e| Error::Failed(format!("{}: {e}", f.display()))))
        .transpose()?;
    let params = api::TestReportParams {
        path: project_path(path)?,
        output,
        junit,
        framework,
        command,
        e2e: e2e.then_some(true),
    };
    let r: api::TestReportReply = with_daemon(ctx, |c, _| c.call(method::TEST_REPORT, &params))?;
    show(ctx, &r, || output::test_runs(&r.runs));
    Ok(())
}
