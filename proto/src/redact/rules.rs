//! The built-in rules, in the order they run: private keys, then token formats with a
//! prefix of their own (gitleaks' default rules, some from trufflehog's detectors), then
//! credentials in URLs and headers, on command lines, after names that name them, and in
//! prose.
//!
//! A rule's secret is its group named `s` (or `s2`, `s3`, … in other alternatives),
//! else its whole match; what is around it stays. A check, when there is one, decides
//! instead (and may find several secrets in one match, or none). `\b` is ASCII's word
//! boundary (see `ascii_boundaries`). Keywords are lower-case literals one of which every
//! match holds, whatever its case: a rule none of whose keywords occurs is not run.

use super::values::{self, is_placeholder, is_reference, looks_random, names, Names, Site};
use super::{commands, output, secret, stdin, Check, Hit, Scan};
use regex::Captures;

mod shapes;

/// A built-in rule before compilation.
pub(super) struct Spec {
    pub kind: &'static str,
    pub pattern: String,
    pub keywords: Vec<&'static str>,
    pub check: Option<Check>,
    /// Reads the text itself, in place of the pattern (which is then empty): for a rule
    /// that looks at the lines around a place, which a pattern can only capture at a cost
    /// many times a literal search's.
    pub scan: Option<Scan>,
    /// The length of the shortest match, for a rule without keywords.
    pub min_len: usize,
    /// The check looks at all of a match: the search goes on after it, found or not.
    pub consumes: bool,
    /// The token may follow a letter or a digit, as after a JSON escape (`\nghp_…`,
    /// `\u0022ghp_…`), a URL escape (`%22ghp_…`) or a scheme written without its space
    /// (`Bearerghp_…`); such a match counts only when the token looks generated (see
    /// `values::strongly_random`), so that `task_live_notifications` is no Stripe key.
    pub glued: bool,
    /// The secret is encoded: what it decodes to is redacted in turn, and the secret is
    /// masked (as the kind of what was found) if anything was (see `Redactor::decoded`).
    pub decoded: Option<Encoding>,
}

/// How a rule's secret is encoded (see [`Spec::decoded`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Encoding {
    Base64,
    /// Base64 found with no decoder next to it: read only if it decodes to text.
    Base64Bare,
    Hex,
    /// Hexadecimal found with no decoder next to it: read only if it decodes to text.
    HexBare,
    /// Text written backwards, handed to something that turns it round.
    Reversed,
    /// Letters turned thirteen places, handed to something that turns them back.
    Rot13,
    /// Characters as their decimal codes, comma-separated (`fromCharCode(103,104,…)`).
    CharCodes,
}

fn spec(kind: &'static str, pattern: impl Into<String>, keywords: &[&'static str], check: Option<Check>) -> Spec {
    Spec {
        kind,
        pattern: pattern.into(),
        keywords: keywords.to_vec(),
        check,
        scan: None,
        min_len: 0,
        consumes: false,
        glued: false,
        decoded: None,
    }
}

/// A rule that reads the text itself (see [`Spec::scan`]), run when one of `keywords` is in it.
fn scan(kind: &'static str, keywords: &[&'static str], scan: Scan) -> Spec {
    Spec { scan: Some(scan), ..spec(kind, "", keywords, None) }
}

/// Where a token with a prefix of its own may start, written `(?G)` in a rule: anywhere, as
/// in gitleaks' rules for GitHub, GitLab or Slack tokens, which have no leading boundary
/// (and makes the rule `glued`: see [`Spec::glued`]; `(?A)` is the same without that). No
/// pattern at all, so that the search still starts at the token's literal prefix.
const GLUED: &str = "";

/// Where a token whose prefix is short or common (`sk-`, `SK`, `pat`, `dapi`) may start,
/// written `(?E)`: at a word boundary, after `_` (file names join words with it) or after a
/// JSON escape (`\n`, `\r`, `\t`: a token at the start of a line of JSON-escaped text).
const EDGE: &str = r"(?:\b|_|\\[nrt])";

/// Words one of which a name that names a credential holds (`DB_PASS`, `apiKey`,
/// `--auth-token`, `SESSION_ID`), and the services whose keys are credentials.
const CRED_WORDS: &[&str] = &[
    "pass",
    "pwd",
    "pw",
    "secret",
    "token",
    "key",
    "auth",
    "cred",
    "sess",
    "sid",
    "cookie",
    "bearer",
    "pin",
    "totp_seed",
    "otp_seed",
    "mfa_seed",
    "access_code",
    "unlock_code",
    "recovery_code",
    "backup_code",
    "auth_code",
    "heroku",
    "vercel",
    "netlify",
    "cloudflare",
    "twilio",
];

/// Credentials' names written with digits and signs for letters (`p@ssw0rd`, `pa$$word`,
/// `s3cr3t`, `t0k3n`): what `pass` or `secret` does not already find in them.
const LEET_WORDS: &[&str] =
    &["p@ss", "pa$$", "pa$s", "pas$", "pa55", "p4ss", "p455", "p@55", "s3cr", "secr3", "t0k", "tok3"];

/// "Password" in other languages, written with spaces between words (stems: `парол`
/// takes пароль, пароля, паролем; `hasł` hasło, hasła). German, Spanish, Portuguese and
/// French are here too for their labels (`Passwort: …`); their prose is the English rule's.
pub(super) const INTL_PASSWORD_WORDS: &[&str] = &[
    "парол",
    "лозинк",
    "lozink",
    "geslo",
    "parool",
    "slaptažod",
    "slaptazod",
    "hasł",
    "haslo",
    "heslo",
    "şifre",
    "sifre",
    "parolă",
    "parola",
    "wachtwoord",
    "lösenord",
    "losenord",
    "passord",
    "adgangskode",
    "kodeord",
    "salasana",
    "jelszó",
    "jelszo",
    "jelszav",
    "κωδικ",
    "συνθηματικ",
    "passwort",
    "kennwort",
    "contraseña",
    "contrasena",
    "senha",
    r"mot\s+de\s+passe",
    r"mật\s+khẩu",
    r"mat\s+khau",
    r"kata\s+sandi",
    r"kata\s+laluan",
    r"clave\s+de\s+acceso",
    "סיסמ",
    "הסיסמ",
    "contrasenya",
    "nenosiri",
    "পাসওয়ার্ড",
    "கடவுச்சொல்",
    r"كلمة\s+(?:المرور|السر)",
    r"رمز\s+المرور",
    r"رمز\s+عبور",
    "گذرواژه",
    "पासवर्ड",
];

/// "Password" in languages that write words together (Chinese, Japanese, Korean, Thai).
pub(super) const INTL_PASSWORD_JOINED: &[&str] =
    &["密码", "密碼", "口令", "パスワード", "暗証番号", "パスコード", "비밀번호", "암호", "패스워드", "รหัสผ่าน"];

/// The prefilter's words for the two lists above (one of which every match holds).
pub(super) const INTL_PASSWORD_KEYWORDS: [&str; 56] = [
    "رمز المرور",
    "парол",
    "лозинк",
    "lozink",
    "geslo",
    "parool",
    "slaptažod",
    "slaptazod",
    "hasł",
    "haslo",
    "heslo",
    "şifre",
    "sifre",
    "parolă",
    "parola",
    "wachtwoord",
    "lösenord",
    "losenord",
    "passord",
    "adgangskode",
    "kodeord",
    "salasana",
    "jelszó",
    "jelszo",
    "jelszav",
    "κωδικ",
    "συνθηματικ",
    "passwort",
    "kennwort",
    "contrase",
    "senha",
    "mot de passe",
    "mật khẩu",
    "mat khau",
    "kata sandi",
    "kata laluan",
    "clave de acceso",
    "סיסמ",
    "contrasenya",
    "nenosiri",
    "পাসওয়ার্ড",
    "கடவுச்சொல்",
    "كلمة",
    "رمز عبور",
    "گذرواژه",
    "पासवर्ड",
    "密码",
    "密碼",
    "口令",
    "パスワード",
    "暗証番号",
    "パスコード",
    "비밀번호",
    "암호",
    "패스워드",
    "รหัสผ่าน",
];

