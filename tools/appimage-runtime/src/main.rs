//! AppHost's type-2 AppImage runtime: the ELF file at the start of `AppHost-*.AppImage`, followed
//! by a squashfs of the AppDir (docs/shipping.md, "AppImage"). Written for AppHost because the
//! official runtime and appimagetool are fetched from GitHub, which this project's builds cannot
//! reach; it keeps the official runtime's interface:
//!
//! - no `--appimage-*` option: mounts the squashfs with `squashfuse` when FUSE is usable, else
//!   extracts it into a per-run folder under `$TMPDIR` (the official `--appimage-extract-and-run`),
//!   then execs `AppRun` with the arguments, `APPIMAGE` (this file), `APPDIR` (the folder),
//!   `ARGV0` and `OWD` set. A watcher process unmounts or deletes the folder once the
//!   application's process has exited (the application keeps this process's id).
//! - `--appimage-extract [PREFIX]`: extracts into `./squashfs-root` and exits.
//! - `--appimage-extract-and-run`: never mounts (also `APPIMAGE_EXTRACT_AND_RUN=1`).
//! - `--appimage-offset`: prints where the squashfs starts. `--appimage-help`, `--appimage-version`.

mod elf;
mod extract;
mod mount;
mod watch;

use std::ffi::OsString;
use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

const HELP: &str = "AppImage runtime (AppHost)
  --appimage-extract [PREFIX]  extract the contents into ./squashfs-root
  --appimage-extract-and-run   extract into a temporary folder, run, delete it
  --appimage-offset            print the offset of the squashfs in this file
  --appimage-version           print the runtime's version
  --appimage-help              this text
Other arguments are passed to the application.";

fn main() -> ExitCode {
    match run() {
        Ok(code) => code,
        Err(message) => {
            eprintln!("AppImage: {message}");
            ExitCode::from(127)
        }
    }
}

fn run() -> Result<ExitCode, String> {
    let mut args: Vec<OsString> = std::env::args_os().collect();
    let argv0 = args.remove(0);
    if args.first().is_some_and(|a| a == watch::WATCH_ARG) {
        return watch::watch(&args[1..]).map(|()| ExitCode::SUCCESS);
    }
    let image = std::fs::canonicalize("/proc/self/exe").map_err(|e| e.to_string())?;
    let offset = elf::squashfs_offset(&mut File::open(&image).map_err(|e| e.to_string())?)?;
    let option = args.first().and_then(|a| a.to_str()).unwrap_or("");
    match option {
        "--appimage-help" => {
            println!("{HELP}");
            return Ok(ExitCode::SUCCESS);
        }
        "--appimage-version" => {
            println!("{}", env!("CARGO_PKG_VERSION"));
            return Ok(ExitCode::SUCCESS);
        }
        "--appimage-offset" => {
            println!("{offset}");
            return Ok(ExitCode::SUCCESS);
        }
        "--appimage-extract" => {
            let prefix = args.get(1).and_then(|p| p.to_str());
            extract::extract(&image, offset, Path::new("squashfs-root"), prefix)?;
            return Ok(ExitCode::SUCCESS);
        }
        _ => {}
    }
    let force_extract = option == "--appimage-extract-and-run"
        || std::env::var_os("APPIMAGE_EXTRACT_AND_RUN").is_some_and(|v| v == "1");
    if option == "--appimage-extract-and-run" {
        args.remove(0);
    } else if option.starts_with("--appimage-") {
        return Err(format!("unknown option {option} (see --appimage-help)"));
    }

    let (appdir, kind) = if !force_extract && mount::fuse_usable() {
        let dir = run_dir(&image, ".mount_");
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        if mount::mount(&image, offset, &dir) {
            (dir, watch::Kind::Mount)
        } else {
            let _ = std::fs::remove_dir(&dir);
            extract_for_run(&image, offset)?
        }
    } else {
        extract_for_run(&image, offset)?
    };
    watch::spawn(&image, kind, &appdir)?;

    let owd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    let error = Command::new(appdir.join("AppRun"))
        .args(&args)
        .env("APPIMAGE", &image)
        .env("APPDIR", &appdir)
        .env("ARGV0", &argv0)
        .env("OWD", owd)
        .exec();
    Err(format!(
        "cannot run {}: {error}",
        appdir.join("AppRun").display()
    ))
}

/// Extracts into a fresh per-run folder (removed by the watcher after the run).
fn extract_for_run(image: &Path, offset: u64) -> Result<(PathBuf, watch::Kind), String> {
    let dir = run_dir(image, "appimage-extracted-");
    let _ = std::fs::remove_dir_all(&dir);
    if let Err(e) = extract::extract(image, offset, &dir, None) {
        let _ = std::fs::remove_dir_all(&dir);
        return Err(e);
    }
    Ok((dir, watch::Kind::Extracted))
}

/// `$TMPDIR/<prefix><image id>-<pid>`: the image id hashes its path, size and modification
/// time, so one image's runs are recognisable and two runs never share a folder.
fn run_dir(image: &Path, prefix: &str) -> PathBuf {
    let meta = std::fs::metadata(image).ok();
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut feed = |bytes: &[u8]| {
        for b in bytes {
            hash ^= u64::from(*b);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    };
    feed(image.as_os_str().as_encoded_bytes());
    if let Some(meta) = &meta {
        use std::os::unix::fs::MetadataExt;
        feed(&meta.size().to_le_bytes());
        feed(&meta.mtime().to_le_bytes());
    }
    let tmp = std::env::var_os("TMPDIR")
        .filter(|t| !t.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/tmp"));
    tmp.join(format!("{prefix}{hash:016x}-{}", std::process::id()))
}
