//! Whether a path lies inside a project, as the platform's file system compares paths.
//!
//! On Unix that is a plain prefix of components. On Windows an agent's payload may spell the
//! same file `C:\Users\Me\proj\src\a.rs`, `c:/users/me/proj/src/a.rs` or
//! `\\?\C:\Users\Me\proj\src\a.rs`: drive letters and names compare without case, `/` is a
//! separator too, and the verbatim prefix that `canonicalize` adds means nothing more. The
//! Windows rules are plain string functions ([`strip_root_windows`]) so that they are tested
//! on every platform.

use std::io;
use std::path::{Path, PathBuf};

/// The canonical form of `path` (links resolved). On Windows, without the `\\?\` prefix
/// that `std::fs::canonicalize` adds to drive and UNC paths, so that it compares with (and
/// reads like) the paths agents send.
pub fn canonical(path: &Path) -> io::Result<PathBuf> {
    let real = std::fs::canonicalize(path)?;
    #[cfg(windows)]
    if let Some(plain) = real.to_str().and_then(without_verbatim) {
        return Ok(PathBuf::from(plain));
    }
    Ok(real)
}

/// `path` relative to `root` when it lies inside it (`""` for the root itself).
pub fn strip_root(path: &Path, root: &Path) -> Option<PathBuf> {
    #[cfg(windows)]
    {
        strip_root_windows(path.to_str()?, root.to_str()?).map(PathBuf::from)
    }
    #[cfg(not(windows))]
    {
        path.strip_prefix(root).ok().map(Path::to_path_buf)
    }
}

/// Whether `path` is `root` or lies inside it.
pub fn is_within(path: &Path, root: &Path) -> bool {
    strip_root(path, root).is_some()
}

