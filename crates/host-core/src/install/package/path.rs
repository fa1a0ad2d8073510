//! Package-relative paths: validation, the reference CLI's file order, case-collision checks.
//!
//! A package path is a `/`-separated, non-empty sequence of components, none of which is empty,
//! `.` or `..`, and which contains no backslash, NUL or control character, and no invisible
//! Unicode character: format characters (general category Cf: bidi overrides and isolates,
//! zero-width spaces and joiners, the byte-order mark, soft hyphens) and separators other than
//! the ASCII space (Zs, Zl, Zp: no-break and other spaces, line and paragraph separators), which
//! make one name display as another. Absolute paths and Windows drive prefixes are rejected.
//! These rules hold for every source (folder or zip).

use std::cmp::Ordering;
use std::collections::HashMap;

use crate::foundation::error::{ErrorCode, HostError, HostResult};

/// Validates one package path (as found in a zip or built from a folder walk).
pub fn validate(raw: &str) -> HostResult<()> {
    let fail = |code, why: &str| {
        Err(HostError::new(code, format!("package path {raw:?} {why}")).with("path", raw))
    };
    if raw.is_empty() {
        return fail(ErrorCode::ArchiveInvalidName, "is empty");
    }
    if raw.starts_with('/') || raw.starts_with('\\') || has_drive_prefix(raw) {
        return fail(ErrorCode::ArchiveAbsolutePath, "is absolute");
    }
    if raw.split(['/', '\\']).any(|c| c == "..") {
        return fail(
            ErrorCode::ArchivePathTraversal,
            "escapes the package root (..)",
        );
    }
    if raw.contains('\\') {
        return fail(ErrorCode::ArchiveInvalidName, "contains a backslash");
    }
    if raw.chars().any(|c| c.is_control()) {
        return fail(
            ErrorCode::ArchiveInvalidName,
            "contains a control character",
        );
    }
    if let Some(c) = raw.chars().find(|&c| is_invisible(c)) {
        return Err(HostError::new(
            ErrorCode::ArchiveInvalidName,
            format!(
                "package path {raw:?} contains the invisible or spacing character U+{:04X}",
                u32::from(c)
            ),
        )
        .with("path", raw)
        .with("codePoint", format!("U+{:04X}", u32::from(c))));
    }
    if raw.split('/').any(|c| c.is_empty() || c == ".") {
        return fail(
            ErrorCode::ArchiveInvalidName,
            "has an empty or '.' component",
        );
    }
    Ok(())
}

/// A format character (Cf) or a separator (Zl, Zp, Zs) other than the ASCII space.
fn is_invisible(c: char) -> bool {
    use unicode_general_category::{get_general_category, GeneralCategory as G};
    c != ' '
        && matches!(
            get_general_category(c),
            G::Format | G::LineSeparator | G::ParagraphSeparator | G::SpaceSeparator
        )
}

fn has_drive_prefix(raw: &str) -> bool {
    let b = raw.as_bytes();
    b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':'
}

/// Folders the reference CLI skips at any depth when hashing; AppHost neither hashes nor
/// installs them.
pub fn is_excluded_dir_name(name: &str) -> bool {
    name == "node_modules" || name == ".git"
}

/// The reference CLI's order: a depth-first walk sorting each directory's entry names by UTF-16
/// code units. For full paths that is a component-wise comparison.
pub fn cli_order(a: &str, b: &str) -> Ordering {
    let mut ca = a.split('/');
    let mut cb = b.split('/');
    loop {
        match (ca.next(), cb.next()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(x), Some(y)) => match x.encode_utf16().cmp(y.encode_utf16()) {
                Ordering::Equal => continue,
                other => return other,
            },
        }
    }
}

