//! A second reading of a text, as a person or a program would take it: the rules run on it
//! too, and what they find is masked where it stands in the text itself.
//!
//! - Letters that only look like others are read as those: fullwidth and mathematical forms
//!   by their compatibility decomposition (`ｇｈｐ＿…`, `𝐀𝐊𝐈𝐀…`, NFKC), and in a word that
//!   holds ASCII letters or digits, Cyrillic, Greek and other letters that look like Latin
//!   ones, and accents (`АKIA…` with a Cyrillic `А`, `ghр_…` with a Cyrillic `р`). A word of
//!   Cyrillic or Greek alone is prose and is left as it is.
//! - Escapes that spell a token's letters are decoded: `\u0067hp_…` (JSON, JavaScript),
//!   `\u{67}`, `\x67`, `\U00000067`, `\147` (octal), `&#103;`, `&#x67;`, `%67` (and the
//!   UTF-8 of a look-alike, `%D0%90`), quoted-printable's `=67` — those whose character is a letter, a digit, `_`, `-`
//!   or `.` (the characters no format needs to escape), their backslash escaped in turn or
//!   not (`\\u0067` in JSON inside JSON).
//! - Pieces of one string are joined: `"ghp_abc" + "def…"`, `"AKIA" "…"` (Python's and C's
//!   implicit concatenation, `f"…"` and other prefixes too), `'…' \` and a new line,
//!   `"…" . "…"`, `\"…\" + \"…\"` in JSON, `ghp_abc"def…"` (a shell word and a quoted
//!   one); a word continued on the next line after a `\`; and a token wrapped across lines
//!   (a line ending in a run of a token's characters, the next starting with more, that
//!   together look generated).
//!
//! Each byte of the view knows the range of the text it stands for, in the terms of
//! `super::Track`, so a secret found in the view masks the text it was read from: the
//! original characters, escapes and the glue between the pieces.
//!
//! Building it is linear: one scan finds where the view would differ in a way that can
//! matter (in most texts nowhere, and nothing is allocated); only the lines around those
//! places are built, with a line of context on each side, each group of lines a view read
//! on its own. The scan looks only at the bytes that can start a change; each word is looked
//! at once for whether it mixes scripts, each run of white space once for glue.

use super::values::looks_random;
use std::ops::Range;
use unicode_normalization::char::{decompose_compatible, is_combining_mark};

/// The view of a text: its characters, and where in the text each position stands.
pub(super) struct View {
    pub text: String,
    /// Where a range starting at a position starts in the text (`super::Track::start`).
    pub start: Vec<usize>,
    /// Where a range ending at a position ends in the text (`super::Track::end`).
    pub end: Vec<usize>,
}

/// The view of `text` where it differs from the text in a way the rules could see: the
/// lines that read differently, with a line of context on each side, in groups of lines
/// next to each other (each group read on its own: a match cannot reach across lines the
/// view leaves out). Empty when the text reads as it is written.
///
/// A first scan, which builds nothing, finds where the text reads differently; only the
/// groups of lines around those places are built.
pub(super) fn build(text: &str) -> Vec<View> {
    let mut find = Scanner::new(text, false);
    find.scan(0, text.len());
    let b = text.as_bytes();
    // Where the line before the one holding `at` starts, not before `floor`.
    let back = |at: usize, floor: usize| {
        let mut k = at;
        let mut breaks = 0;
        while k > floor {
            if b[k - 1] == b'\n' {
                breaks += 1;
                if breaks == 2 {
                    break;
                }
            }
            k -= 1;
        }
        k
    };
    // Where the line after the one holding `at` ends (after its line break).
    let forth = |at: usize| {
        let mut k = at;
        let mut breaks = 0;
        while k < b.len() {
            k += 1;
            if b[k - 1] == b'\n' {
                breaks += 1;
                if breaks == 2 {
                    break;
                }
            }
        }
        k
    };
    let mut regions: Vec<Range<usize>> = Vec::new();
    for c in &find.changes {
        match regions.last_mut() {
            // The line after the one the change ends in (a wrapped token's next line, when
            // the change ends at its start) is context.
            Some(last) if c.start <= last.end => {
                if c.end >= last.end {
                    last.end = forth(c.end);
                }
            }
            _ => {
                let floor = regions.last().map_or(0, |l| l.end);
                let from = back(c.start, floor);
                let to = forth(c.end);
                match regions.last_mut() {
                    Some(last) if from <= last.end => last.end = to,
                    _ => regions.push(from..to),
                }
            }
        }
    }
    regions
        .into_iter()
        .filter_map(|r| {
            let mut scan = Scanner::new(text, true);
            scan.scan(r.start, r.end);
            let mut out = scan.out?;
            out.start.push(out.end.last().copied().unwrap_or(r.end));
            Some(View { text: out.text, start: out.start, end: out.end })
        })
        .collect()
}

