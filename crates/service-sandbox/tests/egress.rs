//! Egress for `remote-allowed` services: the decision function rule by rule (domains, wildcards,
//! IP literals, DNS rebinding, ports, oversize heads, grant), then the plumbing end to end: a
//! sandboxed service reaches the one test-allowed loopback target through the host proxy, is
//! refused for another, and a direct socket to any address still fails.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::net::{IpAddr, SocketAddr, TcpListener};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::Host;
use serde_json::{json, Value};
use service_sandbox::egress::policy::{address_allowed, parse_connect, MAX_HEAD};
use service_sandbox::egress::{EgressAudit, EgressPolicy, EgressProxy, Refusal};
use service_sandbox::{Policy, ServiceProcess, Supervisor};

fn policy(domains: &[&str]) -> EgressPolicy {
    let d: Vec<String> = domains.iter().map(|s| s.to_string()).collect();
    EgressPolicy::new(&d, true)
}

fn connect(target: &str) -> Vec<u8> {
    format!("CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n").into_bytes()
}

fn public(_: &str, port: u16) -> std::io::Result<Vec<SocketAddr>> {
    Ok(vec![SocketAddr::new(
        "93.184.216.34".parse().unwrap(),
        port,
    )])
}

fn resolves_to(
    ips: &'static [&'static str],
) -> impl Fn(&str, u16) -> std::io::Result<Vec<SocketAddr>> {
    move |_, port| {
        Ok(ips
            .iter()
            .map(|ip| SocketAddr::new(ip.parse().unwrap(), port))
            .collect())
    }
}

fn refused(p: &EgressPolicy, head: &[u8]) -> &'static str {
    p.decide(head, public).unwrap_err().code()
}

#[test]
fn an_exact_declared_domain_on_443_is_allowed_and_resolved_by_the_host() {
    let p = policy(&["api.example.com"]);
    let d = p.decide(&connect("api.example.com:443"), public).unwrap();
    assert_eq!(d.host, "api.example.com");
    assert_eq!(d.addrs.len(), 1);
    // case and one trailing dot are normalized
    assert!(p.decide(&connect("API.Example.COM.:443"), public).is_ok());
}

#[test]
fn undeclared_domains_and_lookalikes_are_refused() {
    let p = policy(&["api.example.com"]);
    for host in [
        "example.com",
        "evil.com",
        "api.example.com.evil.com",
        "xapi.example.com",
        "sub.api.example.com",
        "api-example.com",
    ] {
        assert_eq!(
            refused(&p, &connect(&format!("{host}:443"))),
            "service.egress_domain_not_allowed",
            "{host}"
        );
    }
}

#[test]
fn a_wildcard_entry_covers_subdomains_only() {
    let p = policy(&["*.example.com"]);
    assert!(p.decide(&connect("a.example.com:443"), public).is_ok());
    assert!(p.decide(&connect("a.b.example.com:443"), public).is_ok());
    for host in ["example.com", "badexample.com", "a.example.com.evil.net"] {
        assert_eq!(
            refused(&p, &connect(&format!("{host}:443"))),
            "service.egress_domain_not_allowed",
            "{host}"
        );
    }
}

#[test]
fn malformed_declared_entries_never_match_anything() {
    let p = policy(&[
        "*",
        "*.com.",
        "",
        "exa mple.com",
        "*.*.example.com",
        "127.0.0.1",
    ]);
    // "*.com" is a syntactically valid wildcard of a one-label name: dropped (needs 2 labels)
    assert!(p.domains().is_empty(), "{:?}", p.domains());
    assert_eq!(
        refused(&p, &connect("a.com:443")),
        "service.egress_domain_not_allowed"
    );
}

