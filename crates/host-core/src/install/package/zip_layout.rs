//! The byte layout of a zip, checked against its central directory before any entry is read.
//!
//! A zip names each file twice: in its local header (in front of the data) and in the central
//! directory (at the end). AppHost lists a package from the central directory, so it refuses a
//! zip whose two names differ (`archive.local_name_mismatch`): other readers, which stream the
//! local headers, would see another package than the one AppHost reviewed and hashed.
//!
//! Each entry occupies `[local header offset, end of its compressed data)`: the offset from the
//! central directory, then the local header's own fixed part, name and extra field, then the
//! compressed size from the central directory. These spans must not overlap one another and must
//! end before the central directory starts (`archive.overlapping_entries`). Without this, one
//! stored entry listed 5,000 times is 5,000 files that unpack to 5,000 times its size (a
//! "non-recursive zip bomb" of 324 KB listing 1 GB), each within every per-entry ratio limit.
//!
//! The entries are visited in offset order and read forward through one buffer, so the check
//! reads each local header once, whatever the order of the central directory: time is linear in
//! the number of entries (plus a sort), memory is one buffer and one 16-byte record per entry.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

use zip::ZipArchive;

use crate::foundation::error::{ErrorCode, HostError, HostResult};

const LOCAL_HEADER_SIGNATURE: u32 = 0x0403_4b50;
/// The fixed part of a local file header, signature included.
const LOCAL_HEADER_LEN: u64 = 30;

/// Checks that every entry's local header names it as the central directory does, and that no
/// two entries (nor an entry and the central directory) share bytes.
pub(super) fn check<R: Read + std::io::Seek>(
    zip_path: &Path,
    archive: &ZipArchive<R>,
) -> HostResult<()> {
    let dir_start = archive.central_directory_start();
    let mut order: Vec<(u64, usize)> = Vec::with_capacity(archive.len());
    for i in 0..archive.len() {
        let entry = archive.by_index_data(i).map_err(|e| {
            HostError::new(
                ErrorCode::ArchiveInvalid,
                format!("{}: zip entry {i} cannot be read: {e}", zip_path.display()),
            )
        })?;
        order.push((entry.header_start(), i));
    }
    order.sort_unstable();

    let file = File::open(zip_path)
        .map_err(|e| HostError::io(ErrorCode::SourceIo, "cannot open", zip_path, e))?;
    let mut reader = BufReader::with_capacity(64 * 1024, file);
    let mut pos = 0u64; // where `reader` stands
    let mut previous: Option<(u64, usize)> = None; // (end of its data, index)
    for (start, i) in order {
        let entry = archive
            .by_index_data(i)
            .map_err(|e| HostError::new(ErrorCode::ArchiveInvalid, e.to_string()))?;
        let name = String::from_utf8_lossy(entry.name_raw()).into_owned();
        if let Some((end, j)) = previous {
            if start < end {
                let other = archive
                    .by_index_data(j)
                    .map(|e| String::from_utf8_lossy(e.name_raw()).into_owned())
                    .unwrap_or_default();
                return Err(overlap(
                    format!("zip entries {other:?} and {name:?} share bytes (their data overlaps)"),
                    &name,
                )
                .with("otherPath", other));
            }
        }
        // `pos` is at most the previous entry's end, which is at most `start`.
        reader
            .seek_relative((start - pos) as i64)
            .map_err(|e| unreadable(&name, &e.to_string()))?;
        let mut fixed = [0u8; LOCAL_HEADER_LEN as usize];
        reader
            .read_exact(&mut fixed)
            .map_err(|e| unreadable(&name, &e.to_string()))?;
        let le16 = |at: usize| u16::from_le_bytes([fixed[at], fixed[at + 1]]);
        let signature = u32::from_le_bytes([fixed[0], fixed[1], fixed[2], fixed[3]]);
        if signature != LOCAL_HEADER_SIGNATURE {
            return Err(unreadable(&name, "no local header at its offset"));
        }
        let (name_len, extra_len) = (le16(26), le16(28));
        let mut local_name = vec![0u8; usize::from(name_len)];
        reader
            .read_exact(&mut local_name)
            .map_err(|e| unreadable(&name, &e.to_string()))?;
        pos = start + LOCAL_HEADER_LEN + u64::from(name_len);
        if local_name != entry.name_raw() {
            let local = String::from_utf8_lossy(&local_name).into_owned();
            return Err(HostError::new(
                ErrorCode::ArchiveLocalNameMismatch,
                format!(
                    "zip entry {name:?} is named {local:?} in its local header; \
                     the two names of an entry must be the same"
                ),
            )
            .with("path", &name)
            .with("localName", local));
        }
        let end = pos
            .checked_add(u64::from(extra_len))
            .and_then(|p| p.checked_add(entry.compressed_size()))
            .filter(|&end| end <= dir_start)
            .ok_or_else(|| {
                overlap(
                    format!("zip entry {name:?} runs into the central directory"),
                    &name,
                )
            })?;
        previous = Some((end, i));
    }
    Ok(())
}

fn overlap(message: String, name: &str) -> HostError {
    HostError::new(ErrorCode::ArchiveOverlappingEntries, message).with("path", name)
}