/// A short string on the stack: what one character folds to.
#[derive(Clone, Copy)]
struct Small {
    buf: [u8; 16],
    len: usize,
}

impl Small {
    fn new() -> Self {
        Self { buf: [0; 16], len: 0 }
    }

    /// Adds `c` (ASCII); false when full.
    fn push(&mut self, c: char) -> bool {
        if !c.is_ascii() || self.len == self.buf.len() {
            return false;
        }
        self.buf[self.len] = c as u8;
        self.len += 1;
        true
    }

    /// Adds `c`, whatever it is; false when full.
    fn push_any(&mut self, c: char) -> bool {
        let n = c.len_utf8();
        if self.len + n > self.buf.len() {
            return false;
        }
        c.encode_utf8(&mut self.buf[self.len..self.len + n]);
        self.len += n;
        true
    }

    fn as_str(&self) -> &str {
        std::str::from_utf8(&self.buf[..self.len]).unwrap_or("")
    }

    /// Whether it holds a character of a token (what makes the view worth reading; not
    /// `.`, or every `…` would be one).
    fn tokenish(&self) -> bool {
        self.buf[..self.len].iter().any(|&b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-'))
    }
}

/// What a character that is not ASCII is read as.
enum Fold {
    /// Itself.
    Keep,
    /// Its compatibility decomposition, all ASCII without marks: `ｇ`, `𝐀`, `ﬁ`, `①`.
    Strong(Small),
    /// A look-alike, or a letter without its accents: read so only in a word that holds
    /// ASCII letters or digits.
    Weak(Small),
    /// A combining mark: dropped in such a word.
    Mark,
}

/// Letters of other scripts that look like Latin letters (Unicode's confusables, for the
/// letters a token is made of), and dashes that look like `-`.
fn confusable(c: char) -> Option<char> {
    Some(match c {
        // Cyrillic.
        'А' => 'A',
        'В' => 'B',
        'Е' => 'E',
        'З' => '3',
        'І' => 'I',
        'Ј' => 'J',
        'К' => 'K',
        'М' => 'M',
        'Н' => 'H',
        'О' => 'O',
        'Р' => 'P',
        'С' => 'C',
        'Т' => 'T',
        'У' | 'Ү' => 'Y',
        'Х' => 'X',
        'Ѕ' => 'S',
        'Һ' => 'H',
        'Ӏ' => 'I',
        'Ԁ' => 'D',
        'Ԍ' => 'G',
        'Ԛ' => 'Q',
        'Ԝ' => 'W',
        'а' => 'a',
        'Ь' | 'ь' => 'b',
        'е' => 'e',
        'о' => 'o',
        'р' => 'p',
        'с' => 'c',
        'у' | 'ү' => 'y',
        'х' => 'x',
        'ѕ' => 's',
        'і' => 'i',
        'ј' => 'j',
        'һ' => 'h',
        'ӏ' => 'l',
        'ԁ' => 'd',
        'ԛ' => 'q',
        'ԝ' => 'w',
        'ѵ' => 'v',
        // Greek.
        'Α' => 'A',
        'Β' => 'B',
        'Ε' => 'E',
        'Ζ' => 'Z',
        'Η' => 'H',
        'Ι' => 'I',
        'Κ' => 'K',
        'Μ' => 'M',
        'Ν' => 'N',
        'Ο' => 'O',
        'Ρ' => 'P',
        'Τ' => 'T',
        'Υ' => 'Y',
        'Χ' => 'X',
        'Ϲ' => 'C',
        'Ϳ' => 'J',
        'α' => 'a',
        'γ' => 'y',
        'ι' => 'i',
        'κ' => 'k',
        'ν' => 'v',
        'ο' => 'o',
        'ρ' => 'p',
        'υ' => 'u',
        'χ' => 'x',
        'ω' => 'w',
        'ϲ' => 'c',
        'ϳ' => 'j',
        // Armenian.
        'Օ' => 'O',
        'Ս' => 'U',
        'օ' => 'o',
        'ս' => 'u',
        'հ' => 'h',
        'ո' => 'n',
        'զ' => 'q',
        'ց' => 'g',
        // Cherokee capitals.
        'Ꭺ' => 'A',
        'Ᏼ' => 'B',
        'Ꮯ' => 'C',
        'Ꭼ' => 'E',
        'Ꮋ' => 'H',
        'Ꭻ' => 'J',
        'Ꮶ' => 'K',
        'Ꮮ' => 'L',
        'Ꮇ' => 'M',
        'Ꮲ' => 'P',
        'Ꮪ' => 'S',
        'Ꭲ' => 'T',
        'Ꮩ' => 'V',
        'Ꮃ' => 'W',
        'Ꮓ' => 'Z',
        // Lisu.
        'ꓮ' => 'A',
        'ꓐ' => 'B',
        'ꓚ' => 'C',
        'ꓓ' => 'D',
        'ꓰ' => 'E',
        'ꓝ' => 'F',
        'ꓖ' => 'G',
        'ꓧ' => 'H',
        'ꓲ' => 'I',
        'ꓙ' => 'J',
        'ꓗ' => 'K',
        'ꓡ' => 'L',
        'ꓟ' => 'M',
        'ꓠ' => 'N',
        'ꓳ' => 'O',
        'ꓑ' => 'P',
        'ꓣ' => 'R',
        'ꓢ' => 'S',
        'ꓔ' => 'T',
        'ꓴ' => 'U',
        'ꓦ' => 'V',
        'ꓪ' => 'W',
        'ꓫ' => 'X',
        'ꓬ' => 'Y',
        'ꓜ' => 'Z',
        // Latin letters that look like plainer ones.
        'ı' | 'ɩ' => 'i',
        'ȷ' => 'j',
        'ɑ' => 'a',
        'ɡ' => 'g',
        'ǀ' => 'l',
        'ʟ' => 'L',
        // Dashes and minus signs.
        '\u{2010}' | '\u{2011}' | '\u{2012}' | '\u{2013}' | '\u{2212}' | '\u{2043}' => '-',
        _ => return None,
    })
}

/// How the character `c` (not ASCII) is read.
/// Whether `c` reads as itself, known at once: kana, CJK ideographs, Hangul syllables (not
/// the squared Latin abbreviations of U+3300–U+33FF, `㎏`), dashes, quotes and bullets
/// of prose, arrows, box drawing, shapes and dingbats (`✓`), and the letters of the basic
/// Cyrillic and Greek alphabets that look like no Latin one. None of them decomposes.
fn inert(c: char) -> bool {
    match c {
        '\u{3040}'..='\u{31FF}' | '\u{3400}'..='\u{9FFF}' | '\u{AC00}'..='\u{D7A3}' => true,
        '\u{2014}'..='\u{2015}' | '\u{2018}'..='\u{2023}' | '\u{2190}'..='\u{21FF}' | '\u{2500}'..='\u{27BF}' => true,
        _ => basic_letter(c) && confusable(c).is_none(),
    }
}

/// A letter of the basic Cyrillic or Greek alphabet (none of them decomposes).
fn basic_letter(c: char) -> bool {
    matches!(c, '\u{0410}'..='\u{044F}' | '\u{0391}'..='\u{03A9}' | '\u{03B1}'..='\u{03C9}')
}

fn fold(c: char) -> Fold {
    if inert(c) {
        return Fold::Keep;
    }
    if basic_letter(c) {
        let mut small = Small::new();
        return match confusable(c) {
            Some(l) if small.push(l) => Fold::Weak(small),
            _ => Fold::Keep,
        };
    }
    if is_combining_mark(c) {
        return Fold::Mark;
    }
    let mut small = Small::new();
    let (mut marks, mut ascii, mut changed, mut confused) = (false, true, false, false);
    decompose_compatible(c, |d| {
        if d != c {
            changed = true;
        }
        if is_combining_mark(d) {
            marks = true;
        } else if d.is_ascii() {
            ascii &= small.push(d);
        } else if let Some(l) = confusable(d) {
            confused = true;
            ascii &= small.push(l);
        } else {
            ascii = false;
        }
    });
    if !ascii || small.len == 0 || (!changed && !confused) {
        return Fold::Keep;
    }
    if marks || confused {
        Fold::Weak(small)
    } else {
        Fold::Strong(small)
    }
}

/// What a decoded escape stands for: a token's character (an ASCII letter or digit, `_`,
/// `-`, `.`, or a character that reads as one); a letter of any script (`\u5bc6\u7801`,
/// `&#1087;…`: a password's name in Chinese or Russian, escaped as JSON or HTML writes it),
/// or the full-width colon and equals sign that follow such a name; nothing for an invisible
/// character (`ghp_…\u00ad…`: a soft hyphen escaped inside a token).
fn escaped(c: char) -> Option<Small> {
    let mut s = Small::new();
    if c.is_ascii() {
        s.push(c);
        // `/` too: JSON may escape it (`https:\/\/user:pass@host`, PHP's `json_encode`).
        return (s.tokenish() || c == '.' || c == '/').then_some(s);
    }
    if crate::printable::is_invisible(c) || is_combining_mark(c) {
        return Some(s);
    }
    match fold(c) {
        Fold::Strong(f) | Fold::Weak(f) if f.len == 1 && (f.tokenish() || f.buf[0] == b'.') => Some(f),
        _ if c.is_alphanumeric() || matches!(c, '：' | '＝') => s.push_any(c).then_some(s),
        _ => None,
    }
}

/// Whether the character before `from` or after `to` (an escape's bounds in `text`), as
/// written or escaped in turn, is an ASCII letter or digit.
fn next_to_latin(text: &str, from: usize, to: usize) -> bool {
    let latin = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
    let after = escape_at(text, to).map(|(c, _)| c).or_else(|| text[to..].chars().next());
    latin(after) || latin(before_escape(text, from))
}

/// The character that ends just before `at`: an escape's (`\uXXXX`, `&#…;`, `%XX`) when
/// one ends there, else the one written.
fn before_escape(text: &str, at: usize) -> Option<char> {
    let head = &text[..at];
    for back in [6, 4, 3] {
        if let Some(start) = at.checked_sub(back).filter(|&s| head.is_char_boundary(s)) {
            if let Some((c, end)) = escape_at(text, start) {
                if end == at {
                    return Some(c);
                }
            }
        }
    }
    if let Some(amp) = head.rfind("&#").filter(|&k| at - k <= 10 && head.ends_with(';')) {
        if let Some((c, end)) = escape_at(text, amp) {
            if end == at {
                return Some(c);
            }
        }
    }
    head.chars().next_back()
}

/// The characters of a token, for the runs that glue and wraps join.
/// Whether a list around `at` is joined into one string (`"".join([…])`, `[…].join("")`):
/// `join` on the same line within a short reach, so that lists of words and arguments in code
/// are read as they are.
fn joins_near(b: &[u8], at: usize) -> bool {
    let line = |r: &[u8]| r.windows(4).any(|w| w == b"join");
    let from = at.saturating_sub(REACH);
    let before = &b[from..at];
    let before = before.iter().rposition(|&c| c == b'\n').map_or(before, |n| &before[n + 1..]);
    let after = &b[at..(at + REACH).min(b.len())];
    let after = after.iter().position(|&c| c == b'\n').map_or(after, |n| &after[..n]);
    line(before) || line(after)
}

/// How far [`joins_near`] looks on each side.
const REACH: usize = 160;

fn token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'+' | b'/')
}

