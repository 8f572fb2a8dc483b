//! What ccmem learns from the machine and the tree, as plain types: file changes, git,
//! listening dev servers, dependencies, test and build output, task lists, manifests.

pub mod cmdline;
pub mod deps;
pub mod git;
pub mod manifest;
pub mod ports;
pub mod tasks;
pub mod testout;
pub mod watch;
pub mod work;
