//! Travel: a branch's handoff as a git object, pushed to the one remote the user named and
//! fetched from it, so that another machine, or a teammate, picks the work up where it was
//! left.
//!
//! The project task owns a project's [`State`] and hands each piece of [`Work`] to the
//! blocking pool, one at a time ([`run`]); what comes back ([`Done`]) it keeps. Drives the
//! `git` program ([`git`]), as `observe/git.rs` does, with the repository's own settings
//! unable to run anything; never imports `server/`.

pub mod git;
pub mod make;
pub mod refs;
pub mod remote;
pub mod settings;
pub mod shown;

use ccmem_proto::model::handoff::SeenHandoff;
use ccmem_proto::model::session::Session;
pub use settings::Setting;
use std::path::{Path, PathBuf};

/// What one run does, in this order: the setting changed, the handoff written, pushed,
/// fetched, forgotten or pruned, and the branch's handoffs read back.
#[derive(Debug, Default)]
pub struct Work {
    /// Read the setting from the user's file first (a task's first run).
    pub load: bool,
    /// Turn handoff on: the remote (None: the upstream's, else `origin`), and auto push.
    pub enable: Option<(Option<String>, bool)>,
    /// Turn it off.
    pub disable: bool,
    /// Write the branch's handoff from this session.
    pub session: Option<Box<Session>>,
    /// Push it.
    pub push: bool,
    /// Fetch everyone's.
    pub fetch: bool,
    /// Delete this clone's refs (and, when true, its refs on the remote).
    pub forget: Option<bool>,
    /// Drop refs of branches merged or deleted upstream (and own ones on the remote, when
    /// true).
    pub prune: Option<bool>,
    /// The branch to read (None: the one checked out).
    pub branch: Option<String>,
    /// The client's ssh agent.
    pub sock: Option<PathBuf>,
    /// A person asked for it (`ccmemctl handoff …`): what cannot be done is an error then,
    /// and nothing when ccmem does it on its own.
    pub asked: bool,
}

impl Work {
    /// `other` added to this (queued behind a run in flight): the later session, every flag.
    pub fn merge(&mut self, other: Work) {
        self.load |= other.load;
        if other.enable.is_some() {
            self.enable = other.enable;
            self.disable = false;
        }
        if other.disable {
            self.disable = true;
            self.enable = None;
        }
        if other.session.is_some() {
            self.session = other.session;
        }
        self.push |= other.push;
        self.fetch |= other.fetch;
        self.forget = match (self.forget, other.forget) {
            (Some(a), Some(b)) => Some(a || b),
            (a, b) => a.or(b),
        };
        self.prune = match (self.prune, other.prune) {
            (Some(a), Some(b)) => Some(a || b),
            (a, b) => a.or(b),
        };
        if other.branch.is_some() {
            self.branch = other.branch;
        }
        if other.sock.is_some() {
            self.sock = other.sock;
        }
        self.asked |= other.asked;
    }
}

/// What a run did.
#[derive(Debug, Default)]
pub struct Done {
    /// The setting after it (when it was loaded or changed).
    pub setting: Option<Option<Setting>>,
    /// Who writes here.
    pub maker: Option<make::Maker>,
    /// The branch read, and its handoffs, newest first.
    pub branch: String,
    pub seen: Vec<SeenHandoff>,
    /// Handoffs of the branch not read (past [`refs::READ`], the oldest).
    pub more: usize,
    /// The push's and the fetch's outcomes, when there was one.
    pub pushed: Option<Result<(), String>>,
    pub fetched: Option<Result<(), String>>,
    /// What was done, a sentence each.
    pub said: Vec<String>,
    /// Why what was asked could not be done.
    pub error: Option<String>,
}

