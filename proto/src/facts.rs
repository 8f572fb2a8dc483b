//! Facts and goals (seed 002's Memory): what the agent asked to be remembered with
//! `[REMEMBER: …]`, `[GOAL: … | DEADLINE: …]` and `[DONE: …]`.

use serde::{Deserialize, Serialize};

/// Facts shown to the agent at most (the newest), as seed 002's soft cap says.
pub const FACTS_SHOWN: usize = 50;
/// Active goals shown to the agent at most (the newest).
pub const GOALS_SHOWN: usize = 20;

/// Seed 002's Memory: one per project, and one user-wide for facts marked global.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Memory {
    /// Stored facts, newest last.
    pub facts: Vec<String>,
    /// Active goals, newest last.
    pub goals: Vec<Goal>,
    /// Completed goals, newest last.
    pub completed_goals: Vec<CompletedGoal>,
}

/// An active goal.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Goal {
    /// What is to be achieved.
    pub text: String,
    /// As given (natural language or ISO); not validated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deadline: Option<String>,
    /// ISO 8601.
    pub created_at: String,
}

/// A goal that was reached.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct CompletedGoal {
    /// Copied from the goal.
    pub text: String,
    /// ISO 8601.
    pub completed_at: String,
}

/// Intents found in one assistant message (seed 002's DetectedIntents, all of them).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Intents {
    /// `[REMEMBER: fact]`, with whether it was marked `GLOBAL`.
    pub remember: Vec<(String, bool)>,
    /// `[GOAL: text | DEADLINE: when]`.
    pub goals: Vec<(String, Option<String>)>,
    /// `[DONE: text]`.
    pub done: Vec<String>,
}

/// Finds every `[REMEMBER: …]`, `[REMEMBER GLOBAL: …]`, `[GOAL: … | DEADLINE: …]` and
/// `[DONE: …]` in `text`. Tags are case-insensitive; empty ones are dropped.
pub fn detect(text: &str) -> Intents {
    let mut out = Intents::default();
    let mut rest = text;
    while let Some(open) = rest.find('[') {
        let after = &rest[open + 1..];
        let Some(close) = after.find(']') else { break };
        let inner = &after[..close];
        rest = &after[close + 1..];
        let Some((tag, body)) = inner.split_once(':') else { continue };
        let body = body.trim();
        if body.is_empty() {
            continue;
        }
        match tag.trim().to_ascii_uppercase().as_str() {
            "REMEMBER" => out.remember.push((body.to_string(), false)),
            "REMEMBER GLOBAL" | "REMEMBER-GLOBAL" => out.remember.push((body.to_string(), true)),
            "GOAL" => {
                let (text, deadline) = match body.split_once('|') {
                    Some((t, d)) => {
                        let d = d.trim();
                        let d = d
                            .split_once(':')
                            .filter(|(k, _)| k.trim().eq_ignore_ascii_case("DEADLINE"))
                            .map(|(_, v)| v.trim())
                            .unwrap_or(d);
                        (t.trim(), (!d.is_empty()).then(|| d.to_string()))
                    }
                    None => (body, None),
                };
                if !text.is_empty() {
                    out.goals.push((text.to_string(), deadline));
                }
            }
            "DONE" => out.done.push(body.to_string()),
            _ => {}
        }
    }
    out
}

/// Index of the active goal that `done` best describes: most words in common (relative to
/// the goal's length), ties to the oldest. None when no goal shares a word.
pub fn best_match(goals: &[Goal], done: &str) -> Option<usize> {
    let words = |s: &str| -> Vec<String> {
        s.split(|c: char| !c.is_alphanumeric()).filter(|w| w.len() > 1).map(str::to_lowercase).collect()
    };
    let want = words(done);
    let mut best: Option<(usize, f64)> = None;
    for (i, g) in goals.iter().enumerate() {
        let have = words(&g.text);
        if have.is_empty() {
            continue;
        }
        let shared = have.iter().filter(|w| want.contains(w)).count();
        let exact = g.text.trim().eq_ignore_ascii_case(done.trim());
        let score = if exact { f64::MAX } else { shared as f64 / have.len().max(want.len()) as f64 };
        if shared > 0 && best.is_none_or(|(_, b)| score > b) {
            best = Some((i, score));
        }
    }
    best.map(|(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_every_intent() {
        let i = detect(
            "Done. [REMEMBER: the API uses cursor pagination] and [remember global: prefers pnpm] \
             [GOAL: ship OAuth login | DEADLINE: Friday] [GOAL: write docs] [DONE: oauth login] [REMEMBER: ] [NOTE: x] [broken",
        );
        assert_eq!(
            i.remember,
            [("the API uses cursor pagination".to_string(), false), ("prefers pnpm".to_string(), true)]
        );
        assert_eq!(
            i.goals,
            [("ship OAuth login".to_string(), Some("Friday".to_string())), ("write docs".to_string(), None)]
        );
        assert_eq!(i.done, ["oauth login"]);
    }

    #[test]
    fn done_moves_the_best_matching_goal() {
        let g = |t: &str| Goal { text: t.into(), deadline: None, created_at: String::new() };
        let goals = [g("write the docs"), g("ship OAuth login"), g("fix the login page CSS")];
        assert_eq!(best_match(&goals, "OAuth login shipped"), Some(1));
        assert_eq!(best_match(&goals, "docs"), Some(0));
        assert_eq!(best_match(&goals, "unrelated"), None);
        assert_eq!(best_match(&goals, "fix the login page CSS"), Some(2));
    }
}
