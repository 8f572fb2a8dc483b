//! What a shell command is: a test run (and of which runner), a build, or neither.
//!
//! Commands are read roughly, as a user would: each part of a pipeline or `&&` chain is
//! looked at after dropping environment assignments and wrappers (`npx`, `timeout 60`,
//! `uv run`, `bundle exec`, …).

/// What the command runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Kind {
    /// A test run: the runner when the command names it (None: read it from the output).
    pub test: Option<Option<&'static str>>,
    /// The tests are end-to-end (Playwright, Cypress, a `test:e2e` script).
    pub e2e: bool,
    /// A build or type check.
    pub build: bool,
}

/// Reads a command line.
pub fn classify(command: &str) -> Kind {
    let mut kind = Kind::default();
    for part in crate::observe::cmdline::pipelines(command).into_iter().flatten() {
        let words: Vec<&str> = part.split_whitespace().collect();
        let words = unwrap(&words);
        let Some(&first) = words.first() else { continue };
        let first = first.rsplit('/').next().unwrap_or(first);
        let second = words.get(1).copied().unwrap_or("");
        let has = |w: &str| words.contains(&w);
        let script = |s: &str| {
            s == "test" || s.starts_with("test:") || s.starts_with("test-") || s == "e2e" || s.starts_with("e2e:")
        };
        let (test, e2e): (Option<Option<&'static str>>, bool) = match first {
            "cargo" if second == "test" || second == "t" => (Some(Some("cargo")), false),
            "cargo" if second == "nextest" => (Some(Some("nextest")), false),
            "pytest" | "py.test" => (Some(Some("pytest")), false),
            "python" | "python3" if second == "-m" && words.get(2) == Some(&"pytest") => (Some(Some("pytest")), false),
            "python" | "python3" if second == "-m" && words.get(2) == Some(&"unittest") => {
                (Some(Some("unittest")), false)
            }
            // Django's runner prints unittest's summary.
            "python" | "python3" if second.ends_with("manage.py") && words.get(2) == Some(&"test") => {
                (Some(Some("unittest")), false)
            }
            "ctest" => (Some(Some("ctest")), false),
            "mix" if second == "test" => (Some(Some("mix")), false),
            "go" if second == "test" => (Some(Some("go")), false),
            "jest" => (Some(Some("jest")), false),
            "vitest" if second != "dev" && second != "watch" => (Some(Some("vitest")), false),
            "mocha" => (Some(Some("mocha")), false),
            "node" if has("--test") => (Some(Some("node")), false),
            "playwright" if second == "test" => (Some(Some("playwright")), true),
            "cypress" if second == "run" => (Some(Some("cypress")), true),
            "rspec" => (Some(Some("rspec")), false),
            "phpunit" => (Some(Some("phpunit")), false),
            "dotnet" if second == "test" => (Some(Some("dotnet")), false),
            "mvn" | "mvnw" if has("test") || has("verify") => (Some(Some("maven")), false),
            "gradle" | "gradlew" if words.iter().any(|w| *w == "test" || w.ends_with(":test") || *w == "check") => {
                (Some(Some("gradle")), false)
            }
            "bun" if second == "test" => (Some(Some("bun")), false),
            "npm" | "pnpm" | "yarn" | "bun" if second == "t" || script(second) => (Some(None), second.contains("e2e")),
            "npm" | "pnpm" | "yarn" | "bun" if second == "run" && words.get(2).is_some_and(|s| script(s)) => {
                (Some(None), words[2].contains("e2e"))
            }
            "make" | "just" | "mise" | "task" if words[1..].iter().any(|w| script(w)) => (Some(None), has("e2e")),
            _ => (None, false),
        };
        if test.is_some() && kind.test.is_none() {
            kind.test = test;
            kind.e2e = e2e;
        }
        let build = match first {
            "cargo" => matches!(second, "build" | "b" | "check" | "c" | "clippy" | "rustc"),
            "tsc" | "vue-tsc" => true,
            "go" => matches!(second, "build" | "vet" | "install"),
            "npm" | "pnpm" | "yarn" | "bun" => {
                second == "build"
                    || second == "run" && words.get(2).is_some_and(|s| s.starts_with("build") || *s == "typecheck")
            }
            "next" | "vite" | "nuxt" | "astro" | "webpack" | "esbuild" | "rollup" => {
                second == "build" || first == "webpack"
            }
            "make" | "ninja" | "cmake" => !words[1..].iter().any(|w| script(w) || *w == "clean"),
            "mvn" | "mvnw" => has("compile") || has("package") || has("install"),
            "gradle" | "gradlew" => has("build") || has("assemble") || has("compileJava"),
            "dotnet" => second == "build",
            "gcc" | "g++" | "cc" | "clang" | "rustc" | "javac" => true,
            _ => false,
        };
        kind.build |= build;
    }
    kind
}

