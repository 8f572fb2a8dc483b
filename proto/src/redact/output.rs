//! Secrets in what a command printed, where no name stands beside them: the output of a
//! command whose job is to print one (`pwgen`, `openssl rand`, `pass show`, `security
//! find-generic-password -w`, `vault kv get`, `kubectl get secret … | base64 -d`, `echo
//! $DB_PASSWORD`), and the column of a table whose heading names a credential (`select
//! user, password from users` in `mysql` or `psql`), or the cell beside a row's credential
//! name (`| DB_PASSWORD | … |`).

use super::commands::split;
use super::values::{self, Names};
use super::Hit;
use regex::Regex;
use std::sync::OnceLock;

/// Lines of output read after a command that prints a secret.
pub(super) const OUTPUT_LINES: usize = 16;

/// A line of output with more words than this is a message, not a value.
const MAX_WORDS: usize = 4;

/// The programs (and their words) that print a secret, each as the words that must follow
/// the program's name among its arguments.
const PRINTERS: &[(&str, &[&str])] = &[
    ("pwgen", &[]),
    ("apg", &[]),
    ("makepasswd", &[]),
    ("openssl", &["rand"]),
    ("gpg", &["--gen-random"]),
    ("security", &["-w"]),
    ("pass", &["show"]),
    ("gopass", &["show"]),
    ("op", &["read"]),
    ("op", &["item", "get"]),
    ("bw", &["get"]),
    ("lpass", &["show"]),
    ("vault", &["kv", "get"]),
    ("vault", &["read"]),
    ("aws", &["get-secret-value"]),
    ("aws", &["get-parameter", "--with-decryption"]),
    ("aws", &["get-parameters", "--with-decryption"]),
    ("gcloud", &["secrets", "access"]),
    ("az", &["keyvault", "secret", "show"]),
    ("doppler", &["secrets", "get"]),
    ("heroku", &["config:get"]),
    ("secret-tool", &["lookup"]),
    ("keyring", &["get"]),
    ("kubectl", &["get", "secret"]),
    ("terraform", &["output"]),
    ("tofu", &["output"]),
    ("heroku", &["auth:token"]),
    ("gh", &["auth", "token"]),
    ("php", &["key:generate", "--show"]),
    ("oc", &["get", "secret"]),
];

/// Whether the command line `line` prints a secret.
fn prints_secret(line: &str) -> bool {
    // A shell prompt before it (`$ `, `# `, `> `, `❯ `) is not a word of it.
    let line = line.trim_start().trim_start_matches(['$', '#', '>', '%', '❯', '➜']).trim_start();
    line.split(['|', ';', '&']).any(|part| {
        let words = split(part.trim(), 0);
        let Some(first) = words.first() else { return false };
        let program = first.text.rsplit('/').next().unwrap_or("").to_ascii_lowercase();
        let args: Vec<&str> = words[1..].iter().map(|w| w.text.as_str()).collect();
        let printer = PRINTERS.iter().any(|(p, needs)| {
            *p == program && needs.iter().all(|n| args.iter().any(|a| a == n || a.starts_with(&format!("{n}="))))
        });
        // `head -c 32 /dev/urandom | base64`, `tr -dc A-Za-z0-9 </dev/urandom | head -c 24`.
        let random = part.contains("/dev/urandom") || part.contains("/dev/random");
        // `echo $DB_PASSWORD`, `printenv GITHUB_TOKEN`: a variable named for a secret.
        let variable = matches!(program.as_str(), "echo" | "printf" | "printenv")
            && args.iter().any(|a| {
                let a = a.trim_matches(['"', '\'']);
                // `echo` prints a variable's value (`$NAME`); `printenv` takes the bare name.
                let name = match a.strip_prefix('$') {
                    Some(v) => v.trim_matches(['{', '}']),
                    None if program == "printenv" => a,
                    None => return false,
                };
                matches!(values::names(name), Names::Password | Names::Token)
            });
        // `cat secrets/db_password.txt`, `head ~/.config/app/api_token`: a file named for one.
        let file = matches!(program.as_str(), "cat" | "head" | "tail" | "less" | "more" | "bat" | "batcat")
            && !args.iter().any(|a| a.starts_with('>') || a.starts_with("<<"))
            && args.iter().any(|a| !a.starts_with('-') && names_secret_file(a));
        // `jq -r .access_token`, `jq '.data.password'`: a field named for one.
        let field = program == "jq"
            && args.iter().any(|a| {
                !a.starts_with('-')
                    && a.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                        .any(|w| matches!(values::names(w), Names::Password | Names::Token))
            });
        printer || random || variable || file || field
    }) || generated(line)
}