/// The built-in rules.
pub(super) fn built_in() -> Vec<Spec> {
    let cred = CRED_WORDS.join("|");
    // "Password" in another language: a word of letters (no letter before it), or one
    // written together with what follows.
    let intl_name = format!(
        r"(?:(?:^|[^\p{{L}}\p{{N}}_])(?:{alpha})\w*|(?:{joined}))",
        alpha = INTL_PASSWORD_WORDS.join("|"),
        joined = INTL_PASSWORD_JOINED.join("|"),
    );
    let leet = LEET_WORDS.iter().map(|w| regex::escape(w)).collect::<Vec<_>>().join("|");
    let commands = commands::COMMANDS.iter().map(|c| regex::escape(c)).collect::<Vec<_>>().join("|");
    // A value after `=` or `:`: double-quoted, single-quoted, a markdown code span,
    // JSON-escaped, or bare.
    let value = r#"(?:"(?P<s>[^"\n]*)"|'(?P<s2>[^'\n]*)'|`(?P<s5>[^`\n]*)`|\\"(?P<s3>(?:[^"\\\n]|\\[^"\n])*)\\"|(?P<s4>[^\s'"`,;<>|&(){}\[\]]+(?:&[^\s'"`,;<>|&(){}\[\]]+)*)(?P<call>\()?)"#;
    // A command and its words, redirections among them (`kinit me 2>/dev/null <<< …`), as
    // the here-string and here-document rules read it before what they feed it.
    let fed_cmd =
        r#"(?:^|[\s;&|(`"'])(?P<cmd>[A-Za-z0-9_./-]+(?:[ \t]+(?:[^\s<>|;&`]+|\d*>>?&?[^\s<>|;&`]*|&>[^\s<>|;&`]*))*)"#;
    let rules = vec![
        // Private keys: PEM (a key cut short goes to the end), base64-encoded PEM (a
        // kubeconfig's `client-key-data`, a Secret's `tls.key`), PuTTY, age.
        spec(
            "private-key",
            r"(?s)-----BEGIN[ A-Z0-9_-]*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END[ A-Z0-9_-]*PRIVATE KEY(?: BLOCK)?-----|\z)",
            &["-----begin"],
            None,
        ),
        // A PIN, in capitals as one writes it ("the PIN is 4921", "PIN: 4921"); lowercase
        // `pin` is a dependency's (`pin of X to 1.2.3`).
        // Written in groups too (`4827-1933`), and right after the word (`PIN 4827-1933`).
        spec(
            "password",
            r"\bPIN(?:\s+code)?(?:\s+(?:is|was|=)|\s*[:=])\s+(?P<s>[A-Za-z0-9]{4,64}(?:-[A-Za-z0-9]{2,16})*)\b",
            &["pin"],
            None,
        ),
        spec("password", r"\bPIN\s+(?:number\s+|#\s*)?(?P<s>\d{4,12}(?:-\d{2,12})*)\b", &["pin"], None),
        // A SAM dump's line, as pwdump and secretsdump print it: `user:RID:LM:NT:::`, both
        // hashes as good as the password (pass-the-hash).
        spec("password", r"(?m)^[^:\s]{1,128}:\d{1,10}:(?P<s>[0-9a-fA-F]{32}:[0-9a-fA-F]{32}):::", &[":::"], None),
        // SMTP's `AUTH PLAIN <base64 of \0user\0password>`, and AUTH LOGIN's answer to the
        // server's `334 UGFzc3dvcmQ6` ("Password:").
        spec("password", r"\bAUTH\s+PLAIN\s+(?P<s>[A-Za-z0-9+/]{8,}={0,2})", &["auth plain"], None),
        spec(
            "password",
            r"UGFzc3dvcmQ6[ \t]*\r?\n(?:[A-Z]:[ \t]*)?(?P<s>[A-Za-z0-9+/]{4,}={0,2})",
            &["ugfzc3dvcmq6"],
            None,
        ),
        // A private key's DER in base64 without its PEM armour: PKCS#1 RSA (`MIIEowIBAAK…`),
        // PKCS#8 (`MIIEvQIBADAN…`), SEC1 EC (`MHcCAQEEI…`), PKCS#8 EC and Ed25519; a line
        // or wrapped lines.
        spec(
            "private-key",
            r"(?P<s>(?:MII[A-Za-z0-9+/]{3}IBA(?:AK|DAN)|MHcCAQEEI|MIGkAgEBBDA|MIGHAgEAMBMG|MC4CAQAwBQYDK2Vw)[A-Za-z0-9+/]{16,}={0,2}(?:\r?\n[A-Za-z0-9+/]{16,}={0,2})*)",
            &["ibaak", "ibadan", "mhccaqeei", "migkagebbda", "mighageambmg", "mc4caqawbqydk2vw"],
            None,
        ),
        // An OpenSSH private key's body without its armour (`sed '1d;$d' id_ed25519`): its
        // base64 starts with the format's name, `openssh-key-v1`.
        spec(
            "private-key",
            r"(?P<s>b3BlbnNzaC1rZXktdjE[A-Za-z0-9+/]*={0,2}(?:\r?\n[A-Za-z0-9+/]{4,}={0,2})*)",
            &["b3blbnnzac1rzxktdje"],
            None,
        ),
        // The same keys as hex (`xxd -p`, `od`, a debugger): an OpenSSH key, and the DER of
        // SEC1 EC, PKCS#1 RSA and PKCS#8 (RSA, EC, Ed25519/X25519/Ed448/X448) keys, a line or
        // wrapped lines.
        spec(
            "private-key",
            r"(?i)(?P<s>(?:6f70656e7373682d6b65792d7631|30(?:[0-7][0-9a-f]|81[0-9a-f]{2}|82[0-9a-f]{4})(?:0201010(?:420|430|442)|02010002(?:81|82)|020100300[0-9a-f]06(?:092a864886f70d010101|072a8648ce3d0201|032b65(?:70|71|6e|6f))))[0-9a-f]*(?:\r?\n[0-9a-f]{16,})*)",
            &[
                "6f70656e7373682d6b65792d7631",
                "0201010420",
                "0201010430",
                "0201010442",
                "0201000281",
                "0201000282",
                "020100300",
            ],
            None,
        ),
        // A JSON Web Key's private members: RSA's `d`, `p`, `q`, `dp`, `dq`, `qi`, EC's and
        // OKP's `d` (base64url, long), and a symmetric key's `k` next to its `"kty": "oct"`.
        spec(
            "private-key",
            r#""(?:d|p|q|dp|dq|qi)"\s*:\s*"(?P<s>[A-Za-z0-9_-]{32,})""#,
            &["\"d\"", "\"p\"", "\"q\"", "\"dp\"", "\"dq\"", "\"qi\""],
            None,
        ),
        spec(
            "private-key",
            r#""kty"\s*:\s*"oct"[^{}]{0,400}?"k"\s*:\s*"(?P<s>[A-Za-z0-9_-]{16,})"|"k"\s*:\s*"(?P<s2>[A-Za-z0-9_-]{16,})"[^{}]{0,400}?"kty"\s*:\s*"oct""#,
            &["\"oct\""],
            None,
        ),
        // The SSH2 / RFC 4716 form (ssh.com, PuTTYgen's export): four dashes and spaces.
        spec(
            "private-key",
            r"(?s)---- BEGIN[ A-Z0-9_-]*PRIVATE KEY ----.*?(?:---- END[ A-Z0-9_-]*PRIVATE KEY ----|\z)",
            &["---- begin"],
            None,
        ),
        spec(
            "private-key",
            r"(?G)(?P<s>LS0tLS1CRUdJTi[A-Za-z0-9+/]{20,}={0,2})",
            &["ls0tls1crudjti"],
            Some(base64_pem),
        ),
        spec(
            "private-key",
            r"Private-Lines:[ \t]*\d+\r?\n(?P<s>[A-Za-z0-9+/=]{1,80}(?:\r?\n[A-Za-z0-9+/=]{1,80})*)",
            &["private-lines:"],
            None,
        ),
        spec("age-secret-key", r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}", &["age-secret-key-1"], None),
        // `_` ends and starts a token too: file names join them with underscores
        // (`src/AKIA…_ghp_….txt`, `notes_sk-ant-….md`), where `\b` sees one word.
        spec(
            "aws-access-key",
            r"(?A)(?P<s>(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16})(?:\b|_)",
            &["a3t", "akia", "asia", "abia", "acca"],
            Some(aws_key),
        ),
        // An AWS secret key given next to its key id, unnamed: on the same line or the next
        // (`AKIA… / wJalr…`, `creds: AKIA…,wJalr…`, a pasted pair of lines). The id is masked
        // by the rule above first.
        spec(
            "aws-secret-key",
            r"(?:\b(?:AKIA|ASIA)[A-Z0-9]{16}\b|\[REDACTED:aws-access-key\])[^\n]{0,40}?(?:\r?\n[^\n]{0,40}?)?(?:^|[\s:=,;/|'\x22(])(?P<s>[A-Za-z0-9/+]{40})(?:$|[\s,;'\x22)])",
            &["akia", "asia", "redacted:aws-access-key"],
            None,
        ),
        spec(
            "aws-secret-key",
            // `KEY=value`, `key: value`, and the label in prose or on a command line
            // (`aws configure set aws_secret_access_key KEY`, "AWS secret key KEY", "secret KEY");
            // `aws configure` asks `AWS Secret Access Key [None]: ` (the old value's end in the
            // brackets when there is one).
            r#"(?i)(?:\baws[_ -]?|\b)secret[_ -]?(?:(?:access[_ -]?)?key)?["']?(?:[ \t]*\[[^\]\n]{0,64}\])?(?:\s*[:=]\s*|\s+)(?:is\s+)?["']?(?P<s>[A-Za-z0-9/+=]{40})\b"#,
            &["secret"],
            None,
        ),
        spec(
            "github-token",
            r"(?G)(?P<s>gh[pousr]_[A-Za-z0-9]{30,255}(?:_[A-Za-z0-9]{20,255})*|github_pat_[A-Za-z0-9_]{22,255})(?:\b|_)",
            &["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"],
            None,
        ),
        spec(
            "gitlab-token",
            r"(?G)(?P<s>gl(?:pat|dt|ptt|rt|rtr|cbt|soat|ffct|imt|agent|oas|ft|wt)-[A-Za-z0-9_-]{20,}(?:\.[0-9a-z]{9}\b)?|GR1348941[A-Za-z0-9_-]{20,})|_gitlab_session=(?P<s2>[0-9a-z]{32})",
            &[
                "glpat-",
                "gldt-",
                "glptt-",
                "glrt-",
                "glcbt-",
                "glsoat-",
                "glffct-",
                "glimt-",
                "glagent-",
                "gloas-",
                "glft-",
                "glwt-",
                "gr1348941",
                "_gitlab_session=",
            ],
            None,
        ),
        spec(
            "atlassian-token",
            r"(?G)(?P<s>(?:ATATT3|ATCTT3)[A-Za-z0-9_=-]{24,})|(?E)(?P<s2>ATBB[A-Za-z0-9_=-]{24,})",
            &["atatt3", "atctt3", "atbb"],
            None,
        ),
        spec(
            "slack-token",
            // Legacy workspace tokens (`xoxa-`, `xoxr-`) may be as short as 8.
            r"(?G)(?P<s>xox[abeoprs]-[A-Za-z0-9-]{10,}|xox[ar]-[A-Za-z0-9-]{8,}|xapp-\d-[A-Za-z0-9-]{10,})",
            &["xoxa-", "xoxb-", "xoxe", "xoxo-", "xoxp-", "xoxr-", "xoxs-", "xapp-"],
            Some(with_digit),
        ),
        spec(
            "slack-webhook",
            r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_-]{20,}",
            &["hooks.slack.com"],
            None,
        ),
        spec(
            "discord-webhook",
            r"(?i)https://(?:(?:canary|ptb)\.)?discord(?:app)?\.com/api/webhooks/\d+/(?P<s>[A-Za-z0-9_-]{40,})",
            &["discord"],
            None,
        ),
        spec(
            "teams-webhook",
            r#"(?i)https://[a-z0-9-]+\.webhook\.office\.com/webhookb2/[^\s'"<>]+"#,
            &["webhook.office.com"],
            None,
        ),
        // No literal of its own: run on texts long enough to hold one (24 + 1 + 6 + 1 + 27).
        Spec {
            min_len: 59,
            ..spec(
                "discord-token",
                r"(?E)(?P<s>[MNO][A-Za-z0-9_-]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38})\b",
                &[],
                Some(high_entropy),
            )
        },
        spec("telegram-bot-token", r"(?:\b|_|bot)(?P<s>\d{5,16}:AA[A-Za-z0-9_-]{33})\b", &[":aa"], None),
        // In a URL of the Bot API (`api.telegram.org/bot<id>:<token>/sendMessage`, a local Bot
        // API server's `/bot<id>:<token>/getMe`) the token is one whatever its shape; after
        // a name that says Telegram, gitleaks' shape (`A` and 34).
        spec(
            "telegram-bot-token",
            r#"(?i)api\.telegram\.org/(?:file/)?bot(?P<s>\d{1,16}:[A-Za-z0-9_-]{16,})|/(?:file/)?bot(?P<s2>\d{5,16}:[A-Za-z0-9_-]{30,})(?:[/?#\s'"`]|\z)|telegr[A-Za-z0-9_.-]{0,40}[ \t]{0,5}[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[`'"\s=]{0,5}(?P<s3>\d{5,16}:(?-i:A)[A-Za-z0-9_-]{34})(?:[`'"\s;,)]|\\[nr]|\z)"#,
            &["api.telegram.org", "/bot", "/file/bot", "telegr"],
            Some(telegram),
        ),
        spec(
            "stripe-key",
            r"(?G)(?:(?P<s>(?:sk|rk)_(?:live|test|prod)_[A-Za-z0-9]{10,247})\b|(?P<s2>whsec_[A-Za-z0-9+/=]{24,}))",
            &["sk_live_", "sk_test_", "sk_prod_", "rk_live_", "rk_test_", "rk_prod_", "whsec_"],
            None,
        ),
        spec("anthropic-key", r"(?G)(?P<s>sk-ant-[A-Za-z0-9_-]{20,})", &["sk-ant-"], None),
        spec(
            "openai-key",
            r"(?E)(?P<s>sk-(?:proj-|svcacct-|admin-|None-|or-v1-)?[A-Za-z0-9_-]{20,})",
            &["sk-"],
            Some(openai),
        ),
        spec("npm-token", r"(?G)(?P<s>npm_[A-Za-z0-9]{36})(?:\b|_)", &["npm_"], None),
        spec("pypi-token", r"(?G)(?P<s>pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,})", &["pypi-ageichlwas5vcmc"], None),
        spec("rubygems-token", r"(?G)(?P<s>rubygems_[a-f0-9]{48})\b", &["rubygems_"], None),
        spec("clojars-token", r"(?i)(?G)(?P<s>CLOJARS_[a-z0-9]{60})\b", &["clojars_"], None),
        spec("nuget-key", r"(?E)(?P<s>oy2[a-z0-9]{43})\b", &["oy2"], None),
        spec("dockerhub-token", r"(?G)(?P<s>dckr_(?:pat|oat)_[A-Za-z0-9_-]{27,})", &["dckr_"], None),
        spec("google-api-key", r"(?G)(?P<s>AIza[0-9A-Za-z_-]{35})\b", &["aiza"], None),
        spec(
            "google-oauth",
            r"(?G)(?P<s>ya29\.[A-Za-z0-9_-]{20,}|GOCSPX-[A-Za-z0-9_-]{28}|1//0[A-Za-z0-9_-]{40,})",
            &["ya29.", "gocspx-", "1//0"],
            None,
        ),
        spec("jwt", r"(?G)(?P<s>eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,})", &["eyj"], None),
        spec(
            "vault-token",
            // Legacy `s.` tokens only near the word "vault": `s.` and 24 letters is code too.
            r"(?G)(?P<s>hv[sr]\.[A-Za-z0-9_-]{24,}|hvb\.[A-Za-z0-9_.-]{50,})|(?i:vault)[^\n]{0,40}?\b(?P<s2>s\.[A-Za-z0-9]{24})\b",
            &["hvs.", "hvr.", "hvb.", "vault"],
            Some(vault),
        ),
        spec("huggingface-token", r"(?G)(?P<s>(?:hf_|api_org_)[A-Za-z0-9]{34})(?:\b|_)", &["hf_", "api_org_"], None),
        spec(
            "sendgrid-key",
            // gitleaks' shape too: 66 characters after `SG.`, whatever dots they hold.
            r"(?G)(?P<s>SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64})|(?E)(?P<s2>SG\.[A-Za-z0-9=_.-]{66})(?:[^A-Za-z0-9=_.-]|\z)",
            &["sg."],
            None,
        ),
        spec("twilio-key", r"(?E)(?P<s>SK[0-9a-fA-F]{32})\b", &["sk"], None),
        spec("twilio-sid", r"(?i:twilio)[^\n]{0,80}?\b(?P<s>AC[0-9a-f]{32})\b", &["twilio"], None),
        spec(
            "mailgun-key",
            r"(?:^|[^A-Za-z0-9_-])(?P<s>key-[a-f0-9]{32})\b|(?i:mailgun)[^\n]{0,40}?\b(?P<s2>[a-f0-9]{32}-[a-f0-9]{8}-[a-f0-9]{8})\b",
            &["key-", "mailgun"],
            None,
        ),
        spec("mailchimp-key", r"\b(?P<s>[0-9a-f]{32}-us\d{1,2})\b", &["-us"], None),
        spec(
            "shopify-token",
            r"(?G)(?P<s>shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32})\b",
            &["shpat_", "shpss_", "shpca_", "shppa_"],
            None,
        ),
        spec("digitalocean-token", r"(?G)(?P<s>do[opr]_v1_[a-f0-9]{64})\b", &["dop_v1_", "doo_v1_", "dor_v1_"], None),
        spec(
            "doppler-token",
            r"(?G)(?P<s>dp\.(?:ct|pt|st(?:\.[a-z0-9_-]{2,35})?|sa|scim|audit)\.[A-Za-z0-9]{40,44})\b",
            &["dp.ct.", "dp.pt.", "dp.st", "dp.sa.", "dp.scim.", "dp.audit."],
            None,
        ),
        spec("databricks-token", r"(?E)(?P<s>dapi[a-f0-9]{32}(?:-\d)?)\b", &["dapi"], None),
        spec(
            "grafana-token",
            r"(?G)(?P<s>glc_[A-Za-z0-9+/]{32,400}={0,2}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|eyJrIjoi[A-Za-z0-9]{70,400}={0,2})",
            &["glc_", "glsa_", "eyjrijoi"],
            None,
        ),
        spec("linear-key", r"(?G)(?P<s>lin_(?:api|oauth)_[A-Za-z0-9]{40})\b", &["lin_api_", "lin_oauth_"], None),
        spec("postman-key", r"(?G)(?P<s>PMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34})\b", &["pmak-"], None),
        spec("planetscale-token", r"(?G)(?P<s>pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_=.-]{32,64})", &["pscale_"], None),
        spec("pulumi-token", r"(?E)(?P<s>pul-[a-f0-9]{40})\b", &["pul-"], None),
        spec(
            "sentry-token",
            r"(?G)(?P<s>sntrys_[A-Za-z0-9+/=_]{40,}|sntryu_[a-f0-9]{64})",
            &["sntrys_", "sntryu_"],
            None,
        ),
        spec(
            "square-token",
            // gitleaks takes `EAAA` and 22 to 60: a short one must look generated.
            r"(?G)(?P<s>sq0(?:atp|csp)-[A-Za-z0-9_-]{22,60})|(?E)(?P<s2>EAAA[A-Za-z0-9_+=-]{22,})",
            &["sq0atp-", "sq0csp-", "eaaa"],
            Some(square),
        ),
        spec(
            "newrelic-key",
            r"(?G)(?P<s>NRAK-[A-Z0-9]{27}|NRII-[A-Za-z0-9_-]{32}|NRJS-[a-f0-9]{19})\b",
            &["nrak-", "nrii-", "nrjs-"],
            None,
        ),
        // gitleaks' `new-relic-user-api-id`: 64 letters and digits after a name that says New
        // Relic (not a file's checksum: `newrelic.jar sha256: …`).
        spec(
            "newrelic-key",
            r#"(?i)new[ _-]?relic(?P<k>[ \t\w.-]{0,40}?)[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[`'"\s=]{0,5}(?P<s>[a-z0-9]{64})(?:[`'"\s;,)]|\\[nr]|\z)"#,
            &["newrelic", "new-relic", "new_relic", "new relic"],
            Some(newrelic_id),
        ),
        spec(
            "heroku-key",
            r#"(?G)(?P<s>HRKU-AA[0-9a-zA-Z_-]{58})|(?i:heroku)[A-Za-z0-9_.-]{0,40}[ \t'"]{0,3}(?:=|:|=>|[ \t])[ \t'"=]{0,5}(?P<s2>[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\b"#,
            &["hrku-", "heroku"],
            None,
        ),
        spec(
            "flyio-token",
            r"(?G)(?P<s>fo1_[A-Za-z0-9_-]{43}|fm[12][ar]?_[A-Za-z0-9+/]{100,}={0,3})",
            &["fo1_", "fm1a_", "fm1r_", "fm2_"],
            None,
        ),
        spec("netlify-token", r"(?G)(?P<s>nfp_[A-Za-z0-9_]{36})", &["nfp_"], None),
        spec(
            "supabase-key",
            r"(?G)(?P<s>sbp_[a-f0-9]{40}|sb_secret_[A-Za-z0-9_-]{20,})",
            &["sbp_", "sb_secret_"],
            None,
        ),
        spec(
            "figma-token",
            r"(?G)(?P<s>fig(?:d|[uo][rh]?)_[A-Za-z0-9_-]{40})",
            &["figd_", "figu_", "figo_", "figur_", "figuh_", "figor_", "figoh_"],
            None,
        ),
        spec("airtable-token", r"(?E)(?P<s>pat[A-Za-z0-9]{14}\.[a-f0-9]{64})\b", &["pat"], None),
        spec(
            "cloudflare-token",
            r"(?G)(?P<s>cf(?:ut|at|k)_[A-Za-z0-9]{40}[a-f0-9]{8})\b|(?E)(?P<s2>v1\.0-[a-f0-9]{24}-[a-f0-9]{146})\b",
            &["cfut_", "cfat_", "cfk_", "v1.0-"],
            None,
        ),
        spec("alibaba-key", r"(?E)(?P<s>LTAI[A-Za-z0-9]{12,20})\b", &["ltai"], Some(random)),
        spec("tencent-key", r"(?E)(?P<s>AKID[A-Za-z0-9]{32})\b", &["akid"], Some(random)),
        spec("adafruit-key", r"(?E)(?P<s>aio_[A-Za-z0-9]{28})\b", &["aio_"], Some(random)),
        spec("terraform-token", r"(?E)(?P<s>[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70})\b", &["atlasv1"], None),
        spec("groq-key", r"(?G)(?P<s>gsk_[A-Za-z0-9]{52})\b", &["gsk_"], None),
        spec("xai-key", r"(?G)(?P<s>xai-[A-Za-z0-9_]{80})\b", &["xai-"], None),
        spec("replicate-token", r"(?E)(?P<s>r8_[A-Za-z0-9_-]{37})\b", &["r8_"], Some(random)),
        spec("perplexity-key", r"(?G)(?P<s>pplx-[A-Za-z0-9]{40,64})\b", &["pplx-"], Some(random)),
        spec("langsmith-key", r"(?G)(?P<s>lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10})\b", &["lsv2_"], None),
        spec("pinecone-key", r"(?G)(?P<s>pcsk_[A-Za-z0-9]{5,6}_[A-Za-z0-9]{63})\b", &["pcsk_"], None),
        spec(
            "1password-token",
            r"(?G)(?P<s>ops_eyJ[A-Za-z0-9+/]{250,}={0,3})|(?E)(?P<s2>A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5})\b",
            &["ops_eyj", "a3-"],
            None,
        ),
        spec("artifactory-token", r"(?E)(?P<s>AKCp[A-Za-z0-9]{69}|cmVmd[A-Za-z0-9]{59})\b", &["akcp", "cmvmd"], None),
        spec("dynatrace-token", r"(?G)(?P<s>dt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64})\b", &["dt0c01."], None),
        spec("easypost-token", r"(?E)(?P<s>EZ[AT]K[A-Za-z0-9]{54})\b", &["ezak", "eztk"], None),
        spec("sendinblue-key", r"(?G)(?P<s>xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16})\b", &["xkeysib-"], None),
        spec(
            "notion-token",
            r"(?G)(?P<s>ntn_[0-9]{11}[A-Za-z0-9]{35})\b|(?E)(?P<s2>secret_[A-Za-z0-9]{43})\b",
            &["ntn_", "secret_"],
            Some(random),
        ),
        spec(
            "sourcegraph-token",
            r"(?G)(?P<s>sgp_(?:[a-fA-F0-9]{16}|local)_[a-fA-F0-9]{40}|sgp_[a-fA-F0-9]{40})\b",
            &["sgp_"],
            None,
        ),
        spec("sonar-token", r"(?G)(?P<s>sq[upa]_[a-f0-9]{40})\b", &["squ_", "sqp_", "sqa_"], None),
        spec("buildkite-token", r"(?G)(?P<s>bkua_[a-z0-9]{40})\b", &["bkua_"], None),
        spec("circleci-token", r"(?G)(?P<s>CCIPAT_[A-Za-z0-9]{22}_[a-fA-F0-9]{40})\b", &["ccipat_"], None),
        spec("tailscale-key", r"(?G)(?P<s>tskey-[a-z]+-[A-Za-z0-9_]{6,}-[A-Za-z0-9_]{6,})\b", &["tskey-"], None),
        spec("mapbox-token", r"(?G)(?P<s>sk\.eyJ[A-Za-z0-9_.-]{60,})", &["sk.eyj"], None),
        spec("prefect-key", r"(?G)(?P<s>pnu_[A-Za-z0-9]{36})\b", &["pnu_"], None),
        spec("shippo-token", r"(?G)(?P<s>shippo_(?:live|test)_[a-fA-F0-9]{40})\b", &["shippo_"], None),
        spec("duffel-token", r"(?G)(?P<s>duffel_(?:test|live)_[A-Za-z0-9_=-]{43})", &["duffel_"], None),
        spec("openshift-token", r"(?E)(?P<s>sha256~[A-Za-z0-9_-]{43})(?:[^A-Za-z0-9_-]|\z)", &["sha256~"], None),
        spec("facebook-token", r"(?E)(?P<s>EAA[MC][A-Za-z0-9]{100,})\b", &["eaam", "eaac"], None),
        // The rest of gitleaks' (v8.30.1) rules whose tokens have a prefix or a shape of their
        // own. Public keys (Flutterwave's `FLWPUBK_`, Mailgun's `pubkey-`, Mapbox's `pk.`,
        // Lob's `_pub_`) are left out, as Stripe's `pk_live_` is: they are meant to be seen.
        spec("adobe-client-secret", r"(?E)(?P<s>p8e-[A-Za-z0-9]{32})\b", &["p8e-"], None),
        spec(
            "authress-key",
            r"(?E)(?P<s>(?:sc|ext|scauth|authress)_[A-Za-z0-9]{5,30}\.[A-Za-z0-9]{4,6}\.acc[_-][A-Za-z0-9-]{10,32}\.[A-Za-z0-9+/_=-]{30,120})",
            &[".acc_", ".acc-"],
            None,
        ),
        // Amazon Bedrock: long-lived keys, and short-lived ones (the base64 of
        // `bedrock.amazonaws.com/?Action=CallWithBearerToken&…`, whole).
        spec(
            "aws-bedrock-key",
            r"(?E)(?P<s>ABSK[A-Za-z0-9+/]{109,269}={0,2})|(?G)(?P<s2>bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t[A-Za-z0-9+/=%_-]*)",
            &["absk", "bedrock-api-key-"],
            Some(high_entropy),
        ),
        spec("clickhouse-key", r"(?E)(?P<s>4b1d[A-Za-z0-9]{38})\b", &["4b1d"], Some(high_entropy)),
        // Flutterwave's secret keys (`FLWSECK-…-X`, `FLWSECK_TEST-…-X`) and encryption keys
        // (`FLWSECK_TEST` and 12 hexadecimal digits, with or without a `-`).
        spec("flutterwave-key", r"(?E)(?P<s>FLWSECK(?:_TEST)?-?[A-Za-z0-9]{12,}(?:-X)?)\b", &["flwseck"], None),
        spec("frameio-token", r"(?G)(?P<s>fio-u-[A-Za-z0-9_=-]{64})", &["fio-u-"], None),
        spec(
            "harness-token",
            r"(?E)(?P<s>(?:pat|sat)\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20})\b",
            &["pat.", "sat."],
            None,
        ),
        spec("infracost-token", r"(?E)(?P<s>ico-[A-Za-z0-9]{32})\b", &["ico-"], None),
        spec("intra42-secret", r"(?E)(?P<s>s-s4t2(?:ud|af)-[a-f0-9]{64})\b", &["s-s4t2ud-", "s-s4t2af-"], None),
        // Octopus Deploy: `API-` and 26 capitals and digits (a name in capitals is no key).
        spec("octopus-key", r"(?E)(?P<s>API-[A-Z0-9]{26})\b", &["api-"], Some(random)),
        spec("readme-token", r"(?G)(?P<s>rdme_[a-z0-9]{70})\b", &["rdme_"], None),
        spec("scalingo-token", r"(?G)(?P<s>tk-us-[A-Za-z0-9_-]{48})(?:[^A-Za-z0-9_-]|\z)", &["tk-us-"], None),
        spec(
            "settlemint-token",
            r"(?E)(?P<s>sm_(?:pat|aat|sat)_[A-Za-z0-9]{16})\b",
            &["sm_pat_", "sm_aat_", "sm_sat_"],
            None,
        ),
        spec("maxmind-key", r"\b(?P<s>[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk)\b", &["_mmk"], None),
        // Sidekiq Pro/Enterprise's gem server credentials: the variable Bundler reads, and
        // `bundle config gems.contribsys.com USER:PASS`.
        spec(
            "sidekiq-secret",
            r#"(?i)(?:\bBUNDLE_(?:ENTERPRISE|GEMS)__CONTRIBSYS__COM\b["']?[ \t]*(?:=>|[=:])?|\b(?:enterprise|gems)\.contribsys\.com)[ \t]*["']?(?P<s>[a-f0-9]{8}:[a-f0-9]{8})\b"#,
            &["contribsys"],
            None,
        ),
        // A JWT encoded in base64 again (a header's value, a Kubernetes secret's data).
        spec("jwt", r"(?E)(?P<s>ZXlK[A-Za-z0-9+/_-]{40,}={0,2})", &["zxlk"], Some(base64_jwt)),
        // A JWT whose segments start `ey` but not `eyJ` (a header with a space), or that is
        // not signed (`alg: none`, its signature empty): gitleaks' shape, 17 characters a
        // segment at least.
        spec(
            "jwt",
            r"(?E)(?P<s>ey[A-Za-z0-9_-]{17,}\.ey[A-Za-z0-9/_-]{17,}\.(?:[A-Za-z0-9/_-]{10,}={0,2})?)(?:[^A-Za-z0-9/_.=-]|\z)",
            &[".ey"],
            Some(high_entropy),
        ),
        // Dropbox's short-lived tokens (`sl.` and 130 or more; `sl.u.` as newer ones start).
        spec("dropbox-token", r"(?E)(?P<s>sl\.(?:u\.)?[A-Za-z0-9_=-]{130,})", &["sl."], Some(random)),
        spec(
            "plaid-token",
            r"(?G)(?P<s>access-(?:sandbox|development|production)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\b",
            &["access-sandbox-", "access-development-", "access-production-"],
            None,
        ),
        // Okta: an API token after its scheme (`Authorization: SSWS 00…`, "my okta token:
        // SSWS 00…"), or `00` and 40 near the word "okta".
        spec(
            "okta-token",
            r"(?i:\bSSWS)[ \t]+(?P<s>[A-Za-z0-9_=-]{20,})|(?i:okta)[^\n]{0,60}?\b(?P<s2>00[A-Za-z0-9_=-]{40})(?:[^A-Za-z0-9_=-]|\z)",
            &["ssws", "okta"],
            Some(high_entropy),
        ),
        spec("typeform-token", r"(?G)(?P<s>tfp_[A-Za-z0-9_.=-]{59})", &["tfp_"], None),
        spec("defined-networking-token", r"(?E)(?P<s>dnkey-[A-Za-z0-9=_-]{26}-[A-Za-z0-9=_-]{52})", &["dnkey-"], None),
        // Yandex Cloud: API keys (`AQVN…`) and IAM tokens (`t1.…`).
        spec(
            "yandex-key",
            r"(?E)(?:(?P<s>AQVN[A-Za-z0-9_-]{35,38})\b|(?P<s2>t1\.[A-Za-z0-9_-]+={0,2}\.[A-Za-z0-9_-]{86}={0,2}))",
            &["aqvn", "t1."],
            Some(random),
        ),
        spec(
            "azure-key",
            r"(?i)\b(?:AccountKey|SharedAccessKey|SharedAccessSignature)\s*=\s*(?P<s>[A-Za-z0-9+/=%]{16,})",
            &["accountkey", "sharedaccesskey", "sharedaccesssignature"],
            None,
        ),
        spec(
            "azure-client-secret",
            r#"(?:^|[\\'"`\s>=:(,)])(?P<s>[a-zA-Z0-9_~.]{3}\dQ~[a-zA-Z0-9_~.-]{31,34})(?:$|[\\'"`\s<),])"#,
            &["q~"],
            None,
        ),
        // Signed URLs: an Azure SAS, an S3 or GCS pre-signed URL grant access until they expire.
        spec(
            "url-signature",
            r"(?i)[?&;](?:sig|signature|x-amz-signature|x-goog-signature)=(?P<s>[A-Za-z0-9%+/=_.-]{16,})",
            &["sig=", "signature="],
            None,
        ),
        // `scheme://user:PASS@host` (the user may be empty: `redis://:PASS@host`; the
        // password may hold `@`, the last one before the host ends it) and a token alone
        // as the user (`https://TOKEN@github.com`).
        spec(
            "url-password",
            r#"(?i)\b[a-z][a-z0-9+.-]*://(?:(?P<u>[^/\s:@'"`<>]*):(?P<s>[^/\s'"`<>]+)@|(?P<s2>[A-Za-z0-9_-]{20,})@)"#,
            &["://"],
            Some(url),
        ),
        spec(
            "authorization",
            // A mask where the credential stands is looked past: `Bearer [REDACTED:x] abc123`
            // holds a credential still.
            // Any scheme is one (Okta's `SSWS`, `Splunk`, `AWS4-HMAC-SHA256`, `GoogleLogin`): a
            // word and a space before the credential.
            r#"(?i)\b(?:proxy-)?authorization\\?["']?\s*(?P<sep>[:=])\s*\\?["']?(?:(?P<scheme>basic|bearer|digest|token|apikey|api-key|negotiate|ntlm|hoba|mutual|sso-key|dpop|mac|otp|key)\s+|(?P<other>[A-Za-z][A-Za-z0-9._-]*)[ \t]+)?(?:\[REDACTED:[A-Za-z0-9_.-]*\][ \t]+)?(?P<s>[^\s'"\\\[\](){},;]{6,})(?P<masked>[ \t]+\[REDACTED:)?"#,
            &["authorization"],
            Some(authorization),
        ),
        // A signature among an `Authorization` header's parameters (AWS Signature Version 4's
        // `Signature=`, HTTP Signatures' `signature="…"`): it signs requests as its key would.
        spec(
            "authorization",
            r#"(?i)\b(?:authorization|aws4-hmac-sha256)\b[^\n]{0,500}?[\s,;]signature\s*=\s*\\?"?(?P<s>[A-Za-z0-9+/=_-]{16,})"#,
            &["authorization", "aws4-hmac-sha256"],
            None,
        ),
        // Digest authentication: `response="…"` is the hash of the password and the nonce,
        // as good as the password against that server.
        spec(
            "authorization",
            r#"(?i)\bdigest\s[^\n]{0,500}?\bresponse\s*=\s*\\?"?(?P<s>[A-Za-z0-9+/=]{16,})"#,
            &["digest"],
            None,
        ),
        // `Cookie: a=1; session=…`, `Set-Cookie: auth=…; Path=/`: a session's cookie is its
        // credential.
        spec(
            "secret",
            r#"(?i)\b(?P<set>set-)?cookie\\?["']?[ \t]*:[ \t]*\\?["']?(?P<v>[^\r\n"'\\]+)"#,
            &["cookie"],
            Some(cookie),
        ),
        spec("bearer-token", r"(?i)\bbearer\s+(?P<s>[A-Za-z0-9._~+/=-]{8,})", &["bearer"], Some(bearer)),
        // A user's password handed to a program's prompts: a here-document to `ftp`/`lftp`
        // (`user NAME PASS`), or an `expect` script's answer to a password prompt
        // (`expect "*assword*"` then `send "PASS\r"`). Before the rules of names and values, which
        // would read `password:"; send "` as a name and its quoted value.
        spec(
            "password",
            r#"\b(?:l?ftp|sftp)\b[^\n]*<<-?[ \t]*["']?[A-Za-z_][A-Za-z0-9_]*["']?[^\n]*\n(?:[^\n]*\n){0,20}?[ \t]*user[ \t]+[^\s]+[ \t]+(?P<s>[^\s]+)|(?i:\bexpect\b[^\n]*?(?:assword|passphrase|\bpin\b)[^\n]*?(?:\n|;)[ \t]*send\b)[ \t]+(?:--[ \t]+)?"(?P<s2>(?:[^"\\\n]|\\[^rn\n])+)(?:\\[rn])*""#,
            &["ftp", "expect"],
            Some(plain_secret),
        ),
        // Short options and positions of well-known commands (`curl -u`, `docker login -p`, …).
        Spec {
            consumes: true,
            ..spec(
                "password",
                format!(
                    r#"(?i)(?:^|[\s;&|(`/"'=])(?P<cmd>{commands})(?:\.exe)?(?P<tail>[ \t](?:[^\n|;&\\]|\\(?:\r?\n|.))*)"#
                ),
                &commands::keywords(),
                Some(commands::check),
            )
        },
        // A secret fed to a command that reads one from its input (see `stdin`): piped
        // from `echo`, `printf` or `yes`; as a here-string; as a here-document's lines.
        Spec {
            consumes: true,
            ..spec(
                "password",
                r#"(?i)(?:^|[\s;&|(`"'/])(?P<feed>(?:echo|printf|yes)[ \t](?:[^\n|;&\\)}]|\\(?:\r?\n|.))*)\|[ \t]*(?P<tail>(?:[^\n|;&\\]|\\(?:\r?\n|.))+)"#,
                &["echo ", "echo\t", "printf ", "printf\t", "yes "],
                Some(stdin::piped),
            )
        },
        Spec {
            consumes: true,
            ..spec(
                "password",
                r#"(?i)(?:^|[\s;&|(`"'/])(?P<feed>(?:echo|printf)[ \t][^\n|;&<>]*?)[ \t]*>>?[ \t]*(?P<file>[^\s;&|<>]+)"#,
                &["echo ", "printf "],
                Some(stdin::written),
            )
        },
        // The same through `tee` (`echo PASS | sudo tee -a /etc/app/db_password`).
        Spec {
            consumes: true,
            ..spec(
                "password",
                r#"(?i)(?:^|[\s;&|(`"'/])(?P<feed>(?:echo|printf)[ \t][^\n|;&<>]*?)[ \t]*\|[ \t]*(?:sudo[ \t]+(?:-\S+[ \t]+)*)?tee[ \t]+(?:-\S+[ \t]+)*(?P<file>[^\s;&|<>]+)"#,
                &["tee "],
                Some(stdin::written),
            )
        },
        // Several at once: `(echo A; echo A) | passwd`, `{ echo A; echo A; } | passwd`; and
        // `passwd < <(printf 'A\nA\n')`.
        Spec {
            consumes: true,
            ..spec(
                "password",
                r#"(?i)[({][ \t]*(?P<group>(?:echo|printf)[ \t][^(){}\n|]*?)[ \t]*[)}][ \t]*\|[ \t]*(?P<tail>[^\n|;&]+)"#,
                &["echo ", "printf "],
                Some(stdin::piped),
            )
        },
        Spec {
            consumes: true,
            ..spec(
                "password",
                r#"(?i)(?:^|[\s;&|(`"'])(?P<tail>[A-Za-z0-9_./-]+(?:[ \t]+[^\s<>|;&]+)*)[ \t]*<[ \t]*<\([ \t]*(?P<feed>(?:echo|printf)[ \t][^)\n]*)\)"#,
                &["<("],
                Some(stdin::piped),
            )
        },
        Spec {
            consumes: true,
            ..spec(
                "password",
                format!(
                    r#"{fed_cmd}[ \t]*<<<[ \t]*(?P<word>\$?"[^"\n]*"|\$?'[^'\n]*'|[^\s;&|)`]+)(?:[ \t]*\|[ \t]*(?P<piped>[^\n|;&]+))?"#
                ),
                &["<<<"],
                Some(stdin::here_string),
            )
        },
        Spec {
            consumes: true,
            ..spec(
                "password",
                format!(
                    r#"{fed_cmd}[ \t]*<<-?[ \t]*['"]?(?P<tag>[A-Za-z_][A-Za-z0-9_]*)['"]?(?:[ \t]*\|[ \t]*(?P<piped>[^\n|;&]+))?[^\n]*\n(?P<body>(?:[^\n]*(?:\n|\z)){{1,64}})"#
                ),
                &["<<"],
                Some(stdin::here_doc),
            )
        },
        // SQL that sets a password: `CREATE USER … IDENTIFIED BY 'PASS'`, `ALTER ROLE … PASSWORD
        // 'PASS'`, `SET PASSWORD … = 'PASS'`.
        spec(
            "password",
            r"(?i)\b(?:identified(?:[ \t]+with[ \t]+\S+)?[ \t]+by(?:[ \t]+password)?|(?:with|role|user)[ \t]+(?:\S+[ \t]+)?(?:encrypted[ \t]+)?password|set[ \t]+password(?:[ \t]+for[ \t]+(?:'[^'\n]{0,64}'|\x22[^\x22\n]{0,64}\x22|[^\s=]{1,64})(?:@(?:'[^'\n]{0,64}'|\x22[^\x22\n]{0,64}\x22|[^\s=]{1,64}))?)?[ \t]*=)[ \t]*(?:'(?P<s>[^'\n]{3,})'|\x22(?P<s2>[^\x22\n]{3,})\x22)",
            &["identified", "password"],
            Some(plain_secret),
        ),
        // An FTP session's raw login command, typed or in a script (`quote PASS …`).
        spec(
            "password",
            r"(?i)\b(?:quote|literal)[ \t]+pass[ \t]+(?P<s>[^\s'\x22`]{3,})",
            &["pass"],
            Some(plain_secret),
        ),
        // Commands too common to give the rule above for every mention (`npm run`, "security
        // review"), for the one use that takes a password: macOS's keychain (`security
        // add-generic-password -a me -s svc -w PASS`; `-w` last, without a value, asks for
        // it) and `npm adduser -p PASS` / `npm login --password PASS`.
        spec(
            "password",
            r#"(?:\bsecurity[ \t]+add-(?:generic|internet)-password\b[^\n|;&]*?[ \t]-w|\bnpm[ \t]+(?:adduser|add-user|login)\b[^\n|;&]*?[ \t](?:-p|--password))(?:=|[ \t]+)(?:"(?P<s>[^"\n]*)"|'(?P<s2>[^'\n]*)'|(?P<s3>[^\s'"|;&<>-][^\s'"|;&<>]*))"#,
            &["add-generic-password", "add-internet-password", "adduser", "add-user", "npm login"],
            Some(plain_secret),
        ),
        // Options that name a credential, on any command line: `--token VALUE`,
        // `--api-key=VALUE`, `-storepass VALUE`, `-passout pass:VALUE`.
        spec(
            "secret",
            format!(
                r#"(?:^|[\s'"(=`])(?P<k>--?(?:[A-Za-z0-9][A-Za-z0-9_.-]*?)?(?i:{cred})[A-Za-z0-9_.-]*)(?:=|[ \t]+)(?:"(?P<s>[^"\n]*)"|'(?P<s2>[^'\n]*)'|(?P<s3>[^\s'"|;&<>-][^\s'"|;&<>]*))"#
            ),
            CRED_WORDS,
            Some(option),
        ),
        // `KEY=value`, `"key": "value"`, `key: value`, `$key = 'value'`, `'key' => 'value'`;
        // URL-encoded too (`password%3DVALUE`, `%22token%22%3A%22VALUE%22`).
        spec(
            "secret",
            format!(
                r#"\b(?P<k>[A-Za-z0-9_.-]*?(?i:{cred}|{leet})[A-Za-z0-9_.@$-]*)(?P<sep>(?:\\?["']?|%22)\]?[ \t]*(?::=|=>|\?=|[:=]|%3[DdAa])[ \t]*(?:%22)?){value}"#
            ),
            &[CRED_WORDS, LEET_WORDS].concat(),
            Some(pair),
        ),
        // `s.login('me@x.com', 'PASS')`, `ftplib.FTP('h', 'user', 'PASS')`,
        // `pymysql.connect('db', 'root', 'PASS')`, `Net::SMTP.start('h', 25, 'x', 'u', 'PASS')`:
        // a password given by position to a call that logs in.
        Spec {
            consumes: true,
            ..spec(
                "password",
                r#"\b(?:login|connect|FTP|FTP_TLS|SMTP|SMTP_SSL|IMAP4|IMAP4_SSL|POP3|POP3_SSL|start|auth|authenticate|simple_bind_s|bind_s|Connection)\((?P<args>[^()\n]{1,400})\)"#,
                &[
                    "login(",
                    "connect(",
                    "ftp(",
                    "ftp_tls(",
                    "smtp",
                    "imap4",
                    "pop3",
                    ".start(",
                    "auth(",
                    "authenticate(",
                    "bind_s(",
                    "connection(",
                ],
                Some(login_call),
            )
        },
        // Logging in, said in prose: "log in as admin / PASS", "ssh into prod with root and
        // PASS", "the creds -> admin:PASS".
        spec(
            "password",
            r#"(?i)\b(?:log\s*in(?:to)?|sign\s*in(?:to)?|ssh|connect|authenticate)\b[^\n]{0,60}?\b(?:as|with)\s+(?:user(?:name)?\s+)?[\w.@-]+\s*(?:/|:|\band\b(?:\s+password)?|\s\bwith\b(?:\s+(?:the\s+)?password)?)\s*(?P<s3>[^\s'",;/]+)"#,
            &["log in", "login", "log into", "sign in", "signin", "ssh", "connect", "authenticate"],
            Some(login_password),
        ),
        spec(
            "password",
            r#"(?i)\bcreds?\b[^\n:]{0,20}?(?:->|=>|:|=|\bare\b|\bis\b)\s*[\w.@-]+(?::|\s+(?:and|/)\s+)(?P<s3>[^\s'",;]+)"#,
            &["cred"],
            Some(login_password),
        ),
        // "Use PASS to log into the admin panel".
        spec(
            "password",
            r#"(?i)\buse\s+(?P<s3>[^\s'",;]+)\s+to\s+(?:log\s*in(?:to)?|sign\s*in(?:to)?|authenticate|unlock)\b"#,
            &["use "],
            Some(login_password),
        ),
        // "the db password is below" and the password on the next line.
        spec(
            "password",
            r#"(?i)\bpass(?:word|phrase|wd)\b[^\n]{0,40}?\b(?:below|as follows|follows|on the next line)\b[ \t]*[:.]?[ \t]*\r?\n[ \t]*(?P<s3>[^\s'",;]+)"#,
            &["below", "follows", "next line"],
            Some(login_password),
        ),
        // "The password was reset; new one: PASS".
        spec(
            "password",
            r#"(?i)\bpass(?:word|phrase)\b[^\n]{0,60}?\bnew\s+(?:one|value)\s*(?:is\b|:|=)\s*(?P<s3>[^\s'",;]+)"#,
            &["new one", "new value"],
            Some(login_password),
        ),
        // A password's value on the line after its name, as YAML can write it
        // (`password:` then `  PASS`).
        spec(
            "password",
            r#"(?im)^[ \t-]*(?:password|passwd|passphrase|secret|pwd)[ \t]*:[ \t]*\r?\n[ \t]+(?P<s3>[^\s#:'"\-{}\[\]|>&*!%@`][^\s:]*)[ \t]*$"#,
            &["password", "passwd", "passphrase", "secret", "pwd"],
            Some(plain_secret),
        ),
        // "PIN for the HSM: 482913".
        spec(
            "password",
            r#"\bPIN\b[^\n:=]{0,30}(?:[:=]|\b(?:is|was)\b)\s*(?P<s3>\d{4,12}(?:-\d{2,12})*|[A-Za-z]*\d[A-Za-z0-9]{3,63})\b"#,
            &["pin"],
            Some(plain_secret),
        ),
        // "the 2FA recovery codes are 8f3k-2m9d and 7g2h-4k1p".
        spec(
            "secret",
            r#"(?i)\b(?:recovery|backup|2fa|mfa)\s+codes?\b[^\n]{0,20}?(?:\bare\b|\bis\b|:)\s*(?P<list>[^\n]{1,300})"#,
            &["codes", "code"],
            Some(code_list),
        ),
        // "use this key PASS for the maps api".
        spec(
            "secret",
            r#"(?i)\b(?:this|the|my|our)\s+(?:api\s+|access\s+|secret\s+)?key\s+(?:is\s+)?(?P<s3>[A-Za-z0-9_-]{8,200})\s+(?:for|to|with)\b"#,
            &["key"],
            Some(random_or_password),
        ),
        // `export SLACK_BOT=Zq8v…`: a generated value, whatever the variable's name.
        Spec {
            min_len: 22,
            ..spec(
                "secret",
                r#"(?m)(?:^|[\s;&|(])(?P<k>[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*)(?:=|:[ \t]+)(?:"(?P<s>[^"\s]{20,})"|'(?P<s2>[^'\s]{20,})'|(?P<s3>[A-Za-z0-9+/=_.~-]{20,}))"#,
                &[],
                Some(env_generated),
            )
        },
        // `ENV KEY value` (a Dockerfile), `setenv KEY value` (csh), `set -x KEY value` (fish),
        // `setx KEY value` (Windows).
        spec(
            "secret",
            r#"(?m)(?:^|[;&|(])[ \t]*(?:ENV|setenv|setx|set[ \t]+-[A-Za-z]+)[ \t]+(?P<k>[A-Za-z_][A-Za-z0-9_]*)[ \t]+(?:"(?P<s>[^"\n]*)"|'(?P<s2>[^'\n]*)'|(?P<s4>[^\s'"]+))"#,
            &["env ", "env\t", "setenv", "setx", "set -", "set\t-"],
            Some(pair),
        ),
        // `<password>value</password>`; `<add key="Password" value="…"/>`.
        spec(
            "secret",
            r"<(?P<k>[A-Za-z_][A-Za-z0-9_.:-]*)(?:[ \t][^<>\n]*)?>(?P<s>[^<>\n]+)</(?P<k2>[A-Za-z_][A-Za-z0-9_.:-]*)[ \t]*>",
            CRED_WORDS,
            Some(xml),
        ),
        spec(
            "secret",
            r#"(?i)\b(?:key|name)\s*=\s*"(?P<k>[^"\n]*)"\s*value\s*=\s*"(?P<s>[^"\n]*)""#,
            CRED_WORDS,
            Some(xml),
        ),
        // `- name: DB_PASSWORD` / `value: …` (a container's environment), `{"name": …, "value": …}`.
        spec(
            "secret",
            format!(
                r#"(?i)\bname\\?["']?[ \t]*[:=][ \t]*\\?["']?(?P<k>[A-Za-z0-9_.-]+)\\?["']?[ \t]*(?:,[ \t]*|\r?\n[ \t]*)\\?["']?value\\?["']?[ \t]*[:=][ \t]*{value}"#
            ),
            CRED_WORDS,
            Some(pair),
        ),
        // `.netrc`: `machine HOST login USER password PASS`.
        spec(
            "password",
            r"(?i)(?:\bmachine\s+\S+|\bdefault)\s+(?:login\s+\S+\s+)?(?:account\s+\S+\s+)?password\s+(?P<s>\S+)",
            &["machine", "default"],
            Some(plain_secret),
        ),
        // A `.pgpass` line, `host:port:database:user:password` (a `:` or `\` in a field is
        // escaped with `\`): alone on its line (`cat ~/.pgpass`, a here-document) or quoted
        // (`echo "…" >> ~/.pgpass`). The host has a letter or a dot, or is `*`; the port is
        // a number or `*`.
        Spec {
            min_len: 9,
            ..spec(
                "password",
                r#"(?m)^[ \t]*(?P<h>\*|[A-Za-z0-9_.-]+):(?:\*|\d{2,5}):(?P<db>(?:[^:\\\s]|\\.)+):(?:[^:\\\s]|\\.)+:(?P<s>(?:[^:\\\s]|\\.)+)[ \t]*\r?$|["'](?P<h2>\*|[A-Za-z0-9_.-]+):(?:\*|\d{2,5}):(?P<db2>(?:[^:\\\s"']|\\.)+):(?:[^:\\\s"']|\\.)+:(?P<s2>(?:[^:\\\s"']|\\.)+)["']"#,
                &[],
                Some(pgpass),
            )
        },
        // A secret piped into a command that reads one: `echo PASS | docker login --password-stdin`.
        spec(
            "password",
            r#"(?:^|[\s;&|(])(?:echo|printf)[ \t]+(?:-[neE]+[ \t]+)?(?:"%s(?:\\n)?"[ \t]+|'%s(?:\\n)?'[ \t]+)?(?:"(?P<s>[^"\n]*)"|'(?P<s2>[^'\n]*)'|(?P<s3>[^\s'"|;&<>]+))[ \t]*\|[^|\n;&]*?(?:--password-stdin|--pass-stdin|--with-token|--stdin\b|\bchpasswd\b|\bsudo[ \t]+(?:-[A-Za-z]+[ \t]+)*-S\b|\bsecrets?[ \t]+(?:set|put|create|add)\b|\bcreate[ \t]+secret\b|\benv[ \t]+add\b)"#,
            &["echo", "printf"],
            Some(plain_secret),
        ),
        // Base64 that is decoded where it is given (`echo <b64> | base64 -d`, `base64 -D <<<
        // <b64>`, a here-document, `openssl base64 -d`, `atob("…")`, `b64decode("…")`,
        // `Buffer.from("…", "base64")`, `FromBase64String("…")`): masked if what it decodes
        // to holds a secret.
        Spec {
            decoded: Some(Encoding::Base64),
            ..spec(
                "secret",
                format!(
                    r#"(?:^|[\s;&|(`])(?:echo|printf)[ \t]+(?:-[neE]+[ \t]+)*(?:"%s(?:\\n)?"[ \t]+|'%s(?:\\n)?'[ \t]+)?["']?(?P<s>{b64})["']?[ \t]*\|[ \t]*(?:sudo[ \t]+)?{decoder}|{decoder}[^\n|;&]*?<<<[ \t]*["']?(?P<s2>{b64})|{decoder}[^\n|;&]*?<<-?[ \t]*["']?(?P<eof>[A-Za-z_][A-Za-z0-9_]*)["']?[ \t]*\r?\n(?P<s3>(?:[ \t]*[A-Za-z0-9+/_-]+={{0,2}}[ \t]*(?:\r?\n|\z))+)|(?:\batob|\b(?:urlsafe_|standard_)?b64decode|\bdecodebytes|FromBase64String|\bDecodeString|\b(?:strict_|urlsafe_)?decode64|\bbase64_decode|\bget(?:Url|Mime)?Decoder\(\)\.decode|\b[Bb]ase64\.decode)[ \t]*\([ \t]*b?["'`](?P<s4>{b64})["'`]|\bBuffer\.from\([ \t]*["'`](?P<s5>{b64})["'`][ \t]*,[ \t]*["'`]base64(?:url)?["'`]"#,
                    b64 = r"[A-Za-z0-9+/_-]{12,}={0,2}",
                    decoder = r"(?:\b(?:g?base64|basenc|openssl[ \t]+(?:base64|enc))\b[^|\n;&<]*?[ \t](?:-[A-Za-z]*[dD][A-Za-z]*|--decode)\b)",
                ),
                &[
                    "base64",
                    "atob",
                    "b64decode",
                    "decodebytes",
                    "frombase64string",
                    "decodestring",
                    "decode64",
                    "decoder().decode",
                ],
                None,
            )
        },
        // The same for hexadecimal (`echo <hex> | xxd -r -p`, `xxd -r -p <<< <hex>`,
        // `bytes.fromhex("…")`, `unhexlify("…")`, `Buffer.from("…", "hex")`,
        // `hex::decode("…")`).
        Spec {
            decoded: Some(Encoding::Hex),
            ..spec(
                "secret",
                format!(
                    r#"(?:^|[\s;&|(`])(?:echo|printf)[ \t]+(?:-[neE]+[ \t]+)*(?:"%s(?:\\n)?"[ \t]+|'%s(?:\\n)?'[ \t]+)?["']?(?P<s>{hex})["']?[ \t]*\|[ \t]*(?:sudo[ \t]+)?{decoder}|{decoder}[^\n|;&]*?<<<[ \t]*["']?(?P<s2>{hex})|(?:\bbytes\.fromhex|\bunhexlify|\ba2b_hex|\bhex::decode|\bhex\.DecodeString|\bHex\.decode(?:Hex)?|\bFromHexString)[ \t]*\([ \t]*b?["'`](?P<s4>{hex})["'`]|\bBuffer\.from\([ \t]*["'`](?P<s5>{hex})["'`][ \t]*,[ \t]*["'`]hex["'`]"#,
                    hex = r"(?:[0-9a-fA-F]{2}){8,}",
                    decoder = r"(?:\bxxd\b[^|\n;&<]*?[ \t]-[a-z]*r[a-z]*\b|\bbasenc[ \t]+--base16[ \t]+-d\b)",
                ),
                &[
                    "xxd",
                    "basenc",
                    "fromhex",
                    "unhexlify",
                    "a2b_hex",
                    "hex::decode",
                    "decodestring",
                    "hex.decode",
                    "buffer.from",
                ],
                None,
            )
        },
        // Text reversed where it is given (`echo <reversed> | rev`, `rev <<< <reversed>`,
        // `"…"[::-1]`, `.split('').reverse().join('')`): read forwards.
        Spec {
            decoded: Some(Encoding::Reversed),
            ..spec(
                "secret",
                r#"(?:^|[\s;&|(`])(?:echo|printf)[ \t]+(?:-[neE]+[ \t]+)*["']?(?P<s>[^\s'"|;&<>]{12,})["']?[ \t]*\|[ \t]*rev\b|\brev[ \t]*<<<[ \t]*["']?(?P<s2>[^\s'"|;&<>]{12,})|["'](?P<s4>[^\s'"]{12,})["']\[::-1\]|["'](?P<s5>[^\s'"]{12,})["']\.split\(["']{2}\)\.reverse\(\)"#,
                &["rev", "[::-1]", "reverse()"],
                None,
            )
        },
        // Text in rot13 where it is turned back (`echo '…' | tr 'A-Za-z' 'N-ZA-Mn-za-m'`,
        // `tr … <<< '…'`, `codecs.decode('…', 'rot13')`): read as it is meant.
        Spec {
            decoded: Some(Encoding::Rot13),
            ..spec(
                "secret",
                format!(
                    r#"(?:^|[\s;&|(`])(?:echo|printf)[ \t]+(?:-[neE]+[ \t]+)*(?:"(?P<s>[^"\n]{{8,400}})"|'(?P<s2>[^'\n]{{8,400}})'|(?P<s3>[^\s'"|;&<>]{{8,}}))[ \t]*\|[ \t]*{tr}|{tr}[^\n|;&]*?<<<[ \t]*(?:"(?P<s4>[^"\n]{{8,400}})"|'(?P<s5>[^'\n]{{8,400}})')|\bcodecs\.(?:de|en)code\([ \t]*["'](?P<s6>[^"'\n]{{8,400}})["'][ \t]*,[ \t]*["']rot[_-]?13["']"#,
                    tr = r#"\btr[ \t]+["']?(?:A-Za-z|a-zA-Z|\[A-Za-z\]|\[a-zA-Z\])["']?[ \t]+["']?(?:N-ZA-Mn-za-m|n-za-mN-ZA-M|\[N-ZA-Mn-za-m\]|\[n-za-mN-ZA-M\])["']?"#,
                ),
                &["n-za-m", "rot13", "rot_13", "rot-13"],
                None,
            )
        },
        // The same as a here-string: `gh auth login --with-token <<< TOKEN`,
        // `wrangler secret put X <<< VALUE`, `docker login --password-stdin <<< PASS`.
        spec(
            "password",
            r#"(?:--password-stdin|--pass-stdin|--with-token|--stdin\b|\bchpasswd\b|\bsudo[ \t]+(?:-[A-Za-z]+[ \t]+)*-S\b|\bsecrets?[ \t]+(?:set|put|create|add)\b|\bcreate[ \t]+secret\b|\benv[ \t]+add\b|\blogin\b)[^\n|;&]*?<<<[ \t]*(?:\$'(?P<s4>[^'\n]*)'|"(?P<s>[^"\n]*)"|'(?P<s2>[^'\n]*)'|(?P<s3>[^\s'"|;&<>]+))"#,
            &["<<<"],
            Some(plain_secret),
        ),
        // A secret given as a file that is a literal (`--vault-password-file <(echo PASS)`,
        // `wg set wg0 private-key <(echo KEY)`, `--password-file=<(printf %s PASS)`): the
        // process substitution's text after an option that names a secret.
        spec(
            "password",
            r#"(?i:pass(?:word|wd|phrase)?|secret|token|key|credentials?|auth)[A-Za-z0-9_-]*(?:[ \t]+|=)<\([ \t]*(?:echo|printf)[ \t]+(?:-[neE]+[ \t]+)*(?:(?:"%s(?:\\n)?"|'%s(?:\\n)?'|%s)[ \t]+)?(?:"(?P<s>[^"\n]*)"|'(?P<s2>[^'\n]*)'|(?P<s3>[^\s'"|;&<>)]+))"#,
            &["<("],
            Some(plain_secret),
        ),
        // A user and password encoded for a Basic header where they are given
        // (`echo -n 'user:PASS' | base64`, `$(printf %s user:PASS | base64)`).
        spec(
            "password",
            r#"(?:^|[\s;&|(`])(?:echo|printf)[ \t]+(?:-[neE]+[ \t]+)*(?:(?:"%s"|'%s'|%s)[ \t]+)?(?:"[^\s"':]+:(?P<s>[^"\n]+)"|'[^\s"':]+:(?P<s2>[^'\n]+)'|[^\s'":|;&<>]+:(?P<s3>[^\s'"|;&<>]+))[ \t]*\|[ \t]*(?:g?base64|openssl[ \t]+base64|basenc[ \t]+--base64)(?:[ \t]+-w[ \t]*0)?[ \t]*(?:$|[|;&)`\n"])"#,
            &["base64"],
            Some(plain_secret),
        ),
        // HTTP authentication in code: `auth=('user', 'PASS')`, `HTTPBasicAuth("user", "PASS")`.
        spec(
            "password",
            r#"\bauth[ \t]*=[ \t]*[(\[][ \t]*["'][^"'\n]*["'][ \t]*,[ \t]*(?:"(?P<s>[^"\n]+)"|'(?P<s2>[^'\n]+)')[ \t]*[)\]]|(?:HTTPBasicAuth|HTTPDigestAuth|BasicAuth|HTTPProxyAuth)\([ \t]*(?:(?:login|username|user)[ \t]*=[ \t]*)?["'][^"'\n]*["'][ \t]*,[ \t]*(?:password[ \t]*=[ \t]*)?(?:"(?P<s3>[^"\n]+)"|'(?P<s4>[^'\n]+)')"#,
            &["auth"],
            Some(plain_secret),
        ),
        // A YAML block scalar after a credential's key (`secret: |`, `password: >-`): its
        // lines, indented deeper than the key's line, are the value (the key may follow
        // other text on its line: `- password: |`, a sentence quoting one).
        spec(
            "secret",
            format!(
                r#"(?m)^(?P<ind>[ \t]*)(?:[^\n]*?[^A-Za-z0-9_.\n-])?(?P<k>[A-Za-z0-9_.-]*(?i:{cred})[A-Za-z0-9_.-]*)["']?[ \t]*:[ \t]*[|>][-+0-9]*[ \t]*(?:#[^\n]*)?\r?\n(?P<s>(?:[ \t]*\r?\n)*[ \t]+[^\n]*(?:\r?\n[ \t]*(?:[^ \t\r\n][^\n]*)?)*)"#
            ),
            CRED_WORDS,
            Some(block_scalar),
        ),
        // A private key written as 64 hexadecimal digits (an Ethereum-style key): `0x…` near a
        // word that says it is a key's or a secret's ("my private key is 0x4c08…", "0x4c08…
        // is the deployer's private key"), or bare right after "private key", "wallet key",
        // "metamask key" and the like (MetaMask exports keys without `0x`).
        // A hash or a transaction's id with no such word near it is kept.
        spec(
            "private-key",
            r#"(?i)(?:\b(?:private[ _-]?key|priv[ _-]?key|privkey|secret[ _-]?key|secret|signing[ _-]?key|wallet[ _-]?key|account[ _-]?key|eth(?:ereum)?[ _-]?key|deployer[ _-]?key|(?:my|our|your|his|her|their)[ \t]+key|(?:new[ \t]+)?(?:ethers\.)?Wallet[ \t]*\(|privateKeyToAccount[ \t]*\(|fromPrivateKey[ \t]*\()|\[REDACTED:private-key\])[^\n]{0,40}?\b(?P<s>0x[0-9a-f]{64})\b|\b(?P<s2>0x[0-9a-f]{64})\b[^\n]{0,40}?\b(?:private[ _-]?key|privkey|secret[ _-]?key)\b|\b(?:private|priv|secret|wallet|metamask|signing|account|deployer|eth(?:ereum)?)[ _-]?key\b["'`*]*(?:[ \t]+(?:is|was))?[ \t]*[:=]?[ \t]*["'`*]*(?P<s3>[0-9a-f]{64})\b"#,
            &["0x", "key", "wallet"],
            Some(high_entropy),
        ),
        // A wallet's recovery phrase (BIP-39: 12 to 24 words) after a name that says so.
        spec(
            "secret",
            r#"(?i)\b[A-Za-z0-9_.-]*(?:mnemonic|seed[_ -]?phrase|seed[_ -]?words|recovery[_ -]?phrase|secret[_ -]?phrase|wallet[_ -]?phrase|backup[_ -]?phrase)[A-Za-z0-9_.-]*\\?["']?(?:\s+is)?\s*(?:[:=]|=>)?\s*\\?["'`]?(?P<s>[a-z]{3,8}(?:[ \t]+[a-z]{3,8}){11,23})\b"#,
            &["mnemonic", "phrase", "seed"],
            None,
        ),
        // GitHub Actions' `::add-mask::VALUE` says VALUE is a secret.
        spec("secret", r#"::add-mask::(?P<s>[^\s'"]+)"#, &["::add-mask::"], Some(plain_secret)),
        spec(
            "password",
            r#"(?i)ConvertTo-SecureString\s+(?:-String\s+)?(?:"(?P<s>[^"\n]*)"|'(?P<s2>[^'\n]*)')\s+-AsPlainText"#,
            &["convertto-securestring"],
            Some(plain_secret),
        ),
        // A key named in prose and given a few words later in a code span or quotes ("API key
        // for the staging service (`9f86…`)", "the client secret we use, \"Xk9…\""): a value
        // that looks generated, within 60 characters of the name on its line.
        spec(
            "secret",
            r#"(?i)\b(?P<k>(?:(?:api|access|secret|private|signing|deploy|ssh|master|encryption|license|app|client|webhook|auth(?:entication)?|bearer)[ _-]?(?:key|token|secret)|secret|token)s?)\b[^\n`"']{0,60}?(?:`(?P<s>[A-Za-z0-9+/=_.~:%-]{16,512})`|"(?P<s2>[A-Za-z0-9+/=_.~:%-]{16,512})"|'(?P<s3>[A-Za-z0-9+/=_.~:%-]{16,512})'|(?:\s(?:is|was)|:|=)[ \t]+(?P<s4>[A-Za-z0-9+/=_.~%-]{16,512})(?:[\s.,;)]|$))"#,
            &["key", "token", "secret"],
            Some(random_secret_near_name),
        ),
        // A platform's command that sets secrets or environment variables (`supabase secrets
        // set K=V`, `railway variables --set 'K=V'`, `netlify env:set K V`, `fly secrets set`,
        // `heroku config:set`, `vercel env add`): see `setter`.
        spec(
            "secret",
            r#"(?i)\b(?:secrets?[ \t]+(?:set|put|add|create)|env:set|env[ \t]+(?:set|add)|variables[ \t]+(?:--set|set)|config:set|config[ \t]+set)\b(?P<tail>[^\n|;&]*)"#,
            &["secrets ", "secret ", "env:set", "env set", "env add", "variables", "config:set", "config set"],
            Some(setter),
        ),
        // A credential's name set to a value in prose ("Set `STRIPE_KEY` to `Ef3o…`", "set
        // DB_PASSWORD to …"), a value used as one ("Use Gh7i… as the Django SECRET_KEY"), and
        // a value said to be one ("Op5q… is the api token for prod"): see `named_value`.
        spec(
            "secret",
            r#"(?i)\b(?:set|change|update|put)\s+(?:the\s+|your\s+|my\s+|our\s+)?[`"']?(?P<names>[A-Za-z_][A-Za-z0-9_.-]{2,64})[`"']?\s+(?:to|=)\s+(?:`(?P<s>[^`\s]{6,200})`|"(?P<s2>[^"\s]{6,200})"|'(?P<s3>[^'\s]{6,200})'|(?P<s4>[^\s`'",;()]{6,200}))"#,
            &["set ", "change ", "update ", "put "],
            Some(named_value),
        ),
        spec(
            "secret",
            r#"(?i)\buse\s+(?:`(?P<s>[^`\s]{8,200})`|"(?P<s2>[^"\s]{8,200})"|'(?P<s3>[^'\s]{8,200})'|(?P<s4>[^\s`'",;()]{8,200}))\s+(?:as|for)\s+(?P<names>(?:[`"']?[A-Za-z0-9_-]+[`"']?[ \t]+){0,3}[`"']?[A-Za-z0-9_-]+)"#,
            &["use "],
            Some(named_value),
        ),
        spec(
            "secret",
            r#"(?i)(?:^|[\s(`'"])[`"']?(?P<s>[A-Za-z0-9+/=_.~-]{12,200})[`"']?\s+(?:is|was)\s+(?:the|my|our|your|an?)\s+(?P<names>(?:[A-Za-z0-9_.-]+\s+){0,3}(?:token|key|secret|password|passphrase|credential|pat)s?)\b"#,
            &["is the", "was the", "is my", "is our", "is your", "is an", "is a"],
            Some(named_value),
        ),
        // A passphrase of words said in prose ("the passphrase is correct horse battery
        // staple", "passphrase: tiger lamp orbit seven"): four to eight words after the name
        // and "is" or a colon, none of them a word of a sentence about passphrases ("the
        // passphrase is required for all new keys").
        spec(
            "password",
            r#"(?i)\bpass[ -]?phrase\b(?:\s+(?:for|of|to|on)\s+(?:the\s+|my\s+|our\s+|your\s+)?[A-Za-z0-9_.-]+(?:\s+(?:key|wallet|vault|account))?)?(?:\s+(?:is|was|will\s+be|should\s+be)(?:\s*[:=])?|\s*[:=])\s*(?P<s>[a-z]{2,20}(?:[ \t][a-z]{2,20}){3,7})\b"#,
            &["passphrase", "pass phrase", "pass-phrase"],
            Some(words_passphrase),
        ),
        // In prose: "the password hunter2hunter2", "password is s3cr3t!" (a word of 6 or more
        // with a digit: "password reset" is not one). A password's mask stands for its name:
        // what follows `[REDACTED:password]` is read as what follows "password" (not a mask
        // glued to an option, `7z a -p[REDACTED:password] archive.7z`: the archive is no
        // password).
        // Also quoted ("my password is \"Xk9…\"", "…password to 'Xk9…'"), after the ways a
        // sentence sets or tells one ("Set the password to …", "The admin password is now …"),
        // and of letters only when they look generated ("use the password febwNEJIEbTXevfY";
        // "the password to the server" is prose). Emphasis around the name or the value is
        // looked past (`use the password **…**`). Also "pw"/"pwd", a passphrase of four or more
        // joined words, and the name in German, Spanish, Portuguese and French.
        spec(
            "password",
            r#"(?i)(?:\b(?:password|passwd|passphrase|pass[ -]?code|secret[ -]phrase|pass[ -]phrase|psk|pre-?shared[ -]key|(?:wpa2?|wi-?fi)[ -]key|pwd?|(?:root|admin|sudo|db|ssh|wifi|login|user)[ _-]?pass|(?:the|my|your|our|his|her|their)\s+pass|passwort|kennwort|contraseña|contrasena|senha|mot\s+de\s+passe|mdp)|(?:^|[^\w@$])p[a@4][s$5][s$5]w[o0]r?d|(?:(?m:^)|[\s(`"'*_])\[REDACTED:password\])(?:[*_]{1,3})?(?:\s+(?:(?:for|of|on|at|in|für|fuer|von|auf|del|de|para|pour|du)\s+(?:the\s+|den\s+|dem\s+|der\s+|la\s+|le\s+|el\s+)?|to\s+(?:the|my|our|your|this|that)\s+)[A-Za-z0-9_.@-]+(?P<more>(?:\s+[A-Za-z0-9_.@-]+){1,2})?)?\??\s+(?:[(\[]\s*)?(?P<verb>(?:it's|it’s|it\s+is|is|was|will\s+be|should\s+be|has\s+been|had\s+been|must\s+be|(?:ends?|ended)\s+up\s+being|turn(?:s|ed)\s+out\s+to\s+be|became|becomes|remains|stays|of|ist|lautet|war|es|era|est|é|è|är|er|(?:ko\s+|namin\s+|natin\s+)?ay|adalah|ialah|là|—|->|=>|→|-)(?:\s*[:=-])?\s+)?(?:(?:now|still|currently)\s+)?(?:(?:(?:set|changed|reset|updated)\s+)?to\s+)?(?:\*{1,3}|~~)?(?:"(?P<q>[^"\s]{4,})"|'(?P<q2>[^'\s]{4,})'|`(?P<q3>[^`\s]{4,100})`|“(?P<q4>[^”\s]{4,100})”|‘(?P<q5>[^’\s]{4,100})’|(?P<s>[^\s'",;:]{5,}[0-9][^\s'",;]*|[^\s'",;:]*[0-9][^\s'",;]{5,})|(?P<p>[A-Za-z]{2,20}(?:[-_.][A-Za-z0-9]{2,20}){3,8})\b|(?P<w>[A-Za-z]{10,64})\b)"#,
            &[
                "password",
                "passwd",
                "passphrase",
                "passcode",
                "pw",
                "pass",
                "p@ss",
                "pa$$",
                "pa$s",
                "pas$",
                "pa55",
                "p4ss",
                "p455",
                "p@55",
                "passwort",
                "kennwort",
                "contrase",
                "senha",
                "mot de passe",
                "mdp",
                "secret phrase",
                "secret-phrase",
                "psk",
                "shared key",
                "shared-key",
                "wpa key",
                "wpa2 key",
                "fi key",
            ],
            Some(prose_password),
        ),
        // The name in other languages, in prose or as a label: "пароль: …", "мой пароль
        // …", "密码：…", "密码是…", "パスワードは「…」", "비밀번호는 …", "Passwort: …",
        // "contraseña de la base de datos: …", "hasło: …". Words of letters need no letter
        // before them (Unicode's, not ASCII's `\b`); Chinese, Japanese, Korean and Thai
        // write words together. The value is ASCII (a password is typed on any keyboard);
        // after a label any that is not a word, a reference or a placeholder, else one as
        // the English rule takes (`<` and `>` end it: `<tu-contraseña>` is a placeholder).
        spec(
            "password",
            format!(
                r#"(?i){name}["']?(?:(?:[ \t]+[^\s:：=]{{1,30}}){{0,6}}?[ \t]*[:：=][ \t]*|[ \t]*(?:是|为|為|は|が|는|은|이|란|คือ)[ \t]*[:：]?[ \t]*|(?:[ \t]+[^\s:：=]{{1,20}}){{0,2}}?[ \t]+(?:is|ist|lautet|war|es|era|est|é|è|это|был|была|было|jest|to|je|er|är|on|olarak|adalah|ialah|là|είναι|היא|הוא|ni|yra)[ \t]*[:：]?[ \t]+|[ \t]*[—–][ \t]*|[ \t]+)(?:\*{{1,3}}|~~)?(?:"(?P<q>[^"\s]{{4,100}})"|'(?P<q2>[^'\s]{{4,100}})'|`(?P<q3>[^`\s]{{4,100}})`|“(?P<q4>[^”\s]{{4,100}})”|‘(?P<q5>[^’\s]{{4,100}})’|「(?P<q6>[^」\s]{{4,100}})」|『(?P<q7>[^』\s]{{4,100}})』|«(?P<q8>[^»\s]{{4,100}})»|„(?P<q9>[^“”\s]{{4,100}})[“”]|(?P<b>[!#-&(-;=?-_a-~]{{4,}}))"#,
                name = intl_name,
            ),
            &INTL_PASSWORD_KEYWORDS,
            Some(intl_password),
        ),
        // The same name, then a word or two ("пароль от базы …", "senha do banco …") and a
        // value with a digit in it.
        spec(
            "password",
            format!(
                r#"(?i){name}(?:[ \t]+[^\s:：=\d]{{1,20}}){{1,2}}[ \t]+(?P<b>[!#-&(-;=?-_a-~]*[0-9][!#-&(-;=?-_a-~]*)"#,
                name = intl_name,
            ),
            &INTL_PASSWORD_KEYWORDS,
            Some(intl_password),
        ),
        // A password hash in crypt(3)'s form (`$apr1$…` and `{SHA}…` in an `.htpasswd`,
        // `$2y$10$…`, `$6$…` in `/etc/shadow`, `$argon2id$…`): as good as the password
        // against a dictionary.
        spec(
            "password",
            r"(?:\$(?:apr1|1|2[abxy]?|5|6|7|y|gy|sha1|md5|argon2(?:id|i|d)|scrypt|pbkdf2(?:-sha(?:256|512))?)\$[./A-Za-z0-9$=,+-]{8,}|\{(?:SHA|SSHA|SHA256|SSHA256|SHA512|SSHA512|MD5|SMD5|CRYPT)\}[A-Za-z0-9+/.$]{8,}={0,2})",
            &[
                "$apr1$", "$1$", "$2", "$5$", "$6$", "$7$", "$y$", "$gy$", "$sha1$", "$md5$", "$argon2", "$scrypt$",
                "$pbkdf2", "{sha", "{ssha", "{md5}", "{smd5}", "{crypt}",
            ],
            None,
        ),
        // A package manager's credential set by name: `npm config set //registry…/:_authToken
        // VALUE`, `yarn config set npmAuthToken VALUE`, `pnpm config set …:_password VALUE`.
        spec(
            "secret",
            r#"(?i)\b(?:npm|pnpm|yarn)[ \t]+config[ \t]+set[ \t]+(?:--[a-z-]+[ \t]+)*["']?[^\s"'=]*(?:_auth|authtoken|_password|token|password)[^\s"'=]*["']?(?:[ \t]+|=)["']?(?P<s>[^\s"'$%<{\[][^\s"']{5,})"#,
            &["config set"],
            None,
        ),
        // A user and a password given as a pair: "login admin / S3cret!", "creds: root:toor99",
        // "user deploy, password Xy7…" is the rule above's. The password is masked if it is
        // not a word (see `login_pair`).
        spec(
            "password",
            r"(?i)\b(?:log[ -]?in|sign[ -]?in|credentials?|creds|account|user(?:name)?)\b[ \t]*[:=]?(?:[ \t]+(?:is|was|are|as|with))?[ \t]*(?P<u>[A-Za-z0-9._@+-]{2,40})[ \t]*(?:/|\||:|,?[ \t]+(?:pass(?:word)?|pw|pwd)[ \t]*[:=]?)[ \t]*(?P<s>[^\s/'\x22`,;\[<{($%][^\s/'\x22`,;]{3,99})",
            &["login", "log in", "log-in", "signin", "sign in", "sign-in", "cred", "account", "user"],
            Some(login_pair),
        ),
        // Hexadecimal the same way: text spelled in hex (`6768705f…`) is read.
        Spec {
            decoded: Some(Encoding::HexBare),
            min_len: 32,
            consumes: true,
            ..spec("secret", r"(?:^|[^0-9A-Za-z])(?P<s>(?:[0-9a-fA-F]{2}){16,})(?:$|[^0-9A-Za-z])", &[], None)
        },
        // Base64 with no decoder next to it: if it reads as text (not bytes) and what it
        // says holds a secret, it is masked (`Z2hwX…`, `cGFzc3dvcmQ9…`).
        Spec {
            decoded: Some(Encoding::Base64Bare),
            min_len: 16,
            consumes: true,
            ..spec("secret", r"(?:^|[^A-Za-z0-9+/_=-])(?P<s>[A-Za-z0-9+/_-]{16,}={0,2})", &[], None)
        },
        // The same with what it is for between: "the api key for datadog is …", "the key for
        // the prod server is …", "the pass for the staging db is …".
        spec(
            "secret",
            r#"(?i)\b(?:(?:api[ _-]?)?key|pass(?:word)?|passphrase|token|secret|credentials?|pw|pwd)\s+(?:for|of|on|to)\s+(?:the\s+|my\s+|our\s+|your\s+|this\s+)?[A-Za-z0-9_.@-]+(?:\s+[A-Za-z0-9_.@-]+){0,2}?\s+(?:is|was|are)\s*[:=]?\s*["'`]?(?P<s>[A-Za-z0-9+/=_.~!@#$%^&*-]{8,})"#,
            &["key", "pass", "token", "secret", "cred", "pw"],
            Some(prose_secret),
        ),
        // "my API key is …", "access token: …", "client secret …", "token Tk12345678d": a
        // value that looks random (a short one must mix capitals, small letters and digits).
        // A secret's mask stands for its name.
        spec(
            "secret",
            r#"(?i)(?:\b(?:api[ _-]?key|access[ _-]?key|secret[ _-]?key|(?:auth|access|refresh|bearer|api|personal[ _-]access)[ _-]?token|client[ _-]?secret|token|secret|credentials?)|\[REDACTED:secret\])(?:\*{1,3})?(?:\s+(?:is|was|of))?(?:\s*[:=]\s*|\s+)(?:\*{1,3})?["'`]?(?P<s>[A-Za-z0-9+/=_.~-]{8,})"#,
            &["key", "token", "secret", "cred"],
            Some(prose_secret),
        ),
    ];
    let mut rules = rules;
    rules.extend(shapes::specs());
    rules.extend(vec![
        // Last, so that what a rule above names is masked as its kind first. What a command
        // that prints a secret printed (see `output`): `pwgen 16 1⏎q8vZ…`,
        // `pass show db⏎…`, `echo $DB_PASSWORD⏎…`.
        scan("secret", output::PRINTER_WORDS, output::printed),
        // A table whose heading names a credential (`| user | password |` from `mysql`, a
        // `psql` result) or whose rows do (`| DB_PASSWORD | … |`): see `output`.
        scan("secret", &[CRED_WORDS, LEET_WORDS].concat(), output::tables),
    ]);
    rules
        .into_iter()
        .map(|mut r| {
            if r.pattern.contains("(?G)") {
                r.pattern = r.pattern.replace("(?G)", GLUED);
                r.glued = true;
            }
            r.pattern = r.pattern.replace("(?A)", GLUED);
            r.pattern = r.pattern.replace("(?E)", EDGE);
            r
        })
        .collect()
}