#[test]
fn ip_literals_are_refused_even_when_public() {
    let p = policy(&["example.com"]);
    for t in [
        "93.184.216.34:443",
        "127.0.0.1:443",
        "169.254.169.254:443",
        "[::1]:443",
        "[2606:2800:220:1::1]:443",
    ] {
        assert_eq!(refused(&p, &connect(t)), "service.egress_ip_literal", "{t}");
    }
    // numeric tricks that resolvers accept as IPv4 are not DNS names
    for t in ["2130706433:443", "127.1:443", "0x7f.0.0.1:443"] {
        let code = refused(&p, &connect(t));
        assert!(
            code == "service.egress_bad_request" || code == "service.egress_domain_not_allowed",
            "{t}: {code}"
        );
    }
}

#[test]
fn the_hosts_deny_probe_refuses_a_declared_domain_before_any_lookup_and_is_asked_each_time() {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::Arc;
    let denying = Arc::new(AtomicBool::new(true));
    let asked = Arc::new(std::sync::Mutex::new(Vec::new()));
    let (d, a) = (denying.clone(), asked.clone());
    let p = policy(&["api.example.com", "*.example.net"]).with_deny(Arc::new(move |host| {
        a.lock().unwrap().push(host.to_owned());
        d.load(Ordering::SeqCst) && host.ends_with(".example.net")
    }));
    let lookups = AtomicUsize::new(0);
    let counting = |h: &str, port: u16| {
        lookups.fetch_add(1, Ordering::SeqCst);
        public(h, port)
    };
    let e = p
        .decide(&connect("CDN.Example.NET.:443"), counting)
        .unwrap_err();
    assert_eq!(e, Refusal::DomainDenied("cdn.example.net".into()));
    assert_eq!((e.code(), e.status()), ("service.policy_denied", 403));
    assert_eq!(
        lookups.load(Ordering::SeqCst),
        0,
        "no lookup for a denied name"
    );
    // The probe gets the normalized name, and only for declared domains.
    assert_eq!(
        refused(&p, &connect("evil.example.org:443")),
        "service.egress_domain_not_allowed"
    );
    assert_eq!(*asked.lock().unwrap(), ["cdn.example.net"]);
    // A domain it does not name passes; lifting the deny applies to the next connection.
    assert!(p.decide(&connect("api.example.com:443"), public).is_ok());
    denying.store(false, Ordering::SeqCst);
    assert!(p.decide(&connect("cdn.example.net:443"), counting).is_ok());
    assert_eq!(lookups.load(Ordering::SeqCst), 1);
    // Without the user's grant the probe is never asked.
    let before = asked.lock().unwrap().len();
    let ungranted = EgressPolicy::new(&["api.example.com".into()], false)
        .with_deny(Arc::new(move |_| panic!("asked without a grant")));
    assert_eq!(
        refused(&ungranted, &connect("api.example.com:443")),
        "service.egress_not_granted"
    );
    assert_eq!(asked.lock().unwrap().len(), before);
}

#[test]
fn a_declared_domain_that_rebinds_to_an_internal_address_is_refused_after_resolution() {
    let p = policy(&["api.example.com"]);
    let cases: &[&'static [&'static str]] = &[
        &["127.0.0.1"],
        &["10.1.2.3"],
        &["172.16.0.1"],
        &["192.168.1.1"],
        &["169.254.169.254"],
        &["100.64.0.1"],
        &["0.0.0.0"],
        &["::1"],
        &["fe80::1"],
        &["fd00:ec2::254"],
        &["::ffff:127.0.0.1"],
        &["64:ff9b::a9fe:a9fe"],
        // one good answer does not launder a bad one
        &["93.184.216.34", "127.0.0.1"],
    ];
    for ips in cases {
        let err = p
            .decide(&connect("api.example.com:443"), resolves_to(ips))
            .unwrap_err();
        assert_eq!(err.code(), "service.egress_address_not_allowed", "{ips:?}");
    }
    let err = p
        .decide(&connect("api.example.com:443"), resolves_to(&[]))
        .unwrap_err();
    assert_eq!(err.code(), "service.egress_resolve_failed");
}

