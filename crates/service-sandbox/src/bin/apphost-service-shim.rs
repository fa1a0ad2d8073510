//! Runs inside the bubblewrap sandbox: applies the Landlock ruleset (ABI >= 3, fully enforced
//! or refuse), closes every descriptor but stdio and execs the service program.
//! Usage: `shim net|nonet [listen] [egress] -- program args...`. `egress`: before that, bind
//! `127.0.0.1:3128` in the sandbox's private loopback and fork a forwarder that passes each
//! accepted connection to the host's egress proxy over fd 6 (`SCM_RIGHTS`); Landlock then allows
//! the service TCP connect to that one port only.

// The process-sandbox boundary: the pre-exec hook and raw syscalls (prctl, setrlimit, close_range,
// memfd, landlock_create_ruleset) need `unsafe`; the workspace's `unsafe_code = "deny"` is lifted
// for this crate only, each block says why it is sound.
#![allow(unsafe_code)]

use std::os::unix::process::CommandExt;

use landlock::{
    path_beneath_rules, Access, AccessFs, AccessNet, CompatLevel, Compatible, NetPort, Ruleset,
    RulesetAttr, RulesetCreatedAttr, RulesetStatus, ABI,
};

const READ_ONLY: &[&str] = &[
    "/usr",
    "/app",
    "/.shim",
    "/etc",
    "/proc",
    "/dev/urandom",
    "/dev/random",
];
const READ_WRITE: &[&str] = &["/service", "/tmp", "/dev/null", "/dev/zero"];

/// Must match `service_sandbox::egress::PROXY_PORT` and `launch::EGRESS_FD`.
const PROXY_PORT: u16 = 3128;
const EGRESS_FD: i32 = 6;

fn restrict(network: bool, egress: bool) -> Result<(), String> {
    let abi = ABI::V3;
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(abi))
        .map_err(|e| e.to_string())?;
    if !network {
        // ABI 4 also covers TCP bind/connect: handled (= denied) when the kernel has it.
        ruleset = ruleset
            .set_compatibility(CompatLevel::BestEffort)
            .handle_access(AccessNet::from_all(ABI::V4))
            .map_err(|e| e.to_string())?;
    }
    let mut created = ruleset.create().map_err(|e| e.to_string())?;
    if egress && !network {
        created = created
            .add_rule(NetPort::new(PROXY_PORT, AccessNet::ConnectTcp))
            .map_err(|e| e.to_string())?;
    }
    let status = created
        .add_rules(path_beneath_rules(READ_ONLY, AccessFs::from_read(abi)))
        .map_err(|e| e.to_string())?
        .add_rules(path_beneath_rules(READ_WRITE, AccessFs::from_all(abi)))
        .map_err(|e| e.to_string())?
        .restrict_self()
        .map_err(|e| e.to_string())?;
    if status.ruleset == RulesetStatus::NotEnforced {
        return Err("landlock not enforced".into());
    }
    Ok(())
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let listen = args.get(1).is_some_and(|a| a == "listen");
    if listen {
        args.remove(1);
    }
    let egress = args.get(1).is_some_and(|a| a == "egress");
    if egress {
        args.remove(1);
    }
    if args.len() < 3 || args[1] != "--" {
        eprintln!(
            "apphost-service-shim: usage: shim net|nonet [listen] [egress] -- program args..."
        );
        std::process::exit(97);
    }
    let proxy = if egress {
        match std::net::TcpListener::bind(("127.0.0.1", PROXY_PORT)) {
            Ok(l) => Some(l),
            Err(e) => {
                eprintln!("apphost-service-shim: egress listener: {e}");
                std::process::exit(98);
            }
        }
    } else {
        None
    };
    if let Err(e) = restrict(args[0] == "net", egress) {
        eprintln!("apphost-service-shim: service.sandbox_unavailable: {e}");
        std::process::exit(98);
    }
    if let Some(proxy) = proxy {
        start_forwarder(proxy);
    }
    // Nothing but stdio (+ the listener as fd 3) reaches the service (bwrap leaves the service
    // dir handle it bound open).
    // SAFETY: plain syscalls, no descriptor of ours is in use past this point.
    if listen && unsafe { libc::dup2(5, 3) } != 3 {
        eprintln!("apphost-service-shim: no listening socket");
        std::process::exit(98);
    }
    let first_closed: u32 = if listen { 4 } else { 3 };
    if unsafe { libc::syscall(libc::SYS_close_range, first_closed, u32::MAX, 0u32) } != 0 {
        eprintln!("apphost-service-shim: close_range failed");
        std::process::exit(98);
    }
    let mut cmd = std::process::Command::new(&args[2]);
    cmd.args(&args[3..]);
    if listen {
        cmd.env("LISTEN_FDS", "1")
            .env("LISTEN_PID", std::process::id().to_string());
    }
    let err = cmd.exec();
    eprintln!("apphost-service-shim: exec {}: {err}", args[2]);
    std::process::exit(99);
}

/// Fork the forwarder: it keeps the listener and fd 6, hands every accepted connection to the host
/// and exits when the host end is gone. The parent (which becomes the service) drops both.
fn start_forwarder(proxy: std::net::TcpListener) {
    use std::os::fd::AsRawFd;
    // SAFETY: the shim is single-threaded here; the child only runs plain syscalls and exits.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        eprintln!(
            "apphost-service-shim: fork: {}",
            std::io::Error::last_os_error()
        );
        std::process::exit(98);
    }
    if pid > 0 {
        drop(proxy);
        return;
    }
    // the forwarder holds no stdio of the service's channel, only the listener (moved to fd 3)
    // and the egress socket
    // SAFETY: plain syscalls on descriptors this process owns; `proxy`'s old number is closed
    // by close_range (or is 3 itself), so it is forgotten rather than dropped.
    let proxy = unsafe {
        let raw = proxy.as_raw_fd();
        if libc::dup2(raw, 3) != 3 {
            std::process::exit(98);
        }
        std::mem::forget(proxy);
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
        for fd in 0..3 {
            libc::dup2(null, fd);
        }
        libc::syscall(libc::SYS_close_range, 4u32, (EGRESS_FD - 1) as u32, 0u32);
        libc::syscall(
            libc::SYS_close_range,
            (EGRESS_FD + 1) as u32,
            u32::MAX,
            0u32,
        );
        <std::net::TcpListener as std::os::fd::FromRawFd>::from_raw_fd(3)
    };
    for conn in proxy.incoming() {
        let Ok(conn) = conn else { continue };
        if !send_fd(EGRESS_FD, conn.as_raw_fd()) {
            std::process::exit(0);
        }
    }
    std::process::exit(0);
}

fn send_fd(sock: i32, fd: i32) -> bool {
    let mut byte = [0u8; 1];
    let mut iov = libc::iovec {
        iov_base: byte.as_mut_ptr().cast(),
        iov_len: 1,
    };
    let mut cbuf = [0u64; 4];
    // SAFETY: msghdr and the control buffer are live and large enough for one int.
    unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = cbuf.as_mut_ptr().cast();
        msg.msg_controllen = libc::CMSG_SPACE(4) as _;
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        (*cmsg).cmsg_level = libc::SOL_SOCKET;
        (*cmsg).cmsg_type = libc::SCM_RIGHTS;
        (*cmsg).cmsg_len = libc::CMSG_LEN(4) as _;
        std::ptr::write_unaligned(libc::CMSG_DATA(cmsg) as *mut libc::c_int, fd);
        libc::sendmsg(sock, &msg, libc::MSG_NOSIGNAL) == 1
    }
}
