//! The sensitive-data filter: every string the daemon keeps, writes or prints into the
//! agent's context passes through [`redact`] first.
//!
//! Rules are modelled on gitleaks': provider token formats are matched whole (AWS, GitHub,
//! GitLab, Slack, Stripe, OpenAI, Anthropic, npm, PyPI, Google, JWTs, PEM private keys);
//! `key=value` and `"key": "value"` pairs lose their value when the key names a secret;
//! credentials in URLs and `Authorization` headers lose the credential. A match becomes
//! `[REDACTED:<kind>]`. `<private>…</private>` spans are dropped whole.
//!
//! Near-misses are kept: commit hashes, UUIDs, base64 images, colours, code such as
//! `let token = lexer.next()` or `password: string`, prose such as "the token count".

use regex::{Captures, Regex};
use std::borrow::Cow;
use std::sync::{Arc, OnceLock, RwLock};

/// What a secret of `kind` becomes.
pub fn mask(kind: &str) -> String {
    format!("[REDACTED:{kind}]")
}

/// How a rule's match is replaced.
#[derive(Debug, Clone, Copy)]
enum Keep {
    /// The whole match goes.
    Nothing,
    /// Group 1 (a key, a scheme) stays; the rest goes.
    Prefix,
    /// Group 1 stays, group 2 goes, group 3 stays.
    Around,
}

#[derive(Debug)]
struct Rule {
    kind: String,
    re: Regex,
    keep: Keep,
}

/// The filter: the built-in rules and any the user added.
#[derive(Debug)]
pub struct Redactor {
    rules: Vec<Rule>,
    pairs: Regex,
    private: Regex,
}

