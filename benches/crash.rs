//! Crash benchmark: `cargo bench --bench crash`.
//!
//! For each real Claude Code transcript of the dev set (`../shared/transcripts/`, or the
//! directory in `CCMEM_CRASH_TRANSCRIPTS`), the bench imports it into a fresh project as the
//! hooks would have delivered it (`ccmemctl import`) and takes the resume context: the
//! uncrashed one. Then, for each of 20 kill points (3 with `CCMEM_BENCH_QUICK=1`), spread at
//! random (a fixed seed) over the import's own duration, it starts the same import in a new
//! home, kills the daemon with SIGKILL at that moment, and runs the import again (the hook
//! path starts a new daemon, which restores the session from the journal; the import resumes
//! where the daemon's answers stopped). The context after it must equal the uncrashed one,
//! line for line, but for the lines that name the moment (the project line with its path,
//! session id and age; the branch line).
//!
//! What it shows: a daemon killed anywhere in a session's events comes back with a session
//! that, completed, is the uncrashed one (nothing counted twice, nothing lost, nothing torn).
//! What it cannot show alone: an import resumes from what the daemon kept, so a daemon that
//! kept less would be filled in again by it. That what the daemon answered was kept is
//! `tests/journal.rs`'s (live hooks, then `kill -9`, then the next session's context).

#[cfg(unix)]
#[path = "../tests/common/mod.rs"]
mod common;
#[cfg(unix)]
mod figures;
#[cfg(unix)]
mod inputs;

#[cfg(unix)]
mod bench {
    use super::{common, figures, inputs};
    use common::*;
    use inputs::{read_maybe_gz, Rng};
    use std::path::{Path, PathBuf};
    use std::process::Stdio;
    use std::time::{Duration, Instant};

    /// The context with what names the moment or the machine left out.
    fn normalized(ctx: &str, root: &Path) -> Vec<String> {
        ctx.lines()
            .filter(|l| !l.starts_with("Project `") && !l.starts_with("Branch `"))
            .map(|l| l.replace(&root.display().to_string(), "<root>"))
            .collect()
    }

    /// A fresh home with the transcript and a project: (env, transcript, project).
    fn setup(name: &str, bytes: &[u8]) -> (Env, PathBuf, PathBuf) {
        let env = Env::new();
        let plain = env.path().join(name);
        std::fs::write(&plain, bytes).expect("write transcript");
        let root = env.path().join("proj");
        std::fs::create_dir_all(&root).expect("mkdir proj");
        git(&root, &["init", "-q"]);
        std::fs::write(root.join("README.md"), "# test\n").expect("write");
        git(&root, &["add", "."]);
        // The same commit (its hash) in every home: the contexts name it.
        let out = std::process::Command::new("git")
            .arg("-C")
            .arg(&root)
            .args(["-c", "user.email=test@example.com", "-c", "user.name=Test", "-c", "commit.gpgsign=false"])
            .args(["commit", "-q", "-m", "initial commit"])
            .env("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z")
            .env("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z")
            .output()
            .expect("git commit");
        assert!(out.status.success(), "git commit: {}", text(&out.stderr));
        let root = std::fs::canonicalize(&root).expect("canonicalize");
        (env, plain, root)
    }