/// Whether `c` belongs to a word, for whether a word mixes scripts.
fn word_char(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_alphanumeric() || c == '_' || c == '-';
    }
    inert(c) || confusable(c).is_some() || c.is_alphanumeric() || !matches!(fold(c), Fold::Keep)
}

/// Whether `c` makes a word mixed: an ASCII letter or digit, or a character whose
/// compatibility decomposition is one (`ｇ`, `𝐀`; a look-alike is not one).
fn latin(c: char) -> bool {
    c.is_ascii_alphanumeric()
        || (!c.is_ascii() && !inert(c) && confusable(c).is_none() && matches!(fold(c), Fold::Strong(s) if s.tokenish()))
}

fn hex(b: &[u8]) -> Option<u32> {
    if b.is_empty() || b.len() > 8 {
        return None;
    }
    b.iter().try_fold(0u32, |acc, &d| Some(acc * 16 + char::from(d).to_digit(16)?))
}

/// The escape at `i` (`\uXXXX`, `\u{…}`, `\xHH`, `\UXXXXXXXX`, `&#…;`, `%HH`, a UTF-8
/// sequence of `%HH`): the character and where the escape ends.
fn escape_at(text: &str, i: usize) -> Option<(char, usize)> {
    let b = text.as_bytes();
    let at = |k: usize| b.get(k).copied();
    let fixed = |from: usize, n: usize| -> Option<u32> { b.get(from..from + n).and_then(hex) };
    match (at(i)?, at(i + 1)?) {
        (b'\\', b'u') if at(i + 2) == Some(b'{') => {
            let close = (i + 3..(i + 10).min(b.len())).find(|&k| b[k] == b'}')?;
            Some((char::from_u32(hex(&b[i + 3..close])?)?, close + 1))
        }
        (b'\\', b'u') => {
            let v = fixed(i + 2, 4)?;
            if (0xD800..0xDC00).contains(&v) && at(i + 6) == Some(b'\\') && at(i + 7) == Some(b'u') {
                let lo = fixed(i + 8, 4)?;
                if (0xDC00..0xE000).contains(&lo) {
                    return Some((char::from_u32(0x10000 + ((v - 0xD800) << 10) + (lo - 0xDC00))?, i + 12));
                }
            }
            Some((char::from_u32(v)?, i + 6))
        }
        (b'\\', b'x') => Some((char::from_u32(fixed(i + 2, 2)?)?, i + 4)),
        (b'\\', b'/') => Some(('/', i + 2)),
        // Octal, as C, Python and a shell's `$'…'` write it: `\147`.
        (b'\\', d @ b'0'..=b'3') => {
            let (d2, d3) = (at(i + 2)?, at(i + 3)?);
            if !matches!(d2, b'0'..=b'7') || !matches!(d3, b'0'..=b'7') {
                return None;
            }
            let v = u32::from(d - b'0') * 64 + u32::from(d2 - b'0') * 8 + u32::from(d3 - b'0');
            Some((char::from_u32(v)?, i + 4))
        }
        (b'\\', b'U') => Some((char::from_u32(fixed(i + 2, 8)?)?, i + 10)),
        (b'&', b'#') => {
            let (from, radix) = if matches!(at(i + 2), Some(b'x' | b'X')) { (i + 3, 16) } else { (i + 2, 10) };
            let close = (from..(from + 8).min(b.len())).find(|&k| b[k] == b';')?;
            let v = u32::from_str_radix(text.get(from..close)?, radix).ok()?;
            Some((char::from_u32(v)?, close + 1))
        }
        (b'%', _) => {
            let first = fixed(i + 1, 2)? as u8;
            let n = match first {
                0..=0x7F => return Some((char::from(first), i + 3)),
                0xC0..=0xDF => 2,
                0xE0..=0xEF => 3,
                0xF0..=0xF7 => 4,
                _ => return None,
            };
            let mut bytes = [first, 0, 0, 0];
            for (k, byte) in bytes.iter_mut().enumerate().take(n).skip(1) {
                let p = i + 3 * k;
                if at(p) != Some(b'%') {
                    return None;
                }
                *byte = fixed(p + 1, 2)? as u8;
            }
            let c = std::str::from_utf8(&bytes[..n]).ok()?.chars().next()?;
            Some((c, i + 3 * n))
        }
        // Quoted-printable (mail, MIME parts): `=67`, in capitals, where a word starts or
        // after another such escape (`=3D=67hp_…`); after a letter or a digit, `=` assigns
        // (`key=41`).
        (b'=', _) => {
            let h = b.get(i + 1..i + 3)?;
            if !h.iter().all(|c| c.is_ascii_digit() || (b'A'..=b'F').contains(c)) {
                return None;
            }
            let after_escape = i >= 3 && b[i - 3] == b'=' && hex(&b[i - 2..i]).is_some();
            if i > 0 && b[i - 1].is_ascii_alphanumeric() && !after_escape {
                return None;
            }
            let v = hex(h)?;
            (0x21..0x7F).contains(&v).then(|| (char::from(v as u8), i + 3))
        }
        _ => None,
    }
}

