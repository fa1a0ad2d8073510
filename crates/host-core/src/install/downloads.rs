//! Saving a file an app offers (`host:download`) into the user's download folder, after the
//! user confirmed it in the host UI.
//!
//! - **Where**: `$XDG_DOWNLOAD_DIR` when it is an absolute path, else the desktop's configured
//!   download folder (`user-dirs.dirs`), else `~/Downloads`; created if missing.
//! - **Name**: the app's suggestion reduced to one safe file name ([`sanitize_file_name`]: no
//!   folder part, no control or invisible format characters, none of `/ \ : * ? " < > |`, no
//!   leading dot, at most [`MAX_FILE_NAME_BYTES`] bytes, never empty).
//! - **Never replaces a file**: the bytes go to a temporary file in the same folder (created
//!   exclusively, fsynced), which is then renamed without replacing (`renameat2(NOREPLACE)`,
//!   else link + unlink) to `name`, `name (1)`, … `name (999)`; the folder is fsynced. A crash
//!   leaves at most a `.apphost-download-*` temporary file, never a partial file under the name.
//! - **Bounded**: at most [`MAX_DOWNLOAD_BYTES`].

use std::io::Write;
use std::path::{Path, PathBuf};

use unicode_general_category::{get_general_category, GeneralCategory};

use crate::foundation::error::{ErrorCode, HostError, HostResult};

/// Largest file an app may offer for download.
pub const MAX_DOWNLOAD_BYTES: u64 = 64 * 1024 * 1024;
/// Longest saved file name, in bytes (common file systems allow 255).
pub const MAX_FILE_NAME_BYTES: usize = 200;
/// How many ` (n)` suffixes are tried before giving up.
const MAX_SUFFIX: u32 = 999;
/// The name used when nothing usable is left of the app's suggestion.
pub const FALLBACK_NAME: &str = "download";

/// The user's download folder (see the module doc). `None` when there is no home folder.
pub fn download_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("XDG_DOWNLOAD_DIR") {
        let d = PathBuf::from(d);
        if d.is_absolute() {
            return Some(d);
        }
    }
    dirs::download_dir().or_else(|| dirs::home_dir().map(|h| h.join("Downloads")))
}

/// One safe file name from an app's suggestion (see the module doc).
pub fn sanitize_file_name(suggested: &str) -> String {
    // Only the last path component, whichever separator the app used.
    let last = suggested.rsplit(['/', '\\']).next().unwrap_or("");
    let mut name: String = last
        .chars()
        .filter(|c| {
            !matches!(
                get_general_category(*c),
                GeneralCategory::Control
                    | GeneralCategory::Format
                    | GeneralCategory::LineSeparator
                    | GeneralCategory::ParagraphSeparator
                    | GeneralCategory::Unassigned
                    | GeneralCategory::PrivateUse
                    | GeneralCategory::Surrogate
            )
        })
        .map(|c| {
            if matches!(c, ':' | '*' | '?' | '"' | '<' | '>' | '|') {
                '_'
            } else {
                c
            }
        })
        .collect();
    // No hidden files, no "." or "..", no trailing dots or spaces.
    name = name
        .trim_start_matches(['.', ' '])
        .trim_end_matches(['.', ' '])
        .to_owned();
    if name.len() > MAX_FILE_NAME_BYTES {
        name = shorten(&name, MAX_FILE_NAME_BYTES);
    }
    if name.is_empty() {
        FALLBACK_NAME.to_owned()
    } else {
        name
    }
}

/// `name` cut to at most `max` bytes on a character boundary, keeping a short extension.
fn shorten(name: &str, max: usize) -> String {
    let (stem, ext) = split_ext(name);
    let ext = if ext.len() <= 16 { ext } else { "" };
    let room = max.saturating_sub(ext.len());
    let mut cut = room.min(stem.len());
    while !stem.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}{ext}", stem[..cut].trim_end_matches(['.', ' ']))
}

/// `("report", ".md")` for `report.md`; no extension for a name without a dot after its start.
fn split_ext(name: &str) -> (&str, &str) {
    match name.rfind('.') {
        Some(i) if i > 0 => (&name[..i], &name[i..]),
        _ => (name, ""),
    }
}

/// The `n`th candidate: `name` itself, then `stem (n).ext`.
fn candidate(name: &str, n: u32) -> String {
    if n == 0 {
        return name.to_owned();
    }
    let (stem, ext) = split_ext(name);
    format!("{stem} ({n}){ext}")
}