    fn import(env: &Env, t: &Path, root: &Path) -> std::process::Child {
        env.ctl_cmd(&["import", t.to_str().unwrap_or_default(), "--project", root.to_str().unwrap_or_default()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start ccmemctl import")
    }

    fn context(env: &Env, root: &Path) -> String {
        text(&env.ctl(&["context", root.to_str().unwrap_or_default()]).stdout)
    }

    pub(crate) fn main() -> std::process::ExitCode {
        let quick = figures::quick();
        let (dir, files) = inputs::transcripts("CCMEM_CRASH_TRANSCRIPTS", "transcripts");
        if files.is_empty() {
            println!("crash: no transcripts in {} (set CCMEM_CRASH_TRANSCRIPTS); skipped", dir.display());
            return std::process::ExitCode::SUCCESS;
        }
        let points = if quick { 3 } else { 20 };
        println!(
            "ccmem crash benchmark: {} transcripts, {points} SIGKILLs each{}",
            files.len(),
            if quick { " [quick]" } else { "" }
        );
        println!();
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let (mut equal, mut total, mut mid_import) = (0, 0, 0);
        let mut restore_ms = Vec::new();
        for file in &files {
            let name =
                file.file_name().map(|f| f.to_string_lossy().trim_end_matches(".gz").to_string()).unwrap_or_default();
            let bytes = read_maybe_gz(file);
            // The uncrashed run, and how long its import takes.
            let (env, t, root) = setup(&name, &bytes);
            let _d = env.start_daemon(&[]);
            let started = Instant::now();
            let status = import(&env, &t, &root).wait().expect("import");
            let took = started.elapsed();
            assert!(status.success(), "the uncrashed import of {name} failed");
            let want = normalized(&context(&env, &root), &root);
            drop(_d);
            let mut same = 0;
            for k in 0..points {
                let at = took.mul_f64(rng.next_f64());
                let (env, t, root) = setup(&name, &bytes);
                let mut d = env.start_daemon(&[]);
                let mut child = import(&env, &t, &root);
                std::thread::sleep(at);
                let cut_short = child.try_wait().ok().flatten().is_none();
                mid_import += usize::from(cut_short);
                d.signal_and_wait(libc::SIGKILL, Duration::from_secs(10));
                let _ = child.wait();
                // Again: the hook path starts a daemon, which restores from the journal.
                let again = Instant::now();
                let out = env.ctl(&[
                    "import",
                    t.to_str().unwrap_or_default(),
                    "--project",
                    root.to_str().unwrap_or_default(),
                ]);
                restore_ms.push(again.elapsed().as_secs_f64() * 1e3);
                // Taken whole before the kill: the import says so, and that is no failure.
                let whole = text(&out.stderr).contains("is already in the session");
                let imported = out.status.success() || whole;
                env.note_daemon();
                let got = normalized(&context(&env, &root), &root);
                total += 1;
                if imported && got == want {
                    same += 1;
                } else {
                    println!(
                        "  {name}: kill {k} at {:.0} ms (of {:.0}): the context differs",
                        at.as_secs_f64() * 1e3,
                        took.as_secs_f64() * 1e3
                    );
                    if !imported {
                        println!("    the import again failed: {}", text(&out.stderr).trim());
                    }
                    for (i, (a, b)) in want.iter().zip(got.iter()).enumerate() {
                        if a != b {
                            println!("    line {i}: uncrashed {a:?}\n    line {i}: after     {b:?}");
                            break;
                        }
                    }
                    if want.len() != got.len() {
                        println!("    {} lines uncrashed, {} after", want.len(), got.len());
                    }
                    println!("    the import again said: {}", text(&out.stderr).trim());
                    // What the daemons said of the restore, for finding why.
                    let log = std::fs::read_to_string(env.log_file()).unwrap_or_default();
                    for l in log.lines().filter(|l| {
                        l.contains("WARN")
                            || l.contains("ERROR")
                            || l.contains("restored")
                            || l.contains("journal holds")
                    }) {
                        println!("    log: {l}");
                    }
                }
                drop(d);
            }
            equal += same;
            println!(
                "{name}: {same} of {points} kills left the context as it was (import {:.0} ms)",
                took.as_secs_f64() * 1e3
            );
        }
        let median = figures::quantile(&restore_ms, 0.5);
        println!();
        println!("{equal} of {total} contexts equal after a SIGKILL ({mid_import} kills came mid-import)");
        figures::record("contexts equal after SIGKILL", equal as f64, "of total", "kills", total as f64);
        figures::record("import after a kill, median", median, "ms", "", 0.0);
        println!("targets:");
        figures::target(&format!("every context equal after a SIGKILL ({equal} of {total})"), equal == total);
        figures::finish("crash", quick)
    }
}

#[cfg(unix)]
fn main() -> std::process::ExitCode {
    bench::main()
}

#[cfg(not(unix))]
fn main() {
    println!("crash: Unix only (it kills the daemon with SIGKILL)");
}
