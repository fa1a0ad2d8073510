//! A typed, borrowed view over [`Manifest::data`]: the one place outside validation that knows
//! the manifest's key names.
//!
//! The manifest stays a JSON map (unknown fields round-trip untouched); this view is a thin
//! layer of zero-copy accessors over it, as a typed AST over an untyped tree. Every accessor
//! is total: a missing or mistyped field reads as absent (`None`, an empty list, `false`),
//! exactly as the string-keyed reads it replaces did. Validation (`validate.rs`) decides what
//! is an error; the view only reads.

use serde_json::{Map, Value};

use super::Manifest;

mod key;
mod package_paths;
mod raw;
mod remote;
pub use key::Key;
pub use package_paths::PathKind;
pub use remote::RemoteAuthDecl;

fn text<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

fn strings(v: Option<&Value>) -> impl Iterator<Item = &str> {
    v.and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
}

/// `required: true` (and only the boolean `true`) makes a declared item required.
fn flag_required(v: &Value) -> bool {
    matches!(v.get("required"), Some(Value::Bool(true)))
}

/// The typed view; get one with [`Manifest::view`].
#[derive(Debug, Clone, Copy)]
pub struct ManifestView<'a> {
    data: &'a Map<String, Value>,
}

impl Manifest {
    /// The typed view over [`Manifest::data`].
    pub fn view(&self) -> ManifestView<'_> {
        ManifestView { data: &self.data }
    }
}

impl<'a> ManifestView<'a> {
    pub fn new(data: &'a Map<String, Value>) -> Self {
        ManifestView { data }
    }

    /// A top-level field as written, whatever its type.
    pub fn value(self, key: Key) -> Option<&'a Value> {
        self.data.get(key.as_str())
    }
    /// A top-level string field.
    pub fn text(self, key: Key) -> Option<&'a str> {
        self.value(key).and_then(Value::as_str)
    }
    /// A top-level list field, or empty when absent or not a list.
    pub fn list(self, key: Key) -> &'a [Value] {
        self.value(key)
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }
    /// A top-level mapping field.
    pub fn object(self, key: Key) -> Option<&'a Map<String, Value>> {
        self.value(key).and_then(Value::as_object)
    }

    pub fn name(self) -> &'a str {
        self.text(Key::Name).unwrap_or_default()
    }
    pub fn version(self) -> &'a str {
        self.text(Key::Version).unwrap_or_default()
    }
    pub fn display_name(self) -> Option<&'a str> {
        self.text(Key::DisplayName)
    }
    pub fn description(self) -> Option<&'a str> {
        self.text(Key::Description)
    }
    /// `publisher.name`.
    pub fn publisher_name(self) -> Option<&'a str> {
        self.value(Key::Publisher).and_then(|p| text(p, "name"))
    }
    pub fn presentation(self) -> Presentation<'a> {
        Presentation(self.value(Key::Presentation))
    }
    /// `supportWindow.supersededBy`.
    pub fn superseded_by(self) -> Option<&'a str> {
        self.value(Key::SupportWindow)
            .and_then(|s| text(s, "supersededBy"))
    }
    /// `install.modes`, when it is a list.
    pub fn install_modes(self) -> Option<&'a Vec<Value>> {
        self.value(Key::Install)
            .and_then(|i| i.get("modes"))
            .and_then(Value::as_array)
    }
    /// The top-level `capabilities` list: what the app says it uses (strings only).
    pub fn declared_capabilities(self) -> impl Iterator<Item = &'a str> {
        strings(self.value(Key::Capabilities))
    }
    pub fn requires(self) -> Requires<'a> {
        Requires(self.value(Key::Requires))
    }
    pub fn ui(self) -> Ui<'a> {
        Ui(self.value(Key::Ui))
    }
    /// `storage`, when declared (any value counts as declared).
    pub fn storage(self) -> Option<Storage<'a>> {
        self.value(Key::Storage).map(Storage)
    }
    pub fn runtime_package(self) -> RuntimePackage<'a> {
        RuntimePackage(self.object(Key::RuntimePackage))
    }
    pub fn agent_runtime(self) -> AgentRuntime<'a> {
        AgentRuntime(self.value(Key::AgentRuntime))
    }

    pub fn entries(self) -> impl Iterator<Item = Entry<'a>> {
        self.list(Key::Entries).iter().map(Entry)
    }
    /// The first entry whose `key` is `key`.
    pub fn entry(self, key: &str) -> Option<Entry<'a>> {
        self.entries().find(|e| e.key() == Some(key))
    }
    pub fn permissions(self) -> impl Iterator<Item = Permission<'a>> {
        self.list(Key::Permissions).iter().map(Permission)
    }
    /// The raw `permissions` list (for diffs that compare every field).
    pub fn permissions_raw(self) -> &'a [Value] {
        self.list(Key::Permissions)
    }
    /// The first permission whose `key` is `key`.
    pub fn permission(self, key: &str) -> Option<Permission<'a>> {
        self.permissions().find(|p| p.key() == Some(key))
    }
    pub fn services(self) -> impl Iterator<Item = Service<'a>> {
        self.list(Key::Services).iter().map(Service)
    }
    pub fn workflows(self) -> impl Iterator<Item = Workflow<'a>> {
        self.list(Key::Workflows).iter().map(Workflow)
    }
    /// `events[]`: the topics the app publishes or subscribes to.
    pub fn events(self) -> impl Iterator<Item = Event<'a>> {
        self.list(Key::Events).iter().map(Event)
    }
    /// Every string `domains[]` item of every permission, first occurrence only, in manifest
    /// order.
    pub fn permission_domains(self) -> Vec<&'a str> {
        let mut out: Vec<&str> = Vec::new();
        for d in self.permissions().flat_map(Permission::domains) {
            if !out.contains(&d) {
                out.push(d);
            }
        }
        out
    }
    /// The items of a declared list (`secrets`, `knowledgeTemplates`, `toolRefs`, ...).
    pub fn items(self, list: Key) -> impl Iterator<Item = Item<'a>> {
        self.list(list).iter().map(Item)
    }
}

