//! What a declared `services[]` item needs to run here, decided from the manifest alone (pure):
//! the program line inside the sandbox (`/usr/bin/python3 /app/<entry>`), the interpreter that
//! must exist on the host, network and limits; or the stable code of why this host cannot run
//! it. Readiness (`readiness/runtimes.rs`) and the service host (`hosting/services/`) both use
//! [`plan`], so what readiness calls `ready` is exactly what the host starts. The host facts it
//! is checked against (sandbox layers, interpreters, crash-loop health) are [`probe_host`]'s.

use std::collections::BTreeSet;

use crate::install::manifest::Service;
use crate::install::remote_service::{self, RemoteSpec};

/// A service this host starts in its sandbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchPlan {
    pub key: String,
    pub required: bool,
    /// `stdio-jsonrpc`, `wasm` or `local-http`: picks the plane (`service_sandbox::Plane`).
    pub protocol: String,
    /// argv inside the sandbox: `/usr/...` or `/app/...` first, package paths as `/app/<path>`.
    pub program: Vec<String>,
    /// The host interpreter the program needs (`/usr/bin/python3`), if any.
    pub runtime: Option<String>,
    /// Network declared (`remote-allowed`): the service gets only the host egress proxy, and
    /// only once the user granted it (the grant is read from the store at each launch).
    pub network: bool,
    /// `allowedDomains` of a `remote-allowed` service (empty otherwise).
    pub domains: Vec<String>,
    /// `resourceLimits.memoryMb`, clamped.
    pub memory_mb: u64,
    /// `resourceLimits.timeoutMs`: the per-call timeout, clamped.
    pub timeout_ms: u64,
    /// A `cloud-remote` / `remote-http` service declared `server-assisted`: nothing starts
    /// here; the host makes each call itself (`hosting/services/remote/`), once host policy
    /// allows it.
    pub remote: Option<RemoteSpec>,
}

/// Why a service cannot run here: a stable code and the reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub code: &'static str,
    pub why: String,
}

fn refuse(code: &'static str, why: impl Into<String>) -> Refusal {
    Refusal {
        code,
        why: why.into(),
    }
}

/// The protocols of a `client-local` service this host runs: `stdio-jsonrpc` and `local-http`
/// in the process sandbox, `wasm` in-process under wasmi's limits.
pub fn protocol_runs_here(protocol: &str) -> bool {
    matches!(protocol, "stdio-jsonrpc" | "wasm" | "local-http")
}

/// Whether a service of `protocol` runs inside the host process (`wasm`): it needs no sandbox
/// layers, no shim and no interpreter.
pub fn runs_in_process(protocol: &str) -> bool {
    protocol == "wasm"
}

/// Interpreters a command may name, and where the sandbox finds them (`/usr` is mounted).
const INTERPRETERS: &[(&str, &str)] = &[
    ("python3", "/usr/bin/python3"),
    ("python", "/usr/bin/python3"),
    ("node", "/usr/bin/node"),
];

/// Every host interpreter a plan may name ([`probe_host`] checks which exist).
pub fn known_runtimes() -> BTreeSet<&'static str> {
    INTERPRETERS.iter().map(|(_, p)| *p).collect()
}

const MAX_ARGS: usize = 32;
const MAX_ARG_BYTES: usize = 256;

/// The plan of `s`. `has_path` says whether a package path exists; `server_assisted` whether
/// the manifest's `runtimeTargets` lists `server-assisted`.
pub fn plan(
    s: Service<'_>,
    has_path: &dyn Fn(&str) -> bool,
    server_assisted: bool,
) -> Result<LaunchPlan, Refusal> {
    let key = s.key().unwrap_or("service");
    if !runtime_core::app_area::services::valid_key(key) {
        return Err(refuse(
            "service.invalid_spec",
            format!("service key {key:?} is not a valid name"),
        ));
    }
    let plane = s.execution_plane().unwrap_or("client-local");
    let protocol = s.protocol().unwrap_or("stdio-jsonrpc");
    if remote_service::is_remote(s) {
        if !server_assisted {
            return Err(refuse(
                "service.remote_not_allowed",
                "a remote service needs runtimeTargets: [server-assisted]",
            ));
        }
        // Whether policy allows it is a host fact (the user's allowance), not the manifest's.
        let spec = remote_service::spec(s).map_err(|why| refuse("service.invalid_spec", why))?;
        return Ok(LaunchPlan {
            key: key.to_owned(),
            required: s.required(),
            protocol: "remote-http".to_owned(),
            program: Vec::new(),
            runtime: None,
            network: false,
            domains: Vec::new(),
            memory_mb: 0,
            timeout_ms: s.timeout_ms().unwrap_or(30_000).clamp(100, 300_000),
            remote: Some(spec),
        });
    }
    if plane != "client-local" {
        return Err(refuse(
            "service.runtime_unavailable",
            format!("execution plane {plane} does not run here"),
        ));
    }
    if !protocol_runs_here(protocol) {
        return Err(refuse(
            "service.runtime_unavailable",
            format!("protocol {protocol} does not run here yet"),
        ));
    }
    let network = match s.network() {
        "deny-by-default" | "host-mediated" | "loopback-only" => false,
        "remote-allowed" if protocol != "stdio-jsonrpc" => {
            return Err(refuse(
                "service.network_not_granted",
                format!("network remote-allowed is only available to stdio-jsonrpc services, not {protocol}"),
            ))
        }
        "remote-allowed" => true,
        other => {
            return Err(refuse(
                "service.network_not_granted",
                format!("network {other} is not granted to services on this host"),
            ))
        }
    };
    let domains: Vec<String> = if network {
        s.allowed_domains().into_iter().map(str::to_owned).collect()
    } else {
        Vec::new()
    };
    if network
        && service_sandbox::egress::EgressPolicy::new(&domains, true)
            .domains()
            .is_empty()
    {
        return Err(refuse(
            "service.invalid_spec",
            "a remote-allowed service declares no valid allowedDomains",
        ));
    }
    let (program, runtime) = program(s, has_path)?;
    let in_process = runs_in_process(protocol);
    if in_process && (runtime.is_some() || program.len() != 1) {
        return Err(refuse(
            "service.invalid_spec",
            "a wasm service names its module (a package .wasm file) and nothing else",
        ));
    }
    // A Wasm module's linear memory may be small; a process needs room for its interpreter.
    let min_memory = if in_process { 1 } else { 128 };
    Ok(LaunchPlan {
        key: key.to_owned(),
        required: s.required(),
        protocol: protocol.to_owned(),
        program,
        runtime,
        network,
        domains,
        memory_mb: s.memory_mb().unwrap_or(512).clamp(min_memory, 4096),
        timeout_ms: s.timeout_ms().unwrap_or(30_000).clamp(100, 300_000),
        remote: None,
    })
}

