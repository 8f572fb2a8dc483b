//! Seed 003's Config: `config.json` in the global memory directory, overridden by the
//! project's, merged deeply (a project file naming only `quality.minQualityScore` keeps every
//! other value of the global file).

use serde::Deserialize;
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Embedding providers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Provider {
    /// Ollama's HTTP API.
    Ollama,
    /// Named by the seed; not spoken by ccmem yet.
    Openai,
    /// No embeddings: full-text search only.
    Disabled,
}

/// Default scope for new memories.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DefaultScope {
    /// The project's when there is a project (a `.git` or `.claude` directory), else global.
    Auto,
    /// `~/.claude/memory`.
    Global,
    /// `.claude/memory`.
    Project,
    /// `.claude/memory/local`.
    Local,
}

/// The effective configuration.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Config {
    /// Embeddings.
    pub embedding: Embedding,
    /// Scopes.
    pub scopes: Scopes,
    /// Health check thresholds.
    pub quality: QualityConfig,
}

/// `embedding.*`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Embedding {
    /// Provider.
    pub provider: Provider,
    /// Base URL of the provider.
    pub endpoint: String,
    /// Primary model.
    pub model: String,
    /// Models tried, in order, when the primary one is not installed.
    pub fallback_models: Vec<String>,
    /// Cache directory name, inside each scope directory.
    pub cache_directory: String,
}

/// `scopes.*`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Scopes {
    /// Where `memory write` puts a memory when no scope is given.
    pub default: DefaultScope,
    /// The organisation's scope.
    pub enterprise: Enterprise,
}

/// `scopes.enterprise.*`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Enterprise {
    /// Whether the enterprise scope is searched and shown.
    pub enabled: bool,
    /// Its directory (ccmem's addition to the seed, which leaves it to the installation).
    pub path: Option<PathBuf>,
}

/// `quality.*`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct QualityConfig {
    /// Days before a memory without links is flagged.
    pub orphan_threshold: u64,
    /// The quality bar.
    pub min_quality_score: u8,
}

/// The defaults of seed 003, except the provider: embeddings need a local model server, so
/// they are off until configured.
pub fn defaults() -> Value {
    serde_json::json!({
        "embedding": {
            "provider": "disabled",
            "endpoint": "http://localhost:11434",
            "model": "embeddinggemma",
            "fallbackModels": ["nomic-embed-text", "all-minilm"],
            "cacheDirectory": ".embedding-cache"
        },
        "scopes": { "default": "auto", "enterprise": { "enabled": false, "path": null } },
        "quality": { "orphanThreshold": 30, "minQualityScore": 50 }
    })
}

/// `over` merged into `base`: objects key by key, anything else replaced.
pub fn merge(base: &mut Value, over: Value) {
    match (base, over) {
        (Value::Object(b), Value::Object(o)) => {
            for (k, v) in o {
                match b.get_mut(&k) {
                    Some(slot) => merge(slot, v),
                    None => {
                        b.insert(k, v);
                    }
                }
            }
        }
        (slot, v) => *slot = v,
    }
}

/// Builds and checks the configuration from the files given, lowest precedence first.
pub fn resolve(layers: &[(PathBuf, Value)]) -> Result<Config, String> {
    let mut v = defaults();
    for (path, layer) in layers {
        if !layer.is_object() {
            return Err(format!("{}: must be a JSON object", path.display()));
        }
        merge(&mut v, layer.clone());
    }
    let files = || layers.iter().map(|(p, _)| p.display().to_string()).collect::<Vec<_>>().join(" over ");
    let c: Config = serde_json::from_value(v).map_err(|e| format!("{}: {e}", files()))?;
    c.validate().map_err(|e| format!("{}: {e}", files()))?;
    Ok(c)
}

