//! `ccmem-mcp`: ccmem's MCP server on stdin/stdout, run by `ccmemctl mcp`. The logic lives
//! in `ccmem-client`.
fn main() -> std::process::ExitCode {
    ccmem_client::mcp::main()
}
