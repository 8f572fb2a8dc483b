//! Secrets written to a command that reads one from its input, which no name and no option
//! shows: `echo PW | passwd --stdin bob`, `printf 'PW\nPW' | passwd`, `kinit bob <<< PW`,
//! `echo PW | docker login -u bob --password-stdin`, `echo 'bob:PW' | chpasswd`,
//! `cryptsetup open /dev/sdb1 vault <<EOF` and its lines, `base64 <<< 'bob:PW'` (a Basic
//! credential being made).
//!
//! What is fed is taken whole (each literal word of an `echo`, a `printf` or `yes`, the
//! word of a here-string, the lines of a here-document), but the part after `:` where the
//! reader takes `user:password` lines. References (`$PW`, `$(pass show x)`) are not
//! secrets: they name where one is.

use super::commands::{split, Word};
use super::values::{is_placeholder, is_reference};
use super::Hit;
use regex::Captures;

/// Commands that read nothing but a password (or a key) from their input.
const ALWAYS: &[&str] =
    &["passwd", "chpasswd", "chgpasswd", "kinit", "cryptsetup", "smbpasswd", "su", "vncpasswd", "x11vnc", "wg"];

/// Options that make a command read its password or secret from its input.
const FROM_INPUT: &[&str] =
    &["--password-stdin", "--passphrase-stdin", "--stdin", "-stdin", "--with-token", "--passphrase-fd", "-passin"];

/// Words in an option's name that say its file is a secret (`--vault-password-file`,
/// `--passphrase-file`, `--secret-file`, `--key-file`, `--data-file` of `gcloud secrets`).
const SECRET_FILE: &[&str] = &["pass", "secret", "token", "key", "vault", "cred", "data-file", "from-file"];

/// Whether `ws` gives its input (`-`, `/dev/stdin`, `file:///dev/stdin`) to an option that
/// names a secret's file: `--vault-password-file /dev/stdin`, `--data-file=-`.
fn secret_file_from_input(ws: &[Word]) -> bool {
    let input = |v: &str| matches!(v, "-" | "/dev/stdin" | "/dev/fd/0" | "file:///dev/stdin" | "fileb:///dev/stdin");
    let names_secret = |o: &str| {
        let o = o.to_ascii_lowercase();
        o.starts_with('-') && SECRET_FILE.iter().any(|w| o.contains(w))
    };
    ws.iter().enumerate().any(|(i, w)| match w.text.split_once('=') {
        Some((opt, v)) => names_secret(opt) && input(v),
        None => input(&w.text) && i > 0 && names_secret(&ws[i - 1].text),
    })
}

/// How the reader takes what it is fed.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Takes {
    /// The whole input is the secret.
    Whole,
    /// `user:password` lines (`chpasswd`, a Basic credential for `base64`).
    AfterColon,
    /// An FTP client's script: `user NAME PASS`, `pass PASS`, `quote PASS PASS`.
    Ftp,
}

/// How the command `words` (its name first) reads what it is fed, if it reads a secret.
fn reads_secret(words: &[Word]) -> Option<Takes> {
    let mut ws = words;
    // `sudo -S cmd`: sudo's own password; `sudo cmd`: whatever cmd reads.
    if ws.first().is_some_and(|w| name(&w.text) == "sudo") {
        if ws.iter().skip(1).take_while(|w| w.text.starts_with('-')).any(|w| w.text == "-S" || w.text == "--stdin") {
            return Some(Takes::Whole);
        }
        let skip = 1 + ws[1..].iter().take_while(|w| w.text.starts_with('-')).count();
        ws = &ws[skip.min(ws.len())..];
    }
    let cmd = name(&ws.first()?.text);
    let rest = &ws[1..];
    let has = |o: &str| rest.iter().any(|w| w.text == o || w.text.starts_with(&format!("{o}=")));
    match cmd.as_str() {
        "chpasswd" | "chgpasswd" => Some(Takes::AfterColon),
        "ftp" | "pftp" | "tnftp" | "netkit-ftp" => Some(Takes::Ftp),
        "base64" | "basenc" => (!has("-d") && !has("--decode")).then_some(Takes::AfterColon),
        // `docker secret create NAME -`, `podman secret create NAME -`.
        "docker" | "podman" if has("secret") && has("create") && has("-") => Some(Takes::Whole),
        "vault" if has("login") && has("-") => Some(Takes::Whole),
        c if ALWAYS.contains(&c) => Some(Takes::Whole),
        _ => (FROM_INPUT.iter().any(|o| has(o)) || secret_file_from_input(rest)).then_some(Takes::Whole),
    }
}

/// A command word's name (`/usr/bin/passwd`, `passwd.exe`).
fn name(word: &str) -> String {
    let n = word.rsplit(['/', '\\']).next().unwrap_or(word).to_ascii_lowercase();
    n.strip_suffix(".exe").map(str::to_string).unwrap_or(n)
}

