//! Facts and goals (seed 002's Memory): what the agent asked to be remembered with
//! `[REMEMBER: …]`, `[GOAL: … | DEADLINE: …]` and `[DONE: …]`.

use serde::{Deserialize, Serialize};

/// Facts shown to the agent at most (the newest), as seed 002's soft cap says.
pub const FACTS_SHOWN: usize = 50;
/// Active goals shown to the agent at most (the newest).
pub const GOALS_SHOWN: usize = 20;

/// Seed 002's `Memory` (named for what it holds, apart from the knowledge memories of seed 003): one per project, and one user-wide for facts marked global.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Facts {
    /// Stored facts, newest last.
    pub facts: Vec<String>,
    /// Active goals, newest last.
    pub goals: Vec<Goal>,
    /// Completed goals, newest last.
    pub completed_goals: Vec<CompletedGoal>,
    /// Of the user-wide facts: where each came from, and whether it still waits for the
    /// user's word (see [`Origin`]). A fact without one (kept by an earlier version) is shown
    /// everywhere, as it was.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub origins: Vec<Origin>,
}

/// Where a user-wide fact was said. A `[REMEMBER GLOBAL: …]` reaches every project's
/// context, and a repository can ask an agent to write one (a hostile `CLAUDE.md`): one said
/// by an agent is kept out of the other projects until
/// the user confirms it (`ccmemctl facts confirm N`), and every one is shown with the
/// project it came from.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Origin {
    /// The fact, as kept in `facts`.
    pub fact: String,
    /// The project it was said in (its root).
    pub project: String,
    /// Said by an agent, and not confirmed by the user yet.
    pub pending: bool,
}

impl Facts {
    /// Where user-wide fact `fact` came from, if known.
    pub fn origin(&self, fact: &str) -> Option<&Origin> {
        self.origins.iter().find(|o| o.fact == fact)
    }

    /// The user-wide facts the project at `root` is shown: those said there, and those
    /// confirmed (or said where the user had worked before), each with where it came from.
    pub fn shown_in(&self, root: &str) -> Vec<String> {
        self.facts
            .iter()
            .filter_map(|f| match self.origin(f) {
                None => Some(f.clone()),
                Some(o) if o.pending && o.project != root => None,
                Some(o) if o.project == root => Some(f.clone()),
                Some(o) => Some(format!("{f} (said in {})", project_name(&o.project))),
            })
            .collect()
    }

    /// Every user-wide fact as `ccmemctl facts` lists it: with its project, and whether it
    /// waits for confirmation.
    pub fn listed(&self) -> Vec<String> {
        self.facts
            .iter()
            .map(|f| match self.origin(f) {
                None => f.clone(),
                Some(o) if o.pending => {
                    format!("{f} (said by an agent in {}: shown there only until you confirm it)", o.project)
                }
                Some(o) => format!("{f} (said in {})", o.project),
            })
            .collect()
    }
}

/// The last name of a project's root, for a fact's line.
fn project_name(root: &str) -> &str {
    root.trim_end_matches(['/', '\\']).rsplit(['/', '\\']).next().filter(|n| !n.is_empty()).unwrap_or(root)
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

/// A change to facts and goals asked for by hand (`ccmemctl facts`). Numbers are 1-based,
/// as listed (oldest first).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FactsEdit {
    /// Drops fact N.
    Forget(usize),
    /// Moves active goal N to the completed ones.
    GoalDone(usize),
    /// Lets user-wide fact N reach every project.
    Confirm(usize),
}

