//! Secrets never reach disk or the agent's context: every piece of text a client sends is
//! filtered here before the session keeps it.
//!
//! Known token formats are replaced whole; `key=value` pairs whose key names a secret keep
//! the key and lose the value; credentials in URLs lose the password.

use regex::Regex;
use std::borrow::Cow;
use std::sync::OnceLock;

/// What replaces a secret.
pub const MASK: &str = "[REDACTED]";

struct Rules {
    tokens: Regex,
    pairs: Regex,
    url_password: Regex,
    private_key: Regex,
}

fn rules() -> &'static Rules {
    static RULES: OnceLock<Rules> = OnceLock::new();
    RULES.get_or_init(|| Rules {
        tokens: Regex::new(concat!(
            r"\b(?:",
            r"AKIA[0-9A-Z]{16}",                              // AWS access key id
            r"|gh[pousr]_[A-Za-z0-9]{30,}",                     // GitHub tokens
            r"|github_pat_[A-Za-z0-9_]{30,}",
            r"|glpat-[A-Za-z0-9_-]{20,}",                       // GitLab
            r"|sk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}",           // Anthropic, OpenAI
            r"|xox[abprs]-[A-Za-z0-9-]{10,}",                   // Slack
            r"|AIza[0-9A-Za-z_-]{35}",                          // Google API key
            r"|(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}",    // Stripe
            r"|npm_[A-Za-z0-9]{36}",                            // npm
            r"|eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}", // JWT
            r")\b"
        ))
        .expect("token pattern"),
        pairs: Regex::new(
            r#"(?i)\b([a-z0-9_.-]*(?:password|passwd|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|client[_-]?secret|auth|authorization|credentials?)\s*[:=]\s*(?:(?:bearer|basic|token)\s+)?|bearer\s+|basic\s+)("[^"]*"|'[^']*'|[^\s'",;]+)"#,
        )
        .expect("pair pattern"),
        url_password: Regex::new(r"(?i)\b([a-z][a-z0-9+.-]*://[^/\s:@]+:)[^/\s@]+@").expect("url pattern"),
        private_key: Regex::new(r"(?s)-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)")
            .expect("key pattern"),
    })
}

/// `text` with every secret it holds replaced by [`MASK`].
pub fn redact(text: &str) -> Cow<'_, str> {
    let r = rules();
    let mut out = Cow::Borrowed(text);
    if out.contains("PRIVATE KEY-----") {
        out = Cow::Owned(r.private_key.replace_all(&out, MASK).into_owned());
    }
    if r.tokens.is_match(&out) {
        out = Cow::Owned(r.tokens.replace_all(&out, MASK).into_owned());
    }
    if r.pairs.is_match(&out) {
        out = Cow::Owned(
            r.pairs
                .replace_all(&out, |c: &regex::Captures| {
                    let value = &c[2];
                    if value == MASK || value.trim_matches(|q| q == '"' || q == '\'').is_empty() {
                        c[0].to_string()
                    } else {
                        format!("{}{MASK}", &c[1])
                    }
                })
                .into_owned(),
        );
    }
    if r.url_password.is_match(&out) {
        out = Cow::Owned(r.url_password.replace_all(&out, format!("${{1}}{MASK}@")).into_owned());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_tokens_are_masked() {
        for secret in [
            "AKIAIOSFODNN7EXAMPLE",
            "ghp_0123456789abcdefghijABCDEFGHIJ012345",
            "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
            "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789",
            "sk-proj-abcdefghijklmnopqrstuvwx",
            "xoxb-1234567890-abcdefghij",
            "AIzaSyA-abcdefghijklmnopqrstuvwxyz01234",
            "sk_live_abcdefghijklmnop1234",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        ] {
            let text = format!("use {secret} now");
            let r = redact(&text);
            assert_eq!(r, format!("use {MASK} now"), "{secret}");
        }
    }

    #[test]
    fn secret_values_lose_their_value_not_their_key() {
        assert_eq!(redact("export DB_PASSWORD=hunter2 && run"), format!("export DB_PASSWORD={MASK} && run"));
        assert_eq!(redact("PGPASSWORD=hunter2 psql"), format!("PGPASSWORD={MASK} psql"));
        assert_eq!(redact("GITHUB_TOKEN=abc npm publish"), format!("GITHUB_TOKEN={MASK} npm publish"));
        assert_eq!(redact("api_key: \"abc123\""), format!("api_key: {MASK}"));
        assert_eq!(
            redact("curl -H 'Authorization: Bearer abc.def.ghi' x"),
            format!("curl -H 'Authorization: Bearer {MASK}' x")
        );
        assert_eq!(
            redact("git clone https://bob:s3cret@example.com/r.git"),
            format!("git clone https://bob:{MASK}@example.com/r.git")
        );
        let key = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----";
        assert_eq!(redact(&format!("key:\n{key}\nend")), format!("key:\n{MASK}\nend"));
    }

    #[test]
    fn ordinary_text_is_untouched_and_not_copied() {
        for plain in
            ["fix the login page", "the token bucket algorithm", "password reset flow needs tests", "see docs/api.md"]
        {
            assert!(matches!(redact(plain), Cow::Borrowed(_)), "{plain}");
        }
    }
}