/// The fields of `triggers` the projection carries.
pub const TRIGGER_FIELDS: [&str; 2] = ["keywords", "scenarios"];
/// The fields of `skills` the projection carries.
pub const SKILL_FIELDS: [&str; 2] = ["bundled", "references"];

/// `presentation`.
#[derive(Debug, Clone, Copy)]
pub struct Presentation<'a>(Option<&'a Value>);

impl<'a> Presentation<'a> {
    pub fn icon(self) -> Option<&'a str> {
        self.0.and_then(|p| text(p, "icon"))
    }
}

/// `requires`.
#[derive(Debug, Clone, Copy)]
pub struct Requires<'a>(Option<&'a Value>);

impl<'a> Requires<'a> {
    /// `requires.lime`: (name, range as written) in manifest order.
    pub fn lime(self) -> impl Iterator<Item = (&'a str, &'a Value)> {
        self.0
            .and_then(|r| r.get("lime"))
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .map(|(k, v)| (k.as_str(), v))
    }
    /// `requires.sdk`: a package spec such as `@lime/app-sdk@^0.10`.
    pub fn sdk(self) -> Option<&'a str> {
        self.0.and_then(|r| text(r, "sdk"))
    }
    /// `requires.capabilities`: a list of names (no range) or a map name → range. Non-string
    /// list items are skipped; a non-string range reads as no range.
    pub fn capabilities(self) -> Vec<(&'a str, Option<&'a str>)> {
        match self.0.and_then(|r| r.get("capabilities")) {
            Some(Value::Array(list)) => list
                .iter()
                .filter_map(Value::as_str)
                .map(|n| (n, None))
                .collect(),
            Some(Value::Object(map)) => map.iter().map(|(n, r)| (n.as_str(), r.as_str())).collect(),
            _ => Vec::new(),
        }
    }
    /// The names under `requires.capabilities` (list items or map keys), as the workflow
    /// validator takes them.
    pub fn capability_names(self) -> std::collections::BTreeSet<String> {
        self.capabilities()
            .into_iter()
            .map(|(name, _)| name.to_owned())
            .collect()
    }
    /// Whether `requires.capabilities` names `name` (as a list item or a map key).
    pub fn has_capability(self, name: &str) -> bool {
        match self.0.and_then(|r| r.get("capabilities")) {
            Some(Value::Array(list)) => list.iter().any(|v| v.as_str() == Some(name)),
            Some(Value::Object(map)) => map.contains_key(name),
            _ => false,
        }
    }
}