// Checks: each adds the secrets of a match to `hits` (none: the match is left as it is).

/// `m` is a secret of the rule's kind.
fn hit(m: regex::Match<'_>, hits: &mut Vec<Hit>) {
    hits.push(Hit { range: m.range(), kind: None });
}

/// The secret, if it is not a reference or a placeholder (`$PASS`, `<password>`, `***`).
fn plain_secret(c: &Captures<'_>, hits: &mut Vec<Hit>) {
    if let Some(s) = secret(c) {
        if !is_reference(s.as_str()) && !is_placeholder(s.as_str(), "password") {
            hit(s, hits);
        }
    }
}

/// A value given a few words after a key's name: only one that looks generated.
fn random_secret_near_name(c: &Captures<'_>, hits: &mut Vec<Hit>) {
    if let Some(s) = secret(c) {
        // Words joined into a name (`lexer_token_stream_v2`, `build-cache-linux`) are code.
        let words = s
            .as_str()
            .split(['_', '-', '.'])
            .filter(|w| w.len() >= 3 && w.bytes().all(|b| b.is_ascii_lowercase()))
            .count();
        // A GPG key's id or fingerprint after "signing key" names a key (as the name/value
        // rules read it too).
        let v = s.as_str();
        let name = c.name("k").map_or("", |k| k.as_str());
        if words < 2 && !values::names_a_key_id(name, v) && values::looks_random(v) {
            hit(s, hits);
        }
    }
}