/// What the view is being built into.
struct Out {
    text: String,
    start: Vec<usize>,
    end: Vec<usize>,
}

struct Scanner<'a> {
    text: &'a str,
    /// `None` while only finding out whether the view would differ.
    out: Option<Out>,
    /// Bytes of token characters at the end of what was read so far.
    run: usize,
    /// The word a look-alike was last seen in: where it ends, and whether it mixes scripts.
    word_end: usize,
    word_mixed: bool,
    /// Where the text reads differently in a way that matters (while finding them).
    changes: Vec<Range<usize>>,
    /// Whether the change being read matters.
    mark: bool,
}

/// Longer runs are not joined.
const MAX_RUN: usize = 4096;

/// How much of each side of a line break the check for a wrapped token reads.
const WRAP_LOOK: usize = 64;

impl<'a> Scanner<'a> {
    fn new(text: &'a str, build: bool) -> Self {
        let out = build.then(|| Out { text: String::new(), start: Vec::new(), end: Vec::new() });
        Self { text, out, run: 0, word_end: 0, word_mixed: false, changes: Vec::new(), mark: false }
    }

    /// Reads `from..to` of the text (from a line's start; a change that starts before `to`
    /// may end after it). Only the bytes that can start a change are looked at: quotes,
    /// `\\`, `&`, `%`, line breaks and what is not ASCII; what lies between them, and a word
    /// that mixes no scripts, is taken as it is, at once. While finding the changes
    /// (nothing built), each is noted in `changes`.
    fn scan(&mut self, from: usize, mut to: usize) {
        let (text, b) = (self.text, self.text.as_bytes());
        if let Some(out) = &mut self.out {
            out.end.push(from);
        }
        let mut i = from;
        while i < to {
            let k = b[i..to]
                .iter()
                .position(|&c| matches!(c, b'"' | b'\'' | b'`' | b'\\' | b'&' | b'%' | b'=' | b'\n' | b'\r' | 0x80..))
                .unwrap_or(to - i);
            if k > 0 {
                self.same(i..i + k);
                i += k;
                continue;
            }
            let c = b[i];
            self.mark = false;
            let next = match c {
                b'"' | b'\'' | b'`' => self.glue(i),
                b'\\' => self.glue(i).or_else(|| self.continuation(i)).or_else(|| self.escape(i)),
                b'&' | b'%' | b'=' => self.escape(i),
                b'\n' | b'\r' => self.wrap(i),
                _ => self.fold_at(i),
            };
            if let Some(n) = next {
                if self.mark && self.out.is_none() {
                    self.changes.push(i..n);
                }
                // A change read past the end goes on to the end of its line.
                if n >= to && self.out.is_some() {
                    to = b[n.min(b.len())..].iter().position(|&c| c == b'\n').map_or(b.len(), |k| n + k + 1);
                }
                i = n;
                continue;
            }
            // Backslashes that start nothing go at once. In a word that mixes no scripts,
            // nothing is read differently up to its end.
            let len = if c == b'\\' {
                b[i..to].iter().take_while(|&&c| c == b'\\').count()
            } else if c >= 0x80 && self.word_end > i && !self.word_mixed {
                self.word_end - i
            } else if c >= 0x80 {
                // A run of characters that read as themselves goes at once.
                text[i..to].char_indices().find(|&(k, ch)| k > 0 && !inert(ch)).map_or(to - i, |(k, _)| k)
            } else {
                text[i..].chars().next().map_or(1, char::len_utf8)
            };
            self.same(i..i + len);
            i += len;
        }
    }

