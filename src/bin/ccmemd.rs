//! `ccmemd`: the per-user ccmem daemon. All logic lives in `ccmem-daemon`.
fn main() -> std::process::ExitCode {
    ccmem_daemon::main()
}
