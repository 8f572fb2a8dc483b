//! Agents whose hooks are code: OpenCode's plugins and Pi's extensions. ccmem's is one file
//! in the agent's user-wide plugin folder, written from the template in
//! `client/agent-plugins/` with the path of the `ccmemctl` that wrote it, and removed by
//! uninstall. A file of that name that is not ccmem's is never overwritten.

use super::*;

/// An agent's plugin file: where it goes and what it holds.
pub struct PluginFile {
    /// The agent.
    pub agent: Agent,
    /// The template (`__CCMEMCTL__` stands for the program's path, as a string literal).
    template: &'static str,
}

/// What every template of ccmem's starts with, which tells ccmem's file from another's.
const MARK: &str = "// ccmem for ";

/// OpenCode's plugin: `$XDG_CONFIG_HOME/opencode/plugin/ccmem.js` (`~/.config/opencode/…`).
pub const OPENCODE: PluginFile =
    PluginFile { agent: Agent::Opencode, template: include_str!("../../agent-plugins/opencode/ccmem.js") };

/// Pi's extension: `$PI_CODING_AGENT_DIR/extensions/ccmem.ts` (`~/.pi/agent/…`).
pub const PI: PluginFile = PluginFile { agent: Agent::Pi, template: include_str!("../../agent-plugins/pi/ccmem.ts") };

impl PluginFile {
    /// Where the agent loads it from.
    pub fn path(&self) -> Result<PathBuf, String> {
        let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        let home = || var("HOME").or_else(|| directories::BaseDirs::new().map(|d| d.home_dir().to_path_buf()));
        match self.agent {
            Agent::Opencode => {
                let config =
                    var("XDG_CONFIG_HOME").or_else(|| home().map(|h| h.join(".config"))).ok_or("HOME is not set")?;
                Ok(config.join("opencode/plugin/ccmem.js"))
            }
            _ => {
                let dir = var("PI_CODING_AGENT_DIR")
                    .or_else(|| home().map(|h| h.join(".pi/agent")))
                    .ok_or("HOME is not set")?;
                Ok(dir.join("extensions/ccmem.ts"))
            }
        }
    }

    /// The file for the `ccmemctl` at `program`.
    pub fn text_for(&self, program: &str) -> String {
        let literal = serde_json::to_string(program).unwrap_or_else(|_| "\"ccmemctl\"".into());
        self.template.replacen("\"__CCMEMCTL__\"", &literal, 1)
    }

    /// Installs or removes it.
    pub fn run(&self, installing: bool, dry_run: bool, json_out: bool) -> Result<(), String> {
        let path = self.path()?;
        let current = match ccmem_proto::files::untrusted::read_string(&path, 1 << 20) {
            Ok(t) => Some(t),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
        };
        if current.as_deref().is_some_and(|t| !t.starts_with(MARK)) {
            return Err(format!("{} is not ccmem's: ccmem leaves it as it is (move it away first)", path.display()));
        }
        let exe = std::env::current_exe().map_err(|e| format!("cannot find ccmemctl's own path: {e}"))?;
        let wanted = self.text_for(&exe.to_string_lossy());
        let changed = if installing { current.as_deref() != Some(wanted.as_str()) } else { current.is_some() };
        if dry_run {
            if installing {
                print!("{wanted}");
            }
            eprintln!("(dry run: {} would {})", path.display(), if changed { "change" } else { "stay as it is" });
            return Ok(());
        }
        if changed && installing {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
            }
            atomic::write(&path, wanted.as_bytes(), false)
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        } else if changed {
            std::fs::remove_file(&path).map_err(|e| format!("cannot remove {}: {e}", path.display()))?;
        }
        report(&path, installing, changed, json_out);
        Ok(())
    }

    /// For `doctor`: None when not installed, else whether it runs this `ccmemctl`
    /// (`program`) and the template of this version.
    pub fn status(&self, program: &str) -> Result<Option<bool>, String> {
        let path = self.path()?;
        match ccmem_proto::files::untrusted::read_string(&path, 1 << 20) {
            Ok(t) if t.starts_with(MARK) => Ok(Some(t == self.text_for(program))),
            Ok(_) => Err(format!("{} is not ccmem's", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(format!("cannot read {}: {e}", path.display())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_templates_are_ccmems_and_name_the_program_as_a_string_literal() {
        for f in [OPENCODE, PI] {
            assert!(f.template.starts_with(MARK), "{}", f.agent);
            assert_eq!(f.template.matches("\"__CCMEMCTL__\"").count(), 1, "{}", f.agent);
            let text = f.text_for(r#"/opt/my "tools"/ccmemctl"#);
            assert!(text.contains(r#"const CCMEMCTL = "/opt/my \"tools\"/ccmemctl""#), "{text}");
            assert!(text.contains(&format!("\"--agent\", \"{}\"", f.agent.name())), "{}", f.agent);
        }
    }
}
