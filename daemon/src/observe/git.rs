//! Repository state from the `git` command line, never taking git's optional locks (a
//! background `git status` must not make the user's own git commands fail on index.lock).
//!
//! Outside a repository, or without git installed, everything reads "unknown" and zero.

use ccmem_proto::model::session::{ActivitySummary, GitState};
use std::path::Path;
use std::process::{Command, Stdio};

/// The empty tree: the base for counting lines in a repository that had no commit yet.
const EMPTY_TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

/// Settings a repository's own `.git/config` could use to make our `git status` or
/// `git diff` run a program: a cloned or downloaded repository is untrusted.
const NEUTRAL: &[&str] = &[
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.untrackedCache=false",
    "-c",
    "core.pager=cat",
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "diff.external=",
    "-c",
    "status.submoduleSummary=false",
    "-c",
    "log.showSignature=false",
    "-c",
    "diff.ignoreSubmodules=all",
    "-c",
    "submodule.recurse=false",
];

/// `git -C root`, in an environment where git never reaches out: a repository set up as a
/// partial clone with an object missing would otherwise fetch it, running the
/// repository's `remote.*.uploadpack` or `core.sshCommand` (`GIT_NO_LAZY_FETCH`, git
/// 2.44+; and no transport at all, for older gits), and never prompts.
fn command(root: &Path) -> Command {
    let mut cmd = Command::new("git");
    cmd.env("GIT_NO_LAZY_FETCH", "1")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_PROTOCOL_FROM_USER", "0")
        .args(["-c", "protocol.allow=never"])
        .arg("-C")
        .arg(root);
    cmd
}

/// `-c filter.NAME.clean= …` for every filter driver the repository's own config defines:
/// with a matching `.gitattributes`, `git diff` and even `git status` would run them. An empty
/// command turns a driver off. Reading the config runs nothing.
/// None when a driver cannot be overridden on the command line (its name holds `=`): git
/// then does not run for that repository at all.
fn filter_overrides(root: &Path) -> Option<Vec<String>> {
    // Every scope is listed and the repository's own kept (`local`, and `worktree`, which
    // `.git/config.worktree` adds under `extensions.worktreeConfig`): the user's global
    // drivers (git-lfs) are theirs, and turning those off would make files look modified.
    let args = [
        "config",
        "--show-scope",
        "--includes",
        "--name-only",
        "--get-regexp",
        r"^(filter\..*\.(clean|smudge|process)|core\.worktree)$",
    ];
    let mut cmd = command(root);
    cmd.args(args);
    let Some(out) = bounded(cmd, root, &args, PROBE_TIMEOUT) else {
        // Not read in time: git would hang the same way on what comes next.
        return if benched(root) { None } else { Some(Vec::new()) };
    };
    let listed = String::from_utf8_lossy(&out);
    let own = || {
        listed.lines().filter_map(|l| l.split_once('\t')).filter(|(scope, _)| matches!(*scope, "local" | "worktree"))
    };
    // A repository whose `core.worktree` names another directory would have git describe
    // that directory, not the project.
    if own().any(|(_, k)| k.eq_ignore_ascii_case("core.worktree")) && !describes(root) {
        tracing::warn!(project = %root.display(), "the repository's core.worktree is another directory: git is not run for this project");
        return None;
    }
    let mut drivers: Vec<String> = own()
        .filter(|(_, k)| !k.eq_ignore_ascii_case("core.worktree"))
        .filter_map(|(_, k)| {
            k.strip_prefix("filter.").and_then(|k| k.rsplit_once('.')).map(|(name, _)| name.to_string())
        })
        .collect();
    drivers.sort();
    drivers.dedup();
    if drivers.iter().any(|d| d.contains('=')) {
        tracing::warn!(project = %root.display(), "a git filter driver name holds '=': git is not run for this repository");
        return None;
    }
    let overrides = drivers
        .iter()
        .flat_map(|d| ["clean", "smudge", "process"].map(|k| ["-c".to_string(), format!("filter.{d}.{k}=")]))
        .flatten()
        .collect();
    Some(overrides)
}