/// The values a platform's setter is given (see the rule): each `K=V`'s value, the word
/// after `--body`, `-b` or `--value`, and the second word of `K V`; those that are not
/// words, references or placeholders, and look like a password or a key.
fn setter(c: &Captures<'_>, hits: &mut Vec<Hit>) {
    let Some(tail) = c.name("tail") else { return };
    let words = commands::split(tail.as_str(), tail.start());
    let secret = |v: &str| !values::stands_in(v) && !v.contains("://") && (values::password_like(v) || looks_random(v));
    let mut positional = 0;
    let mut i = 0;
    while let Some(w) = words.get(i) {
        let t = w.text.as_str();
        if matches!(t, "--body" | "-b" | "--value") {
            if let Some(v) = words.get(i + 1).filter(|v| secret(&v.text)) {
                if let Some(range) = v.span(0, v.text.len()) {
                    hits.push(Hit { range, kind: None });
                }
            }
            i += 2;
            continue;
        }
        if t.starts_with('-') && !t.contains('=') {
            // An option's value (`--repo owner/repo`, `--app web`) is none of the variables'.
            i += 2;
            continue;
        }
        if !t.starts_with('-') {
            match t.split_once('=') {
                Some((_, v)) if secret(v) => {
                    if let Some(range) = w.span(t.len() - v.len(), t.len()) {
                        hits.push(Hit { range, kind: None });
                    }
                }
                Some(_) => {}
                None => {
                    positional += 1;
                    // `K V`: only a value that looks generated (a word of code is none).
                    if positional == 2 && secret(t) && looks_random(t) {
                        if let Some(range) = w.span(0, t.len()) {
                            hits.push(Hit { range, kind: None });
                        }
                    }
                }
            }
        }
        i += 1;
    }
}

