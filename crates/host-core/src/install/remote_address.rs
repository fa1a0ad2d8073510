//! Which addresses the host's HTTPS client may reach for a `server-assisted` service (SSRF and
//! DNS rebinding, docs/services.md "Remote services"). An endpoint is a manifest value: without
//! this an app could aim the host at the user's router, LAN, the cloud metadata service
//! (`169.254.169.254`), loopback daemons, or a name that resolves to one of them.
//!
//! Only public unicast addresses are reachable. Refused (`service.remote_address_refused`):
//! unspecified, "this network" `0/8`, loopback, private `10/8` `172.16/12` `192.168/16`,
//! CGNAT `100.64/10`, link-local `169.254/16` `fe80::/10`, IETF assignments `192.0.0/24`
//! `2001::/23`, documentation `192.0.2/24` `198.51.100/24` `203.0.113/24` `2001:db8::/32`
//! `3fff::/20`, benchmarking `198.18/15`, reserved `240/4`, broadcast, multicast `224/4`
//! `ff00::/8`, unique-local `fc00::/7`, site-local `fec0::/10`, discard `100::/64`, NAT64
//! local-use `64:ff9b:1::/48`, IPv4-compatible `::/96`, anything outside global unicast
//! `2000::/3`; an IPv4 address inside IPv6 (mapped `::ffff:0:0/96`, NAT64 `64:ff9b::/96`, 6to4
//! `2002::/16`) is judged as the IPv4 address it carries.
//!
//! Where: an IP-literal endpoint at readiness and allowance time ([`check_endpoint`]) and
//! again per call; a name at connect time, resolved once, every address checked, and the
//! connection made to the checked addresses only (`hosting/services/remote/resolve.rs`: no
//! second resolution, so a rebinding DNS server cannot swap the address after the check).
//!
//! Debug builds keep one exception for the tests' local servers: when the endpoint's host is
//! literally loopback (`127.0.0.0/8`, `[::1]` or `localhost`), loopback addresses are allowed;
//! every other range stays refused. Release builds have no exception and no switch;
//! [`use_release_rules`] makes a debug test process use the release rules (one way only).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::atomic::{AtomicBool, Ordering};

/// The stable refusal code.
pub const CODE: &str = "service.remote_address_refused";

/// An address the endpoint may not reach, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    /// The endpoint host as declared (a name or an IP literal).
    pub host: String,
    pub addr: IpAddr,
    /// The range it falls in (`loopback`, `private`, `link-local`, ...).
    pub class: &'static str,
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.host == self.addr.to_string() {
            write!(f, "the endpoint address {} is {}", self.addr, self.class)?;
        } else {
            write!(
                f,
                "the endpoint host {} resolves to {}, which is {}",
                self.host, self.addr, self.class
            )?;
        }
        f.write_str(": a remote service may only reach public internet addresses")
    }
}

impl std::error::Error for Refused {}

static RELEASE_RULES: AtomicBool = AtomicBool::new(false);

/// From now on this process applies the release rules (no loopback exception) even in a debug
/// build. For tests of the release behaviour; it can only make the check stricter, and there
/// is no way back.
pub fn use_release_rules() {
    RELEASE_RULES.store(true, Ordering::SeqCst);
}

/// Whether loopback addresses are allowed for an endpoint host: debug builds only, and only
/// when the host is literally loopback.
fn loopback_exception(host_is_loopback: bool) -> bool {
    cfg!(debug_assertions) && !RELEASE_RULES.load(Ordering::SeqCst) && host_is_loopback
}

/// Whether `name` (a domain, as the URL parser normalized it) is the loopback name.
pub fn is_loopback_name(name: &str) -> bool {
    name.eq_ignore_ascii_case("localhost")
}

/// The range `ip` falls in when it is not a public unicast address; `None` when it is public.
pub fn non_public(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => v4_class(v4),
        IpAddr::V6(v6) => v6_class(v6),
    }
}

