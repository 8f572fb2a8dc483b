//! The daemon's front: the private socket, the accept loop, one task per connection, the
//! JSON-RPC dispatch, the single-instance lock, service activation and shutdown.

pub mod accept;
pub mod activation;
pub mod connection;
mod forget;
mod import_plan;
pub mod instance;
mod recall;
pub mod rpc;
pub mod shutdown;
pub mod socket;
pub mod state;
mod view;
