//! A project's environment and test results: seed 000's `EnvironmentState` and
//! `TestResults`, with the seed's field names (camelCase) and limits.
//!
//! The daemon fills them from the port scanner, the project's files and the agent's
//! commands; `ccmemctl test-report` feeds results from elsewhere.

use serde::{Deserialize, Serialize};

/// Seed 000's limits.
pub mod limits {
    /// Servers kept per project.
    pub const SERVERS: usize = 20;
    /// Failures kept per suite.
    pub const FAILURES: usize = 20;
    /// Build errors kept.
    pub const BUILD_ERRORS: usize = 10;
    /// Characters of one build error or failure message.
    pub const MESSAGE_CHARS: usize = 200;
}

/// Dev servers, dependencies and build (seed 000's EnvironmentState).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct EnvironmentState {
    /// Listening servers started from the project, running ones first.
    pub servers: Vec<ServerInfo>,
    /// The project's dependencies, all package managers together.
    pub dependencies: DependencyStatus,
    /// The last build.
    pub build: BuildStatus,
}

/// Running or gone.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ServerStatus {
    /// Listening now.
    #[default]
    Running,
    /// Was listening this session, is not any more.
    Stopped,
}

/// A listening dev server (seed 000's ServerInfo).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ServerInfo {
    /// Process name: node, python3, cargo, …
    pub process: String,
    /// TCP port.
    pub port: u16,
    /// `http://localhost:PORT`.
    pub url: String,
    /// Process id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// Running or stopped.
    pub status: ServerStatus,
    /// Its command line, redacted and shortened.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub command: String,
    /// ISO 8601: first seen listening.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub started_at: String,
    /// ISO 8601: seen gone.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped_at: Option<String>,
}

impl ServerInfo {
    /// The URL seed 000 gives a local server.
    pub fn url_for(port: u16) -> String {
        format!("http://localhost:{port}")
    }
}

/// Installed tree against lockfile.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DependencyState {
    /// Installed after the lockfile last changed.
    UpToDate,
    /// The lockfile is newer than the installed tree, or nothing is installed.
    Outdated,
    /// Cannot tell.
    #[default]
    Unknown,
}

/// The project's dependencies (seed 000's DependencyStatus): the worst state of all its
/// package managers, with each one in `managers`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct DependencyStatus {
    /// The worst of the managers' states.
    pub status: DependencyState,
    /// ISO 8601: the most recent install, if known.
    pub last_install: Option<String>,
    /// The first manager found (npm, yarn, pnpm, bun, cargo, pip, uv, poetry, go), else `unknown`.
    pub package_manager: String,
    /// Packages known to be outdated (not detected offline).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outdated_count: Option<u64>,
    /// Every manager found.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub managers: Vec<ManagerStatus>,
}

impl DependencyStatus {
    /// Whether anything is known: a package manager found, an install, a state. A project
    /// with no manifest or lockfile has nothing to show (its manager reads `unknown`).
    pub fn seen(&self) -> bool {
        !self.managers.is_empty()
            || self.last_install.is_some()
            || self.outdated_count.is_some()
            || self.status != DependencyState::Unknown
            || !matches!(self.package_manager.as_str(), "" | "unknown")
    }
}

/// One package manager's state in the project.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ManagerStatus {
    /// npm, yarn, pnpm, bun, cargo, pip, uv, poetry, go.
    pub package_manager: String,
    /// The lockfile or manifest it was found by, relative to the root.
    pub lockfile: String,
    /// Installed tree against lockfile.
    pub status: DependencyState,
    /// ISO 8601: when the installed tree last changed.
    pub last_install: Option<String>,
    /// Why the status is what it is, for a human.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub detail: String,
}

/// Outcome of a build or a test run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BuildState {
    /// It built.
    Success,
    /// It did not.
    Failed,
    /// No build seen.
    #[default]
    NotRun,
}

/// The last build (seed 000's BuildStatus).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct BuildStatus {
    /// Success, failed or not run.
    pub status: BuildState,
    /// ISO 8601.
    pub last_build: Option<String>,
    /// The build output directory, e.g. `dist/`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_dir: Option<String>,
    /// The first errors (at most 10 of at most 200 characters).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<String>,
    /// The build command, when the result came from one.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub command: String,
}

