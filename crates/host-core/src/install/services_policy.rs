//! The admin's policy file for backend services, `<data>/policy/services.json` (optional), like
//! `<data>/policy/tools.json` for MCP tools: which `server-assisted` remote endpoints and which
//! `remote-allowed` network grants the host may honour. It never grants anything: a service
//! still needs the user's allowance (`allow-remote`) or grant (`grant-network`); the policy can
//! only deny, and **deny wins** over an allowance row that already exists.
//!
//! ```json
//! {"remote": {"allow": false, "allowOrigins": ["https://api.example.com"],
//!             "denyOrigins": ["https://*.internal.example"]},
//!  "network": {"allow": true, "denyApps": ["some.app"], "denyDomains": ["*.tracker.example"]},
//!  "deny": ["app.id/service_key", "other.app/*"]}
//! ```
//!
//! Absent file: nothing is denied (the user's allowance decides). A file that cannot be used —
//! over [`MAX_POLICY_BYTES`], not JSON, an unknown field, a malformed pattern, a symlink (the
//! file or the `policy` directory), not a regular file — denies every remote call and network
//! grant (fail closed, [`CODE`]). Read bounded and kept per process until the file's `stat`
//! (size, mtime, ctime, inode) moves, so an edit by another process applies to the next call.
//! Pure apart from reading that one file; [`ServicesPolicy::remote_denied`] and
//! [`ServicesPolicy::network_denied`] are the decisions readiness, the CLI and the service host
//! all use.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use serde::Deserialize;

use crate::foundation::paths::DataDir;

/// The stable code of a refusal by the policy (a detail code: `service.cannot_run`'s `cause`,
/// a readiness reason's `code`, a call's failure code).
pub const CODE: &str = "service.policy_denied";

/// Largest policy file read.
pub const MAX_POLICY_BYTES: u64 = 256 * 1024;

