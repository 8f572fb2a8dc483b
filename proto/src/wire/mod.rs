//! The protocol between `ccmemctl` and `ccmemd`: framing, the JSON-RPC envelope, the methods
//! with their parameter and result types, and the private socket's place.

pub mod api;
pub mod frame;
pub mod memory;
pub mod paths;
pub mod peer;
pub mod rpc;
