//! Pushing this clone's handoff to the one remote the user named, fetching everyone's from
//! it, and taking refs back there: each a single bounded git call to the remote's URL.
//!
//! Every call to a remote runs in a repository of ccmem's own, in the project's state dir,
//! never in the project's: pushes from `outbox.git` (this clone's handoffs as sent), fetches
//! into a new `handoffs.git` each time. The project's own configuration has no say in them
//! (only its remote's URL is read), and what anyone can push to the remote cannot grow the
//! project's `.git`. Only tips are fetched (`--depth 1`), 200 refs at most, and a fetch that
//! brings more than [`git::FETCH_CAP`] is stopped. A remote on this machine is run with its
//! hooks off.

use super::git;
use super::refs::{self, FETCHED, OWN};
use std::path::Path;

/// Whether `name` can be a remote's name here (it becomes part of ref names).
pub fn name_ok(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && !name.starts_with(['.', '-'])
        && !name.contains("..")
        && name.chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
}

/// The remote the branch checked out tracks (its `branch.<name>.remote`), if any.
pub fn upstream(root: &Path, branch: &str) -> Option<String> {
    let key = format!("branch.{branch}.remote");
    let out = git::local(root, &["config", "--get", &key], None);
    out.ok.then(|| out.text()).filter(|r| name_ok(r))
}

/// `url` as git would read it in `root`: a relative path (`../app.git`) made absolute, since
/// a fetch runs in another repository.
fn absolute(root: &Path, url: String) -> String {
    let scheme = url.contains("://") || url.contains("::");
    // `host:path` is ssh's form, unless a `/` comes before the colon (`./a:b` is a path).
    let scp = url.find(':').is_some_and(|c| !url[..c].contains('/'));
    let path = Path::new(&url);
    if scheme || scp || path.is_absolute() {
        url
    } else {
        root.join(path).to_string_lossy().into_owned()
    }
}

/// The URL `remote` pushes to (`pushurl` over `url`), or fetches from, as the repository says
/// now (the functions below are given it, once checked against the one pinned at enable).
pub fn url(root: &Path, remote: &str, push: bool) -> Result<String, String> {
    let keys: &[&str] = if push { &["pushurl", "url"] } else { &["url"] };
    for k in keys {
        let out = git::local(root, &["config", "--get", &format!("remote.{remote}.{k}")], None);
        let url = out.text();
        if out.ok && !url.is_empty() {
            // A URL that git would read as an option is refused.
            if url.starts_with('-') {
                return Err(format!("the remote {remote}'s URL starts with '-'"));
            }
            return Ok(absolute(root, url));
        }
    }
    Err(format!(
        "this repository has no remote named {remote:?} (`git remote -v` lists them; `handoff enable --remote NAME` \
         picks another)"
    ))
}

/// Whether git reaches `url` on this machine (a path, `file://`): the repository there is
/// then run by git here, its hooks and settings with it.
fn local(url: &str) -> bool {
    url.starts_with("file://") || (!url.contains("://") && !url.contains("::") && Path::new(url).is_absolute())
}

/// The program git runs in a repository on this machine, with its hooks off and its
/// `core.alternateRefsCommand` emptied (the repository there is anyone's: a downloaded one can
/// name a bare repository it holds as its remote); none for a remote elsewhere. A remote inside
/// the project itself is refused.
fn pack_program(root: &Path, url: &str, program: &str) -> Result<Option<String>, String> {
    if !local(url) {
        return Ok(None);
    }
    let path = Path::new(url.strip_prefix("file://").unwrap_or(url));
    let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let project = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    if real.starts_with(&project) {
        return Err(format!(
            "the remote is inside the project ({}): a repository cannot be its own handoff's remote",
            real.display()
        ));
    }
    Ok(Some(format!("git -c core.hooksPath=/dev/null -c core.alternateRefsCommand= -c core.fsmonitor=false {program}")))
}

/// The repository ccmem pushes from, made if need be: this clone's handoffs as they were
/// sent. Pushing from it, not from the project, leaves the project's own configuration no say
/// in the push (its `http.cookieFile`, its `pushInsteadOf`, whatever git reads there).
fn outbox(dir: &Path) -> Result<(), String> {
    if dir.join("HEAD").is_file() {
        return Ok(());
    }
    init(dir)
}

/// A new bare repository at `dir`, without templates (no hooks).
fn init(dir: &Path) -> Result<(), String> {
    let _ = std::fs::remove_dir_all(dir);
    let parent = dir.parent().ok_or("no directory for ccmem's repositories")?;
    std::fs::create_dir_all(parent).map_err(|e| format!("cannot make {}: {e}", parent.display()))?;
    let path = dir.to_string_lossy();
    let out = git::local(parent, &["init", "--bare", "-q", "--template=", &path], None);
    if out.ok {
        Ok(())
    } else {
        Err(out.why("making ccmem's repository"))
    }
}

