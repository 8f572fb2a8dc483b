//! The tool calls in a Codex code-mode cell: the model's JavaScript calls the real tools
//! (`await tools.exec_command({cmd: "…", workdir: "…"})`, `tools.update_plan({plan: […]})`),
//! and only the program is recorded. The calls whose argument is a literal are read here; an
//! argument built at run time (a variable, a call, a template with `${…}`) is not known.
//!
//! One pass over the text, strings and comments skipped, so it is linear in the cell's size.

use serde_json::{Map, Number, Value};

/// Nesting read at most in one argument: deeper is not a tool call a model writes.
const MAX_DEPTH: usize = 64;

/// Each `tools.NAME(…)` in `src`, in order: the tool's name and its first argument when that
/// is a literal.
pub(crate) fn tool_calls(src: &str) -> Vec<(String, Option<Value>)> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' | b'\'' | b'`' => i = skip_string(b, i),
            b'/' if b.get(i + 1) == Some(&b'/') => {
                i = b[i..].iter().position(|c| *c == b'\n').map_or(b.len(), |n| i + n)
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i = src[i + 2..].find("*/").map_or(b.len(), |n| i + 2 + n + 2);
            }
            b't' if src[i..].starts_with("tools.") && (i == 0 || !is_ident(b[i - 1])) => {
                let name_at = i + "tools.".len();
                let name_len = b[name_at..].iter().take_while(|c| is_ident(**c)).count();
                let name = &src[name_at..name_at + name_len];
                let mut p = Parser { b, at: name_at + name_len };
                p.space();
                if !name.is_empty() && p.eat(b'(') {
                    p.space();
                    let arg = p.value(0).filter(|_| {
                        p.space();
                        matches!(p.peek(), Some(b')' | b','))
                    });
                    out.push((name.to_string(), arg));
                }
                i = name_at + name_len;
            }
            _ => i += 1,
        }
    }
    out
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'$'
}

/// Where the string literal opening at `i` ends (past its closing quote, or the text's end).
fn skip_string(b: &[u8], i: usize) -> usize {
    let quote = b[i];
    let mut j = i + 1;
    while j < b.len() {
        match b[j] {
            b'\\' => j += 2,
            c if c == quote => return j + 1,
            _ => j += 1,
        }
    }
    b.len()
}

