//! Files written whole or not at all, and files read from a repository without trusting it.

pub mod atomic;
pub mod untrusted;
