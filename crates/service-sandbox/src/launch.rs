//! Builds the bubblewrap command line and the pre-exec hook (rlimits, prctl, cgroup, fds).

use std::ffi::CString;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;

use crate::cgroup::PidsGroup;
use crate::error::SandboxError;
use crate::spec::ServiceSpec;

/// The descriptor bubblewrap reads the seccomp program from.
const SECCOMP_FD: i32 = 3;
/// An `O_PATH|O_NOFOLLOW` descriptor of the service dir, bound by bwrap through
/// `/proc/self/fd/4`: what was checked is what gets mounted (no rename/symlink race).
const SERVICE_DIR_FD: i32 = 4;
/// The host-bound listening socket of a `local-http` service (the shim moves it to fd 3).
pub const LISTEN_FD: i32 = 5;
/// The sandbox end of a `remote-allowed` service's egress socket (the shim's forwarder keeps it).
pub const EGRESS_FD: i32 = 6;
/// Sandbox uid/gid (mapped to the host user through the new user namespace).
const SANDBOX_ID: &str = "65534";
/// Size of the sandbox's private `/tmp` tmpfs: its pages are host memory outside the service's
/// disk quota and `RLIMIT_AS`, so without a size a service could fill half the host's RAM one
/// capped file at a time. A write past it fails `ENOSPC` inside the sandbox.
pub const TMP_BYTES: u64 = 64 << 20;

fn check_spec(spec: &ServiceSpec) -> Result<(), SandboxError> {
    for (what, dir) in [
        ("package dir", &spec.package_dir),
        ("service dir", &spec.service_dir),
    ] {
        let meta = std::fs::symlink_metadata(dir)
            .map_err(|e| SandboxError::InvalidSpec(format!("{what} {}: {e}", dir.display())))?;
        if !meta.is_dir() {
            // a symlink swapped in for the service dir is refused, never followed
            return Err(SandboxError::InvalidSpec(format!(
                "{what} is not a real directory"
            )));
        }
    }
    let Some(prog) = spec.program.first() else {
        return Err(SandboxError::InvalidSpec("empty program".into()));
    };
    if !(prog.starts_with("/usr/") || prog.starts_with("/app/")) || prog.contains("..") {
        return Err(SandboxError::InvalidSpec(format!(
            "program {prog} must be under /usr or /app"
        )));
    }
    if prog.starts_with("/usr/") && !Path::new(prog).exists() {
        return Err(SandboxError::RuntimeUnavailable(prog.clone()));
    }
    if !spec.shim.is_file() {
        return Err(SandboxError::SandboxUnavailable(format!(
            "shim {} missing",
            spec.shim.display()
        )));
    }
    Ok(())
}

pub fn bwrap_args(spec: &ServiceSpec) -> Vec<std::ffi::OsString> {
    bwrap_args_with(spec, false)
}

/// `listen`: a `local-http` launch; the shim hands descriptor [`LISTEN_FD`] to the service as fd 3.
pub fn bwrap_args_with(spec: &ServiceSpec, listen: bool) -> Vec<std::ffi::OsString> {
    bwrap_args_full(spec, listen, false)
}

