//! The handoff refs, written with git plumbing only: the work tree, the index and the
//! branches never change, and no branch's log shows them.
//!
//! - `refs/ccmem/handoff/<author-id>/<branch>`: this clone's own, in the project's repository
//!   (and, as sent, in ccmem's `outbox.git`);
//! - `refs/ccmem/remotes/<remote>/<author-id>/<branch>`: what the last fetch brought of
//!   everyone's, own included, in ccmem's `handoffs.git`.
//!
//! Each handoff is a commit whose tree holds `handoff.json` and `handoff.md`, its parent the
//! branch's previous handoff by the same author.

use super::git::{self, Output};
use ccmem_proto::model::handoff::{BranchHandoff, SeenHandoff, MAX_BYTES};
use std::path::Path;

/// Where this clone's own handoffs are.
pub const OWN: &str = "refs/ccmem/handoff/";
/// Where fetched handoffs are, under the remote's name.
pub const FETCHED: &str = "refs/ccmem/remotes/";

/// A writer's id in the refs: a readable part of the author's email and a hash of the
/// author, machine and clone together, so that two people (or one person's two machines, or
/// two clones) on one branch each keep their own ref. Made of `[a-z0-9_-]`: valid in any ref
/// name.
pub fn author_id(author: &str, machine: &str, clone: &Path) -> String {
    let email = author.rsplit_once('<').map_or(author, |(_, e)| e.trim_end_matches('>'));
    let local = email.split('@').next().unwrap_or("");
    let mut slug: String = local
        .chars()
        .map(|c| c.to_ascii_lowercase())
        .map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '-' })
        .take(24)
        .collect();
    slug = slug.trim_matches('-').to_string();
    if slug.is_empty() {
        slug = "someone".into();
    }
    format!("{slug}-{:08x}", fnv(&format!("{author}\n{machine}\n{}", clone.display())) as u32)
}

/// FNV-1a: stable across builds and platforms (the id must not change with Rust's hasher).
fn fnv(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3))
}

/// Whether git takes `branch` as a branch name (what `git check-ref-format --branch` says,
/// without running it: ASCII control characters, spaces and `~^:?*[\` refused, no `..`,
/// `@{`, `//`, leading `-` or `.`, trailing `.`, `/` or `.lock`).
pub fn branch_ok(branch: &str) -> bool {
    !branch.is_empty()
        && branch != "HEAD"
        && branch != "@"
        && !branch.starts_with('-')
        && !branch.starts_with('/')
        && !branch.ends_with('/')
        && !branch.ends_with('.')
        && !branch.contains("..")
        && !branch.contains("@{")
        && !branch.contains("//")
        && branch.split('/').all(|c| !c.starts_with('.') && !c.ends_with(".lock") && !c.is_empty())
        && !branch.chars().any(|c| c.is_control() || " ~^:?*[\\".contains(c))
}

/// Whether `id` can be a writer's id ([`author_id`]'s characters): a fetched ref whose id
/// part is anything else is not read.
pub fn id_ok(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 64
        && id.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
}

/// Copies the handoff in `commit` of `root` (this clone's own) into the repository `out` as a
/// commit on `name` whose parent is the one there before: its two files, author and dates.
pub fn copy_commit(root: &Path, commit: &str, out: &Path, name: &str) -> Result<(), String> {
    let mut files = Vec::new();
    for file in FILES {
        let data = git::local(root, &["cat-file", "blob", &format!("{commit}:{file}")], None);
        if !data.ok || data.stdout.len() > 4 * MAX_BYTES {
            return Err(format!("this clone's {file} cannot be read"));
        }
        files.push(data.stdout);
    }
    let who = git::local(root, &["log", "-1", "--format=%an%x00%ae%x00%aI%x00%cn%x00%ce%x00%cI%x00%B", commit], None);
    let who = String::from_utf8_lossy(&who.stdout).into_owned();
    let f: Vec<&str> = who.splitn(7, '\0').collect();
    if f.len() < 7 {
        return Err("this clone's handoff commit cannot be read".into());
    }
    let env = [
        ("GIT_AUTHOR_NAME", f[0]),
        ("GIT_AUTHOR_EMAIL", f[1]),
        ("GIT_AUTHOR_DATE", f[2]),
        ("GIT_COMMITTER_NAME", f[3]),
        ("GIT_COMMITTER_EMAIL", f[4]),
        ("GIT_COMMITTER_DATE", f[5]),
    ];
    let prev = resolve(out, name);
    let copy = commit_files(out, [&files[0], &files[1]], prev.as_deref(), f[6].trim_end(), &env)?;
    ok(git::local(out, &["update-ref", name, &copy], None), "git update-ref").map(|_| ())
}

