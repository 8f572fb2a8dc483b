//! Secrets written to a command that reads one from its input (or to a file whose name says
//! it holds one: `echo PW > ~/.vault_pass.txt`), which no name and no option shows: `echo PW | passwd --stdin bob`, `printf 'PW\nPW' | passwd`, `kinit bob <<< PW`,
//! `echo PW | docker login -u bob --password-stdin`, `echo 'bob:PW' | chpasswd`,
//! `cryptsetup open /dev/sdb1 vault <<EOF` and its lines, `base64 <<< 'bob:PW'` (a Basic
//! credential being made).
//!
//! What is fed is taken whole (each literal word of an `echo`, a `printf` or `yes`, the
//! word of a here-string, the lines of a here-document), but the part after `:` where the
//! reader takes `user:password` lines. References (`$PW`, `$(pass show x)`) are not
//! secrets: they name where one is.

use super::commands::{split, Word};
use super::values::stands_in;
use super::Hit;
use regex::Captures;

/// Commands that read nothing but a password (or a key) from their input.
const ALWAYS: &[&str] = &[
    "passwd",
    "chpasswd",
    "chgpasswd",
    "kinit",
    "cryptsetup",
    "smbpasswd",
    "su",
    "vncpasswd",
    "x11vnc",
    "wg",
    "adduser",
];

/// Options that make a command read its password or secret from its input.
const FROM_INPUT: &[&str] =
    &["--password-stdin", "--passphrase-stdin", "--stdin", "-stdin", "--with-token", "--passphrase-fd", "-passin"];

/// Words in an option's name that say its file is a secret (`--vault-password-file`,
/// `--passphrase-file`, `--secret-file`, `--key-file`, `--data-file` of `gcloud secrets`).
const SECRET_FILE: &[&str] = &["pass", "secret", "token", "key", "vault", "cred", "data-file", "from-file"];

/// Whether `ws` gives its input (`-`, `/dev/stdin`, `file:///dev/stdin`) to an option that
/// names a secret's file: `--vault-password-file /dev/stdin`, `--data-file=-`.
fn secret_file_from_input(ws: &[&Word]) -> bool {
    let input = |v: &str| {
        matches!(v, "-" | "/dev/stdin" | "/dev/fd/0" | "file:///dev/stdin" | "fileb:///dev/stdin" | "stdin" | "fd:0")
    };
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
    // Redirections (`2>/dev/null`, `>out`, `2>&1`) are not the command's words.
    let owned: Vec<&Word> = words.iter().filter(|w| !is_redirection(&w.text)).collect();
    let mut ws: &[&Word] = &owned;
    // What runs its arguments as a command (`sudo`, `timeout 5`, `env A=1`, `ssh host`,
    // `docker exec -i box`, `kubectl exec -i pod --`) hands its input on to that command.
    for _ in 0..4 {
        let first = ws.first()?;
        let (stdin, rest) = match name(&first.text).as_str() {
            "sudo" | "doas" => sudo_options(&ws[1..]),
            "timeout" => {
                (false, after_options(&ws[1..], &["-s", "--signal", "-k", "--kill-after"]).get(1..).unwrap_or(&[]))
            }
            "env" => {
                let rest = after_options(&ws[1..], &["-u", "--unset", "-C", "--chdir", "-S"]);
                (false, &rest[rest.iter().take_while(|w| w.text.contains('=')).count()..])
            }
            "nice" | "ionice" | "stdbuf" | "nohup" | "command" | "exec" | "time" | "setsid" | "unbuffer" => {
                (false, after_options(&ws[1..], &["-n", "--adjustment", "-c", "--class", "-i", "-o", "-e"]))
            }
            "ssh" => {
                let with_value = [
                    "-p", "-i", "-l", "-o", "-F", "-J", "-b", "-c", "-D", "-E", "-e", "-L", "-m", "-O", "-R", "-S",
                    "-W", "-w", "-B", "-Q",
                ];
                (false, after_options(&ws[1..], &with_value).get(1..).unwrap_or(&[]))
            }
            "docker" | "podman" | "nerdctl" if ws.get(1).is_some_and(|w| w.text == "exec") => {
                let with_value = ["-u", "--user", "-w", "--workdir", "-e", "--env", "--env-file"];
                (false, after_options(&ws[2..], &with_value).get(1..).unwrap_or(&[]))
            }
            "kubectl" | "oc" if ws.get(1).is_some_and(|w| w.text == "exec") => {
                (false, ws.iter().position(|w| w.text == "--").map_or(&[][..], |i| &ws[i + 1..]))
            }
            _ => break,
        };
        if stdin {
            return Some(Takes::Whole);
        }
        ws = rest;
    }
    let cmd = name(&ws.first()?.text);
    if cmd == "xargs" {
        return xargs_takes_secret(&ws[1..]).then_some(Takes::Whole);
    }
    let rest = &ws[1..];
    let has = |o: &str| rest.iter().any(|w| w.text == o || w.text.starts_with(&format!("{o}=")));
    if has("--help") || has("-h") {
        return None;
    }
    match cmd.as_str() {
        "chpasswd" | "chgpasswd" => Some(Takes::AfterColon),
        "ftp" | "pftp" | "tnftp" | "netkit-ftp" => Some(Takes::Ftp),
        "base64" | "basenc" => (!has("-d") && !has("--decode")).then_some(Takes::AfterColon),
        // `docker secret create NAME -`, `podman secret create NAME -`.
        "docker" | "podman" if has("secret") && has("create") && has("-") => Some(Takes::Whole),
        "vault" if has("login") && has("-") => Some(Takes::Whole),
        // `htpasswd -i[c…] FILE USER`, `pass insert -e NAME`, `op signin`, `rclone obscure -`.
        "htpasswd" if short_flag(rest, 'i') => Some(Takes::Whole),
        "pass" | "gopass" if has("insert") => Some(Takes::Whole),
        // `keyring set SERVICE USER`, `secret-tool store --label=… attr value`: the secret
        // to keep is read from the input.
        "keyring" if has("set") => Some(Takes::Whole),
        "secret-tool" if has("store") => Some(Takes::Whole),
        "op" if has("signin") => Some(Takes::Whole),
        "rclone" if has("obscure") && has("-") => Some(Takes::Whole),
        c if ALWAYS.contains(&c) => Some(Takes::Whole),
        _ => (FROM_INPUT.iter().any(|o| has(o)) || secret_file_from_input(rest)).then_some(Takes::Whole),
    }
}

