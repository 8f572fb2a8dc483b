//! The coding agents ccmem serves. Below the adapters that read each one's hook payloads and
//! transcripts, an agent is only a name: shown to the user and the next agent, and used for
//! the command that resumes one of its conversations.

use serde::{Deserialize, Serialize};

/// A coding agent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Agent {
    /// Claude Code (the default: sessions recorded before agents were told apart are its).
    #[default]
    Claude,
    /// OpenAI's Codex CLI.
    Codex,
    /// Google's Gemini CLI.
    Gemini,
    /// OpenCode.
    Opencode,
    /// Pi (and Oh My Pi, its fork).
    Pi,
    /// GitHub Copilot CLI.
    Copilot,
    /// Cursor (its agent in the editor, and `cursor-agent`).
    Cursor,
    /// One a newer ccmem knows: its conversations are kept, with no resume command.
    #[serde(other)]
    Other,
}

impl Agent {
    /// Every agent a user can name (`--agent NAME`).
    pub const ALL: [Agent; 7] =
        [Agent::Claude, Agent::Codex, Agent::Gemini, Agent::Opencode, Agent::Pi, Agent::Copilot, Agent::Cursor];

    /// The name on the command line and in files: `claude`, `codex`, …
    pub fn name(self) -> &'static str {
        match self {
            Agent::Claude => "claude",
            Agent::Codex => "codex",
            Agent::Gemini => "gemini",
            Agent::Opencode => "opencode",
            Agent::Pi => "pi",
            Agent::Copilot => "copilot",
            Agent::Cursor => "cursor",
            Agent::Other => "other",
        }
    }

    /// The name people know it by.
    pub fn display(self) -> &'static str {
        match self {
            Agent::Claude => "Claude Code",
            Agent::Codex => "Codex",
            Agent::Gemini => "Gemini CLI",
            Agent::Opencode => "OpenCode",
            Agent::Pi => "Pi",
            Agent::Copilot => "GitHub Copilot CLI",
            Agent::Cursor => "Cursor",
            Agent::Other => "another agent",
        }
    }

    /// The agent a name means (`claude`, `codex`, …, case ignored).
    pub fn from_name(name: &str) -> Option<Agent> {
        Agent::ALL.into_iter().find(|a| a.name().eq_ignore_ascii_case(name.trim()))
    }

    /// The shell command that resumes conversation `id` (an id as agents make them: letters,
    /// digits, `-`, `_`, `.`, `:`; the caller checked).
    pub fn resume_command(self, id: &str) -> Option<String> {
        match self {
            Agent::Claude => Some(format!("claude --resume {id}")),
            Agent::Codex => Some(format!("codex resume {id}")),
            Agent::Gemini => Some(format!("gemini --resume {id}")),
            Agent::Opencode => Some(format!("opencode --session {id}")),
            Agent::Pi => Some(format!("pi --session {id}")),
            Agent::Copilot => Some(format!("copilot --resume={id}")),
            Agent::Cursor => Some(format!("cursor-agent --resume {id}")),
            Agent::Other => None,
        }
    }

    /// Whether this is the default, which files leave out.
    pub fn is_default(&self) -> bool {
        *self == Agent::Claude
    }
}

impl std::fmt::Display for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The longest conversation id taken (Claude Code's are 36-character UUIDs).
pub const MAX_ID_BYTES: usize = 256;

/// A conversation id as agents make them (UUIDs, or words of letters, digits, `-`, `_`, `.`
/// and `:`, starting with a letter or digit): it is printed in the context, the report,
/// resume commands and on the user's terminal, so an id with line breaks, backticks, shell
/// characters or a terminal's escapes would be an injection, not an id.
pub fn is_conversation_id(s: &str) -> bool {
    // It starts with a letter or digit: `--dangerously-skip-permissions` is an option to
    // `claude --resume "$(ccmemctl resume-id)"`, not an id.
    s.as_bytes().first().is_some_and(u8::is_ascii_alphanumeric)
        && s.len() <= MAX_ID_BYTES
        && s.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b':'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_agents_are_kept_as_other() {
        for a in Agent::ALL {
            assert_eq!(Agent::from_name(a.name()), Some(a));
            let json = serde_json::to_string(&a).unwrap();
            assert_eq!(serde_json::from_str::<Agent>(&json).unwrap(), a);
        }
        assert_eq!(serde_json::from_str::<Agent>("\"windsurf\"").unwrap(), Agent::Other);
        assert_eq!(Agent::from_name(" Codex "), Some(Agent::Codex));
        assert_eq!(Agent::from_name("windsurf"), None);
        assert_eq!(Agent::Codex.resume_command("019f"), Some("codex resume 019f".into()));
    }
}