impl Facts {
    /// Applies `edit`; what it changed, or an error naming the valid numbers.
    pub fn apply(&mut self, edit: &FactsEdit, now: &str) -> Result<String, String> {
        let out_of = |what: &str, n: usize, len: usize| match len {
            0 => format!("there is no {what} {n}: none are kept"),
            len => format!("there is no {what} {n}: they are numbered 1 to {len}"),
        };
        match *edit {
            FactsEdit::Forget(n) => {
                if n == 0 || n > self.facts.len() {
                    return Err(out_of("fact", n, self.facts.len()));
                }
                let fact = self.facts.remove(n - 1);
                self.origins.retain(|o| o.fact != fact);
                Ok(format!("forgot: {fact}"))
            }
            FactsEdit::Confirm(n) => {
                if n == 0 || n > self.facts.len() {
                    return Err(out_of("fact", n, self.facts.len()));
                }
                let fact = &self.facts[n - 1];
                match self.origins.iter_mut().find(|o| &o.fact == fact) {
                    Some(o) if o.pending => {
                        o.pending = false;
                        Ok(format!("confirmed for every project: {fact}"))
                    }
                    _ => Ok(format!("already shown in every project: {fact}")),
                }
            }
            FactsEdit::GoalDone(n) => {
                if n == 0 || n > self.goals.len() {
                    return Err(out_of("active goal", n, self.goals.len()));
                }
                let g = self.goals.remove(n - 1);
                let said = format!("done: {}", g.text);
                self.completed_goals.push(CompletedGoal { text: g.text, completed_at: now.to_string() });
                Ok(said)
            }
        }
    }
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

/// One intent, as a marker states it.
#[derive(Debug, Clone, PartialEq)]
pub enum Intent {
    /// `[REMEMBER: fact]`, or `[REMEMBER GLOBAL: fact]` (true: user-wide).
    Remember(String, bool),
    /// `[GOAL: text | DEADLINE: when]`.
    Goal(String, Option<String>),
    /// `[DONE: text]`.
    Done(String),
}

impl Intent {
    /// A user-wide fact: it reaches every project's context.
    pub fn is_global(&self) -> bool {
        matches!(self, Intent::Remember(_, true))
    }
}

/// The tags a marker may open with, exactly as documented (uppercase, one space in
/// `REMEMBER GLOBAL`): `[remember global: …]` or `[Remember: …]` is text. An agent writes the
/// markers it was told of; text in another case is more likely quoted from elsewhere.
pub const TAGS: [&str; 4] = ["REMEMBER", "REMEMBER GLOBAL", "GOAL", "DONE"];

/// The tag of the marker whose text after its `[` is `inner`, if it opens one.
/// Read from the start only as far as a tag reaches (spaces, the tag, spaces, its `:`), not
/// to the first `:` of the text: it is asked at every `[` of a message, and a run of `[`
/// with no colon after them must not be read to its end once per bracket.
pub fn tag(inner: &str) -> Option<&'static str> {
    // The same as taking what stands before the first `:` and trimming it: no tag holds a
    // colon or starts or ends with a space.
    let rest = inner.trim_start();
    TAGS.iter().copied().find(|t| rest.strip_prefix(t).is_some_and(|r| r.trim_start().starts_with(':')))
}

/// Every marker in `text`: where it stands (from its `[` to its `]`) and what it says. Empty
/// ones are dropped.
pub fn markers(text: &str) -> Vec<(std::ops::Range<usize>, Intent)> {
    let mut out = Vec::new();
    let mut from = 0;
    // Every `[` is tried, and each may close far away: the closings are found once.
    let closings = Closings::new(text);
    while let Some(open) = text[from..].find('[').map(|i| i + from) {
        let Some(close) = closings.after(open + 1) else { break };
        let inner = &text[open + 1..close];
        let end = close + 1;
        // (Asked of what follows the `[`, not of `inner`: a tag is read no further than its
        // `:`, which stands before any `]`.)
        let Some(t) = tag(&text[open + 1..]) else {
            // Not a marker: what follows its `[` may hold one.
            from = open + 1;
            continue;
        };
        from = end;
        let body = inner.split_once(':').map_or("", |(_, b)| b).trim();
        if body.is_empty() {
            continue;
        }
        let intent = match t {
            "REMEMBER" => Intent::Remember(body.to_string(), false),
            "REMEMBER GLOBAL" => Intent::Remember(body.to_string(), true),
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
                if text.is_empty() {
                    continue;
                }
                Intent::Goal(text.to_string(), deadline)
            }
            _ => Intent::Done(body.to_string()),
        };
        out.push((open..end, intent));
    }
    out
}

