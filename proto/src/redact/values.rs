//! What a name says its value is, and whether a value is a secret rather than code, a
//! reference to one (`$TOKEN`, `env:PASS`, a path) or a placeholder (`<token>`, `***`).
//!
//! The names are environment variables (`DB_PASS`), configuration keys (`"apiKey"`,
//! `client-key-data`), options (`--api-key`, `-storepass`) and header names (`X-Auth-Token`);
//! they are split into words (`_`, `-`, `.`, camelCase) and the last word decides, so
//! `TOKEN_URL`, `KEY_FILE`, `PASSWORD_LENGTH` and `max_tokens` name no secret.

/// What a name says its value is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Names {
    /// Not a credential: `KEY_FILE`, `TOKEN_URL`, `max_tokens`, `sort_key`, `author`.
    Nothing,
    /// Perhaps a credential (`KEY`, `auth`, `session`, `cookie`, a vendor's `STRIPE_KEY`):
    /// only a value that looks random is one (`KEY=Enter` is kept).
    Maybe,
    /// A token, a secret or an API key (`API_KEY`, `SECRET_KEY_BASE`, `X-Auth-Token`).
    Token,
    /// A password (`DB_PASS`, `SSHPASS`, `MYSQL_PWD`, `-storepass`): any word is one.
    Password,
}

/// The lower-case words of a name: `SECRET_KEY_BASE` → secret key base, `apiKey` → api
/// key, `X-Auth-Token` → x auth token, `--api-key` → api key.
pub(super) fn words(name: &str) -> Vec<String> {
    let mut out = Vec::new();
    for part in name.split(|c: char| !c.is_ascii_alphanumeric()) {
        let chars: Vec<char> = part.chars().collect();
        let mut cur = String::new();
        for (i, &c) in chars.iter().enumerate() {
            let prev = if i > 0 { Some(chars[i - 1]) } else { None };
            let next = chars.get(i + 1).copied();
            // `apiKey` → api|Key; `APIKey` → API|Key; `AWSSecret` → AWS|Secret.
            let boundary = c.is_ascii_uppercase()
                && match prev {
                    Some(p) if p.is_ascii_lowercase() || p.is_ascii_digit() => true,
                    Some(p) if p.is_ascii_uppercase() => next.is_some_and(|n| n.is_ascii_lowercase()),
                    _ => false,
                };
            if boundary && !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            cur.push(c.to_ascii_lowercase());
        }
        if !cur.is_empty() {
            out.push(cur);
        }
    }
    out
}

/// Words after the credential that keep it one: `SECRET_KEY_BASE`, `API_KEY_PROD`,
/// `DB_PASSWORD_2`, `client-key-data`, `password_confirmation`.
const MODIFIERS: &[&str] = &[
    "base",
    "value",
    "val",
    "b64",
    "base64",
    "hex",
    "raw",
    "plain",
    "plaintext",
    "cleartext",
    "clear",
    "str",
    "string",
    "data",
    "enc",
    "encoded",
    "prod",
    "production",
    "dev",
    "development",
    "staging",
    "stage",
    "stg",
    "test",
    "testing",
    "qa",
    "uat",
    "local",
    "ci",
    "old",
    "new",
    "current",
    "prev",
    "previous",
    "primary",
    "secondary",
    "main",
    "backup",
    "default",
    "override",
    "confirm",
    "confirmation",
    "again",
    "repeat",
    "v",
];

/// Words before `key` that make it a credential's name: `API_KEY`, `MASTER_KEY`,
/// `client-key-data`, `Ocp-Apim-Subscription-Key`.
const KEY_QUALIFIERS: &[&str] = &[
    "api",
    "access",
    "secret",
    "private",
    "priv",
    "master",
    "encryption",
    "encrypt",
    "decryption",
    "decrypt",
    "crypt",
    "crypto",
    "cipher",
    "aes",
    "hmac",
    "signing",
    "sign",
    "session",
    "jwt",
    "app",
    "auth",
    "client",
    "license",
    "licence",
    "service",
    "account",
    "storage",
    "subscription",
    "admin",
    "root",
    "deploy",
    "webhook",
    "shared",
    "wrapping",
    "unseal",
    "seal",
    "vault",
    "rsa",
    "ecdsa",
    "ed25519",
    "product",
    "write",
    "read",
    "ingest",
    "insert",
    "management",
    "personal",
];

