//! The npm route's hook cost: `cargo bench --bench install`.
//!
//! The npm packages are made from this release build as the release makes them
//! (`npm/stage.mjs --pack`), installed with the real npm into a temporary prefix (`npm i
//! -g`), and one hook (PostToolUse for an Edit, a Claude Code payload on stdin) is run, in
//! the same run and interleaved so that each sees the same machine:
//!
//! - through the `ccmemctl` npm put on PATH (what the plugin's hooks run);
//! - through the source-built `ccmemctl` (`target/release`), the baseline;
//! - `/bin/true` with the same stdin, the floor;
//! - `node -e 0`: what a hook through a node shim would add at the least.
//!
//! Both clients talk to one daemon. Target (issue 30): the npm route's median within 10 %
//! of the source-built one's. `CCMEM_BENCH_QUICK=1` for a short run. Needs npm.

#[cfg(unix)]
#[path = "../tests/common/mod.rs"]
mod common;
#[cfg(unix)]
mod figures;

// The benchmark drives ccmemd over Unix sockets (and reads /proc where there is one).
#[cfg(unix)]
mod bench {
    use super::{common, figures};
    use common::*;
    use serde_json::json;
    use std::io::Write;
    use std::path::Path;
    use std::process::{Command, Stdio};

    pub(crate) fn main() -> std::process::ExitCode {
        let quick = figures::quick();
        let runs = if quick { 40 } else { 300 };
        println!(
            "ccmem npm route: hook latency ({} cores, {runs} runs each){}",
            std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
            if quick { " [quick]" } else { "" }
        );
        let env = Env::new();
        let packages =
            npm::pack(Path::new(CCMEMCTL).parent().expect("bin dir"), &env.path().join("packages"), None, false);
        let prefix = env.path().join("npm-global");
        let out = npm::install(&prefix, &[&packages.platform, &packages.main], &[]);
        assert_ok(&out, "npm install -g");
        let npm_ctl = prefix.join("bin/ccmemctl");
        assert!(npm::is_native(&npm_ctl), "npm's ccmemctl is not the native program");
        println!("installed with npm into {}", prefix.display());
        println!();

        let d = env.start_daemon(&[]);
        let root = repo(&env, "app");
        let payload = ev(
        &root,
        "bench-conv",
        "PostToolUse",
        json!({"tool_name": "Edit", "tool_input": {"file_path": root.join("src/lib.rs"), "old_string": "a", "new_string": "b"}, "tool_response": {"filePath": "src/lib.rs", "oldString": "a", "newString": "b"}}),
    )
    .to_string()
    .into_bytes();
        let node = Command::new("node").arg("--version").output().is_ok_and(|o| o.status.success());

        let hook = |ctl: &Path| {
            figures::time_ms(|| {
                let mut cmd = Command::new(ctl);
                env.apply(&mut cmd);
                let mut c = cmd.arg("hook").stdin(Stdio::piped()).stdout(Stdio::null()).spawn().expect("hook");
                let _ = c.stdin.take().expect("stdin").write_all(&payload);
                c.wait().expect("hook");
            })
        };
        // The npm install's files were just written: a few runs first to bring them in.
        for _ in 0..5 {
            hook(&npm_ctl);
            hook(Path::new(CCMEMCTL));
        }
        let (mut via_npm, mut source, mut floor, mut via_node) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for i in 0..runs {
            // Each goes first every other run: the one after another hook would find the
            // daemon still busy with it.
            if i % 2 == 0 {
                via_npm.push(hook(&npm_ctl));
                source.push(hook(Path::new(CCMEMCTL)));
            } else {
                source.push(hook(Path::new(CCMEMCTL)));
                via_npm.push(hook(&npm_ctl));
            }
            floor.push(figures::time_ms(|| {
                let mut c =
                    Command::new("/bin/true").stdin(Stdio::piped()).stdout(Stdio::null()).spawn().expect("true");
                let _ = c.stdin.take().expect("stdin").write_all(&payload);
                c.wait().expect("true");
            }));
            if node {
                via_node.push(figures::time_ms(|| {
                    Command::new("node").args(["-e", "0"]).stdout(Stdio::null()).status().expect("node");
                }));
            }
        }
        println!("{:<44} {:>9} {:>9}   {:>12}", "hook (PostToolUse, Edit)", "median ms", "p99 ms", "× /bin/true");
        let row = |name: &str, v: &[f64]| {
            let (m, p) = (figures::quantile(v, 0.5), figures::quantile(v, 0.99));
            println!("{name:<44} {m:>9.3} {p:>9.3}   {:>11.2}×", m / figures::quantile(&floor, 0.5));
            m
        };
        let npm_m = row("through npm's ccmemctl (on PATH)", &via_npm);
        let src_m = row("through the source-built ccmemctl", &source);
        let true_m = row("/bin/true", &floor);
        figures::record(
            "hook through npm's ccmemctl, median (beside the source-built)",
            npm_m,
            "ms",
            "source-built ccmemctl, median",
            src_m,
        );
        figures::record(
            "hook through npm's ccmemctl, median (beside /bin/true)",
            npm_m,
            "ms",
            "/bin/true, median",
            true_m,
        );
        figures::record("hook through the source-built ccmemctl, median", src_m, "ms", "/bin/true, median", true_m);
        if node {
            let node_m = row("node -e 0 (a node shim's least cost)", &via_node);
            figures::record("node -e 0, median", node_m, "ms", "/bin/true, median", true_m);
        }
        println!();
        assert!(!d.log().contains("panicked"));
        println!("targets:");
        figures::target(
            &format!(
                "hook through npm's ccmemctl within 10 % of the source-built one ({:.2}×; {:.2}× and {:.2}× /bin/true)",
                npm_m / src_m,
                npm_m / true_m,
                src_m / true_m
            ),
            npm_m <= 1.10 * src_m,
        );
        figures::finish("install", quick)
    }
}

#[cfg(unix)]
fn main() -> std::process::ExitCode {
    bench::main()
}

/// Elsewhere it says so and fails: it measures nothing there.
#[cfg(not(unix))]
fn main() -> std::process::ExitCode {
    eprintln!("this benchmark runs on Linux and macOS: it drives ccmemd over Unix sockets");
    std::process::ExitCode::FAILURE
}