/// Whether git's work tree for `root` holds `root` (it is the top level or a directory under
/// it), as it does unless `core.worktree` points elsewhere.
fn describes(root: &Path) -> bool {
    let args = ["rev-parse", "--show-toplevel"];
    let mut cmd = command(root);
    cmd.args(args);
    let Some(out) = bounded(cmd, root, &args, PROBE_TIMEOUT) else {
        return false;
    };
    let top = std::path::PathBuf::from(text(&out));
    let real = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    !top.as_os_str().is_empty() && real(root).starts_with(real(&top))
}

/// Longest a git command may take: a FIFO where git reads its config or exclude file would
/// otherwise hold a job, and the daemon's shutdown, for ever.
const GIT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// Longest a git command that reads only the repository's own small files may take (its
/// config, HEAD: what a FIFO or `/dev/zero` planted there holds up): milliseconds in any
/// repository, so a project's first SessionStart, which runs them, is not held past the
/// hook's own time by a repository that makes git hang.
const PROBE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(1);

/// How long git is not run again for a repository where it did not end in time: what held
/// it (a FIFO or `/dev/zero` its config includes, a hung file system) holds every call, and
/// each would cost the project [`GIT_TIMEOUT`].
const GIT_BENCHED: std::time::Duration = std::time::Duration::from_secs(600);

/// Repositories git is not run for, until when.
static BENCHED: std::sync::Mutex<Option<std::collections::HashMap<std::path::PathBuf, std::time::Instant>>> =
    std::sync::Mutex::new(None);

/// Whether git is not run for `root` now, after it did not end in time there.
pub fn benched(root: &Path) -> bool {
    let mut guard = BENCHED.lock().unwrap_or_else(|p| p.into_inner());
    let map = guard.get_or_insert_with(Default::default);
    let now = std::time::Instant::now();
    map.retain(|_, until| *until > now);
    map.contains_key(root)
}

/// What `status` says of a project where git is not run for now.
pub fn benched_warning() -> String {
    format!(
        "git did not finish in time in this project (a FIFO or a huge file where git reads, a hung file system?): \
         its branch, changes and commits are not read for {} minutes; the log names the command",
        GIT_BENCHED.as_secs() / 60
    )
}

fn bench(root: &Path) {
    let mut guard = BENCHED.lock().unwrap_or_else(|p| p.into_inner());
    guard.get_or_insert_with(Default::default).insert(root.to_path_buf(), std::time::Instant::now() + GIT_BENCHED);
}

fn git(root: &Path, args: &[&str]) -> Option<Vec<u8>> {
    git_within(root, args, GIT_TIMEOUT)
}

/// [`git`] with `timeout`.
fn git_within(root: &Path, args: &[&str], timeout: std::time::Duration) -> Option<Vec<u8>> {
    if benched(root) {
        return None;
    }
    let mut cmd = command(root);
    cmd.arg("--no-optional-locks").args(["-c", "core.quotepath=off"]).args(NEUTRAL);
    // Read for every call, just before it: a driver added to the repository's config after
    // an older read would run (round six's tester added one between two refreshes, and a
    // list kept 2 s let it through).
    let overrides = filter_overrides(root)?;
    cmd.args(overrides).args(args);
    bounded(cmd, root, args, timeout)
}

/// Whether git tracks `path` (in the repository at `root`): None outside git, without git,
/// or when it does not answer within a second. A file ccmem would remove as its own
/// leftover is kept when the repository tracks it (a committed look-alike).
pub fn tracked(root: &Path, path: &Path) -> Option<bool> {
    let rel = path.strip_prefix(root).unwrap_or(path);
    let out = git_within(root, &["ls-files", "-z", "--", &rel.to_string_lossy()], PROBE_TIMEOUT)?;
    Some(!out.is_empty())
}

/// `git rev-parse --git-path WHAT`: where the repository keeps WHAT (the shared directory
/// for worktrees); None outside git or without git.
pub fn git_path(root: &Path, what: &str) -> Option<String> {
    git(root, &["rev-parse", "--git-path", what]).map(|o| text(&o)).filter(|p| !p.is_empty())
}