/// Words before `key` that name no secret: `PUBLIC_KEY`, `sort_key`, `cache-key`, and
/// gitleaks' list (`primary`, `foreign`, `bucket`, `hot`, …).
const NOT_KEY_QUALIFIERS: &[&str] = &[
    "public",
    "pub",
    "host",
    "sort",
    "cache",
    "primary",
    "foreign",
    "partition",
    "index",
    "idx",
    "map",
    "dict",
    "lookup",
    "hot",
    "short",
    "shortcut",
    "object",
    "s3",
    "bucket",
    "lock",
    "dedupe",
    "dedup",
    "idempotency",
    "group",
    "route",
    "routing",
    "i18n",
    "translation",
    "message",
    "event",
    "schema",
    "sequence",
    "natural",
    "composite",
    "unique",
    "compound",
    "hash",
    "range",
    "shard",
    "row",
    "column",
    "table",
    "record",
    "item",
    "entry",
    "node",
    "child",
    "parent",
    "list",
    "config",
    "setting",
    "settings",
    "field",
    "property",
    "prop",
    "attribute",
    "attr",
    "metadata",
    "label",
    "tag",
    "name",
    "lang",
    "locale",
    "menu",
    "nav",
    "react",
    "query",
    "state",
    "redis",
    "memcache",
    "env",
    "registry",
    "recv",
    "receive",
    "trusted",
    "ssh",
    "gpg",
    "pgp",
    "signing",
];

/// Words before `pass` that make it no password: `renderPass`, `first_pass`, `test_pass`.
const NOT_PASS_QUALIFIERS: &[&str] = &[
    "render", "sub", "first", "second", "third", "last", "next", "multi", "single", "one", "two", "shadow", "depth",
    "compute", "post", "pre", "final", "main", "lighting", "geometry", "blur", "bloom", "test", "tests", "unit", "e2e",
    "lint", "check", "checks", "build", "ci", "boarding", "bus", "day", "season", "free", "hall", "mountain", "by",
    "over", "under", "high", "low", "band", "all",
];

/// Words ending in `pass` that are not passwords.
const PASS_WORDS: &[&str] = &[
    "bypass",
    "compass",
    "surpass",
    "encompass",
    "overpass",
    "underpass",
    "multipass",
    "highpass",
    "lowpass",
    "bandpass",
    "allpass",
    "onepass",
    "twopass",
    "firstpass",
    "secondpass",
    "singlepass",
    "trespass",
    "subpass",
    "renderpass",
    "askpass",
];

/// Words before `token` that name no credential: counts and the tokens of a tokenizer or a
/// lexer (`max_tokens`, `eos_token`, `next_token`).
const NOT_TOKEN_QUALIFIERS: &[&str] = &[
    "max",
    "min",
    "num",
    "total",
    "count",
    "input",
    "output",
    "prompt",
    "completion",
    "context",
    "next",
    "page",
    "continuation",
    "cancel",
    "cancellation",
    "sync",
    "stop",
    "start",
    "end",
    "eos",
    "bos",
    "pad",
    "unk",
    "sep",
    "cls",
    "mask",
    "special",
    "lex",
    "lexer",
    "parse",
    "parser",
    "peek",
    "last",
    "current",
    "first",
    "cached",
    "reasoning",
    "thinking",
    "image",
    "audio",
    "text",
    "word",
    "char",
];

/// Service names whose keys hold their credentials without naming one (`HEROKU_API=…`,
/// `twilio_sid: AC…`): only a value that looks random is one.
pub(super) const SERVICES: &[&str] = &[
    "heroku",
    "vercel",
    "netlify",
    "cloudflare",
    "twilio",
    "slack",
    "sentry",
    "datadog",
    "stripe",
    "sendgrid",
    "mailgun",
    "postmark",
    "mailchimp",
    "pagerduty",
    "newrelic",
    "discord",
    "telegram",
    "openai",
    "anthropic",
    "huggingface",
    "replicate",
    "cohere",
    "mistral",
    "pinecone",
    "supabase",
    "firebase",
    "algolia",
    "mapbox",
    "shopify",
    "paypal",
    "okta",
    "auth0",
    "circleci",
    "codecov",
    "snyk",
    "rollbar",
    "bugsnag",
    "honeycomb",
    "airtable",
    "notion",
    "linear",
    "digitalocean",
    "linode",
    "mixpanel",
    "segment",
    "amplitude",
];

/// Words after a service name that name no secret (`VERCEL_PROJECT_ID`, `NETLIFY_SITE_NAME`).
pub(super) const NOT_SECRET_WORDS: &[&str] = &[
    "id",
    "ids",
    "name",
    "names",
    "url",
    "uri",
    "endpoint",
    "host",
    "domain",
    "region",
    "zone",
    "org",
    "team",
    "project",
    "site",
    "user",
    "username",
    "email",
    "version",
    "env",
    "app",
    "path",
    "file",
    "dir",
    "type",
    "mode",
    "enabled",
    "enable",
    "disabled",
    "timeout",
    "ttl",
    "expiry",
    "expires",
    "length",
    "len",
    "size",
    "count",
    "channel",
    "channels",
    "model",
    "models",
    "release",
    "environment",
    "profile",
    "workspace",
    "account",
    "sha",
    "ref",
    "branch",
    "tag",
    "commit",
    "port",
    "level",
    "debug",
    "number",
    "limit",
    "limits",
    "rate",
    "retries",
    "sample",
    "bucket",
    "dataset",
    "index",
    "queue",
    "topic",
];