/// `sudo`'s options: whether one makes it read its password from its input (`-S`, in a
/// cluster too: `-kS`), and the command after them (the values of `-u root`, `-g wheel`, …
/// skipped).
fn sudo_options<'a, 'w>(ws: &'a [&'w Word]) -> (bool, &'a [&'w Word]) {
    let with_value = [
        "-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-T", "-U", "--user", "--group", "--host", "--prompt",
        "--chdir",
    ];
    let rest = after_options(ws, &with_value);
    let options = &ws[..ws.len() - rest.len()];
    (short_flag(options, 'S') || options.iter().any(|w| w.text == "--stdin"), rest)
}

/// The words after the options (and the values of `with_value`'s).
fn after_options<'a, 'w>(ws: &'a [&'w Word], with_value: &[&str]) -> &'a [&'w Word] {
    let mut i = 0;
    while let Some(w) = ws.get(i) {
        if w.text == "--" {
            return ws.get(i + 1..).unwrap_or(&[]);
        }
        if !w.text.starts_with('-') || w.text == "-" {
            break;
        }
        i += if with_value.contains(&w.text.as_str()) { 2 } else { 1 };
    }
    ws.get(i..).unwrap_or(&[])
}

/// What `xargs` makes of its input (`ws`: its options and its command) is a secret: the
/// command it runs, with the input in it (where `-I R` puts it, else at the end), has a
/// secret there by the rules for commands (`xargs -I{} curl -u admin:{}`, `xargs docker
/// login -u bob -p`).
fn xargs_takes_secret(ws: &[&Word]) -> bool {
    /// Stands for the input: a value every rule takes for a real secret.
    const INPUT: &str = "Qx7mK2vLp9Zw4RtB";
    let mut replace: Option<String> = None;
    let mut i = 0;
    while let Some(w) = ws.get(i) {
        let t = w.text.as_str();
        if t == "--" {
            i += 1;
            break;
        }
        if !t.starts_with('-') || t == "-" {
            break;
        }
        if t == "-I" {
            replace = ws.get(i + 1).map(|w| w.text.clone());
            i += 2;
            continue;
        }
        if let Some(r) = t.strip_prefix("-I").or_else(|| t.strip_prefix("--replace=")) {
            replace = Some(r.to_string());
        } else if t == "-i" || t == "--replace" {
            replace = Some("{}".into());
        } else if matches!(t, "-a" | "-d" | "-E" | "-e" | "-L" | "-l" | "-n" | "-P" | "-s") {
            i += 1; // the option's value
        }
        i += 1;
    }
    let command: Vec<&str> = ws.get(i..).unwrap_or(&[]).iter().map(|w| w.text.as_str()).collect();
    if command.is_empty() {
        return false;
    }
    let line = match replace.filter(|r| !r.is_empty()) {
        Some(r) => command.iter().map(|w| w.replace(r.as_str(), INPUT)).collect::<Vec<_>>().join(" "),
        None => format!("{} {INPUT}", command.join(" ")),
    };
    let Some(at) = line.find(INPUT) else { return false };
    super::spans(&line).iter().any(|s| s.range.start <= at && s.range.end >= at + INPUT.len())
}

/// Whether a short option cluster among `ws` holds `flag` (`-i`, `-ci`).
fn short_flag(ws: &[&Word], flag: char) -> bool {
    ws.iter().any(|w| {
        let t = w.text.as_str();
        t.starts_with('-')
            && !t.starts_with("--")
            && t[1..].bytes().all(|b| b.is_ascii_alphabetic())
            && t.contains(flag)
    })
}