/// `egress`: the shim forwards `127.0.0.1:`[`crate::egress::PROXY_PORT`] to [`EGRESS_FD`] and the
/// service gets the proxy variables. The network namespace is ALWAYS unshared (`spec.network` no
/// longer keeps the host's; egress goes only through the host proxy).
pub fn bwrap_args_full(spec: &ServiceSpec, listen: bool, egress: bool) -> Vec<std::ffi::OsString> {
    let mut a: Vec<std::ffi::OsString> = Vec::new();
    let mut push = |xs: &[&str]| a.extend(xs.iter().map(Into::into));
    push(&[
        "--unshare-user",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
    ]);
    push(&[
        "--unshare-net",
        "--disable-userns",
        "--die-with-parent",
        "--new-session",
        "--clearenv",
    ]);
    push(&[
        "--uid",
        SANDBOX_ID,
        "--gid",
        SANDBOX_ID,
        "--hostname",
        "apphost-service",
    ]);
    push(&[
        "--setenv",
        "PATH",
        "/usr/bin:/bin",
        "--setenv",
        "HOME",
        "/service",
    ]);
    push(&[
        "--setenv",
        "LANG",
        "C.UTF-8",
        "--setenv",
        "PYTHONDONTWRITEBYTECODE",
        "1",
    ]);
    if egress {
        let proxy = format!("http://127.0.0.1:{}", crate::egress::PROXY_PORT);
        for var in ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"] {
            push(&["--setenv", var, &proxy]);
        }
        push(&["--setenv", "NO_PROXY", "", "--setenv", "no_proxy", ""]);
    }
    push(&["--ro-bind", "/usr", "/usr"]);
    for d in ["bin", "lib", "lib64", "sbin"] {
        let host = Path::new("/").join(d);
        match std::fs::read_link(&host) {
            Ok(target) => {
                let t = target.to_string_lossy().into_owned();
                push(&["--symlink", &t, &format!("/{d}")]);
            }
            Err(_) if host.is_dir() && d != "sbin" => {
                push(&["--ro-bind", &format!("/{d}"), &format!("/{d}")])
            }
            Err(_) => {}
        }
    }
    for f in ["/etc/ld.so.cache", "/etc/localtime", "/etc/alternatives"] {
        push(&["--ro-bind-try", f, f]);
    }
    let tmp_size = TMP_BYTES.to_string();
    push(&[
        "--proc", "/proc", "--dev", "/dev", "--size", &tmp_size, "--tmpfs", "/tmp",
    ]);
    a.push("--ro-bind".into());
    a.push(spec.package_dir.clone().into());
    a.push("/app".into());
    a.push("--bind".into());
    a.push(format!("/proc/self/fd/{SERVICE_DIR_FD}").into());
    a.push("/service".into());
    a.push("--ro-bind".into());
    a.push(spec.shim.clone().into());
    a.push("/.shim/shim".into());
    let mut push = |xs: &[&str]| a.extend(xs.iter().map(Into::into));
    push(&[
        "--remount-ro",
        "/",
        "--chdir",
        "/service",
        "--seccomp",
        "3",
        "--",
    ]);
    push(&["/.shim/shim", "nonet"]);
    if listen {
        push(&["listen"]);
    }
    if egress {
        push(&["egress"]);
    }
    push(&["--"]);
    a.extend(spec.program.iter().map(Into::into));
    a
}

/// Spawn the sandbox. The returned child is the outer bwrap, leader of its own process group,
/// placed in `group` before it execs.
pub fn spawn(spec: &ServiceSpec, group: &PidsGroup) -> Result<Child, SandboxError> {
    spawn_with(spec, group, None)
}

/// [`spawn`], passing `listener` (a listening socket the host bound) as [`LISTEN_FD`].
pub fn spawn_with(
    spec: &ServiceSpec,
    group: &PidsGroup,
    listener: Option<std::os::fd::BorrowedFd<'_>>,
) -> Result<std::process::Child, SandboxError> {
    spawn_full(spec, group, listener, None)
}