fn trim_digits(w: &str) -> &str {
    let t = w.trim_end_matches(|c: char| c.is_ascii_digit());
    if t.is_empty() {
        w
    } else {
        t
    }
}

/// What `name` (a key, a variable, an option without its dashes) says its value is.
/// A name written with digits and signs for letters (`passw0rd`, `p@ssw0rd`, `pa$$word`,
/// `s3cr3t`, `t0k3n`) as it reads, when that is a credential's name; else as it is.
pub(super) fn unleet(name: &str) -> std::borrow::Cow<'_, str> {
    const WORDS: &[&str] = &["password", "passwd", "passphrase", "pass", "secret", "token"];
    if !name.bytes().any(|b| matches!(b, b'0' | b'1' | b'3' | b'4' | b'5' | b'@' | b'$')) {
        return std::borrow::Cow::Borrowed(name);
    }
    let read: String = name
        .chars()
        .map(|c| match c {
            '0' => 'o',
            '1' => 'i',
            '3' => 'e',
            '4' | '@' => 'a',
            '5' | '$' => 's',
            c => c.to_ascii_lowercase(),
        })
        .collect();
    let lower = name.to_ascii_lowercase();
    if WORDS.iter().any(|w| read.contains(w) && !lower.contains(w)) {
        std::borrow::Cow::Owned(read)
    } else {
        std::borrow::Cow::Borrowed(name)
    }
}

pub(super) fn names(name: &str) -> Names {
    let ws = words(&unleet(name));
    let mut end = ws.len();
    // `SECRET_KEY_BASE`, `API_KEY_2`: the modifiers after the credential do not count.
    while end > 1 && (MODIFIERS.contains(&trim_digits(&ws[end - 1])) || ws[end - 1].bytes().all(|b| b.is_ascii_digit()))
    {
        end -= 1;
    }
    let Some(last) = ws.get(end.wrapping_sub(1)).map(|w| trim_digits(w)) else {
        return Names::Nothing;
    };
    let prev = if end >= 2 { Some(trim_digits(&ws[end - 2])) } else { None };
    let is = |list: &[&str], w: Option<&str>| w.is_some_and(|w| list.contains(&w));
    match last {
        "password" | "passwd" | "passphrase" | "passcode" | "pwd" | "pw" | "passwords" | "passin" | "passout" => {
            Names::Password
        }
        "pass" if is(NOT_PASS_QUALIFIERS, prev) => Names::Nothing,
        "pass" => Names::Password,
        "token" | "tokens" if is(NOT_TOKEN_QUALIFIERS, prev) => Names::Nothing,
        "token" | "secret" | "secrets" | "credential" | "credentials" | "creds" | "cred" | "apikey" | "bearer"
        | "authorization" | "authtoken" | "accesstoken" | "refreshtoken" | "apitoken" | "idtoken" => Names::Token,
        "tokens" => Names::Maybe,
        "key" | "keys" => match prev {
            None => Names::Maybe,
            Some(p) if KEY_QUALIFIERS.contains(&p) && !NOT_KEY_QUALIFIERS.contains(&p) => Names::Token,
            Some(p) if NOT_KEY_QUALIFIERS.contains(&p) => match p {
                // A signing key signs (a webhook's, a JWT's): a secret, unless it is a key id
                // (see `is_secret`) or a path.
                "signing" => Names::Token,
                // `ssh_key`, `gpg-key`: often a path or a key id, but can be the key.
                "ssh" | "gpg" | "pgp" => Names::Maybe,
                _ => Names::Nothing,
            },
            Some(_) => Names::Maybe,
        },
        "auth" | "oauth" | "basicauth" | "httpauth" => Names::Maybe,
        "session" | "sess" | "sessid" | "sessionid" | "jsessionid" | "phpsessid" | "sid" | "cookie" | "cookies" => {
            Names::Maybe
        }
        "id" if matches!(prev, Some("session" | "sess")) => Names::Maybe,
        // A PIN (`pin`, `hsm_pin`, `pincode`), the seed of one-time codes (`totp_seed`), a code
        // that unlocks (`access_code`, `recovery_codes`); not a `status_code` or `exit_code`.
        "pin" | "pins" | "pincode" | "passpin" => Names::Password,
        "seed" | "secretseed"
            if matches!(prev, Some("totp" | "otp" | "mfa" | "2fa" | "hotp" | "wallet" | "mnemonic")) =>
        {
            Names::Token
        }
        "code" | "codes"
            if matches!(
                prev,
                Some(
                    "access"
                        | "unlock"
                        | "recovery"
                        | "backup"
                        | "auth"
                        | "otp"
                        | "totp"
                        | "mfa"
                        | "2fa"
                        | "security"
                        | "door"
                        | "alarm"
                )
            ) =>
        {
            Names::Token
        }
        // Vault AppRole's `secret_id` (a `client_id` is public).
        "id" if prev == Some("secret") => Names::Token,
        w if w.ends_with("password") || w.ends_with("passwd") || w.ends_with("passphrase") => Names::Password,
        w if w.ends_with("pass") && !PASS_WORDS.contains(&w) => Names::Password,
        w if w.len() <= 8 && w.ends_with("pwd") && w != "oldpwd" => Names::Password,
        w if w.ends_with("token") && !w.starts_with("max") => Names::Token,
        w if w.ends_with("secret") => Names::Token,
        w if w.ends_with("key") => {
            let q = &w[..w.len() - 3];
            if KEY_QUALIFIERS.contains(&q) && !NOT_KEY_QUALIFIERS.contains(&q) {
                Names::Token
            } else {
                Names::Nothing
            }
        }
        w if !NOT_SECRET_WORDS.contains(&w) && ws[..end].iter().any(|x| SERVICES.contains(&x.as_str())) => Names::Maybe,
        _ => Names::Nothing,
    }
}