/// Unit and end-to-end results (seed 000's TestResults).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct TestResults {
    /// ISO 8601 of the last run of either suite; None if never run.
    pub last_run: Option<String>,
    /// Unit (and integration) tests.
    pub unit: TestSuite,
    /// End-to-end tests (Playwright, Cypress, …).
    pub e2e: TestSuite,
}

/// Passed, failed or not run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SuiteStatus {
    /// Every test passed.
    Passed,
    /// At least one failed.
    Failed,
    /// No run seen.
    #[default]
    NotRun,
}

/// One suite's last run (seed 000's TestSuite).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct TestSuite {
    /// Cargo, pytest, Jest, Vitest, Playwright, …
    pub framework: String,
    /// Passed, failed or not run.
    pub status: SuiteStatus,
    /// Tests passed.
    pub passed: u64,
    /// Tests failed (errors included).
    pub failed: u64,
    /// Tests run, skipped ones included.
    pub total: u64,
    /// passed / total × 100, one decimal.
    pub percentage: f64,
    /// The first failures (at most 20).
    pub failures: Vec<TestFailure>,
    /// The command that ran them.
    pub command: String,
    /// Tests skipped or ignored.
    #[serde(skip_serializing_if = "is_zero")]
    pub skipped: u64,
    /// Failures beyond those listed.
    #[serde(skip_serializing_if = "is_zero")]
    pub more_failures: u64,
    /// ISO 8601 of this run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ran_at: Option<String>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A failed test (seed 000's TestFailure).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct TestFailure {
    /// Test file, relative where it can be.
    pub file: String,
    /// Line of the failure, when given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// The test's name.
    pub test_name: String,
    /// First line of the message, at most 200 characters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl TestSuite {
    /// Fills `status`, `total` (if unset) and `percentage` from the counts; bounds failures.
    pub fn settle(&mut self) {
        self.total = self.total.max(self.passed + self.failed);
        // A run that failed before any test (a compile error, a suite that could not load)
        // has a failure listed and no failed test counted.
        // A runner that passed without printing counts (gradle) has its status already set.
        self.status = if self.failed > 0 || !self.failures.is_empty() {
            SuiteStatus::Failed
        } else if self.total == 0 && self.passed == 0 {
            self.status
        } else {
            SuiteStatus::Passed
        };
        let ran = self.total.saturating_sub(self.skipped);
        self.percentage = if ran == 0 { 0.0 } else { (self.passed as f64 * 1000.0 / ran as f64).round() / 10.0 };
        if self.failures.len() > limits::FAILURES {
            self.more_failures += (self.failures.len() - limits::FAILURES) as u64;
            self.failures.truncate(limits::FAILURES);
        }
    }
}

impl TestResults {
    /// The suite of this kind.
    pub fn suite_mut(&mut self, e2e: bool) -> &mut TestSuite {
        if e2e {
            &mut self.e2e
        } else {
            &mut self.unit
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settle_counts_and_rounds() {
        let mut s = TestSuite { passed: 2, failed: 1, ..Default::default() };
        s.settle();
        assert_eq!((s.status, s.total, s.percentage), (SuiteStatus::Failed, 3, 66.7));
        let mut s = TestSuite { passed: 3, skipped: 1, total: 4, ..Default::default() };
        s.settle();
        assert_eq!((s.status, s.percentage), (SuiteStatus::Passed, 100.0));
        let mut s = TestSuite {
            failed: 30,
            failures: vec![TestFailure::default(); 30],
            more_failures: 0,
            ..Default::default()
        };
        s.settle();
        assert_eq!((s.failures.len(), s.more_failures, s.percentage), (20, 10, 0.0));
        let mut s = TestSuite::default();
        s.settle();
        assert_eq!(s.status, SuiteStatus::NotRun);
    }

    #[test]
    fn wire_names_are_the_seeds() {
        let v = serde_json::to_value(TestResults::default()).unwrap();
        assert!(v.get("lastRun").is_some() && v["unit"]["status"] == "not-run");
        let v = serde_json::to_value(EnvironmentState::default()).unwrap();
        assert_eq!(v["dependencies"]["status"], "unknown");
        assert_eq!(v["build"]["status"], "not-run");
        assert!(v["dependencies"].get("lastInstall").is_some());
    }
}
