//! `ccmemctl`: the ccmem client. All logic lives in `ccmem-client`.
fn main() -> std::process::ExitCode {
    ccmem_client::main()
}