/// Whether `v` is no secret written out: empty, a reference to one, a placeholder, or a
/// mask already put there (`[REDACTED:…]`).
pub(super) fn stands_in(v: &str) -> bool {
    is_reference(v) || is_placeholder(v, "password") || v.contains("[REDACTED:")
}

/// Values that stand for a secret without being one: `$TOKEN`, `${TOKEN}`, `$(cat f)`,
/// `%TOKEN%`, `{{ secrets.X }}`, `env:PASS`, `file:…`, a path, a secret manager's address.
pub(super) fn is_reference(v: &str) -> bool {
    let b = v.as_bytes();
    let starts = |p: &str| v.get(..p.len()).is_some_and(|h| h.eq_ignore_ascii_case(p));
    match b.first() {
        None => true,
        // (`$` alone: a `$(…)` or `${…}` a bare value stopped at.)
        Some(b'$') => b.get(1).is_none_or(|c| c.is_ascii_alphabetic() || matches!(c, b'_' | b'{' | b'(')),
        Some(b'`') => true,
        Some(b'%') => v.len() > 2 && v.ends_with('%'),
        Some(b'{') => v.starts_with("{{") || v.starts_with("{%"),
        Some(b'/') => true,
        Some(b'~') => b.get(1) == Some(&b'/'),
        Some(b'.') => v.starts_with("./") || v.starts_with("../"),
        Some(b'!') => starts("!ref") || starts("!sub") || starts("!getatt") || starts("!secret") || starts("!vault"),
        Some(c) if c.is_ascii_alphabetic() && b.get(1) == Some(&b':') && b.get(2) == Some(&b'\\') => true,
        _ => {
            starts("env:")
                || starts("file:")
                || starts("fd:")
                || starts("stdin")
                || starts("op://")
                || starts("vault:")
                || starts("arn:aws:secretsmanager")
                || starts("arn:aws:ssm")
                || starts("ref+")
                || starts("secretref:")
                || starts("keyvault:")
                || starts("[redacted")
        }
    }
}

/// Placeholders: `***`, `xxxx`, `<token>`, `[PASSWORD]`, `YOUR_API_KEY`, `changeme`, the
/// name's own word (`password=password`).
pub(super) fn is_placeholder(v: &str, name: &str) -> bool {
    let lower = v.to_ascii_lowercase();
    if v.chars().count() >= 3 && v.chars().all(|c| matches!(c, '*' | 'x' | 'X' | '•' | '.' | '#' | '?' | '_' | '-')) {
        return true;
    }
    // `{}` and `%` (what `xargs -I` and `find -exec` put the input in), `{{password}}`.
    if (v.starts_with('{') && v.ends_with('}')) || (v.len() <= 3 && !v.chars().any(char::is_alphanumeric)) {
        return true;
    }
    if (v.starts_with('<') && v.ends_with('>')) || (v.starts_with('[') && v.ends_with(']')) {
        return true;
    }
    if v.ends_with("...") || v.ends_with('…') {
        return true; // `sk-...`, `eyJ…`
    }
    if lower.starts_with("your") || lower.ends_with("_here") || lower.ends_with("-here") || lower.starts_with("example")
    {
        return true;
    }
    const WORDS: &[&str] = &[
        "changeme",
        "change_me",
        "change-me",
        "changeit",
        "placeholder",
        "redacted",
        "hidden",
        "none",
        "null",
        "nil",
        "undefined",
        "empty",
        "dummy",
        "secret",
        "password",
        "passwd",
        "token",
        "apikey",
        "api_key",
        "api-key",
        "key",
        "pass",
        "pwd",
        "mypassword",
        "mysecret",
        "mytoken",
        "secretstr",
        "required",
        "optional",
    ];
    if WORDS.contains(&lower.as_str()) {
        return true;
    }
    words(name).last().is_some_and(|w| *w == lower)
}

