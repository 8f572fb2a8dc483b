//! Whether a project's installed dependencies match its lockfiles, per package manager,
//! from file times alone (no network, no package manager run): the lockfile changed after
//! the installed tree did means an install is due.

use crate::clock::iso;
use crate::clock::modified;
use ccmem_proto::model::environment::{DependencyState, DependencyStatus, ManagerStatus};
use chrono::{DateTime, Utc};
use std::path::{Path, PathBuf};

/// How a manager is found and what its installed tree is.
struct Manager {
    name: &'static str,
    /// Files that mark the manager (the first one present is the lockfile).
    locks: &'static [&'static str],
    /// What an install writes (the newest one present counts).
    installed: fn(&Path) -> Vec<PathBuf>,
    /// The command that installs.
    install: &'static str,
    /// Whether a missing installed tree means "not installed" (else: cannot tell).
    must_install: bool,
}

/// `files` inside the project's `node_modules`.
fn node_modules(root: &Path, files: &[&str]) -> Vec<PathBuf> {
    files.iter().map(|f| root.join("node_modules").join(f)).collect()
}

const MANAGERS: &[Manager] = &[
    Manager {
        name: "pnpm",
        locks: &["pnpm-lock.yaml"],
        installed: |r| node_modules(r, &[".modules.yaml", ".pnpm/lock.yaml"]),
        install: "pnpm install",
        must_install: true,
    },
    Manager {
        name: "yarn",
        locks: &["yarn.lock"],
        installed: |r| {
            let mut v = node_modules(r, &[".yarn-integrity", ".yarn-state.yml"]);
            v.push(r.join(".pnp.cjs"));
            v
        },
        install: "yarn install",
        must_install: true,
    },
    Manager {
        name: "bun",
        locks: &["bun.lock", "bun.lockb"],
        installed: |r| vec![r.join("node_modules")],
        install: "bun install",
        must_install: true,
    },
    Manager {
        name: "npm",
        locks: &["package-lock.json", "npm-shrinkwrap.json"],
        installed: |r| node_modules(r, &[".package-lock.json"]),
        install: "npm install",
        must_install: true,
    },
    Manager {
        name: "cargo",
        locks: &["Cargo.lock"],
        installed: |r| {
            ["debug", "release"]
                .iter()
                .flat_map(|p| [r.join("target").join(p).join("deps"), r.join("target").join(p).join(".fingerprint")])
                .collect()
        },
        install: "cargo build",
        must_install: false,
    },
    Manager { name: "uv", locks: &["uv.lock"], installed: site_packages, install: "uv sync", must_install: true },
    Manager {
        name: "poetry",
        locks: &["poetry.lock"],
        installed: site_packages,
        install: "poetry install",
        must_install: false,
    },
    Manager {
        name: "pip",
        locks: &["requirements.lock", "requirements.txt"],
        installed: site_packages,
        install: "pip install -r requirements.txt",
        must_install: false,
    },
    Manager {
        name: "go",
        locks: &["go.sum", "go.mod"],
        installed: |r| vec![r.join("vendor/modules.txt")],
        install: "go mod vendor",
        must_install: false,
    },
];

/// `.venv` or `venv`'s site-packages, whose time changes with every install.
fn site_packages(root: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for venv in [".venv", "venv"] {
        let lib = root.join(venv).join("lib");
        if let Ok(entries) = std::fs::read_dir(&lib) {
            for e in entries.flatten().filter(|e| e.file_name().to_string_lossy().starts_with("python")) {
                found.push(e.path().join("site-packages"));
            }
        }
        found.push(root.join(venv).join("Lib").join("site-packages"));
    }
    found
}

/// A lockfile changed within this of the install is the install's own write.
const SLACK: chrono::Duration = chrono::Duration::seconds(2);

/// Every package manager of the project at `root`, and their worst state.
pub fn detect(root: &Path) -> DependencyStatus {
    let mut managers = Vec::new();
    let node_lock_found =
        MANAGERS.iter().filter(|m| is_node(m.name)).any(|m| m.locks.iter().any(|l| root.join(l).exists()));
    for m in MANAGERS {
        let Some((lock, lock_time)) = m.locks.iter().find_map(|l| modified(&root.join(l)).map(|t| (*l, t))) else {
            continue;
        };
        managers.push(check(m, root, lock, lock_time));
    }
    // A package.json with no lockfile: npm's, installed or not (unless it depends on nothing).
    if !node_lock_found && declares_dependencies(root) {
        if let Some(t) = modified(&root.join("package.json")) {
            let m = MANAGERS.iter().find(|m| m.name == "npm").expect("npm is listed");
            let mut s = check(m, root, "package.json", t);
            if s.status == DependencyState::UpToDate {
                s.status = DependencyState::Unknown;
                s.detail = "no lockfile to compare node_modules with".into();
            }
            managers.push(s);
        }
    }
    let status = if managers.iter().any(|m| m.status == DependencyState::Outdated) {
        DependencyState::Outdated
    } else if managers.iter().any(|m| m.status == DependencyState::UpToDate) {
        DependencyState::UpToDate
    } else {
        DependencyState::Unknown
    };
    DependencyStatus {
        status,
        last_install: managers.iter().filter_map(|m| m.last_install.clone()).max(),
        package_manager: managers.first().map_or("unknown", |m| m.package_manager.as_str()).to_string(),
        outdated_count: None,
        managers,
    }
}

