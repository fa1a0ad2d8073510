//! The capabilities this host implements and their methods, as types. A `capability:invoke`'s
//! strings are parsed once, by [`registry::lookup`](super::registry::lookup); past the choke
//! point everything matches on [`Capability`] and [`Method`] exhaustively, so a new method is a
//! compile error in every place that must handle it.
//!
//! The standard names more namespaces than this host implements (`lime.knowledge`,
//! `lime.tools`, …): [`Namespace::parse`] keeps them visible as
//! [`Namespace::NotImplementedHere`], so manifests, the host profile and readiness still list
//! them (as unavailable, `capability.not_implemented`) while no call can reach a service.

/// Declares a method enum with the wire name of each variant.
macro_rules! methods {
    ($(#[$doc:meta])* $name:ident { $($variant:ident = $text:literal,)* }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name { $($variant,)* }
        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant,)*];
            /// The method's name on the wire.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text,)* }
            }
        }
    };
}

/// A capability this host implements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Capability {
    Ui,
    Storage,
    Secrets,
    Events,
    Policy,
    Artifacts,
    Evidence,
    Agent,
    Files,
    Tools,
    Workflow,
    Knowledge,
    // issue 19 §2: the platform projections (`services/projections.rs`, `bridge/host/projections.rs`).
    ModelSettings,
    Capabilities,
    Workspace,
    Services,
}

impl Capability {
    pub const ALL: &'static [Capability] = &[
        Capability::Ui,
        Capability::Storage,
        Capability::Secrets,
        Capability::Events,
        Capability::Policy,
        Capability::Artifacts,
        Capability::Evidence,
        Capability::Agent,
        Capability::Files,
        Capability::Tools,
        Capability::Workflow,
        Capability::Knowledge,
        Capability::ModelSettings,
        Capability::Capabilities,
        Capability::Workspace,
        Capability::Services,
    ];

    /// The capability's name on the wire and in manifests (`lime.storage`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Capability::Ui => "lime.ui",
            Capability::Storage => "lime.storage",
            Capability::Secrets => "lime.secrets",
            Capability::Events => "lime.events",
            Capability::Policy => "lime.policy",
            Capability::Artifacts => "lime.artifacts",
            Capability::Evidence => "lime.evidence",
            Capability::Agent => "lime.agent",
            Capability::Files => "lime.files",
            Capability::Tools => "lime.tools",
            Capability::Workflow => "lime.workflow",
            Capability::Knowledge => "lime.knowledge",
            Capability::ModelSettings => "lime.modelSettings",
            Capability::Capabilities => "lime.capabilities",
            Capability::Workspace => "lime.workspace",
            Capability::Services => "lime.services",
        }
    }

    /// The implemented capability named `name`; `None` for every other name.
    pub fn parse(name: &str) -> Option<Capability> {
        Capability::ALL.iter().copied().find(|c| c.as_str() == name)
    }
}

impl std::fmt::Display for Capability {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One of the standard's capability namespaces (`profile::KNOWN_CAPABILITIES`), as this host
/// sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Namespace {
    /// Served here: calls go through the choke point to its service.
    Implemented(Capability),
    /// Declared by the standard, not implemented by this host: manifests may name it and the
    /// profile lists it as unavailable; a call is `APP_E001` CAPABILITY_NOT_AVAILABLE.
    NotImplementedHere(&'static str),
}

impl Namespace {
    /// The namespace named `name`; `None` for a name the standard does not know.
    pub fn parse(name: &str) -> Option<Namespace> {
        if let Some(c) = Capability::parse(name) {
            return Some(Namespace::Implemented(c));
        }
        crate::foundation::profile::KNOWN_CAPABILITIES
            .iter()
            .find(|k| **k == name)
            .map(|k| Namespace::NotImplementedHere(k))
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Namespace::Implemented(c) => c.as_str(),
            Namespace::NotImplementedHere(name) => name,
        }
    }
}

