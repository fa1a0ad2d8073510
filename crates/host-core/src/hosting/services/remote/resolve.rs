//! The remote client's DNS resolver: an endpoint's name is resolved ONCE per connection, every
//! address it answers is checked (`install/remote_address.rs`: public unicast only), and the
//! connector is handed exactly the checked addresses, so it connects to what was checked and
//! never resolves the name again (a rebinding DNS server that answers a public address to one
//! lookup and `127.0.0.1` to the next gets no second lookup). One refused address refuses the
//! name. An IP-literal host never reaches a resolver: `http.rs` checks it before sending.

use std::net::{IpAddr, SocketAddr, ToSocketAddrs};

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

use crate::install::remote_address::{self, Refused};

/// The resolver of the process's one remote client.
pub struct CheckedResolver;

impl Resolve for CheckedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let lookup = host.clone();
            // The system resolver (getaddrinfo, as reqwest's default), off the runtime's worker.
            let addrs: Vec<SocketAddr> = tokio::task::spawn_blocking(move || {
                (lookup.as_str(), 0)
                    .to_socket_addrs()
                    .map(Iterator::collect)
            })
            .await??;
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