/// `ui`.
#[derive(Debug, Clone, Copy)]
pub struct Ui<'a>(Option<&'a Value>);

impl Ui<'_> {
    /// A boolean flag of `ui.frame` (`forms`, `downloads`, `unsafeEval`, `inlineStyles`);
    /// absent or not a boolean is `false`.
    pub fn frame_flag(self, flag: FrameFlag) -> bool {
        self.0
            .and_then(|u| u.get("frame"))
            .and_then(Value::as_object)
            .and_then(|f| f.get(flag.as_str()))
            .and_then(Value::as_bool)
            .unwrap_or(false)
    }
}

/// The flags of `ui.frame`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameFlag {
    Forms,
    Downloads,
    UnsafeEval,
    InlineStyles,
}

impl FrameFlag {
    pub fn as_str(self) -> &'static str {
        match self {
            FrameFlag::Forms => "forms",
            FrameFlag::Downloads => "downloads",
            FrameFlag::UnsafeEval => "unsafeEval",
            FrameFlag::InlineStyles => "inlineStyles",
        }
    }
}

/// `storage` (present: declared, whatever its shape).
#[derive(Debug, Clone, Copy)]
pub struct Storage<'a>(&'a Value);

impl<'a> Storage<'a> {
    /// A `storage` declaration as written.
    pub fn new(v: &'a Value) -> Self {
        Storage(v)
    }
    pub fn raw(self) -> &'a Value {
        self.0
    }
    pub fn namespace(self) -> Option<&'a str> {
        text(self.0, "namespace")
    }
    /// `storage.migrations`: the migrations folder.
    pub fn migrations(self) -> Option<&'a str> {
        text(self.0, "migrations")
    }
    /// `storage.schema` as written (a package path when a string).
    pub fn schema(self) -> Option<&'a Value> {
        self.0.get("schema")
    }
    /// `storage.quota` as written (a number or a size string).
    pub fn quota(self) -> Option<&'a Value> {
        self.0.get("quota")
    }
    pub fn uninstall_policy(self) -> Option<&'a str> {
        text(self.0, "uninstallPolicy")
    }
}

/// `runtimePackage`: named parts (`ui`, `worker`, ...) with package paths.
#[derive(Debug, Clone, Copy)]
pub struct RuntimePackage<'a>(Option<&'a Map<String, Value>>);

/// The fields of a `runtimePackage` part that name package paths.
pub const RUNTIME_PACKAGE_PATH_FIELDS: [&str; 3] = ["path", "schema", "migrations"];