methods! {
    /// `lime.ui`: answered by the transport from its own state (the bridge's snapshot).
    UiMethod {
        GetSnapshot = "getSnapshot", GetLocale = "getLocale", GetTheme = "getTheme",
        RegisterRoute = "registerRoute", ListRoutes = "listRoutes",
    }
}
methods! {
    /// `lime.storage`: key-value, and row methods on the declared tables.
    StorageMethod {
        Get = "get", Set = "set", Delete = "delete", List = "list",
        TableGet = "tableGet", TableQuery = "tableQuery", TableInsert = "tableInsert",
        TableUpdate = "tableUpdate", TableDelete = "tableDelete",
    }
}
methods! {
    /// `lime.secrets`.
    SecretsMethod { GetRef = "getRef", }
}
methods! {
    /// `lime.events`.
    EventsMethod { Publish = "publish", Subscribe = "subscribe", Unsubscribe = "unsubscribe", }
}
methods! {
    /// `lime.policy`.
    PolicyMethod { RequestPermission = "requestPermission", }
}
methods! {
    /// `lime.artifacts`.
    ArtifactsMethod { Create = "create", Read = "read", List = "list", Delete = "delete", }
}
methods! {
    /// `lime.evidence`.
    EvidenceMethod { Record = "record", List = "list", Export = "export", }
}
methods! {
    /// `lime.agent`.
    AgentMethod {
        StartTask = "startTask", GetTask = "getTask", ListTasks = "listTasks",
        CancelTask = "cancelTask", RetryTask = "retryTask", RespondAction = "respondAction",
        GetTaskEvents = "getTaskEvents", WatchTask = "watchTask",
    }
}
methods! {
    /// `lime.files`: documents the user chose, by opaque per-app refs (`services/files.rs`).
    FilesMethod {
        List = "list", ReadRef = "readRef", Stat = "stat", ListFolder = "listFolder",
        RequestFiles = "requestFiles",
    }
}

methods! {
    /// `lime.tools`: the MCP tools the user granted the app (`hosting/tools/`).
    ToolsMethod { List = "list", Invoke = "invoke", }
}
methods! {
    /// `lime.workflow`: the app's own workflow runs (`capability::services::workflow`).
    WorkflowMethod {
        Start = "start", Get = "get", List = "list", Cancel = "cancel", Respond = "respond",
        Watch = "watch",
    }
}
methods! {
    /// `lime.knowledge`: search the folders the user bound to the app's knowledge templates.
    KnowledgeMethod { Search = "search", }
}

methods! {
    /// `lime.modelSettings`: the effective model profile, limits and setup status; never a key.
    ModelSettingsMethod { Get = "get", }
}
methods! {
    /// `lime.capabilities`: what the calling entry may call, and why the rest is blocked.
    CapabilitiesMethod { List = "list", }
}
methods! {
    /// `lime.workspace`: the workspace's ids, display name, locale and time zone.
    WorkspaceMethod { Get = "get", }
}
methods! {
    /// `lime.services`: the app's own backend services (`hosting/services/`).
    ServicesMethod { Call = "call", List = "list", }
}

/// One implemented method of one capability.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Method {
    Ui(UiMethod),
    Storage(StorageMethod),
    Secrets(SecretsMethod),
    Events(EventsMethod),
    Policy(PolicyMethod),
    Artifacts(ArtifactsMethod),
    Evidence(EvidenceMethod),
    Agent(AgentMethod),
    Files(FilesMethod),
    Tools(ToolsMethod),
    Workflow(WorkflowMethod),
    Knowledge(KnowledgeMethod),
    ModelSettings(ModelSettingsMethod),
    Capabilities(CapabilitiesMethod),
    Workspace(WorkspaceMethod),
    Services(ServicesMethod),
}

impl Method {
    pub fn capability(self) -> Capability {
        match self {
            Method::Ui(_) => Capability::Ui,
            Method::Storage(_) => Capability::Storage,
            Method::Secrets(_) => Capability::Secrets,
            Method::Events(_) => Capability::Events,
            Method::Policy(_) => Capability::Policy,
            Method::Artifacts(_) => Capability::Artifacts,
            Method::Evidence(_) => Capability::Evidence,
            Method::Agent(_) => Capability::Agent,
            Method::Files(_) => Capability::Files,
            Method::Tools(_) => Capability::Tools,
            Method::Workflow(_) => Capability::Workflow,
            Method::Knowledge(_) => Capability::Knowledge,
            Method::ModelSettings(_) => Capability::ModelSettings,
            Method::Capabilities(_) => Capability::Capabilities,
            Method::Workspace(_) => Capability::Workspace,
            Method::Services(_) => Capability::Services,
        }
    }