    /// Takes `r` of the text as it is.
    fn same(&mut self, r: Range<usize>) {
        let s = &self.text[r.clone()];
        let tail = s.bytes().rev().take_while(|&c| token_byte(c)).count();
        self.run = if tail == s.len() { self.run + tail } else { tail };
        let Some(out) = &mut self.out else { return };
        out.text.push_str(s);
        if s.is_ascii() {
            out.start.extend(r.clone());
            out.end.extend(r.start + 1..=r.end);
            return;
        }
        for (k, ch) in s.char_indices() {
            let (from, to) = (r.start + k, r.start + k + ch.len_utf8());
            for _ in from..to {
                out.start.push(from);
                out.end.push(to);
            }
        }
    }

    /// Notes that the change being read matters (the view is worth reading for it).
    fn changed(&mut self) {
        self.mark = true;
    }

    /// Appends `s`, read from `orig` of the text.
    fn emit(&mut self, s: &str, orig: Range<usize>) {
        for &byte in s.as_bytes() {
            self.run = if token_byte(byte) { self.run + 1 } else { 0 };
        }
        if let Some(out) = &mut self.out {
            out.text.push_str(s);
            for _ in 0..s.len() {
                out.start.push(orig.start);
                out.end.push(orig.end);
            }
        }
    }