impl<'a> RuntimePackage<'a> {
    /// Every (part, field, path) a part declares, in manifest order and
    /// [`RUNTIME_PACKAGE_PATH_FIELDS`] order.
    pub fn declared_paths(self) -> Vec<(&'a str, &'static str, &'a str)> {
        let mut out = Vec::new();
        for (part, v) in self.0.into_iter().flatten() {
            for field in RUNTIME_PACKAGE_PATH_FIELDS {
                if let Some(p) = text(v, field) {
                    out.push((part.as_str(), field, p));
                }
            }
        }
        out
    }
    /// `runtimePackage.hash`.
    pub fn hash(self) -> Option<&'a str> {
        self.0.and_then(|r| r.get("hash")).and_then(Value::as_str)
    }
    /// `runtimePackage.ui.path` as written (`None` when the part or the field is missing).
    pub fn ui_path(self) -> Option<&'a Value> {
        self.0?.get("ui")?.get("path")
    }
    /// `runtimePackage.ui.entry`, when a string.
    pub fn ui_entry(self) -> Option<&'a str> {
        self.0
            .and_then(|r| r.get("ui"))
            .and_then(|u| u.get("entry"))
            .and_then(Value::as_str)
    }
}

/// `agentRuntime`.
#[derive(Debug, Clone, Copy)]
pub struct AgentRuntime<'a>(Option<&'a Value>);

impl<'a> AgentRuntime<'a> {
    pub fn raw(self) -> Option<&'a Value> {
        self.0
    }
    /// `agentRuntime.sessionPolicy.modes` (strings only; empty when absent or not a list).
    pub fn session_modes(self) -> Vec<&'a str> {
        strings(
            self.0
                .and_then(|r| r.get("sessionPolicy"))
                .and_then(|p| p.get("modes")),
        )
        .collect()
    }
}

/// What an entry is (`entries[].kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind<'a> {
    Page,
    Panel,
    ExpertChat,
    Command,
    Workflow,
    Artifact,
    BackgroundTask,
    Settings,
    /// A kind this host does not define (legacy `scene`/`home`, or newer ones).
    Other(&'a str),
}

impl<'a> EntryKind<'a> {
    pub fn parse(s: &'a str) -> Self {
        match s {
            "page" => EntryKind::Page,
            "panel" => EntryKind::Panel,
            "expert-chat" => EntryKind::ExpertChat,
            "command" => EntryKind::Command,
            "workflow" => EntryKind::Workflow,
            "artifact" => EntryKind::Artifact,
            "background-task" => EntryKind::BackgroundTask,
            "settings" => EntryKind::Settings,
            other => EntryKind::Other(other),
        }
    }
    pub fn as_str(self) -> &'a str {
        match self {
            EntryKind::Page => "page",
            EntryKind::Panel => "panel",
            EntryKind::ExpertChat => "expert-chat",
            EntryKind::Command => "command",
            EntryKind::Workflow => "workflow",
            EntryKind::Artifact => "artifact",
            EntryKind::BackgroundTask => "background-task",
            EntryKind::Settings => "settings",
            EntryKind::Other(s) => s,
        }
    }

    /// Whether an entry of this kind is a UI surface a window can mount (artifact viewers are
    /// `artifact` entries). The one list of mountable kinds: the bridge's mounting refuses the
    /// others and the store's app summary marks them.
    pub fn is_ui_surface(self) -> bool {
        matches!(
            self,
            EntryKind::Page | EntryKind::Panel | EntryKind::Settings | EntryKind::Artifact
        )
    }
}

/// One `entries[]` item.
#[derive(Debug, Clone, Copy)]
pub struct Entry<'a>(&'a Value);