/// A value tied in prose to a name (see the rules): a secret when one of the names' words
/// names a password (then any value that is not a word), or a key, a token or a vendor's
/// credential (then a value that looks generated).
fn named_value(c: &Captures<'_>, hits: &mut Vec<Hit>) {
    let (Some(names), Some(s)) = (c.name("names"), secret(c)) else { return };
    let v = s.as_str().trim_end_matches(['.', '!', '?']);
    if values::stands_in(v) {
        return;
    }
    // The name is the first word that names a credential ("as the Django SECRET_KEY", "the
    // api token", "as the passphrase for the ssh key"), else the last.
    let words: Vec<&str> = names
        .as_str()
        .split(|ch: char| ch.is_whitespace() || matches!(ch, '`' | '"' | '\''))
        .filter(|w| !w.is_empty())
        .collect();
    let named = words.iter().copied().find(|w| values::names(w) != Names::Nothing).or(words.last().copied());
    let (password, token) = match named.map(values::names) {
        Some(Names::Password) => (true, false),
        Some(Names::Token | Names::Maybe) => (false, true),
        _ => (false, false),
    };
    let secret = (password && values::password_like(v)) || ((password || token) && looks_random(v));
    if secret {
        let kind = password.then_some(std::borrow::Cow::Borrowed("password"));
        hits.push(Hit { range: s.start()..s.start() + v.len(), kind });
    }
}

