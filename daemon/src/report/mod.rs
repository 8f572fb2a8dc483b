//! The session memory report (`.claude/session-memory.md`, seed 000) and the blockers it
//! lists.

pub mod blockers;
pub mod session_memory;