/// A project's handoff state, owned by its task.
#[derive(Debug, Default, Clone)]
pub struct State {
    /// Handoff is on (and how), once loaded.
    pub setting: Option<Setting>,
    /// The setting was read from the user's file.
    pub loaded: bool,
    /// Who writes here, once read.
    pub maker: Option<make::Maker>,
    /// The branch whose handoffs are known, and them.
    pub branch: String,
    pub seen: Vec<SeenHandoff>,
    /// The last push or fetch that failed (until one goes through).
    pub failed: Option<String>,
    pub pushed_at: String,
    pub fetched_at: String,
    /// When the last fetch started (a SessionStart fetches at most once a minute).
    pub fetch_started: Option<std::time::Instant>,
    /// The ssh agent of the last `handoff` command, for the pushes and fetches that follow.
    pub sock: Option<PathBuf>,
    /// (conversation, ref, made at) of the handoffs each conversation was given.
    pub told: std::collections::HashSet<(String, String, String)>,
}

impl State {
    /// The line `status` shows, when handoff is on.
    pub fn status_line(&self) -> Option<String> {
        let s = self.setting.as_ref()?;
        let mut line = format!("on, to and from {}{}", s.remote, if s.auto { ", pushed automatically" } else { "" });
        if !self.pushed_at.is_empty() {
            line.push_str(&format!("; last pushed {}", self.pushed_at));
        }
        if !self.fetched_at.is_empty() {
            line.push_str(&format!("; last fetched {}", self.fetched_at));
        }
        let others = self.seen.iter().filter(|h| h.newer).count();
        if others > 0 {
            line.push_str(&format!("; {others} newer handoff(s) from other clones on {}", self.branch));
        }
        if let Some(f) = &self.failed {
            line.push_str(&format!("; FAILED: {f} (tried again at the next push or fetch)"));
        }
        Some(line)
    }

    /// The handoffs newer than this clone's own work on the branch checked out.
    pub fn newer(&self, branch: &str) -> Vec<SeenHandoff> {
        if self.branch != branch {
            return Vec::new();
        }
        self.seen.iter().filter(|h| h.newer).cloned().collect()
    }

    /// Takes what a run did.
    pub fn take(&mut self, done: &Done, now: &str) {
        if let Some(s) = &done.setting {
            self.setting = s.clone();
            self.loaded = true;
        }
        if let Some(m) = &done.maker {
            self.maker = Some(m.clone());
        }
        if !done.branch.is_empty() {
            self.branch = done.branch.clone();
            self.seen = done.seen.clone();
        }
        for (r, at) in [(&done.pushed, &mut self.pushed_at), (&done.fetched, &mut self.fetched_at)] {
            match r {
                Some(Ok(())) => {
                    *at = now.to_string();
                }
                Some(Err(e)) => self.failed = Some(e.clone()),
                None => {}
            }
        }
        if matches!((&done.pushed, &done.fetched), (Some(Ok(())), _) | (_, Some(Ok(()))))
            && !matches!((&done.pushed, &done.fetched), (Some(Err(_)), _) | (_, Some(Err(_))))
        {
            self.failed = None;
        }
    }
}

/// The branch checked out in `root` (None: detached, or not a repository).
pub fn current_branch(root: &Path) -> Option<String> {
    let out = git::local(root, &["symbolic-ref", "--short", "-q", "HEAD"], None);
    out.ok.then(|| out.text()).filter(|b| refs::branch_ok(b))
}

/// Who writes here: git's author (`user.name`, `user.email`) and the machine's name.
pub fn maker(root: &Path) -> make::Maker {
    let get = |k: &str| git::local(root, &["config", "--get", k], None).text();
    let (name, email) = (get("user.name"), get("user.email"));
    let author = match (name.is_empty(), email.is_empty()) {
        (false, false) => format!("{name} <{email}>"),
        (false, true) => name,
        (true, false) => format!("<{email}>"),
        (true, true) => std::env::var("USER").or_else(|_| std::env::var("USERNAME")).unwrap_or_default(),
    };
    let machine = sysinfo::System::host_name().unwrap_or_else(|| "unknown".into());
    make::Maker {
        author: ccmem_proto::model::session::truncate_chars(&author, 200),
        machine: ccmem_proto::model::session::truncate_chars(&machine, 100),
    }
}