/// Words of a passphrase said in prose: none of them a word a sentence about one is made
/// of (`required`, `for`, `the`, `stored`, …).
fn words_passphrase(c: &Captures<'_>, hits: &mut Vec<Hit>) {
    const PROSE: &[&str] = &[
        "a",
        "an",
        "the",
        "and",
        "or",
        "not",
        "no",
        "for",
        "to",
        "of",
        "in",
        "on",
        "at",
        "by",
        "with",
        "from",
        "into",
        "is",
        "are",
        "be",
        "was",
        "were",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "you",
        "your",
        "my",
        "our",
        "their",
        "we",
        "they",
        "all",
        "any",
        "each",
        "every",
        "new",
        "old",
        "required",
        "needed",
        "optional",
        "empty",
        "set",
        "used",
        "stored",
        "saved",
        "asked",
        "prompted",
        "missing",
        "wrong",
        "invalid",
        "correctly",
        "only",
        "when",
        "if",
        "then",
        "than",
        "but",
        "so",
        "as",
        "also",
        "still",
        "now",
        "here",
        "there",
        "should",
        "must",
        "can",
        "will",
        "would",
        "could",
        "may",
        "might",
        "too",
        "very",
        "more",
        "less",
        "same",
        "different",
    ];
    if let Some(s) = secret(c) {
        if s.as_str().split([' ', '\t']).all(|w| !PROSE.contains(&w.to_ascii_lowercase().as_str())) {
            hit(s, hits);
        }
    }
}

