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
    // The line so far (for the here-documents it opens).
    let mut line_so_far = String::new();
    while let Some(c) = chars.next() {
        line_so_far.push(c);
        match (quote, c) {
            (Some(q), c) if c == q => {
                quote = None;
                cmd.push(c);
            }
            (Some('"'), '\\') | (None, '\\') => {
                cmd.push(c);
                if let Some(n) = chars.next() {
                    cmd.push(n);
                    line_so_far.push(n);
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
                // A here-document's body is the command's input, not commands: it stays with
                // the command that reads it, up to its delimiter's line.
                if c == '\n' {
                    for (word, tabs) in heredocs(&std::mem::take(&mut line_so_far)) {
                        cmd.push('\n');
                        loop {
                            let line: String = chars.by_ref().take_while(|c| *c != '\n').collect();
                            let ends = if tabs { line.trim_start_matches('\t') } else { line.as_str() } == word;
                            cmd.push_str(&line);
                            if ends || chars.peek().is_none() {
                                break;
                            }
                            cmd.push('\n');
                        }
                    }
                }
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

/// The here-documents a command opens, in order: each delimiter, and whether its closing
/// line may be indented with tabs (`<<-`). Only `<<WORD`, `<<'WORD'` and `<<"WORD"` with a
/// word that starts with a letter or `_` (`$((1<<2))` is a shift; `<<<` a here-string), and
/// only outside quotes (the command as kept has its quotes).
fn heredocs(cmd: &str) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    let mut quote: Option<char> = None;
    let b: Vec<char> = cmd.chars().collect();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '\\' => i += 1,
            None if c == '\'' || c == '"' => quote = Some(c),
            None if c == '<'
                && b.get(i + 1) == Some(&'<')
                && b.get(i + 2) != Some(&'<')
                && (i == 0 || b[i - 1] != '<') =>
            {
                let mut j = i + 2;
                let tabs = b.get(j) == Some(&'-');
                if tabs {
                    j += 1;
                }
                while b.get(j) == Some(&' ') {
                    j += 1;
                }
                let quoted = matches!(b.get(j), Some('\'' | '"')).then(|| b[j]);
                if quoted.is_some() {
                    j += 1;
                }
                let start = j;
                while b.get(j).is_some_and(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-' || *c == '.') {
                    j += 1;
                }
                let word: String = b[start..j].iter().collect();
                let closed = quoted.is_none_or(|q| b.get(j) == Some(&q));
                if closed && word.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
                    out.push((word, tabs));
                }
                i = j;
                continue;
            }
            None => {}
        }
        i += 1;
    }
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
    ccmem_proto::wire::paths::lexical(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by a tester: a here-document's body was read as commands (`gh issue reopen 99`
    /// inside `cat <<EOF` counted as done). Its body stays with the command that reads it;
    /// what follows its delimiter is commands again; a shift or a here-string opens none.
    #[test]
    fn a_here_documents_body_is_not_commands() {
        let p = pipelines("cat <<EOF > notes.md\ngh issue reopen 99\nEOF\ngit status");
        assert_eq!(
            p,
            vec![vec!["cat <<EOF > notes.md\ngh issue reopen 99\nEOF".to_string()], vec!["git status".to_string()]]
        );
        let p = pipelines("git commit -F - <<-'MSG' && git push\n\tFix login; rm -rf /\n\tMSG\nnpm test");
        assert_eq!(p.len(), 3, "{p:?}");
        assert_eq!(p[1], vec!["git push\n\tFix login; rm -rf /\n\tMSG".to_string()]);
        assert_eq!(p[2], vec!["npm test".to_string()]);
        // Not here-documents: a shift, a here-string, `<<` in quotes.
        for line in ["echo $((1<<2))\nnpm test", "cat <<< 'x'\nnpm test", "echo '<<EOF'\nnpm test"] {
            assert_eq!(pipelines(line).last(), Some(&vec!["npm test".to_string()]), "{line:?}");
        }
        // A body never closed ends with the command line.
        assert_eq!(pipelines("cat <<EOF\nno end").len(), 1);
    }

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