    /// The method's name on the wire (without the capability).
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Ui(m) => m.as_str(),
            Method::Storage(m) => m.as_str(),
            Method::Secrets(m) => m.as_str(),
            Method::Events(m) => m.as_str(),
            Method::Policy(m) => m.as_str(),
            Method::Artifacts(m) => m.as_str(),
            Method::Evidence(m) => m.as_str(),
            Method::Agent(m) => m.as_str(),
            Method::Files(m) => m.as_str(),
            Method::Tools(m) => m.as_str(),
            Method::Workflow(m) => m.as_str(),
            Method::Knowledge(m) => m.as_str(),
            Method::ModelSettings(m) => m.as_str(),
            Method::Capabilities(m) => m.as_str(),
            Method::Workspace(m) => m.as_str(),
            Method::Services(m) => m.as_str(),
        }
    }

    /// Every implemented method, capability by capability.
    pub fn all() -> impl Iterator<Item = Method> {
        let ui = UiMethod::ALL.iter().map(|m| Method::Ui(*m));
        let storage = StorageMethod::ALL.iter().map(|m| Method::Storage(*m));
        let secrets = SecretsMethod::ALL.iter().map(|m| Method::Secrets(*m));
        let events = EventsMethod::ALL.iter().map(|m| Method::Events(*m));
        let policy = PolicyMethod::ALL.iter().map(|m| Method::Policy(*m));
        let artifacts = ArtifactsMethod::ALL.iter().map(|m| Method::Artifacts(*m));
        let evidence = EvidenceMethod::ALL.iter().map(|m| Method::Evidence(*m));
        let agent = AgentMethod::ALL.iter().map(|m| Method::Agent(*m));
        let files = FilesMethod::ALL.iter().map(|m| Method::Files(*m));
        let tools = ToolsMethod::ALL.iter().map(|m| Method::Tools(*m));
        let workflow = WorkflowMethod::ALL.iter().map(|m| Method::Workflow(*m));
        let knowledge = KnowledgeMethod::ALL.iter().map(|m| Method::Knowledge(*m));
        let model_settings = ModelSettingsMethod::ALL
            .iter()
            .map(|m| Method::ModelSettings(*m));
        let capabilities = CapabilitiesMethod::ALL
            .iter()
            .map(|m| Method::Capabilities(*m));
        let workspace = WorkspaceMethod::ALL.iter().map(|m| Method::Workspace(*m));
        let services = ServicesMethod::ALL.iter().map(|m| Method::Services(*m));
        ui.chain(storage)
            .chain(secrets)
            .chain(events)
            .chain(policy)
            .chain(artifacts)
            .chain(evidence)
            .chain(agent)
            .chain(files)
            .chain(tools)
            .chain(workflow)
            .chain(knowledge)
            .chain(model_settings)
            .chain(capabilities)
            .chain(workspace)
            .chain(services)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_every_capability_has_a_method() {
        for c in Capability::ALL {
            assert_eq!(Capability::parse(c.as_str()), Some(*c));
            assert_eq!(
                Namespace::parse(c.as_str()),
                Some(Namespace::Implemented(*c))
            );
            assert!(Method::all().any(|m| m.capability() == *c), "{c}");
            assert!(
                crate::foundation::profile::KNOWN_CAPABILITIES.contains(&c.as_str()),
                "{c}"
            );
        }
        assert_eq!(Capability::parse("lime.billing"), None);
        assert_eq!(Capability::parse("LIME.UI"), None);
        assert_eq!(
            Namespace::parse("lime.billing"),
            Some(Namespace::NotImplementedHere("lime.billing"))
        );
        assert_eq!(Namespace::parse("lime.nope"), None);
    }
}