    /// The run of token characters read last (in detection, nothing was changed in it).
    fn last_run(&self, i: usize) -> &str {
        match &self.out {
            Some(out) => &out.text[out.text.len() - self.run..],
            // While finding, what was read before may differ from the text: the text's
            // own token characters before `i` stand for it.
            None => {
                let b = self.text.as_bytes();
                let n = b[..i].iter().rev().take(self.run).take_while(|&&c| token_byte(c)).count();
                &self.text[i - n..i]
            }
        }
    }

    /// A quote that ends one piece of a string and the quote that starts the next, with
    /// what joins them between (`" + "`, `" "`, `' \⏎ '`, `" . "`): skipped, when both
    /// pieces have a token's character next to it. Where the view goes on.
    fn glue(&mut self, i: usize) -> Option<usize> {
        if self.run == 0 {
            return None;
        }
        let b = self.text.as_bytes();
        // A quote, escaped any number of times (`"`, `\"`, `\\\"` in JSON inside JSON).
        let quote = |k: usize| -> Option<usize> {
            let k = k + b[k.min(b.len())..].iter().take_while(|&&c| c == b'\\').count();
            matches!(b.get(k), Some(b'"' | b'\'' | b'`')).then_some(k + 1)
        };
        let space = |mut k: usize| {
            while matches!(b.get(k), Some(b' ' | b'\t' | b'\r' | b'\n')) {
                k += 1;
            }
            k
        };
        let close = quote(i)?;
        // A quote inside a word, between two runs of a token's characters (`ghp_abc"def…"`,
        // shell's way of joining a bare word and a quoted one): skipped. Not in
        // words of prose (`don't`, `rock'n'roll`): both runs are four or more.
        if b[i] != b'\\' && self.run >= 4 && b[close..].iter().take(4).filter(|&&c| token_byte(c)).count() == 4 {
            self.changed();
            return Some(close);
        }
        let mut k = space(close);
        let op = match (b.get(k), b.get(k + 1)) {
            (Some(b'.'), Some(b'.')) | (Some(b'|'), Some(b'|')) => 2,
            (Some(b'+' | b'.' | b'&' | b'~'), _) => 1,
            // Items of a list joined (`"".join(["ghp_abc", "def…"])`, `["AKIA", "…"].join("")`):
            // only pieces of four or more of a token's characters each, so that arguments
            // and lists of words read as they are.
            (Some(b','), _) if self.run >= 4 && joins_near(b, k) => 1,
            (Some(b'\\'), Some(b'\n')) => 2,
            (Some(b'\\'), Some(b'\r')) if b.get(k + 2) == Some(&b'\n') => 3,
            _ => 0,
        };
        k = space(k + op);
        // The next piece may have a prefix: `f"…"`, `b'…'`, `r"…"`, `@"…"`, `$"…"`.
        let prefix = b[k..].iter().take(2).take_while(|c| b"rRbBfFuU@$".contains(c)).count();
        let after = quote(k + prefix).or_else(|| quote(k))?;
        if b[close..k].contains(&b',') && b[after..].iter().take(4).filter(|&&c| token_byte(c)).count() < 4 {
            return None;
        }
        match b.get(after) {
            Some(&n) if !n.is_ascii_whitespace() && !matches!(n, b'"' | b'\'' | b'`') => {
                self.changed();
                Some(after)
            }
            _ => None,
        }
    }