/// Runs a git command with its output read, for `timeout` at most.
fn bounded(mut cmd: Command, root: &Path, args: &[&str], timeout: std::time::Duration) -> Option<Vec<u8>> {
    let mut child = cmd
        .env("GIT_PAGER", "cat")
        .env("GIT_EXTERNAL_DIFF", "")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("LC_ALL", "C")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let mut stdout = child.stdout.take()?;
    let reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = std::io::Read::read_to_end(&mut stdout, &mut buf);
        buf
    });
    let deadline = std::time::Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(st)) => break Some(st),
            Ok(None) if std::time::Instant::now() < deadline => std::thread::sleep(std::time::Duration::from_millis(5)),
            _ => {
                tracing::warn!(
                    project = %root.display(),
                    ?args,
                    "git took too long; stopped, and not run for this project for {} min",
                    GIT_BENCHED.as_secs() / 60
                );
                bench(root);
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
        }
    };
    let out = reader.join().ok()?;
    status.filter(|s| s.success()).map(|_| out)
}

/// Whether the repository tracks `path` (relative to `root`): a file ccmem would write
/// there that is committed is the repository's, not ccmem's.
pub fn tracks(root: &Path, path: &str) -> bool {
    git(root, &["ls-files", "-z", "--", path]).is_some_and(|o| !o.is_empty())
}

/// The commit that last changed line `line` of `rel` (relative to `root`), or the file
/// when no line is given: its hash, subject and time (milliseconds since the epoch). None
/// outside git, for a line not committed yet, or when git does not answer in time.
pub fn last_change(root: &Path, rel: &str, line: Option<u32>) -> Option<(String, String, i64)> {
    match line {
        Some(n) => {
            let range = format!("{n},{n}");
            // `--no-textconv`: a repository's `diff.<driver>.textconv` is a program blame
            // would run; HEAD, not the work tree: no filter driver reads the file either.
            let out = git(
                root,
                &["blame", "--porcelain", "--no-textconv", "--no-ignore-revs-file", "-L", &range, "HEAD", "--", rel],
            )?;
            let out = text(&out);
            let hash = out.split_whitespace().next()?.to_string();
            if hash.bytes().all(|b| b == b'0') {
                return None;
            }
            let field = |name: &str| out.lines().find_map(|l| l.strip_prefix(name)).map(str::to_string);
            let at = field("committer-time ")?.trim().parse::<i64>().ok()?;
            Some((hash, crate::text::clean(&field("summary ").unwrap_or_default()), at * 1000))
        }
        None => {
            let out = git(root, &["log", "-1", "--no-textconv", "--format=%H%x1f%ct%x1f%s", "--", rel])?;
            let out = text(&out);
            let mut parts = out.splitn(3, '\u{1f}');
            let hash = parts.next()?.to_string();
            let at = parts.next()?.trim().parse::<i64>().ok()?;
            Some((hash, crate::text::clean(parts.next().unwrap_or_default()), at * 1000))
        }
    }
}

/// HEAD's full hash; `Some("")` in a repository without commits; None outside git.
pub fn head(root: &Path) -> Option<String> {
    git_within(root, &["rev-parse", "--is-inside-work-tree"], PROBE_TIMEOUT)?;
    Some(
        git_within(root, &["rev-parse", "--verify", "-q", "HEAD"], PROBE_TIMEOUT).map(|o| text(&o)).unwrap_or_default(),
    )
}

/// Branch and last commit only, from what git reads of the repository's own files (HEAD,
/// refs, objects), not the work tree: in milliseconds whatever the checkout holds. The
/// change counts are [`state`]'s.
pub fn head_state(root: &Path) -> GitState {
    if benched(root) {
        return GitState::default();
    }
    let branch = match git_within(root, &["symbolic-ref", "--short", "-q", "HEAD"], PROBE_TIMEOUT) {
        Some(out) => crate::text::clean(&text(&out)),
        None => "HEAD (detached)".into(),
    };
    let last_commit = git_within(root, &["log", "-1", "--format=%h %s"], PROBE_TIMEOUT)
        .map(|o| crate::text::clean(&text(&o)))
        .unwrap_or_default();
    GitState { branch, last_commit, ..GitState::default() }
}

/// Branch, change counts and last commit.
pub fn state(root: &Path) -> GitState {
    let Some(out) = git(
        root,
        &["status", "--porcelain=v2", "--branch", "-z", "--untracked-files=normal", "--ignore-submodules=all"],
    ) else {
        return GitState::default();
    };
    let mut st = parse_status(&out);
    // A commit subject can hold anything: it goes through the filter like all text kept.
    st.last_commit =
        git(root, &["log", "-1", "--format=%h %s"]).map(|o| crate::text::clean(&text(&o))).unwrap_or_default();
    st
}