fn v4_class(ip: Ipv4Addr) -> Option<&'static str> {
    let n = u32::from(ip);
    let within = |net: [u8; 4], bits: u32| (n ^ u32::from_be_bytes(net)) >> (32 - bits) == 0;
    Some(if n == 0 {
        "unspecified"
    } else if n == u32::MAX {
        "broadcast"
    } else if within([0, 0, 0, 0], 8) {
        "\"this network\" (0.0.0.0/8)"
    } else if within([127, 0, 0, 0], 8) {
        "loopback"
    } else if within([10, 0, 0, 0], 8)
        || within([172, 16, 0, 0], 12)
        || within([192, 168, 0, 0], 16)
    {
        "private"
    } else if within([100, 64, 0, 0], 10) {
        "shared address space (CGNAT)"
    } else if within([169, 254, 0, 0], 16) {
        "link-local"
    } else if within([192, 0, 0, 0], 24) {
        "IETF protocol assignments"
    } else if within([192, 0, 2, 0], 24)
        || within([198, 51, 100, 0], 24)
        || within([203, 0, 113, 0], 24)
    {
        "documentation"
    } else if within([198, 18, 0, 0], 15) {
        "benchmarking"
    } else if within([224, 0, 0, 0], 4) {
        "multicast"
    } else if within([240, 0, 0, 0], 4) {
        "reserved"
    } else {
        return None;
    })
}

fn v6_class(ip: Ipv6Addr) -> Option<&'static str> {
    let n = u128::from(ip);
    let within = |net: u128, bits: u32| (n ^ net) >> (128 - bits) == 0;
    let embedded = |shift: u32| Ipv4Addr::from((n >> shift) as u32);
    if n == 0 {
        return Some("unspecified");
    }
    if n == 1 {
        return Some("loopback");
    }
    // An IPv4 address inside IPv6 is judged as that address.
    if within(0xffff_0000_0000, 96) || within(0x0064_ff9b << 96, 96) {
        return v4_class(embedded(0));
    }
    if within(0x2002 << 112, 16) {
        return v4_class(embedded(80));
    }
    Some(if within(0, 96) {
        "IPv4-compatible (deprecated)"
    } else if within(0x0064_ff9b_0001 << 80, 48) {
        "local-use NAT64"
    } else if within(0x0100 << 112, 64) {
        "discard-only"
    } else if within(0xfe80 << 112, 10) {
        "link-local"
    } else if within(0xfec0 << 112, 10) {
        "site-local (deprecated)"
    } else if within(0xfc00 << 112, 7) {
        "unique-local (fc00::/7)"
    } else if within(0xff00 << 112, 8) {
        "multicast"
    } else if within(0x2001_0db8 << 96, 32) || within(0x3fff << 112, 20) {
        "documentation"
    } else if within(0x2001 << 112, 23) {
        "IETF protocol assignments"
    } else if !within(0x2000 << 112, 3) {
        "reserved (not global unicast)"
    } else {
        return None;
    })
}

/// Checks one address for an endpoint host (`host_is_loopback`: the host is literally
/// loopback, which in debug builds allows loopback addresses).
pub fn check(host: &str, host_is_loopback: bool, addr: IpAddr) -> Result<(), Refused> {
    match non_public(addr) {
        None => Ok(()),
        Some("loopback") if loopback_exception(host_is_loopback) => Ok(()),
        Some(class) => Err(Refused {
            host: host.to_owned(),
            addr,
            class,
        }),
    }
}

/// Checks every address a name resolved to: one refused address refuses the name (a name
/// that answers both public and private addresses is a rebinding attempt or a mistake).
pub fn check_resolved(name: &str, addrs: &[IpAddr]) -> Result<(), Refused> {
    let loopback_name = is_loopback_name(name);
    addrs
        .iter()
        .try_for_each(|a| check(name, loopback_name, *a))
}

/// Checks an endpoint whose host is an IP literal (a name is checked when it is resolved).
pub fn check_url(u: &url::Url) -> Result<(), Refused> {
    let (host, ip) = match u.host() {
        Some(url::Host::Ipv4(ip)) => (ip.to_string(), IpAddr::V4(ip)),
        Some(url::Host::Ipv6(ip)) => (ip.to_string(), IpAddr::V6(ip)),
        _ => return Ok(()),
    };
    check(&host, ip.is_loopback(), ip)
}

/// [`check_url`] of an endpoint as written in the declaration (not a URL: nothing to check
/// here, the declaration check refuses it).
pub fn check_endpoint(endpoint: &str) -> Result<(), Refused> {
    url::Url::parse(endpoint).map_or(Ok(()), |u| check_url(&u))
}

#[cfg(test)]
mod tests;