/// Writes `bytes` as a new file in `dir` named after `suggested` (sanitized, suffixed when the
/// name is taken), never replacing anything. Returns the file name used.
pub fn save_new_file(dir: &Path, suggested: &str, bytes: &[u8]) -> HostResult<String> {
    if bytes.len() as u64 > MAX_DOWNLOAD_BYTES {
        return Err(HostError::new(
            ErrorCode::DownloadTooLarge,
            format!(
                "the file is {} bytes; a download may be at most {MAX_DOWNLOAD_BYTES} bytes",
                bytes.len()
            ),
        ));
    }
    let name = sanitize_file_name(suggested);
    let io =
        |what: &str, p: &Path, e: std::io::Error| HostError::io(ErrorCode::DownloadIo, what, p, e);
    std::fs::create_dir_all(dir).map_err(|e| io("cannot create the download folder", dir, e))?;
    let mut random = [0u8; 8];
    getrandom::fill(&mut random)
        .map_err(|e| HostError::new(ErrorCode::DownloadIo, format!("no randomness: {e}")))?;
    let temp = dir.join(format!(".apphost-download-{}", hex::encode(random)));
    let written = (|| {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp)?;
        f.write_all(bytes)?;
        f.sync_all()
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&temp);
        return Err(io("cannot write the download", &temp, e));
    }
    for n in 0..=MAX_SUFFIX {
        let file_name = candidate(&name, n);
        let target = dir.join(&file_name);
        match runtime_core::durable::rename_noreplace(&temp, &target) {
            Ok(()) => {
                runtime_core::durable::sync_dir(dir)
                    .map_err(|e| io("cannot sync the download folder", dir, e))?;
                return Ok(file_name);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => {
                let _ = std::fs::remove_file(&temp);
                return Err(io("cannot name the download", &target, e));
            }
        }
    }
    let _ = std::fs::remove_file(&temp);
    Err(HostError::new(
        ErrorCode::DownloadNameTaken,
        format!("{name} and its {MAX_SUFFIX} numbered variants all exist already"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_reduced_to_one_safe_file_name() {
        for (given, want) in [
            ("report.md", "report.md"),
            ("../../etc/passwd", "passwd"),
            ("..\\..\\win.ini", "win.ini"),
            ("/abs/path/x.txt", "x.txt"),
            (".bashrc", "bashrc"),
            ("..", FALLBACK_NAME),
            ("", FALLBACK_NAME),
            ("dir/", FALLBACK_NAME),
            ("a\u{0}b\nc\u{7f}.txt", "abc.txt"),
            // A right-to-left override would show "evil.exe" as "evil\u{202e}gpj.exe".
            ("evil\u{202e}gpj.exe", "evilgpj.exe"),
            ("zero\u{200b}width.txt", "zerowidth.txt"),
            ("a:b*c?d\"e<f>g|h.txt", "a_b_c_d_e_f_g_h.txt"),
            ("trailing. . ", "trailing"),
            ("résumé 2026.pdf", "résumé 2026.pdf"),
        ] {
            assert_eq!(sanitize_file_name(given), want, "{given:?}");
        }
        let long = format!("{}.markdown", "é".repeat(300));
        let s = sanitize_file_name(&long);
        assert!(s.len() <= MAX_FILE_NAME_BYTES, "{}", s.len());
        assert!(s.ends_with(".markdown"));
        let no_ext = "x".repeat(1000);
        assert_eq!(sanitize_file_name(&no_ext).len(), MAX_FILE_NAME_BYTES);
    }

    #[test]
    fn an_existing_file_is_never_replaced() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("Downloads");
        assert_eq!(save_new_file(&dir, "a.txt", b"one").unwrap(), "a.txt");
        assert_eq!(save_new_file(&dir, "a.txt", b"two").unwrap(), "a (1).txt");
        assert_eq!(
            save_new_file(&dir, "../a.txt", b"three").unwrap(),
            "a (2).txt"
        );
        // A symlink squatting a name is skipped, not followed.
        std::os::unix::fs::symlink(tmp.path().join("elsewhere"), dir.join("b")).unwrap();
        assert_eq!(save_new_file(&dir, "b", b"x").unwrap(), "b (1)");
        assert!(!tmp.path().join("elsewhere").exists());
        assert_eq!(std::fs::read(dir.join("a.txt")).unwrap(), b"one");
        assert_eq!(std::fs::read(dir.join("a (1).txt")).unwrap(), b"two");
        assert_eq!(std::fs::read(dir.join("a (2).txt")).unwrap(), b"three");
        // No temporary file is left behind.
        let names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(
            names.iter().all(|n| !n.starts_with(".apphost")),
            "{names:?}"
        );
    }

    #[test]
    fn too_large_is_refused_before_anything_is_written() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("Downloads");
        let big = vec![0u8; MAX_DOWNLOAD_BYTES as usize + 1];
        let e = save_new_file(&dir, "big.bin", &big).unwrap_err();
        assert_eq!(e.code, ErrorCode::DownloadTooLarge);
        assert!(!dir.exists());
    }
}
