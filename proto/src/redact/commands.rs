//! Passwords handed to well-known commands by short options and positions, which no
//! name-based rule can see: `curl -u admin:PASS`, `docker login -p PASS`, `redis-cli -a PASS`,
//! `mysql -pPASS`, `sshpass -p PASS`, `htpasswd -b file user PASS`, `gh secret set X --body V`.
//!
//! The command's arguments (up to the next `|`, `;`, `&` or line end, `\`-continued lines
//! included) are split into shell words, quotes removed; a secret is replaced inside its
//! quotes (`-p'[REDACTED:password]'`).

use super::values::{names, stands_in, Names};
use super::Hit;
use regex::Captures;
use std::ops::Range;

/// The commands looked at (the rule's alternation and prefilter).
pub(super) const COMMANDS: &[&str] = &[
    "curl",
    "http",
    "https",
    "xh",
    "docker",
    "podman",
    "nerdctl",
    "buildah",
    "skopeo",
    "helm",
    "oras",
    "crane",
    "redis-cli",
    "valkey-cli",
    "keydb-cli",
    "mongo",
    "mongosh",
    "mongodump",
    "mongorestore",
    "mongoimport",
    "mongoexport",
    "mongostat",
    "mongotop",
    "mysql",
    "mysqldump",
    "mysqladmin",
    "mysqlimport",
    "mysqlshow",
    "mysqlcheck",
    "mysqlpump",
    "mariadb",
    "mariadb-dump",
    "mariadb-admin",
    "sshpass",
    "sqlcmd",
    "bcp",
    "ldapsearch",
    "ldapadd",
    "ldapmodify",
    "ldapdelete",
    "ldappasswd",
    "ldapwhoami",
    "ldapcompare",
    "ldapmodrdn",
    "smbclient",
    "rpcclient",
    "smbmap",
    "az",
    "aws",
    "openssl",
    "zip",
    "unzip",
    "7z",
    "7za",
    "7zr",
    "unrar",
    "rar",
    "cargo",
    "poetry",
    "evil-winrm",
    "doctl",
    "psexec.py",
    "smbexec.py",
    "wmiexec.py",
    "secretsdump.py",
    "atexec.py",
    "dcomexec.py",
    "impacket-psexec",
    "impacket-smbexec",
    "impacket-wmiexec",
    "impacket-secretsdump",
    "impacket-atexec",
    "impacket-dcomexec",
    "hydra",
    "medusa",
    "ncrack",
    "patator",
    "wpa_passphrase",
    "ssh-keygen",
    "htpasswd",
    "keytool",
    "gh",
    "fly",
    "flyctl",
    "doppler",
    "kubectl",
    "vault",
    "sqlplus",
    "dotnet",
    "twine",
    "lftp",
    "ncftp",
    "ncftpput",
    "ncftpget",
    "net",
    "rabbitmqctl",
    "mc",
    "vercel",
    "pulumi",
    "cqlsh",
    "rdesktop",
    "ipmitool",
    "mosquitto_pub",
    "mosquitto_sub",
    "mosquitto_rr",
    "isql",
    "xfreerdp",
    "wlfreerdp",
    "sdl-freerdp",
    "xfreerdp3",
    "snmpwalk",
    "snmpget",
    "snmpset",
    "snmpbulkwalk",
    "snmpbulkget",
    "snmpgetnext",
    "snmptrap",
    "ansible-vault",
    "oathtool",
    "rclone",
    "mkpasswd",
    "slappasswd",
    "doveadm",
    "mosquitto_passwd",
    "bw",
    "db2",
    "composer",
    "useradd",
    "usermod",
    "oc",
    "influx",
    "restic",
];

/// A word that can be a token given on a command line: one that reads like a password or
/// looks generated (not `,`, `--help`, a word of prose).
fn looks_like_token(w: &str) -> bool {
    !w.contains(char::is_whitespace) && (super::values::password_like(w) || super::values::looks_random(w))
}

/// Impacket's scripts by their file names (the `impacket-` commands are found by prefix).
const IMPACKET: &[&str] = &["psexec.py", "smbexec.py", "wmiexec.py", "secretsdump.py", "atexec.py", "dcomexec.py"];

/// The prefilter's words for the rule: each command followed by a space, a tab or `.exe`.
pub(super) fn keywords() -> Vec<&'static str> {
    static WORDS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    let words = WORDS.get_or_init(|| {
        COMMANDS.iter().flat_map(|c| [format!("{c} "), format!("{c}\t"), format!("{c}.exe")]).collect()
    });
    words.iter().map(String::as_str).collect()
}

/// A shell word: its text with quotes and escapes removed, and where each of its bytes was.
pub(super) struct Word {
    pub(super) text: String,
    at: Vec<usize>,
}

impl Word {
    /// The span in the original text of `text[a..b]`.
    pub(super) fn span(&self, a: usize, b: usize) -> Option<Range<usize>> {
        if a >= b || b > self.at.len() {
            return None;
        }
        Some(self.at[a]..self.at[b - 1] + 1)
    }
}

