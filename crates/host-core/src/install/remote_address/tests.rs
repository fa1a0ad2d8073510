//! The address classifier, range by range: the first and last address of every refused range,
//! and the public neighbours just outside it.

use super::*;

fn class(s: &str) -> Option<&'static str> {
    non_public(s.parse().unwrap())
}

#[track_caller]
fn refused(s: &str, want: &str) {
    assert_eq!(class(s), Some(want), "{s}");
}

#[track_caller]
fn public(s: &str) {
    assert_eq!(class(s), None, "{s} should be public");
}

#[test]
fn every_refused_ipv4_range_from_its_first_to_its_last_address() {
    let ranges: &[(&str, &str, &str)] = &[
        ("0.0.0.1", "0.255.255.255", "\"this network\" (0.0.0.0/8)"),
        ("127.0.0.0", "127.255.255.255", "loopback"),
        ("10.0.0.0", "10.255.255.255", "private"),
        ("172.16.0.0", "172.31.255.255", "private"),
        ("192.168.0.0", "192.168.255.255", "private"),
        (
            "100.64.0.0",
            "100.127.255.255",
            "shared address space (CGNAT)",
        ),
        ("169.254.0.0", "169.254.255.255", "link-local"),
        ("192.0.0.0", "192.0.0.255", "IETF protocol assignments"),
        ("192.0.2.0", "192.0.2.255", "documentation"),
        ("198.51.100.0", "198.51.100.255", "documentation"),
        ("203.0.113.0", "203.0.113.255", "documentation"),
        ("198.18.0.0", "198.19.255.255", "benchmarking"),
        ("224.0.0.0", "239.255.255.255", "multicast"),
        ("240.0.0.0", "255.255.255.254", "reserved"),
    ];
    for (first, last, what) in ranges {
        refused(first, what);
        refused(last, what);
    }
    refused("0.0.0.0", "unspecified");
    refused("255.255.255.255", "broadcast");
    refused("169.254.169.254", "link-local"); // the cloud metadata service
}

#[test]
fn the_public_neighbours_of_each_ipv4_range_are_allowed() {
    for ip in [
        "1.0.0.0",
        "9.255.255.255",
        "11.0.0.0",
        "126.255.255.255",
        "128.0.0.0",
        "172.15.255.255",
        "172.32.0.0",
        "192.167.255.255",
        "192.169.0.0",
        "100.63.255.255",
        "100.128.0.0",
        "169.253.255.255",
        "169.255.0.0",
        "191.255.255.255",
        "192.0.1.0",
        "192.0.3.0",
        "198.17.255.255",
        "198.20.0.0",
        "198.51.99.255",
        "198.51.101.0",
        "203.0.112.255",
        "203.0.114.0",
        "223.255.255.255",
        "8.8.8.8",
        "93.184.216.34",
    ] {
        public(ip);
    }
}