/// Whether the project's package.json names any package to install (one that cannot be
/// read is taken to).
fn declares_dependencies(root: &Path) -> bool {
    let Ok(text) = ccmem_proto::files::untrusted::read_string_in(root, &root.join("package.json"), 4 << 20) else {
        return true;
    };
    let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) else { return true };
    ["dependencies", "devDependencies", "optionalDependencies", "peerDependencies"]
        .iter()
        .any(|k| v.get(*k).and_then(serde_json::Value::as_object).is_some_and(|m| !m.is_empty()))
}

fn is_node(name: &str) -> bool {
    matches!(name, "npm" | "yarn" | "pnpm" | "bun")
}

fn check(m: &Manager, root: &Path, lock: &str, lock_time: DateTime<Utc>) -> ManagerStatus {
    let installed: Option<DateTime<Utc>> = (m.installed)(root).iter().filter_map(|p| modified(p)).max();
    let (status, detail) = match installed {
        None if m.must_install => {
            (DependencyState::Outdated, format!("{lock} present but nothing installed: run `{}`", m.install))
        }
        None => (DependencyState::Unknown, String::new()),
        Some(i) if lock_time > i + SLACK => {
            (DependencyState::Outdated, format!("{lock} changed after the last install: run `{}`", m.install))
        }
        Some(_) => (DependencyState::UpToDate, String::new()),
    };
    ManagerStatus {
        package_manager: m.name.into(),
        lockfile: lock.into(),
        status,
        last_install: installed.map(iso),
        detail,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::time::{Duration, SystemTime};

    fn touch(p: &Path, ago_secs: u64) {
        if let Some(d) = p.parent() {
            fs::create_dir_all(d).unwrap();
        }
        if !p.exists() {
            fs::write(p, "x").unwrap();
        }
        let t = SystemTime::now() - Duration::from_secs(ago_secs);
        fs::File::options().write(true).open(p).unwrap().set_modified(t).unwrap();
    }

    #[test]
    fn lockfiles_against_installed_trees() {
        let tmp = tempfile::tempdir().unwrap();
        let r = tmp.path();
        assert_eq!(detect(r), DependencyStatus { package_manager: "unknown".into(), ..Default::default() });

        touch(&r.join("package-lock.json"), 100);
        let d = detect(r);
        assert_eq!((d.status, d.package_manager.as_str()), (DependencyState::Outdated, "npm"));
        assert!(d.managers[0].detail.contains("npm install"), "{:?}", d.managers[0]);

        touch(&r.join("node_modules/.package-lock.json"), 50);
        let d = detect(r);
        assert_eq!(d.status, DependencyState::UpToDate);
        assert!(d.last_install.is_some());

        touch(&r.join("package-lock.json"), 0);
        assert_eq!(detect(r).status, DependencyState::Outdated, "the lockfile changed after the install");

        touch(&r.join("Cargo.lock"), 0);
        let d = detect(r);
        let cargo = d.managers.iter().find(|m| m.package_manager == "cargo").unwrap();
        assert_eq!(cargo.status, DependencyState::Unknown, "cargo builds on demand: no target is not an error");
        touch(&r.join("target/debug/deps/libx.rlib"), 0);
        let d = detect(r);
        assert_eq!(d.managers.iter().find(|m| m.package_manager == "cargo").unwrap().status, DependencyState::UpToDate);
    }

    #[test]
    fn package_json_alone_and_python() {
        let tmp = tempfile::tempdir().unwrap();
        let r = tmp.path();
        touch(&r.join("package.json"), 0);
        assert_eq!(detect(r).status, DependencyState::Outdated, "nothing installed");
        touch(&r.join("node_modules/.package-lock.json"), 0);
        assert_eq!(detect(r).status, DependencyState::Unknown);

        // A package.json that depends on nothing has nothing to install.
        let tmp = tempfile::tempdir().unwrap();
        let r = tmp.path();
        fs::write(
            r.join("package.json"),
            r#"{"name": "slugify", "type": "module", "scripts": {"test": "node --test"}}"#,
        )
        .unwrap();
        assert_eq!(detect(r), DependencyStatus { package_manager: "unknown".into(), ..Default::default() });
        fs::write(r.join("package.json"), r#"{"name": "a", "devDependencies": {"vitest": "^3"}}"#).unwrap();
        assert_eq!(detect(r).status, DependencyState::Outdated);

        let tmp = tempfile::tempdir().unwrap();
        let r = tmp.path();
        touch(&r.join("uv.lock"), 0);
        touch(&r.join(".venv/lib/python3.12/site-packages/x"), 100);
        let sp = r.join(".venv/lib/python3.12/site-packages");
        fs::File::open(&sp).unwrap().set_modified(SystemTime::now() - Duration::from_secs(100)).unwrap();
        let d = detect(r);
        assert_eq!((d.status, d.package_manager.as_str()), (DependencyState::Outdated, "uv"));
    }
}