/// The words after environment assignments and wrapper commands.
fn unwrap<'a, 'b>(mut words: &'b [&'a str]) -> &'b [&'a str] {
    loop {
        let Some(&w) = words.first() else { return words };
        let skip = if w.contains('=') && !w.starts_with('-') && !w.starts_with('=') {
            1
        } else {
            match w {
                "env" | "npx" | "bunx" | "pnpx" | "time" | "nice" | "command" | "exec" | "sudo" | "nohup"
                | "xvfb-run" => 1,
                "timeout" => 2,
                "pnpm" | "yarn" if words.get(1) == Some(&"exec") || words.get(1) == Some(&"dlx") => 2,
                "uv" | "poetry" | "pipenv" | "pdm" | "hatch" if words.get(1) == Some(&"run") => 2,
                "bundle" if words.get(1) == Some(&"exec") => 2,
                "cd" => return &[],
                _ => 0,
            }
        };
        if skip == 0 || skip > words.len() {
            return words;
        }
        words = &words[skip..];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_recognised() {
        let t = |c: &str| classify(c).test;
        assert_eq!(t("cargo test --workspace"), Some(Some("cargo")));
        assert_eq!(t("RUST_BACKTRACE=1 cargo nextest run"), Some(Some("nextest")));
        assert_eq!(t("cd api && uv run pytest -x tests/ 2>&1 | tail -40"), Some(Some("pytest")));
        assert_eq!(t("python3 -m pytest"), Some(Some("pytest")));
        assert_eq!(t("go test ./..."), Some(Some("go")));
        assert_eq!(t("npx jest --ci"), Some(Some("jest")));
        assert_eq!(t("npx vitest run"), Some(Some("vitest")));
        assert_eq!(t("node --test"), Some(Some("node")));
        assert_eq!(t("bundle exec rspec"), Some(Some("rspec")));
        assert_eq!(t("./vendor/bin/phpunit tests"), Some(Some("phpunit")));
        assert_eq!(t("./mvnw -q test"), Some(Some("maven")));
        assert_eq!(t("./gradlew :app:test"), Some(Some("gradle")));
        assert_eq!(t("timeout 300 dotnet test"), Some(Some("dotnet")));
        assert_eq!(t("bun test"), Some(Some("bun")));
        assert_eq!(t("npm test"), Some(None));
        assert_eq!(t("pnpm run test:unit"), Some(None));
        assert_eq!(t("make test"), Some(None));
        let e = classify("npx playwright test --project=chromium");
        assert_eq!((e.test, e.e2e), (Some(Some("playwright")), true));
        let e = classify("npm run test:e2e");
        assert_eq!((e.test, e.e2e), (Some(None), true));
        for not in [
            "ls -la",
            "cargo run",
            "git commit -m 'test'",
            "echo npm test",
            "grep test src",
            "vitest dev",
            "cat test.log",
        ] {
            assert_eq!(t(not), None, "{not}");
        }
    }

    #[test]
    fn builds_are_recognised() {
        let b = |c: &str| classify(c).build;
        for yes in [
            "cargo build --release",
            "cargo check",
            "npx tsc --noEmit",
            "npm run build",
            "pnpm build",
            "make",
            "make -j4 all",
            "go build ./...",
            "next build",
            "mvn package",
        ] {
            assert!(b(yes), "{yes}");
        }
        for no in ["cargo test", "make test", "make clean", "npm install", "ls build/", "git status"] {
            assert!(!b(no), "{no}");
        }
    }
}
