//! A service's persisted log (its stderr, kept in the app's data area), read without a
//! supervisor: by `services logs` in another process, or when the running one is busy.

use std::os::unix::fs::OpenOptionsExt;

use super::ServiceId;
use crate::foundation::paths::DataDir;

/// The persisted log of a service no supervisor of this process holds.
pub fn read_log_file(data: &DataDir, id: &ServiceId) -> String {
    let Ok(Some(area)) =
        runtime_core::app_area::AppArea::open_existing(&data.apps_data().join(&id.app))
    else {
        return String::new();
    };
    area.service_log(&id.key)
        .and_then(|p| {
            use std::io::Read;
            let f = std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
                .open(p)
                .ok()?;
            let mut out = Vec::new();
            f.take(4 << 20).read_to_end(&mut out).ok()?;
            Some(String::from_utf8_lossy(&out).into_owned())
        })
        .unwrap_or_default()
}

pub(super) fn tail(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut start = text.len() - max;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    text[start..].to_owned()
}
