//! Each project's session and who keeps it: one task per project (its mailbox, its jobs),
//! the registry of live projects, and the checkpoints.

pub mod checkpoint;
mod derived;
mod events;
pub mod forget;
mod jobs;
mod journal;
mod late;
pub mod lock;
pub mod msg;
pub mod past;
pub mod past_import;
pub mod registry;
pub mod replay;
pub mod task;
mod travel;
pub mod views;