#[test]
fn address_rules_allow_public_unicast_only() {
    for ip in ["93.184.216.34", "1.1.1.1", "2606:2800:220:1::1"] {
        assert!(address_allowed(ip.parse::<IpAddr>().unwrap()), "{ip}");
    }
    for ip in [
        "127.0.0.53",
        "10.0.0.1",
        "169.254.0.1",
        "224.0.0.1",
        "255.255.255.255",
        "240.0.0.1",
        "198.18.0.1",
        "192.0.2.1",
        "fc00::1",
        "ff02::1",
        "2001:db8::1",
        "::",
    ] {
        assert!(!address_allowed(ip.parse::<IpAddr>().unwrap()), "{ip}");
    }
}

#[test]
fn ports_other_than_443_are_refused() {
    let p = policy(&["api.example.com"]);
    for port in [80, 22, 8443, 0, 65535] {
        assert_eq!(
            refused(&p, &connect(&format!("api.example.com:{port}"))),
            "service.egress_port_not_allowed",
            "{port}"
        );
    }
}

#[test]
fn oversize_and_malformed_heads_are_refused_with_stable_codes() {
    let p = policy(&["api.example.com"]);
    let mut big = b"CONNECT api.example.com:443 HTTP/1.1\r\nX: ".to_vec();
    big.extend(std::iter::repeat_n(b'a', MAX_HEAD));
    assert_eq!(refused(&p, &big), "service.egress_head_too_large");
    let mut big_done = big.clone();
    big_done.extend(b"\r\n\r\n");
    assert_eq!(refused(&p, &big_done), "service.egress_head_too_large");
    for head in [
        &b"CONNECT api.example.com:443 HTTP/1.1\r\n"[..], // unterminated
        b"CONNECT api.example.com HTTP/1.1\r\n\r\n",
        b"CONNECT api.example.com:99999 HTTP/1.1\r\n\r\n",
        b"CONNECT user@api.example.com:443 HTTP/1.1\r\n\r\n",
        b"CONNECT  api.example.com:443 HTTP/1.1\r\n\r\n",
        b"CONNECT api.example.com:443 SPDY/3\r\n\r\n",
        b"\xff\xfe\r\n\r\n",
    ] {
        assert_eq!(
            refused(&p, head),
            "service.egress_bad_request",
            "{}",
            String::from_utf8_lossy(head)
        );
    }
    assert_eq!(
        refused(&p, b"GET http://api.example.com/ HTTP/1.1\r\n\r\n"),
        "service.egress_method_not_allowed"
    );
    assert_eq!(
        parse_connect(&connect("api.example.com:443")).unwrap(),
        ("api.example.com".to_string(), 443)
    );
}

#[test]
fn without_the_users_grant_nothing_is_allowed() {
    let p = EgressPolicy::new(&["api.example.com".to_string()], false);
    assert_eq!(
        refused(&p, &connect("api.example.com:443")),
        "service.egress_not_granted"
    );
    let p = EgressPolicy::new(&["api.example.com".to_string()], false)
        .with_test_allow(Some("127.0.0.1:9".parse().unwrap()));
    assert_eq!(
        refused(&p, &connect("127.0.0.1:9")),
        "service.egress_not_granted"
    );
}

#[test]
fn the_test_override_lets_exactly_one_address_through() {
    let allow: SocketAddr = "127.0.0.1:4567".parse().unwrap();
    let p = policy(&[]).with_test_allow(Some(allow));
    let d = p.decide(&connect("127.0.0.1:4567"), public).unwrap();
    assert_eq!(d.addrs, vec![allow]);
    assert_eq!(
        refused(&p, &connect("127.0.0.1:4568")),
        "service.egress_ip_literal"
    );
    assert_eq!(
        refused(&p, &connect("localhost:4567")),
        "service.egress_bad_request"
    );
    assert_eq!(
        Refusal::TooManyConnections.code(),
        "service.egress_too_many_connections"
    );
}

// ---- end to end through the sandbox ----

/// The egress client service, shared with host-core's `services_egress` test.
const CLIENT: &str = include_str!("../../../fixtures/services/egress_client.py");

