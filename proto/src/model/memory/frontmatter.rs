//! Memory files: YAML frontmatter, a `# Title` heading, then the markdown content.
//!
//! The reader takes the YAML people write in frontmatter by hand (plain, single- and
//! double-quoted scalars, block and flow lists, comments). Keys it does not know are kept
//! verbatim and written back, so a hand-added `author:` survives an update. Anything else is a
//! clear error naming the line, never a panic.

use super::{check_content, check_tags, check_title, iso, parse_time, Invalid, Memory, MemoryType, Scope};
use chrono::{DateTime, Utc};

/// How a file was laid out, beyond the memory itself: kept so a rewrite changes only what
/// changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Layout {
    /// Lines of frontmatter keys ccmem does not know, each with its nested lines.
    pub extra: Vec<String>,
    /// The title came from a `title:` key rather than the `# ` heading.
    pub title_in_frontmatter: bool,
}

/// The frontmatter fields, each as found (absent ones are `None`).
#[derive(Debug, Clone, Default, PartialEq)]
struct Fields {
    memory_type: Option<String>,
    title: Option<String>,
    tags: Option<Vec<String>>,
    created: Option<String>,
    updated: Option<String>,
    links: Option<Vec<String>>,
}

/// Reads a memory file. `slug` and `scope` come from where the file is.
pub fn parse(slug: &str, scope: Scope, text: &str) -> Result<(Memory, Layout), Vec<Invalid>> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let (front, body) = split(text).map_err(|e| vec![e])?;
    let (fields, extra) = fields(front).map_err(|e| vec![e])?;
    let mut errors = Vec::new();
    let memory_type = match fields.memory_type.as_deref() {
        None => {
            errors.push(Invalid::new("type", "is missing from the frontmatter"));
            MemoryType::Learning
        }
        Some(t) => t.parse().unwrap_or_else(|e| {
            errors.push(e);
            MemoryType::Learning
        }),
    };
    let (heading, content) = heading(body);
    let title_in_frontmatter = fields.title.is_some();
    let (title, content) = match (fields.title, heading) {
        (Some(t), Some(h)) if h == t.trim() => (t.trim().to_string(), content),
        (Some(t), _) => (t.trim().to_string(), normalize_content(body)),
        (None, Some(h)) => (h, content),
        (None, None) => {
            errors.push(Invalid::new("title", "is missing: no `# Title` line after the frontmatter and no title key"));
            (String::new(), normalize_content(body))
        }
    };
    if !title.is_empty() {
        if let Err(e) = check_title(&title) {
            errors.push(e);
        }
    }
    let tags = fields.tags.unwrap_or_default();
    if let Err(mut e) = check_tags(&tags) {
        errors.append(&mut e);
    }
    let created = time("created", fields.created.as_deref(), &mut errors);
    let updated = time("updated", fields.updated.as_deref(), &mut errors);
    if let Err(e) = check_content(&content) {
        errors.push(e);
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let (Some(created), Some(updated)) = (created, updated) else {
        return Err(vec![Invalid::new("created", "is missing")]);
    };
    let memory = Memory {
        slug: slug.to_string(),
        memory_type,
        title,
        tags,
        created,
        updated,
        links: fields.links.unwrap_or_default(),
        content,
        scope,
    };
    Ok((memory, Layout { extra, title_in_frontmatter }))
}

fn time(field: &str, v: Option<&str>, errors: &mut Vec<Invalid>) -> Option<DateTime<Utc>> {
    match v {
        None => {
            errors.push(Invalid::new(field, "is missing from the frontmatter"));
            None
        }
        Some(s) => {
            let t = parse_time(s);
            if t.is_none() {
                errors.push(Invalid::new(field, format!("must be an ISO 8601 timestamp (got {s:?})")));
            }
            t
        }
    }
}

/// The file for `m`, laid out as `layout` says.
pub fn render(m: &Memory, layout: &Layout) -> String {
    let mut out = String::with_capacity(m.content.len() + 256);
    out.push_str("---\n");
    out.push_str(&format!("type: {}\n", m.memory_type));
    if layout.title_in_frontmatter {
        out.push_str(&format!("title: {}\n", quote(&m.title)));
    }
    out.push_str("tags:\n");
    for t in &m.tags {
        out.push_str(&format!("  - {t}\n"));
    }
    out.push_str(&format!("created: \"{}\"\n", iso(m.created)));
    out.push_str(&format!("updated: \"{}\"\n", iso(m.updated)));
    if !m.links.is_empty() {
        out.push_str("links:\n");
        for l in &m.links {
            out.push_str(&format!("  - {l}\n"));
        }
    }
    for line in &layout.extra {
        out.push_str(line);
        out.push('\n');
    }
    out.push_str("---\n\n");
    if !layout.title_in_frontmatter {
        out.push_str(&format!("# {}\n", m.title));
    }
    if !m.content.is_empty() {
        if !layout.title_in_frontmatter {
            out.push('\n');
        }
        out.push_str(&m.content);
        out.push('\n');
    }
    out
}

