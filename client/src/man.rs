//! `ccmemctl man`: one page for the whole command. clap_mangen's own subcommand section
//! refers to a `ccmemctl-<command>(1)` page per command, which do not exist; here each
//! command is described in this page instead, with its usage.

use std::io::{self, Write};

/// Writes the man page (roff) to `w`.
pub fn render(cmd: clap::Command, w: &mut dyn Write) -> io::Result<()> {
    let man = clap_mangen::Man::new(cmd.clone());
    man.render_title(w)?;
    man.render_name_section(w)?;
    man.render_synopsis_section(w)?;
    man.render_description_section(w)?;
    man.render_options_section(w)?;
    writeln!(w, ".SH COMMANDS")?;
    let mut cmd = cmd;
    cmd.build();
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        writeln!(w, ".TP")?;
        let usage = sub.clone().render_usage().to_string();
        let usage = usage.trim_start_matches("Usage:").trim();
        writeln!(w, "\\fB{}\\fR", escape(usage))?;
        if let Some(about) = sub.get_long_about().or_else(|| sub.get_about()) {
            for line in about.to_string().lines().filter(|l| !l.trim().is_empty()) {
                writeln!(w, "{}", escape(line.trim()))?;
            }
        }
    }
    w.write_all(MORE.as_bytes())?;
    man.render_version_section(w)
}

/// What the page says beyond the command line (the README has the whole of it).
const MORE: &str = r#".SH EXIT STATUS
.TP
B0R
success
.TP
B1R
the daemon reported an error, or a local one stopped the command
.TP
B2R
usage error
.TP
B3R
the daemon could not be reached or started
.PP
Bccmemctl hookR always exits 0.
.SH ENVIRONMENT
.TP
BCCMEM_SOCKETR
the daemon's socket (default: $XDG_RUNTIME_DIR/ccmem/ccmemd.sock)
.TP
BCCMEM_NO_AUTOSTARTR
set to 1: never start the daemon
.SH FILES
.TP
I<project>/.claude/.project-state.jsonR
the session checkpoint
.TP
I<project>/.claude/session\-memory.mdR
the session report
.TP
I<project>/.claude/ccmem.tomlR
the project's settings
.TP
I$XDG_CONFIG_HOME/ccmem/config.tomlR
the daemon's configuration
.TP
I~/.claude/memory/R, I<project>/.claude/memory/R
knowledge memories
.SH SEE ALSO
BccmemdR \-\-help, BclaudeR(1)
"#;

/// Text safe in roff: backslashes escaped, and a line never starting as a request.
fn escape(s: &str) -> String {
    let s = s.replace('\\', "\\e").replace('-', "\\-");
    if s.starts_with('.') || s.starts_with('\'') {
        format!("\\&{s}")
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn one_page_that_describes_every_command_and_refers_to_no_other() {
        let mut out = Vec::new();
        super::render(crate::cli::Cli::command(), &mut out).unwrap();
        let page = String::from_utf8(out).unwrap();
        assert!(page.contains(".TH ccmemctl 1"), "{page}");
        assert!(!page.contains("ccmemctl-ping(1)") && !page.contains("\\-ping(1)"), "{page}");
        assert!(page.contains("\\fBccmemctl ping"), "{page}");
        assert!(page.contains("\\fBccmemctl test\\-report"), "{page}");
        let name = page.split(".SH NAME").nth(1).and_then(|s| s.lines().nth(1)).unwrap_or("");
        assert_eq!(name.matches("ccmemctl").count(), 1, "the NAME line says it once: {name}");
        assert!(!page.contains(".SH EXTRA") && page.contains(".SH EXIT STATUS"), "{page}");
    }
}
