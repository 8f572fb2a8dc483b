//! ccmem's npm packages, made as the release makes them (`npm/stage.mjs --pack`) from the
//! programs under test, and installed with the real npm into a prefix of their own, as
//! `npm i -g` does: shared by `tests/npm.rs` and the install benchmark.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// This machine's platform key, as the platform packages are named (npm's `os-cpu`).
pub fn platform_key() -> String {
    let os = match std::env::consts::OS {
        "windows" => "win32",
        "macos" => "darwin",
        os => os,
    };
    let cpu = match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        cpu => cpu,
    };
    format!("{os}-{cpu}")
}

/// The tarballs `npm pack` made.
pub struct Packages {
    /// `ccmem-<version>.tgz`: the stand-ins and install.js.
    pub main: PathBuf,
    /// `ccmem-<platform>-<version>.tgz`: this machine's native programs.
    pub platform: PathBuf,
}

/// Stages and packs the packages into `out` from the programs in `bin_dir`; with `strip`,
/// each stripped of its debug information first (a debug build's 300 MB would only slow
/// npm down; the code is the same). `version` overrides Cargo.toml's.
pub fn pack(bin_dir: &Path, out: &Path, version: Option<&str>, strip: bool) -> Packages {
    let stripped = out.join("bin");
    std::fs::create_dir_all(&stripped).expect("mkdir");
    for program in ["ccmemctl", "ccmemd", "ccmem-mcp"] {
        let (from, to) = (bin_dir.join(program), stripped.join(program));
        let done = strip && Command::new("strip").arg("-o").arg(&to).arg(&from).status().is_ok_and(|s| s.success());
        if !done {
            std::fs::copy(&from, &to).expect("copy a program");
        }
    }
    let key = platform_key();
    let v = version.unwrap_or(VERSION);
    let staged = stage(|cmd| {
        cmd.arg("--out").arg(out).args(["--pack", "--version", v]).arg(format!("{key}={}", stripped.display()));
    });
    assert!(staged.status.success(), "npm/stage.mjs failed: {}", super::text(&staged.stderr));
    let packages =
        Packages { main: out.join(format!("ccmem-{v}.tgz")), platform: out.join(format!("ccmem-{key}-{v}.tgz")) };
    assert!(packages.main.is_file() && packages.platform.is_file(), "{}", super::text(&staged.stdout));
    packages
}

/// The workspace's version, which the programs report.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Runs `node npm/stage.mjs` with the arguments `args` gives it.
pub fn stage(args: impl FnOnce(&mut Command)) -> Output {
    let mut cmd = Command::new("node");
    cmd.arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("npm/stage.mjs"));
    args(&mut cmd);
    cmd.output().expect("run node npm/stage.mjs")
}

/// `npm i -g` of `tarballs` into `prefix`, offline (the tarballs hold everything; the other
/// platforms' optional packages are skipped as npm skips them on a machine they do not
/// fit), with `extra` arguments.
pub fn install(prefix: &Path, tarballs: &[&Path], extra: &[&str]) -> Output {
    let cache = prefix.with_extension("npm-cache");
    Command::new("npm")
        .args(["install", "--global", "--offline", "--no-audit", "--no-fund", "--loglevel=warn"])
        .arg("--prefix")
        .arg(prefix)
        .arg("--cache")
        .arg(&cache)
        .args(extra)
        .args(tarballs)
        .env("npm_config_update_notifier", "false")
        .output()
        .expect("run npm")
}

/// Whether `p` (after symbolic links) is a native program rather than a script: its first
/// bytes are an ELF or Mach-O header.
pub fn is_native(p: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 4];
    let read = std::fs::File::open(p).and_then(|mut f| f.read_exact(&mut head));
    read.is_ok() && (head == *b"\x7fELF" || head == [0xcf, 0xfa, 0xed, 0xfe])
}