const BUILT_IN: &[(&str, &str, Keep)] = &[
    (
        "private-key",
        r"(?s)-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\z)",
        Keep::Nothing,
    ),
    // `_` ends and starts a token too: file names join them with underscores
    // (`src/AKIA…_ghp_….txt`, `notes_sk-ant-….md`), where `\b` sees one word. The `_` is
    // kept (group 1 and 3 stay).
    ("aws-access-key", r"(\b|_)((?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16})(\b|_)", Keep::Around),
    (
        "aws-secret-key",
        // `KEY=value`, `key: value`, and the label in prose or on a command line
        // (`aws configure set aws_secret_access_key KEY`, "AWS secret key KEY", "secret KEY").
        r#"(?i)((?:\baws[_ -]?|\b)secret[_ -]?(?:(?:access[_ -]?)?key)?["']?(?:\s*[:=]\s*|\s+)(?:is\s+)?["']?)([A-Za-z0-9/+=]{40})\b"#,
        Keep::Prefix,
    ),
    ("github-token", r"(\b|_)(gh[pousr]_[A-Za-z0-9]{30,255}|github_pat_[A-Za-z0-9_]{22,255})(\b)", Keep::Around),
    ("gitlab-token", r"(\b|_)(gl(?:pat|dt|ptt|rt|cbt|soat|ffct|imt|agent)-[A-Za-z0-9_-]{20,})()", Keep::Around),
    ("slack-token", r"(\b|_)(xox[abeoprs]-[A-Za-z0-9-]{10,})()", Keep::Around),
    ("slack-webhook", r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_-]{20,}", Keep::Nothing),
    ("stripe-key", r"\b(?:sk|rk)_(?:live|test|prod)_[A-Za-z0-9]{10,99}\b", Keep::Nothing),
    ("anthropic-key", r"(\b|_)(sk-ant-[A-Za-z0-9_-]{20,})()", Keep::Around),
    ("openai-key", r"(\b|_)(sk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{20,})()", Keep::Around),
    ("npm-token", r"(\b|_)(npm_[A-Za-z0-9]{36})(\b)", Keep::Around),
    ("pypi-token", r"\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}", Keep::Nothing),
    ("google-api-key", r"\bAIza[0-9A-Za-z_-]{35}\b", Keep::Nothing),
    ("jwt", r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}", Keep::Nothing),
    (
        "azure-key",
        r"(?i)\b((?:AccountKey|SharedAccessKey|SharedAccessSignature)\s*=\s*)([A-Za-z0-9+/=%]{16,})",
        Keep::Prefix,
    ),
    ("url-password", r"(?i)\b([a-z][a-z0-9+.-]*://[^/\s:@'\x22]+:)([^/\s@'\x22]+)(@)", Keep::Around),
    (
        "authorization",
        r#"(?i)\b(authorization["']?\s*[:=]\s*["']?(?:(?:basic|bearer|digest|token|apikey)\s+)?)([^\s'"\[]{6,})"#,
        Keep::Prefix,
    ),
    ("bearer-token", r"(?i)\b(bearer\s+)([A-Za-z0-9._~+/=-]{8,})", Keep::Prefix),
    // A password given on a command line: `mysql -u root -pS3cret`, `sshpass -p S3cret`.
    (
        "password",
        r#"(\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mariadb|mariadb-dump)\b[^\n|;&]*?\s-p)([^\s'"|;&]+)"#,
        Keep::Prefix,
    ),
    ("password", r#"(\bsshpass\s+-p\s*)([^\s'"|;&]+)"#, Keep::Prefix),
    // In prose: "the password hunter2hunter2", "password is s3cr3t!" (a word of 6 or more
    // with a digit: "password reset" is not one).
    (
        "password",
        r#"(?i)(\b(?:password|passwd|passphrase)\s+(?:is\s+|was\s+|of\s+)?)([^\s'",;:]{5,}[0-9][^\s'",;]*|[^\s'",;:]*[0-9][^\s'",;]{5,})"#,
        Keep::Prefix,
    ),
];

/// Keys that name a secret, at the end of the key (`DB_PASSWORD`, `access_token`,
/// `"apiKey"`), followed by `=` or `:` and the value.
const PAIRS: &str = r#"(?i)\b([a-z0-9_.-]*?(?:password|passwd|pwd|passphrase|secret|token|api[_-]?key|apikey|access[_-]?key|secret[_-]?key|private[_-]?key|client[_-]?secret|credentials?|auth[_-]?token))(["']?[ \t]*[:=][ \t]*)("[^"\n]*"|'[^'\n]*'|[^\s'",;]+)"#;

impl Redactor {
    /// The built-in rules plus `extra` (kind, regex) pairs; an invalid pattern is an error
    /// naming it.
    pub fn new(extra: &[(String, String)]) -> Result<Self, String> {
        let mut rules: Vec<Rule> = BUILT_IN
            .iter()
            .map(|(kind, pat, keep)| Rule {
                kind: (*kind).into(),
                re: Regex::new(pat).unwrap_or_else(|e| panic!("built-in rule {kind}: {e}")),
                keep: *keep,
            })
            .collect();
        for (kind, pat) in extra {
            let re = Regex::new(pat).map_err(|e| format!("redaction pattern {kind:?} is not a valid regex: {e}"))?;
            rules.push(Rule { kind: kind.clone(), re, keep: Keep::Nothing });
        }
        Ok(Self {
            rules,
            pairs: Regex::new(PAIRS).expect("pair rule"),
            private: Regex::new(r"(?is)<private>.*?(?:</private>|\z)").expect("private rule"),
        })
    }

    /// `text` with every secret replaced by `[REDACTED:<kind>]` and private spans dropped.
    /// Borrowed when nothing was found.
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let mut out = Cow::Borrowed(text);
        if out.contains("<private>") || out.contains("<PRIVATE>") || out.contains("<Private>") {
            out = Cow::Owned(self.private.replace_all(&out, "").into_owned());
        }
        for r in &self.rules {
            if !r.re.is_match(&out) {
                continue;
            }
            let m = mask(&r.kind);
            let replaced = r.re.replace_all(&out, |c: &Captures| match r.keep {
                Keep::Nothing => m.clone(),
                Keep::Prefix => format!("{}{m}", &c[1]),
                Keep::Around => format!("{}{m}{}", &c[1], &c[3]),
            });
            out = Cow::Owned(replaced.into_owned());
        }
        if self.pairs.is_match(&out) {
            let replaced = self.pairs.replace_all(&out, |c: &Captures| {
                let v = &c[3];
                if is_secret_value(&c[1], v) {
                    let q = if v.starts_with('"') || v.starts_with('\'') { &v[..1] } else { "" };
                    format!("{}{}{q}{}{q}", &c[1], &c[2], mask("secret"))
                } else {
                    c[0].to_string()
                }
            });
            if replaced != out {
                out = Cow::Owned(replaced.into_owned());
            }
        }
        out
    }

    /// Whether `text` holds anything the filter would take out.
    pub fn finds(&self, text: &str) -> bool {
        matches!(self.redact(text), Cow::Owned(ref o) if o != text)
    }
}

