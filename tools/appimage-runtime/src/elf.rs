//! Where the squashfs starts: right after this runtime's own ELF file, i.e. at the end of its
//! section header table (`e_shoff + e_shentsize * e_shnum`), the rule every type-2 AppImage
//! tool uses (the official runtime's `appimage_get_elf_size`).

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};

/// The squashfs superblock's magic, little-endian "hsqs".
const SQUASHFS_MAGIC: &[u8; 4] = b"hsqs";

/// The offset of the appended squashfs in `image`, checked to start with the squashfs magic.
pub fn squashfs_offset(image: &mut File) -> Result<u64, String> {
    let mut header = [0u8; 64];
    image.seek(SeekFrom::Start(0)).map_err(|e| e.to_string())?;
    image
        .read_exact(&mut header)
        .map_err(|_| "not an AppImage: shorter than an ELF header".to_string())?;
    if &header[..4] != b"\x7fELF" || header[4] != 2 || header[5] != 1 {
        return Err("not an AppImage: not a 64-bit little-endian ELF file".into());
    }
    let shoff = u64::from_le_bytes(header[0x28..0x30].try_into().expect("8 bytes"));
    let shentsize = u64::from(u16::from_le_bytes([header[0x3a], header[0x3b]]));
    let shnum = u64::from(u16::from_le_bytes([header[0x3c], header[0x3d]]));
    let offset = shentsize
        .checked_mul(shnum)
        .and_then(|table| shoff.checked_add(table))
        .ok_or_else(|| "not an AppImage: ELF section table out of range".to_string())?;
    let mut magic = [0u8; 4];
    image
        .seek(SeekFrom::Start(offset))
        .map_err(|e| e.to_string())?;
    image
        .read_exact(&mut magic)
        .map_err(|_| "not an AppImage: no squashfs after the runtime".to_string())?;
    if &magic != SQUASHFS_MAGIC {
        return Err("not an AppImage: no squashfs after the runtime".into());
    }
    Ok(offset)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn file_with(bytes: &[u8]) -> File {
        let path = std::env::temp_dir().join(format!(
            "appimage-rt-elf-{}-{}",
            std::process::id(),
            bytes.len()
        ));
        File::create(&path).unwrap().write_all(bytes).unwrap();
        let file = File::open(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        file
    }

    /// A 64-bit little-endian ELF header whose section table ends at `end`, then `tail`.
    fn elf(end: u64, tail: &[u8]) -> Vec<u8> {
        let mut bytes = vec![0u8; end as usize];
        bytes[..6].copy_from_slice(b"\x7fELF\x02\x01");
        bytes[0x28..0x30].copy_from_slice(&(end - 128).to_le_bytes());
        bytes[0x3a..0x3c].copy_from_slice(&64u16.to_le_bytes());
        bytes[0x3c..0x3e].copy_from_slice(&2u16.to_le_bytes());
        bytes.extend_from_slice(tail);
        bytes
    }

    #[test]
    fn the_squashfs_starts_after_the_section_table() {
        assert_eq!(
            squashfs_offset(&mut file_with(&elf(512, b"hsqs...."))).unwrap(),
            512
        );
    }

    #[test]
    fn files_that_are_not_appimages_are_refused() {
        for bytes in [
            b"short".to_vec(),
            vec![0u8; 128],
            elf(512, b"nope"),
            elf(512, b""),
        ] {
            let error = squashfs_offset(&mut file_with(&bytes)).unwrap_err();
            assert!(error.starts_with("not an AppImage"), "{error}");
        }
        let mut huge = elf(512, b"hsqs");
        huge[0x28..0x30].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(squashfs_offset(&mut file_with(&huge)).is_err());
    }
}