/// `python3 -c "import secrets; print(secrets.token_urlsafe())"` (its code is read whole:
/// the `;` in it separates no commands).
fn generated(line: &str) -> bool {
    let program = line.split_whitespace().next().unwrap_or("");
    program.rsplit('/').next().is_some_and(|p| p.starts_with("python"))
        && ["secrets.token", "token_urlsafe", "token_hex"].iter().any(|w| line.contains(w))
}

/// Whether the file `path` is named for a secret (`db_password.txt`, `api.key`,
/// `.vault_pass`, `credentials`, `token`).
pub(super) fn names_secret_file(path: &str) -> bool {
    let name = path.trim_matches(['"', '\'']).rsplit('/').next().unwrap_or("").to_ascii_lowercase();
    let stem = name.trim_start_matches('.').split('.').next().unwrap_or("");
    ["password", "passwd", "secret", "token", "credential", "apikey", "api_key", "api-key", "_pass", "-pass"]
        .iter()
        .any(|w| name.contains(w))
        || name.ends_with(".key")
        || matches!(values::names(stem), Names::Password | Names::Token)
}

/// Words one of which a command line that prints a secret holds (the rule's keywords, in
/// any case; [`printed`] looks for them as written).
pub(super) const PRINTER_WORDS: &[&str] = &[
    "pwgen",
    "apg ",
    "makepasswd",
    "openssl rand",
    "gen-random",
    "/dev/urandom",
    "/dev/random",
    "find-generic-password",
    "find-internet-password",
    "pass show",
    "op read",
    "op item",
    "bw get",
    "lpass show",
    "vault kv",
    "vault read",
    "get-secret-value",
    "--with-decryption",
    "versions access",
    "keyvault",
    "secrets get",
    "config:get",
    "secret-tool",
    "keyring get",
    "get secret",
    "terraform output",
    "tofu output",
    "auth:token",
    "auth token",
    "key:generate",
    "secrets.token",
    "token_urlsafe",
    "token_hex",
    "jq ",
    "cat ",
    "head ",
    "tail ",
    "less ",
    "bat ",
    "echo $",
    "echo \"$",
    "echo '$",
    "printf $",
    "printenv",
];

/// The search for [`PRINTER_WORDS`] as written.
fn printer_words() -> &'static Regex {
    static WORDS: OnceLock<Regex> = OnceLock::new();
    WORDS.get_or_init(|| {
        let alternatives: Vec<String> = PRINTER_WORDS.iter().map(|w| regex::escape(w)).collect();
        Regex::new(&alternatives.join("|")).expect("literal words compile")
    })
}

/// Where the line holding the match `m` of `text` starts and ends (before its line break).
fn line_around(text: &str, m: &regex::Match<'_>) -> (usize, usize) {
    let start = text[..m.start()].rfind('\n').map_or(0, |i| i + 1);
    let end = text[m.end()..].find('\n').map_or(text.len(), |i| m.end() + i);
    (start, end)
}

/// Whether a line of `text` is a command that prints a secret.
pub(super) fn prints_secret_anywhere(text: &str) -> bool {
    printer_words().find_iter(text).any(|m| {
        let (start, end) = line_around(text, &m);
        prints_secret(&text[start..end])
    })
}

/// Each command that prints a secret (a line holding one of [`PRINTER_WORDS`] that
/// [`prints_secret`]), and the lines after it: each short line's words that look like a
/// password or a key. A longer line is a message and is passed over; a blank line ends the
/// output. Each line is read once as a command, and at most [`OUTPUT_LINES`] after each.
pub(super) fn printed(text: &str, hits: &mut Vec<Hit>) {
    let mut line_done = 0;
    for m in printer_words().find_iter(text) {
        if m.start() < line_done {
            continue;
        }
        let (start, end) = line_around(text, &m);
        line_done = end;
        if !prints_secret(&text[start..end]) {
            continue;
        }
        let mut at = (end + 1).min(text.len());
        for line in text[at..].split_inclusive('\n').take(OUTPUT_LINES) {
            let line_start = at;
            at += line.len();
            if line.trim().is_empty() {
                break;
            }
            let words = words_at(line);
            if words.len() > MAX_WORDS {
                continue;
            }
            for (i, w) in words {
                let w = w.trim_matches(['"', '\'', ',', '`']);
                if looks_secret(w) {
                    let off = line[i..].find(w).map_or(i, |o| i + o);
                    hits.push(Hit { range: line_start + off..line_start + off + w.len(), kind: None });
                }
            }
        }
    }
}