/// Pushes this clone's handoff on `branch` to `remote`, over whatever is there (the ref is
/// this clone's alone). Its two files are copied from the project's commit into `out` (a
/// commit whose parent is the previous one sent), and pushed from there.
pub fn push(
    root: &Path,
    out: &Path,
    (remote, url): (&str, &str),
    author_id: &str,
    branch: &str,
    sock: Option<&Path>,
) -> Result<(), String> {
    let name = refs::own_ref(author_id, branch);
    let Some(commit) = refs::resolve(root, &name) else {
        return Err(format!(
            "there is no handoff on {branch} to push yet (it is written at the next checkpoint with work)"
        ));
    };
    let program = pack_program(root, url, "receive-pack")?;
    outbox(out)?;
    refs::copy_commit(root, &commit, out, &name)?;
    let spec = format!("+{name}:{name}");
    let flag = program.map(|p| format!("--receive-pack={p}"));
    let mut args = vec!["push", "--porcelain", "--no-verify", "--no-signed", "--no-recurse-submodules"];
    args.extend(flag.as_deref());
    args.extend(["--", url, &spec]);
    let done = git::network(out, &args, sock, None);
    if done.ok {
        Ok(())
    } else {
        Err(done.why(&format!("git push to {remote}")))
    }
}

/// Refs fetched at most.
pub const FETCHED_MAX: usize = 200;

/// Fetches the tips of the handoffs on `remote` (those of `branch` first, [`FETCHED_MAX`] at
/// most) into a new repository that then replaces `fetched`: nothing accumulates, no branch,
/// tag or history comes, and a fetch that fails (too slow, over the cap) leaves the last one.
pub fn fetch(
    root: &Path,
    fetched: &Path,
    (remote, url): (&str, &str),
    branch: Option<&str>,
    sock: Option<&Path>,
) -> Result<(), String> {
    let program = pack_program(root, url, "upload-pack")?;
    let flag = program.map(|p| format!("--upload-pack={p}"));
    let fresh = fetched.with_extension("new");
    init(&fresh)?;
    let result = (|| {
        let pattern = format!("{OWN}*");
        let mut args = vec!["ls-remote"];
        args.extend(flag.as_deref());
        args.extend(["--", url, &pattern]);
        let listed = git::network(&fresh, &args, sock, None);
        if !listed.ok {
            return Err(listed.why(&format!("git ls-remote {remote}")));
        }
        let text = listed.text();
        let mut names: Vec<&str> = text
            .lines()
            .filter_map(|l| l.split_once('\t').map(|(_, r)| r))
            .filter(|r| {
                r.strip_prefix(OWN)
                    .and_then(|r| r.split_once('/'))
                    .is_some_and(|(who, b)| refs::id_ok(who) && refs::branch_ok(b))
            })
            .collect();
        // The branch checked out first: a flood of refs on other branches does not push its
        // handoffs out.
        names.sort_by_key(|r| branch.is_none_or(|b| !r.ends_with(&format!("/{b}"))));
        names.truncate(FETCHED_MAX);
        if names.is_empty() {
            return Ok(());
        }
        let specs: Vec<String> =
            names.iter().map(|r| format!("+{r}:{FETCHED}{remote}/{}", r.strip_prefix(OWN).unwrap_or(r))).collect();
        let mut args = vec!["fetch", "--depth=1", "--no-tags", "--no-write-fetch-head", "--no-recurse-submodules"];
        args.extend(["--no-auto-maintenance", "--no-auto-gc", "--quiet"]);
        args.extend(flag.as_deref());
        args.extend(["--", url]);
        args.extend(specs.iter().map(String::as_str));
        let got = git::network(&fresh, &args, sock, Some(&fresh));
        if got.ok {
            Ok(())
        } else {
            Err(got.why(&format!("git fetch from {remote}")))
        }
    })();
    match result {
        Ok(()) => {
            let _ = std::fs::remove_dir_all(fetched);
            std::fs::rename(&fresh, fetched).map_err(|e| format!("cannot keep what was fetched: {e}"))
        }
        Err(e) => {
            let _ = std::fs::remove_dir_all(&fresh);
            Err(e)
        }
    }
}

/// Deletes `names` (this clone's own refs) on `remote`, from `out`.
pub fn delete(
    root: &Path,
    out: &Path,
    (remote, url): (&str, &str),
    names: &[String],
    sock: Option<&Path>,
) -> Result<(), String> {
    if names.is_empty() {
        return Ok(());
    }
    let program = pack_program(root, url, "receive-pack")?;
    outbox(out)?;
    let flag = program.map(|p| format!("--receive-pack={p}"));
    let mut args = vec!["push", "--porcelain", "--no-verify", "--no-signed"];
    args.extend(flag.as_deref());
    args.extend(["--", url]);
    let specs: Vec<String> = names.iter().map(|n| format!(":{n}")).collect();
    args.extend(specs.iter().map(String::as_str));
    let done = git::network(out, &args, sock, None);
    for n in names {
        let _ = refs::delete(out, n);
    }
    if done.ok {
        Ok(())
    } else {
        Err(done.why(&format!("deleting on {remote}")))
    }
}

/// The branches `remote` has (`refs/heads/*`), asked of it now, from `out`.
pub fn branches(
    root: &Path,
    out: &Path,
    (remote, url): (&str, &str),
    sock: Option<&Path>,
) -> Result<Vec<String>, String> {
    let program = pack_program(root, url, "upload-pack")?;
    outbox(out)?;
    let flag = program.map(|p| format!("--upload-pack={p}"));
    let mut args = vec!["ls-remote", "--heads"];
    args.extend(flag.as_deref());
    args.extend(["--", url]);
    let listed = git::network(out, &args, sock, None);
    if !listed.ok {
        return Err(listed.why(&format!("git ls-remote {remote}")));
    }
    Ok(listed.text().lines().filter_map(|l| l.split_once("\trefs/heads/")).map(|(_, b)| b.to_string()).collect())
}