/// Whether the value after a secret-naming key is a secret rather than code or prose:
/// `DB_PASSWORD=hunter2` and `"token": "abc"` are; `password: string`, `token = lexer.next()`,
/// `API_KEY=$API_KEY` and an already redacted value are not.
fn is_secret_value(key: &str, value: &str) -> bool {
    let quoted = value.len() >= 2 && (value.starts_with('"') || value.starts_with('\''));
    let inner = if quoted { &value[1..value.len() - 1] } else { value };
    if inner.is_empty() || inner.starts_with("[REDACTED") || inner.starts_with('$') || inner.starts_with("${") {
        return false;
    }
    let names_password = {
        let k = key.to_ascii_lowercase();
        ["password", "passwd", "pwd", "passphrase", "secret"].iter().any(|w| k.ends_with(w))
    };
    if inner.bytes().all(|b| b.is_ascii_digit()) {
        // `max_token=4096` is a setting; a numeric password is still a password.
        return names_password;
    }
    // After a password's key, a bare word is the password (`password=CorrectHorseBatteryStaple`,
    // `db_password: SuperSecretValue`), unless it is a type, a keyword, a member path or a
    // call (`password: string`, `pwd = getpass()`), or the key's own name.
    if names_password && !quoted && !inner.contains(['.', '(', '[', '<']) {
        const NOT_SECRETS: &[&str] = &[
            "string",
            "str",
            "bool",
            "boolean",
            "number",
            "int",
            "integer",
            "float",
            "bytes",
            "text",
            "none",
            "null",
            "nil",
            "undefined",
            "true",
            "false",
            "optional",
            "any",
            "unknown",
            "required",
            "secretstr",
            "password",
            "secret",
            "hidden",
            "redacted",
            "changeme",
            "example",
            "placeholder",
        ];
        let word = inner.to_ascii_lowercase();
        let own_name = key.to_ascii_lowercase().rsplit(['_', '-', '.']).next() == Some(word.as_str());
        if inner.chars().count() >= 8 && !NOT_SECRETS.contains(&word.as_str()) && !own_name {
            return true;
        }
    }
    if quoted {
        return !inner.contains(' ') || names_password;
    }
    // An environment-style key (`GITHUB_TOKEN=…`): any value.
    if key.bytes().any(|b| b.is_ascii_uppercase()) && !key.bytes().any(|b| b.is_ascii_lowercase()) {
        return true;
    }
    // Code: an identifier, a member path or a call (`string`, `process.env.X`, `next()`).
    let code = inner.split('.').all(|seg| {
        let seg = seg.split('(').next().unwrap_or(seg);
        let mut chars = seg.chars();
        chars.next().is_some_and(|c| c.is_alphabetic() || c == '_') && chars.all(|c| c.is_alphanumeric() || c == '_')
    }) && !inner.chars().any(|c| c.is_ascii_digit());
    !code && inner.chars().count() >= 6
}

static GLOBAL: OnceLock<RwLock<Arc<Redactor>>> = OnceLock::new();

/// Compiling the rules takes milliseconds: done on first use, not at start-up.
fn global() -> &'static RwLock<Arc<Redactor>> {
    GLOBAL.get_or_init(|| RwLock::new(Arc::new(Redactor::new(&[]).expect("built-in rules compile"))))
}

fn current() -> Arc<Redactor> {
    match global().read() {
        Ok(r) => r.clone(),
        Err(poisoned) => poisoned.into_inner().clone(),
    }
}

/// Sets the filter used by [`redact`]: the built-in rules plus `extra`. On an invalid
/// pattern the filter in force stays and the error names the pattern.
pub fn install(extra: &[(String, String)]) -> Result<(), String> {
    if extra.is_empty() && GLOBAL.get().is_none() {
        return Ok(()); // the built-in rules, compiled when first needed
    }
    let r = Arc::new(Redactor::new(extra)?);
    match global().write() {
        Ok(mut g) => *g = r,
        Err(poisoned) => *poisoned.into_inner() = r,
    }
    Ok(())
}

/// `text` with every secret replaced by `[REDACTED:<kind>]`, through the installed filter
/// (the built-in rules if none was installed).
pub fn redact(text: &str) -> Cow<'_, str> {
    current().redact(text)
}

/// Whether `text` holds anything [`redact`] would take out.
pub fn finds(text: &str) -> bool {
    current().finds(text)
}

/// Reads extra patterns: one per line, `kind = regex` or a bare regex (kind `custom`);
/// blank lines and `#` comments skipped. Errors name the line.
pub fn parse_patterns(text: &str, source: &str) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (kind, pat) = match line.split_once(" = ") {
            Some((k, p))
                if !k.trim().is_empty()
                    && k.trim().chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') =>
            {
                (k.trim().to_string(), p.trim().to_string())
            }
            _ => ("custom".to_string(), line.to_string()),
        };
        if let Err(e) = Regex::new(&pat) {
            return Err(format!("{source}:{}: {kind}: not a valid regex: {e}", n + 1));
        }
        out.push((kind, pat));
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