impl<'a> Entry<'a> {
    pub fn raw(self) -> &'a Value {
        self.0
    }
    pub fn is_object(self) -> bool {
        self.0.is_object()
    }
    pub fn key(self) -> Option<&'a str> {
        text(self.0, "key")
    }
    /// `key` as written, whatever its type (`None` when absent).
    pub fn key_raw(self) -> Option<&'a Value> {
        self.0.get("key")
    }
    /// `kind`, when a string.
    pub fn kind(self) -> Option<EntryKind<'a>> {
        text(self.0, "kind").map(EntryKind::parse)
    }
    /// `kind` as written, whatever its type.
    pub fn kind_raw(self) -> Option<&'a Value> {
        self.0.get("kind")
    }
    pub fn title(self) -> Option<&'a str> {
        text(self.0, "title")
    }
    pub fn route(self) -> Option<&'a str> {
        text(self.0, "route")
    }
    /// `requiredCapabilities` (strings only).
    pub fn required_capabilities(self) -> impl Iterator<Item = &'a str> {
        strings(self.0.get("requiredCapabilities"))
    }
    /// `permissions`: the permission keys this entry needs (strings only).
    pub fn permissions(self) -> impl Iterator<Item = &'a str> {
        strings(self.0.get("permissions"))
    }
    /// The label readiness reports the entry under (see [`Item::label`]).
    pub fn label(self, fallback: &'a str) -> &'a str {
        Item(self.0).label(fallback)
    }
    /// `workflow`: the workflow this entry runs (a `workflows[]` key or a path).
    pub fn workflow(self) -> Option<&'a str> {
        text(self.0, "workflow")
    }
    /// `schedule` of a `background-task` entry (`{every: "15m"}`, `docs/package-format.md`):
    /// as written; `hosting::workflow::schedule` parses it.
    pub fn schedule(self) -> Option<&'a Value> {
        self.0.get("schedule")
    }
    /// `service`: the `services[]` key this entry's work runs on.
    pub fn service(self) -> Option<&'a str> {
        text(self.0, "service")
    }
    /// `artifactTypes` (strings only): the artifact types this entry views (`lime.ui` artifact
    /// viewers; `docs/package-format.md`).
    pub fn artifact_types(self) -> impl Iterator<Item = &'a str> {
        strings(self.0.get("artifactTypes"))
    }
    /// `command` of a `command` entry (`/draft-reply`), when a string.
    pub fn command(self) -> Option<&'a str> {
        text(self.0, "command")
    }
}

/// One `permissions[]` item.
#[derive(Debug, Clone, Copy)]
pub struct Permission<'a>(&'a Value);

impl<'a> Permission<'a> {
    /// A permission declaration (an item of `permissions[]`, or a stored copy of one).
    pub fn new(v: &'a Value) -> Self {
        Permission(v)
    }
    pub fn raw(self) -> &'a Value {
        self.0
    }
    pub fn key(self) -> Option<&'a str> {
        text(self.0, "key")
    }
    pub fn key_raw(self) -> Option<&'a Value> {
        self.0.get("key")
    }
    /// `scope` (`network`, `filesystem`, ...), when a string.
    pub fn scope(self) -> Option<&'a str> {
        text(self.0, "scope")
    }
    pub fn scope_raw(self) -> Option<&'a Value> {
        self.0.get("scope")
    }
    pub fn access_raw(self) -> Option<&'a Value> {
        self.0.get("access")
    }
    pub fn reason(self) -> Option<&'a str> {
        text(self.0, "reason")
    }
    pub fn reason_raw(self) -> Option<&'a Value> {
        self.0.get("reason")
    }
    /// `required: true` (only the boolean).
    pub fn required(self) -> bool {
        flag_required(self.0)
    }
    /// `domains` (strings only).
    pub fn domains(self) -> impl Iterator<Item = &'a str> {
        strings(self.0.get("domains"))
    }
    /// `domains` as written.
    pub fn domains_raw(self) -> Option<&'a Value> {
        self.0.get("domains")
    }
    /// `paths` as written.
    pub fn paths_raw(self) -> Option<&'a Value> {
        self.0.get("paths")
    }
    /// `entries`: the entries this permission is limited to, when a list.
    pub fn entries(self) -> Option<&'a Vec<Value>> {
        self.0.get("entries").and_then(Value::as_array)
    }
    pub fn label(self, fallback: &'a str) -> &'a str {
        Item(self.0).label(fallback)
    }
}

/// One `services[]` item.
#[derive(Debug, Clone, Copy)]
pub struct Service<'a>(&'a Value);