/// Content as stored: no leading blank lines, no trailing whitespace, `\n` line ends (a
/// lone `\r` counts as one).
pub fn normalize_content(s: &str) -> String {
    // Every line end becomes `\n`, a lone `\r` too: "\r\r\n" must not become "\r\n" and
    // then, when read again, "\n".
    let s = s.replace("\r\n", "\n").replace('\r', "\n");
    // Leading blank lines only: the indentation of the first real line is kept.
    let mut rest = s.as_str();
    while let Some(nl) = rest.find('\n') {
        if !rest[..nl].trim().is_empty() {
            break;
        }
        rest = &rest[nl + 1..];
    }
    rest.trim_end().to_string()
}

/// A double-quoted YAML scalar (JSON's escapes are a subset of YAML's).
fn quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| format!("\"{}\"", s.replace(['"', '\\'], "")))
}

/// Splits `---\n<front>\n---\n<body>`.
fn split(text: &str) -> Result<(&str, &str), Invalid> {
    let first = text.lines().next().unwrap_or("");
    if first.trim_end() != "---" {
        return Err(Invalid::new("frontmatter", "is missing: the file must start with a `---` line"));
    }
    let rest = &text[first.len()..];
    let rest = rest.strip_prefix("\r\n").or_else(|| rest.strip_prefix('\n')).unwrap_or(rest);
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        let l = line.trim_end();
        if l == "---" || l == "..." {
            return Ok((&rest[..offset], &rest[offset + line.len()..]));
        }
        offset += line.len();
    }
    Err(Invalid::new("frontmatter", "is not closed: no `---` line after it"))
}

/// The `# Title` heading that opens the body, and the content after it.
fn heading(body: &str) -> (Option<String>, String) {
    let trimmed = body.trim_start_matches(['\n', '\r', ' ', '\t']);
    let first = trimmed.lines().next().unwrap_or("");
    match first.strip_prefix("# ") {
        Some(h) if !h.trim().is_empty() => (Some(h.trim().to_string()), normalize_content(&trimmed[first.len()..])),
        _ => (None, normalize_content(body)),
    }
}

fn fields(front: &str) -> Result<(Fields, Vec<String>), Invalid> {
    let lines: Vec<&str> = front.lines().map(|l| l.trim_end_matches('\r')).collect();
    let mut f = Fields::default();
    let mut extra = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let n = i + 1;
        i += 1;
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        if line.starts_with([' ', '\t', '-']) {
            return Err(err(n, "expected `key: value` at the start of the line"));
        }
        let Some((key, value)) = split_key(line) else {
            return Err(err(n, "expected `key: value`"));
        };
        // The nested lines that belong to this key: indented ones and `- ` items.
        let start = i;
        while i < lines.len()
            && (lines[i].starts_with([' ', '\t'])
                || lines[i].starts_with("- ")
                || lines[i] == "-"
                || lines[i].is_empty())
        {
            i += 1;
        }
        let nested = &lines[start..i];
        let slot_list = |slot: &mut Option<Vec<String>>| -> Result<(), Invalid> {
            if slot.is_some() {
                return Err(err(n, &format!("`{key}` appears twice")));
            }
            *slot = Some(list(value, nested, n)?);
            Ok(())
        };
        let scalar_of = |slot: &mut Option<String>| -> Result<(), Invalid> {
            if slot.is_some() {
                return Err(err(n, &format!("`{key}` appears twice")));
            }
            let v = scalar(value, n)?;
            if nested.iter().any(|l| !l.trim().is_empty()) {
                return Err(err(n, &format!("`{key}` must be a single value on its line")));
            }
            *slot = Some(v);
            Ok(())
        };
        match key {
            "type" => scalar_of(&mut f.memory_type)?,
            "title" => scalar_of(&mut f.title)?,
            "created" => scalar_of(&mut f.created)?,
            "updated" => scalar_of(&mut f.updated)?,
            "tags" => slot_list(&mut f.tags)?,
            "links" => slot_list(&mut f.links)?,
            // Where a memory is kept decides these; a copy in the file is not the truth.
            "slug" | "scope" => {}
            _ => {
                extra.push(line.to_string());
                let keep = nested.iter().rposition(|l| !l.trim().is_empty()).map_or(0, |p| p + 1);
                extra.extend(nested[..keep].iter().map(|l| l.to_string()));
            }
        }
    }
    Ok((f, extra))
}

