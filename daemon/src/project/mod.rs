//! Each project's session and who keeps it: one task per project (its mailbox, its jobs),
//! the registry of live projects, and the checkpoints and archives on disk.

pub mod checkpoint;
pub mod registry;
pub mod store;
pub mod task;
