//! Tells the tests what this machine has, so that a test needing root, libfaketime or the
//! systemd tools is reported as `ignored, needs …` by `cargo test` instead of passing
//! without doing anything. Checked when the package is built: after installing one of them,
//! `touch build.rs` (or `cargo clean -p ccmem`) to have its tests run.

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    for cfg in [
        "ccmem_root",
        "ccmem_faketime",
        "ccmem_systemd_analyze",
        "ccmem_socket_activate",
        "ccmem_npm",
        "ccmem_python",
        "ccmem_tmux",
    ] {
        println!("cargo::rustc-check-cfg=cfg({cfg})");
    }
    if is_root() {
        println!("cargo::rustc-cfg=ccmem_root");
    }
    if let Some(lib) = faketime() {
        println!("cargo::rustc-cfg=ccmem_faketime");
        println!("cargo::rustc-env=CCMEM_FAKETIME={}", lib.display());
    }
    if on_path("systemd-analyze") {
        println!("cargo::rustc-cfg=ccmem_systemd_analyze");
    }
    // The Claude Code suite installs the CLI with npm (or runs the one CCMEM_CLAUDE_BIN names).
    println!("cargo::rerun-if-env-changed=CCMEM_CLAUDE_BIN");
    if on_path("npm") || std::env::var_os("CCMEM_CLAUDE_BIN").is_some() {
        println!("cargo::rustc-cfg=ccmem_npm");
    }
    // The MCP tests install the official MCP Python SDK into a virtualenv.
    if on_path("python3") {
        println!("cargo::rustc-cfg=ccmem_python");
    }
    // The view's end-to-end test runs `ccmemctl ui` in a real terminal: tmux's.
    if on_path("tmux") {
        println!("cargo::rustc-cfg=ccmem_tmux");
    }
    if on_path("systemd-socket-activate") {
        println!("cargo::rustc-cfg=ccmem_socket_activate");
    }
}

/// libfaketime's multi-threaded library, wherever the distribution put it.
fn faketime() -> Option<std::path::PathBuf> {
    let mut dirs: Vec<std::path::PathBuf> =
        ["/usr/lib/faketime", "/usr/lib64/faketime", "/usr/local/lib/faketime", "/opt/homebrew/lib/faketime"]
            .iter()
            .map(std::path::PathBuf::from)
            .collect();
    // Debian and Ubuntu: /usr/lib/<triplet>/faketime.
    if let Ok(rd) = std::fs::read_dir("/usr/lib") {
        dirs.extend(rd.flatten().map(|e| e.path().join("faketime")));
    }
    dirs.iter().flat_map(|d| ["libfaketimeMT.so.1", "libfaketime.1.dylib"].map(|f| d.join(f))).find(|p| p.is_file())
}

fn is_root() -> bool {
    // `Uid:` real, effective, saved, fs: the effective one counts.
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("Uid:")).map(|l| l.split_whitespace().nth(2) == Some("0")))
        .unwrap_or(false)
}

fn on_path(tool: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(tool).is_file()))
}