/// A handoff commit's files, in its tree's order.
const FILES: [&str; 2] = ["handoff.json", "handoff.md"];

/// A commit in `repo` whose tree holds [`FILES`] (`data`, in that order), over `parent`, with
/// `message` and `env` (author, dates); its id.
fn commit_files(
    repo: &Path,
    data: [&[u8]; 2],
    parent: Option<&str>,
    message: &str,
    env: &[(&str, &str)],
) -> Result<String, String> {
    let mut tree = String::new();
    for (file, bytes) in FILES.iter().zip(data) {
        let blob = ok(git::local(repo, &["hash-object", "-w", "--stdin"], Some(bytes)), "git hash-object")?;
        tree.push_str(&format!("100644 blob {blob}\t{file}\n"));
    }
    let tree = ok(git::local(repo, &["mktree"], Some(tree.as_bytes())), "git mktree")?;
    let mut args = vec!["commit-tree", "--no-gpg-sign", tree.as_str(), "-F", "-"];
    if let Some(p) = parent {
        args.extend(["-p", p]);
    }
    ok(git::local_with(repo, &args, Some(message.as_bytes()), env), "git commit-tree")
}

/// The ref of `author_id`'s handoff on `branch` in this clone.
pub fn own_ref(author_id: &str, branch: &str) -> String {
    format!("{OWN}{author_id}/{branch}")
}

/// Writes `h` as the new handoff of `author_id` on its branch, over the previous one (its
/// parent). Returns the new commit; nothing is written when the previous holds the same work.
pub fn write(root: &Path, author_id: &str, h: &BranchHandoff) -> Result<Option<String>, String> {
    if !branch_ok(&h.branch) {
        return Err(format!("the branch name {:?} cannot name a ref", h.branch));
    }
    let name = own_ref(author_id, &h.branch);
    let prev = resolve(root, &name);
    if let Some(p) = &prev {
        if read_commit(root, p).is_ok_and(|old| old.same_work(h)) {
            return Ok(None);
        }
    }
    let (json, md) = (super::make::json(h), super::make::markdown(h));
    let message = format!("ccmem handoff on {}\n\nBy {} on {}.\n", h.branch, h.author, h.machine);
    let commit = commit_files(root, [&json, md.as_bytes()], prev.as_deref(), &message, &[])?;
    // Against the previous value: a concurrent writer (another daemon on a copy) loses.
    let old = prev.as_deref().unwrap_or("0000000000000000000000000000000000000000");
    let upd = git::local(root, &["update-ref", "-m", "ccmem handoff", &name, &commit, old], None);
    ok(upd, "git update-ref")?;
    Ok(Some(commit))
}

fn ok(out: Output, what: &str) -> Result<String, String> {
    if out.ok {
        Ok(out.text())
    } else {
        Err(out.why(what))
    }
}