/// Finds every `[REMEMBER: …]`, `[REMEMBER GLOBAL: …]`, `[GOAL: … | DEADLINE: …]` and
/// `[DONE: …]` in `text`, tags as [`TAGS`] writes them; empty ones are dropped. The daemon
/// passes the agent's own prose only, marker by marker (quoted material is not its intent).
pub fn detect(text: &str) -> Intents {
    let mut out = Intents::default();
    for (_, intent) in markers(text) {
        out.add(intent);
    }
    out
}

impl Intents {
    /// Adds one intent found.
    pub fn add(&mut self, intent: Intent) {
        match intent {
            Intent::Remember(fact, global) => self.remember.push((fact, global)),
            Intent::Goal(text, deadline) => self.goals.push((text, deadline)),
            Intent::Done(text) => self.done.push(text),
        }
    }
}

/// Where the `]` that closes a marker is in `text` (what follows its `[`): the first one
/// that ends no redaction mask. The daemon redacts a message before it reads its intents,
/// and `[REMEMBER: the key is [REDACTED:secret]]` is one fact, not `the key is
/// [REDACTED:secret`.
pub fn closing_bracket(text: &str) -> Option<usize> {
    let mut from = 0;
    loop {
        let rest = text.get(from..)?;
        let close = rest.find(']')?;
        // A mask holds no `]`: one that opens before this `]` stands wholly before it, and
        // the text past it is not read (it may be long, and this is asked again and again).
        match rest[..close].find(MASK) {
            // A mask opens before this `]`: this `]` is its own, and is skipped.
            Some(_) => from += close + 1,
            None => return Some(from + close),
        }
    }
}

/// How a redaction mask opens.
const MASK: &str = "[REDACTED:";

/// [`closing_bracket`] for every `[` of one text at once: the `]`s and the masks are found
/// once, and each question is then two binary searches. Asked at each `[` in turn,
/// [`closing_bracket`] reads to the end of the text each time there is no `]` (a run of
/// `[`), and a text's worth of `[` costs the square of its length.
pub struct Closings {
    /// Where each `]` is.
    closes: Vec<usize>,
    /// Where each mask opens.
    masks: Vec<usize>,
    /// For each `]` (by index), the first at or after it with no mask opening between it
    /// and the `]` before it: the one that closes, once a mask was seen (`closes.len()`: none).
    clean: Vec<usize>,
}

impl Closings {
    pub fn new(text: &str) -> Self {
        let closes: Vec<usize> = text.match_indices(']').map(|(i, _)| i).collect();
        let masks: Vec<usize> = text.match_indices(MASK).map(|(i, _)| i).collect();
        let mut clean = vec![closes.len(); closes.len() + 1];
        for k in (1..closes.len()).rev() {
            // A mask opens between the `]` before this one and this one.
            let first = masks.partition_point(|&m| m <= closes[k - 1]);
            let masked = masks.get(first).is_some_and(|&m| m < closes[k]);
            clean[k] = if masked { clean[k + 1] } else { k };
        }
        Closings { closes, masks, clean }
    }

    /// Where the `]` that closes a marker whose text starts at `from` is (as
    /// [`closing_bracket`] finds it in the text from `from`), as an offset in the whole text.
    pub fn after(&self, from: usize) -> Option<usize> {
        let k = self.closes.partition_point(|&c| c < from);
        let &close = self.closes.get(k)?;
        let mask = self.masks.get(self.masks.partition_point(|&m| m < from));
        if mask.is_none_or(|&m| m >= close) {
            return Some(close);
        }
        // That `]` ends a mask: the next one with no mask opening before it closes.
        self.closes.get(self.clean[k + 1]).copied()
    }
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
            "Done. [REMEMBER: the API uses cursor pagination] and [REMEMBER GLOBAL: prefers pnpm] \
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

