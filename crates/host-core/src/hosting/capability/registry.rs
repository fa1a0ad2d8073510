//! Which capability methods this host implements, the permission scope each one needs, and the
//! host policy for it. A method that is not listed here does not exist for apps: it is answered
//! `APP_E001` CAPABILITY_NOT_AVAILABLE, never with mock data. [`lookup`] is where a call's
//! capability and method names are parsed into a [`Method`], once.

use super::decision::PolicyVerdict;
use super::method::{
    AgentMethod as Ag, ArtifactsMethod as Ar, Capability, EventsMethod as Ev, EvidenceMethod as Ed,
    FilesMethod as Fi, KnowledgeMethod as Kn, Method, PolicyMethod as Po, SecretsMethod as Se,
    ServicesMethod as Sv, StorageMethod as St, ToolsMethod as To, UiMethod as Ui,
    WorkflowMethod as Wf,
};
use super::method::{CapabilitiesMethod, ModelSettingsMethod, WorkspaceMethod};

/// One method an app may call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MethodSpec {
    pub method: Method,
    /// The `permissions[].scope` a declared, granted permission must have; `None` when the
    /// capability declaration alone is enough.
    pub scope: Option<&'static str>,
    pub policy: PolicyVerdict,
    /// Whether the method's effect is fsynced when it commits (artifacts and evidence are
    /// records an app and its user rely on; `lime.storage` commits with `synchronous=NORMAL`
    /// like the bridge's audit records). Their audit record is fsynced too, before the effect
    /// runs, so the effect is never on disk without it (`store::durability`).
    pub fsynced_effect: bool,
}

impl MethodSpec {
    pub fn capability(&self) -> Capability {
        self.method.capability()
    }
}

const fn m(method: Method, scope: Option<&'static str>, policy: PolicyVerdict) -> MethodSpec {
    MethodSpec {
        method,
        scope,
        policy,
        fsynced_effect: false,
    }
}

const fn fsynced(spec: MethodSpec) -> MethodSpec {
    MethodSpec {
        fsynced_effect: true,
        ..spec
    }
}

use Method as M;
use PolicyVerdict::Allow;

const STORAGE: Option<&str> = Some("storage");
const ARTIFACT: Option<&str> = Some("artifact");

/// The implemented methods.
pub const METHODS: &[MethodSpec] = &[
    m(M::Ui(Ui::GetSnapshot), None, Allow),
    m(M::Ui(Ui::GetLocale), None, Allow),
    m(M::Ui(Ui::GetTheme), None, Allow),
    m(M::Ui(Ui::RegisterRoute), None, Allow),
    m(M::Ui(Ui::ListRoutes), None, Allow),
    m(M::Storage(St::Get), STORAGE, Allow),
    m(M::Storage(St::Set), STORAGE, Allow),
    m(M::Storage(St::Delete), STORAGE, Allow),
    m(M::Storage(St::List), STORAGE, Allow),
    // lime.secrets, lime.events, lime.policy: opaque refs to bound secret slots; publish /
    // subscribe between the mounted entries of one app; asking for an optional permission.
    m(M::Secrets(Se::GetRef), None, Allow),
    m(M::Events(Ev::Publish), None, Allow),
    m(M::Events(Ev::Subscribe), None, Allow),
    m(M::Events(Ev::Unsubscribe), None, Allow),
    m(M::Policy(Po::RequestPermission), None, Allow),
    // lime.artifacts: the app's own deliverables; a granted permission of scope `artifact`.
    fsynced(m(M::Artifacts(Ar::Create), ARTIFACT, Allow)),
    m(M::Artifacts(Ar::Read), ARTIFACT, Allow),
    m(M::Artifacts(Ar::List), ARTIFACT, Allow),
    fsynced(m(M::Artifacts(Ar::Delete), ARTIFACT, Allow)),
    // lime.evidence: the app's own evidence trail. The standard's permission scopes have no
    // evidence scope, so declaring the capability is enough (records stay in the app's area).
    fsynced(m(M::Evidence(Ed::Record), None, Allow)),
    m(M::Evidence(Ed::List), None, Allow),
    m(M::Evidence(Ed::Export), None, Allow),
    // lime.storage row methods on the tables storage/schema.json declares.
    m(M::Storage(St::TableGet), STORAGE, Allow),
    m(M::Storage(St::TableQuery), STORAGE, Allow),
    m(M::Storage(St::TableInsert), STORAGE, Allow),
    m(M::Storage(St::TableUpdate), STORAGE, Allow),
    m(M::Storage(St::TableDelete), STORAGE, Allow),
    // lime.agent: the app's own agent tasks (runtime-core `agent_task`); the capability
    // declaration is enough (the model tools act only inside the app's own data area), and
    // readiness is `needs-setup` while no model is configured.
    m(M::Agent(Ag::StartTask), None, Allow),
    m(M::Agent(Ag::GetTask), None, Allow),
    m(M::Agent(Ag::ListTasks), None, Allow),
    m(M::Agent(Ag::CancelTask), None, Allow),
    m(M::Agent(Ag::RetryTask), None, Allow),
    m(M::Agent(Ag::RespondAction), None, Allow),
    m(M::Agent(Ag::GetTaskEvents), None, Allow),
    m(M::Agent(Ag::WatchTask), None, Allow),
    // lime.files: documents the user chose. Declaring the capability is enough: the user's
    // choice of each file (a ref) is the grant, and a ref reaches only what it names.
    m(M::Files(Fi::List), None, Allow),
    m(M::Files(Fi::ReadRef), None, Allow),
    m(M::Files(Fi::Stat), None, Allow),
    m(M::Files(Fi::ListFolder), None, Allow),
    // Asks the USER to pick: the host draws the picker; the app gets only what the user chose.
    m(M::Files(Fi::RequestFiles), None, Allow),
    // lime.tools: the capability declaration is enough here; the broker (`hosting/tools/`)
    // checks per tool: declared in toolRefs[], granted by the user, allowed by the admin
    // policy, and a destructive one approved by the user in the host's prompt.
    m(M::Tools(To::List), None, Allow),
    m(M::Tools(To::Invoke), None, Allow),
    // lime.workflow: the app's own runs of the workflows its manifest declares; declaring the
    // capability is enough (each step is its own call through this choke point, with the
    // run's workflow entry's declarations and grants). Reviews are answered by the user only.
    m(M::Workflow(Wf::Start), None, Allow),
    m(M::Workflow(Wf::Get), None, Allow),
    m(M::Workflow(Wf::List), None, Allow),
    m(M::Workflow(Wf::Cancel), None, Allow),
    m(M::Workflow(Wf::Respond), None, Allow),
    m(M::Workflow(Wf::Watch), None, Allow),
    // lime.knowledge: search a template the app declares and the user bound to a folder (the
    // binding is the user's grant; no permission scope names knowledge).
    m(M::Knowledge(Kn::Search), None, Allow),
    // The platform projections (issue 19 §2): read-only, non-sensitive host facts; declaring
    // the capability is enough. `lime.modelSettings` never carries a key or a key's ref.
    m(M::ModelSettings(ModelSettingsMethod::Get), None, Allow),
    m(M::Capabilities(CapabilitiesMethod::List), None, Allow),
    m(M::Workspace(WorkspaceMethod::Get), None, Allow),
    // lime.services: the app's own backend services (`services[]`), from its frames and
    // workflows; declaring the capability is enough (no other app's service is reachable, and
    // what the service itself calls passes this choke point again as its own caller).
    m(M::Services(Sv::Call), None, Allow),
    m(M::Services(Sv::List), None, Allow),
];