/// Shannon entropy of `s` in bits per character.
pub(super) fn entropy(s: &str) -> f64 {
    let mut counts = [0u32; 256];
    let mut n = 0u32;
    for b in s.bytes() {
        counts[b as usize] += 1;
        n += 1;
    }
    if n == 0 {
        return 0.0;
    }
    let n = f64::from(n);
    counts.iter().filter(|&&c| c > 0).map(|&c| f64::from(c) / n).map(|p| -p * p.log2()).sum()
}

/// A value that looks generated rather than written: twelve or more characters of a token's
/// alphabet, letters mixed with digits (or both cases, at length), and no words, paths or
/// URLs. `dXNlcm5hbWU6cGFzc3dvcmQ=` and `0123456789abcdef0123` are; `Enter`,
/// `node_modules`, `server.key`, `getAuthHeaderValue` are not.
pub(super) fn looks_random(v: &str) -> bool {
    let n = v.chars().count();
    if !(12..=4096).contains(&n) || is_reference(v) || v.contains("://") {
        return false;
    }
    if !v.chars().all(|c| c.is_ascii_alphanumeric() || "+/=_.~:%-".contains(c)) {
        return false;
    }
    // A name stamped with a date (ccmem's own `session_2026-11-27_10-00-00`, a backup's
    // `db-2026-01-31T04:00:00Z`): its digits are a date's, not a generator's.
    if is_dated_name(v) {
        return false;
    }
    // A file name (`server.key`, `id_rsa.pub`, `config.prod.json`).
    if let Some((_, ext)) = v.rsplit_once('.') {
        if (1..=5).contains(&ext.len()) && ext.chars().all(|c| c.is_ascii_lowercase()) {
            return false;
        }
    }
    // An assignment (`sid=…` in a cookie, `expires_in=3600`): base64 pads only at the end.
    if v.trim_end_matches('=').contains('=') {
        return false;
    }
    // A member path (`process.env.AUTH_TOKEN`, `config.secret.key`).
    if v.contains('.') && is_code(v) {
        return false;
    }
    let digits = v.chars().filter(char::is_ascii_digit).count();
    let upper = v.chars().filter(char::is_ascii_uppercase).count();
    let lower = v.chars().filter(char::is_ascii_lowercase).count();
    if digits > 0 && upper + lower > 0 {
        return entropy(v) >= 3.0;
    }
    n >= 20 && upper * 5 >= n && lower * 5 >= n && entropy(v) >= 3.5
}