/// The commit `name` points at, if it is a commit.
pub fn resolve(root: &Path, name: &str) -> Option<String> {
    let spec = format!("{name}^{{commit}}");
    let out = git::local(root, &["rev-parse", "--verify", "--quiet", "--end-of-options", &spec], None);
    out.ok.then(|| out.text()).filter(|c| c.len() >= 40 && c.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// The refs under `prefix`, as (name, object id).
pub fn list(root: &Path, prefix: &str) -> Vec<(String, String)> {
    let out = git::local(root, &["for-each-ref", "--format=%(objectname) %(refname)", prefix], None);
    out.text().lines().filter_map(|l| l.split_once(' ')).map(|(id, name)| (name.to_string(), id.to_string())).collect()
}

/// Reads the handoff in commit `commit`, as untrusted data: only `handoff.json`, only a
/// regular file's blob (not a link, not a tree), only when it is at most [`MAX_BYTES`];
/// redacted again.
pub fn read_commit(root: &Path, commit: &str) -> Result<BranchHandoff, String> {
    // A ref may point at anything: only a commit is a handoff (a tree would be read as one).
    if git::local(root, &["cat-file", "-t", commit], None).text() != "commit" {
        return Err("not a commit".into());
    }
    let tree = git::local(root, &["ls-tree", "-z", "--end-of-options", commit, "handoff.json"], None);
    if !tree.ok {
        return Err("not a handoff commit".into());
    }
    // `<mode> SP <type> SP <object> TAB <name>`.
    let entry = String::from_utf8_lossy(&tree.stdout);
    let entry = entry.trim_end_matches('\0');
    let (meta, name) = entry.split_once('\t').ok_or("no handoff.json in it")?;
    let parts: Vec<&str> = meta.split(' ').collect();
    if name != "handoff.json" || parts.len() != 3 || parts[0] != "100644" || parts[1] != "blob" {
        return Err("its handoff.json is not a regular file".into());
    }
    let blob = parts[2];
    let size = git::local(root, &["cat-file", "-s", blob], None);
    let size: usize = size.text().parse().map_err(|_| "its handoff.json cannot be read".to_string())?;
    if size > MAX_BYTES {
        return Err(format!("its handoff.json is {size} bytes, over the {MAX_BYTES} read"));
    }
    let data = git::local(root, &["cat-file", "blob", blob], None);
    if !data.ok || data.stdout.len() > MAX_BYTES {
        return Err("its handoff.json cannot be read".into());
    }
    let mut h: BranchHandoff =
        serde_json::from_slice(&data.stdout).map_err(|e| format!("its handoff.json is not a handoff: {e}"))?;
    super::make::redact(&mut h);
    // A commit is 40 or 64 hexadecimal digits; anything else there is not one.
    if !(h.commit.len() >= 7 && h.commit.len() <= 64 && h.commit.bytes().all(|b| b.is_ascii_hexdigit())) {
        h.commit.clear();
    }
    Ok(h)
}

/// Handoffs read for one branch at most: the newest by their commits' dates.
pub const READ: usize = 16;

/// How far ahead of now a time may be and still count (clocks differ a little); past it, a
/// time is no time.
const AHEAD_SECS: i64 = 300;

/// Every handoff of `branch` this clone holds: its own (in `root`), and what fetches brought
/// into `side` from `remote` (its own copy there left out), newest first; and how many more
/// there are than were read. `newer`: made after this clone's own latest on the branch (a
/// time in the future, or none, is no time: such a handoff is never newer, and sorts last).
pub fn on_branch(root: &Path, side: &Path, remote: &str, author_id: &str, branch: &str) -> (Vec<SeenHandoff>, usize) {
    let mut names: Vec<(String, String, bool, &Path)> = Vec::new();
    if let Some(id) = resolve(root, &own_ref(author_id, branch)) {
        names.push((own_ref(author_id, branch), id, true, root));
    }
    let prefix = format!("{FETCHED}{remote}/");
    let mut fetched: Vec<(i64, String, String)> = Vec::new();
    if side.join("HEAD").is_file() {
        let out = git::local(
            side,
            &["for-each-ref", "--format=%(committerdate:unix) %(objectname) %(refname)", &prefix],
            None,
        );
        for line in out.text().lines() {
            let mut parts = line.splitn(3, ' ');
            let (Some(date), Some(id), Some(name)) = (parts.next(), parts.next(), parts.next()) else { continue };
            let Some((who, b)) = name.strip_prefix(&prefix).and_then(|r| r.split_once('/')) else { continue };
            if b == branch && who != author_id && id_ok(who) {
                fetched.push((date.parse().unwrap_or(0), id.to_string(), name.to_string()));
            }
        }
    }
    // Newest first by their commits' dates; a date to come sorts last (hundreds of forged
    // refs dated 2099 do not push a real handoff out of the ones read).
    let soon = chrono::Utc::now().timestamp() + AHEAD_SECS;
    fetched.sort_by_key(|f| std::cmp::Reverse(if f.0 > soon { i64::MIN } else { f.0 }));
    let more = fetched.len().saturating_sub(READ);
    names.extend(fetched.into_iter().take(READ).map(|(_, id, name)| (name, id, false, side)));
    let mut seen = Vec::new();
    for (name, id, own, repo) in names {
        let author = name.strip_suffix(&format!("/{branch}")).unwrap_or("");
        let author = author.rsplit('/').next().unwrap_or("").to_string();
        match read_commit(repo, &id) {
            // A handoff claiming another branch than its ref's is shown under its ref's.
            Ok(mut handoff) if handoff.has_work() => {
                handoff.branch = branch.to_string();
                seen.push(SeenHandoff { git_ref: name, author_id: author, own, newer: false, handoff });
            }
            Ok(_) => tracing::debug!(project = %root.display(), git_ref = %name, "an empty handoff, not shown"),
            Err(why) => tracing::debug!(project = %root.display(), git_ref = %name, %why, "handoff not read"),
        }
    }
    // By the time each says, read as a time; one past a few minutes from now is no time.
    // (In milliseconds: two handoffs of the same second are still ordered.)
    let at = |s: &SeenHandoff| {
        crate::clock::parse_iso(&s.handoff.made_at).map(|t| t.timestamp_millis()).filter(|t| *t <= soon * 1000)
    };
    seen.sort_by_key(|s| std::cmp::Reverse(at(s)));
    let own_at = seen.iter().find(|s| s.own).and_then(at);
    for s in &mut seen {
        s.newer = !s.own && at(s).is_some_and(|t| own_at.is_none_or(|own| t > own));
    }
    (seen, more)
}

/// Deletes the ref `name`.
pub fn delete(root: &Path, name: &str) -> Result<(), String> {
    ok(git::local(root, &["update-ref", "-d", name], None), "git update-ref -d").map(|_| ())
}

/// The branch `branch` was renamed from (`git branch -m OLD branch`), when its reflog says
/// so and this clone has a handoff on OLD while OLD itself is gone.
pub fn renamed_from(root: &Path, author_id: &str, branch: &str) -> Option<String> {
    let log = git::local(root, &["reflog", "show", "--format=%gs", &format!("refs/heads/{branch}"), "--"], None);
    let text = log.text();
    let prefix = "Branch: renamed refs/heads/";
    let old = text.lines().find_map(|l| l.strip_prefix(prefix)?.split_once(" to refs/heads/"))?;
    let (old, new) = (old.0.to_string(), old.1);
    (new == branch
        && branch_ok(&old)
        && resolve(root, &format!("refs/heads/{old}")).is_none()
        && resolve(root, &own_ref(author_id, &old)).is_some())
    .then_some(old)
}

/// Moves this clone's handoff from `old` to `new` (the branch was renamed).
pub fn rename(root: &Path, author_id: &str, old: &str, new: &str) -> Result<(), String> {
    let from = own_ref(author_id, old);
    let Some(id) = resolve(root, &from) else { return Ok(()) };
    let to = own_ref(author_id, new);
    ok(git::local(root, &["update-ref", "-m", "ccmem handoff: branch renamed", &to, &id, ""], None), "git update-ref")?;
    delete(root, &from)
}