/// A reader of one JavaScript literal: objects (bare, quoted or numeric keys, trailing
/// commas), arrays, strings (`"`, `'`, and backquotes without `${`), numbers, `true`,
/// `false`, `null`, `undefined`. Anything else reads as not a literal.
struct Parser<'a> {
    b: &'a [u8],
    at: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.at).copied()
    }

    fn eat(&mut self, c: u8) -> bool {
        let found = self.peek() == Some(c);
        if found {
            self.at += 1;
        }
        found
    }

    fn space(&mut self) {
        while let Some(c) = self.peek() {
            if c.is_ascii_whitespace() {
                self.at += 1;
            } else if self.b[self.at..].starts_with(b"//") {
                self.at = self.b[self.at..].iter().position(|c| *c == b'\n').map_or(self.b.len(), |n| self.at + n);
            } else if self.b[self.at..].starts_with(b"/*") {
                let rest = &self.b[self.at + 2..];
                self.at = rest.windows(2).position(|w| w == b"*/").map_or(self.b.len(), |n| self.at + 2 + n + 2);
            } else {
                break;
            }
        }
    }

    fn value(&mut self, depth: usize) -> Option<Value> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.space();
        match self.peek()? {
            b'{' => self.object(depth),
            b'[' => self.array(depth),
            b'"' | b'\'' | b'`' => self.string().map(Value::String),
            b'-' | b'0'..=b'9' => self.number(),
            _ => {
                let word = self.ident()?;
                match word.as_str() {
                    "true" => Some(Value::Bool(true)),
                    "false" => Some(Value::Bool(false)),
                    "null" | "undefined" => Some(Value::Null),
                    _ => None,
                }
            }
        }
    }

    fn object(&mut self, depth: usize) -> Option<Value> {
        self.at += 1;
        let mut map = Map::new();
        loop {
            self.space();
            if self.eat(b'}') {
                return Some(Value::Object(map));
            }
            let key = match self.peek()? {
                b'"' | b'\'' | b'`' => self.string()?,
                b'0'..=b'9' => self.number()?.to_string(),
                _ => self.ident()?,
            };
            self.space();
            if !self.eat(b':') {
                // `{cmd}` names a variable: not a literal.
                return None;
            }
            let v = self.value(depth + 1)?;
            map.insert(key, v);
            self.space();
            if !self.eat(b',') {
                self.space();
                return self.eat(b'}').then_some(Value::Object(map));
            }
        }
    }

    fn array(&mut self, depth: usize) -> Option<Value> {
        self.at += 1;
        let mut items = Vec::new();
        loop {
            self.space();
            if self.eat(b']') {
                return Some(Value::Array(items));
            }
            items.push(self.value(depth + 1)?);
            self.space();
            if !self.eat(b',') {
                self.space();
                return self.eat(b']').then_some(Value::Array(items));
            }
        }
    }

    fn ident(&mut self) -> Option<String> {
        let n = self.b[self.at..].iter().take_while(|c| is_ident(**c)).count();
        let word = std::str::from_utf8(&self.b[self.at..self.at + n]).ok()?.to_string();
        self.at += n;
        (!word.is_empty()).then_some(word)
    }

    fn number(&mut self) -> Option<Value> {
        let n = self.b[self.at..]
            .iter()
            .take_while(|c| c.is_ascii_digit() || matches!(c, b'-' | b'+' | b'.' | b'e' | b'E' | b'_'))
            .count();
        let text = std::str::from_utf8(&self.b[self.at..self.at + n]).ok()?.replace('_', "");
        self.at += n;
        if let Ok(i) = text.parse::<i64>() {
            return Some(Value::Number(i.into()));
        }
        Number::from_f64(text.parse().ok()?).map(Value::Number)
    }

    /// A string literal, its escapes read; a template with a substitution is not a literal.
    fn string(&mut self) -> Option<String> {
        let quote = self.b[self.at];
        self.at += 1;
        let mut out: Vec<u8> = Vec::new();
        loop {
            let c = self.peek()?;
            self.at += 1;
            match c {
                c if c == quote => return String::from_utf8(out).ok(),
                b'$' if quote == b'`' && self.peek() == Some(b'{') => return None,
                b'\n' if quote != b'`' => return None,
                b'\\' => {
                    let e = self.peek()?;
                    self.at += 1;
                    match e {
                        b'n' => out.push(b'\n'),
                        b't' => out.push(b'\t'),
                        b'r' => out.push(b'\r'),
                        b'0' => out.push(0),
                        b'b' => out.push(8),
                        b'f' => out.push(12),
                        b'v' => out.push(11),
                        b'\n' => {}
                        b'x' => {
                            let code = self.hex(2)?;
                            out.extend(char::from_u32(code)?.to_string().as_bytes());
                        }
                        b'u' => {
                            let code = if self.eat(b'{') {
                                let n = self.b[self.at..].iter().take_while(|c| c.is_ascii_hexdigit()).count();
                                let code = self.hex(n)?;
                                self.eat(b'}').then_some(code)?
                            } else {
                                let hi = self.hex(4)?;
                                // A surrogate pair written as two escapes.
                                if (0xD800..0xDC00).contains(&hi) && self.b[self.at..].starts_with(b"\\u") {
                                    self.at += 2;
                                    let lo = self.hex(4)?;
                                    0x10000 + ((hi - 0xD800) << 10) + (lo.checked_sub(0xDC00)? & 0x3FF)
                                } else {
                                    hi
                                }
                            };
                            out.extend(char::from_u32(code).unwrap_or('\u{FFFD}').to_string().as_bytes());
                        }
                        other => out.push(other),
                    }
                }
                other => out.push(other),
            }
        }
    }

    fn hex(&mut self, n: usize) -> Option<u32> {
        let digits = std::str::from_utf8(self.b.get(self.at..self.at + n)?).ok()?;
        let code = u32::from_str_radix(digits, 16).ok()?;
        self.at += n;
        Some(code)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn literal_arguments_are_read() {
        // From a Codex Desktop 0.145 code-mode cell (entireio/entire-graph, MIT).
        let src = "const results = await Promise.all([\n  tools.exec_command({\n    cmd: \"rg -n \\\"import\\\\(\\\" internal/sem | head -120\",\n    workdir: \"/Users/thomi/Projects/entire-graph\",\n    yield_time_ms: 10000,\n  }),\n  tools.exec_command({ cmd: 'git status', }),\n]);\ntext(JSON.stringify(results));\n";
        let calls = tool_calls(src);
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[0].0, "exec_command");
        assert_eq!(
            calls[0].1,
            Some(
                json!({"cmd": "rg -n \"import\\(\" internal/sem | head -120", "workdir": "/Users/thomi/Projects/entire-graph", "yield_time_ms": 10000})
            )
        );
        assert_eq!(calls[1].1, Some(json!({"cmd": "git status"})));
    }

    #[test]
    fn what_is_not_a_literal_is_not_guessed() {
        let calls = tool_calls(
            "const c = 'x'; await tools.exec_command({cmd}); await tools.exec_command({cmd: `a ${c}`});\n\
             await tools.exec_command({cmd: c + ' b'}); // tools.exec_command({cmd: 'commented'})\n\
             text('tools.exec_command({cmd: \"quoted\"})'); mytools.exec_command({cmd: 'no'});",
        );
        let names: Vec<_> = calls.iter().map(|(n, a)| (n.as_str(), a.clone())).collect();
        assert_eq!(names, [("exec_command", None), ("exec_command", None), ("exec_command", None)]);
    }

    #[test]
    fn plans_templates_and_escapes() {
        let calls = tool_calls(
            "tools.update_plan({plan: [{step: \"Fix \\u00e9 \\u{1F600} \\uD83D\\uDE00\", status: 'in_progress'}, {\"step\": `two\nlines`, status: \"pending\",},],})",
        );
        assert_eq!(
            calls[0].1,
            Some(
                json!({"plan": [{"step": "Fix é 😀 😀", "status": "in_progress"}, {"step": "two\nlines", "status": "pending"}]})
            )
        );
    }

    #[test]
    fn hostile_cells_end() {
        for src in ["tools.x(".to_string(), "tools.x({a:".repeat(10_000), "[".repeat(100_000), "tools.x(\"".into()] {
            let _ = tool_calls(&src);
        }
        let deep = format!("tools.x({}1{})", "[".repeat(500), "]".repeat(500));
        assert_eq!(tool_calls(&deep)[0].1, None);
    }
}
