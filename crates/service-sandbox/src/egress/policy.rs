//! The egress decision: which `CONNECT host:port` a `remote-allowed` service may open. Pure
//! functions (no I/O but the injected resolver) so every rule is tested on its own.
//!
//! A connection is allowed only when ALL hold: the user granted network to the service; the
//! request head is a well-formed `CONNECT host:443` within [`MAX_HEAD`]; `host` is a DNS name (never
//! an IP literal) equal to a declared domain or a subdomain of a declared `*.` entry, and not
//! one the host's deny probe names (the admin's policy, asked at each connection); and EVERY
//! address it resolves to is public (no loopback, private, link-local, metadata, CGNAT, multicast
//! or reserved range: a name that rebinds to `127.0.0.1` is refused after resolution).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

/// Largest accepted request head (request line + headers), bytes.
pub const MAX_HEAD: usize = 8 * 1024;
/// The only port a service may reach.
pub const ALLOWED_PORT: u16 = 443;

/// Why a connection was refused; [`Refusal::code`] is the stable, documented error code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    NotGranted,
    HeadTooLarge,
    BadRequest,
    MethodNotAllowed,
    PortNotAllowed(u16),
    IpLiteral,
    DomainNotAllowed(String),
    /// The host's deny probe (the admin's policy) refused the domain.
    DomainDenied(String),
    ResolveFailed,
    AddressNotAllowed(IpAddr),
    TooManyConnections,
    ConnectFailed,
}

impl Refusal {
    pub fn code(&self) -> &'static str {
        match self {
            Self::NotGranted => "service.egress_not_granted",
            Self::HeadTooLarge => "service.egress_head_too_large",
            Self::BadRequest => "service.egress_bad_request",
            Self::MethodNotAllowed => "service.egress_method_not_allowed",
            Self::PortNotAllowed(_) => "service.egress_port_not_allowed",
            Self::IpLiteral => "service.egress_ip_literal",
            Self::DomainNotAllowed(_) => "service.egress_domain_not_allowed",
            Self::DomainDenied(_) => "service.policy_denied",
            Self::ResolveFailed => "service.egress_resolve_failed",
            Self::AddressNotAllowed(_) => "service.egress_address_not_allowed",
            Self::TooManyConnections => "service.egress_too_many_connections",
            Self::ConnectFailed => "service.egress_connect_failed",
        }
    }

    /// The HTTP status the proxy answers with.
    pub fn status(&self) -> u16 {
        match self {
            Self::HeadTooLarge => 431,
            Self::BadRequest => 400,
            Self::MethodNotAllowed => 405,
            Self::ResolveFailed | Self::ConnectFailed => 502,
            Self::TooManyConnections => 429,
            _ => 403,
        }
    }
}

/// A host's answer to "may this service reach `host` now?" beyond its declaration: `true`
/// refuses (`service.policy_denied`). Asked at each connection, before any lookup.
pub type DomainDeny = Arc<dyn Fn(&str) -> bool + Send + Sync>;

/// What one service may reach.
#[derive(Clone, Default)]
pub struct EgressPolicy {
    domains: Vec<String>,
    granted: bool,
    test_allow: Option<SocketAddr>,
    deny: Option<DomainDeny>,
}

impl std::fmt::Debug for EgressPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EgressPolicy")
            .field("domains", &self.domains)
            .field("granted", &self.granted)
            .field("test_allow", &self.test_allow)
            .field("deny", &self.deny.is_some())
            .finish()
    }
}

impl EgressPolicy {
    /// `domains`: the service's declared `allowedDomains` (`example.com`, `*.example.com`);
    /// entries that are not valid DNS names or wildcards are dropped. `granted`: the user's grant.
    pub fn new(domains: &[String], granted: bool) -> Self {
        let domains = domains
            .iter()
            .filter_map(|d| {
                let d = normalize(d)?;
                let name = d.strip_prefix("*.").unwrap_or(&d);
                valid_dns_name(name).then_some(d)
            })
            .collect();
        Self {
            domains,
            granted,
            test_allow: None,
            deny: None,
        }
    }

    /// The same policy refusing, at each connection, a declared domain `deny` names (the
    /// admin's `network.denyDomains`, re-read by the host as it changes).
    pub fn with_deny(mut self, deny: DomainDeny) -> Self {
        self.deny = Some(deny);
        self
    }

    pub fn granted(&self) -> bool {
        self.granted
    }

    pub fn domains(&self) -> &[String] {
        &self.domains
    }

    /// Debug builds only: let exactly `addr` through (a loopback test server), skipping the
    /// domain, port and address rules. Release builds have no such switch.
    #[cfg(debug_assertions)]
    pub fn with_test_allow(mut self, addr: Option<SocketAddr>) -> Self {
        self.test_allow = addr;
        self
    }

    /// Whether `host` (already normalized) is a declared domain or under a declared `*.` entry.
    pub fn domain_allowed(&self, host: &str) -> bool {
        self.domains.iter().any(|d| match d.strip_prefix("*.") {
            Some(base) => host.len() > base.len() + 1 && host.ends_with(&format!(".{base}")),
            None => d == host,
        })
    }