fn package_arg(arg: &str, has_path: &dyn Fn(&str) -> bool) -> Option<String> {
    let clean = !arg.starts_with('/') && !arg.split('/').any(|c| c == ".." || c == ".");
    (clean && has_path(arg.trim_start_matches("./")))
        .then(|| format!("/app/{}", arg.trim_start_matches("./")))
}

fn program(
    s: Service<'_>,
    has_path: &dyn Fn(&str) -> bool,
) -> Result<(Vec<String>, Option<String>), Refusal> {
    let words: Vec<&str> = match (s.command(), s.entry_path()) {
        (Some(c), _) if !c.is_empty() => c,
        (_, Some(entry)) => match s.language() {
            Some("python") => vec!["python3", entry],
            Some("javascript" | "node" | "typescript") => vec!["node", entry],
            _ => vec![entry],
        },
        _ => {
            return Err(refuse(
                "service.invalid_spec",
                "the service names no command or entry",
            ))
        }
    };
    if words.len() > MAX_ARGS
        || words
            .iter()
            .any(|w| w.len() > MAX_ARG_BYTES || w.is_empty())
    {
        return Err(refuse("service.invalid_spec", "the command is too long"));
    }
    let (first, rest) = words.split_first().expect("not empty");
    let (head, runtime) = match INTERPRETERS.iter().find(|(n, _)| n == first) {
        Some((_, path)) => (path.to_string(), Some(path.to_string())),
        None => match package_arg(first, has_path) {
            Some(p) => (p, None),
            None => {
                return Err(refuse(
                    "service.invalid_spec",
                    format!("command {first} is neither a known interpreter nor a package file"),
                ))
            }
        },
    };
    let mut argv = vec![head];
    for w in rest {
        match package_arg(w, has_path) {
            Some(p) => argv.push(p),
            None if w.starts_with('-')
                || w.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"=_.,:".contains(&b)) =>
            {
                argv.push((*w).to_owned())
            }
            None => {
                return Err(refuse(
                    "service.invalid_spec",
                    format!("argument {w} is not a package file or a plain flag"),
                ))
            }
        }
    }
    Ok((argv, runtime))
}

/// What this host offers services, probed once per process for the layers (they do not change
/// while it runs) and per call for the interpreters.
pub fn probe_host() -> crate::install::readiness::ServiceFacts {
    static LAYERS: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    let missing = LAYERS
        .get_or_init(|| {
            let missing = service_sandbox::available_layers().require().err();
            missing.or_else(|| {
                shim_path().is_none().then(|| {
                    "the sandbox shim apphost-service-shim is not installed beside apphost"
                        .to_owned()
                })
            })
        })
        .clone();
    crate::install::readiness::ServiceFacts {
        sandbox_missing: missing,
        runtimes: known_runtimes()
            .into_iter()
            .filter(|p| std::path::Path::new(p).is_file())
            .map(str::to_owned)
            .collect(),
        health: Default::default(),
        network_granted: Default::default(),
        remote_allowed: Default::default(),
        disk_over: Default::default(),
        policy: None,
    }
}

/// The in-sandbox shim binary: `$APPHOST_SERVICE_SHIM`, else `apphost-service-shim` beside the
/// running executable or one folder up (a test binary in `target/<profile>/deps/`).
pub fn shim_path() -> Option<std::path::PathBuf> {
    if let Some(p) = std::env::var_os("APPHOST_SERVICE_SHIM") {
        let p = std::path::PathBuf::from(p);
        return p.is_file().then_some(p);
    }
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?;
    [dir.to_path_buf(), dir.parent()?.to_path_buf()]
        .into_iter()
        .map(|d| d.join("apphost-service-shim"))
        .find(|p| p.is_file())
}
