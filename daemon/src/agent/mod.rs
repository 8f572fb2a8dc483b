//! The coding agents' side: each agent's adapter, the neutral hook events they make, the
//! transcripts, the facts and goals agents ask to keep, and the resume context they are given.

pub mod adapters;
pub mod context;
pub mod directives;
pub mod facts;
pub mod hooks;
pub mod intents;
pub mod transcript;