    /// Parse and judge a request head; on success the address to connect to comes from
    /// `resolve(host, port)` and every resolved address passed [`address_allowed`].
    pub fn decide(
        &self,
        head: &[u8],
        resolve: impl FnOnce(&str, u16) -> std::io::Result<Vec<SocketAddr>>,
    ) -> Result<Decision, Refusal> {
        if !self.granted {
            return Err(Refusal::NotGranted);
        }
        let (host, port) = parse_connect(head)?;
        if let Some(allow) = self.test_allow {
            if let Ok(ip) = host.parse::<IpAddr>() {
                if SocketAddr::new(ip, port) == allow {
                    return Ok(Decision {
                        host,
                        addrs: vec![allow],
                    });
                }
            }
        }
        if host.parse::<IpAddr>().is_ok() || host.starts_with('[') {
            return Err(Refusal::IpLiteral);
        }
        let host = normalize(&host).ok_or(Refusal::BadRequest)?;
        if !valid_dns_name(&host) {
            return Err(Refusal::BadRequest);
        }
        if port != ALLOWED_PORT {
            return Err(Refusal::PortNotAllowed(port));
        }
        if !self.domain_allowed(&host) {
            return Err(Refusal::DomainNotAllowed(host));
        }
        if self.deny.as_ref().is_some_and(|deny| deny(&host)) {
            return Err(Refusal::DomainDenied(host));
        }
        let addrs = resolve(&host, port).map_err(|_| Refusal::ResolveFailed)?;
        if addrs.is_empty() {
            return Err(Refusal::ResolveFailed);
        }
        // every answer must be public: a mixed answer is a rebinding attempt, refused whole
        if let Some(bad) = addrs.iter().find(|a| !address_allowed(a.ip())) {
            return Err(Refusal::AddressNotAllowed(bad.ip()));
        }
        Ok(Decision { host, addrs })
    }
}

/// An allowed connection: the normalized host and its (all public) addresses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    pub host: String,
    pub addrs: Vec<SocketAddr>,
}

/// Lowercase, one trailing dot dropped; `None` when empty or non-ASCII.
fn normalize(name: &str) -> Option<String> {
    let n = name.trim().to_ascii_lowercase();
    let n = n.strip_suffix('.').unwrap_or(&n).to_string();
    (!n.is_empty() && n.is_ascii()).then_some(n)
}

/// LDH labels of 1..=63, total <= 253, at least two labels, not all-numeric last label.
pub fn valid_dns_name(name: &str) -> bool {
    if name.len() > 253 {
        return false;
    }
    let labels: Vec<&str> = name.split('.').collect();
    labels.len() >= 2
        && labels.iter().all(|l| {
            !l.is_empty()
                && l.len() <= 63
                && !l.starts_with('-')
                && !l.ends_with('-')
                && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        })
        && !labels
            .last()
            .is_some_and(|l| l.bytes().all(|b| b.is_ascii_digit()))
}

/// `CONNECT host:port HTTP/1.x` then headers up to the blank line, all within [`MAX_HEAD`].
pub fn parse_connect(head: &[u8]) -> Result<(String, u16), Refusal> {
    let end = find_head_end(head).ok_or(if head.len() >= MAX_HEAD {
        Refusal::HeadTooLarge
    } else {
        Refusal::BadRequest
    })?;
    if end > MAX_HEAD {
        return Err(Refusal::HeadTooLarge);
    }
    let text = std::str::from_utf8(&head[..end]).map_err(|_| Refusal::BadRequest)?;
    let line = text.lines().next().ok_or(Refusal::BadRequest)?;
    let mut parts = line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(Refusal::BadRequest);
    };
    if !version.starts_with("HTTP/1.") {
        return Err(Refusal::BadRequest);
    }
    if method != "CONNECT" {
        return Err(Refusal::MethodNotAllowed);
    }
    let (host, port) = target.rsplit_once(':').ok_or(Refusal::BadRequest)?;
    let port: u16 = port.parse().map_err(|_| Refusal::BadRequest)?;
    if host.is_empty() || host.contains(['/', '@', '%', '\\']) {
        return Err(Refusal::BadRequest);
    }
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    Ok((host.to_string(), port))
}

/// Index just past `\r\n\r\n`.
pub fn find_head_end(buf: &[u8]) -> Option<usize> {
    buf.windows(4).position(|w| w == b"\r\n\r\n").map(|p| p + 4)
}

/// Only globally routable unicast addresses.
pub fn address_allowed(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4_allowed(v4),
        IpAddr::V6(v6) => v6_allowed(v6),
    }
}

fn v4_allowed(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    !(ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local() // 169.254/16, the cloud metadata 169.254.169.254 included
        || ip.is_broadcast()
        || ip.is_multicast()
        || ip.is_documentation()
        || a == 0
        || (a == 100 && (64..128).contains(&b)) // CGNAT 100.64/10
        || (a == 192 && b == 0 && c == 0) // IETF 192.0.0/24
        || (a == 198 && (b == 18 || b == 19)) // benchmarking
        || a >= 240)
}

fn v6_allowed(ip: Ipv6Addr) -> bool {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return v4_allowed(v4);
    }
    let s = ip.segments();
    if s[0] == 0x64 && s[1] == 0xff9b && s[2..6] == [0, 0, 0, 0] {
        // NAT64: judge the embedded IPv4 address
        let [a, b] = s[6].to_be_bytes();
        let [c, d] = s[7].to_be_bytes();
        return v4_allowed(Ipv4Addr::new(a, b, c, d));
    }
    !(ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_multicast()
        || (s[0] & 0xfe00) == 0xfc00 // unique local (fd00:ec2::254 metadata included)
        || (s[0] & 0xffc0) == 0xfe80 // link local
        || (s[0] & 0xffc0) == 0xfec0 // site local
        || (s[0] == 0x2001 && s[1] == 0x0db8) // documentation
        || s[0..6] == [0, 0, 0, 0, 0, 0]) // IPv4-compatible ::a.b.c.d
}