/// A loopback "remote": answers each line with `pong:<line>`.
fn echo_server() -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    std::thread::spawn(move || {
        for c in l.incoming().flatten() {
            std::thread::spawn(move || {
                let mut w = c.try_clone().unwrap();
                for line in BufReader::new(c).lines().map_while(Result::ok) {
                    let _ = writeln!(w, "pong:{line}");
                }
            });
        }
    });
    addr
}

fn start_client(host: &Host, proxy: &mut EgressProxy) -> ServiceProcess {
    std::fs::write(host.package.join("egress_client.py"), CLIENT).unwrap();
    let spec = host.spec(&["/usr/bin/python3", "/app/egress_client.py"]);
    ServiceProcess::start_with_egress(
        &spec,
        Box::new(|_, _| Err((-32601, "none".into()))),
        Some(proxy),
    )
    .unwrap()
}

fn call(svc: &mut ServiceProcess, method: &str, params: Value) -> Value {
    svc.call(method, params, Duration::from_secs(30)).unwrap()
}

#[test]
fn a_sandboxed_service_reaches_only_the_allowed_target_through_the_proxy() {
    let target = echo_server();
    let other = echo_server();
    let audit: Arc<Mutex<Vec<EgressAudit>>> = Arc::default();
    let sink = audit.clone();
    let p = policy(&["api.example.com"]).with_test_allow(Some(target));
    let mut proxy = EgressProxy::start(p, Arc::new(move |a| sink.lock().unwrap().push(a))).unwrap();
    let host = Host::setup();
    let mut svc = start_client(&host, &mut proxy);

    let env = call(&mut svc, "env", json!({}));
    assert_eq!(env["HTTPS_PROXY"], "http://127.0.0.1:3128");
    assert_eq!(env["NO_PROXY"], "");

    // the egress socket (fd 6) stays with the forwarder: the service holds stdio only
    // (+ the descriptor listdir itself opens)
    let fds = call(&mut svc, "fds", json!({}));
    assert_eq!(fds, json!([0, 1, 2, 3]), "{fds}");

    let ok = call(
        &mut svc,
        "proxied",
        json!({"target": target.to_string(), "line": "hi"}),
    );
    assert_eq!(ok["reply"], "pong:hi", "{ok}");

    let no = call(&mut svc, "proxied", json!({"target": other.to_string()}));
    assert_eq!(no["error"], "service.egress_ip_literal", "{no}");
    let no = call(
        &mut svc,
        "proxied",
        json!({"target": "evil.example.net:443"}),
    );
    assert_eq!(no["error"], "service.egress_domain_not_allowed", "{no}");

    // the namespace is the sandbox's own: the host's loopback servers and the outside are unreachable
    for (h, port) in [
        ("127.0.0.1", target.port()),
        ("127.0.0.1", other.port()),
        ("1.1.1.1", 443),
        ("169.254.169.254", 80),
    ] {
        let d = call(&mut svc, "direct", json!({"host": h, "port": port}));
        assert_eq!(d["connected"], false, "{h}:{port} {d}");
    }

    let log = audit.lock().unwrap().clone();
    assert_eq!(
        log,
        vec![
            EgressAudit {
                target: target.to_string(),
                refused: None
            },
            EgressAudit {
                target: other.to_string(),
                refused: Some("service.egress_ip_literal")
            },
            EgressAudit {
                target: "evil.example.net:443".into(),
                refused: Some("service.egress_domain_not_allowed")
            },
        ]
    );
    svc.kill();
}

#[test]
fn an_ungranted_service_is_refused_and_audited() {
    let target = echo_server();
    let audit: Arc<Mutex<Vec<EgressAudit>>> = Arc::default();
    let sink = audit.clone();
    let p = EgressPolicy::new(&[], false).with_test_allow(Some(target));
    let mut proxy = EgressProxy::start(p, Arc::new(move |a| sink.lock().unwrap().push(a))).unwrap();
    let host = Host::setup();
    let mut svc = start_client(&host, &mut proxy);
    let no = call(&mut svc, "proxied", json!({"target": target.to_string()}));
    assert_eq!(no["error"], "service.egress_not_granted", "{no}");
    assert_eq!(
        audit.lock().unwrap()[0].refused,
        Some("service.egress_not_granted")
    );
    svc.kill();
}