/// Splits `s` (found at `base`) into shell words.
pub(super) fn split(s: &str, base: usize) -> Vec<Word> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    // The word being read: its bytes and where each was.
    let mut cur: Option<(Vec<u8>, Vec<usize>)> = None;
    let finish = |cur: &mut Option<(Vec<u8>, Vec<usize>)>, out: &mut Vec<Word>| {
        if let Some((bytes, at)) = cur.take() {
            out.push(Word { text: String::from_utf8_lossy(&bytes).into_owned(), at });
        }
    };
    let push = |cur: &mut Option<(Vec<u8>, Vec<usize>)>, i: usize| {
        let (bytes, at) = cur.get_or_insert_with(Default::default);
        bytes.push(b[i]);
        at.push(base + i);
    };
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b' ' | b'\t' | b'\r' | b'\n' => {
                finish(&mut cur, &mut out);
                i += 1;
            }
            b'\\' => match (b.get(i + 1), b.get(i + 2)) {
                (Some(b'\n'), _) => i += 2, // a continued line
                (Some(b'\r'), Some(b'\n')) => i += 3,
                (Some(_), _) => {
                    push(&mut cur, i + 1);
                    i += 2;
                }
                (None, _) => i += 1,
            },
            // `$'…'` (ANSI-C quoting) is a literal like `'…'`, not a variable.
            b'$' if b.get(i + 1) == Some(&b'\'') && b[i + 2..].contains(&b'\'') => i += 1,
            // A quote without its closing one is a character (a fragment of a command).
            q @ (b'\'' | b'"') if !b[i + 1..].contains(&q) => {
                push(&mut cur, i);
                i += 1;
            }
            q @ (b'\'' | b'"') => {
                cur.get_or_insert_with(Default::default);
                i += 1;
                while i < b.len() && b[i] != q {
                    if q == b'"' && b[i] == b'\\' && matches!(b.get(i + 1), Some(b'"' | b'\\' | b'$' | b'`')) {
                        i += 1;
                    }
                    push(&mut cur, i);
                    i += 1;
                }
                i += 1;
            }
            _ => {
                push(&mut cur, i);
                i += 1;
            }
        }
    }
    finish(&mut cur, &mut out);
    out
}

/// How a value is given to an option.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Form {
    /// `-p VALUE`, `-pVALUE`, `-p=VALUE`.
    Any,
    /// `-k VALUE` only (`openssl -key FILE` is another option).
    Separate,
    /// `-pVALUE` only (`mysql -p db` names a database, the password is asked).
    Attached,
    /// `-u VALUE`, `-uVALUE` and, for a cluster of flags, `-sSu VALUE`.
    Cluster,
}

/// Lower-case letters only: after `-p`, the rest of another option (`-passout`), not a
/// value (`-pS3cret`).
fn is_word(s: &str) -> bool {
    s.bytes().all(|b| b.is_ascii_lowercase())
}

/// The values given to `opts` in `ws`: (word index, byte offset of the value in it).
fn values(ws: &[Word], opts: &[&str], form: Form) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for (i, w) in ws.iter().enumerate() {
        let t = w.text.as_str();
        for opt in opts {
            let short = !opt.starts_with("--") && opt.len() == 2;
            if t == *opt {
                if form != Form::Attached {
                    if let Some(n) = ws.get(i + 1) {
                        if !n.text.starts_with('-') || n.text.len() == 1 {
                            out.push((i + 1, 0));
                        }
                    }
                }
            } else if let Some(rest) = t.strip_prefix(opt) {
                if rest.starts_with('=') && !matches!(form, Form::Attached | Form::Separate) {
                    out.push((i, opt.len() + 1));
                } else if short && !rest.is_empty() && form != Form::Separate && (form != Form::Any || !is_word(rest)) {
                    out.push((i, opt.len()));
                }
            } else if short && form == Form::Cluster && t.len() > 2 && t.starts_with('-') && !t.starts_with("--") {
                let letter = &opt[1..];
                let next_is_value = ws.get(i + 1).is_some_and(|n| !n.text.starts_with('-'));
                if t.ends_with(letter) && t[1..].bytes().all(|b| b.is_ascii_alphabetic()) && next_is_value {
                    out.push((i + 1, 0));
                }
            }
        }
    }
    out
}

/// Adds the value of word `i` from byte `from` as a secret of `kind`.
fn take(ws: &[Word], (i, from): (usize, usize), kind: &'static str, hits: &mut Vec<Hit>) {
    let Some(w) = ws.get(i) else { return };
    let v = w.text.get(from..).unwrap_or("");
    if !stands_in(v) {
        if let Some(range) = w.span(from, w.text.len()) {
            hits.push(Hit { range, kind: Some(kind.into()) });
        }
    }
}

