//! The release's pieces agree: the workflow builds every platform the npm packages name;
//! `scripts/release/archive` makes, for each, the archive that Cargo.toml's
//! `[package.metadata.binstall]` templates point `cargo binstall` at, with the programs
//! where its `bin-dir` says, and a checksum that verifies.
#![cfg(unix)]

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const PROGRAMS: [&str; 3] = ["ccmemctl", "ccmemd", "ccmem-mcp"];

/// The platforms the npm packages are made for: key → Rust target.
fn platforms() -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(Path::new(ROOT).join("npm/ccmem/lib/platforms.json")).expect("platforms.json");
    let v: Value = serde_json::from_str(&text).expect("platforms.json is JSON");
    v.as_object()
        .expect("an object")
        .iter()
        .map(|(k, p)| (k.clone(), p["target"].as_str().expect("a target").to_string()))
        .collect()
}

/// cargo-binstall's template syntax: `{ name }` replaced by its value.
fn render(template: &str, vars: &[(&str, &str)]) -> String {
    let mut out = String::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let close = rest[open..].find('}').expect("an unclosed { in a template") + open;
        let name = rest[open + 1..close].trim();
        let value = vars.iter().find(|(k, _)| *k == name).unwrap_or_else(|| panic!("no value for {{ {name} }}")).1;
        out.push_str(value);
        rest = &rest[close + 1..];
    }
    out + rest
}

fn manifest() -> toml::Table {
    toml::from_str(&std::fs::read_to_string(Path::new(ROOT).join("Cargo.toml")).expect("Cargo.toml")).expect("TOML")
}

fn entries(archive: &Path) -> Vec<String> {
    let out = if archive.extension().is_some_and(|e| e == "zip") {
        Command::new("unzip").arg("-Z1").arg(archive).output().expect("unzip")
    } else {
        Command::new("tar").arg("-tzf").arg(archive).output().expect("tar")
    };
    assert!(out.status.success(), "cannot list {}", archive.display());
    String::from_utf8_lossy(&out.stdout).lines().map(|l| l.trim_end_matches('/').to_string()).collect()
}

#[test]
fn the_workflow_builds_every_platform_the_npm_packages_name() {
    let workflow = std::fs::read_to_string(Path::new(ROOT).join(".github/workflows/release.yml")).expect("release.yml");
    for (key, target) in platforms() {
        assert!(workflow.contains(&format!("target: {target},")), "release.yml does not build {target} (npm's {key})");
    }
}

#[test]
fn binstall_finds_the_programs_in_the_archives_the_release_makes() {
    let manifest = manifest();
    let repo = manifest["workspace"]["package"]["repository"].as_str().expect("a repository in [workspace.package]");
    let version = env!("CARGO_PKG_VERSION");
    let meta = &manifest["package"]["metadata"]["binstall"];
    let tmp = tempfile::tempdir().expect("temp dir");

    for (key, target) in platforms() {
        let over = meta.get("overrides").and_then(|o| o.get(target.as_str()));
        let field = |name: &str| {
            over.and_then(|o| o.get(name)).or_else(|| meta.get(name)).and_then(|v| v.as_str()).expect(name).to_string()
        };
        let exe = if target.contains("-windows-") { ".exe" } else { "" };
        // Stand-ins of the right names: what is checked here is where the programs land
        // (tests/npm.rs and the release workflow's smoke tests run real ones).
        let bins = tmp.path().join(format!("bins-{key}"));
        std::fs::create_dir_all(&bins).expect("mkdir");
        for p in PROGRAMS {
            std::fs::write(bins.join(format!("{p}{exe}")), format!("{p} for {target}")).expect("write");
        }
        let out_dir = tmp.path().join("dist");
        let made = Command::new(Path::new(ROOT).join("scripts/release/archive"))
            .args([target.as_str()])
            .arg(&bins)
            .arg(&out_dir)
            .arg(version)
            .output()
            .expect("run scripts/release/archive");
        assert!(made.status.success(), "archive {target}: {}", String::from_utf8_lossy(&made.stderr));
        let archive = PathBuf::from(String::from_utf8_lossy(&made.stdout).trim());

        let vars = [("repo", repo), ("version", version), ("target", target.as_str()), ("binary-ext", exe)];
        let url = render(&field("pkg-url"), &vars);
        let name = archive.file_name().expect("a file").to_string_lossy().into_owned();
        assert_eq!(url, format!("{repo}/releases/download/v{version}/{name}"), "{target}");
        let fmt = field("pkg-fmt");
        assert!(
            (fmt == "tgz" && name.ends_with(".tar.gz")) || (fmt == "zip" && name.ends_with(".zip")),
            "{target}: pkg-fmt {fmt} for {name}"
        );
        let listed = entries(&archive);
        for p in PROGRAMS {
            let mut with = vars.to_vec();
            with.push(("bin", p));
            let at = render(&field("bin-dir"), &with);
            assert!(listed.contains(&at), "{target}: {at} is not in {name}: {listed:?}");
        }
        for doc in ["README.md", "LICENSE-MIT", "LICENSE-APACHE"] {
            assert!(listed.iter().any(|e| e.ends_with(&format!("/{doc}"))), "{target}: no {doc} in {name}");
        }
        // The checksum file verifies, as a user checks it.
        let check = Command::new("sha256sum")
            .arg("-c")
            .arg(format!("{name}.sha256"))
            .current_dir(&out_dir)
            .output()
            .or_else(|_| {
                Command::new("shasum")
                    .args(["-a", "256", "-c"])
                    .arg(format!("{name}.sha256"))
                    .current_dir(&out_dir)
                    .output()
            })
            .expect("sha256sum");
        assert!(check.status.success(), "{name}.sha256: {}", String::from_utf8_lossy(&check.stdout));
    }
}

#[test]
fn templates_render_as_binstall_reads_them() {
    let vars = [("repo", "https://x/y"), ("version", "1.2.3"), ("target", "t")];
    assert_eq!(render("{ repo }/v{version}/a-{ target }.zip", &vars), "https://x/y/v1.2.3/a-t.zip");
}
