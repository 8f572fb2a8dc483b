//! Each project's session and who keeps it: one task per project (its mailbox, its jobs),
//! the registry of live projects, and the checkpoints.

pub mod checkpoint;
pub mod registry;
pub mod task;
