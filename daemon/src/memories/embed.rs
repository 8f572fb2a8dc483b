//! Semantic search: embeddings from ollama's HTTP API, cached per memory (seed 003's
//! EmbeddingCache: `<cacheDirectory>/<slug>.json`, stale when the content hash or the model
//! differs), and the hybrid ranking that mixes them with BM25.
//!
//! The provider is a local HTTP server, so the client is plain HTTP/1.1 on a tokio socket:
//! one POST per batch, `Connection: close`, bounded in time and size.

use ccmem_proto::files::atomic;
use ccmem_proto::model::memory::{iso, EmbeddingCacheEntry};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The seed's default cache directory name.
pub const CACHE_DIR_DEFAULT: &str = ".embedding-cache";
/// Largest response accepted from the provider.
const MAX_RESPONSE: usize = 64 << 20;
/// Memories embedded per request to the provider.
pub const BATCH: usize = 32;

/// A cached embedding.
#[derive(Debug, Clone)]
pub struct Cached {
    /// The model that computed it.
    pub model: String,
    /// SHA-256 of the text embedded.
    pub hash: String,
    /// The vector, shared with searches in flight.
    pub vector: Arc<Vec<f32>>,
}

/// The text of a memory that is embedded: title, tags and content.
pub fn text_of(m: &ccmem_proto::model::memory::Memory) -> String {
    format!("{}\n{}\n{}", m.title, m.tags.join(", "), m.content)
}

/// SHA-256 in hex.
pub fn sha256(text: &str) -> String {
    Sha256::digest(text.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// The cache file of a memory, in the cache directory `cache` (see
/// [`super::scope::ScopeStore::cache_path`]).
pub fn cache_file(cache: &Path, slug: &str) -> PathBuf {
    cache.join(format!("{slug}.json"))
}

/// Removes a memory's cached embedding (file and loaded copy). No cache directory (it is a
/// link): nothing on disk is touched.
pub fn remove_cache(cache: Option<&Path>, slug: &str, loaded: Option<&mut HashMap<String, Cached>>) {
    if let Some(cache) = cache {
        let _ = fs::remove_file(cache_file(cache, slug));
    }
    if let Some(l) = loaded {
        l.remove(slug);
    }
}

/// Reads a scope's cache. Entries of a model no longer configured (primary or fallback) are
/// deleted: another embedding space. Unreadable ones are skipped, to be recomputed.
pub fn load_cache_models(cache: Option<&Path>, models: &[String]) -> HashMap<String, Cached> {
    let mut out = HashMap::new();
    let Some(Ok(entries)) = cache.map(fs::read_dir) else { return out };
    for e in entries.flatten() {
        let path = e.path();
        if path.extension().is_none_or(|x| x != "json") || !e.file_type().is_ok_and(|t| t.is_file()) {
            continue;
        }
        let entry = ccmem_proto::files::untrusted::read(&path, 16 << 20)
            .ok()
            .and_then(|b| serde_json::from_slice::<EmbeddingCacheEntry>(&b).ok());
        match entry {
            Some(c) if models.contains(&c.model) && !c.vector.is_empty() => {
                out.insert(c.slug, Cached { model: c.model, hash: c.content_hash, vector: Arc::new(c.vector) });
            }
            Some(_) => {
                let _ = fs::remove_file(&path);
            }
            None => {}
        }
    }
    out
}

/// Writes a cache entry atomically (nowhere when there is no usable cache directory).
pub fn store_cache(cache: Option<&Path>, slug: &str, c: &Cached) -> std::io::Result<()> {
    let Some(d) = cache else {
        return Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            "the embedding cache directory is a symbolic link: ccmem does not write through it",
        ));
    };
    let entry = EmbeddingCacheEntry {
        slug: slug.to_string(),
        model: c.model.clone(),
        vector: c.vector.as_ref().clone(),
        content_hash: c.hash.clone(),
        timestamp: iso(chrono::Utc::now()),
    };
    let bytes = serde_json::to_vec(&entry).map_err(std::io::Error::other)?;
    // Made (and written in) without following a link put at its name meanwhile.
    atomic::write_in(d.parent().unwrap_or(d), &cache_file(d, slug), &bytes, false)
}

