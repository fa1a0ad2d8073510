//! Which capability methods this host implements, the permission scope each one needs, and the
//! host policy for it. A method that is not listed here does not exist for apps: it is answered
//! `APP_E001` CAPABILITY_NOT_AVAILABLE, never with mock data.

use super::decision::PolicyVerdict;

/// One method an app may call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MethodSpec {
    pub capability: &'static str,
    pub method: &'static str,
    /// The `permissions[].scope` a declared, granted permission must have; `None` when the
    /// capability declaration alone is enough.
    pub scope: Option<&'static str>,
    pub policy: PolicyVerdict,
}

const fn m(
    capability: &'static str,
    method: &'static str,
    scope: Option<&'static str>,
    policy: PolicyVerdict,
) -> MethodSpec {
    MethodSpec {
        capability,
        method,
        scope,
        policy,
    }
}

use PolicyVerdict::Allow;

/// The implemented methods.
pub const METHODS: &[MethodSpec] = &[
    m("lime.ui", "getSnapshot", None, Allow),
    m("lime.ui", "getLocale", None, Allow),
    m("lime.ui", "getTheme", None, Allow),
    m("lime.storage", "get", Some("storage"), Allow),
    m("lime.storage", "set", Some("storage"), Allow),
    m("lime.storage", "delete", Some("storage"), Allow),
    m("lime.storage", "list", Some("storage"), Allow),
    // lime.secrets, lime.events, lime.policy: opaque refs to bound secret slots; publish /
    // subscribe between the mounted entries of one app; asking for an optional permission.
    m("lime.secrets", "getRef", None, Allow),
    m("lime.events", "publish", None, Allow),
    m("lime.events", "subscribe", None, Allow),
    m("lime.events", "unsubscribe", None, Allow),
    m("lime.policy", "requestPermission", None, Allow),
    // lime.artifacts: the app's own deliverables; a granted permission of scope `artifact`.
    m("lime.artifacts", "create", Some("artifact"), Allow),
    m("lime.artifacts", "read", Some("artifact"), Allow),
    m("lime.artifacts", "list", Some("artifact"), Allow),
    m("lime.artifacts", "delete", Some("artifact"), Allow),
    // lime.evidence: the app's own evidence trail. The standard's permission scopes have no
    // evidence scope, so declaring the capability is enough (records stay in the app's area).
    m("lime.evidence", "record", None, Allow),
    m("lime.evidence", "list", None, Allow),
    m("lime.evidence", "export", None, Allow),
    // lime.storage row methods on the tables storage/schema.json declares.
    m("lime.storage", "tableGet", Some("storage"), Allow),
    m("lime.storage", "tableQuery", Some("storage"), Allow),
    m("lime.storage", "tableInsert", Some("storage"), Allow),
    m("lime.storage", "tableUpdate", Some("storage"), Allow),
    m("lime.storage", "tableDelete", Some("storage"), Allow),
    // lime.agent: the app's own agent tasks (runtime-core `agent_task`); the capability
    // declaration is enough (the model tools act only inside the app's own data area), and
    // readiness is `needs-setup` while no model is configured.
    m("lime.agent", "startTask", None, Allow),
    m("lime.agent", "getTask", None, Allow),
    m("lime.agent", "listTasks", None, Allow),
    m("lime.agent", "cancelTask", None, Allow),
    m("lime.agent", "retryTask", None, Allow),
    m("lime.agent", "respondAction", None, Allow),
    m("lime.agent", "getTaskEvents", None, Allow),
    m("lime.agent", "watchTask", None, Allow),
];

/// The spec of `capability.method`, if this host implements it.
pub fn lookup(capability: &str, method: &str) -> Option<&'static MethodSpec> {
    METHODS
        .iter()
        .find(|s| s.capability == capability && s.method == method)
}

/// Whether this host implements at least one method of `capability`.
pub fn implements(capability: &str) -> bool {
    METHODS.iter().any(|s| s.capability == capability)
}

/// Methods whose effect is fsynced when it commits (artifacts and evidence are records an app
/// and its user rely on; `lime.storage` commits with `synchronous=NORMAL` like the bridge's
/// audit records). Their audit record is fsynced too, before the effect runs, so the effect is
/// never on disk without it (`store::durability`).
const FSYNCED_EFFECTS: &[(&str, &str)] = &[
    ("lime.artifacts", "create"),
    ("lime.artifacts", "delete"),
    ("lime.evidence", "record"),
];

/// Whether an allowed call of `capability.method` has an fsynced effect (see [`FSYNCED_EFFECTS`]).
pub fn has_fsynced_effect(capability: &str, method: &str) -> bool {
    FSYNCED_EFFECTS
        .iter()
        .any(|(c, m)| *c == capability && *m == method)
}