/// Adds the word `ws[i]` that `echo` or `printf` prints (a `)` closing a substitution after
/// it left out; `-n`, `-e` and `%s` skipped).
fn take_echoed(ws: &[Word], mut i: usize, hits: &mut Vec<Hit>) {
    while ws.get(i).is_some_and(|w| w.text.starts_with('-') || w.text.starts_with('%')) {
        i += 1;
    }
    let Some(w) = ws.get(i) else { return };
    let end = w.text.trim_end_matches(')').len();
    if end > 0 && !stands_in(&w.text[..end]) {
        if let Some(range) = w.span(0, end) {
            hits.push(Hit { range, kind: Some("password".into()) });
        }
    }
}

/// Adds what follows the first `sep` in the value (`user:PASS`, `user%PASS`).
fn take_after(ws: &[Word], (i, from): (usize, usize), sep: char, hits: &mut Vec<Hit>) {
    let Some(w) = ws.get(i) else { return };
    let v = w.text.get(from..).unwrap_or("");
    if stands_in(v) {
        return; // `-u "$CREDS"`, `-u <user:password>`
    }
    if let Some(p) = v.find(sep) {
        let pass = &v[p + 1..];
        if !stands_in(pass) {
            if let Some(range) = w.span(from + p + 1, w.text.len()) {
                hits.push(Hit { range, kind: Some("password".into()) });
            }
        } else if pass.is_empty() && super::values::looks_random(&v[..p]) {
            // `-u sk_test_…:`: an API key given as the user, the password empty (Stripe's
            // and others' Basic form).
            if let Some(range) = w.span(from, from + p) {
                hits.push(Hit { range, kind: Some("secret".into()) });
            }
        }
    }
}

/// Words that are not options (`-x`, `--xyz`), after the first.
fn positional(ws: &[Word]) -> Vec<usize> {
    (0..ws.len()).filter(|&i| !ws[i].text.starts_with('-')).collect()
}

/// The arguments of `ws` (indices into it): words that are neither options nor the value of
/// one of `with_value` (`-salt S`), up to a redirection (`<<< X` is the input, not one).
fn arguments(ws: &[Word], with_value: &[&str]) -> Vec<usize> {
    let end = ws.iter().position(|w| w.text.starts_with(['<', '>'])).unwrap_or(ws.len());
    (0..end)
        .filter(|&i| !ws[i].text.starts_with('-'))
        .filter(|&i| i == 0 || !with_value.contains(&ws[i - 1].text.as_str()))
        .collect()
}

fn has(ws: &[Word], word: &str) -> bool {
    ws.iter().any(|w| w.text == word)
}

/// The command a word names, if it is one of [`COMMANDS`] (`/usr/bin/curl`, `curl.exe`),
/// also where a substitution starts it (`-p $(openssl passwd X)`).
fn command(word: &str) -> Option<String> {
    let word = word.trim_start_matches(['$', '(', '`']);
    let name = word.rsplit(['/', '\\']).next().unwrap_or(word).to_ascii_lowercase();
    let name = name.strip_suffix(".exe").map(str::to_string).unwrap_or(name);
    COMMANDS.contains(&name.as_str()).then_some(name)
}

/// The words of `ws`, a quoted word that holds a command split again (`sh -c "mysql -pX"`),
/// with the places of their bytes kept.
fn flatten(ws: Vec<Word>) -> Vec<Word> {
    let mut out = Vec::with_capacity(ws.len());
    for w in ws {
        if !w.text.contains([' ', '\t', '\n']) {
            out.push(w);
            continue;
        }
        let inner = split(&w.text, 0);
        // A script (`sh -c "mysql -pX"`, `bash -c "cd x && redis-cli -a X"`): it starts with a
        // command, or joins commands. A quoted value of several words that merely holds a
        // command's name (`-p 'Qzx7 curl Pw'`) is one value.
        let script = inner.first().is_some_and(|x| command(&x.text).is_some())
            || (w.text.contains(['&', ';', '|']) && inner.iter().any(|x| command(&x.text).is_some()));
        if !script {
            out.push(w);
            continue;
        }
        out.extend(split_again(&w, flatten(inner)));
    }
    out
}

/// The words of `ws` with each quoted word of several split into its own (`db2 "connect to
/// D user U using P"`), the places of their bytes kept.
fn spread(ws: &[Word]) -> Vec<Word> {
    let mut out = Vec::with_capacity(ws.len());
    for w in ws {
        if !w.text.contains([' ', '\t', '\n']) {
            out.push(Word { text: w.text.clone(), at: w.at.clone() });
            continue;
        }
        out.extend(split_again(w, split(&w.text, 0)));
    }
    out
}

/// `inner` (the words of `w`'s text) with the places of their bytes in `w`'s text made
/// places in the original.
fn split_again(w: &Word, inner: Vec<Word>) -> impl Iterator<Item = Word> + '_ {
    inner.into_iter().map(|x| {
        let at = x.at.iter().filter_map(|&i| w.at.get(i).copied()).collect();
        Word { text: x.text, at }
    })
}

