//! Runs inside the bubblewrap sandbox: applies the Landlock ruleset (ABI >= 3, fully enforced
//! or refuse), closes every descriptor but stdio and execs the service program. Usage: `shim net|nonet -- program args...`.

// The process-sandbox boundary: the pre-exec hook and raw syscalls (prctl, setrlimit, close_range,
// memfd, landlock_create_ruleset) need `unsafe`; the workspace's `unsafe_code = "deny"` is lifted
// for this crate only, each block says why it is sound.
#![allow(unsafe_code)]

use std::os::unix::process::CommandExt;

use landlock::{
    path_beneath_rules, Access, AccessFs, AccessNet, CompatLevel, Compatible, Ruleset, RulesetAttr,
    RulesetCreatedAttr, RulesetStatus, ABI,
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

fn restrict(network: bool) -> Result<(), String> {
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
    let status = ruleset
        .create()
        .map_err(|e| e.to_string())?
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
    if args.len() < 3 || args[1] != "--" {
        eprintln!("apphost-service-shim: usage: shim net|nonet [listen] -- program args...");
        std::process::exit(97);
    }
    if let Err(e) = restrict(args[0] == "net") {
        eprintln!("apphost-service-shim: service.sandbox_unavailable: {e}");
        std::process::exit(98);
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
