//! Host extension methods: methods the process that serves the door adds to the App Server
//! without RuntimeCore knowing what they do (AppHost's `apphost/workflow.*`: the CLI's
//! workflow commands handed to the running host). Each name must be namespaced (`<ns>/<name>`)
//! and may not shadow a standard method (those always win: [`HostMethods::add`] refuses them).
//! They answer only after `initialize` + `initialized` (on the door: only a client that
//! presented the door's token), run on a blocking thread (a handler may wait for work), and are
//! not advertised by `capability/list` (they are not part of `appserver.v0`). A handler that
//! waits may ask its [`Caller`] whether the client has hung up, and stop working for nobody.

use std::collections::BTreeMap;
use std::os::fd::OwnedFd;
use std::sync::Arc;

use serde_json::Value;

use super::{methods, RpcError};

/// A host method's handler: the request's params (`None`: none) and who asked, to its result
/// or error.
pub type HostHandler = Arc<dyn Fn(Option<Value>, &Caller) -> Result<Value, RpcError> + Send + Sync>;

/// The client a host method is answering, while the method runs: [`Caller::hung_up`] tells a
/// long call (a service call, a wait for a run to settle) that nobody will read its answer, so
/// it can cancel (`apphost services call` stopped with Ctrl-C ends the call it handed over).
#[derive(Clone, Default)]
pub struct Caller {
    /// The door connection's socket (a duplicate: the transport keeps its own); `None` off the
    /// door (stdio: the end of stdin cannot be told from a client that still reads).
    socket: Option<Arc<OwnedFd>>,
}

impl Caller {
    /// A client on a Unix socket connection.
    pub fn on_socket(fd: OwnedFd) -> Self {
        Caller {
            socket: Some(Arc::new(fd)),
        }
    }

    /// `true` once the client closed its connection entirely. A client that only shut down
    /// its writing half (sent its request and waits for the answer) has not hung up: a Unix
    /// socket reports `POLLHUP` only when both halves are shut, which a peer's close does.
    pub fn hung_up(&self) -> bool {
        use rustix::event::{poll, PollFd, PollFlags, Timespec};
        let Some(fd) = &self.socket else {
            return false;
        };
        let mut fds = [PollFd::new(fd.as_ref(), PollFlags::empty())];
        let now = Timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        match poll(&mut fds, Some(&now)) {
            Ok(0) => false,
            Ok(_) => fds[0]
                .revents()
                .intersects(PollFlags::HUP | PollFlags::ERR | PollFlags::NVAL),
            Err(_) => false,
        }
    }
}

/// The host's extension methods by name.
#[derive(Clone, Default)]
pub struct HostMethods {
    table: BTreeMap<String, HostHandler>,
}

impl HostMethods {
    pub fn new() -> Self {
        HostMethods::default()
    }

    /// Adds `name`. Refused (`Err` with the reason) when it is not `<namespace>/<method>` or
    /// names a standard method.
    pub fn add(&mut self, name: &str, handler: HostHandler) -> Result<(), String> {
        let namespaced = name
            .split_once('/')
            .is_some_and(|(ns, m)| !ns.is_empty() && !m.is_empty());
        if !namespaced {
            return Err(format!("host method {name:?} is not <namespace>/<method>"));
        }
        if methods::find(name).is_some() {
            return Err(format!("host method {name:?} is a standard method"));
        }
        self.table.insert(name.to_owned(), handler);
        Ok(())
    }

    /// The handler of `name`, when the host added it.
    pub fn get(&self, name: &str) -> Option<HostHandler> {
        self.table.get(name).cloned()
    }

    /// The names, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.table.keys().map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok() -> HostHandler {
        Arc::new(|_, _| Ok(Value::Null))
    }

    #[test]
    fn names_must_be_namespaced_and_never_shadow_a_standard_method() {
        let mut t = HostMethods::new();
        assert!(t.add("apphost/workflow.start", ok()).is_ok());
        for bad in [
            "start",
            "/start",
            "apphost/",
            "initialize",
            "agentSession/start",
        ] {
            assert!(t.add(bad, ok()).is_err(), "{bad}");
            assert!(t.get(bad).is_none(), "{bad}");
        }
        assert_eq!(t.names().collect::<Vec<_>>(), ["apphost/workflow.start"]);
    }

    #[test]
    fn a_caller_hangs_up_only_when_the_peer_closes_both_halves() {
        use std::net::Shutdown;
        use std::os::unix::net::UnixStream;
        assert!(!Caller::default().hung_up(), "off the door: never");

        let (ours, peer) = UnixStream::pair().unwrap();
        let caller = Caller::on_socket(ours.try_clone().unwrap().into());
        assert!(!caller.hung_up(), "connected");
        std::io::Write::write_all(&mut &peer, b"pipelined\n").unwrap();
        assert!(!caller.hung_up(), "data waiting is not a hang-up");
        peer.shutdown(Shutdown::Write).unwrap();
        assert!(!caller.hung_up(), "a half-close still reads the answer");
        drop(peer);
        assert!(caller.hung_up(), "closed");
        drop(ours);
        assert!(
            caller.hung_up(),
            "its own copy keeps the socket to ask about"
        );
    }
}