/// `\\?\C:\x` → `C:\x`, `\\?\UNC\server\share\x` → `\\server\share\x`; `None` for other
/// paths (already plain, or a verbatim path with no plain spelling such as `\\?\Volume{…}`).
pub fn without_verbatim(p: &str) -> Option<String> {
    if let Some(rest) = p.strip_prefix(r"\\?\UNC\") {
        return Some(format!(r"\\{rest}"));
    }
    let rest = p.strip_prefix(r"\\?\")?;
    let b = rest.as_bytes();
    (b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':').then(|| rest.to_string())
}

/// A Windows path cut into its anchor (`C:` or `\\server\share`, upper-cased) and its
/// names; `None` when it is not absolute.
fn parts_windows(p: &str) -> Option<(String, Vec<&str>)> {
    let (anchor, rest) = if let Some(r) = p.strip_prefix(r"\\?\UNC\") {
        unc(r)?
    } else {
        let p = p.strip_prefix(r"\\?\").unwrap_or(p);
        let b = p.as_bytes();
        if b.len() >= 3 && b[0].is_ascii_alphabetic() && b[1] == b':' && sep(b[2] as char) {
            (p[..2].to_ascii_uppercase(), &p[3..])
        } else if b.len() >= 2 && sep(b[0] as char) && sep(b[1] as char) {
            unc(&p[2..])?
        } else {
            return None;
        }
    };
    Some((anchor, rest.split(sep).filter(|n| !n.is_empty() && *n != ".").collect()))
}

fn sep(c: char) -> bool {
    c == '\\' || c == '/'
}

/// `server\share\rest` after a UNC path's leading `\\`: the anchor and the rest.
fn unc(r: &str) -> Option<(String, &str)> {
    let mut it = r.splitn(3, sep);
    let (server, share) = (it.next().filter(|s| !s.is_empty())?, it.next().filter(|s| !s.is_empty())?);
    Some((format!(r"\\{}\{}", upper(server), upper(share)), it.next().unwrap_or("")))
}

/// Upper case one character for one, as NTFS's case table maps names (`ß` stays `ß`).
fn upper(s: &str) -> String {
    s.chars()
        .map(|c| {
            let mut u = c.to_uppercase();
            match (u.next(), u.next()) {
                (Some(one), None) => one,
                _ => c,
            }
        })
        .collect()
}

/// [`strip_root`] by Windows' rules: `path` relative to `root` (names joined with `\`), when
/// both are absolute and `root`'s names begin `path`'s, compared without case.
pub fn strip_root_windows(path: &str, root: &str) -> Option<String> {
    let (pa, pn) = parts_windows(path)?;
    let (ra, rn) = parts_windows(root)?;
    if pa != ra || rn.len() > pn.len() || !rn.iter().zip(&pn).all(|(r, p)| upper(r) == upper(p)) {
        return None;
    }
    Some(pn[rn.len()..].join("\\"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_paths_match_as_windows_compares_them() {
        let root = r"C:\Users\Me\proj";
        for p in [
            r"C:\Users\Me\proj\src\main.rs",
            r"c:\users\me\PROJ\src\main.rs",
            "c:/Users/Me/proj/src/main.rs",
            r"\\?\C:\Users\Me\proj\src\main.rs",
            r"C:\Users\Me\proj\.\src\\main.rs",
        ] {
            assert_eq!(strip_root_windows(p, root).as_deref(), Some(r"src\main.rs"), "{p}");
        }
        assert_eq!(strip_root_windows(r"C:\Users\Me\proj", root).as_deref(), Some(""));
        assert_eq!(strip_root_windows(r"\\?\C:\Users\Me\proj\a", r"\\?\c:\users\me\proj").as_deref(), Some("a"));
        for p in [r"D:\Users\Me\proj\a.rs", r"C:\Users\Me\project\a.rs", r"C:\Users\Me", r"proj\a.rs", r"\proj\a.rs"] {
            assert_eq!(strip_root_windows(p, root), None, "{p}");
        }
        // A climb stays in the remainder, for the caller to refuse.
        assert_eq!(strip_root_windows(r"C:\Users\Me\proj\..\x", root).as_deref(), Some(r"..\x"));
    }

    #[test]
    fn unc_paths_and_verbatim_prefixes() {
        let root = r"\\server\share\proj";
        assert_eq!(strip_root_windows(r"\\SERVER\Share\proj\a\b.txt", root).as_deref(), Some(r"a\b.txt"));
        assert_eq!(strip_root_windows(r"\\?\UNC\server\share\proj\a", root).as_deref(), Some("a"));
        assert_eq!(strip_root_windows(r"\\server\other\proj\a", root), None);
        assert_eq!(without_verbatim(r"\\?\C:\x\y").as_deref(), Some(r"C:\x\y"));
        assert_eq!(without_verbatim(r"\\?\UNC\s\sh\x").as_deref(), Some(r"\\s\sh\x"));
        assert_eq!(without_verbatim(r"\\?\Volume{1234}\x"), None);
        assert_eq!(without_verbatim(r"C:\x"), None);
        assert_eq!(without_verbatim("/usr/bin/ccmemd"), None, "a Unix path is left as it is");
    }

    #[test]
    fn names_compare_without_case_beyond_ascii() {
        assert_eq!(strip_root_windows(r"C:\ÜBER\Straße\x", r"c:\über\straße").as_deref(), Some("x"));
        assert_eq!(strip_root_windows(r"C:\Straße\x", r"C:\STRASSE"), None, "one character for one");
        assert_eq!(strip_root_windows(r"C:\Projekt\ä", r"C:\PROJEKT").as_deref(), Some("ä"));
    }

    #[test]
    #[cfg_attr(windows, ignore = "Unix path rules")]
    fn unix_paths_are_plain_prefixes() {
        assert_eq!(strip_root(Path::new("/a/b/c"), Path::new("/a/b")), Some(PathBuf::from("c")));
        assert_eq!(strip_root(Path::new("/a/B/c"), Path::new("/a/b")), None, "case counts on Unix");
        assert!(is_within(Path::new("/a/b"), Path::new("/a/b")));
        assert!(!is_within(Path::new("/a/bc"), Path::new("/a/b")));
    }
}