impl<'a> Service<'a> {
    pub fn raw(self) -> &'a Value {
        self.0
    }
    pub fn key(self) -> Option<&'a str> {
        text(self.0, "key")
    }
    pub fn kind(self) -> Option<&'a str> {
        text(self.0, "kind")
    }
    pub fn required(self) -> bool {
        flag_required(self.0)
    }
    /// `executionPlane` (`client-local`, `cloud-remote`).
    pub fn execution_plane(self) -> Option<&'a str> {
        text(self.0, "executionPlane")
    }
    /// `protocol` (`stdio-jsonrpc`, `local-http`, `local-socket`, `wasm`, `remote-http`).
    pub fn protocol(self) -> Option<&'a str> {
        text(self.0, "protocol")
    }
    pub fn language(self) -> Option<&'a str> {
        text(self.0, "language")
    }
    /// `entry` (a package path), else `path`.
    pub fn entry_path(self) -> Option<&'a str> {
        text(self.0, "entry").or_else(|| text(self.0, "path"))
    }
    /// `command` as a list of strings (`None` when absent or not a list of strings).
    pub fn command(self) -> Option<Vec<&'a str>> {
        let list = self.0.get("command")?.as_array()?;
        list.iter().map(Value::as_str).collect()
    }
    /// `network` (`deny-by-default` when absent).
    pub fn network(self) -> &'a str {
        text(self.0, "network").unwrap_or("deny-by-default")
    }
    /// `allowedDomains`: the hosts a `remote-allowed` service may reach (strings only, at most
    /// 64 kept; the egress policy drops entries that are not DNS names or `*.` wildcards).
    pub fn allowed_domains(self) -> Vec<&'a str> {
        self.0
            .get("allowedDomains")
            .and_then(Value::as_array)
            .map(|l| l.iter().filter_map(Value::as_str).take(64).collect())
            .unwrap_or_default()
    }
    /// `endpoint` (a `cloud-remote` service's URL).
    pub fn endpoint(self) -> Option<&'a str> {
        text(self.0, "endpoint")
    }
    /// `resourceLimits.memoryMb`.
    pub fn memory_mb(self) -> Option<u64> {
        self.0.get("resourceLimits")?.get("memoryMb")?.as_u64()
    }
    /// `resourceLimits.timeoutMs`: the per-call timeout.
    pub fn timeout_ms(self) -> Option<u64> {
        self.0.get("resourceLimits")?.get("timeoutMs")?.as_u64()
    }
    /// `requiredCapabilities[]`: the `lime.*` names the service itself may call.
    pub fn required_capabilities(self) -> impl Iterator<Item = &'a str> {
        strings(self.0.get("requiredCapabilities"))
    }
}

/// One `events[]` item: `{key, direction: publish | subscribe | both}`.
#[derive(Debug, Clone, Copy)]
pub struct Event<'a>(&'a Value);

impl<'a> Event<'a> {
    pub fn key(self) -> Option<&'a str> {
        text(self.0, "key")
    }
    /// `direction`, when a string.
    pub fn direction(self) -> Option<&'a str> {
        text(self.0, "direction")
    }
}

/// One `workflows[]` item.
#[derive(Debug, Clone, Copy)]
pub struct Workflow<'a>(&'a Value);

impl<'a> Workflow<'a> {
    pub fn raw(self) -> &'a Value {
        self.0
    }
    pub fn key(self) -> Option<&'a str> {
        text(self.0, "key")
    }
    pub fn path(self) -> Option<&'a str> {
        text(self.0, "path")
    }
}

/// One item of a declared list (`secrets[]`, `knowledgeTemplates[]`, `toolRefs[]`,
/// `integrations[]`, `skillRefs[]`, ...).
#[derive(Debug, Clone, Copy)]
pub struct Item<'a>(&'a Value);