/// Does `work` for the project at `root`, whose setting is `setting` (as the task knows it;
/// ignored when `work.load`), on the calling thread (the blocking pool). `dir` is the
/// project's state dir, where ccmem's own repositories for it are (`handoffs.git`, `outbox.git`).
pub fn run(root: &Path, dir: &Path, setting: Option<Setting>, maker_known: Option<make::Maker>, work: Work) -> Done {
    let mut done = Done::default();
    let mut setting = setting;
    if work.load {
        match settings::of(root) {
            Ok(s) => setting = s,
            Err(e) => done.error = Some(e),
        }
        done.setting = Some(setting.clone());
    }
    let branch_now = current_branch(root);
    if let Some((remote, auto)) = work.enable {
        match enable(root, remote, auto, branch_now.as_deref()) {
            Ok(s) => {
                done.said.push(format!(
                    "handoff on: written at each checkpoint, {} {}",
                    if s.auto {
                        "pushed after each Stop and at session end to"
                    } else {
                        "pushed with `ccmemctl handoff push` to"
                    },
                    s.remote
                ));
                setting = Some(s);
                done.setting = Some(setting.clone());
            }
            Err(e) => {
                done.error = Some(e);
                return done;
            }
        }
    }
    if work.disable {
        match settings::set(root, None) {
            Ok(()) => {
                done.said.push(
                    "handoff off: nothing is written, pushed or fetched (the refs stay; `handoff forget` deletes them)"
                        .into(),
                );
                setting = None;
                done.setting = Some(None);
            }
            Err(e) => {
                done.error = Some(e);
                return done;
            }
        }
    }
    let Some(setting) = setting else {
        if work.asked && (work.push || work.fetch || work.forget.is_some() || work.prune.is_some()) {
            done.error = Some("handoff is off for this project: `ccmemctl handoff enable` turns it on".into());
        }
        return done;
    };
    if let Err(e) = own_repository(root) {
        done.error = Some(e);
        return done;
    }
    let maker = maker_known.unwrap_or_else(|| maker(root));
    let (fetched, outbox) = (dir.join(Repos::FETCHED), dir.join(Repos::OUTBOX));
    let repos = Repos { fetched: &fetched, outbox: &outbox };
    // The remote's URL, as it was when the user enabled handoff, or nothing goes out: what
    // is checked is what is used.
    let url_of = |push: bool| -> Result<String, String> {
        let now = remote::url(root, &setting.remote, push)?;
        let then = if push { &setting.push_url } else { &setting.url };
        if !then.is_empty() && *then != now {
            return Err(format!(
                "the URL of the remote {} changed since handoff was enabled (was {then}, now {now}): nothing is sent \
                 or fetched there until `ccmemctl handoff enable` is run again",
                setting.remote
            ));
        }
        Ok(now)
    };
    let remote = setting.remote.as_str();
    let id = refs::author_id(&maker.author, &maker.machine, root);
    let sock = work.sock.as_deref();
    let mut renamed = None;
    if let Some(branch) = &branch_now {
        // A branch renamed (`git branch -m`) takes its handoff with it.
        if let Some(old) = refs::renamed_from(root, &id, branch) {
            match refs::rename(root, &id, &old, branch) {
                Ok(()) => {
                    done.said.push(format!("the handoff of {old} follows the branch, renamed {branch}"));
                    renamed = Some(old);
                }
                Err(e) => tracing::warn!(project = %root.display(), "{e}"),
            }
        }
        if let Some(s) = &work.session {
            write(root, s, branch, &id, &maker, &mut done);
        }
    } else if work.push {
        done.error = Some("no branch is checked out (detached HEAD): there is no branch to hand off".into());
    }
    if work.push {
        if let Some(branch) = &branch_now {
            let r = url_of(true).and_then(|url| {
                remote::push(root, &outbox, (remote, &url), &id, branch, sock)?;
                // The old name's copy there goes with the rename.
                if let Some(old) = &renamed {
                    let _ = remote::delete(root, &outbox, (remote, &url), &[refs::own_ref(&id, old)], sock);
                }
                Ok(())
            });
            if r.is_ok() {
                done.said.push(format!("pushed the handoff on {branch} to {remote}"));
            }
            done.pushed = Some(r);
        }
    }
    if work.fetch {
        let r =
            url_of(false).and_then(|url| remote::fetch(root, &fetched, (remote, &url), branch_now.as_deref(), sock));
        if r.is_ok() {
            done.said.push(format!("fetched the handoffs of {remote}"));
        }
        done.fetched = Some(r);
    }
    if let Some(remote_too) = work.forget {
        match url_of(true) {
            Ok(url) => forget(root, &repos, (remote, &url), &id, remote_too, sock, &mut done),
            Err(e) => done.error = Some(e),
        }
    }
    if let Some(remote_too) = work.prune {
        match url_of(false).and_then(|fetch| Ok((fetch, url_of(true)?))) {
            Ok((fetch, push)) => {
                let urls = Urls { remote, fetch: &fetch, push: &push };
                prune(root, &repos, &urls, &id, remote_too, sock, branch_now.as_deref(), &mut done)
            }
            Err(e) => done.error = Some(e),
        }
    }
    let branch = work.branch.or(branch_now);
    match branch {
        Some(b) if refs::branch_ok(&b) => {
            (done.seen, done.more) = refs::on_branch(root, &fetched, remote, &id, &b);
            done.branch = b;
        }
        Some(b) if work.asked => done.error = Some(format!("{b:?} is not a branch name git takes")),
        _ => {}
    }
    done.maker = Some(maker);
    done
}

