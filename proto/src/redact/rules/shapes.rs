//! Keys and passwords in the shapes particular tools and services give them, each after
//! what names it or by a shape that carries its own check: Vault's unseal keys, PHP's
//! `define()`d constants, passwords handed to calls, Bitcoin's WIF keys (base58check),
//! network devices' configurations, recovery keys and app passwords, a recovery phrase
//! without its name, Wi-Fi QR strings, byte-array keypairs, gzipped base64, character
//! codes. Found by the trust issue's tenth round of testing.

use super::*;
use regex::Captures;

/// The rules of this module, in the order they run (before the catch-alls at the end).
pub(super) fn specs() -> Vec<Spec> {
    vec![
        // Vault: `vault operator unseal KEY`, `Unseal Key 1: KEY` (what `vault operator init`
        // prints), "the unseal key is KEY".
        spec(
            "secret",
            r#"(?i)\bvault\s+operator\s+unseal\s+(?:-[a-z-]+(?:=\S+)?\s+)*(?P<s>[A-Za-z0-9+/]{20,}={0,2})|\bunseal\s+keys?(?:\s+\d+)?\s*(?:[:=]|\s(?:is|was))\s*["'`*]*(?P<s2>[A-Za-z0-9+/]{20,}={0,2})"#,
            &["unseal"],
            None,
        ),
        // PHP's constants: WordPress's `define('DB_PASSWORD', '…')`, its keys and salts.
        spec(
            "password",
            r#"(?i)\bdefine\s*\(\s*['"](?P<k>[A-Z0-9_]*(?:PASSWORD|PASSWD|PASS|PWD|SECRET|SALT|TOKEN|KEY))['"]\s*,\s*(?:'(?P<s>[^'\n]+)'|"(?P<s2>[^"\n]+)")"#,
            &["define"],
            Some(php_constant),
        ),
        // Passwords handed to calls: `setPassword("…")`, Gradle's `storePassword "…"`,
        // `new NetworkCredential("user", "…")`, `HTTPBasicAuth("user", "…")`,
        // `new PasswordAuthentication("user", "…".toCharArray())`.
        spec(
            "password",
            r#"(?i)(?:\b(?:set|with)?(?:password|passwd|passphrase|store[_-]?password|key[_-]?password|keystore[_-]?password|truststore[_-]?password)\s*\(\s*(?:"(?P<s>[^"\s]+)"|'(?P<s2>[^'\s]+)')\s*[,)]|(?m:^)[ \t]*(?:store|key|keystore|truststore)?password[ \t]+(?:"(?P<s3>[^"\s]+)"|'(?P<s4>[^'\s]+)')[ \t]*(?m:$)|\b(?:NetworkCredential|HTTPBasicAuth|HTTPDigestAuth|PasswordAuthentication|UsernamePasswordCredentials|UsernamePasswordAuthenticationToken|BasicAuth|basic_auth)\s*\(\s*(?:"[^"\n]*"|'[^'\n]*')\s*,\s*(?:"(?P<s5>[^"\s]+)"|'(?P<s6>[^'\s]+)'))"#,
            &["password", "passwd", "passphrase", "credential", "auth"],
            Some(plain_secret),
        ),
        // A Bitcoin private key in WIF (mainnet `5…`, `K…`, `L…`; testnet `9…`, `c…`), taken
        // when its base58check checksum holds.
        Spec {
            min_len: 51,
            ..spec(
                "private-key",
                r"\b(?P<s>5[HJK][1-9A-HJ-NP-Za-km-z]{49}|[KLc][1-9A-HJ-NP-Za-km-z]{51}|9[1-9A-HJ-NP-Za-km-z]{50})\b",
                &[],
                Some(wif),
            )
        },
        // Network devices: `snmp-server community X`, IOS's `username U [privilege N]
        // password|secret [TYPE] X` and `enable secret X` (type 7 is reversible), `crypto
        // isakmp key X`, a `pre-shared-key X`.
        spec(
            "password",
            r#"(?im)^[ \t]*(?:snmp-server[ \t]+community[ \t]+(?P<s>\S+)|(?:username[ \t]+\S+(?:[ \t]+privilege[ \t]+\d+)?[ \t]+|enable[ \t]+)(?:password|secret)[ \t]+(?:[0-9][ \t]+)?(?P<s2>\S+)|crypto[ \t]+isakmp[ \t]+key[ \t]+(?:[06][ \t]+)?(?P<s3>\S+)|(?:set[ \t]+)?pre-shared-key[ \t]+(?:ascii-text[ \t]+|hexadecimal[ \t]+)?(?P<s4>\S+))"#,
            &["snmp-server", "password", "secret", "isakmp", "pre-shared-key"],
            Some(plain_secret),
        ),
        // The community string said in prose: one with a digit or a capital.
        spec(
            "password",
            r#"(?i)\bcommunity[ \t]+(?:string|name)s?\b[^\n]{0,30}?(?:[:=]|\s(?:is|was))\s*["'`*]*(?P<s>[^\s"'`*,;]{4,64})"#,
            &["community"],
            Some(mixed),
        ),
        // Recovery keys and app passwords by their shapes, after their names: BitLocker's
        // (eight groups of six digits), FileVault's (six groups of four), an Apple
        // app-specific password (four groups of four letters, dashed), Google's app password
        // (four of four letters, spaced), a SIM's PUK (eight digits).
        spec(
            "password",
            r#"(?i)\b(?:recovery[ -]key|app[ -](?:specific[ -])?password|application[ -]specific[ -]password|puk(?:[ -]?code)?)\b[^\n]{0,50}?(?:[:=]|\s(?:is|was))\s*["'`*]*(?P<s>\d{6}(?:-\d{6}){7}|[A-Z0-9]{4}(?:-[A-Z0-9]{4}){5}|(?-i:[a-z]{4}(?:-[a-z]{4}){3}|[a-z]{4}(?: [a-z]{4}){3})|\d{8})\b"#,
            &["recovery", "password", "puk"],
            Some(app_password),
        ),
        // A keystore's password said in prose: "the keystore is protected with X".
        spec(
            "password",
            r#"(?i)\b(?:key[ -]?store|trust[ -]?store|\.jks|\.p12|\.pfx|pkcs12)\b[^\n]{0,40}?\b(?:protected|secured|locked|encrypted)\s+(?:with|by)\s+(?:the\s+)?(?:password\s+)?["'`*]*(?P<s>[^\s"'`*,;]{6,64})"#,
            &["store", ".jks", ".p12", ".pfx", "pkcs12"],
            Some(mixed),
        ),
        // A recovery phrase without its name, after what restores or imports a wallet from
        // it: "restore with: abandon ability …" (12 to 24 words).
        spec(
            "secret",
            r#"(?i)\b(?:restore|recover|import|wallet|seed)\b[^\n:=]{0,30}?[:=][ \t]*["'`]?(?P<s>[a-z]{3,8}(?:[ \t]+[a-z]{3,8}){11,23})\b"#,
            &["restore", "recover", "import", "wallet", "seed"],
            None,
        ),
        // A Wi-Fi QR string: `WIFI:T:WPA;S:net;P:password;;`.
        spec("password", r#"(?i)\bWIFI:(?:[A-Z]:(?:[^;\\\n]|\\.)*;)*?P:(?P<s>(?:[^;\\\n]|\\.)+)"#, &["wifi:"], None),
        // A keypair as its 64 bytes (Solana's CLI writes `[174,47,154,…]`).
        Spec {
            min_len: 129,
            ..spec("private-key", r"\[\s*(?P<s>(?:\d{1,3}\s*,\s*){63}\d{1,3})\s*\]", &[","], Some(byte_array))
        },
        // Gzipped base64 (`H4sI…`) fed to a decoder: what it holds cannot be read here, and
        // a blob a command unpacks is no prose.
        spec(
            "secret",
            r"(?P<s>\bH4sI[A-Za-z0-9+/]{16,}={0,2})[^\n]{0,20}?\|[ \t]*(?:base64|openssl|gunzip|zcat|gzip)",
            &["h4si"],
            None,
        ),
        // Characters written as their codes (`String.fromCharCode(103,104,112,…)`,
        // `chr(103)+chr(104)…` is too rare to read): decoded and read.
        Spec {
            decoded: Some(Encoding::CharCodes),
            ..spec(
                "secret",
                r"(?i)\bfromCharCode\s*\(\s*(?P<s>\d{2,3}(?:\s*,\s*\d{2,3}){11,})\s*\)",
                &["fromcharcode"],
                None,
            )
        },
        // Hexadecimal in groups (`6768 705f 4142 …`, as `xxd` prints it): read as hex.
        Spec {
            decoded: Some(Encoding::HexBare),
            min_len: 39,
            ..spec("secret", r"(?:^|[\s:])(?P<s>[0-9a-f]{4}(?: [0-9a-f]{4}){7,})\b", &[], None)
        },
        // Bundler's credentials: `bundle config [set] [--global] HOST USER:PASS`, and its
        // `BUNDLE_HOST__NAME=USER:PASS` variable.
        spec(
            "password",
            r#"(?i)\bbundle\s+config\s+(?:set\s+)?(?:--(?:global|local)\s+)?[A-Za-z0-9.-]+\.[A-Za-z]{2,}\s+["']?[^\s:"']+:(?P<s>[^\s"']+)|\bBUNDLE_[A-Z0-9_]*__[A-Z0-9_]+\s*=\s*["']?[^\s:"']+:(?P<s2>[^\s"']+)"#,
            &["bundle"],
            Some(plain_secret),
        ),
        // A password fed to sshpass as a file made on the spot: `sshpass -f <(echo PASS)`.
        spec(
            "password",
            r#"\bsshpass\b[^\n]*?-f\s*<\(\s*(?:echo|printf)\s+(?:-[neE]+\s+)?(?:["']?%s(?:\\n)?["']?\s+)?["']?(?P<s>[^\s"')]+)"#,
            &["sshpass"],
            Some(plain_secret),
        ),
        // A one-time-password seed (base32) named in prose or a label: "the otp seed is …".
        spec(
            "secret",
            r#"(?i)\b(?:otp|totp|hotp|2fa|mfa)[ _-]?(?:seed|secret|key)\b[^\n]{0,20}?(?:[:=]|\s(?:is|was))\s*["'`]?(?P<s>(?-i:[A-Z2-7]{16,128})=*)"#,
            &["otp", "2fa", "mfa"],
            None,
        ),
        // An `…APPID`/`…APP_ID` set to a generated value (OpenWeather's API key is its
        // `APPID`); a numeric id is an id.
        spec(
            "secret",
            r#"(?i)\b[A-Z0-9_]*APP_?ID\b["']?\s*[:=]\s*["']?(?P<s>[A-Za-z0-9]{24,64})\b"#,
            &["appid", "app_id"],
            Some(high_entropy),
        ),
    ]
}

/// A constant's value: any for a password's name, one that looks generated for a key's,
/// salt's or token's (`define('CACHE_KEY', 'posts')` is a name).
fn php_constant(c: &Captures<'_>, hits: &mut Vec<Hit>) {
    let name = c.name("k").map_or(String::new(), |k| k.as_str().to_ascii_uppercase());
    let Some(s) = secret(c) else { return };
    let v = s.as_str();
    if is_reference(v) || is_placeholder(v, "password") {
        return;
    }
    let password = ["PASSWORD", "PASSWD", "PASS", "PWD"].iter().any(|p| name.ends_with(p));
    let symbols = v.bytes().any(|b| b.is_ascii_digit())
        && v.bytes().any(|b| b.is_ascii_alphabetic())
        && v.bytes().any(|b| b.is_ascii_punctuation());
    if password || values::looks_random(v) || (symbols && v.len() >= 16) || v.chars().count() >= 40 {
        hit(s, hits);
    }
}

/// A value with a digit or a capital, and not a reference or a placeholder.
fn mixed(c: &Captures<'_>, hits: &mut Vec<Hit>) {
    let Some(s) = secret(c) else { return };
    let v = s.as_str();
    if v.bytes().any(|b| b.is_ascii_digit() || b.is_ascii_uppercase())
        && !is_reference(v)
        && !is_placeholder(v, "password")
    {
        hit(s, hits);
    }
}

/// A WIF key: its base58 decodes to a version byte, 32 bytes of key (and a compression
/// flag), and a checksum that is the first four bytes of its double SHA-256.
fn wif(c: &Captures<'_>, hits: &mut Vec<Hit>) {
    let Some(s) = secret(c) else { return };
    let Some(bytes) = base58(s.as_str()) else { return };
    if !(bytes.len() == 37 || bytes.len() == 38) || !matches!(bytes[0], 0x80 | 0xef) {
        return;
    }
    use sha2::Digest;
    let (body, check) = bytes.split_at(bytes.len() - 4);
    let sum = sha2::Sha256::digest(sha2::Sha256::digest(body));
    if sum[..4] == *check {
        hit(s, hits);
    }
}

/// Bitcoin's base58, decoded; None on a character outside it.
fn base58(text: &str) -> Option<Vec<u8>> {
    const ALPHABET: &[u8] = b"123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
    let mut out: Vec<u8> = Vec::new();
    for ch in text.bytes() {
        let mut carry = ALPHABET.iter().position(|&a| a == ch)? as u32;
        for b in out.iter_mut().rev() {
            carry += (*b as u32) * 58;
            *b = (carry & 0xff) as u8;
            carry >>= 8;
        }
        while carry > 0 {
            out.insert(0, (carry & 0xff) as u8);
            carry >>= 8;
        }
    }
    let zeros = text.bytes().take_while(|&b| b == b'1').count();
    let mut all = vec![0u8; zeros];
    all.extend(out);
    Some(all)
}

/// 64 numbers, each a byte, not all alike (a table of zeros is no key).
fn byte_array(c: &Captures<'_>, hits: &mut Vec<Hit>) {
    let Some(s) = secret(c) else { return };
    let nums: Vec<u32> = s.as_str().split(',').filter_map(|n| n.trim().parse().ok()).collect();
    let distinct: std::collections::HashSet<&u32> = nums.iter().collect();
    if nums.len() == 64 && nums.iter().all(|&n| n <= 255) && distinct.len() >= 20 {
        hit(s, hits);
    }
}

/// A recovery key or app password by its shape; four words of four letters only when none
/// is a word a sentence is made of ("the app password is only used once here").
fn app_password(c: &Captures<'_>, hits: &mut Vec<Hit>) {
    const WORDS: &[&str] = &[
        "only", "used", "once", "here", "that", "this", "with", "from", "have", "will", "your", "when", "what", "they",
        "them", "then", "than", "been", "were", "also", "some", "more", "must", "just", "like", "into", "over", "such",
        "each", "very", "well", "make", "time", "need", "sure", "case", "work", "same", "mine", "ours", "sent", "kept",
        "safe", "where", "there", "does", "done", "long", "left", "stay", "will",
    ];
    let Some(s) = secret(c) else { return };
    let v = s.as_str();
    if v.split([' ', '-']).any(|w| WORDS.contains(&w)) {
        return;
    }
    hit(s, hits);
}
