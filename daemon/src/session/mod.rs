//! What changes a session: the rules of its events, of shell commands, of test, build and
//! server results; pure functions over the session that the project task owns.

pub mod environment;
pub mod rules;
pub mod shell;
