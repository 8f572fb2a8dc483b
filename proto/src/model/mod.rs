//! What ccmem keeps, as the seeds define it: sessions, their environment, facts and goals,
//! knowledge memories, the session-memory report, Claude Code's transcripts as read, and the agents
//! that made them.

pub mod agent;
pub mod environment;
pub mod facts;
pub mod handoff;
pub mod memory;
pub mod report;
pub mod session;
pub mod transcript;