fn unreadable(name: &str, why: &str) -> HostError {
    HostError::new(
        ErrorCode::ArchiveInvalid,
        format!("the local header of zip entry {name:?} cannot be read: {why}"),
    )
    .with("path", name)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stored zip written byte by byte: `(central name, local name, data, points at)`; an
    /// entry that points at another (`Some(j)`) has no local header of its own, and its central
    /// record gives entry `j`'s offset and sizes.
    fn raw_zip(entries: &[(&str, &str, &[u8], Option<usize>)]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut at = vec![(0u32, 0u32, 0u32); entries.len()]; // (offset, size, crc)
        for (i, (_, local, data, points_at)) in entries.iter().enumerate() {
            if points_at.is_some() {
                continue;
            }
            let crc = crc32fast::hash(data);
            at[i] = (out.len() as u32, data.len() as u32, crc);
            out.extend_from_slice(&LOCAL_HEADER_SIGNATURE.to_le_bytes());
            for v in [20u16, 0, 0, 0, 0] {
                out.extend_from_slice(&v.to_le_bytes());
            }
            for v in [crc, data.len() as u32, data.len() as u32] {
                out.extend_from_slice(&v.to_le_bytes());
            }
            out.extend_from_slice(&(local.len() as u16).to_le_bytes());
            out.extend_from_slice(&0u16.to_le_bytes());
            out.extend_from_slice(local.as_bytes());
            out.extend_from_slice(data);
        }
        let dir_start = out.len() as u32;
        for (i, (central, _, _, points_at)) in entries.iter().enumerate() {
            let (offset, size, crc) = at[points_at.unwrap_or(i)];
            out.extend_from_slice(&0x0201_4b50u32.to_le_bytes());
            for v in [20u16, 20, 0, 0, 0, 0] {
                out.extend_from_slice(&v.to_le_bytes());
            }
            for v in [crc, size, size] {
                out.extend_from_slice(&v.to_le_bytes());
            }
            for v in [central.len() as u16, 0, 0, 0, 0] {
                out.extend_from_slice(&v.to_le_bytes());
            }
            out.extend_from_slice(&0u32.to_le_bytes());
            out.extend_from_slice(&offset.to_le_bytes());
            out.extend_from_slice(central.as_bytes());
        }
        let dir_len = out.len() as u32 - dir_start;
        let n = entries.len() as u16;
        out.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
        for v in [0u16, 0, n, n] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&dir_len.to_le_bytes());
        out.extend_from_slice(&dir_start.to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes());
        out
    }

    fn check_bytes(bytes: &[u8]) -> HostResult<()> {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("t.zip");
        std::fs::write(&p, bytes).unwrap();
        let archive = ZipArchive::new(BufReader::new(File::open(&p).unwrap())).unwrap();
        check(&p, &archive)
    }

    const APP: &[u8] = b"---\nname: a\n---\n";

    #[test]
    fn a_well_formed_zip_passes() {
        let z = raw_zip(&[
            ("APP.md", "APP.md", APP, None),
            ("b.txt", "b.txt", b"bee", None),
            ("empty", "empty", b"", None),
        ]);
        check_bytes(&z).unwrap();
    }

    #[test]
    fn a_local_name_that_differs_from_the_central_name_is_refused() {
        let z = raw_zip(&[
            ("APP.md", "APP.md", APP, None),
            ("ui/index.html", "ui/evil.html", b"<p>", None),
        ]);
        let e = check_bytes(&z).unwrap_err();
        assert_eq!(e.code, ErrorCode::ArchiveLocalNameMismatch, "{e:?}");
        assert_eq!(e.details["path"], "ui/index.html");
        assert_eq!(e.details["localName"], "ui/evil.html");
    }

    #[test]
    fn entries_that_share_a_local_entry_are_refused() {
        let mut entries = vec![
            ("APP.md", "APP.md", APP, None),
            ("big.bin", "big.bin", &[7u8; 4096][..], None),
        ];
        let names: Vec<String> = (0..50).map(|i| format!("copy-{i}.bin")).collect();
        for n in &names {
            entries.push((n.as_str(), "", &[][..], Some(1)));
        }
        let e = check_bytes(&raw_zip(&entries)).unwrap_err();
        assert_eq!(e.code, ErrorCode::ArchiveOverlappingEntries, "{e:?}");
        assert!(e.details["otherPath"].is_string(), "{e:?}");
    }

    #[test]
    fn an_entry_whose_data_runs_into_the_central_directory_is_refused() {
        let mut z = raw_zip(&[("APP.md", "APP.md", APP, None)]);
        // The central record's compressed size (offset 20 in the record) grows by 10 bytes.
        let cd = z.len() - 22 - (46 + "APP.md".len());
        let size = u32::from_le_bytes(z[cd + 20..cd + 24].try_into().unwrap()) + 10;
        z[cd + 20..cd + 24].copy_from_slice(&size.to_le_bytes());
        let e = check_bytes(&z).unwrap_err();
        assert_eq!(e.code, ErrorCode::ArchiveOverlappingEntries, "{e:?}");
    }
}