    /// A word continued on the next line after a `\` (`ghp_abc\⏎def`): the `\`, the line
    /// break and the next line's indentation are skipped.
    fn continuation(&mut self, i: usize) -> Option<usize> {
        if self.run == 0 {
            return None;
        }
        let b = self.text.as_bytes();
        let mut k = match (b.get(i + 1), b.get(i + 2)) {
            (Some(b'\n'), _) => i + 2,
            (Some(b'\r'), Some(b'\n')) => i + 3,
            _ => return None,
        };
        while matches!(b.get(k), Some(b' ' | b'\t')) {
            k += 1;
        }
        if !b.get(k).is_some_and(|&n| token_byte(n)) {
            return None;
        }
        self.changed();
        Some(k)
    }

    /// A token wrapped at the end of a line: the line ends in a run of a token's
    /// characters, the next (after its indentation) starts with more, and together they
    /// look generated. The line break and the indentation are skipped.
    fn wrap(&mut self, i: usize) -> Option<usize> {
        let b = self.text.as_bytes();
        let mut k = match (b[i], b.get(i + 1)) {
            (b'\n', _) => i + 1,
            (b'\r', Some(b'\n')) => i + 2,
            _ => return None,
        };
        if self.run < 4 || self.run > MAX_RUN {
            return None;
        }
        while matches!(b.get(k), Some(b' ' | b'\t')) {
            k += 1;
        }
        let right = b[k..].iter().take(MAX_RUN).take_while(|&&c| token_byte(c)).count();
        // What meets at the break decides (a bounded part of each side: the check stays
        // linear however many lines a run goes on for).
        let left = self.last_run(i);
        // An AWS access key id (`AKIA` and 16) is shorter than the runs joined otherwise.
        let aws = ["AKIA", "ASIA", "AIDA", "AROA", "AGPA", "ANPA", "ANVA", "AIPA"].iter().any(|p| left.starts_with(p));
        if right < 4 || self.run + right < if aws { 20 } else { 24 } {
            return None;
        }
        let left = &left[left.len().saturating_sub(WRAP_LOOK)..];
        let mut joined = String::with_capacity(2 * WRAP_LOOK);
        joined.push_str(left);
        joined.push_str(&self.text[k..k + right.min(WRAP_LOOK)]);
        if !looks_random(&joined) {
            return None;
        }
        self.changed();
        Some(k)
    }

    /// An escape that spells a token's character: read as that character. Its backslash may
    /// be escaped in turn (`\\u0067` in JSON inside JSON): the escape is read through them.
    fn escape(&mut self, i: usize) -> Option<usize> {
        let slashes = self.text.as_bytes()[i..].iter().take_while(|&&c| c == b'\\').count();
        let (c, end) = escape_at(self.text, i + slashes.saturating_sub(1))?;
        // A Cyrillic or Greek letter among letters of its own script is a word of that
        // language (`\u043f\u0430\u0440\u043e\u043b\u044c`: "password"), read as written; next
        // to a Latin letter or digit, a look-alike (`\u0410KIA…`).
        let s = if basic_letter(c) && !next_to_latin(self.text, i, end) {
            let mut s = Small::new();
            s.push_any(c);
            s
        } else {
            escaped(c)?
        };
        self.changed();
        self.emit(s.as_str(), i..end);
        Some(end)
    }