/// The whitespace-separated words of `line`, with where each starts.
fn words_at(line: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, ch) in line.char_indices() {
        match (ch.is_whitespace(), start) {
            (true, Some(s)) => {
                out.push((s, &line[s..i]));
                start = None;
            }
            (false, None) => start = Some(i),
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push((s, &line[s..]));
    }
    out
}

/// A value where a secret is expected: a password's shape, or a long random token.
fn looks_secret(v: &str) -> bool {
    // A letter in it: `======`, a version, a date or an address is none; nor is a URL.
    v.bytes().any(|b| b.is_ascii_alphabetic())
        && !v.contains("://")
        && !values::stands_in(v)
        && !v.ends_with(':')
        && (values::password_like(v) || (v.len() >= 16 && values::looks_random(v)))
}

/// Each block of two or more table lines (holding `|`, or a border such as `+----+`): see
/// [`table`].
pub(super) fn tables(text: &str, hits: &mut Vec<Hit>) {
    if !text.contains('|') {
        return;
    }
    let is_table_line = |l: &str| {
        let t = l.trim();
        t.contains('|') || (!t.is_empty() && t.chars().all(|c| matches!(c, '-' | '+' | '=' | ':' | '|' | ' ' | '\t')))
    };
    let mut block: Option<(usize, usize)> = None;
    let mut lines = 0;
    let mut at = 0;
    // An empty line after the last ends the last block.
    for line in text.split_inclusive('\n').chain(std::iter::once("")) {
        let start = at;
        at += line.len();
        if !line.is_empty() && is_table_line(line) {
            block = Some((block.map_or(start, |(s, _)| s), at));
            lines += 1;
            continue;
        }
        if let Some((s, e)) = block.take() {
            if lines >= 2 {
                table(&text[s..e], s, hits);
            }
        }
        lines = 0;
    }
}

/// A block of table lines (at `offset` in the text): under a heading that names a
/// credential, that column's cells; in any row, the cell after one that names a credential.
fn table(block: &str, offset: usize, hits: &mut Vec<Hit>) {
    let mut at = offset;
    let mut columns: Vec<usize> = Vec::new();
    let mut width = 0;
    let mut first = true;
    for line in block.split_inclusive('\n') {
        let start = at;
        at += line.len();
        if !line.contains('|') {
            continue; // a border: `+-----+-----+`
        }
        let cells = cells(line);
        let credential = |t: &str| {
            !t.is_empty()
                && !t.contains(char::is_whitespace)
                && matches!(values::names(t), Names::Password | Names::Token)
        };
        let named: Vec<usize> = cells.iter().enumerate().filter(|(_, (_, t))| credential(t)).map(|(i, _)| i).collect();
        if std::mem::replace(&mut first, false)
            && !named.is_empty()
            && cells.iter().all(|(_, t)| !looks_secret(t) || credential(t))
        {
            // The heading: its named columns hold secrets below it.
            columns = named;
            width = cells.len();
            continue;
        }
        if cells.iter().all(|(_, t)| t.is_empty() || t.chars().all(|c| matches!(c, '-' | ':' | '=' | '+'))) {
            continue; // `|---|---|`
        }
        let mut secret = |i: usize| {
            if let Some((off, t)) = cells.get(i) {
                if !t.eq_ignore_ascii_case("null") && !values::stands_in(t) {
                    hits.push(Hit { range: start + off..start + off + t.len(), kind: None });
                }
            }
        };
        if cells.len() == width {
            columns.iter().for_each(|&i| secret(i));
        }
        for i in named {
            if cells.get(i + 1).is_some_and(|(_, t)| !t.contains(char::is_whitespace) && looks_secret(t)) {
                secret(i + 1);
            }
        }
    }
}

/// The cells of a table's line, each trimmed, with where it starts in the line.
fn cells(line: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut at = 0;
    for part in line.trim_end_matches(['\n', '\r']).split('|') {
        let lead = part.len() - part.trim_start().len();
        out.push((at + lead, part.trim()));
        at += part.len() + 1;
    }
    out
}
