//! The coding agent's side: its hook events, its transcripts, the facts and goals it asks to
//! keep, and the resume context it is given.

pub mod context;
pub mod facts;
pub mod hooks;
pub mod intents;
pub mod transcript;
