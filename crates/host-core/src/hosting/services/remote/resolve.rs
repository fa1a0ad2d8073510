//! The remote client's DNS resolver: an endpoint's name is resolved ONCE per connection, every
//! address it answers is checked (`install/remote_address.rs`: public unicast only), and the
//! connector is handed exactly the checked addresses, so it connects to what was checked and
//! never resolves the name again (a rebinding DNS server that answers a public address to one
//! lookup and `127.0.0.1` to the next gets no second lookup). One refused address refuses the
//! name. An IP-literal host never reaches a resolver: `http.rs` checks it before sending.

use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::sync::Arc;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

use crate::install::remote_address::{self, Refused};

/// How a name becomes addresses: the system resolver (getaddrinfo, as reqwest's default); the
/// tests stand in for a DNS server with answers of their own.
type Lookup = Arc<dyn Fn(&str) -> std::io::Result<Vec<SocketAddr>> + Send + Sync>;

/// The resolver of the process's one remote client.
pub struct CheckedResolver {
    lookup: Lookup,
}

impl CheckedResolver {
    /// Resolving through the system resolver.
    pub fn system() -> Self {
        CheckedResolver {
            lookup: Arc::new(|name| (name, 0).to_socket_addrs().map(Iterator::collect)),
        }
    }
}

impl Resolve for CheckedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_owned();
        let lookup = self.lookup.clone();
        Box::pin(async move {
            let name = host.clone();
            // Off the runtime's worker: getaddrinfo blocks.
            let addrs: Vec<SocketAddr> =
                tokio::task::spawn_blocking(move || lookup(&name)).await??;
            let ips: Vec<IpAddr> = addrs.iter().map(SocketAddr::ip).collect();
            remote_address::check_resolved(&host, &ips)?;
            Ok(Box::new(addrs.into_iter()) as Addrs)
        })
    }
}

/// The address refusal somewhere in an error's chain (the connector wraps the resolver's).
pub fn refused_in<'a>(e: &'a (dyn std::error::Error + 'static)) -> Option<&'a Refused> {
    let mut cur = Some(e);
    while let Some(err) = cur {
        if let Some(r) = err.downcast_ref::<Refused>() {
            return Some(r);
        }
        cur = err.source();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;

    /// A DNS server that gives each lookup the next of `answers` (the last one repeats), and
    /// counts the lookups.
    fn dns(answers: Vec<Vec<IpAddr>>) -> (CheckedResolver, Arc<AtomicUsize>) {
        let asked = Arc::new(AtomicUsize::new(0));
        let seen = asked.clone();
        let answers = Mutex::new(answers);
        let lookup: Lookup = Arc::new(move |_| {
            let n = seen.fetch_add(1, Ordering::SeqCst);
            let a = answers.lock().unwrap();
            let ips = a.get(n).or(a.last()).cloned().unwrap_or_default();
            Ok(ips.into_iter().map(|ip| SocketAddr::new(ip, 0)).collect())
        });
        (CheckedResolver { lookup }, asked)
    }

    /// A loopback listener counting the connections that reach it.
    fn listener() -> (u16, Arc<AtomicUsize>) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let hits = Arc::new(AtomicUsize::new(0));
        let h = hits.clone();
        std::thread::spawn(move || {
            for c in l.incoming().flatten() {
                h.fetch_add(1, Ordering::SeqCst);
                drop(c);
            }
        });
        (port, hits)
    }

    /// GETs `http://rebinding.example:<port>/` through a client using `resolver`: the refusal
    /// found in the error, if any.
    fn get(resolver: CheckedResolver, port: u16) -> Option<Refused> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        // As `http.rs`'s client: the ring provider, installed once per process.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .no_proxy()
            .dns_resolver(Arc::new(resolver))
            .connect_timeout(std::time::Duration::from_secs(2))
            .build()
            .unwrap();
        let url = format!("http://rebinding.example:{port}/");
        let e = rt
            .block_on(client.get(url).send())
            .expect_err("a connection that should never open");
        refused_in(&e).cloned()
    }

    #[test]
    fn a_name_answering_an_internal_address_is_refused_before_any_connection() {
        let (port, hits) = listener();
        let loopback: IpAddr = "127.0.0.1".parse().unwrap();
        let public: IpAddr = "93.184.216.34".parse().unwrap();
        // The DNS server answers loopback (rebinding to the host), then a mixed answer.
        for answer in [vec![loopback], vec![public, loopback]] {
            let (resolver, asked) = dns(vec![answer.clone()]);
            let refused = get(resolver, port).expect("refused by the address check");
            assert_eq!(refused.addr, loopback, "{answer:?}");
            assert_eq!(refused.class, "loopback");
            assert_eq!(asked.load(Ordering::SeqCst), 1, "one lookup per connection");
        }
        // Every other internal range a DNS answer could point at is refused the same way.
        for internal in [
            "10.0.0.7",
            "169.254.169.254",
            "192.168.1.1",
            "::1",
            "fd00:ec2::254",
        ] {
            let (resolver, _) = dns(vec![vec![internal.parse().unwrap()]]);
            assert!(get(resolver, port).is_some(), "{internal}");
        }
        assert_eq!(
            hits.load(Ordering::SeqCst),
            0,
            "a connection reached the host"
        );
    }
}
