//! Nothing in a repository runs code or leaks a secret: git config, partial clones, relative PATH
//! entries, secrets in names and output.

use super::*;

#[test]
fn a_repositorys_git_config_runs_nothing() {
    let env = Env::new();
    let _d = env.start_daemon(&[]);
    let root = repo(&env, "app");
    let marker = env.path().join("ran");
    let hook = env.path().join("fsmonitor.sh");
    write_executable(&hook, &format!("#!/bin/sh\ntouch '{}'\n", marker.display()));
    git(&root, &["config", "core.fsmonitor", hook.to_str().unwrap()]);
    // A filter driver that every file goes through, as `git diff` compares the work tree.
    git(&root, &["config", "filter.evil.clean", &format!("{} && cat", hook.display())]);
    // One defined in an included file, and one whose name `-c` cannot express.
    let included = env.path().join("included.cfg");
    std::fs::write(&included, format!("[filter \"inc\"]\n\tclean = {} && cat\n", hook.display())).unwrap();
    git(&root, &["config", "include.path", included.to_str().unwrap()]);
    git(&root, &["config", "filter.x=y.clean", &format!("{} && cat", hook.display())]);
    std::fs::write(root.join(".gitattributes"), "* filter=evil\n*.txt filter=inc\n*.dat filter=x=y\n").unwrap();
    std::fs::write(root.join("notes.txt"), "n\n").unwrap();
    std::fs::write(root.join("blob.dat"), "d\n").unwrap();
    git(
        &root,
        &[
            "-c",
            "filter.evil.clean=cat",
            "-c",
            "filter.inc.clean=cat",
            "-c",
            "filter.x=y.clean=cat",
            "add",
            "notes.txt",
            "blob.dat",
        ],
    );
    std::fs::write(root.join("notes.txt"), "changed\n").unwrap();
    std::fs::write(root.join("blob.dat"), "changed\n").unwrap();
    // Setting the files up ran the `x=y` driver here (`-c` cannot name it): only what ccmem
    // does from now on counts.
    let _ = std::fs::remove_file(&marker);
    std::fs::write(root.join("README.md"), "# changed\n").unwrap();
    std::fs::write(root.join("a.rs"), "x").unwrap();
    env.event(&root, json!({"kind": "file_edited", "path": "a.rs"}));
    assert_ok(&within(&env, &["checkpoint", root.to_str().unwrap()], Duration::from_secs(10)), "checkpoint");
    assert_ne!(read_state(&root)["git"]["branch"], "", "a checkpoint was written");
    assert!(!marker.exists(), "a command from the repository's git config was executed");

    // A driver in `.git/config.worktree` (which `git config --local` does not list), in a
    // repository git does run for.
    let wt = repo(&env, "wt");
    git(&wt, &["config", "extensions.worktreeConfig", "true"]);
    git(&wt, &["config", "--worktree", "filter.wt.clean", &format!("{} && cat", hook.display())]);
    std::fs::write(wt.join(".gitattributes"), "*.md filter=wt\n").unwrap();
    env.event(&wt, json!({"kind": "file_edited", "path": "README.md"}));
    std::fs::write(wt.join("README.md"), "# changed\n").unwrap();
    assert_ok(&within(&env, &["checkpoint", wt.to_str().unwrap()], Duration::from_secs(10)), "checkpoint");
    assert_eq!(read_state(&wt)["git"]["branch"], "main", "git ran for it");
    assert!(!marker.exists(), "a filter from the repository's config.worktree was executed");
}

/// A committed `.gitmodules` that asks git not to ignore a submodule (`ignore = none`) would
/// make `git diff` run `git status` inside it, under the submodule's own config: its filter
/// drivers (in `.git/modules/NAME/config`, a co-user's or an archive's) must not run either.
#[test]
fn a_submodules_config_runs_nothing_whatever_gitmodules_says() {
    let env = Env::new();
    let _d = env.start_daemon(&[]);
    let marker = env.path().join("ran");
    let hook = env.path().join("evil.sh");
    write_executable(&hook, &format!("#!/bin/sh\ntouch '{}'\ncat\n", marker.display()));
    let sub_src = repo(&env, "subsrc");
    std::fs::write(sub_src.join("f.txt"), "data\n").unwrap();
    git(&sub_src, &["add", "f.txt"]);
    git(&sub_src, &["commit", "-qm", "f"]);
    let root = repo(&env, "app");
    git(&root, &["-c", "protocol.file.allow=always", "submodule", "-q", "add", sub_src.to_str().unwrap(), "sub"]);
    git(&root, &["commit", "-qm", "sub"]);
    git(&root, &["config", "-f", ".gitmodules", "submodule.sub.ignore", "none"]);
    git(&root, &["add", ".gitmodules"]);
    git(&root, &["commit", "-qm", "ignore none"]);
    let sub = root.join("sub");
    git(&sub, &["config", "filter.evil.clean", hook.to_str().unwrap()]);
    std::fs::write(sub.join(".gitattributes"), "* filter=evil\n").unwrap();
    env.event(&root, json!({"kind": "file_edited", "path": "top.txt"}));
    // The same bytes with a new time: git must run the clean filter to compare them.
    std::thread::sleep(Duration::from_millis(1100));
    std::fs::write(sub.join("f.txt"), "data\n").unwrap();
    std::fs::write(root.join("top.txt"), "y\n").unwrap();
    git(&root, &["add", "top.txt"]);
    let _ = std::fs::remove_file(&marker);
    assert_ok(&within(&env, &["checkpoint", root.to_str().unwrap()], Duration::from_secs(10)), "checkpoint");
    assert_ne!(read_state(&root)["git"]["branch"], "", "a checkpoint was written");
    assert!(!marker.exists(), "a filter driver from the submodule's config was executed");
}

