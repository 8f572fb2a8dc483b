//! Pushing this clone's handoff to the one remote the user named, fetching everyone's from
//! it, and taking refs back there: each a single bounded git call to the remote's URL.
//!
//! Fetches go into a repository of ccmem's own (`handoffs.git` in the project's state dir),
//! never into the project's: what anyone can push to the remote cannot grow the project's
//! `.git`, and the project's own configuration has no say in how it is fetched. Only the tips
//! are fetched (`--depth 1`), and a fetch that brings more than [`git::FETCH_CAP`] is stopped.

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

/// The URL `remote` pushes to (`pushurl` over `url`), or fetches from.
fn url(root: &Path, remote: &str, push: bool) -> Result<String, String> {
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
    Err(format!("this repository has no remote named {remote:?} (`git remote -v` lists them)"))
}

/// Pushes this clone's handoff on `branch` to `remote`, over whatever is there (the ref is
/// this clone's alone).
pub fn push(root: &Path, remote: &str, author_id: &str, branch: &str, sock: Option<&Path>) -> Result<(), String> {
    let name = refs::own_ref(author_id, branch);
    if refs::resolve(root, &name).is_none() {
        return Err(format!(
            "there is no handoff on {branch} to push yet (it is written at the next checkpoint with work)"
        ));
    }
    let url = url(root, remote, true)?;
    let spec = format!("+{name}:{name}");
    let out = git::network(
        root,
        &["push", "--porcelain", "--no-verify", "--no-signed", "--no-recurse-submodules", "--", &url, &spec],
        sock,
        None,
    );
    if out.ok {
        Ok(())
    } else {
        Err(out.why(&format!("git push to {remote}")))
    }
}

/// The repository fetches go into, made (bare, without templates: no hooks) if need be;
/// made again when it has grown past what handoffs can need.
pub fn side(side: &Path) -> Result<(), String> {
    if side.join("HEAD").is_file() && git::size_of(side) <= 4 * git::FETCH_CAP {
        return Ok(());
    }
    let _ = std::fs::remove_dir_all(side);
    let parent = side.parent().ok_or("no directory for the fetched handoffs")?;
    std::fs::create_dir_all(parent).map_err(|e| format!("cannot make {}: {e}", parent.display()))?;
    let path = side.to_string_lossy();
    let out = git::local(parent, &["init", "--bare", "-q", "--template=", &path], None);
    if out.ok {
        Ok(())
    } else {
        Err(out.why("making the repository for fetched handoffs"))
    }
}

/// Fetches the tip of every handoff on `remote` into `side`'s `refs/ccmem/remotes/<remote>/`
/// (and drops the ones deleted there). Nothing else: no branch, no tag, no history.
pub fn fetch(root: &Path, side_repo: &Path, remote: &str, sock: Option<&Path>) -> Result<(), String> {
    let url = url(root, remote, false)?;
    side(side_repo)?;
    let spec = format!("+{OWN}*:{FETCHED}{remote}/*");
    let out = git::network(
        side_repo,
        &[
            "fetch",
            "--depth=1",
            "--no-tags",
            "--no-write-fetch-head",
            "--no-recurse-submodules",
            "--no-auto-maintenance",
            "--no-auto-gc",
            "--prune",
            "--quiet",
            "--",
            &url,
            &spec,
        ],
        sock,
        Some(side_repo),
    );
    if out.ok {
        Ok(())
    } else {
        if out.too_big {
            // What it brought is not kept: the next fetch starts from an empty repository.
            let _ = std::fs::remove_dir_all(side_repo);
        }
        Err(out.why(&format!("git fetch from {remote}")))
    }
}

/// Deletes `names` (this clone's own refs) on `remote`.
pub fn delete(root: &Path, remote: &str, names: &[String], sock: Option<&Path>) -> Result<(), String> {
    if names.is_empty() {
        return Ok(());
    }
    let url = url(root, remote, true)?;
    let mut args = vec!["push", "--porcelain", "--no-verify", "--no-signed", "--", url.as_str()];
    let specs: Vec<String> = names.iter().map(|n| format!(":{n}")).collect();
    args.extend(specs.iter().map(String::as_str));
    let out = git::network(root, &args, sock, None);
    if out.ok {
        Ok(())
    } else {
        Err(out.why(&format!("deleting on {remote}")))
    }
}

/// The branches `remote` has (`refs/heads/*`), asked of it now; None when it cannot be asked.
pub fn branches(root: &Path, side_repo: &Path, remote: &str, sock: Option<&Path>) -> Result<Vec<String>, String> {
    let url = url(root, remote, false)?;
    side(side_repo)?;
    let out = git::network(side_repo, &["ls-remote", "--heads", "--", &url], sock, None);
    if !out.ok {
        return Err(out.why(&format!("git ls-remote {remote}")));
    }
    Ok(out.text().lines().filter_map(|l| l.split_once("\trefs/heads/")).map(|(_, b)| b.to_string()).collect())
}