/// Checks a set of file paths for exact duplicates, file/directory clashes and names that
/// differ only by case or Unicode normalization form (`é` precomposed or decomposed): such
/// names collide on case-insensitive or normalization-insensitive file systems (macOS, Windows).
/// Case is compared with full Unicode case folding (`ß` matches `ss`, `ﬁ` matches `fi`, the
/// Kelvin sign matches `k`), not by lowercasing.
pub fn check_collisions<'a>(paths: impl IntoIterator<Item = &'a str>) -> HostResult<()> {
    // folded prefix -> (original prefix, is_file)
    let mut seen: HashMap<String, (&'a str, bool)> = HashMap::new();
    for path in paths {
        let mut end = 0;
        let comps: Vec<&str> = path.split('/').collect();
        for (i, comp) in comps.iter().enumerate() {
            end += comp.len() + usize::from(i > 0);
            let prefix = &path[..end];
            let is_file = i + 1 == comps.len();
            let folded = fold(prefix);
            match seen.get(&folded) {
                None => {
                    seen.insert(folded, (prefix, is_file));
                }
                Some(&(orig, orig_is_file)) => {
                    if orig != prefix {
                        return Err(HostError::new(
                            ErrorCode::ArchiveCaseCollision,
                            format!("{orig:?} and {prefix:?} differ only by case"),
                        )
                        .with("path", prefix)
                        .with("collidesWith", orig));
                    }
                    if is_file || orig_is_file {
                        let why = if is_file && orig_is_file {
                            "appears twice"
                        } else {
                            "is both a file and a directory"
                        };
                        return Err(HostError::new(
                            ErrorCode::ArchiveDuplicateEntry,
                            format!("{prefix:?} {why}"),
                        )
                        .with("path", prefix));
                    }
                }
            }
        }
    }
    Ok(())
}

/// Case- and normalization-insensitive form of a path: Unicode's canonical caseless key
/// (NFD, full default case folding, NFD again; Unicode 16 §3.13, D145).
fn fold(path: &str) -> String {
    use caseless::Caseless;
    use unicode_normalization::UnicodeNormalization;
    path.chars().nfd().default_case_fold().nfd().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(r: HostResult<()>) -> Option<&'static str> {
        r.err().map(|e| e.code.as_str())
    }

    #[test]
    fn rejects_escapes_and_odd_names() {
        assert_eq!(code(validate("../x")), Some("archive.path_traversal"));
        assert_eq!(code(validate("a/../../x")), Some("archive.path_traversal"));
        assert_eq!(code(validate("a\\..\\x")), Some("archive.path_traversal"));
        assert_eq!(code(validate("/etc/passwd")), Some("archive.absolute_path"));
        assert_eq!(code(validate("C:/x")), Some("archive.absolute_path"));
        assert_eq!(code(validate("a\\b")), Some("archive.invalid_name"));
        assert_eq!(code(validate("a//b")), Some("archive.invalid_name"));
        assert_eq!(code(validate("./a")), Some("archive.invalid_name"));
        assert_eq!(code(validate("a\u{0}b")), Some("archive.invalid_name"));
        assert_eq!(code(validate("a\nb")), Some("archive.invalid_name"));
        assert_eq!(code(validate("")), Some("archive.invalid_name"));
        assert_eq!(code(validate("dist/ui/index.html")), None);
        assert_eq!(code(validate("..hidden/x")), None);
    }

    #[test]
    fn rejects_invisible_and_spacing_characters() {
        for bad in [
            "dist/\u{202E}lmth.exe", // right-to-left override
            "dist/a\u{2066}b",       // left-to-right isolate
            "a\u{200B}b",            // zero-width space
            "a\u{200D}b",            // zero-width joiner
            "\u{FEFF}APP.md",        // byte-order mark
            "a\u{00AD}b",            // soft hyphen
            "a\u{00A0}b",            // no-break space
            "a\u{3000}b",            // ideographic space
            "a\u{2028}b",            // line separator
            "a\u{2029}b",            // paragraph separator
            "a\u{E0041}b",           // tag character
        ] {
            let e = validate(bad).unwrap_err();
            assert_eq!(e.code.as_str(), "archive.invalid_name", "{bad:?}");
        }
        assert_eq!(code(validate("my docs/read me.md")), None);
        assert_eq!(code(validate("caf\u{e9}/\u{65e5}\u{672c}.txt")), None);
    }

    #[test]
    fn cli_order_is_per_directory() {
        // Test vector from the standard digest: a/b sorts before a-b/x.
        let mut v = vec!["a-b/x", "APP.md", "a/b", ".hidden"];
        v.sort_by(|a, b| cli_order(a, b));
        assert_eq!(v, vec![".hidden", "APP.md", "a/b", "a-b/x"]);
    }

    #[test]
    fn collisions() {
        assert_eq!(
            code(check_collisions(["a/B", "a/b"])),
            Some("archive.case_collision")
        );
        assert_eq!(
            code(check_collisions(["Docs/a", "docs/b"])),
            Some("archive.case_collision")
        );
        assert_eq!(
            code(check_collisions(["x", "x"])),
            Some("archive.duplicate_entry")
        );
        assert_eq!(
            code(check_collisions(["x", "x/y"])),
            Some("archive.duplicate_entry")
        );
        assert_eq!(
            code(check_collisions(["x/y", "x"])),
            Some("archive.duplicate_entry")
        );
        assert_eq!(code(check_collisions(["x/y", "x/z", "APP.md"])), None);
        assert_eq!(
            code(check_collisions(["caf\u{e9}.txt", "cafe\u{301}.txt"])),
            Some("archive.case_collision")
        );
        // Full case folding: lowercasing does not relate these pairs.
        for (a, b) in [
            ("stra\u{df}e.txt", "STRASSE.txt"),           // ß folds to ss
            ("\u{fb01}le.txt", "file.txt"),               // the ﬁ ligature folds to fi
            ("\u{212a}.txt", "k.txt"),                    // Kelvin sign
            ("\u{3a3}\u{3c3}.txt", "\u{3c3}\u{3c2}.txt"), // Greek sigma and final sigma
            ("\u{1e9e}/x", "ss/y"),                       // capital sharp s, in a directory
        ] {
            assert_eq!(
                code(check_collisions([a, b])),
                Some("archive.case_collision"),
                "{a:?} vs {b:?}"
            );
        }
        assert_eq!(
            code(check_collisions(["stra\u{df}e.txt", "strasse2.txt"])),
            None
        );
    }
}