/// ccmem's own repositories beside a project, in its state dir.
struct Repos<'a> {
    /// What the last fetch brought.
    fetched: &'a Path,
    /// This clone's handoffs as they were sent.
    outbox: &'a Path,
}

impl Repos<'_> {
    /// The names of the two in the project's state dir.
    const FETCHED: &'static str = "handoffs.git";
    const OUTBOX: &'static str = "outbox.git";
}

/// A remote's name and its URLs (as pinned at enable).
struct Urls<'a> {
    remote: &'a str,
    fetch: &'a str,
    push: &'a str,
}

/// A `.git` file can name another repository's directory (one that does not name this
/// checkout back as its worktree or submodule): nothing is written there, or sent from it.
fn own_repository(root: &Path) -> Result<(), String> {
    let common = git::local(root, &["rev-parse", "--path-format=absolute", "--git-common-dir"], None).text();
    if common.is_empty() || !crate::observe::git::own_git_dir(root, Path::new(&common)) {
        return Err(format!(
            "{}'s .git names another repository's directory, not this checkout's: no handoff is written or sent",
            root.display()
        ));
    }
    Ok(())
}

/// Turns handoff on for `root`, after checking the remote.
fn enable(root: &Path, remote: Option<String>, auto: bool, branch: Option<&str>) -> Result<Setting, String> {
    if crate::observe::git::benched(root) {
        return Err(crate::observe::git::benched_warning());
    }
    if !git::local(root, &["rev-parse", "--git-dir"], None).ok {
        return Err(format!("{} is not in a git repository: a handoff travels through git", root.display()));
    }
    own_repository(root)?;
    let remote = remote.or_else(|| branch.and_then(|b| remote::upstream(root, b))).unwrap_or_else(|| "origin".into());
    if !remote::name_ok(&remote) {
        return Err(format!("{remote:?} cannot be a remote's name here (letters, digits, '.', '_', '-')"));
    }
    let s =
        Setting { url: remote::url(root, &remote, false)?, push_url: remote::url(root, &remote, true)?, remote, auto };
    settings::set(root, Some(s.clone()))?;
    Ok(s)
}

/// Writes the handoff of `s` on `branch`.
fn write(root: &Path, s: &Session, branch: &str, id: &str, maker: &make::Maker, done: &mut Done) {
    let commit = git::local(root, &["rev-parse", "--verify", "-q", "HEAD"], None).text();
    let now = crate::clock::iso(chrono::Utc::now());
    let Some(h) = make::handoff(s, branch, &commit, maker, &now) else { return };
    match refs::write(root, id, &h) {
        Ok(Some(c)) => done.said.push(format!("wrote the handoff on {branch} ({})", make::short(&c))),
        Ok(None) => {}
        Err(e) => {
            tracing::warn!(project = %root.display(), "handoff not written: {e}");
            done.error.get_or_insert(format!("the handoff was not written: {e}"));
        }
    }
}