#[test]
fn a_service_without_egress_has_no_proxy_and_no_network() {
    let host = Host::setup();
    std::fs::write(host.package.join("egress_client.py"), CLIENT).unwrap();
    let spec = host.spec(&["/usr/bin/python3", "/app/egress_client.py"]);
    let mut svc =
        ServiceProcess::start(&spec, Box::new(|_, _| Err((-32601, "none".into())))).unwrap();
    let env = call(&mut svc, "env", json!({}));
    assert_eq!(env["HTTPS_PROXY"], Value::Null);
    let d = call(
        &mut svc,
        "direct",
        json!({"host": "127.0.0.1", "port": 3128}),
    );
    assert_eq!(d["connected"], false, "{d}");
    svc.kill();
}

#[test]
fn the_supervisor_gives_a_remote_allowed_service_a_fresh_proxy_per_launch() {
    let target = echo_server();
    let audit: Arc<Mutex<Vec<EgressAudit>>> = Arc::default();
    let sink = audit.clone();
    let host = Host::setup();
    std::fs::write(host.package.join("egress_client.py"), CLIENT).unwrap();
    let spec = host.spec(&["/usr/bin/python3", "/app/egress_client.py"]);
    let mut sup = Supervisor::new(
        spec,
        Policy::default(),
        host.tmp.path().join("egress.log"),
        Box::new(|| Box::new(|_, _| Err((-32601, "none".into())))),
        Box::new(|_| {}),
    )
    .with_egress(
        policy(&["api.example.com"]).with_test_allow(Some(target)),
        Arc::new(move |a| sink.lock().unwrap().push(a)),
    );
    for round in 0..2 {
        let ok = sup
            .call(
                "proxied",
                json!({"target": target.to_string(), "line": round.to_string()}),
            )
            .unwrap();
        assert_eq!(ok["reply"], format!("pong:{round}"), "{ok}");
        sup.stop("test");
    }
    assert_eq!(audit.lock().unwrap().len(), 2);
}

#[test]
fn concurrent_tunnels_past_the_cap_are_refused() {
    let target = echo_server();
    let audit: Arc<Mutex<Vec<EgressAudit>>> = Arc::default();
    let sink = audit.clone();
    let p = policy(&[]).with_test_allow(Some(target));
    let mut proxy = EgressProxy::start(p, Arc::new(move |a| sink.lock().unwrap().push(a))).unwrap();
    let host = Host::setup();
    let mut svc = start_client(&host, &mut proxy);
    let cap = service_sandbox::egress::MAX_CONNECTIONS;
    let statuses = call(
        &mut svc,
        "many",
        json!({"target": target.to_string(), "n": cap + 2}),
    );
    let statuses: Vec<&str> = statuses
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(statuses[..cap], vec!["200"; cap][..], "{statuses:?}");
    assert_eq!(statuses[cap..], ["429", "429"], "{statuses:?}");
    let refused: Vec<_> = audit
        .lock()
        .unwrap()
        .iter()
        .filter_map(|a| a.refused)
        .collect();
    assert_eq!(refused, vec!["service.egress_too_many_connections"; 2]);
    svc.kill();
}

#[test]
fn the_env_override_is_read_in_debug_builds_and_names_one_exact_address() {
    std::env::set_var(service_sandbox::egress::TEST_ALLOW_ENV, "127.0.0.1:4999");
    let p = service_sandbox::egress::policy_from_env(policy(&[]));
    std::env::remove_var(service_sandbox::egress::TEST_ALLOW_ENV);
    assert!(p.decide(&connect("127.0.0.1:4999"), public).is_ok());
    assert_eq!(
        refused(&p, &connect("127.0.0.1:5000")),
        "service.egress_ip_literal"
    );
    let p = service_sandbox::egress::policy_from_env(policy(&[]));
    assert_eq!(
        refused(&p, &connect("127.0.0.1:4999")),
        "service.egress_ip_literal"
    );
}