    /// Found by the independent tester: `[remember global: …]` in a quoted file became a
    /// user-wide fact. Only the documented uppercase tags open a marker.
    #[test]
    fn only_the_documented_uppercase_tags_open_a_marker() {
        let i = detect(
            "[remember global: a] [Remember: b] [goal: c] [done: d] [REMEMBER-GLOBAL: e] [REMEMBER  GLOBAL: f] \
             [x [REMEMBER: inside a bracket]] [ REMEMBER : spaced]",
        );
        assert_eq!(i.remember, [("inside a bracket".to_string(), false), ("spaced".to_string(), false)]);
        assert!(i.goals.is_empty() && i.done.is_empty(), "{i:?}");
        let m = markers("ab [GOAL: x | DEADLINE: y] c");
        assert_eq!(m, [(3..26, Intent::Goal("x".into(), Some("y".into())))]);
    }

    #[test]
    fn a_mask_inside_a_marker_is_part_of_it() {
        let i =
            detect("[REMEMBER: creds [REDACTED:secret] and [REDACTED:password]] [GOAL: rotate [REDACTED:x]] [DONE: x");
        assert_eq!(i.remember, [("creds [REDACTED:secret] and [REDACTED:password]".to_string(), false)]);
        assert_eq!(i.goals, [("rotate [REDACTED:x]".to_string(), None)]);
        assert!(i.done.is_empty());
        assert_eq!(closing_bracket("a [REDACTED:x"), None);
    }

    /// The readers as they were before they were made linear (each `[` read to the end of
    /// the text): what they found is what the linear ones must find.
    mod before {
        use super::super::{Intent, TAGS};

        pub fn tag(inner: &str) -> Option<&'static str> {
            let (tag, _) = inner.split_once(':')?;
            let tag = tag.trim();
            TAGS.iter().copied().find(|t| *t == tag)
        }

        pub fn closing_bracket(text: &str) -> Option<usize> {
            const MASK: &str = "[REDACTED:";
            let mut from = 0;
            loop {
                let rest = text.get(from..)?;
                let close = rest.find(']')?;
                match rest.find(MASK) {
                    Some(m) if m < close => {
                        let inner = m + MASK.len();
                        let end = rest[inner..].find(']')?;
                        from += inner + end + 1;
                    }
                    _ => return Some(from + close),
                }
            }
        }