/// Cosine similarity; 0 for vectors of different length or no length.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    if a.len() != b.len() || a.is_empty() {
        return 0.0;
    }
    let (mut dot, mut na, mut nb) = (0.0f32, 0.0f32, 0.0f32);
    for (x, y) in a.iter().zip(b) {
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot / (na.sqrt() * nb.sqrt())
    }
}

/// Why embedding failed.
#[derive(Debug)]
pub enum EmbedError {
    /// Nothing answers at the endpoint.
    Unreachable(String),
    /// It answered, but not with embeddings.
    Failed(String),
}

impl std::fmt::Display for EmbedError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EmbedError::Unreachable(s) | EmbedError::Failed(s) => f.write_str(s),
        }
    }
}

/// Embeds `inputs` with the first of `models` the provider has. Returns the model used and
/// one vector per input.
pub async fn embed(
    endpoint: &str,
    models: &[String],
    inputs: &[String],
    timeout: Duration,
) -> Result<(String, Vec<Vec<f32>>), EmbedError> {
    let mut missing = Vec::new();
    for model in models {
        let body = serde_json::json!({ "model": model, "input": inputs });
        let (status, reply) =
            tokio::time::timeout(timeout, post(endpoint, "/api/embed", &body.to_string()))
                .await
                .map_err(|_| EmbedError::Unreachable(format!("{endpoint} did not answer within {timeout:?}")))??;
        if status == 404 {
            missing.push(model.as_str());
            continue;
        }
        if status != 200 {
            let msg = serde_json::from_slice::<serde_json::Value>(&reply)
                .ok()
                .and_then(|v| v.get("error").and_then(|e| e.as_str()).map(str::to_string))
                .unwrap_or_else(|| String::from_utf8_lossy(&reply).chars().take(200).collect());
            return Err(EmbedError::Failed(format!("{endpoint} answered {status}: {msg}")));
        }
        #[derive(serde::Deserialize)]
        struct Reply {
            embeddings: Vec<Vec<f32>>,
        }
        let r: Reply = serde_json::from_slice(&reply)
            .map_err(|e| EmbedError::Failed(format!("{endpoint} sent no embeddings: {e}")))?;
        if r.embeddings.len() != inputs.len() {
            return Err(EmbedError::Failed(format!(
                "{endpoint} sent {} embeddings for {} inputs",
                r.embeddings.len(),
                inputs.len()
            )));
        }
        return Ok((model.clone(), r.embeddings));
    }
    Err(EmbedError::Failed(format!("none of the models is installed at {endpoint}: {}", missing.join(", "))))
}