/// A password named in prose: quoted, any value that is not a plain word, a reference or a
/// placeholder (`"Xk9…"`, not `"required"` or `"invalid"`); bare with a digit, as before;
/// of letters only, one that looks generated. Emphasis after it is not its.
fn prose_password(c: &Captures<'_>, hits: &mut Vec<Hit>) {
    // "the password on the build box is …": a name of several words says what it is for
    // only before "is" (a sentence goes on after "the password to the server in …").
    // (The search may have read "is" as one of the name's words: "for the db is hunter2".)
    let says = |m: regex::Match<'_>| {
        m.as_str().split_whitespace().any(|w| {
            matches!(
                w.to_lowercase().as_str(),
                "is" | "was"
                    | "be"
                    | "been"
                    | "ist"
                    | "war"
                    | "lautet"
                    | "es"
                    | "era"
                    | "est"
                    | "é"
                    | "è"
                    | "är"
                    | "er"
                    | "now"
                    | "currently"
                    | "still"
            )
        })
    };
    if c.name("more").is_some_and(|m| !says(m)) && c.name("verb").is_none() {
        return;
    }
    let quoted = ["q", "q2", "q3", "q4", "q5"].iter().find_map(|n| c.name(n));
    let (m, secret) = if let Some(q) = quoted {
        let v = q.as_str();
        // At most 100 characters. Counted here for straight quotes rather than as `{4,100}`
        // in the pattern (each a hundred copies of "any character but two": 0.2 MB of
        // automaton apiece); the other quotes keep it there, because past 100 characters
        // the pattern then reads such a value as a bare one (`s`, which may start with a
        // curly quote, never with a straight one).
        if v.chars().nth(100).is_some() {
            return;
        }
        let word = values::is_plain_word(v) || values::NOT_SECRETS.contains(&v.to_ascii_lowercase().as_str());
        (q, !word || values::letters_random(v))
    } else if let Some(s) = c.name("s") {
        (s, true)
    } else if let Some(p) = c.name("p") {
        // Words joined into a passphrase (`correct-horse-battery-staple`): four or more.
        (p, true)
    } else if let Some(w) = c.name("w") {
        (w, values::letters_random(w.as_str()))
    } else {
        return;
    };
    let v = m.as_str();
    if !secret || is_reference(v) || is_placeholder(v, "password") {
        return;
    }
    let mut kept = v.trim_end_matches(['*', '~']);
    // "(currently Xk9…)": the bracket closes the aside, it is not the value's.
    for (open, close) in [('(', ')'), ('[', ']')] {
        if kept.ends_with(close) && !kept.contains(open) {
            kept = &kept[..kept.len() - 1];
        }
    }
    if !kept.is_empty() {
        hits.push(Hit { range: m.start()..m.start() + kept.len(), kind: None });
    }
}

/// A password given after a user name (see the rule): not a word, a path, a reference or a
/// placeholder; with a digit or a sign in it, or random-looking letters.
fn login_pair(c: &Captures<'_>, hits: &mut Vec<Hit>) {
    let Some(m) = c.name("s") else { return };
    let v = m.as_str().trim_end_matches(['.', ')', ']', '}', '*', '~', '!', '?']);
    let v = if v.len() >= 4 { v } else { m.as_str() };
    if is_reference(m.as_str()) || is_placeholder(m.as_str(), "password") {
        return;
    }
    if values::password_like(v) {
        hits.push(Hit { range: m.start()..m.start() + v.len(), kind: None });
    }
}

/// A password after its name in another language (see the rule): quoted or bare, as
/// [`prose_password`] takes it; after a label (`пароль: …`, `密码：…`) any value that is not
/// a word, a reference, a placeholder, a URL or code.
fn intl_password(c: &Captures<'_>, hits: &mut Vec<Hit>) {
    let Some(all) = c.get(0) else { return };
    let quoted = ["q", "q2", "q3", "q4", "q5", "q6", "q7", "q8", "q9"].iter().find_map(|n| c.name(n));
    let m = match (quoted, c.name("b")) {
        (Some(q), _) => q,
        (None, Some(b)) => b,
        _ => return,
    };
    let label = all.as_str()[..m.start() - all.start()].contains([':', '：', '=']);
    let raw = m.as_str();
    let v = if quoted.is_some() { raw } else { raw.trim_end_matches(['.', ',', ';', ':', ')', ']', '}', '*', '~']) };
    if v.chars().count() < 4 || v.len() > 200 || is_reference(v) || is_placeholder(v, "password") {
        return;
    }
    let lower = v.to_ascii_lowercase();
    if values::NOT_SECRETS.contains(&lower.as_str()) || v.contains("://") {
        return;
    }
    let digits = v.bytes().any(|b| b.is_ascii_digit());
    let passphrase = {
        let parts: Vec<&str> = v.split(['-', '_', '.']).collect();
        (4..=9).contains(&parts.len())
            && parts.iter().all(|p| p.len() >= 2 && p.bytes().all(|b| b.is_ascii_alphanumeric()))
    };
    let secret = if quoted.is_some() {
        !values::is_plain_word(v) || values::letters_random(v)
    } else if label {
        let call_or_member = v.contains(['(', '.']) && values::is_code(v);
        v.len() >= 6 && !values::is_plain_word(v) && !call_or_member
    } else {
        (digits && v.len() >= 6) || passphrase || values::letters_random(v)
    };
    if secret {
        hits.push(Hit { range: m.start()..m.start() + v.len(), kind: None });
    }
}

/// A `.pgpass` line's password, if its host is one (a name, an address or `*`: not
/// `2024:01:02:03:04`, nor a source file's name as a compiler or `grep -n` starts a line
/// with, `main.rs:42:5:…`, whose "database" is a column's number) and the password is not a
/// reference or a placeholder.
fn pgpass(c: &Captures<'_>, hits: &mut Vec<Hit>) {
    let (Some(h), Some(db)) = (c.name("h").or_else(|| c.name("h2")), c.name("db").or_else(|| c.name("db2"))) else {
        return;
    };
    let host = h.as_str();
    if host != "*" && !host.bytes().any(|b| b.is_ascii_alphabetic() || b == b'.') {
        return;
    }
    const FILES: &[&str] = &[
        "rs", "py", "js", "mjs", "cjs", "ts", "tsx", "jsx", "go", "c", "h", "cc", "cpp", "hpp", "java", "kt", "rb",
        "php", "cs", "swift", "scala", "ex", "exs", "erl", "txt", "md", "log", "yaml", "yml", "json", "toml", "sh",
        "html", "css", "sql", "vue", "svelte", "lua", "pl",
    ];
    let source = host.rsplit_once('.').is_some_and(|(_, ext)| FILES.contains(&ext));
    if source || db.as_str().bytes().all(|b| b.is_ascii_digit()) {
        return;
    }
    plain_secret(c, hits);
}

/// A value named in prose: one that looks random, or a short one (8 to 11 characters) of
/// letters and digits that mixes capitals, small letters and two digits or more
/// (`Tk12345678d`; "token rotation", "token v2" are not).
fn prose_secret(c: &Captures<'_>, hits: &mut Vec<Hit>) {
    if let Some(s) = secret(c) {
        let v = s.as_str();
        let count = |f: fn(&u8) -> bool| v.bytes().filter(f).count();
        let short = v.len() < 12
            && v.bytes().all(|b| b.is_ascii_alphanumeric())
            && count(u8::is_ascii_digit) >= 2
            && count(u8::is_ascii_uppercase) >= 1
            && count(u8::is_ascii_lowercase) >= 1;
        if looks_random(v) || short {
            hit(s, hits);
        }
    }
}

/// The secret, if it looks random (not a word, a path or an identifier).
fn random(c: &Captures<'_>, hits: &mut Vec<Hit>) {
    if let Some(s) = secret(c) {
        if looks_random(s.as_str()) {
            hit(s, hits);
        }
    }
}

/// An AWS key id: its 16 characters after the prefix are not one or two repeated
/// (`AKIAAAAAAAAAAAAAAAAA`, `AKIAXXXXXXXXXXXXXXXX` are placeholders), but they may all be
/// digits (`AKIA0189018901890189`): gitleaks' entropy of 3 bits would let those through.
/// AWS's documentation writes its example ids ending in `EXAMPLE` (`AKIAIOSFODNN7EXAMPLE`),
/// which gitleaks allows (`.+EXAMPLE$`): they are everywhere in docs and tests, and no key.
fn aws_key(c: &Captures<'_>, hits: &mut Vec<Hit>) {
    if let Some(s) = secret(c) {
        if s.as_str().ends_with("EXAMPLE") {
            return;
        }
        let body = s.as_str().get(4..).unwrap_or("");
        let mut seen: Vec<char> = Vec::new();
        for ch in body.chars() {
            if !seen.contains(&ch) {
                seen.push(ch);
            }
        }
        if seen.len() >= 4 {
            hit(s, hits);
        }
    }
}

/// The secret, if it has gitleaks' entropy of 3 bits a character (`AKIAAAAAAAAAAAAAAAAA` is
/// no key).
fn high_entropy(c: &Captures<'_>, hits: &mut Vec<Hit>) {
    if let Some(s) = secret(c) {
        if values::entropy(s.as_str()) >= 3.0 {
            hit(s, hits);
        }
    }
}

/// A base64-encoded JWT: `ZXlK` decodes to `eyJ`, and what it decodes to is the base64 of a
/// JSON object (`{"alg":…`), as a JWT's header is.
fn base64_jwt(c: &Captures<'_>, hits: &mut Vec<Hit>) {
    if let Some(s) = secret(c) {
        let head: String = s.as_str().chars().take(64).collect();
        let jwt = values::base64_decode(&head);
        let header: Vec<u8> =
            jwt.iter().copied().take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_')).collect();
        let json = values::base64_decode(&String::from_utf8_lossy(&header));
        if json.starts_with(b"{\"") && json.get(2).is_some_and(u8::is_ascii_alphabetic) {
            hit(s, hits);
        }
    }
}

/// A Telegram bot token: in the Bot API's own URL whole; elsewhere if what follows the
/// bot's id looks generated.
fn telegram(c: &Captures<'_>, hits: &mut Vec<Hit>) {
    if let Some(s) = c.name("s") {
        hit(s, hits);
    } else if let Some(s) = c.name("s2").or_else(|| c.name("s3")) {
        if s.as_str().split_once(':').is_some_and(|(_, t)| looks_random(t)) {
            hit(s, hits);
        }
    }
}

/// A New Relic user API id: random enough, after a name that is not a checksum's.
fn newrelic_id(c: &Captures<'_>, hits: &mut Vec<Hit>) {
    let name = c.name("k").map_or(String::new(), |k| k.as_str().to_ascii_lowercase());
    if ["sha", "md5", "hash", "checksum", "digest", "sum", "integrity", "commit"].iter().any(|w| name.contains(w)) {
        return;
    }
    high_entropy(c, hits);
}

/// A Square access token: a long one whole (as before), a short one (gitleaks takes 22) if
/// it looks generated.
fn square(c: &Captures<'_>, hits: &mut Vec<Hit>) {
    if let Some(s) = c.name("s") {
        hit(s, hits);
    } else if let Some(s) = c.name("s2") {
        if s.as_str().len() >= 64 || looks_random(s.as_str()) {
            hit(s, hits);
        }
    }
}

/// The secret, if it holds a digit (every Slack token does; `xoxb-not-a-token` does not).
fn with_digit(c: &Captures<'_>, hits: &mut Vec<Hit>) {
    if let Some(s) = secret(c) {
        if s.as_str().bytes().any(|b| b.is_ascii_digit()) {
            hit(s, hits);
        }
    }
}

/// A base64 PEM block that decodes to a private key (a certificate is public).
fn base64_pem(c: &Captures<'_>, hits: &mut Vec<Hit>) {
    if let Some(s) = secret(c) {
        let head: String = s.as_str().chars().take(80).collect();
        let decoded = values::base64_decode(&head);
        if decoded.windows(11).any(|w| w == b"PRIVATE KEY") {
            hit(s, hits);
        }
    }
}

/// `sk-…` keys: after a known kind (`sk-proj-`), any; else with a digit or a capital
/// (`sk-learn-contrib-tutorials` is a name).
fn openai(c: &Captures<'_>, hits: &mut Vec<Hit>) {
    if let Some(s) = secret(c) {
        let t = s.as_str();
        let known = ["sk-proj-", "sk-svcacct-", "sk-admin-", "sk-None-", "sk-or-v1-"].iter().any(|p| t.starts_with(p));
        if known || t[3..].chars().any(|ch| ch.is_ascii_digit() || ch.is_ascii_uppercase()) {
            hit(s, hits);
        }
    }
}

/// A Vault token: `hvs.`/`hvb.`/`hvr.` whole; a legacy `s.` one if it looks random.
fn vault(c: &Captures<'_>, hits: &mut Vec<Hit>) {
    if let Some(s) = c.name("s") {
        hit(s, hits);
    } else if let Some(s) = c.name("s2") {
        if looks_random(&s.as_str()[2..]) {
            hit(s, hits);
        }
    }
}