        pub fn markers(text: &str) -> Vec<(std::ops::Range<usize>, Intent)> {
            let mut out = Vec::new();
            let mut from = 0;
            while let Some(open) = text[from..].find('[').map(|i| i + from) {
                let after = &text[open + 1..];
                let Some(close) = closing_bracket(after) else { break };
                let inner = &after[..close];
                let end = open + 1 + close + 1;
                let Some(t) = tag(inner) else {
                    from = open + 1;
                    continue;
                };
                from = end;
                let body = inner.split_once(':').map_or("", |(_, b)| b).trim();
                if body.is_empty() {
                    continue;
                }
                let intent = match t {
                    "REMEMBER" => Intent::Remember(body.to_string(), false),
                    "REMEMBER GLOBAL" => Intent::Remember(body.to_string(), true),
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
                        if text.is_empty() {
                            continue;
                        }
                        Intent::Goal(text.to_string(), deadline)
                    }
                    _ => Intent::Done(body.to_string()),
                };
                out.push((open..end, intent));
            }
            out
        }
    }

    /// Pieces that make markers, masks and what breaks them, for texts to compare on.
    fn piece() -> impl proptest::strategy::Strategy<Value = &'static str> {
        proptest::sample::select(vec![
            "[",
            "]",
            "[REDACTED:",
            "[REDACTED:x]",
            "REMEMBER",
            "REMEMBER GLOBAL",
            "GOAL",
            "DONE",
            ":",
            " ",
            "\t",
            "\n",
            "x",
            "é",
            "|",
            "DEADLINE:",
            "\u{3000}",
            "[REMEMBER: ",
            "[x] ",
        ])
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 2000, failure_persistence: None, ..Default::default() })]

        /// Made linear, the marker readers find what they found before.
        #[test]
        fn markers_are_read_as_before(parts in proptest::collection::vec(piece(), 0..40)) {
            let text = parts.concat();
            proptest::prop_assert_eq!(markers(&text), before::markers(&text));
            let closings = Closings::new(&text);
            for (i, _) in text.char_indices() {
                let rest = &text[i..];
                proptest::prop_assert_eq!(tag(rest), before::tag(rest));
                proptest::prop_assert_eq!(closing_bracket(rest), before::closing_bracket(rest));
                proptest::prop_assert_eq!(closings.after(i), before::closing_bracket(rest).map(|c| c + i));
            }
        }
    }

    #[test]
    fn a_run_of_brackets_holds_no_marker_and_a_marker_after_one_is_found() {
        let run = "[".repeat(1000);
        assert!(markers(&run).is_empty());
        let text = format!("{run}REMEMBER: x] [REMEMBER: y]");
        assert_eq!(markers(&text), before::markers(&text));
        assert_eq!(detect(&text).remember, [("x".to_string(), false), ("y".to_string(), false)]);
        let masks = format!("[REMEMBER: {}]", "[REDACTED:k] ".repeat(100));
        assert_eq!(closing_bracket(&masks[1..]), before::closing_bracket(&masks[1..]));
        assert_eq!(Closings::new(&masks).after(1), Some(masks.len() - 1));
    }

    #[test]
    fn facts_and_goals_are_edited_by_number() {
        let mut m = Facts {
            facts: vec!["a".into(), "b".into()],
            goals: vec![Goal { text: "ship".into(), deadline: None, created_at: String::new() }],
            completed_goals: Vec::new(),
            origins: Vec::new(),
        };
        assert_eq!(m.apply(&FactsEdit::Forget(2), "t").unwrap(), "forgot: b");
        assert_eq!(m.facts, ["a"]);
        assert_eq!(m.apply(&FactsEdit::Forget(3), "t").unwrap_err(), "there is no fact 3: they are numbered 1 to 1");
        assert!(m.apply(&FactsEdit::Forget(0), "t").is_err());
        assert_eq!(m.apply(&FactsEdit::GoalDone(1), "t").unwrap(), "done: ship");
        assert_eq!(m.completed_goals[0].completed_at, "t");
        assert_eq!(m.apply(&FactsEdit::GoalDone(1), "t").unwrap_err(), "there is no active goal 1: none are kept");
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

    #[test]
    fn a_user_wide_fact_from_a_new_project_waits_for_confirmation() {
        let mut m = Facts { facts: vec!["old".into(), "evil".into(), "good".into()], ..Default::default() };
        m.origins.push(Origin { fact: "evil".into(), project: "/w/clone".into(), pending: true });
        m.origins.push(Origin { fact: "good".into(), project: "/w/mine".into(), pending: false });
        assert_eq!(m.shown_in("/w/clone"), ["old", "evil", "good (said in mine)"]);
        assert_eq!(m.shown_in("/w/other"), ["old", "good (said in mine)"]);
        assert!(m.listed()[1].contains("said by an agent in"));
        assert_eq!(m.apply(&FactsEdit::Confirm(2), "t").unwrap(), "confirmed for every project: evil");
        assert_eq!(m.shown_in("/w/other"), ["old", "evil (said in clone)", "good (said in mine)"]);
        assert!(m.apply(&FactsEdit::Confirm(2), "t").unwrap().starts_with("already"));
        m.apply(&FactsEdit::Forget(2), "t").unwrap();
        assert_eq!(m.origins.len(), 1, "its origin goes with it");
    }
}
