//! Splitting `APP.md` into YAML frontmatter and the Markdown body.
//!
//! Unlike the reference CLI (which rejects them), a UTF-8 byte-order mark and CRLF line endings
//! are accepted. The manifest hash is always over the raw bytes; this normalisation is only for
//! parsing.

use crate::foundation::error::{ErrorCode, HostError, HostResult};

pub struct Split {
    pub yaml: String,
    pub body: String,
    /// 1-based line number of the first YAML line in the file, for error messages.
    pub yaml_first_line: usize,
}

pub fn split(raw: &[u8]) -> HostResult<Split> {
    let raw = raw.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(raw);
    let text = std::str::from_utf8(raw).map_err(|e| {
        HostError::new(
            ErrorCode::ManifestNotUtf8,
            format!("APP.md is not valid UTF-8 (at byte {})", e.valid_up_to()),
        )
        .with("byteOffset", e.valid_up_to())
    })?;
    let text = text.replace("\r\n", "\n");
    let mut lines = text.split_inclusive('\n');
    let first = lines.next().unwrap_or("");
    if first.trim_end() != "---" {
        return Err(HostError::new(
            ErrorCode::ManifestNoFrontmatter,
            "APP.md must start with a '---' line opening the YAML frontmatter",
        ));
    }
    let mut yaml = String::new();
    let mut consumed = first.len();
    for line in lines {
        consumed += line.len();
        let t = line.trim_end();
        if t == "---" || t == "..." {
            return Ok(Split {
                yaml,
                body: text[consumed..].to_owned(),
                yaml_first_line: 2,
            });
        }
        yaml.push_str(line);
    }
    Err(HostError::new(
        ErrorCode::ManifestNoFrontmatter,
        "the YAML frontmatter in APP.md is never closed by a '---' line",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_bom_and_crlf() {
        let s = split(b"\xEF\xBB\xBF---\r\nname: a\r\n---\r\n# Body\r\n").unwrap();
        assert_eq!(s.yaml, "name: a\n");
        assert_eq!(s.body, "# Body\n");
    }

    #[test]
    fn rejects_missing_or_unclosed_frontmatter() {
        assert_eq!(
            split(b"# no frontmatter").err().unwrap().code,
            ErrorCode::ManifestNoFrontmatter
        );
        assert_eq!(
            split(b"---\nname: a\n").err().unwrap().code,
            ErrorCode::ManifestNoFrontmatter
        );
        assert_eq!(
            split(b"---\xff\n---\n").err().unwrap().code,
            ErrorCode::ManifestNotUtf8
        );
    }

    #[test]
    fn empty_frontmatter_is_allowed_here() {
        let s = split(b"---\n---\nbody").unwrap();
        assert_eq!(s.yaml, "");
        assert_eq!(s.body, "body");
    }
}