/// `<data>/policy/services.json`: outside every app data area (`<data>/apps/`), so no app or
/// service can write it.
pub fn policy_path(dir: &DataDir) -> PathBuf {
    dir.root().join("policy").join("services.json")
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RemoteRules {
    /// `false`: only `allowOrigins` may be called (default `true`).
    #[serde(default = "yes")]
    allow: bool,
    #[serde(default)]
    allow_origins: Vec<String>,
    #[serde(default)]
    deny_origins: Vec<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct NetworkRules {
    /// `false`: only `allowApps` may be granted network (default `true`).
    #[serde(default = "yes")]
    allow: bool,
    #[serde(default)]
    allow_apps: BTreeSet<String>,
    #[serde(default)]
    deny_apps: BTreeSet<String>,
    /// Domains no `remote-allowed` service may reach, whatever it declares: `example.com`, or
    /// `*.example.com` for the strict subdomains (the `allowedDomains` rule).
    #[serde(default)]
    deny_domains: Vec<String>,
}

fn yes() -> bool {
    true
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Rules {
    #[serde(default = "open_remote")]
    remote: RemoteRules,
    #[serde(default = "open_network")]
    network: NetworkRules,
    /// `<app>/<service>` or `<app>/*`: neither called remotely nor granted network.
    #[serde(default)]
    deny: BTreeSet<String>,
}

fn open_remote() -> RemoteRules {
    RemoteRules {
        allow: true,
        ..RemoteRules::default()
    }
}

fn open_network() -> NetworkRules {
    NetworkRules {
        allow: true,
        ..NetworkRules::default()
    }
}

#[derive(Debug, Clone)]
enum State {
    Absent,
    /// The file exists but cannot be used: everything is denied.
    Broken(String),
    Loaded(Rules),
}

/// The policy as read at one moment.
#[derive(Debug, Clone)]
pub struct ServicesPolicy {
    path: PathBuf,
    state: State,
}

impl ServicesPolicy {
    /// No file: nothing denied.
    pub fn absent(path: PathBuf) -> Self {
        ServicesPolicy {
            path,
            state: State::Absent,
        }
    }

    /// The policy `bytes` would be if read from `path` (what [`load`] does after its file
    /// checks; readiness tests build one with it).
    pub fn from_bytes(path: PathBuf, bytes: &[u8]) -> Self {
        ServicesPolicy {
            state: parse(&path, bytes),
            path,
        }
    }

    /// The file's path (named in every refusal).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Why the policy file cannot be used, when it cannot.
    pub fn broken(&self) -> Option<&str> {
        match &self.state {
            State::Broken(why) => Some(why),
            _ => None,
        }
    }

    /// The rules to weigh for service `key` of `app`, or the answer already given before them:
    /// no file (`Err(None)`: nothing denied), an unusable file or the service in `deny`
    /// (`Err(Some(why))`).
    fn rules_for(&self, app: &str, key: &str) -> Result<&Rules, Option<String>> {
        let rules = match &self.state {
            State::Absent => return Err(None),
            State::Broken(why) => return Err(Some(self.broken_message(why))),
            State::Loaded(r) => r,
        };
        if Self::listed(rules, app, key) {
            let p = self.path.display();
            return Err(Some(format!(
                "the admin policy {p} denies service {app}/{key}"
            )));
        }
        Ok(rules)
    }

    fn listed(rules: &Rules, app: &str, key: &str) -> bool {
        rules.deny.contains(&format!("{app}/{key}")) || rules.deny.contains(&format!("{app}/*"))
    }

    /// `Some(why)` when the policy denies calls of remote service `key` of `app` at `origin`
    /// (`scheme://host[:port]`, as `RemoteSpec::origin`).
    pub fn remote_denied(&self, app: &str, key: &str, origin: &str) -> Option<String> {
        let rules = match self.rules_for(app, key) {
            Ok(rules) => rules,
            Err(answer) => return answer,
        };
        let p = self.path.display();
        if rules
            .remote
            .deny_origins
            .iter()
            .any(|pat| origin_matches(pat, origin))
        {
            return Some(format!(
                "the admin policy {p} denies calls to {origin} (denyOrigins)"
            ));
        }
        let listed = rules
            .remote
            .allow_origins
            .iter()
            .any(|pat| origin_matches(pat, origin));
        if !rules.remote.allow && !listed {
            return Some(format!(
                "the admin policy {p} allows remote services only at its allowOrigins, and {origin} is not one"
            ));
        }
        None
    }

    /// `Some(why)` when the policy denies network to `remote-allowed` service `key` of `app`.
    pub fn network_denied(&self, app: &str, key: &str) -> Option<String> {
        let rules = match self.rules_for(app, key) {
            Ok(rules) => rules,
            Err(answer) => return answer,
        };
        let p = self.path.display();
        if rules.network.deny_apps.contains(app) {
            return Some(format!(
                "the admin policy {p} denies network to the services of {app} (denyApps)"
            ));
        }
        if !rules.network.allow && !rules.network.allow_apps.contains(app) {
            return Some(format!(
                "the admin policy {p} grants network only to the services of its allowApps, and {app} is not one"
            ));
        }
        None
    }

    /// `Some(why)` when the policy denies `remote-allowed` service `key` of `app` a connection
    /// to `host` (lowercase, no trailing dot: as the egress proxy normalized it): the service's
    /// network is denied as a whole, or `network.denyDomains` names the host.
    pub fn domain_denied(&self, app: &str, key: &str, host: &str) -> Option<String> {
        if let Some(why) = self.network_denied(app, key) {
            return Some(why);
        }
        let State::Loaded(rules) = &self.state else {
            return None;
        };
        let pat = rules
            .network
            .deny_domains
            .iter()
            .find(|pat| domain_matches(pat, host))?;
        Some(format!(
            "the admin policy {} denies connections to {host} ({pat} in network.denyDomains)",
            self.path.display()
        ))
    }

    fn broken_message(&self, why: &str) -> String {
        format!(
            "the admin policy {} cannot be used, so every remote service and network grant is denied: {why}",
            self.path.display()
        )
    }
}

/// `pattern` is an origin `scheme://host[:port]`, or `scheme://*.domain[:port]` for the strict
/// subdomains of `domain` (not `domain` itself). Case-insensitive; ports must be equal (a
/// default port is never written in an origin).
fn origin_matches(pattern: &str, origin: &str) -> bool {
    let (Some(p), Some(o)) = (split_origin(pattern), split_origin(origin)) else {
        return false;
    };
    if p.0 != o.0 || p.2 != o.2 {
        return false;
    }
    match p.1.strip_prefix("*.") {
        Some(domain) => {
            o.1.strip_suffix(domain)
                .is_some_and(|head| head.len() > 1 && head.ends_with('.'))
        }
        None => p.1 == o.1,
    }
}

/// `pattern` is a domain (`example.com`) or `*.domain` for its strict subdomains, as a service's
/// `allowedDomains`; `host` is already lowercase without a trailing dot. Case-insensitive.
fn domain_matches(pattern: &str, host: &str) -> bool {
    let pattern = pattern.to_ascii_lowercase();
    let pattern = pattern.strip_suffix('.').unwrap_or(&pattern);
    match pattern.strip_prefix("*.") {
        Some(base) => host
            .strip_suffix(base)
            .is_some_and(|head| head.len() > 1 && head.ends_with('.')),
        None => pattern == host,
    }
}

/// (scheme, host, port) lowercased, or `None` when `s` is not an origin.
fn split_origin(s: &str) -> Option<(String, String, Option<String>)> {
    let s = s.to_ascii_lowercase();
    let (scheme, rest) = s.split_once("://")?;
    if !matches!(scheme, "https" | "http")
        || rest.is_empty()
        || rest.len() > 512
        || rest.contains(['/', '@', '?', '#'])
        || rest.chars().any(|c| c.is_whitespace() || c.is_control())
    {
        return None;
    }
    let (host, port) = if let Some(v6) = rest.strip_prefix('[') {
        let (inner, after) = v6.split_once(']')?;
        let port = match after {
            "" => None,
            p => Some(p.strip_prefix(':')?.to_owned()),
        };
        (format!("[{inner}]"), port)
    } else {
        match rest.rsplit_once(':') {
            Some((h, p)) => (h.to_owned(), Some(p.to_owned())),
            None => (rest.to_owned(), None),
        }
    };
    if host.is_empty() || port.as_ref().is_some_and(|p| p.parse::<u16>().is_err()) {
        return None;
    }
    Some((scheme.to_owned(), host, port))
}

fn check(rules: &Rules) -> Result<(), String> {
    for pat in rules
        .remote
        .allow_origins
        .iter()
        .chain(&rules.remote.deny_origins)
    {
        let ok = split_origin(pat).is_some_and(|(_, host, _)| {
            let bare = host.strip_prefix("*.").unwrap_or(&host);
            !bare.is_empty() && !bare.contains('*')
        });
        if !ok {
            return Err(format!(
                "{pat:?} is not an origin (scheme://host[:port] or scheme://*.domain[:port])"
            ));
        }
    }
    for d in &rules.deny {
        let ok = d
            .split_once('/')
            .is_some_and(|(a, k)| !a.is_empty() && !k.is_empty() && !k.contains('/'));
        if !ok {
            return Err(format!(
                "deny entry {d:?} is not <app>/<service> or <app>/*"
            ));
        }
    }
    for d in &rules.network.deny_domains {
        let lower = d.to_ascii_lowercase();
        let lower = lower.strip_suffix('.').unwrap_or(&lower);
        let base = lower.strip_prefix("*.").unwrap_or(lower);
        if !service_sandbox::egress::policy::valid_dns_name(base) {
            return Err(format!(
                "denyDomains entry {d:?} is not a domain (example.com) or *.domain"
            ));
        }
    }
    if let Some(a) = rules
        .network
        .allow_apps
        .iter()
        .chain(&rules.network.deny_apps)
        .find(|a| a.is_empty())
    {
        return Err(format!("app {a:?} is empty"));
    }
    Ok(())
}

/// The policy file as `lstat` sees it (`None`: absent or unreadable).
type FileSig = Option<(u64, i64, i64, i64, i64, u64)>;

fn sig(path: &Path) -> FileSig {
    let dir = path
        .parent()
        .and_then(|d| std::fs::symlink_metadata(d).ok());
    std::fs::symlink_metadata(path).ok().map(|m| {
        (
            m.len(),
            m.mtime(),
            m.mtime_nsec(),
            m.ctime(),
            m.ctime_nsec(),
            m.ino() ^ dir.map_or(0, |d| d.ino().rotate_left(32)),
        )
    })
}

fn read(path: &Path) -> State {
    let shown = path.display();
    // The `policy` directory must be a real directory, not a link to somewhere else.
    if let Some(dir) = path.parent() {
        match std::fs::symlink_metadata(dir) {
            Ok(m) if m.file_type().is_symlink() => {
                return State::Broken(format!("{} is a symlink", dir.display()))
            }
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return State::Absent,
            Err(e) => return State::Broken(format!("{}: {e}", dir.display())),
        }
    }
    // No symlink followed, and never blocking on a FIFO.
    let flags = (rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK).bits() as i32;
    let file = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(flags)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return State::Absent,
        Err(e) => return State::Broken(format!("{shown}: {e} (a symlink is refused)")),
    };
    match file.metadata() {
        Ok(m) if m.is_file() => {}
        Ok(_) => return State::Broken(format!("{shown} is not a regular file")),
        Err(e) => return State::Broken(format!("{shown}: {e}")),
    }
    let mut bytes = Vec::new();
    if let Err(e) = file.take(MAX_POLICY_BYTES + 1).read_to_end(&mut bytes) {
        return State::Broken(format!("{shown}: {e}"));
    }
    parse(path, &bytes)
}

fn parse(path: &Path, bytes: &[u8]) -> State {
    let shown = path.display();
    if bytes.len() as u64 > MAX_POLICY_BYTES {
        return State::Broken(format!("{shown} is over {MAX_POLICY_BYTES} bytes"));
    }
    let rules: Rules = match serde_json::from_slice(bytes) {
        Ok(r) => r,
        Err(e) => return State::Broken(format!("{shown}: {e}")),
    };
    match check(&rules) {
        Ok(()) => State::Loaded(rules),
        Err(why) => State::Broken(format!("{shown}: {why}")),
    }
}

fn recently_changed(sig: FileSig) -> bool {
    let Some((_, _, _, ctime, _, _)) = sig else {
        return false;
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    now - ctime < 2
}

type Cache = Mutex<BTreeMap<PathBuf, (FileSig, Arc<ServicesPolicy>)>>;

fn cache() -> &'static Cache {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    CACHE.get_or_init(Default::default)
}

/// The policy of `dir` now: kept per process until the file's `stat` moves (one `lstat` of the
/// file and of its directory per use).
pub fn load(dir: &DataDir) -> Arc<ServicesPolicy> {
    let path = policy_path(dir);
    let now = sig(&path);
    let mut c = cache().lock().unwrap_or_else(|p| p.into_inner());
    if let Some((was, p)) = c.get(&path) {
        if *was == now {
            return p.clone();
        }
    }
    let policy = Arc::new(ServicesPolicy {
        state: read(&path),
        path: path.clone(),
    });
    // A file changed while read is read again next time (its stat moved after `now`), and so
    // is one changed in the last 2 s: a second edit of the same size inside the file system's
    // timestamp granularity would not move its stat ("racy" like git's index).
    let after = sig(&path);
    if after == now && !recently_changed(now) {
        if c.len() >= 64 {
            c.clear();
        }
        c.insert(path, (now, policy.clone()));
    }
    policy
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origin_patterns_match_exactly_or_strict_subdomains() {
        assert!(origin_matches(
            "https://api.example.com",
            "https://API.example.com"
        ));
        assert!(!origin_matches(
            "https://api.example.com",
            "http://api.example.com"
        ));
        assert!(!origin_matches(
            "https://api.example.com",
            "https://api.example.com:8443"
        ));
        assert!(origin_matches(
            "https://*.internal.example",
            "https://a.b.internal.example"
        ));
        assert!(!origin_matches(
            "https://*.internal.example",
            "https://internal.example"
        ));
        assert!(!origin_matches(
            "https://*.internal.example",
            "https://evilinternal.example"
        ));
        assert!(origin_matches("http://[::1]:80", "http://[::1]:80"));
        assert!(origin_matches(
            "http://127.0.0.1:8080",
            "http://127.0.0.1:8080"
        ));
        assert!(!origin_matches("ftp://x", "ftp://x"));
    }

    #[test]
    fn malformed_patterns_and_entries_break_the_file() {
        for bad in [
            r#"{"remote": {"denyOrigins": ["api.example.com"]}}"#,
            r#"{"remote": {"allowOrigins": ["https://a*.example.com"]}}"#,
            r#"{"remote": {"allowOrigins": ["https://x.example/path"]}}"#,
            r#"{"deny": ["noslash"]}"#,
            r#"{"deny": ["a/b/c"]}"#,
            r#"{"network": {"denyApps": [""]}}"#,
            r#"{"network": {"denyDomains": ["https://x.example.com"]}}"#,
            r#"{"network": {"denyDomains": ["a*.example.com"]}}"#,
            r#"{"network": {"denyDomains": ["localhost"]}}"#,
            r#"{"network": {"denyDomains": ["10.0.0.1"]}}"#,
            r#"{"network": {"denyDomains": [""]}}"#,
            r#"{"network": {"allow": "no"}}"#,
            r#"{"other": 1}"#,
        ] {
            let rules: Result<Rules, _> = serde_json::from_str(bad);
            assert!(
                rules.map(|r| check(&r).is_err()).unwrap_or(true),
                "{bad} should not be usable"
            );
        }
        let ok: Rules = serde_json::from_str("{}").unwrap();
        assert!(ok.remote.allow && ok.network.allow && check(&ok).is_ok());
    }

    #[test]
    fn deny_domains_match_a_domain_or_its_strict_subdomains() {
        let p = ServicesPolicy::from_bytes(
            PathBuf::from("/p/services.json"),
            br#"{"network": {"denyDomains": ["Tracker.example.", "*.ads.example"]}}"#,
        );
        assert!(p.broken().is_none(), "{:?}", p.broken());
        let denied = |host: &str| p.domain_denied("a", "s", host);
        let why = denied("tracker.example").unwrap();
        assert!(
            why.contains("Tracker.example. in network.denyDomains"),
            "{why}"
        );
        assert!(why.contains("/p/services.json"), "{why}");
        assert!(
            denied("x.tracker.example").is_none(),
            "exact entry: not subdomains"
        );
        assert!(denied("cdn.ads.example").is_some());
        assert!(denied("a.b.ads.example").is_some());
        assert!(denied("ads.example").is_none(), "*. is strict");
        assert!(denied("badads.example").is_none());
        assert!(denied("api.example.com").is_none());
        // A service whose network is denied as a whole: every domain.
        let whole = ServicesPolicy::from_bytes(
            PathBuf::from("/p/services.json"),
            br#"{"network": {"denyApps": ["a"]}}"#,
        );
        assert!(whole.domain_denied("a", "s", "api.example.com").is_some());
        assert!(whole.domain_denied("b", "s", "api.example.com").is_none());
        let broken = ServicesPolicy::from_bytes(PathBuf::from("/p/services.json"), b"{");
        assert!(broken.domain_denied("b", "s", "api.example.com").is_some());
        let absent = ServicesPolicy::absent(PathBuf::from("/p/services.json"));
        assert!(absent.domain_denied("a", "s", "tracker.example").is_none());
    }
}