/// [`spawn_with`], also passing the sandbox end of an egress socket as [`EGRESS_FD`].
pub fn spawn_full(
    spec: &ServiceSpec,
    group: &PidsGroup,
    listener: Option<std::os::fd::BorrowedFd<'_>>,
    egress: Option<std::os::fd::BorrowedFd<'_>>,
) -> Result<std::process::Child, SandboxError> {
    check_spec(spec)?;
    let egress = egress
        .map(|fd| fd.try_clone_to_owned())
        .transpose()
        .map_err(|e| SandboxError::StartFailed(e.to_string()))?
        .map(high)
        .transpose()?;
    let egress_raw = egress.as_ref().map(AsRawFd::as_raw_fd);
    let listener = listener
        .map(|fd| fd.try_clone_to_owned())
        .transpose()
        .map_err(|e| SandboxError::StartFailed(e.to_string()))?
        .map(high)
        .transpose()?;
    let listen_raw = listener.as_ref().map(AsRawFd::as_raw_fd);
    let seccomp = high(crate::seccomp::program_fd().map_err(SandboxError::SandboxUnavailable)?)?;
    let seccomp_raw = seccomp.as_raw_fd();
    let service_dir = high(open_dir_nofollow(&spec.service_dir)?)?;
    let service_raw = service_dir.as_raw_fd();
    let procs = CString::new(group.procs_file().as_os_str().as_bytes())
        .map_err(|_| SandboxError::InvalidSpec("cgroup path".into()))?;
    let l = spec.limits;
    let rlimits = [
        (libc::RLIMIT_AS, l.address_space),
        (libc::RLIMIT_CPU, l.cpu_seconds),
        (libc::RLIMIT_NOFILE, l.open_files),
        (libc::RLIMIT_NPROC, l.max_processes),
        (libc::RLIMIT_FSIZE, l.file_size),
        (libc::RLIMIT_CORE, 0),
        (libc::RLIMIT_MEMLOCK, 0),
    ];
    let mut cmd = Command::new(&spec.bwrap);
    cmd.args(bwrap_args_full(
        spec,
        listen_raw.is_some(),
        egress_raw.is_some(),
    ))
    .env_clear()
    .current_dir("/")
    .stdin(Stdio::piped())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .process_group(0);
    // SAFETY: only async-signal-safe libc calls on pre-built data, no allocation.
    unsafe {
        cmd.pre_exec(move || {
            let fd = libc::open(procs.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
            if fd < 0 || libc::write(fd, b"0".as_ptr().cast(), 1) != 1 {
                return Err(std::io::Error::last_os_error());
            }
            libc::close(fd);
            for (res, v) in rlimits {
                let r = libc::rlimit {
                    rlim_cur: v,
                    rlim_max: v,
                };
                if libc::setrlimit(res, &r) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0
                || libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            if seccomp_raw == SECCOMP_FD {
                if libc::fcntl(SECCOMP_FD, libc::F_SETFD, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            } else if libc::dup2(seccomp_raw, SECCOMP_FD) != SECCOMP_FD {
                return Err(std::io::Error::last_os_error());
            }
            if libc::dup2(service_raw, SERVICE_DIR_FD) != SERVICE_DIR_FD {
                return Err(std::io::Error::last_os_error());
            }
            let mut first_closed = LISTEN_FD as u32;
            if let Some(raw) = listen_raw {
                if libc::dup2(raw, LISTEN_FD) != LISTEN_FD {
                    return Err(std::io::Error::last_os_error());
                }
                first_closed += 1;
            }
            if let Some(raw) = egress_raw {
                if libc::dup2(raw, EGRESS_FD) != EGRESS_FD {
                    return Err(std::io::Error::last_os_error());
                }
                // the gap at LISTEN_FD (no listener) is closed separately
                if first_closed == LISTEN_FD as u32
                    && libc::syscall(libc::SYS_close_range, first_closed, first_closed, 0u32) != 0
                {
                    return Err(std::io::Error::last_os_error());
                }
                first_closed = EGRESS_FD as u32 + 1;
            }
            // every other inherited descriptor is closed: stdio, the seccomp program and the
            // service dir handle (+ the listener) remain for bwrap; the shim closes them (but the
            // listener) before the service runs
            if libc::syscall(libc::SYS_close_range, first_closed, u32::MAX, 0u32) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let child = spawn_on_launcher(cmd).map_err(|e| SandboxError::StartFailed(e.to_string()))?;
    drop(seccomp);
    drop(service_dir);
    drop(listener);
    drop(egress);
    Ok(child)
}

type LaunchJob = (Command, std::sync::mpsc::SyncSender<std::io::Result<Child>>);

/// Every sandbox is forked from this one thread, which lives as long as the process.
/// `PR_SET_PDEATHSIG` fires when the *thread* that forked the child exits, not the process: a
/// service started from a short-lived thread (a tokio blocking-pool worker, which retires after
/// ~10 s idle, or a request's thread) would otherwise be SIGKILLed when that thread ends.
fn spawn_on_launcher(cmd: Command) -> std::io::Result<Child> {
    static LAUNCHER: OnceLock<Option<std::sync::mpsc::Sender<LaunchJob>>> = OnceLock::new();
    let launcher = LAUNCHER.get_or_init(|| {
        let (tx, rx) = std::sync::mpsc::channel::<LaunchJob>();
        std::thread::Builder::new()
            .name("apphost-service-launcher".into())
            .spawn(move || {
                for (mut cmd, reply) in rx {
                    let _ = reply.send(cmd.spawn());
                }
            })
            .ok()
            .map(|_| tx)
    });
    let Some(launcher) = launcher else {
        return Err(std::io::Error::other(
            "the service launcher thread could not start",
        ));
    };
    let (reply, answer) = std::sync::mpsc::sync_channel(1);
    launcher
        .send((cmd, reply))
        .map_err(|_| std::io::Error::other("the service launcher thread is gone"))?;
    answer
        .recv()
        .map_err(|_| std::io::Error::other("the service launcher thread is gone"))?
}

/// The same descriptor moved to a number >= 10, so the dup2s onto 3 and 4 never clobber each other.
fn high(fd: OwnedFd) -> Result<OwnedFd, SandboxError> {
    let raw = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 10) };
    if raw < 0 {
        return Err(SandboxError::StartFailed(
            std::io::Error::last_os_error().to_string(),
        ));
    }
    // SAFETY: raw is a fresh descriptor owned by nobody else.
    Ok(unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(raw) })
}

/// Open `dir` without following a symlink in its last component; refuse anything but a directory.
fn open_dir_nofollow(dir: &Path) -> Result<OwnedFd, SandboxError> {
    let c = CString::new(dir.as_os_str().as_bytes())
        .map_err(|_| SandboxError::InvalidSpec("service dir path".into()))?;
    let fd = unsafe {
        libc::open(
            c.as_ptr(),
            libc::O_PATH | libc::O_NOFOLLOW | libc::O_DIRECTORY | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(SandboxError::InvalidSpec(format!(
            "service dir: {}",
            std::io::Error::last_os_error()
        )));
    }
    // SAFETY: fd was just opened and is owned by nobody else.
    Ok(unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd) })
}