/// Deletes this clone's refs here (and its own on the remote), and what fetches brought.
fn forget(
    root: &Path,
    repos: &Repos,
    (remote, url): (&str, &str),
    id: &str,
    remote_too: bool,
    sock: Option<&Path>,
    done: &mut Done,
) {
    let own: Vec<String> = refs::list(root, &format!("{}{id}/", refs::OWN)).into_iter().map(|(n, _)| n).collect();
    if remote_too {
        if let Err(e) = remote::delete(root, repos.outbox, (remote, url), &own, sock) {
            done.error = Some(e);
            return;
        }
    }
    let n = own.iter().filter(|name| refs::delete(root, name).is_ok()).count();
    let _ = std::fs::remove_dir_all(repos.fetched);
    let _ = std::fs::remove_dir_all(repos.outbox);
    done.said.push(format!(
        "deleted this clone's {n} handoff ref(s) and what was fetched{}",
        if remote_too { format!(", and this clone's {} on {remote}", own.len()) } else { String::new() }
    ));
}

/// Drops the handoffs of branches gone from the remote that are merged there or gone here
/// too; the branch checked out, a branch still on the remote, or one only here with commits
/// of its own not merged, keeps its handoff. (A branch only here whose commits are all in the
/// default branch counts as merged.)
#[allow(clippy::too_many_arguments)]
fn prune(
    root: &Path,
    repos: &Repos,
    urls: &Urls,
    id: &str,
    remote_too: bool,
    sock: Option<&Path>,
    current: Option<&str>,
    done: &mut Done,
) {
    // What the remote holds now, this clone's own copies there among it.
    let remote = urls.remote;
    if let Err(e) = remote::fetch(root, repos.fetched, (remote, urls.fetch), current, sock) {
        done.error = Some(e);
        return;
    }
    let upstream = match remote::branches(root, repos.outbox, (remote, urls.fetch), sock) {
        Ok(b) => b,
        Err(e) => {
            done.error = Some(e);
            return;
        }
    };
    let default =
        ["HEAD", "main", "master"].iter().find_map(|b| refs::resolve(root, &format!("refs/remotes/{remote}/{b}")));
    let gone = |branch: &str| {
        if Some(branch) == current || upstream.iter().any(|b| b == branch) {
            return false;
        }
        match refs::resolve(root, &format!("refs/heads/{branch}")) {
            None => true,
            // Merged: its commits are in the default branch.
            Some(tip) => {
                default.as_ref().is_some_and(|d| git::local(root, &["merge-base", "--is-ancestor", &tip, d], None).ok)
            }
        }
    };
    let own_prefix = format!("{}{id}/", refs::OWN);
    let fetched_prefix = format!("{}{remote}/", refs::FETCHED);
    let mut own_dropped = Vec::new();
    let mut dropped = 0;
    for (name, _) in refs::list(root, &own_prefix) {
        let Some(branch) = name.strip_prefix(&own_prefix) else { continue };
        if gone(branch) && refs::delete(root, &name).is_ok() {
            own_dropped.push(name.clone());
            dropped += 1;
        }
    }
    for (name, _) in refs::list(repos.fetched, &fetched_prefix) {
        let Some((who, branch)) = name.strip_prefix(&fetched_prefix).and_then(|r| r.split_once('/')) else { continue };
        if gone(branch) {
            if who == id {
                own_dropped.push(refs::own_ref(id, branch));
            } else {
                dropped += 1;
            }
            let _ = refs::delete(repos.fetched, &name);
        }
    }
    own_dropped.sort();
    own_dropped.dedup();
    if remote_too {
        if let Err(e) = remote::delete(root, repos.outbox, (remote, urls.push), &own_dropped, sock) {
            done.error = Some(e);
            return;
        }
    }
    done.said.push(format!(
        "pruned {dropped} handoff ref(s) of branches merged or deleted upstream{}",
        if remote_too { format!(" ({} of this clone's on {remote})", own_dropped.len()) } else { String::new() }
    ));
}

#[cfg(test)]
mod tests;