/// The fields that name an item, in the order [`Item::label`] tries them.
const LABEL_FIELDS: [&str; 8] = [
    "key",
    "id",
    "name",
    "template",
    "capability",
    "permission",
    "tool",
    "check",
];

impl<'a> Item<'a> {
    pub fn new(v: &'a Value) -> Self {
        Item(v)
    }
    pub fn raw(self) -> &'a Value {
        self.0
    }
    pub fn key(self) -> Option<&'a str> {
        text(self.0, "key")
    }
    /// The first string among `key`, `id`, `name`, `template`, `capability`, `permission`,
    /// `tool`, `check`; else `fallback`.
    pub fn label(self, fallback: &'a str) -> &'a str {
        LABEL_FIELDS
            .iter()
            .find_map(|k| text(self.0, k))
            .unwrap_or(fallback)
    }
    pub fn required(self) -> bool {
        flag_required(self.0)
    }
    /// `path`: a package path the item references.
    pub fn path(self) -> Option<&'a str> {
        text(self.0, "path")
    }
    /// A string field of the item (`provider`, `scope` of a secret slot, ...).
    pub fn text(self, field: ItemText) -> Option<&'a str> {
        text(self.0, field.as_str())
    }
    /// `readiness.missing` of an integration: `blocked`, `needs-setup` or `optional`.
    pub fn readiness_missing(self) -> Option<&'a str> {
        self.0.pointer("/readiness/missing").and_then(Value::as_str)
    }
    /// `readiness.setupAction` of an integration.
    pub fn readiness_setup_action(self) -> Option<&'a str> {
        self.0
            .pointer("/readiness/setupAction")
            .and_then(Value::as_str)
    }
}

/// String fields of declared items read by the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ItemText {
    Provider,
    Scope,
}

impl ItemText {
    pub fn as_str(self) -> &'static str {
        match self {
            ItemText::Provider => "provider",
            ItemText::Scope => "scope",
        }
    }
}

/// One check of `evals/readiness.yaml` (`required`/`recommended`/`performance` lists).
#[derive(Debug, Clone, Copy)]
pub struct EvalCheck<'a>(&'a Value);

/// The tiers of `evals/readiness.yaml`, in the order readiness reports them.
pub const EVAL_TIERS: [&str; 3] = ["required", "recommended", "performance"];

impl Manifest {
    /// The checks of one tier of `evals/readiness.yaml` (empty without the file).
    pub fn eval_checks<'a>(&'a self, tier: &str) -> impl Iterator<Item = EvalCheck<'a>> {
        self.readiness_spec
            .as_ref()
            .and_then(|s| s.get(tier))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(EvalCheck)
    }
}

impl<'a> EvalCheck<'a> {
    /// `check`: the check type (`sdk_version`, `capability_available`, ...).
    pub fn check(self) -> Option<&'a str> {
        text(self.0, "check")
    }
    /// `blocker: true` (or the older `blocking: true`; `blocker` wins when both are set).
    pub fn blocker(self) -> bool {
        matches!(
            self.0.get("blocker").or_else(|| self.0.get("blocking")),
            Some(Value::Bool(true))
        )
    }
    pub fn expect(self) -> Option<&'a str> {
        text(self.0, "expect")
    }
    pub fn capability(self) -> Option<&'a str> {
        text(self.0, "capability")
    }
    pub fn permission(self) -> Option<&'a str> {
        text(self.0, "permission")
    }
    pub fn template(self) -> Option<&'a str> {
        text(self.0, "template")
    }
    pub fn tool(self) -> Option<&'a str> {
        text(self.0, "tool")
    }
    pub fn message(self) -> Option<&'a str> {
        text(self.0, "message")
    }
    pub fn remediation(self) -> Option<&'a str> {
        text(self.0, "remediation")
    }
    pub fn label(self, fallback: &'a str) -> &'a str {
        Item(self.0).label(fallback)
    }
}

#[cfg(test)]
mod source_scan;
#[cfg(test)]
mod tests;
