//! A shell command line read as the shell would: its pipelines and commands, quotes
//! respected, and the directory it works in after the `cd`s it starts with.

use std::path::{Path, PathBuf};

/// A command line's pipelines (split at `;`, `&&`, `||`, `&` and line ends), each as its
/// commands (split at `|`), read as the shell would: nothing inside quotes or after a
/// backslash separates (`python3 -c 'import sys; sys.exit(3)'` is one command).
pub fn pipelines(line: &str) -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = Vec::new();
    let mut pipeline: Vec<String> = Vec::new();
    let mut cmd = String::new();
    let mut quote: Option<char> = None;
    let mut chars = line.chars().peekable();
    let end_cmd = |cmd: &mut String, pipeline: &mut Vec<String>| {
        let c = std::mem::take(cmd);
        if !c.trim().is_empty() {
            pipeline.push(c.trim().to_string());
        }
    };
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => {
                quote = None;
                cmd.push(c);
            }
            (Some('"'), '\\') | (None, '\\') => {
                cmd.push(c);
                if let Some(n) = chars.next() {
                    cmd.push(n);
                }
            }
            (Some(_), c) => cmd.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                cmd.push(c);
            }
            (None, '|') if chars.peek() == Some(&'|') => {
                chars.next();
                end_cmd(&mut cmd, &mut pipeline);
                out.push(std::mem::take(&mut pipeline));
            }
            (None, '|') => end_cmd(&mut cmd, &mut pipeline),
            // `2>&1` and `>&2` redirect; a lone `&` or `&&` separates.
            (None, '&') if cmd.ends_with('>') || chars.peek() == Some(&'>') => cmd.push(c),
            (None, ';' | '&' | '\n') => {
                if c == '&' && chars.peek() == Some(&'&') {
                    chars.next();
                }
                end_cmd(&mut cmd, &mut pipeline);
                out.push(std::mem::take(&mut pipeline));
            }
            (None, c) => cmd.push(c),
        }
    }
    end_cmd(&mut cmd, &mut pipeline);
    out.push(pipeline);
    out.retain(|p| !p.is_empty());
    out
}

/// The `cd DIR && ` a command line starts with (each one, in order), or "".
pub fn cd_prefix(command: &str) -> String {
    let mut out = String::new();
    for pipeline in pipelines(command) {
        let [cmd] = pipeline.as_slice() else { break };
        let words: Vec<&str> = cmd.split_whitespace().collect();
        match words.as_slice() {
            ["cd", dir] if !dir.starts_with('-') => out.push_str(&format!("cd {dir} && ")),
            _ => break,
        }
    }
    out
}

/// A recorded command split into its `cd … && ` prefix and the rest.
pub fn split_cd(text: &str) -> (String, &str) {
    let prefix = cd_prefix(text);
    let mut rest = text;
    for _ in 0..prefix.matches("cd ").count() {
        rest = rest.split_once("&&").map_or(rest, |(_, r)| r.trim_start());
    }
    (prefix, rest)
}

/// A command line without the `cd … && ` it starts with.
pub fn without_cd(text: &str) -> &str {
    split_cd(text).1
}

/// The directory a command line works in: `cwd`, moved by the `cd`s it starts with;
/// None when that cannot be told (`cd -`, `cd $DIR`).
pub fn work_dir(command: &str, cwd: &Path) -> Option<PathBuf> {
    let mut dir = cwd.to_path_buf();
    for pipeline in pipelines(command) {
        let [cmd] = pipeline.as_slice() else { break };
        let words: Vec<&str> = cmd.split_whitespace().collect();
        let target = match words.as_slice() {
            ["cd"] => return None,
            ["cd", t] => t.trim_matches(|c| c == '"' || c == '\''),
            _ => break,
        };
        if target == "-" || target.contains('$') || target.contains('`') {
            return None;
        }
        let next = match target.strip_prefix("~") {
            Some(rest) if rest.is_empty() || rest.starts_with('/') => {
                directories::BaseDirs::new()?.home_dir().join(rest.trim_start_matches('/'))
            }
            _ => dir.join(target),
        };
        dir = lexical(&next);
    }
    Some(dir)
}

/// `a/b/../c` → `a/c`, without asking the file system.
pub fn lexical(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn where_a_command_works() {
        let cwd = Path::new("/w/app");
        assert_eq!(work_dir("npm test", cwd), Some(PathBuf::from("/w/app")));
        assert_eq!(work_dir("cd packages/api && npm test", cwd), Some(PathBuf::from("/w/app/packages/api")));
        assert_eq!(work_dir("cd /w/other && npm test 2>&1 | tail", cwd), Some(PathBuf::from("/w/other")));
        assert_eq!(work_dir("cd .. && cd other; npm test", cwd), Some(PathBuf::from("/w/other")));
        assert_eq!(work_dir("cd - && npm test", cwd), None);
        assert_eq!(cd_prefix("cd packages/api && npm test"), "cd packages/api && ");
        assert_eq!(cd_prefix("npm test && cd x"), "");
        assert_eq!(split_cd("cd a && cd b && npm test").1, "npm test");
    }

    #[test]
    fn command_lines_split_as_the_shell_reads_them() {
        let p = |l: &str| pipelines(l);
        assert_eq!(p("python3 -c 'import sys; sys.exit(3)'"), [["python3 -c 'import sys; sys.exit(3)'"]]);
        assert_eq!(
            p("cd app && npm test 2>&1 | tail -5; echo \"a|b && c\""),
            vec![
                vec!["cd app".to_string()],
                vec!["npm test 2>&1".into(), "tail -5".into()],
                vec!["echo \"a|b && c\"".into()],
            ]
        );
        assert_eq!(p("a || b & c\nd >&2"), [["a"], ["b"], ["c"], ["d >&2"]]);
        assert_eq!(p("echo a\\;b 'unclosed;"), [["echo a\\;b 'unclosed;"]]);
        assert!(p("  ;; && ").is_empty());
    }
}
