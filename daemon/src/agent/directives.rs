//! Directives at the end of an agent's message: lines such as `::git-commit{cwd="/repo"}` or
//! `::git-create-pr{cwd="/repo" branch="fix" url="https://github.com/o/r/pull/50"}`, which
//! the Codex app renders as buttons and status. They are markup, not words: taken out of
//! the last words, and read for what they say was done.

/// One directive: its name and its attributes, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Directive {
    /// `git-create-pr`, `git-commit`, …
    pub name: String,
    /// `key="value"` or `key=value` pairs.
    pub attrs: Vec<(String, String)>,
}

impl Directive {
    /// The value of attribute `key`.
    pub fn attr(&self, key: &str) -> Option<&str> {
        self.attrs.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    /// The number of the pull request a `git-create-pr` directive names in its `url`.
    pub fn pull_request(&self) -> Option<(u64, String)> {
        if self.name != "git-create-pr" {
            return None;
        }
        let url = self.attr("url")?;
        let (repo, number) = url.trim_end_matches('/').rsplit_once("/pull/")?;
        let number = number.parse().ok()?;
        let repository = repo.rsplit('/').take(2).collect::<Vec<_>>().into_iter().rev().collect::<Vec<_>>().join("/");
        Some((number, repository))
    }
}

/// The message without its directive lines, and the directives, in order.
pub fn split(message: &str) -> (String, Vec<Directive>) {
    let mut words = Vec::new();
    let mut found = Vec::new();
    for line in message.lines() {
        match parse(line.trim()) {
            Some(d) => found.push(d),
            None => words.push(line),
        }
    }
    if found.is_empty() {
        return (message.to_string(), found);
    }
    (words.join("\n").trim_end().to_string(), found)
}

/// A line that is one directive: `::` a lowercase name, `{` attributes `}`, nothing else.
fn parse(line: &str) -> Option<Directive> {
    let rest = line.strip_prefix("::")?;
    let open = rest.find('{')?;
    let name = &rest[..open];
    let first = name.chars().next()?;
    if !first.is_ascii_lowercase() || !name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-') {
        return None;
    }
    let body = rest[open + 1..].strip_suffix('}')?;
    let mut attrs = Vec::new();
    let mut s = body.trim_start();
    while !s.is_empty() {
        let eq = s.find('=')?;
        let key = &s[..eq];
        if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
            return None;
        }
        s = &s[eq + 1..];
        let value = if let Some(q) = s.strip_prefix('"') {
            // Quoted: up to the next quote not escaped.
            let mut end = None;
            let mut escaped = false;
            for (i, c) in q.char_indices() {
                match c {
                    '\\' if !escaped => escaped = true,
                    '"' if !escaped => {
                        end = Some(i);
                        break;
                    }
                    _ => escaped = false,
                }
            }
            let end = end?;
            s = &q[end + 1..];
            q[..end].replace("\\\"", "\"")
        } else {
            let end = s.find(char::is_whitespace).unwrap_or(s.len());
            let v = s[..end].to_string();
            s = &s[end..];
            v
        };
        attrs.push((key.to_string(), value));
        s = s.trim_start();
    }
    Some(Directive { name: name.to_string(), attrs })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The end of a Codex Desktop 0.145 session's last message (entireio/entire-graph, MIT),
    /// and a `git-create-pr` as the Codex app writes it.
    #[test]
    fn directives_are_taken_out_and_read() {
        let message = "Pushed.\n- Commit: `27da664`\n- Updated draft PR: [#50](https://github.com/entireio/entire-graph/pull/50)\n::git-stage{cwd=\"/Users/thomi/Projects/entire-graph\"}\n::git-commit{cwd=\"/Users/thomi/Projects/entire-graph\"}\n::git-push{cwd=\"/Users/thomi/Projects/entire-graph\" branch=\"fix/corpus-parse-errors\"}\n::git-create-pr{cwd=\"/r\" branch=\"fix\" url=\"https://github.com/entireio/entire-graph/pull/51\" isDraft=true}";
        let (words, found) = split(message);
        assert_eq!(
            words,
            "Pushed.\n- Commit: `27da664`\n- Updated draft PR: [#50](https://github.com/entireio/entire-graph/pull/50)"
        );
        let names: Vec<&str> = found.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["git-stage", "git-commit", "git-push", "git-create-pr"]);
        assert_eq!(found[2].attr("branch"), Some("fix/corpus-parse-errors"));
        assert_eq!(found[3].attr("isDraft"), Some("true"));
        assert_eq!(found[3].pull_request(), Some((51, "entireio/entire-graph".into())));
        assert_eq!(found[0].pull_request(), None);
    }

    #[test]
    fn words_that_only_look_alike_stay() {
        for line in [
            "::not a directive",
            "see ::git-commit{cwd=\"/r\"} inline",
            "::Git-commit{cwd=\"/r\"}",
            "::git-commit{cwd=\"/r}",
            "::git-commit{=x}",
            "C++ uses std::vector{1, 2}",
        ] {
            let (words, found) = split(line);
            assert_eq!((words.as_str(), found.len()), (line, 0), "{line}");
        }
        let url = "::git-create-pr{url=\"https://github.com/o/r/pull/12abc\"}";
        assert_eq!(split(url).1[0].pull_request(), None);
    }
}