impl Config {
    /// Seed 003's rules.
    pub fn validate(&self) -> Result<(), String> {
        let e = &self.embedding;
        if !(e.endpoint.starts_with("http://") || e.endpoint.starts_with("https://"))
            || e.endpoint.len() <= "http://".len()
        {
            return Err(format!("embedding.endpoint must be an http:// URL (got {:?})", e.endpoint));
        }
        if e.model.trim().is_empty() {
            return Err("embedding.model must be a non-empty string".into());
        }
        if e.fallback_models.iter().any(|m| m.trim().is_empty()) {
            return Err("embedding.fallbackModels must be non-empty strings".into());
        }
        if e.cache_directory.is_empty()
            || e.cache_directory.contains(['/', '\\'])
            || matches!(e.cache_directory.as_str(), "." | "..")
        {
            return Err(format!(
                "embedding.cacheDirectory must be a plain directory name (got {:?})",
                e.cache_directory
            ));
        }
        if self.quality.orphan_threshold == 0 {
            return Err("quality.orphanThreshold must be a positive integer".into());
        }
        if self.quality.min_quality_score > 100 {
            return Err(format!("quality.minQualityScore must be 0-100 (got {})", self.quality.min_quality_score));
        }
        if self.scopes.enterprise.enabled {
            match &self.scopes.enterprise.path {
                Some(p) if p.is_absolute() => {}
                Some(p) => return Err(format!("scopes.enterprise.path must be absolute (got {})", p.display())),
                None => return Err("scopes.enterprise.enabled is true but scopes.enterprise.path is not set".into()),
            }
        }
        Ok(())
    }

    /// The enterprise directory, when enabled.
    pub fn enterprise_dir(&self) -> Option<&Path> {
        self.scopes.enterprise.path.as_deref().filter(|_| self.scopes.enterprise.enabled)
    }
}

/// A config file as read: its JSON, none, or why it could not be read.
type Read = Result<Option<Value>, String>;

/// Keys a project's `config.json` may not set, for it comes with the repository: where
/// embeddings are computed (a repository naming its own server would receive the user's
/// memories, global ones included, with every search) and which directories are scopes (an
/// enterprise scope pointed anywhere would read and write there). Removes them from `v` and
/// returns their names.
fn without_repository_only_keys(v: &mut Value) -> Vec<&'static str> {
    let mut gone = Vec::new();
    if let Some(e) = v.get_mut("embedding").and_then(Value::as_object_mut) {
        for (key, name) in [
            ("provider", "embedding.provider"),
            ("endpoint", "embedding.endpoint"),
            ("cacheDirectory", "embedding.cacheDirectory"),
        ] {
            if e.remove(key).is_some() {
                gone.push(name);
            }
        }
    }
    if let Some(sc) = v.get_mut("scopes").and_then(Value::as_object_mut) {
        if sc.remove("enterprise").is_some() {
            gone.push("scopes.enterprise");
        }
        // A repository may keep its memories in the project (or this machine's); it may
        // not send the user's own `memory write` to the scope every project reads.
        if sc.get("default").and_then(Value::as_str).is_some_and(|d| matches!(d, "global" | "enterprise")) {
            sc.remove("default");
            gone.push("scopes.default");
        }
    }
    gone
}

/// Config files read, re-read only when they change.
#[derive(Debug, Default)]
pub struct Files {
    seen: HashMap<PathBuf, (Option<(SystemTime, u64)>, Read)>,
}

impl Files {
    /// The configuration for a project (global file, then the project's).
    pub fn config(&mut self, global: &Path, project: Option<&Path>) -> Result<Config, String> {
        let mut layers = Vec::new();
        if let Some(v) = self.read(global)? {
            layers.push((global.to_path_buf(), v));
        }
        if let Some(p) = project {
            // The repository's file, unreadable (a FIFO, a link, not JSON), stops no command
            // of the user's: it is passed over, and said.
            match self.read(p) {
                Ok(Some(mut v)) => {
                    for key in without_repository_only_keys(&mut v) {
                        tracing::warn!(file = %p.display(), key, "ignored: only the user's own config.json may set it");
                    }
                    layers.push((p.to_path_buf(), v));
                }
                Ok(None) => {}
                Err(e) => tracing::warn!(file = %p.display(), error = %e, "the project's memory config is passed over"),
            }
        }
        resolve(&layers)
    }

