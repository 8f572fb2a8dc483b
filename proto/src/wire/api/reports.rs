//! Reports on demand: test and build output read by the daemon's parsers, the session-memory
//! report written now.

use super::*;

/// Params of `session.test_report`: the output a test runner printed, or a JUnit XML file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TestReportParams {
    /// A directory or file inside the project (absolute).
    pub path: PathBuf,
    /// What the runner printed (its summary is read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    /// A JUnit XML report (absolute path; the daemon reads it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub junit: Option<PathBuf>,
    /// The runner (cargo, pytest, jest, …); default: recognised from the output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub framework: Option<String>,
    /// The command that ran the tests, for the record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// End-to-end tests (default: by the runner, Playwright and Cypress being end-to-end).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub e2e: Option<bool>,
}

/// One suite's results as recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestRun {
    /// End-to-end rather than unit.
    pub e2e: bool,
    /// The suite.
    pub suite: crate::model::environment::TestSuite,
}

/// Result of `session.test_report`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TestReportReply {
    /// The suites found and recorded.
    pub runs: Vec<TestRun>,
}

/// Params of `session.report`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReportParams {
    /// A directory or file inside the project (absolute).
    pub path: PathBuf,
    /// Write `.claude/session-memory.md` too (default); false only returns it.
    #[serde(default = "yes")]
    pub write: bool,
}

fn yes() -> bool {
    true
}

/// Result of `session.report`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReportReply {
    /// The report, markdown.
    pub markdown: String,
    /// The file written, when asked to write.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<PathBuf>,
}