/// A URL's password (not `$PASS`, `<password>`, a port), or its user when that is a token.
fn url(c: &Captures<'_>, hits: &mut Vec<Hit>) {
    if let Some(p) = c.name("s") {
        let pw = p.as_str();
        let user = c.name("u");
        // `https://TOKEN:x-oauth-basic@github.com`: the token is the user.
        if pw.eq_ignore_ascii_case("x-oauth-basic") || pw.eq_ignore_ascii_case("x-oauth-token") {
            if let Some(u) = user.filter(|u| looks_random(u.as_str())) {
                hit(u, hits);
            }
            return;
        }
        // `http://localhost:3000?next=a@b`: a port, not a password.
        let port = pw.bytes().take_while(u8::is_ascii_digit).count();
        if port > 0 && matches!(pw.as_bytes().get(port), Some(b'?' | b'#')) {
            return;
        }
        if !is_reference(pw) && !is_placeholder(pw, "password") {
            hit(p, hits);
        }
    } else if let Some(u) = c.name("s2") {
        if looks_random(u.as_str()) {
            hit(u, hits);
        }
    }
}

/// An `Authorization` header's credential, not its scheme: `Authorization: Bearer` before
/// `$TOKEN` or an already redacted value is left as it is.
fn authorization(c: &Captures<'_>, hits: &mut Vec<Hit>) {
    let Some(s) = secret(c) else { return };
    let v = s.as_str();
    // `Digest username="u", …`: its parameters are named; `response=` is the digest rule's.
    if c.name("scheme").is_some_and(|m| m.as_str().eq_ignore_ascii_case("digest")) {
        return;
    }
    const SCHEMES: &[&str] = &[
        "basic",
        "bearer",
        "digest",
        "token",
        "apikey",
        "api-key",
        "negotiate",
        "ntlm",
        "hoba",
        "mutual",
        "sso-key",
        "dpop",
        "mac",
        "otp",
        "key",
    ];
    let credential = |v: &str| {
        !(SCHEMES.iter().any(|w| v.eq_ignore_ascii_case(w))
            || is_reference(v)
            || is_placeholder(v, "token")
            || values::is_plain_word(v)
            || v.contains('(')
            // `authorization = self.header` is code; `Authorization: abc.def.ghi` a header.
            || (c.name("sep").is_some_and(|m| m.as_str() == "=") && values::is_code(v)))
    };
    // `GoogleLogin [REDACTED:…]`: a scheme whose credential is masked already.
    let scheme_like = |w: &str| {
        w.bytes().next().is_some_and(|b| b.is_ascii_alphabetic())
            && w.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
    };
    if c.name("masked").is_some() && scheme_like(v) {
        return;
    }
    let other = c.name("other");
    if let Some(o) = other {
        // `AWS4-HMAC-SHA256 Credential=AKIA…/…/aws4_request, …`: the scheme's parameters are
        // named (`Credential=` before its masked value too); its `Signature=` is the rule
        // after this one's.
        let param = v.split_once('=').is_some_and(|(name, rest)| {
            !name.is_empty()
                && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
                && (!rest.trim_matches('=').is_empty()
                    || (rest.is_empty() && name.bytes().all(|b| b.is_ascii_alphabetic())))
        });
        if param {
            return;
        }
        // What looked like a scheme was the credential, and what followed it words
        // (`Authorization: abc.def.ghi because …`).
        if !credential(v) {
            if o.as_str().len() >= 6 && credential(o.as_str()) {
                hit(o, hits);
            }
            return;
        }
    }
    if credential(v) {
        hit(s, hits);
    }
}

/// The credential after `Bearer`, not a word or a placeholder after it.
fn bearer(c: &Captures<'_>, hits: &mut Vec<Hit>) {
    if let Some(s) = secret(c) {
        let v = s.as_str();
        // Not a word ("bearer authentication"), nor the next assignment (`bearer expires_in=3600`).
        if !values::is_plain_word(v)
            && !is_placeholder(v, "token")
            && !v.trim_end_matches('=').contains('=')
            && !v.starts_with('-')
        {
            hit(s, hits);
        }
    }
}

/// Words that make an option no value's name: `--no-password`, `--ask-pass`,
/// `--prompt-password`, `--with-token` (which reads it from stdin).
const NOT_GIVEN: &[&str] = &[
    "no", "without", "skip", "disable", "ask", "prompt", "use", "read", "from", "show", "print", "hide", "mask",
    "generate", "gen", "random", "require", "requires", "allow", "enable", "reset", "check", "has", "is", "auto",
    "force", "with", "save", "remember", "forget", "insecure", "expire", "list",
];

/// `--token VALUE`, `-storepass VALUE`, `-passout pass:VALUE` (but `env:VAR`, `file:PATH`
/// are references), `--secret id=x,src=f` (a reference to a file) is not.
/// An agent's conversation id: a UUID (Claude Code, Codex, Gemini CLI, Pi, Copilot CLI),
/// or OpenCode's `ses_` and 26 letters and digits.
fn is_conversation_id(value: &str) -> bool {
    let b = value.as_bytes();
    let uuid = b.len() == 36
        && b.iter()
            .enumerate()
            .all(|(i, c)| if [8, 13, 18, 23].contains(&i) { *c == b'-' } else { c.is_ascii_hexdigit() });
    let opencode = value
        .strip_prefix("ses_")
        .is_some_and(|rest| (20..=40).contains(&rest.len()) && rest.bytes().all(|c| c.is_ascii_alphanumeric()));
    uuid || opencode
}

fn option(c: &Captures<'_>, hits: &mut Vec<Hit>) {
    let (Some(k), Some(v)) = (c.name("k"), secret(c)) else { return };
    let name = k.as_str().trim_start_matches('-');
    if values::words(name).first().is_some_and(|w| NOT_GIVEN.contains(&w.as_str())) {
        return;
    }
    let what = names(name);
    let quoted = c.name("s3").is_none();
    let (mut start, mut value) = (v.start(), v.as_str());
    // `pi --session 019e…`, `opencode --session ses_…`: a conversation's id, which every
    // agent's resume command names, is not a secret (a `bw --session` key is no such id).
    if matches!(name.to_ascii_lowercase().as_str(), "session" | "session-id" | "session_id" | "resume")
        && is_conversation_id(value)
    {
        return;
    }
    if what == Names::Password && value.len() > 5 && value.get(..5).is_some_and(|p| p.eq_ignore_ascii_case("pass:")) {
        start += 5;
        value = &value[5..];
    }
    // `id=npmrc,src=f`: a lower-case word, `=`, more.
    let key_value = value.split_once('=').is_some_and(|(k, rest)| {
        (1..=12).contains(&k.len())
            && k.bytes().all(|b| b.is_ascii_lowercase())
            && !rest.is_empty()
            && !rest.starts_with('=')
    });
    if key_value || !values::is_secret(what, name, value, Site::Option { quoted }) {
        return;
    }
    let kind = if what == Names::Password { "password" } else { "secret" };
    hits.push(Hit { range: start..v.end(), kind: Some(kind.into()) });
}

/// A `key=value` pair whose key names a credential and whose value is one; a bare value
/// ends before `&name=` (the next parameter of a query).
fn pair(c: &Captures<'_>, hits: &mut Vec<Hit>) {
    let (Some(k), Some(v)) = (c.name("k"), secret(c)) else { return };
    // Headers are the `Authorization` rule's (which keeps the scheme).
    if values::words(k.as_str()).last().is_some_and(|w| w == "authorization") {
        return;
    }
    // `DB_PASS= cmd` sets nothing and runs `cmd`.
    if c.name("sep").is_some_and(|m| m.as_str().starts_with('=') && m.as_str().len() > 1) {
        return;
    }
    // A code span is read as a bare value: it holds code as often as a value
    // (`` token: `Option<String>` ``, `` key: `process.env.KEY` ``).
    let quoted = c.name("s4").is_none() && c.name("s5").is_none();
    if c.name("s5")
        .is_some_and(|m| m.as_str().contains(['<', '>', '(', ')', '{', '}', ' ']) || m.as_str().contains("::"))
    {
        return; // a type or an expression, in a code span
    }
    // `token = format!(…)`, `pw = getpass(…)`: a call; `"PASS" => passed`: a match arm or a
    // hash's entry, whose bare value is a name (only a random one is a secret).
    let call = c.name("call").is_some();
    let arrow = c.name("sep").is_some_and(|m| m.as_str().contains("=>"));
    let mut end = v.as_str().len();
    if !quoted {
        let b = v.as_str().as_bytes();
        for (i, &ch) in b.iter().enumerate() {
            if ch != b'&' {
                continue;
            }
            let name_len =
                b[i + 1..].iter().take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-')).count();
            if name_len > 0 && b.get(i + 1 + name_len) == Some(&b'=') {
                end = i;
                break;
            }
        }
    }
    // URL-encoded, a bare value ends at an encoded quote or `&` (`%22`, `%26`).
    if !quoted && c.name("sep").is_some_and(|m| m.as_str().contains('%')) {
        let b = &v.as_str()[..end];
        if let Some(i) = ["%22", "%26"].iter().filter_map(|e| b.find(e)).min() {
            end = i;
        }
    }
    let value = &v.as_str()[..end];
    if !quoted && (call || arrow) && !looks_random(value) {
        return;
    }
    if values::is_secret(names(k.as_str()), k.as_str(), value, Site::Pair { quoted }) {
        hits.push(Hit { range: v.start()..v.start() + end, kind: None });
    }
}

/// A password said in prose after a user's name: one that reads like a password.
fn login_password(c: &Captures<'_>, hits: &mut Vec<Hit>) {
    let Some(s) = secret(c) else { return };
    let v = s.as_str().trim_end_matches(['.', '!', '?', ')']);
    if values::password_like(v) && !values::stands_in(v) {
        hits.push(Hit { range: s.start()..s.start() + v.len(), kind: None });
    }
}

/// A value that reads like a password or looks generated.
fn random_or_password(c: &Captures<'_>, hits: &mut Vec<Hit>) {
    let Some(s) = secret(c) else { return };
    let v = s.as_str();
    if (values::password_like(v) || looks_random(v)) && !values::is_code(v) && !values::stands_in(v) {
        hit(s, hits);
    }
}

/// The codes of a list ("A and B", "A, B, C"): each word with two digits or more, six
/// characters or more (not "stored in 1Password").
fn code_list(c: &Captures<'_>, hits: &mut Vec<Hit>) {
    let Some(list) = c.name("list") else { return };
    let mut at = 0;
    for word in list.as_str().split_inclusive(|ch: char| ch.is_whitespace() || ch == ',' || ch == ';') {
        let start = at;
        at += word.len();
        let w = word.trim_end_matches(|ch: char| ch.is_whitespace() || matches!(ch, ',' | ';' | '.'));
        if w.len() >= 6 && w.bytes().filter(u8::is_ascii_digit).count() >= 2 && !values::stands_in(w) {
            hits.push(Hit { range: list.start() + start..list.start() + start + w.len(), kind: None });
        }
    }
}

/// The arguments of a call that logs in (see its rule): the quoted ones after the first
/// that read like a password (not a host, an address, a path or a word), when the call has
/// two quoted arguments or more.
fn login_call(c: &Captures<'_>, hits: &mut Vec<Hit>) {
    let Some(args) = c.name("args") else { return };
    let mut quoted = Vec::new();
    let text = args.as_str();
    let mut at = 0;
    while let Some(open) = text[at..].find(['\'', '"']).map(|i| at + i) {
        let q = text.as_bytes()[open];
        let Some(close) = text[open + 1..].find(q as char).map(|i| open + 1 + i) else { break };
        quoted.push((open + 1, close));
        at = close + 1;
    }
    if quoted.len() < 2 {
        return;
    }
    for &(from, to) in &quoted[1..] {
        let v = &text[from..to];
        if values::password_like(v) && !v.contains(['@', '.', '/', ':', ' ']) && !values::stands_in(v) {
            hits.push(Hit { range: args.start() + from..args.start() + to, kind: None });
        }
    }
}

/// An environment variable whose name says nothing of a credential (`export SLACK_BOT=…`,
/// `SENTRY=… ./run`, `BOT: …` in a compose file), set to a generated value: twenty
/// characters or more, capitals, small letters and digits mixed at random. What such a
/// variable is set to by hand is a credential; settings, paths, hashes, ids and versions do
/// not look like this. A name that says it is a credential is [`pair`]'s.
fn env_generated(c: &Captures<'_>, hits: &mut Vec<Hit>) {
    let (Some(k), Some(v)) = (c.name("k"), secret(c)) else { return };
    let (name, value) = (k.as_str(), v.as_str());
    // A service's name (`DATADOG=…`) makes any random value one; another, a strongly random.
    let random = match names(name) {
        Names::Maybe => looks_random(value),
        Names::Nothing => values::strongly_random(value) && looks_random(value),
        _ => return,
    };
    let quiet = values::words(name).iter().any(|w| values::NOT_SECRET_WORDS.contains(&w.as_str()));
    if !quiet && random && !values::stands_in(value) {
        hits.push(Hit { range: v.range(), kind: None });
    }
}

/// The cookies of a `Cookie` header (of a `Set-Cookie` one, the first pair: the rest are
/// its attributes) whose names say they hold a session or a credential (`session`, `sid`,
/// `PHPSESSID`, `auth`, `remember_token`), with a value of 8 characters or more that is not
/// a word; analytics and settings (`_ga`, `theme=dark`) are kept.
fn cookie(c: &Captures<'_>, hits: &mut Vec<Hit>) {
    let Some(v) = c.name("v") else { return };
    let set = c.name("set").is_some();
    let mut at = v.start();
    for (i, part) in v.as_str().split(';').enumerate() {
        let start = at;
        at += part.len() + 1;
        if set && i > 0 {
            break;
        }
        let Some(eq) = part.find('=') else { continue };
        let name = part[..eq].trim();
        let raw = &part[eq + 1..];
        let value = raw.trim();
        if name.is_empty() || names(name) == Names::Nothing {
            continue;
        }
        if value.chars().count() < 8
            || is_reference(value)
            || is_placeholder(value, name)
            || values::is_plain_word(value)
        {
            continue;
        }
        let from = start + eq + 1 + (raw.len() - raw.trim_start().len());
        hits.push(Hit { range: from..from + value.len(), kind: None });
    }
}

/// A YAML block scalar's lines, those indented deeper than its key, when the key names a
/// credential.
fn block_scalar(c: &Captures<'_>, hits: &mut Vec<Hit>) {
    let (Some(k), Some(body)) = (c.name("k"), c.name("s")) else { return };
    let what = names(k.as_str());
    if what == Names::Nothing {
        return;
    }
    let indent = c.name("ind").map_or(0, |m| m.as_str().len());
    // The value runs from its first character to the end of its last line deeper than the key.
    let (mut first, mut last) = (None, None);
    let mut at = body.start();
    for line in body.as_str().split('\n') {
        let start = at;
        at += line.len() + 1;
        let text = line.trim_end_matches('\r');
        let content = text.trim_start();
        if content.is_empty() {
            continue;
        }
        if text.len() - content.len() <= indent {
            break;
        }
        first.get_or_insert(start + text.len() - content.len());
        last = Some(start + text.len());
    }
    let (Some(from), Some(to)) = (first, last) else { return };
    let Some(value) = body.as_str().get(from - body.start()..to - body.start()) else { return };
    let secret = match what {
        Names::Maybe => looks_random(value.trim()),
        _ => !is_reference(value) && !is_placeholder(value, k.as_str()),
    };
    if secret {
        hits.push(Hit { range: from..to, kind: None });
    }
}

/// `<password>value</password>`, `key="ClearTextPassword" value="…"`.
fn xml(c: &Captures<'_>, hits: &mut Vec<Hit>) {
    let (Some(k), Some(v)) = (c.name("k"), secret(c)) else { return };
    if c.name("k2").is_some_and(|k2| !k2.as_str().eq_ignore_ascii_case(k.as_str())) {
        return;
    }
    let value = v.as_str().trim();
    // Between tags, at most 200 characters: a longer text is prose, not a value. Counted
    // here rather than as `{1,200}` in the pattern, whose automaton would be 200 copies of
    // "any character but three" (a megabyte).
    if (c.name("k2").is_none() || v.as_str().chars().nth(200).is_none())
        && values::is_secret(names(k.as_str()), k.as_str(), value, Site::Pair { quoted: true })
    {
        hit(v, hits);
    }
}