/// Files created this session counted into the lines added while git does not track them
/// yet, and the bytes read of each: a session's new files are its work as much as its
/// edits, and `git diff` does not see them until they are added.
const UNTRACKED_FILES: usize = 200;
const UNTRACKED_BYTES: u64 = 1 << 20;

/// Lines added and deleted (working tree against `start`, plus the untracked files among
/// `created`, this session's new files) and commits since `start`.
pub fn since(root: &Path, start: &str, created: &[&str], summary: &mut ActivitySummary) {
    let base = if start.is_empty() { EMPTY_TREE } else { start };
    // `--ignore-submodules=all` on the command line: `diff.ignoreSubmodules` alone yields to a
    // committed `.gitmodules` (`submodule.NAME.ignore = none`), and git would then run `git
    // status` inside the submodule, under the submodule's own config and filter drivers.
    if let Some(out) =
        git(root, &["diff", "--no-ext-diff", "--no-textconv", "--ignore-submodules=all", "--numstat", base])
    {
        let (a, d) = parse_numstat(&text(&out));
        summary.lines_added = a + untracked_lines(root, created);
        summary.lines_deleted = d;
    }
    let range = if start.is_empty() { "HEAD".to_string() } else { format!("{start}..HEAD") };
    if let Some(out) = git(root, &["rev-list", "--count", &range]) {
        summary.commits = text(&out).parse().unwrap_or(0);
    }
}

/// Lines of the files in `created` that git does not track (and does not ignore).
fn untracked_lines(root: &Path, created: &[&str]) -> u64 {
    if created.is_empty() {
        return 0;
    }
    // Literal pathspecs: a file named `*.rs` is that file, not a pattern.
    let specs: Vec<String> = created.iter().take(UNTRACKED_FILES).map(|p| format!(":(literal){p}")).collect();
    let mut args = vec!["ls-files", "-z", "--others", "--exclude-standard", "--"];
    args.extend(specs.iter().map(String::as_str));
    let Some(out) = git(root, &args) else { return 0 };
    out.split(|&b| b == 0)
        .filter(|p| !p.is_empty())
        .filter_map(|p| std::str::from_utf8(p).ok())
        .filter_map(|rel| ccmem_proto::files::untrusted::read_in(root, &root.join(rel), UNTRACKED_BYTES).ok())
        // Binary files have no lines, as in `git diff --numstat`.
        .filter(|b| !b.contains(&0))
        .map(|b| line_count(&b))
        .sum()
}

/// Lines in a text, the last one counted without its newline.
pub fn line_count(b: &[u8]) -> u64 {
    let newlines = b.iter().filter(|&&c| c == b'\n').count() as u64;
    newlines + u64::from(b.last().is_some_and(|&c| c != b'\n'))
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).trim().to_string()
}

/// Parses `git status --porcelain=v2 --branch -z`.
pub fn parse_status(out: &[u8]) -> GitState {
    let mut st = GitState::default();
    let mut records = out.split(|&b| b == 0).filter(|r| !r.is_empty());
    while let Some(rec) = records.next() {
        let rec = String::from_utf8_lossy(rec);
        let mut xy = |f: &str| {
            let b = f.as_bytes();
            if b.first().is_some_and(|&c| c != b'.') {
                st.staged_files += 1;
            }
            if b.get(1).is_some_and(|&c| c != b'.') {
                st.unstaged_files += 1;
            }
        };
        // ccmem's own files are not the agent's changes (a team may have committed them).
        let path = match rec.as_bytes().first() {
            Some(b'1') => rec.splitn(9, ' ').nth(8),
            Some(b'2') => rec.splitn(10, ' ').nth(9),
            Some(b'u') => rec.splitn(11, ' ').nth(10),
            Some(b'?') => rec.get(2..),
            _ => None,
        };
        if path.is_some_and(is_own_file) {
            if rec.starts_with("2 ") {
                records.next();
            }
            continue;
        }
        if let Some(h) = rec.strip_prefix("# branch.head ") {
            // Branch names are the repository's text too (`fix/ghp_…`): filtered like it.
            st.branch = if h == "(detached)" { "HEAD (detached)".into() } else { crate::text::clean(h) };
        } else if let Some(rest) = rec.strip_prefix("1 ") {
            xy(rest.split(' ').next().unwrap_or(""));
        } else if let Some(rest) = rec.strip_prefix("2 ") {
            xy(rest.split(' ').next().unwrap_or(""));
            // A rename or copy is followed by its original path.
            records.next();
        } else if rec.starts_with("u ") {
            st.staged_files += 1;
            st.unstaged_files += 1;
        } else if rec.starts_with("? ") {
            st.untracked_files += 1;
        }
    }
    st.has_uncommitted_changes = st.staged_files + st.unstaged_files + st.untracked_files > 0;
    st
}