/// A redirection word: `>f`, `2>/dev/null`, `2>&1`, `&>f`, `>>f`.
fn is_redirection(t: &str) -> bool {
    let t = t.trim_start_matches(|c: char| c.is_ascii_digit());
    t.starts_with('>') || t.starts_with("&>")
}

/// A command word's name (`/usr/bin/passwd`, `passwd.exe`).
fn name(word: &str) -> String {
    let n = word.rsplit(['/', '\\']).next().unwrap_or(word).to_ascii_lowercase();
    n.strip_suffix(".exe").map(str::to_string).unwrap_or(n)
}

/// `echo …`, `printf …` or `yes …` (`feed`; or several in a `group`: `(echo A; echo B)`,
/// `{ echo A; echo B; }`) piped into `tail`'s command, or given to it as `< <(echo …)`.
pub(super) fn piped(c: &Captures<'_>, hits: &mut Vec<Hit>) {
    let Some(tail) = c.name("tail") else { return };
    let Some(takes) = reads_secret(&split(tail.as_str(), tail.start())) else { return };
    if let Some(feed) = c.name("feed") {
        feed_words(feed.as_str(), feed.start(), takes, hits);
    }
    if let Some(group) = c.name("group") {
        let mut at = group.start();
        for part in group.as_str().split_inclusive(';') {
            let lead = part.len() - part.trim_start().len();
            feed_words(part.trim_start().trim_end_matches(';'), at + lead, takes, hits);
            at += part.len();
        }
    }
}

/// The literal words of one `echo`, `printf` or `yes` (`text`, at `start`).
fn feed_words(text: &str, start: usize, takes: Takes, hits: &mut Vec<Hit>) {
    let ws = split(text, start);
    let Some(first) = ws.first() else { return };
    let program = name(&first.text);
    if !matches!(program.as_str(), "echo" | "printf" | "yes") {
        return;
    }
    let printf = program == "printf";
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
        fed(w, takes, hits);
    }
}

/// `echo …` or `printf …` (`feed`) written to a file whose name says it holds a secret:
/// `echo PASS > ~/.vault_pass.txt`, `printf TOKEN > .npm-token`, `echo KEY >> secrets.env`.
pub(super) fn written(c: &Captures<'_>, hits: &mut Vec<Hit>) {
    let (Some(feed), Some(file)) = (c.name("feed"), c.name("file")) else { return };
    let name = file.as_str().trim_matches(['"', '\'']).rsplit(['/', '\\']).next().unwrap_or("").to_ascii_lowercase();
    // Wider than a file `cat` prints from (`.vault_pass.txt`, `~/.pgpass`, `creds.json`).
    let secret =
        ["pass", "cred", "vault"].iter().any(|w| name.contains(w)) || super::output::names_secret_file(file.as_str());
    if secret && !name.ends_with(".pub") && !name.ends_with(".md") {
        feed_words(feed.as_str(), feed.start(), Takes::Whole, hits);
    }
}

/// A here-string (`cmd … <<< WORD`, or `cat <<< WORD | cmd …`).
pub(super) fn here_string(c: &Captures<'_>, hits: &mut Vec<Hit>) {
    let (Some(cmd), Some(word)) = (c.name("cmd"), c.name("word")) else { return };
    let Some(takes) = reads_secret(&reader(c, split(cmd.as_str(), cmd.start()))) else { return };
    if let Some(w) = split(word.as_str(), word.start()).first() {
        fed(w, takes, hits);
    }
}

/// A here-document: `cmd … <<TAG` (or `cat <<TAG | cmd …`) and its lines up to `TAG`.
pub(super) fn here_doc(c: &Captures<'_>, hits: &mut Vec<Hit>) {
    let (Some(cmd), Some(tag), Some(body)) = (c.name("cmd"), c.name("tag"), c.name("body")) else { return };
    let Some(takes) = reads_secret(&reader(c, split(cmd.as_str(), cmd.start()))) else { return };
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

/// Who reads what is fed to `words` (a command's): the command itself, or, for `cat`,
/// the command it is piped into on the same line (`piped`; nobody if none).
fn reader(c: &Captures<'_>, words: Vec<Word>) -> Vec<Word> {
    if words.first().is_none_or(|w| name(&w.text) != "cat") {
        return words;
    }
    c.name("piped").map(|p| split(p.as_str(), p.start())).unwrap_or_default()
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
    fed(&ws[i], Takes::Whole, hits);
}

/// Masks word `w` as fed to a reader that `takes` it so.
fn fed(w: &Word, takes: Takes, hits: &mut Vec<Hit>) {
    if let Some(range) = secret_in(&w.text, takes).and_then(|from| w.span(from, w.text.len())) {
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
    if stands_in(v) {
        return None;
    }
    // A variable anywhere in it (`%s$DB_PASS`, as quoted words joined read): the shell puts
    // the secret there, it is not written here.
    let b = v.as_bytes();
    if b.windows(2).any(|w| w[0] == b'$' && (w[1].is_ascii_alphabetic() || matches!(w[1], b'_' | b'{' | b'('))) {
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