/// `echo …`, `printf …` or `yes …` (`feed`) piped into `tail`'s command.
pub(super) fn piped(c: &Captures<'_>, hits: &mut Vec<Hit>) {
    let (Some(feed), Some(tail)) = (c.name("feed"), c.name("tail")) else { return };
    let Some(takes) = reads_secret(&split(tail.as_str(), tail.start())) else { return };
    let ws = split(feed.as_str(), feed.start());
    let Some(first) = ws.first() else { return };
    let printf = name(&first.text) == "printf";
    let mut args = &ws[1..];
    // `echo -n`, `echo -e`; `printf -v var` is not fed at all.
    while args.first().is_some_and(|w| w.text.starts_with('-') && w.text.len() > 1) {
        if printf && args[0].text == "-v" {
            return;
        }
        args = &args[1..];
    }
    for w in args {
        // A format that is nothing but conversions and escapes (`'%s\n'`) holds no secret.
        if printf && is_format_only(&w.text) {
            continue;
        }
        fed(w, 0, w.text.len(), takes, hits);
    }
}

/// A here-string (`cmd … <<< WORD`).
pub(super) fn here_string(c: &Captures<'_>, hits: &mut Vec<Hit>) {
    let (Some(cmd), Some(word)) = (c.name("cmd"), c.name("word")) else { return };
    let Some(takes) = reads_secret(&split(cmd.as_str(), cmd.start())) else { return };
    if let Some(w) = split(word.as_str(), word.start()).first() {
        fed(w, 0, w.text.len(), takes, hits);
    }
}

/// A here-document: `cmd … <<TAG` (or `cat <<TAG | cmd …`) and its lines up to `TAG`.
pub(super) fn here_doc(c: &Captures<'_>, hits: &mut Vec<Hit>) {
    let (Some(cmd), Some(tag), Some(body)) = (c.name("cmd"), c.name("tag"), c.name("body")) else { return };
    let words = split(cmd.as_str(), cmd.start());
    let reader = if words.first().is_some_and(|w| name(&w.text) == "cat") {
        // `cat <<EOF | cmd`: the reader is after the pipe on the same line.
        match c.name("piped") {
            Some(p) => split(p.as_str(), p.start()),
            None => return,
        }
    } else {
        words
    };
    let Some(takes) = reads_secret(&reader) else { return };
    let mut at = body.start();
    for line in body.as_str().split_inclusive('\n') {
        let text = line.trim_end_matches(['\n', '\r']);
        if text.trim_start_matches('\t') == tag.as_str() {
            return;
        }
        if takes == Takes::Ftp {
            ftp_line(text, at, hits);
        } else {
            let lead = text.len() - text.trim_start().len();
            push(at + lead, text.trim(), takes, hits);
        }
        at += line.len();
    }
}

/// The password on a line of an FTP script at `at`: `user NAME PASS`, `pass PASS`,
/// `quote PASS PASS`.
fn ftp_line(text: &str, at: usize, hits: &mut Vec<Hit>) {
    let ws = split(text, at);
    let lower: Vec<String> = ws.iter().map(|w| w.text.to_ascii_lowercase()).collect();
    let i = match lower.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["user", _, _, ..] => 2,
        ["pass", _, ..] => 1,
        ["quote" | "literal", "pass", _, ..] => 2,
        _ => return,
    };
    fed(&ws[i], 0, ws[i].text.len(), Takes::Whole, hits);
}

/// Masks word `w`'s text `a..b` as fed to a reader that `takes` it so.
fn fed(w: &Word, a: usize, b: usize, takes: Takes, hits: &mut Vec<Hit>) {
    let v = &w.text[a..b];
    if v.contains("$(") {
        return;
    }
    if let Some(range) = secret_in(v, takes).and_then(|from| w.span(a + from, b)) {
        hits.push(Hit { range, kind: Some("password".into()) });
    }
}

/// Masks `value`, a line of a here-document at `start`.
fn push(start: usize, value: &str, takes: Takes, hits: &mut Vec<Hit>) {
    if let Some(from) = secret_in(value, takes) {
        hits.push(Hit { range: start + from..start + value.len(), kind: Some("password".into()) });
    }
}

/// Where the secret starts in `v`, fed to a reader that `takes` it so: all of it, or what
/// follows `user:`; None when it is no secret (a reference, a placeholder, a mask).
fn secret_in(v: &str, takes: Takes) -> Option<usize> {
    if v.is_empty() || is_reference(v) || is_placeholder(v, "password") || v.contains("[REDACTED:") {
        return None;
    }
    match takes {
        Takes::Whole | Takes::Ftp => Some(0),
        Takes::AfterColon => v.find(':').map(|p| p + 1).filter(|&from| from < v.len()),
    }
}

/// A printf format with no text of its own: conversions (`%s`, `%d`) and escapes (`\n`).
fn is_format_only(s: &str) -> bool {
    let mut rest = s;
    while let Some(c) = rest.chars().next() {
        rest = match c {
            '%' | '\\' => rest.get(2..).unwrap_or(""),
            ' ' => &rest[1..],
            _ => return false,
        };
    }
    true
}