    fn read(&mut self, path: &Path) -> Result<Option<Value>, String> {
        let stamp = std::fs::metadata(path).ok().map(|m| (m.modified().unwrap_or(SystemTime::UNIX_EPOCH), m.len()));
        if let Some((s, v)) = self.seen.get(path) {
            if *s == stamp {
                return v.clone();
            }
        }
        let v = match stamp {
            None => Ok(None),
            Some(_) => ccmem_proto::files::untrusted::read_string(path, 1 << 20)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))
                .and_then(|t| {
                    serde_json::from_str(&t).map_err(|e| format!("{} is not valid JSON: {e}", path.display()))
                })
                .map(Some),
        };
        self.seen.insert(path.to_path_buf(), (stamp, v.clone()));
        v
    }
}

/// What each key of `config.json` does, for `ccmemctl config show`.
const ABOUT: &[(&str, &str)] = &[
    ("embedding.provider", "where memories' embeddings come from: ollama, openai or disabled (text search only)"),
    ("embedding.endpoint", "the embedding server's URL"),
    ("embedding.model", "the embedding model"),
    ("embedding.fallbackModels", "models tried in order when the model is not installed"),
    ("embedding.cacheDirectory", "the embeddings cache, a directory in each memory directory"),
    ("scopes.default", "where `memory write` puts a memory without --scope: auto, global, project or local"),
    ("scopes.enterprise.enabled", "whether the organisation's memories are searched and shown"),
    ("scopes.enterprise.path", "the organisation's memory directory"),
    ("quality.orphanThreshold", "days before a memory without links is flagged"),
    ("quality.minQualityScore", "the quality score below which `memory health` flags a memory (0 to 100)"),
];

/// The knowledge memories' settings, as `ccmemctl config show` lists them.
#[derive(Debug, Default)]
pub struct Shown {
    /// Each key (`memory.` before it) with its value and the file it comes from.
    pub entries: Vec<ccmem_proto::wire::api::ConfigEntry>,
    /// What was ignored in the files.
    pub warnings: Vec<String>,
    /// Why the files are refused (memory commands fail), if they are.
    pub problem: Option<String>,
}