/// The checkpoint, its backup, the report and their temporary files.
fn is_own_file(path: &str) -> bool {
    path.strip_prefix(".claude/").is_some_and(|name| {
        !name.contains('/')
            && (name.contains(".project-state.json") || name.contains("session-memory.md") || name == ".ccmemd.lock")
    })
}

/// Sums `git diff --numstat` (binary files, shown as `-`, count no lines).
pub fn parse_numstat(out: &str) -> (u64, u64) {
    out.lines().fold((0, 0), |(a, d), line| {
        let mut f = line.split('\t');
        let add = f.next().and_then(|x| x.parse::<u64>().ok()).unwrap_or(0);
        let del = f.next().and_then(|x| x.parse::<u64>().ok()).unwrap_or(0);
        (a + add, d + del)
    })
}

/// Whether `git_dir` is this checkout's: inside the project, or the git directory of the
/// worktree or submodule its `.git` file names, when that directory names this checkout
/// back (a worktree's `gitdir` file, a submodule's `core.worktree`): a `.git` file and a
/// directory laid out to look like a worktree cannot lend another repository's.
pub fn own_git_dir(root: &Path, git_dir: &Path) -> bool {
    let real = |p: &Path| ccmem_proto::files::within::canonical(p).ok();
    let Some(git_dir) = real(git_dir) else { return false };
    let Some(root_real) = real(root) else { return false };
    if git_dir.starts_with(&root_real) {
        return true;
    }
    let read = |p: &Path| ccmem_proto::files::untrusted::read_string(p, 4096).ok();
    let Ok(dotgit) = ccmem_proto::files::untrusted::read_string_in(root, &root.join(".git"), 4096) else {
        return false;
    };
    let Some(named) = dotgit.trim().strip_prefix("gitdir:").map(str::trim) else { return false };
    let named = root.join(named);
    let Some(named_real) = real(&named) else { return false };
    let points_back =
        |p: &str| real(&named.join(p.trim())).is_some_and(|p| p == root_real || p == root_real.join(".git"));
    match read(&named.join("commondir")) {
        // A worktree: `<common>/worktrees/<name>`, whose `gitdir` names this `.git` file.
        Some(c) => {
            real(&named.join(c.trim())).is_some_and(|c| c == git_dir)
                && named_real.parent().is_some_and(|p| p == git_dir.join("worktrees"))
                && read(&named.join("gitdir")).is_some_and(|g| points_back(&g))
        }
        // A submodule: its git directory itself, whose `core.worktree` is this checkout.
        None => {
            named_real == git_dir
                && read(&named.join("config")).is_some_and(|c| {
                    c.lines()
                        .filter_map(|l| l.trim().strip_prefix("worktree"))
                        .filter_map(|l| l.trim_start().strip_prefix('='))
                        .any(points_back)
                })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_porcelain_v2() {
        let out = b"# branch.oid 1234\0# branch.head main\0# branch.upstream origin/main\0\
1 M. N... 100644 100644 100644 a a src/a.rs\0\
1 .M N... 100644 100644 100644 b b src/b.rs\0\
1 MM N... 100644 100644 100644 c c src/c.rs\0\
2 R. N... 100644 100644 100644 d d R100 new.rs\0old.rs\0\
u UU N... 100644 100644 100644 100644 e e e conflict.rs\0\
? notes.txt\0? tmp/\0";
        let st = parse_status(out);
        assert_eq!(st.branch, "main");
        assert_eq!((st.staged_files, st.unstaged_files, st.untracked_files), (4, 3, 2));
        assert!(st.has_uncommitted_changes);

        let clean = parse_status(b"# branch.oid (initial)\0# branch.head (detached)\0");
        assert_eq!(clean.branch, "HEAD (detached)");
        let token = format!("ghp_{}", "a1B2".repeat(9));
        let secret = parse_status(format!("# branch.head fix/{token}\0").as_bytes());
        assert!(secret.branch.starts_with("fix/") && !secret.branch.contains(&token), "{}", secret.branch);
        assert!(!clean.has_uncommitted_changes);
    }

    #[test]
    fn ccmems_own_files_are_not_the_agents_changes() {
        let out = b"# branch.head main\x001 .M N... 100644 100644 100644 a b .claude/.project-state.json\x001 .M N... 100644 100644 100644 a b .claude/session-memory.md\x00? .claude/.project-state.json.bak\x001 .M N... 100644 100644 100644 a b src/a.rs\x00";
        let st = parse_status(out);
        assert_eq!((st.staged_files, st.unstaged_files, st.untracked_files), (0, 1, 0));
    }

    #[test]
    fn sums_numstat() {
        assert_eq!(parse_numstat("3\t1\ta.rs\n-\t-\timg.png\n10\t0\tb.rs\n"), (13, 1));
        assert_eq!(parse_numstat(""), (0, 0));
    }

    #[test]
    fn outside_a_repository_everything_is_unknown() {
        let tmp = tempfile::tempdir().unwrap();
        assert_eq!(head(tmp.path()), None);
        assert_eq!(state(tmp.path()), GitState::default());
        let mut s = ActivitySummary::default();
        since(tmp.path(), "", &[], &mut s);
        assert_eq!(s, ActivitySummary::default());
    }

    /// Runs git in `dir` as a test sets a repository up (a user, no signing); it must succeed.
    fn run_git(dir: &Path, args: &[&str]) {
        let ok = std::process::Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(["-c", "user.email=t@e", "-c", "user.name=T", "-c", "commit.gpgsign=false"])
            .args(args)
            .output()
            .is_ok_and(|o| o.status.success());
        assert!(ok, "git {args:?}");
    }

    /// Round four's tester: a committed-looking `core.worktree` made the git line describe
    /// another directory.
    #[test]
    fn a_work_tree_elsewhere_is_not_described() {
        let tmp = tempfile::tempdir().unwrap();
        let (root, elsewhere) = (tmp.path().join("project"), tmp.path().join("elsewhere"));
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(&elsewhere).unwrap();
        let git = run_git;
        git(&root, &["init", "-q", "-b", "main"]);
        std::fs::write(root.join("a.txt"), "a\n").unwrap();
        git(&root, &["add", "."]);
        git(&root, &["commit", "-q", "-m", "one"]);
        // A subdirectory of the work tree is described.
        std::fs::create_dir_all(root.join("sub")).unwrap();
        assert_eq!(state(&root.join("sub")).branch, "main");
        std::fs::write(elsewhere.join("secret.txt"), "x\n").unwrap();
        git(&root, &["config", "core.worktree", &elsewhere.to_string_lossy()]);
        assert_eq!(state(&root), GitState::default());
    }

    #[test]
    fn new_files_git_does_not_track_yet_count_as_added_lines() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        let run = |args: &[&str]| run_git(root, args);
        run(&["init", "-q"]);
        std::fs::write(root.join("old.rs"), "a\nb\nc\n").unwrap();
        std::fs::write(root.join(".gitignore"), "ignored.rs\n").unwrap();
        run(&["add", "."]);
        run(&["commit", "-q", "-m", "one"]);
        let start = head(root).unwrap();
        // Tracked: one line changed. New: 3 lines (the last without a newline), a binary
        // file, an ignored one, a file named like a pattern, and one made before the session.
        std::fs::write(root.join("old.rs"), "a\nB\nc\n").unwrap();
        std::fs::write(root.join("new.rs"), "1\n2\n3").unwrap();
        std::fs::write(root.join("blob.bin"), b"\0\n\n").unwrap();
        std::fs::write(root.join("ignored.rs"), "x\n").unwrap();
        std::fs::write(root.join("*.rs"), "y\n").unwrap();
        std::fs::write(root.join("theirs.rs"), "z\n").unwrap();
        let mut s = ActivitySummary::default();
        since(root, &start, &["new.rs", "blob.bin", "ignored.rs", "*.rs", "gone.rs"], &mut s);
        assert_eq!((s.lines_added, s.lines_deleted), (1 + 3 + 1, 1));
        assert_eq!(line_count(b""), 0);
        assert_eq!(line_count(b"x"), 1);
        assert_eq!(line_count(b"x\n\n"), 2);
    }
}
