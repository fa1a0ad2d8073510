//! One process per runtime data directory: an exclusive lock on `runtime.lock`.

use super::RuntimeError;
use crate::log::LogError;

/// Takes the exclusive lock of a runtime directory (`runtime.lock`), creating both if needed.
pub(crate) fn lock_dir(dir: &std::path::Path) -> Result<std::fs::File, RuntimeError> {
    let path = dir.join("runtime.lock");
    let io = |e: std::io::Error| {
        RuntimeError::Log(LogError::Io {
            path: path.clone(),
            source: e,
        })
    };
    crate::private_fs::create_private_dir(dir).map_err(io)?;
    let file = std::os::unix::fs::OpenOptionsExt::mode(
        std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true),
        crate::private_fs::FILE_MODE,
    )
    .open(&path)
    .map_err(io)?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => {
            Err(RuntimeError::Busy(dir.display().to_string()))
        }
        Err(std::fs::TryLockError::Error(e)) => Err(io(e)),
    }
}