/// One HTTP/1.1 POST of JSON. Returns the status and the body.
async fn post(endpoint: &str, path: &str, body: &str) -> Result<(u16, Vec<u8>), EmbedError> {
    let rest = endpoint.strip_prefix("http://").ok_or_else(|| {
        EmbedError::Failed(format!("{endpoint}: only plain http:// endpoints are supported (a local provider)"))
    })?;
    let (authority, base) = match rest.find('/') {
        Some(i) => (&rest[..i], rest[i..].trim_end_matches('/')),
        None => (rest, ""),
    };
    let (host, port) = match authority.rsplit_once(':') {
        Some((h, p)) if !h.ends_with(']') || authority.starts_with('[') => {
            (h.trim_matches(['[', ']']), p.parse::<u16>().map_err(|_| bad_url(endpoint))?)
        }
        _ => (authority.trim_matches(['[', ']']), 80),
    };
    let mut stream = tokio::net::TcpStream::connect((host, port))
        .await
        .map_err(|e| EmbedError::Unreachable(format!("cannot reach {endpoint}: {e}")))?;
    let request = format!(
        "POST {base}{path} HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/json\r\nAccept: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let io = |e: std::io::Error| EmbedError::Unreachable(format!("{endpoint}: {e}"));
    stream.write_all(request.as_bytes()).await.map_err(io)?;
    let mut raw = Vec::new();
    // One byte over the limit tells a response that is too large from one that just fits.
    stream.take(MAX_RESPONSE as u64 + 1).read_to_end(&mut raw).await.map_err(io)?;
    if raw.len() > MAX_RESPONSE {
        return Err(EmbedError::Failed(format!("{endpoint}: response larger than {MAX_RESPONSE} bytes")));
    }
    parse_response(&raw).ok_or_else(|| EmbedError::Failed(format!("{endpoint}: not an HTTP response")))
}

fn bad_url(endpoint: &str) -> EmbedError {
    EmbedError::Failed(format!("{endpoint}: not a valid http://host:port URL"))
}

/// Status and body of a whole HTTP/1.1 response (chunked or not).
fn parse_response(raw: &[u8]) -> Option<(u16, Vec<u8>)> {
    let end = raw.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = std::str::from_utf8(&raw[..end]).ok()?;
    let body = &raw[end + 4..];
    let mut lines = head.split("\r\n");
    let status: u16 = lines.next()?.split_whitespace().nth(1)?.parse().ok()?;
    let mut chunked = false;
    let mut length = None;
    for l in lines {
        let (k, v) = l.split_once(':')?;
        match k.trim().to_ascii_lowercase().as_str() {
            "transfer-encoding" => chunked = v.to_ascii_lowercase().contains("chunked"),
            "content-length" => length = v.trim().parse::<usize>().ok(),
            _ => {}
        }
    }
    if chunked {
        return Some((status, dechunk(body)?));
    }
    let body = match length {
        Some(n) => body.get(..n)?.to_vec(),
        None => body.to_vec(),
    };
    Some((status, body))
}

fn dechunk(mut body: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let nl = body.windows(2).position(|w| w == b"\r\n")?;
        let size_line = std::str::from_utf8(&body[..nl]).ok()?;
        let size = usize::from_str_radix(size_line.split(';').next()?.trim(), 16).ok()?;
        body = &body[nl + 2..];
        if size == 0 {
            return Some(out);
        }
        out.extend_from_slice(body.get(..size)?);
        body = body.get(size + 2..)?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn responses_plain_and_chunked() {
        let plain = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello-extra";
        assert_eq!(parse_response(plain), Some((200, b"hello".to_vec())));
        let chunked =
            b"HTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\n";
        assert_eq!(parse_response(chunked), Some((404, b"abcde".to_vec())));
        assert_eq!(parse_response(b"garbage"), None);
        assert_eq!(parse_response(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"), None);
    }

    #[test]
    fn cosine_and_hash() {
        assert!((cosine(&[1.0, 0.0], &[2.0, 0.0]) - 1.0).abs() < 1e-6);
        assert_eq!(cosine(&[1.0, 0.0], &[0.0, 1.0]), 0.0);
        assert_eq!(cosine(&[1.0], &[1.0, 2.0]), 0.0);
        assert_eq!(cosine(&[0.0], &[0.0]), 0.0);
        assert_eq!(sha256("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }

    #[tokio::test]
    async fn an_endpoint_with_nothing_listening_is_unreachable() {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let e = embed(&format!("http://127.0.0.1:{port}"), &["m".into()], &["x".into()], Duration::from_secs(5))
            .await
            .unwrap_err();
        assert!(matches!(e, EmbedError::Unreachable(_)), "{e}");
        let e = embed("https://example.com", &["m".into()], &["x".into()], Duration::from_secs(5)).await.unwrap_err();
        assert!(e.to_string().contains("only plain http://"), "{e}");
    }
}