/// The spec of `capability.method`, if this host implements it: the one place a call's names
/// become a [`Method`].
pub fn lookup(capability: &str, method: &str) -> Option<&'static MethodSpec> {
    let capability = Capability::parse(capability)?;
    METHODS
        .iter()
        .find(|s| s.capability() == capability && s.method.as_str() == method)
}

/// The spec of a method (every [`Method`] has one: `tests::every_method_is_registered_once`).
pub fn spec(method: Method) -> Option<&'static MethodSpec> {
    METHODS.iter().find(|s| s.method == method)
}

/// Whether this host implements at least one method of `capability` (every [`Capability`]).
pub fn implements(capability: &str) -> bool {
    Capability::parse(capability).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_method_is_registered_once() {
        for method in Method::all() {
            assert_eq!(
                METHODS.iter().filter(|s| s.method == method).count(),
                1,
                "{method:?}"
            );
            let found = lookup(method.capability().as_str(), method.as_str());
            assert_eq!(found.map(|s| s.method), Some(method));
        }
        assert_eq!(METHODS.len(), Method::all().count());
        assert!(lookup("lime.storage", "tableget").is_none());
        assert!(lookup("lime.files", "read").is_none());
        assert!(lookup("lime.files", "readRef").is_some());
        assert!(lookup("lime.ui", "set").is_none());
        let fsynced: Vec<Method> = METHODS
            .iter()
            .filter(|s| s.fsynced_effect)
            .map(|s| s.method)
            .collect();
        assert_eq!(
            fsynced,
            [
                M::Artifacts(Ar::Create),
                M::Artifacts(Ar::Delete),
                M::Evidence(Ed::Record)
            ]
        );
    }

    /// The profile's list (foundation, below this registry) names exactly the capabilities
    /// this registry serves, so `HostProfile::current()` says available exactly when
    /// [`implements`] does.
    #[test]
    fn the_profile_lists_exactly_the_implemented_capabilities() {
        use crate::foundation::profile::{HostProfile, IMPLEMENTED_CAPABILITIES};
        let served: Vec<&str> = Capability::ALL.iter().map(|c| c.as_str()).collect();
        assert_eq!(IMPLEMENTED_CAPABILITIES, served.as_slice());
        for (name, info) in &HostProfile::current().capabilities {
            assert_eq!(info.available, implements(name), "{name}");
        }
        for m in METHODS {
            assert!(implements(m.capability().as_str()));
        }
    }
}
