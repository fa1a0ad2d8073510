//! Host extension methods: methods the process that serves the door adds to the App Server
//! without RuntimeCore knowing what they do (AppHost's `apphost/workflow.*`: the CLI's
//! workflow commands handed to the running host). Each name must be namespaced (`<ns>/<name>`)
//! and may not shadow a standard method (those always win: [`HostMethods::add`] refuses them).
//! They answer only after `initialize` + `initialized` (on the door: only a client that
//! presented the door's token), run on a blocking thread (a handler may wait for work), and are
//! not advertised by `capability/list` (they are not part of `appserver.v0`).

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

use super::{methods, RpcError};

/// A host method's handler: the request's params (`None`: none) to its result or error.
pub type HostHandler = Arc<dyn Fn(Option<Value>) -> Result<Value, RpcError> + Send + Sync>;

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
        Arc::new(|_| Ok(Value::Null))
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
}