/// The knowledge memories' settings: the user's `config.json` in `global`, under the
/// project's in `project`, over the defaults.
pub fn entries(global: Option<&Path>, project: Option<&Path>) -> Shown {
    let mut files = Files::default();
    let mut warnings = Vec::new();
    let mut read = |p: Option<&Path>| match p.map(|p| files.read(p)) {
        Some(Ok(Some(v))) if v.is_object() => Some(v),
        Some(Ok(Some(_))) => {
            warnings.push(format!(
                "{}: must be a JSON object; ignored",
                p.map(Path::display).map(|d| d.to_string()).unwrap_or_default()
            ));
            None
        }
        Some(Err(e)) => {
            warnings.push(format!("{e}; ignored"));
            None
        }
        _ => None,
    };
    let global_v = read(global);
    let mut project_v = read(project);
    if let (Some(v), Some(p)) = (project_v.as_mut(), project) {
        for key in without_repository_only_keys(v) {
            warnings.push(format!("{}: `{key}` ignored: only the user's own config.json may set it", p.display()));
        }
    }
    let layers: Vec<(PathBuf, Value)> = [(global, &global_v), (project, &project_v)]
        .into_iter()
        .filter_map(|(p, v)| Some((p?.to_path_buf(), v.clone()?)))
        .collect();
    let problem = resolve(&layers).err();
    let get = |v: &Option<Value>, key: &str| key.split('.').try_fold(v.as_ref()?, |v, k| v.get(k)).cloned();
    let defaults = defaults();
    let entries = ABOUT
        .iter()
        .map(|(key, about)| {
            let (value, source) = match (get(&project_v, key), get(&global_v, key)) {
                (Some(v), _) => (
                    v,
                    format!("project file {}", project.map(Path::display).map(|d| d.to_string()).unwrap_or_default()),
                ),
                (None, Some(v)) => (
                    v,
                    format!(
                        "memory config file {}",
                        global.map(Path::display).map(|d| d.to_string()).unwrap_or_default()
                    ),
                ),
                (None, None) => (get(&Some(defaults.clone()), key).unwrap_or(Value::Null), "default".to_string()),
            };
            let value = match value {
                Value::String(s) => ccmem_proto::quote::name(&s).into_owned(),
                Value::Null => "none".to_string(),
                other => ccmem_proto::quote::name(&other.to_string()).into_owned(),
            };
            ccmem_proto::wire::api::ConfigEntry {
                key: format!("memory.{key}"),
                value,
                source,
                about: about.to_string(),
                applies: "next memory command".to_string(),
            }
        })
        .collect();
    Shown { entries, warnings, problem }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn config_show_lists_every_memory_setting_with_its_file() {
        let tmp = tempfile::tempdir().unwrap();
        let (global, project) = (tmp.path().join("g.json"), tmp.path().join("p.json"));
        std::fs::write(&global, r#"{"embedding": {"provider": "ollama"}, "quality": {"orphanThreshold": 7}}"#).unwrap();
        std::fs::write(&project, r#"{"quality": {"orphanThreshold": 9}, "embedding": {"endpoint": "http://x:1"}}"#)
            .unwrap();
        let Shown { entries: shown, warnings, problem } = entries(Some(&global), Some(&project));
        assert!(problem.is_none(), "{problem:?}");
        let find = |k: &str| shown.iter().find(|e| e.key == k).unwrap_or_else(|| panic!("{k}"));
        assert_eq!(shown.len(), ABOUT.len());
        assert_eq!(find("memory.embedding.provider").value, "ollama");
        assert!(find("memory.embedding.provider").source.contains("g.json"));
        assert_eq!(find("memory.quality.orphanThreshold").value, "9");
        assert!(find("memory.quality.orphanThreshold").source.starts_with("project file"));
        assert_eq!(find("memory.embedding.endpoint").source, "default", "a repository may not set it");
        assert_eq!(find("memory.scopes.enterprise.path").value, "none");
        assert_eq!(find("memory.embedding.fallbackModels").value, r#"["nomic-embed-text","all-minilm"]"#);
        assert!(warnings.iter().any(|w| w.contains("embedding.endpoint")), "{warnings:?}");
        std::fs::write(&global, "{not json").unwrap();
        let shown = entries(Some(&global), None);
        assert!(shown.warnings.iter().any(|w| w.contains("not valid JSON")), "{:?}", shown.warnings);
        // A value the memories refuse: every memory command would fail, and config show says so.
        std::fs::write(&global, r#"{"embedding": {"provider": "olama"}}"#).unwrap();
        let shown = entries(Some(&global), None);
        assert!(shown.problem.as_deref().is_some_and(|p| p.contains("olama")), "{:?}", shown.problem);
    }

    #[test]
    fn defaults_are_the_seeds_with_embeddings_off() {
        let c = resolve(&[]).unwrap();
        assert_eq!(c.embedding.provider, Provider::Disabled);
        assert_eq!(c.embedding.model, "embeddinggemma");
        assert_eq!(c.embedding.fallback_models, ["nomic-embed-text", "all-minilm"]);
        assert_eq!(c.scopes.default, DefaultScope::Auto);
        assert_eq!(c.quality.orphan_threshold, 30);
        assert_eq!(c.quality.min_quality_score, 50);
    }

    #[test]
    fn the_project_overrides_the_global_file_deeply() {
        let global = json!({"embedding": {"provider": "ollama", "model": "m1"}, "quality": {"orphanThreshold": 7}});
        let project = json!({"embedding": {"model": "m2"}, "quality": {"minQualityScore": 80}});
        let c = resolve(&[("g".into(), global), ("p".into(), project)]).unwrap();
        assert_eq!(c.embedding.provider, Provider::Ollama);
        assert_eq!(c.embedding.model, "m2");
        assert_eq!(c.embedding.endpoint, "http://localhost:11434");
        assert_eq!(c.quality.orphan_threshold, 7);
        assert_eq!(c.quality.min_quality_score, 80);
    }

    #[test]
    fn a_project_file_cannot_choose_where_data_goes_or_which_directories_are_scopes() {
        let tmp = tempfile::tempdir().unwrap();
        let (global, project) = (tmp.path().join("g.json"), tmp.path().join("p.json"));
        std::fs::write(&global, r#"{"embedding": {"provider": "ollama", "model": "m1"}}"#).unwrap();
        std::fs::write(
            &project,
            r#"{"embedding": {"provider": "ollama", "endpoint": "http://192.0.2.2:18765", "model": "m2",
                "cacheDirectory": "x"}, "scopes": {"enterprise": {"enabled": true, "path": "/etc"}},
                "quality": {"minQualityScore": 80}}"#,
        )
        .unwrap();
        let c = Files::default().config(&global, Some(&project)).unwrap();
        assert_eq!(c.embedding.endpoint, "http://localhost:11434", "the user's, not the repository's");
        assert_eq!(c.embedding.cache_directory, ".embedding-cache");
        assert!(!c.scopes.enterprise.enabled && c.scopes.enterprise.path.is_none());
        assert_eq!((c.embedding.model.as_str(), c.quality.min_quality_score), ("m2", 80), "the rest applies");
        // Embeddings stay off unless the user turned them on.
        std::fs::write(&global, "{}").unwrap();
        let c = Files::default().config(&global, Some(&project)).unwrap();
        assert_eq!(c.embedding.provider, Provider::Disabled);
        // Found by the independent tester: a repository sent the user's own `memory write`
        // (no --scope) to the global scope, which every project's context reads. It may
        // choose the project's scope or this machine's, not the user's.
        for (default, kept) in [("global", DefaultScope::Auto), ("local", DefaultScope::Local)] {
            std::fs::write(&project, format!(r#"{{"scopes": {{"default": "{default}"}}}}"#)).unwrap();
            let c = Files::default().config(&global, Some(&project)).unwrap();
            assert_eq!(c.scopes.default, kept, "{default}");
        }
        // A repository's file that cannot be read (a FIFO at its name) stops no command.
        #[cfg(unix)]
        {
            std::fs::remove_file(&project).unwrap();
            assert!(std::process::Command::new("mkfifo").arg(&project).status().is_ok_and(|s| s.success()));
            assert!(Files::default().config(&global, Some(&project)).is_ok());
        }
    }

    #[test]
    fn bad_values_name_the_field_and_the_file() {
        for (layer, what) in [
            (json!({"quality": {"minQualityScore": 150}}), "minQualityScore must be 0-100"),
            (json!({"quality": {"orphanThreshold": 0}}), "orphanThreshold must be a positive integer"),
            (json!({"quality": {"orphanThreshold": -1}}), "invalid value"),
            (json!({"embedding": {"endpoint": "localhost"}}), "embedding.endpoint"),
            (json!({"embedding": {"model": " "}}), "embedding.model"),
            (json!({"embedding": {"cacheDirectory": "."}}), "embedding.cacheDirectory"),
            (json!({"scopes": {"default": "team"}}), "unknown variant `team`"),
            (json!({"scopes": {"enterprise": {"enabled": true}}}), "scopes.enterprise.path is not set"),
            (json!({"quality": {"minimum": 1}}), "unknown field `minimum`"),
            (json!([1]), "must be a JSON object"),
        ] {
            let e = resolve(&[("/x/config.json".into(), layer.clone())]).unwrap_err();
            assert!(e.contains(what) && e.contains("/x/config.json"), "{layer}: {e}");
        }
    }
}