/// A UUID (`550e8400-e29b-41d4-a716-446655440000`): 8-4-4-4-12 hexadecimal digits.
pub(super) fn is_uuid(v: &str) -> bool {
    let groups: Vec<&str> = v.split('-').collect();
    groups.len() == 5
        && groups.iter().zip([8, 4, 4, 4, 12]).all(|(g, n)| g.len() == n && g.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// A word (letters, `_`, `-`) followed by a date and perhaps a time: `session_2026-11-27_10-00-00`,
/// `backup-2026-01-31T04:00:00Z`, `release_2026-01-31`. The digits come in groups of 4, 2, 2
/// (a date), then optionally 2, 2 and 2 (a time) and a fraction, apart by `-`, `_`, `:`,
/// `T` or `.`.
pub(super) fn is_dated_name(v: &str) -> bool {
    let first_digit = v.find(|c: char| c.is_ascii_digit()).unwrap_or(v.len());
    let (word, stamp) = v.split_at(first_digit);
    if word.is_empty() || !word.chars().all(|c| c.is_ascii_alphabetic() || c == '_' || c == '-') {
        return false;
    }
    let stamp = stamp.strip_suffix('Z').unwrap_or(stamp);
    let groups: Vec<&str> = stamp.split(['-', '_', ':', 'T', '.']).collect();
    if groups.iter().any(|g| g.is_empty() || !g.bytes().all(|b| b.is_ascii_digit())) {
        return false;
    }
    let lens: Vec<usize> = groups.iter().map(|g| g.len()).collect();
    match lens.as_slice() {
        [4, 2, 2] | [4, 2, 2, 2, 2, 2] => true,
        // A fraction of a second.
        [4, 2, 2, 2, 2, 2, f] => (1..=9).contains(f),
        _ => false,
    }
}

/// Letters only that look generated rather than written: ten or more, both cases, broken
/// into many short pieces where the case changes (`febwNEJIEbTXevfY`: febw, NEJI, Eb, T, …),
/// where words in camel case give few long ones (`CorrectHorseBatteryStaple`,
/// `PasswordManagerApp`, `newPassword`).
pub(super) fn letters_random(v: &str) -> bool {
    if v.len() < 10 || !v.bytes().all(|b| b.is_ascii_alphabetic()) {
        return false;
    }
    if !v.bytes().any(|b| b.is_ascii_uppercase()) || !v.bytes().any(|b| b.is_ascii_lowercase()) {
        return false;
    }
    let pieces = words(v);
    let short = pieces.iter().filter(|p| p.len() <= 2).count();
    pieces.len() >= 4 && short >= 2 && entropy(v) >= 3.0
}

/// A token glued to the word before it (`foosk_live_…`, `Bearerghp_…`): two or more
/// capitals, small letters and digits each, at 3 bits a character or more, as generated
/// tokens have; names have not, in one case (`task_live_notifications`) or camel-cased with
/// a version (`mask_test_partitionsV2`).
pub(super) fn strongly_random(v: &str) -> bool {
    let count = |f: fn(&u8) -> bool| v.bytes().filter(f).count();
    count(u8::is_ascii_digit) >= 2
        && count(u8::is_ascii_uppercase) >= 2
        && count(u8::is_ascii_lowercase) >= 2
        && entropy(v) >= 3.0
}

/// Code rather than a value: an identifier, a member path or a call, without digits
/// (`string`, `process.env.X`, `lexer.next()`, `getpass()`).
pub(super) fn is_code(v: &str) -> bool {
    v.split(['.', ':']).filter(|seg| !seg.is_empty()).all(|seg| {
        let seg = seg.split(['(', '[']).next().unwrap_or(seg);
        let seg = seg.strip_suffix('!').unwrap_or(seg); // a macro: `format!`
        let mut chars = seg.chars();
        chars.next().is_some_and(|c| c.is_alphabetic() || c == '_') && chars.all(|c| c.is_alphanumeric() || c == '_')
    }) && !v.chars().any(|c| c.is_ascii_digit())
}

/// Types, keywords and words that follow a password's name in code and prose.
pub(super) const NOT_SECRETS: &[&str] = &[
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
    "yes",
    "no",
    "on",
    "off",
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
    "inherit",
    "include",
    "omit",
    "prompt",
    "stdin",
];

/// Where a value was found: how much benefit of the doubt code gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Site {
    /// `key=value`, `"key": "value"`: code is kept (`token = lexer.next()`).
    Pair { quoted: bool },
    /// An option on a command line: its value is the secret, whatever its shape.
    Option { quoted: bool },
}

/// Whether `value`, given to `name` (which says `what`), is a secret.
pub(super) fn is_secret(what: Names, name: &str, value: &str, site: Site) -> bool {
    let v = value;
    if v.is_empty() || what == Names::Nothing || is_reference(v) || is_placeholder(v, name) {
        return false;
    }
    // `secret == null`, `password => …` read as comparisons and arrows, not values.
    if v.starts_with(['=', '>', ':']) {
        return false;
    }
    if names_a_key_id(name, v) {
        return false;
    }
    let lower = v.to_ascii_lowercase();
    let password = what == Names::Password;
    let (quoted, option) = match site {
        Site::Pair { quoted } => (quoted, false),
        Site::Option { quoted } => (quoted, true),
    };
    if what == Names::Maybe {
        // `sessionId: 550e8400-…`, `session_id=…` (Claude Code's conversation ids, a request
        // id): an id that is a UUID names a record. A session's secret is random, not a UUID
        // after a name that says it is an id (a cookie's value is the cookie rule's).
        if is_uuid(v) && words(name).last().is_some_and(|w| matches!(w.as_str(), "id" | "ids" | "uuid" | "guid")) {
            return false;
        }
        // `auth: user:pass`, `BASIC_AUTH=admin:S3cret` — and anything that looks random.
        let user_pass = words(name).last().is_some_and(|w| w.ends_with("auth"))
            && v.split_once(':').is_some_and(|(u, p)| !u.is_empty() && !p.is_empty() && !p.starts_with("//"))
            && !v.contains(char::is_whitespace);
        // `REDISCLI_AUTH=S3cret1`: an environment variable's word with digits.
        let env_style = name.bytes().any(|b| b.is_ascii_uppercase()) && !name.bytes().any(|b| b.is_ascii_lowercase());
        let mixed = v.len() >= 8
            && v.chars().any(|c| c.is_ascii_digit())
            && v.chars().any(|c| c.is_ascii_alphabetic())
            && !v.trim_end_matches('=').contains('=');
        return user_pass || looks_random(v) || (env_style && !option && mixed && !v.contains(char::is_whitespace));
    }
    if v.bytes().all(|b| b.is_ascii_digit()) {
        // `max_token=4096` is a setting; a numeric password is still a password, but
        // `pass=3 fail=0` is a test count.
        let bare = matches!(name.trim_start_matches('-').to_ascii_lowercase().as_str(), "pass" | "pw");
        return password && !bare;
    }
    if NOT_SECRETS.contains(&lower.as_str()) {
        return false;
    }
    if option {
        // On a command line the value is the secret (`--password hunter`), unless it is a
        // plain word after a token's option (`--token default`).
        return password || quoted || !is_plain_word(v);
    }
    let env_style = name.bytes().any(|b| b.is_ascii_uppercase()) && !name.bytes().any(|b| b.is_ascii_lowercase());
    if env_style {
        // `GITHUB_TOKEN=…`, `SECRET_KEY="two words"`: any value.
        return true;
    }
    // After a password's key, a bare word is the password (`password=CorrectHorseBatteryStaple`,
    // `db_password: SuperSecretValue`), unless it is a type, a keyword, a member path or a
    // call (`password: string`, `pwd = getpass()`).
    if password && !quoted && !v.contains(['.', '(', '[', '<', ':', '!']) && v.chars().count() >= 8 {
        return true;
    }
    if quoted {
        // `"token": "abc"` is; `credentials: 'include'` and `"token": "the next one"` are not.
        return password || (!v.contains(' ') && !is_plain_word(v));
    }
    !is_code(v) && v.chars().count() >= 6
}

/// A word of prose or a setting: letters (and `-`, `_`) in one case, or capitalised
/// (`include`, `same-origin`, `Default`).
/// Whether a bare word where a password may stand is one: not a word (unless its letters
/// look random), not a number, not code; 6 characters or more with a digit or a sign.
/// (`user: x/y` is a path, `account: 1234` a number, `login: ok` a word.)
pub(super) fn password_like(v: &str) -> bool {
    if v.len() < 4 || NOT_SECRETS.contains(&v.to_ascii_lowercase().as_str()) {
        return false;
    }
    let numbers = v.bytes().all(|b| b.is_ascii_digit());
    let signs = v.bytes().any(|b| !b.is_ascii_alphanumeric());
    let digits = v.bytes().any(|b| b.is_ascii_digit());
    if numbers {
        false
    } else if is_plain_word(v) {
        letters_random(v)
    } else {
        (digits || signs) && v.len() >= 6 && !(signs && is_code(v))
    }
}

pub(super) fn is_plain_word(v: &str) -> bool {
    let letters = v.chars().all(|c| c.is_ascii_alphabetic() || c == '-' || c == '_');
    let rest_lower = v.chars().skip(1).all(|c| !c.is_ascii_uppercase());
    let all_upper = v.chars().all(|c| !c.is_ascii_lowercase());
    letters && (rest_lower || (all_upper && v.len() <= 12))
}

/// Decodes standard or URL-safe base64 (padding optional, stops at the first other byte).
pub(super) fn base64_decode(s: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let mut acc = 0u32;
    let mut bits = 0;
    for b in s.bytes() {
        let v = match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => break,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    out
}

/// Decodes hexadecimal digits two by two (stops at the first other byte).
pub(super) fn hex_decode(s: &str) -> Vec<u8> {
    s.as_bytes()
        .chunks_exact(2)
        .map_while(|p| Some((char::from(p[0]).to_digit(16)? * 16 + char::from(p[1]).to_digit(16)?) as u8))
        .collect()
}

/// A letter turned thirteen places round the alphabet (rot13); anything else as it is.
pub(super) fn rot13(c: char) -> char {
    match c {
        'a'..='z' => (((c as u8 - b'a') + 13) % 26 + b'a') as char,
        'A'..='Z' => (((c as u8 - b'A') + 13) % 26 + b'A') as char,
        _ => c,
    }
}

/// `signing_key: 3AA5C34371567BD2`: a GPG key's id or fingerprint (8, 16 or 40 hexadecimal
/// digits) after words that say signing, GPG or PGP names a key; it is no secret.
pub(super) fn names_a_key_id(name: &str, v: &str) -> bool {
    let hex_id = matches!(v.len(), 8 | 16 | 40) && v.bytes().all(|b| b.is_ascii_hexdigit());
    hex_id && words(name).iter().any(|w| matches!(w.as_str(), "signing" | "gpg" | "pgp"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_split_into_words() {
        assert_eq!(words("SECRET_KEY_BASE"), ["secret", "key", "base"]);
        assert_eq!(words("apiKey"), ["api", "key"]);
        assert_eq!(words("APIKey"), ["api", "key"]);
        assert_eq!(words("X-Auth-Token"), ["x", "auth", "token"]);
        assert_eq!(words("--client-secret"), ["client", "secret"]);
        assert_eq!(words("Ocp-Apim-Subscription-Key"), ["ocp", "apim", "subscription", "key"]);
    }

    #[test]
    fn names_say_what_follows() {
        use Names::*;
        for (name, want) in [
            ("DB_PASS", Password),
            ("SSHPASS", Password),
            ("MYSQL_PWD", Password),
            ("PGPASSWORD", Password),
            ("storepass", Password),
            ("password_confirmation", Password),
            ("SECRET_KEY_BASE", Token),
            ("API_KEY", Token),
            ("MASTER_KEY", Token),
            ("ENCRYPTION_KEY", Token),
            ("client-key-data", Token),
            ("X-Api-Key", Token),
            ("_authToken", Token),
            ("GITHUB_TOKEN", Token),
            ("NEXTAUTH_SECRET", Token),
            ("KEY", Maybe),
            ("STRIPE_KEY", Maybe),
            ("signing_key", Token),
            ("_gh_sess", Maybe),
            ("auth", Maybe),
            ("session_id", Maybe),
            ("TWILIO_ACCOUNT_SID", Maybe),
            ("HEROKU_API", Maybe),
            ("KEY_FILE", Nothing),
            ("TOKEN_URL", Nothing),
            ("PASSWORD_LENGTH", Nothing),
            ("max_tokens", Nothing),
            ("eos_token", Nothing),
            ("tokenizer", Nothing),
            ("public_key", Nothing),
            ("private_key_id", Nothing),
            ("AWS_ACCESS_KEY_ID", Nothing),
            ("sort_key", Nothing),
            ("monkey", Nothing),
            ("author", Nothing),
            ("bypass", Nothing),
            ("renderPass", Nothing),
            ("password-stdin", Nothing),
            ("token-file", Nothing),
            ("api-key-env", Nothing),
            ("VERCEL_PROJECT_ID", Nothing),
            ("secretName", Nothing),
        ] {
            assert_eq!(names(name), want, "{name}");
        }
    }

    #[test]
    fn random_values_are_told_from_words() {
        for v in [
            "dXNlcm5hbWU6cGFzc3dvcmQ=",
            "0123456789abcdef0123",
            "a8f5f167f44f4964e6c998dee827110c",
            "AbCdEfGhIjKlMnOpQrStUvWx",
        ] {
            assert!(looks_random(v), "{v}");
        }
        for v in [
            "Enter",
            "node_modules",
            "server.key",
            "getAuthorizationHeaderValue",
            "/etc/ssl/key.pem",
            "$API_KEY",
            "v1.2.3",
            "process.env.AUTH_TOKEN",
            // Names stamped with a date: ccmem's session ids, a backup's file.
            "session_2026-11-27_10-00-00",
            "backup-2026-01-31T04:00:00.123Z",
        ] {
            assert!(!looks_random(v), "{v}");
        }
        // A date alone is no name's; a token with a date-like run in it is still random.
        assert!(is_dated_name("release_2026-01-31") && !is_dated_name("2026-01-31"));
        assert!(!is_dated_name("session_2026-11-27_10-00-00x") && !is_dated_name("aB3dE5_2026-01-31"));
        for v in ["febwNEJIEbTXevfY", "QmZtXkPaLvRsWnYb"] {
            assert!(letters_random(v), "{v}");
        }
        for v in ["CorrectHorseBatteryStaple", "PasswordManagerApp", "newPassword", "somethingstrong", "XMLHttpRequest"]
        {
            assert!(!letters_random(v), "{v}");
        }
        assert!(is_uuid("550e8400-e29b-41d4-a716-446655440000") && !is_uuid("550e8400-e29b-41d4-a716-44665544000"));
    }

    #[test]
    fn base64_decodes() {
        assert_eq!(base64_decode("aGVsbG8gd29ybGQ="), b"hello world");
        assert_eq!(base64_decode("LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0t"), b"-----BEGIN PRIVATE KEY-----");
        assert_eq!(hex_decode("6768705f41"), b"ghp_A");
    }
}
