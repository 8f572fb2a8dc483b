use super::*;

fn r(text: &str) -> String {
    Redactor::new(&[]).unwrap().redact(text).into_owned()
}

/// (text, the kind it must be redacted as)
const POSITIVES: &[(&str, &str)] = &[
    ("key AKIAIOSFODNN7EXAMPLE here", "aws-access-key"),
    ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws-secret-key"),
    ("AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws-secret-key"),
    ("aws configure set aws_secret_access_key wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws-secret-key"),
    ("the AWS secret key wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY leaked", "aws-secret-key"),
    ("token ghp_0123456789abcdefghijABCDEFGHIJ012345", "github-token"),
    ("src/AKIAIOSFODNN7EXAMPLE_ghp_0123456789abcdefghijABCDEFGHIJ012345.txt", "github-token"),
    ("src/AKIAIOSFODNN7EXAMPLE_notes.txt", "aws-access-key"),
    ("gho_0123456789abcdefghijABCDEFGHIJ012345", "github-token"),
    ("ghu_0123456789abcdefghijABCDEFGHIJ012345", "github-token"),
    ("ghs_0123456789abcdefghijABCDEFGHIJ012345", "github-token"),
    ("ghr_0123456789abcdefghijABCDEFGHIJ012345", "github-token"),
    ("github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "github-token"),
    ("glpat-abcdefghij0123456789", "gitlab-token"),
    ("xoxb-1234567890-abcdefghij", "slack-token"),
    ("xoxp-1234567890-1234567890-abcdefabcdef", "slack-token"),
    ("https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX", "slack-webhook"),
    ("sk_live_abcdefghijklmnop1234", "stripe-key"),
    ("rk_live_abcdefghijklmnop1234", "stripe-key"),
    ("sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789", "anthropic-key"),
    ("sk-proj-abcdefghijklmnopqrstuvwx", "openai-key"),
    ("sk-abcdefghijklmnopqrstuvwxyz012345", "openai-key"),
    ("npm_abcdefghijklmnopqrstuvwxyz0123456789", "npm-token"),
    ("pypi-AgEIcHlwaS5vcmcCJDAwMDAwMDAwLTAwMDAtMDAwMC0wMDAwLTAwMDAwMDAwMDAwMAACKlszLCJlZjA", "pypi-token"),
    ("AIzaSyA-abcdefghijklmnopqrstuvwxyz01234", "google-api-key"),
    (
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "jwt",
    ),
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----", "private-key"),
    ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----", "private-key"),
    (
        r#"{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----\n"}"#,
        "private-key",
    ),
    (
        "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4==;EndpointSuffix=core.windows.net",
        "azure-key",
    ),
    ("Endpoint=sb://x.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=abcdefghijklmnop0123456789=", "azure-key"),
    ("git clone https://bob:s3cret@example.com/r.git", "url-password"),
    ("DATABASE_URL=postgres://app:hunter2@db:5432/app", "url-password"),
    ("curl -H 'Authorization: Bearer abcdef.ghijkl.mnop' x", "authorization"),
    ("requests.get(url, headers=h) # bearer eyJ0eXAiOiJKV1Qi", "bearer-token"),
    ("Authorization: Basic dXNlcjpwYXNzd29yZA==", "authorization"),
    ("export DB_PASSWORD=hunter2 && run", "secret"),
    ("PGPASSWORD=hunter2 psql", "secret"),
    ("GITHUB_TOKEN=abc npm publish", "secret"),
    (r#"{"api_key": "abc123"}"#, "secret"),
    (r#"config = {"password": "correct horse battery staple"}"#, "secret"),
    ("client_secret: 'Zx9-Qa7_Lm3'", "secret"),
    ("token=abc123secret", "secret"),
    ("password=123456", "secret"),
    ("password=CorrectHorseBatteryStaple", "secret"),
    ("db_password: SuperSecretValue", "secret"),
    ("apiKey: \"k-8f9a7c\"", "secret"),
    // Found by an independent tester: after `_` in a file name, in prose, on a command line.
    ("notes_sk-ant-api03-AAAABBBBCCCCDDDDEEEEFFFF.md", "anthropic-key"),
    ("dump_AKIAIOSFODNN7EXAMPLE.txt", "aws-access-key"),
    ("AWS key AKIAIOSFODNN7EXAMPLE secret wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws-secret-key"),
    ("mysql -u root -pMyS3cretPassw0rd app < dump.sql", "password"),
    ("sshpass -p Hunter2pw ssh host", "password"),
    ("rotate the password hunter2hunter2 tomorrow", "password"),
    ("the password is s3cr3t!x", "password"),
];

/// Text that must come out unchanged.
const NEAR_MISSES: &[&str] = &[
    "commit 3f2a9c1e8b7d6f5a4c3b2a1f0e9d8c7b6a5f4e3d",
    "request id 123e4567-e89b-12d3-a456-426614174000",
    "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "background: #ff00ff; color: #0a0a0a;",
    "<img src=\"data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==\">",
    "the token bucket algorithm refills at a fixed rate",
    "password reset flow needs tests",
    "Password: reset via the email link",
    "keep the secret sauce in the README",
    "let token = lexer.next();",
    "const apiKey = process.env.API_KEY;",
    "password: string;",
    "password: required",
    "let pwd = getpass();",
    "Password: reset via the email link",
    "if (secret == null) return;",
    "max_tokens=4096 temperature=0.2",
    "export API_KEY=$API_KEY",
    "tokenizer: \"gpt2\"",
    "integrity sha512-v2kDEe57lecTulaDIuNTPy3Ry4gLGJ6Z1O3vE1krgXZNrsQ+JJNZ5o8zZDS1vEhsZcYGi4Zlk8Awqcsrrm1a2w==",
    "see docs/api.md and src/auth/token.rs:42",
    "fn parse(s: &str) -> Result<Token, Error> { todo!() }",
    "https://example.com/path?page=2&sort=desc",
    "ssh git@github.com:owner/repo.git",
    "The access key rotation runs nightly.",
    "sk-learn is not a key, nor is sk_test",
    "mysql -u root -p app",
    "the password reset email is sent by the worker",
    "password manager 1Password is fine",
    "see the secret sauce section",
];

#[test]
fn precision_and_recall_on_the_corpus() {
    let f = Redactor::new(&[]).unwrap();
    let (mut tp, mut fn_, mut fp) = (0, 0, 0);
    let mut problems = Vec::new();
    for (text, kind) in POSITIVES {
        let out = f.redact(text);
        if out.contains(&mask(kind)) {
            tp += 1;
        } else {
            fn_ += 1;
            problems.push(format!("missed {kind}: {text:?} → {out:?}"));
        }
    }
    for text in NEAR_MISSES {
        let out = f.redact(text);
        if out != *text {
            fp += 1;
            problems.push(format!("shredded: {text:?} → {out:?}"));
        }
    }
    let precision = tp as f64 / (tp + fp).max(1) as f64;
    let recall = tp as f64 / (tp + fn_).max(1) as f64;
    println!(
        "redaction corpus: {} positives, {} near-misses; precision {precision:.3}, recall {recall:.3}",
        POSITIVES.len(),
        NEAR_MISSES.len()
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn secrets_leave_nothing_behind() {
    assert_eq!(r("export DB_PASSWORD=hunter2 && run"), "export DB_PASSWORD=[REDACTED:secret] && run");
    assert_eq!(
        r("git clone https://bob:s3cret@example.com/r.git"),
        "git clone https://bob:[REDACTED:url-password]@example.com/r.git"
    );
    assert_eq!(
        r("curl -H 'Authorization: Bearer abc.def.ghi' x"),
        "curl -H 'Authorization: Bearer [REDACTED:authorization]' x"
    );
    let key = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----";
    assert_eq!(r(&format!("key:\n{key}\nend")), "key:\n[REDACTED:private-key]\nend");
    assert_eq!(r("cut -----BEGIN PRIVATE KEY-----\nMIIE"), "cut [REDACTED:private-key]", "a cut key goes to the end");
    for (text, _) in POSITIVES {
        let out = r(text);
        for secret in ["hunter2", "s3cret", "abc123", "MIIE", "wJalrXUtn", "Zm9vYmFy", "dXNlcjpw", "Zx9-Qa7"] {
            assert!(!text.contains(secret) || !out.contains(secret), "{secret} left in {out:?}");
        }
    }
}

#[test]
fn private_spans_are_dropped_whole() {
    assert_eq!(r("fix <private>my ssn is 123</private> the bug"), "fix  the bug");
    assert_eq!(r("a <PRIVATE>x\ny</PRIVATE> b <private>unclosed"), "a  b ");
}

#[test]
fn ordinary_text_is_not_copied_and_extra_patterns_apply() {
    let f = Redactor::new(&[("employee-id".into(), r"\bEMP-\d{6}\b".into())]).unwrap();
    assert!(matches!(f.redact("fix the login page"), Cow::Borrowed(_)));
    assert_eq!(f.redact("ask EMP-123456 about it"), "ask [REDACTED:employee-id] about it");
    assert!(Redactor::new(&[("bad".into(), "(".into())]).unwrap_err().contains("\"bad\""));
    let p = parse_patterns("# mine\nemployee-id = \\bEMP-\\d{6}\\b\n\nACME-[0-9]+\n", "f").unwrap();
    assert_eq!(p, [("employee-id".to_string(), r"\bEMP-\d{6}\b".to_string()), ("custom".into(), "ACME-[0-9]+".into())]);
    assert!(parse_patterns("ok = a\nbroken = (", "redact.txt").unwrap_err().starts_with("redact.txt:2: broken"));
}