#[test]
fn a_partial_clone_with_a_missing_object_fetches_nothing_and_runs_nothing() {
    let env = Env::new();
    let _d = env.start_daemon(&[]);
    let marker = env.path().join("ran");
    let root = repo(&env, "app");
    std::fs::write(root.join("a.txt"), "hi\n").unwrap();
    git(&root, &["add", "a.txt"]);
    git(&root, &["commit", "-qm", "a"]);
    let blob = git(&root, &["rev-parse", "HEAD:a.txt"]);
    let blob = blob.trim();
    std::fs::remove_file(root.join(format!(".git/objects/{}/{}", &blob[..2], &blob[2..]))).unwrap();
    for (k, v) in [
        ("core.repositoryformatversion", "1".to_string()),
        ("extensions.partialClone", "origin".into()),
        ("remote.origin.promisor", "true".into()),
        ("remote.origin.url", "/nonexistent".into()),
        ("remote.origin.uploadpack", format!("touch '{}'; false", marker.display())),
    ] {
        git(&root, &["config", k, &v]);
    }
    std::fs::write(root.join("a.txt"), "changed\n").unwrap();
    env.event(&root, json!({"kind": "file_edited", "path": "a.txt"}));
    assert_ok(&within(&env, &["checkpoint", root.to_str().unwrap()], Duration::from_secs(20)), "checkpoint");
    assert!(!marker.exists(), "a lazy fetch ran the repository's upload-pack command");
}

#[test]
fn the_daemon_leaves_the_directory_it_was_started_from_and_relative_path_entries() {
    let env = Env::new();
    // Started from inside a hostile repository whose `node_modules/.bin/git` a relative PATH
    // entry would find.
    let evil = repo(&env, "evil");
    let marker = env.path().join("fake-git-ran");
    let bin = evil.join("node_modules/.bin");
    std::fs::create_dir_all(&bin).unwrap();
    write_executable(&bin.join("git"), &format!("#!/bin/sh\ntouch '{}'\nexec /usr/bin/git \"$@\"\n", marker.display()));
    let path = format!("node_modules/.bin::{}", std::env::var("PATH").unwrap_or_default());
    let mut cmd = env.daemon_cmd(&[]);
    cmd.current_dir(&evil).env("PATH", path);
    let d = Daemon::spawn(&mut cmd, env.path().join("cwd.stderr"));
    d.wait_ready(&env.socket);
    assert_eq!(std::fs::read_link(format!("/proc/{}/cwd", d.pid)).unwrap(), Path::new("/"));
    let other = repo(&env, "other");
    env.event(&other, json!({"kind": "file_edited", "path": "x.rs"}));
    assert_ok(&within(&env, &["checkpoint", other.to_str().unwrap()], Duration::from_secs(10)), "checkpoint");
    assert_eq!(read_state(&other)["git"]["branch"], "main", "git ran");
    assert!(!marker.exists(), "the project's own git ran");
}

#[test]
fn secrets_in_names_bare_passwords_and_runner_output_are_redacted() {
    let env = Env::new();
    let _d = env.start_daemon(&[]);
    let root = repo(&env, "app");
    let token = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
    let file = root.join(format!("src/AKIAQ4XBV7MNP2KD6RTY_{token}.txt"));
    send(
        &env,
        ev(
            &root,
            "c",
            "PostToolUse",
            json!({"tool_name": "Write", "tool_input": {"file_path": file, "content": "x"}, "tool_response": {}}),
        ),
    );
    env.event(
        &root,
        json!({"kind": "note", "text": "db: password=CorrectHorseBatteryStaple and db_password: SuperSecretValue"}),
    );
    let mut child = env
        .ctl_cmd(&["test-report", root.to_str().unwrap(), "--framework", "pytest"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let out = format!("F\n=== FAILURES ===\n___ test_login ___\n>       assert token == \"{token}\"\nE       AssertionError: got {token}\ntest_app.py:3: AssertionError\n=== short test summary info ===\nFAILED test_app.py::test_login - AssertionError: got {token}\n1 failed in 0.01s\n");
        child.stdin.take().unwrap().write_all(out.as_bytes()).unwrap();
    }
    let shown = child.wait_with_output().unwrap();
    assert_ok(&within(&env, &["checkpoint", root.to_str().unwrap()], Duration::from_secs(10)), "checkpoint");
    let everything = [
        text(&shown.stdout),
        env.project_status(&root).to_string(),
        text(&env.ctl(&["context", root.to_str().unwrap()]).stdout),
        std::fs::read_to_string(root.join(".claude/.project-state.json")).unwrap(),
        std::fs::read_to_string(root.join(".claude/session-memory.md")).unwrap(),
        walk(&env.state).iter().map(|p| std::fs::read_to_string(p).unwrap_or_default()).collect(),
    ];
    for (i, t) in everything.iter().enumerate() {
        for secret in [token, "AKIAQ4XBV7MNP2KD6RTY", "CorrectHorseBatteryStaple", "SuperSecretValue"] {
            assert!(!t.contains(secret), "{secret} in place {i}: {t}");
        }
    }
}