fn err(line: usize, what: &str) -> Invalid {
    Invalid::new("frontmatter", format!("line {line}: {what}"))
}

fn split_key(line: &str) -> Option<(&str, &str)> {
    let colon = line.find(':')?;
    let key = line[..colon].trim();
    let after = &line[colon + 1..];
    if key.is_empty() || !(after.is_empty() || after.starts_with([' ', '\t'])) {
        return None;
    }
    Some((key, after.trim()))
}

/// A list: `[a, "b"]`, a block of `- item` lines, a single scalar, or nothing.
fn list(value: &str, nested: &[&str], n: usize) -> Result<Vec<String>, Invalid> {
    let value = strip_comment(value);
    if let Some(inner) = value.strip_prefix('[') {
        let inner =
            inner.strip_suffix(']').ok_or_else(|| err(n, "a `[` list must close with `]` on the same line"))?.trim();
        if inner.is_empty() {
            return Ok(Vec::new());
        }
        return split_flow(inner)
            .iter()
            .map(|item| scalar(item, n))
            .filter(|r| !matches!(r, Ok(s) if s.is_empty()))
            .collect();
    }
    if !value.is_empty() {
        return Ok(vec![scalar(value, n)?]);
    }
    let mut items = Vec::new();
    for (k, l) in nested.iter().enumerate() {
        let t = l.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let item = t
            .strip_prefix("- ")
            .or_else(|| (t == "-").then_some(""))
            .ok_or_else(|| err(n + k + 1, "expected a `- item` line"))?;
        let item = scalar(item, n + k + 1)?;
        if !item.is_empty() {
            items.push(item);
        }
    }
    Ok(items)
}

/// Splits a flow list's inside at commas that are not inside quotes.
fn split_flow(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    for c in s.chars() {
        match (quote, c) {
            (None, '"' | '\'') => {
                quote = Some(c);
                cur.push(c);
            }
            (Some(q), c) if c == q => {
                quote = None;
                cur.push(c);
            }
            (None, ',') => out.push(std::mem::take(&mut cur).trim().to_string()),
            _ => cur.push(c),
        }
    }
    out.push(cur.trim().to_string());
    out
}

/// One scalar: `"double"` (JSON escapes), `'single'` (`''` for a quote) or plain.
fn scalar(v: &str, n: usize) -> Result<String, Invalid> {
    let v = v.trim();
    if v.starts_with('"') {
        let end = closing_double(v).ok_or_else(|| err(n, "unterminated double-quoted string"))?;
        if !strip_comment(&v[end + 1..]).is_empty() {
            return Err(err(n, "text after a quoted string"));
        }
        return serde_json::from_str::<String>(&v[..=end])
            .map_err(|_| err(n, "unsupported escape in a double-quoted string (use \\\" \\\\ \\n \\t \\uXXXX)"));
    }
    if let Some(inner) = v.strip_prefix('\'') {
        let mut out = String::new();
        let mut chars = inner.chars().peekable();
        while let Some(c) = chars.next() {
            if c == '\'' {
                if chars.peek() == Some(&'\'') {
                    chars.next();
                    out.push('\'');
                    continue;
                }
                let rest: String = chars.collect();
                if !strip_comment(&rest).is_empty() {
                    return Err(err(n, "text after a quoted string"));
                }
                return Ok(out);
            }
            out.push(c);
        }
        return Err(err(n, "unterminated single-quoted string"));
    }
    if v.starts_with(['|', '>']) {
        return Err(err(n, "block scalars (| or >) are not supported here; put the value on one line"));
    }
    if v.starts_with(['{', '&', '*', '!']) {
        return Err(err(n, "flow mappings, anchors, aliases and tags are not supported here"));
    }
    Ok(strip_comment(v).to_string())
}

fn closing_double(v: &str) -> Option<usize> {
    let mut escaped = false;
    for (i, c) in v.char_indices().skip(1) {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '"' => return Some(i),
            _ => {}
        }
    }
    None
}

/// A plain scalar without its ` # comment`.
fn strip_comment(v: &str) -> &str {
    match v.find(" #") {
        Some(i) => v[..i].trim_end(),
        None if v.starts_with('#') => "",
        None => v.trim_end(),
    }
}

#[cfg(test)]
mod tests;