#[test]
fn every_refused_ipv6_range_and_its_edges() {
    refused("::", "unspecified");
    refused("::1", "loopback");
    refused("::2", "IPv4-compatible (deprecated)");
    refused("::808:808", "IPv4-compatible (deprecated)");
    refused("fe80::", "link-local");
    refused("febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "link-local");
    refused("fec0::", "site-local (deprecated)");
    refused(
        "feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
        "site-local (deprecated)",
    );
    refused("fc00::", "unique-local (fc00::/7)");
    refused(
        "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
        "unique-local (fc00::/7)",
    );
    refused("ff00::", "multicast");
    refused("ff02::1", "multicast");
    refused("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "multicast");
    refused("2001:db8::", "documentation");
    refused("2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", "documentation");
    refused("3fff::", "documentation");
    refused("3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff", "documentation");
    refused("2001::", "IETF protocol assignments"); // Teredo
    refused("2001:1ff:ffff::", "IETF protocol assignments");
    refused("100::", "discard-only");
    refused("100::ffff:ffff:ffff:ffff", "discard-only");
    refused("64:ff9b:1::", "local-use NAT64");
    refused("64:ff9b:1:ffff:ffff:ffff:ffff:ffff", "local-use NAT64");
    refused("fbff::", "reserved (not global unicast)");
    refused("1fff:ffff::", "reserved (not global unicast)");
    refused("4000::", "reserved (not global unicast)");
    for ip in [
        "2000::",
        "2001:200::",
        "2001:db7:ffff:ffff:ffff:ffff:ffff:ffff",
        "2001:db9::",
        "2001:4860:4860::8888",
        "2606:4700:4700::1111",
        "3ffe:ffff::",
        "3fff:1000::",
        "3fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
    ] {
        public(ip);
    }
}

#[test]
fn an_ipv4_address_inside_ipv6_is_judged_as_that_address() {
    refused("::ffff:127.0.0.1", "loopback");
    refused("::ffff:10.1.2.3", "private");
    refused("::ffff:169.254.169.254", "link-local");
    refused("::ffff:0.0.0.0", "unspecified");
    refused("::ffff:255.255.255.255", "broadcast");
    public("::ffff:8.8.8.8");
    refused("64:ff9b::7f00:1", "loopback");
    refused("64:ff9b::c0a8:101", "private");
    public("64:ff9b::808:808");
    refused("2002:7f00:1::", "loopback");
    refused("2002:a9fe:a9fe::1", "link-local");
    refused("2002:c0a8:0101:ffff::", "private");
    public("2002:808:808::");
}

#[test]
fn a_name_is_refused_when_any_of_its_addresses_is() {
    let good: IpAddr = "93.184.216.34".parse().unwrap();
    let bad: IpAddr = "10.0.0.1".parse().unwrap();
    assert!(check_resolved("api.example.com", &[good]).is_ok());
    let e = check_resolved("api.example.com", &[good, bad]).unwrap_err();
    assert_eq!((e.addr, e.class), (bad, "private"));
    assert!(
        e.to_string()
            .contains("api.example.com resolves to 10.0.0.1"),
        "{e}"
    );
    // A loopback answer for another name is never the loopback exception.
    let lo: IpAddr = "127.0.0.1".parse().unwrap();
    assert_eq!(
        check_resolved("rebind.example.com", &[lo])
            .unwrap_err()
            .class,
        "loopback"
    );
}

#[test]
fn the_debug_exception_covers_only_loopback_for_a_literal_loopback_host() {
    let lo: IpAddr = "127.0.0.1".parse().unwrap();
    let private: IpAddr = "192.168.1.1".parse().unwrap();
    // Whatever the build, a private address is refused even for a loopback host.
    assert!(check("localhost", true, private).is_err());
    assert!(check("127.0.0.1", true, "169.254.169.254".parse().unwrap()).is_err());
    assert!(check("example.com", false, lo).is_err());
    assert_eq!(check("localhost", true, lo).is_ok(), cfg!(debug_assertions));
    let url = |s: &str| url::Url::parse(s).unwrap();
    assert!(check_url(&url("https://10.0.0.1/rpc")).is_err());
    assert!(check_url(&url("https://[fd00::1]/rpc")).is_err());
    assert!(check_url(&url("https://[::ffff:127.0.0.1]/rpc")).is_err());
    // The URL parser normalizes other IPv4 spellings to the literal first.
    assert!(check_url(&url("https://0xa9.0xfe.0xa9.0xfe/")).is_err());
    assert!(check_url(&url("https://2852039166/")).is_err());
    assert!(check_url(&url("https://api.example.com/rpc")).is_ok());
    assert!(check_url(&url("https://93.184.216.34/rpc")).is_ok());
    assert_eq!(
        check_url(&url("http://127.0.0.1:9/rpc")).is_ok(),
        cfg!(debug_assertions)
    );
    assert!(check_endpoint("not a url").is_ok());
}