    /// A character that is not ASCII, read as what it looks like (see [`Fold`]).
    fn fold_at(&mut self, i: usize) -> Option<usize> {
        let c = self.text[i..].chars().next()?;
        let end = i + c.len_utf8();
        match fold(c) {
            Fold::Keep => None,
            // Fullwidth punctuation (`：`, `，` in Chinese prose) is read as ASCII's, but
            // alone it is no reason to read the text again.
            Fold::Strong(s) if self.out.is_none() && !s.tokenish() => None,
            Fold::Strong(s) => {
                if s.tokenish() {
                    self.changed();
                }
                self.emit(s.as_str(), i..end);
                Some(end)
            }
            Fold::Weak(s) if self.mixed(i) => {
                self.changed();
                self.emit(s.as_str(), i..end);
                Some(end)
            }
            Fold::Mark if self.mixed(i) => {
                self.changed();
                self.emit("", i..end);
                Some(end)
            }
            Fold::Weak(_) | Fold::Mark => None,
        }
    }

    /// Whether the word around `i` holds an ASCII letter or digit, or a character that
    /// reads as one by its compatibility decomposition. Each word is looked at once.
    fn mixed(&mut self, i: usize) -> bool {
        if i < self.word_end {
            return self.word_mixed;
        }
        let t = self.text;
        let start = t[..i].char_indices().rev().take_while(|&(_, c)| word_char(c)).last().map_or(i, |(k, _)| k);
        let end = t[i..].char_indices().find(|&(_, c)| !word_char(c)).map_or(t.len(), |(k, _)| i + k);
        self.word_end = end;
        self.word_mixed = t[start..end].chars().any(latin);
        self.word_mixed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(text: &str) -> Option<String> {
        let views = build(text);
        (!views.is_empty()).then(|| views.iter().map(|v| v.text.as_str()).collect::<Vec<_>>().join("|"))
    }

    #[test]
    fn lookalikes_are_read_as_latin_in_mixed_words_only() {
        assert_eq!(view("ｇｈｐ＿abc").as_deref(), Some("ghp_abc"));
        assert_eq!(view("key АKIA0189 here").as_deref(), Some("key AKIA0189 here"));
        assert_eq!(view("A\u{301}KIA").as_deref(), Some("AKIA"));
        // Prose in other scripts is no reason to read again.
        assert_eq!(view("тест прошёл — 完成了，ok"), None);
        assert_eq!(view("✓ done"), None);
    }

    #[test]
    fn escapes_and_glue_are_read_through() {
        assert_eq!(view(r#""\u0067hp_x""#).as_deref(), Some(r#""ghp_x""#));
        assert_eq!(view("&#103;hp %67hp \\x67hp \\u{67}hp").as_deref(), Some("ghp ghp ghp ghp"));
        assert_eq!(view(r#""\u0022""#), None, "an escaped quote is not a token's");
        assert_eq!(view(r#"\\u0067"#).as_deref(), Some("g"), "read through an escaped backslash");
        assert_eq!(view(r#"\\\\ \\n"#), None, "backslashes alone");
        assert_eq!(view("$'\\147hp'").as_deref(), Some("$'ghp'"));
        assert_eq!(view(r#"T=ghp_abc"defg""#).as_deref(), Some(r#"T=ghp_abcdefg""#));
        assert_eq!(view(r#"k = "AKIA" f"Q4X""#).as_deref(), Some(r#"k = "AKIAQ4X""#));
        assert_eq!(view("don't, it's rock'n'roll"), None);
        assert_eq!(view(r#"t = "ghp_abc" + "def""#).as_deref(), Some(r#"t = "ghp_abcdef""#));
        assert_eq!(view("k = ('AKIA' 'Q4X')").as_deref(), Some("k = ('AKIAQ4X')"));
        assert_eq!(view("k = 'sk-ant' \\\n  'api03'").as_deref(), Some("k = 'sk-antapi03'"));
        assert_eq!(view(r#"x = "" + "y", f("a", "b"), "a": "b""#), None);
        assert_eq!(view("ghp_abc\\\ndef").as_deref(), Some("ghp_abcdef"));
        assert_eq!(view(r#"t = "".join(["ghp_abc", "defg"])"#).as_deref(), Some(r#"t = "".join(["ghp_abcdefg"])"#));
        assert_eq!(view(r#"f("a", "b"), ["red", "blue"]"#), None, "short items are read as they are");
    }

    #[test]
    fn wrapped_tokens_are_joined_and_lines_of_words_are_not() {
        assert_eq!(
            view("ghp_0123456789abcdefghij\nABCDEFGHIJ012345 x").as_deref(),
            Some("ghp_0123456789abcdefghijABCDEFGHIJ012345 x")
        );
        assert_eq!(view("fix the failing test\nand run cargo test again"), None);
        assert_eq!(view("foo_bar_baz_something\n    another_identifier"), None);
    }

    #[test]
    fn positions_map_back_to_the_text() {
        let text = "k АKIA";
        let v = build(text).pop().unwrap();
        assert_eq!(v.text, "k AKIA");
        // `A` in the view is `А` (two bytes) in the text.
        assert_eq!((v.start[2], v.end[3]), (2, 4));
        assert_eq!(v.end[v.text.len()], text.len());
    }
}