/// The secrets in the arguments (`tail`) of `cmd`, and in those of the commands among them
/// (`docker exec db mysql -pX`, `sh -c "redis-cli -a X"`): the search goes on after the
/// whole match.
pub(super) fn check(c: &Captures<'_>, hits: &mut Vec<Hit>) {
    let (Some(cmd), Some(tail)) = (c.name("cmd"), c.name("tail")) else { return };
    let ws = flatten(split(tail.as_str(), tail.start()));
    let Some(mut name) = command(cmd.as_str()) else { return };
    let mut start = 0;
    loop {
        let end = ws[start..].iter().position(|w| command(&w.text).is_some()).map_or(ws.len(), |p| start + p);
        one(&name, &ws[start..end], hits);
        let Some(next) = ws.get(end).and_then(|w| command(&w.text)) else { break };
        name = next;
        start = end + 1;
    }
    hits.sort_by_key(|h| h.range.start);
    hits.dedup_by(|b, a| b.range.start < a.range.end);
}

/// The secrets in the words `ws` given to the command `name`.
fn one(name: &str, ws: &[Word], hits: &mut Vec<Hit>) {
    let pw = "password";
    match name {
        "curl" => {
            for v in values(ws, &["-u", "--user", "-U", "--proxy-user"], Form::Cluster) {
                take_after(ws, v, ':', hits);
            }
            // `-E cert.pem:PASS`: a client certificate and its passphrase.
            for v in values(ws, &["-E", "--cert", "--proxy-cert"], Form::Any) {
                take_after(ws, v, ':', hits);
            }
        }
        "http" | "https" | "xh" => {
            for v in values(ws, &["-a", "--auth"], Form::Any) {
                take_after(ws, v, ':', hits);
            }
        }
        "docker" | "podman" | "nerdctl" | "buildah" | "skopeo" | "helm" | "oras" | "crane" => {
            if has(ws, "login") {
                for v in values(ws, &["-p", "--password"], Form::Any) {
                    take(ws, v, pw, hits);
                }
            }
            for v in values(ws, &["--creds", "--src-creds", "--dest-creds", "--from-creds"], Form::Any) {
                take_after(ws, v, ':', hits);
            }
        }
        "redis-cli" | "valkey-cli" | "keydb-cli" => {
            for v in values(ws, &["-a", "--pass"], Form::Separate) {
                take(ws, v, pw, hits);
            }
            // `CONFIG SET requirepass PASS` (and `masterauth`).
            if let Some(i) =
                ws.iter().position(|w| matches!(w.text.to_ascii_lowercase().as_str(), "requirepass" | "masterauth"))
            {
                take(ws, (i + 1, 0), pw, hits);
            }
            // `redis-cli AUTH PASS`, `redis-cli AUTH USER PASS`: the command's last argument.
            if let Some(i) = ws.iter().position(|w| w.text.eq_ignore_ascii_case("auth")) {
                let args: Vec<usize> =
                    (i + 1..ws.len()).take_while(|&j| !ws[j].text.starts_with('-')).take(2).collect();
                if let Some(&last) = args.last() {
                    take(ws, (last, 0), pw, hits);
                }
            }
        }
        n if n.starts_with("mongo") => {
            for v in values(ws, &["-p", "--password"], Form::Any) {
                take(ws, v, pw, hits);
            }
        }
        n if n.starts_with("mysql") || n.starts_with("mariadb") => {
            for v in values(ws, &["-p"], Form::Attached) {
                take(ws, v, pw, hits);
            }
        }
        "sshpass" => {
            for v in values(ws, &["-p"], Form::Any) {
                take(ws, v, pw, hits);
            }
        }
        "sqlcmd" | "bcp" => {
            for v in values(ws, &["-P"], Form::Any) {
                take(ws, v, pw, hits);
            }
        }
        n if n.starts_with("ldap") => {
            let opts: &[&str] = if n == "ldappasswd" { &["-w", "-s", "-a"] } else { &["-w"] };
            for v in values(ws, opts, Form::Any) {
                take(ws, v, pw, hits);
            }
        }
        "smbclient" | "rpcclient" | "smbmap" => {
            for v in values(ws, &["-U", "--user"], Form::Any) {
                take_after(ws, v, '%', hits);
            }
            if name == "smbmap" {
                for v in values(ws, &["-p"], Form::Any) {
                    take(ws, v, pw, hits);
                }
            }
        }
        "az" => {
            if has(ws, "login") {
                for v in values(ws, &["-p", "--password"], Form::Any) {
                    take(ws, v, pw, hits);
                }
            }
            // `az keyvault secret set --value V`.
            if has(ws, "secret") && has(ws, "set") {
                for v in values(ws, &["--value"], Form::Any) {
                    take(ws, v, "secret", hits);
                }
            }
        }
        "aws" => {
            // `aws ssm put-parameter --type SecureString --value V`; `aws configure set
            // aws_secret_access_key V` (any credential's name).
            if has(ws, "SecureString") {
                for v in values(ws, &["--value"], Form::Any) {
                    take(ws, v, "secret", hits);
                }
            }
            let pos = positional(ws);
            if pos.len() >= 4 && ws[pos[0]].text == "configure" && ws[pos[1]].text == "set" {
                let name = ws[pos[2]].text.rsplit('.').next().unwrap_or("");
                if matches!(names(name), Names::Token | Names::Password) {
                    take(ws, (pos[3], 0), "secret", hits);
                }
            }
        }
        "openssl" => {
            for v in values(ws, &["-k"], Form::Separate) {
                take(ws, v, pw, hits);
            }
            // `openssl passwd -6 -salt S PASS` (`useradd -p $(openssl passwd -1 PASS)`).
            // One password is the rule; in `$(…)` the words run on past its `)`.
            if ws.first().is_some_and(|w| w.text == "passwd") {
                if let Some(&i) = arguments(&ws[1..], &["-salt", "-in"]).first() {
                    let w = &ws[i + 1];
                    let end = w.text.find(')').unwrap_or(w.text.len());
                    if !stands_in(&w.text[..end]) {
                        if let Some(range) = w.span(0, end) {
                            hits.push(Hit { range, kind: Some(pw.into()) });
                        }
                    }
                }
            }
        }
        "ansible-vault" if ws.first().is_some_and(|w| w.text == "encrypt_string") => {
            let with_value = ["-n", "--name", "--vault-id", "--vault-password-file", "--stdin-name", "--output"];
            for i in arguments(&ws[1..], &with_value) {
                take(ws, (i + 1, 0), "secret", hits);
            }
        }
        // `mkpasswd -m sha-512 PASS [SALT]`: the first argument.
        "mkpasswd" => {
            if let Some(&i) = arguments(ws, &["-m", "--method", "-S", "--salt", "-R", "--rounds", "-P"]).first() {
                take(ws, (i, 0), pw, hits);
            }
        }
        "slappasswd" => {
            for v in values(ws, &["-s"], Form::Any) {
                take(ws, v, pw, hits);
            }
        }
        "doveadm" if has(ws, "pw") => {
            for v in values(ws, &["-p"], Form::Any) {
                take(ws, v, pw, hits);
            }
        }
        // `mosquitto_passwd -b FILE USER PASS`.
        "mosquitto_passwd" if has(ws, "-b") => {
            if let Some(&i) = arguments(ws, &[]).get(2) {
                take(ws, (i, 0), pw, hits);
            }
        }
        // `bw unlock PASS`, `bw login USER PASS`.
        // `db2 connect to DB user U using PASS [new N confirm N]`, also quoted as one word
        // (`db2 "connect to DB user U using PASS"`).
        "db2" => {
            let ws = spread(ws);
            for (i, w) in ws.iter().enumerate() {
                if ["using", "new", "confirm"].iter().any(|k| w.text.eq_ignore_ascii_case(k))
                    && ws.iter().take(i).any(|u| u.text.eq_ignore_ascii_case("user"))
                {
                    take(&ws, (i + 1, 0), pw, hits);
                }
            }
        }
        // `composer config [-g] http-basic.HOST USER PASS`, and the other stores of its
        // `auth.json`: `github-oauth.HOST TOKEN`, `bitbucket-oauth.HOST KEY SECRET`, ….
        "composer" if has(ws, "config") => {
            let args = positional(ws);
            for (k, &i) in args.iter().enumerate() {
                let store = ws[i].text.split('.').next().unwrap_or("");
                let at = match store {
                    "http-basic" | "bitbucket-oauth" => 2,
                    "github-oauth" | "gitlab-oauth" | "gitlab-token" | "bearer" | "forgejo-token" => 1,
                    _ => continue,
                };
                if let Some(&v) = args.get(k + at) {
                    take(ws, (v, 0), pw, hits);
                }
            }
        }
        // OpenShift's `oc login -u U -p PASS`.
        "oc" if has(ws, "login") => {
            for v in values(ws, &["-p", "--password"], Form::Any) {
                take(ws, v, pw, hits);
            }
        }
        // InfluxDB's `influx setup -u U -p PASS`, `influx user password … -p PASS`, `influx v1
        // auth create --password PASS` (elsewhere `-p` is a precision).
        "influx" if has(ws, "setup") || has(ws, "user") || has(ws, "auth") => {
            for v in values(ws, &["-p", "--password"], Form::Any) {
                take(ws, v, pw, hits);
            }
        }
        // restic's password file made on the spot (`-p <(echo PASS)`), and its command
        // (`--password-command 'echo PASS'`).
        "restic" => {
            for (i, _) in values(ws, &["-p", "--password-file"], Form::Separate) {
                if ws[i].text == "<(echo" || ws[i].text == "<(printf" {
                    take_echoed(ws, i + 1, hits);
                }
            }
            for (i, from) in values(ws, &["--password-command"], Form::Any) {
                let inner = split_again(&ws[i], split(ws[i].text.get(from..).unwrap_or(""), from)).collect::<Vec<_>>();
                if inner.first().is_some_and(|w| w.text == "echo" || w.text == "printf") {
                    take_echoed(&inner, 1, hits);
                }
            }
        }
        // `useradd -p PASS`, `usermod --password PASS`: a crypt(3) hash, or worse, the
        // password itself.
        "useradd" | "usermod" => {
            for v in values(ws, &["-p", "--password"], Form::Any) {
                take(ws, v, pw, hits);
            }
        }
        "bw" => {
            let args = arguments(ws, &["--session", "--method", "--code"]);
            let at = match ws.get(args.first().copied().unwrap_or(usize::MAX)).map(|w| w.text.as_str()) {
                Some("unlock") => 1,
                Some("login") => 2,
                _ => usize::MAX,
            };
            if let Some(&i) = args.get(at) {
                take(ws, (i, 0), pw, hits);
            }
        }
        "oathtool" => {
            // The key is the first argument (a second one is an OTP to check).
            let with_value =
                ["-d", "--digits", "-w", "--window", "-s", "--time-step-size", "-S", "--start-time", "-N", "--now"];
            if let Some(&i) = arguments(ws, &with_value).first() {
                take(ws, (i, 0), "secret", hits);
            }
        }
        "rclone" => {
            let pos = positional(ws);
            let sub: Vec<&str> = pos.iter().take(2).map(|&i| ws[i].text.as_str()).collect();
            match sub.as_slice() {
                ["obscure", ..] => {
                    if let Some(&i) = pos.get(1) {
                        take(ws, (i, 0), pw, hits);
                    }
                }
                // `rclone config create NAME TYPE KEY VALUE …`, `config update NAME KEY VALUE …`:
                // the values of keys that name a credential.
                ["config", verb @ ("create" | "update" | "password")] => {
                    let first = if *verb == "create" { 4 } else { 3 };
                    let mut k = first;
                    while k < pos.len() {
                        let key = ws[pos[k]].text.as_str();
                        if let Some((name, _)) = key.split_once('=') {
                            if matches!(names(name), Names::Token | Names::Password) || *verb == "password" {
                                take(ws, (pos[k], name.len() + 1), "secret", hits);
                            }
                            k += 1;
                            continue;
                        }
                        if let Some(&v) = pos.get(k + 1) {
                            if matches!(names(key), Names::Token | Names::Password) || *verb == "password" {
                                take(ws, (v, 0), "secret", hits);
                            }
                        }
                        k += 2;
                    }
                }
                _ => {}
            }
        }
        "zip" | "unzip" => {
            for v in values(ws, &["-P", "--password"], Form::Any) {
                take(ws, v, pw, hits);
            }
        }
        "7z" | "7za" | "7zr" | "unrar" | "rar" => {
            for v in values(ws, &["-p"], Form::Attached) {
                take(ws, v, pw, hits);
            }
        }
        // `hydra -l admin -p PASS`, `medusa -u admin -p PASS`, `ncrack --pass PASS`.
        "hydra" | "medusa" | "ncrack" | "patator" => {
            for v in values(ws, &["-p", "--pass"], Form::Separate) {
                take(ws, v, pw, hits);
            }
        }
        // `wpa_passphrase SSID PASSPHRASE`.
        "wpa_passphrase" => {
            if let Some(&i) = positional(ws).get(1) {
                take(ws, (i, 0), pw, hits);
            }
        }
        "ssh-keygen" => {
            for v in values(ws, &["-N", "-P"], Form::Any) {
                take(ws, v, pw, hits);
            }
        }
        "htpasswd" => {
            // `htpasswd -b[c] FILE USER PASS`, `htpasswd -nb USER PASS`.
            let flags: String = ws
                .iter()
                .filter(|w| w.text.starts_with('-') && !w.text.starts_with("--"))
                .map(|w| w.text.as_str())
                .collect();
            if flags.contains('b') {
                let pos = positional(ws);
                let at = if flags.contains('n') { 1 } else { 2 };
                if let Some(&i) = pos.get(at) {
                    take(ws, (i, 0), pw, hits);
                }
            }
        }
        "keytool" => {
            for v in values(ws, &["-new"], Form::Separate) {
                take(ws, v, pw, hits);
            }
        }
        "gh" if ws.first().is_some_and(|w| w.text == "secret") && ws.get(1).is_some_and(|w| w.text == "set") => {
            for v in values(ws, &["--body", "-b"], Form::Any) {
                take(ws, v, "secret", hits);
            }
        }
        "fly" | "flyctl" | "doppler" if has(ws, "secrets") && (has(ws, "set") || has(ws, "import")) => {
            assignments(ws, hits);
        }
        "vault" => {
            let sub: Vec<&str> = ws.iter().take(2).map(|w| w.text.as_str()).collect();
            if sub.first() == Some(&"kv") && matches!(sub.get(1), Some(&("put" | "patch"))) {
                assignments(ws, hits);
            }
            // `vault login TOKEN` (any shape of token; `-method=…` logins give `key=value`).
            if sub.first() == Some(&"login") {
                // The first argument only, and one that looks like a token (what follows
                // in prose or code is not).
                let token = arguments(ws, &[]).into_iter().find(|&i| i > 0);
                if let Some(i) = token.filter(|&i| looks_like_token(&ws[i].text)) {
                    take(ws, (i, 0), "secret", hits);
                }
            }
        }
        // `cargo login TOKEN`, `cargo login --registry corp TOKEN`.
        "cargo" if ws.first().is_some_and(|w| w.text == "login") => {
            let token = arguments(ws, &["--registry", "--config", "-Z"]).into_iter().find(|&i| i > 0);
            if let Some(i) = token.filter(|&i| looks_like_token(&ws[i].text)) {
                take(ws, (i, 0), "secret", hits);
            }
        }
        // `poetry config http-basic.NAME USER PASS`, `poetry config pypi-token.NAME TOKEN`.
        "poetry" if ws.first().is_some_and(|w| w.text == "config") => {
            let args = arguments(ws, &[]);
            for (k, &i) in args.iter().enumerate() {
                let key = ws[i].text.as_str();
                let at = if key.starts_with("http-basic.") {
                    2
                } else if key.starts_with("pypi-token.") {
                    1
                } else {
                    continue;
                };
                if let Some(&v) = args.get(k + at) {
                    take(ws, (v, 0), pw, hits);
                }
            }
        }
        // `evil-winrm -u USER -p PASS` (or `-H HASH`).
        "evil-winrm" => {
            for v in values(ws, &["-p", "--password", "-H", "--hash"], Form::Separate) {
                take(ws, v, pw, hits);
            }
        }
        // `doctl auth init -t TOKEN`.
        "doctl" if has(ws, "auth") => {
            for v in values(ws, &["-t", "--access-token"], Form::Any) {
                take(ws, v, "secret", hits);
            }
        }
        // Impacket's targets: `[DOMAIN/]USER:PASS@HOST`.
        n if n.starts_with("impacket-") || IMPACKET.contains(&n) => {
            for i in arguments(ws, &[]) {
                let t = ws[i].text.as_str();
                if let (Some(colon), Some(at)) = (t.find(':'), t.rfind('@')) {
                    if colon < at && !t[..colon].contains("//") {
                        if let Some(range) = ws[i].span(colon + 1, at) {
                            hits.push(Hit { range, kind: Some(pw.into()) });
                        }
                    }
                }
            }
        }
        "kubectl" if has(ws, "secret") => {
            for (i, from) in values(ws, &["--from-literal"], Form::Any) {
                let v = ws[i].text.get(from..).unwrap_or("");
                if let Some(eq) = v.find('=') {
                    take(ws, (i, from + eq + 1), "secret", hits);
                }
            }
        }
        "twine" | "ncftp" | "ncftpput" | "ncftpget" => {
            for v in values(ws, &["-p", "--password"], Form::Any) {
                take(ws, v, pw, hits);
            }
        }
        "lftp" => {
            // `lftp -u bob,PASS sftp://host`.
            for v in values(ws, &["-u", "--user"], Form::Any) {
                take_after(ws, v, ',', hits);
            }
        }
        "net" => {
            // `net user bob PASS /add` (`*` asks for it); `net use \\host\share PASS /user:bob`.
            let pos: Vec<usize> = positional(ws).into_iter().filter(|&i| !ws[i].text.starts_with('/')).collect();
            if pos.len() >= 3 && ws[pos[0]].text.eq_ignore_ascii_case("user") && ws[pos[2]].text != "*" {
                take(ws, (pos[2], 0), pw, hits);
            }
            if pos.len() >= 2 && ws[pos[0]].text.eq_ignore_ascii_case("use") {
                // The word after the share (`\\\\host\\share` as shell words read it: `\\hostshare`).
                let share = pos.iter().position(|&i| ws[i].text.starts_with('\\'));
                if let Some(&i) = share.and_then(|k| pos.get(k + 1)) {
                    if ws[i].text != "*" {
                        take(ws, (i, 0), pw, hits);
                    }
                }
            }
        }
        "cqlsh" => {
            for v in values(ws, &["-p", "--password"], Form::Any) {
                take(ws, v, pw, hits);
            }
        }
        "rdesktop" => {
            for v in values(ws, &["-p"], Form::Any) {
                if ws.get(v.0).is_some_and(|w| w.text != "-") {
                    take(ws, v, pw, hits);
                }
            }
        }
        "ipmitool" | "isql" => {
            for v in values(ws, &["-P"], Form::Any) {
                take(ws, v, pw, hits);
            }
            // unixODBC's `isql DSN USER PASS`.
            let pos = positional(ws);
            if name == "isql" && pos.len() >= 3 && !ws.iter().any(|w| w.text == "-P") {
                take(ws, (pos[2], 0), pw, hits);
            }
        }
        n if n.starts_with("mosquitto_") => {
            for v in values(ws, &["-P", "--pw"], Form::Any) {
                take(ws, v, pw, hits);
            }
        }
        n if n.contains("freerdp") => {
            // `/p:PASS`, `/password:PASS`, and a `/u:DOMAIN\\user:PASS`-free form: FreeRDP's own.
            for w in ws {
                for opt in ["/p:", "/password:", "-p:"] {
                    if let Some(rest) = w.text.strip_prefix(opt) {
                        if !stands_in(rest) {
                            if let Some(range) = w.span(opt.len(), w.text.len()) {
                                hits.push(Hit { range, kind: Some(pw.into()) });
                            }
                        }
                    }
                }
            }
        }
        n if n.starts_with("snmp") => {
            // SNMPv3's authentication and privacy passphrases; v1/v2c's community string.
            for v in values(ws, &["-A", "-X"], Form::Any) {
                take(ws, v, pw, hits);
            }
            let v12 = ws.iter().any(|w| matches!(w.text.as_str(), "-v1" | "-v2c" | "-v" | "-v2"));
            if v12 {
                for v in values(ws, &["-c"], Form::Any) {
                    if ws.get(v.0).is_some_and(|w| !matches!(&w.text[v.1..], "public" | "private")) {
                        take(ws, v, "secret", hits);
                    }
                }
            }
        }
        "rabbitmqctl" => {
            // `rabbitmqctl add_user NAME PASS`, `change_password NAME PASS`.
            let pos = positional(ws);
            if pos.len() >= 3 && matches!(ws[pos[0]].text.as_str(), "add_user" | "change_password") {
                take(ws, (pos[2], 0), pw, hits);
            }
        }
        "mc" => {
            // `mc alias set NAME URL ACCESS_KEY SECRET_KEY`.
            let pos = positional(ws);
            if pos.len() >= 6 && ws[pos[0]].text == "alias" && ws[pos[1]].text == "set" {
                take(ws, (pos[5], 0), "secret", hits);
            }
        }
        "sqlplus" => {
            // `sqlplus user/PASS@db`.
            if let Some(&i) = positional(ws).first() {
                let t = &ws[i].text;
                if let Some(slash) = t.find('/') {
                    let end = t[slash..].find('@').map_or(t.len(), |a| slash + a);
                    let pass = &t[slash + 1..end];
                    if !stands_in(pass) && !t.starts_with('/') {
                        if let Some(range) = ws[i].span(slash + 1, end) {
                            hits.push(Hit { range, kind: Some("password".into()) });
                        }
                    }
                }
            }
        }
        "vercel" => {
            // `vercel deploy -t TOKEN` (`--token` is every command line's option rule's).
            for v in values(ws, &["-t"], Form::Any) {
                take(ws, v, "secret", hits);
            }
        }
        "pulumi" => {
            // `pulumi config set --secret KEY VALUE`: the value (options that take one are
            // skipped: `-s dev`, `--stack dev`, `-C dir`).
            let takes = ["-s", "--stack", "-C", "--cwd", "--config-file"];
            let pos: Vec<usize> = (0..ws.len())
                .filter(|&i| !ws[i].text.starts_with('-'))
                .filter(|&i| i == 0 || !takes.contains(&ws[i - 1].text.as_str()))
                .collect();
            if has(ws, "--secret") && pos.len() >= 4 && ws[pos[0]].text == "config" && ws[pos[1]].text == "set" {
                take(ws, (pos[3], 0), "secret", hits);
            }
        }
        "dotnet" => {
            // `dotnet user-secrets set KEY VALUE`.
            let pos = positional(ws);
            if pos.len() >= 4 && ws[pos[0]].text == "user-secrets" && ws[pos[1]].text == "set" {
                take(ws, (pos[3], 0), "secret", hits);
            }
        }
        _ => {}
    }
}

/// The values of the `KEY=VALUE` words (`fly secrets set A=1 B=2`).
fn assignments(ws: &[Word], hits: &mut Vec<Hit>) {
    for (i, w) in ws.iter().enumerate() {
        if w.text.starts_with('-') {
            continue;
        }
        if let Some(eq) = w.text.find('=') {
            let key = &w.text[..eq];
            let v = &w.text[eq + 1..];
            if !key.is_empty()
                && key.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
                && !v.starts_with('@')
                && v != "-"
            {
                take(ws, (i, eq + 1), "secret", hits);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_keep_where_they_were() {
        let s = r#"-u 'admin:p w' "a\"b" c\ d e\
f"#;
        let ws = split(s, 10);
        let texts: Vec<&str> = ws.iter().map(|w| w.text.as_str()).collect();
        assert_eq!(texts, ["-u", "admin:p w", "a\"b", "c d", "ef"]);
        let r = ws[1].span(6, 9).unwrap();
        assert_eq!(&s[r.start - 10..r.end - 10], "p w");
    }
}
