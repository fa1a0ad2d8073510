//! `lime.capabilities` and `lime.workspace`, answered by the bridge from what only it holds (the
//! frame's session answers, the host environment) through the choke point's transport-free
//! builders (`capability::projections`), once the choke point allowed the call; and the
//! first snapshot's install mode, readiness and model status (issue 19 §2).

use super::*;
use crate::hosting::capability::dispatch::Allowed;
use crate::hosting::capability::method::{CapabilitiesMethod, WorkspaceMethod};
use crate::hosting::capability::projections::{self, WorkspaceFacts};

impl BridgeHost {
    pub(super) fn capabilities_call(
        &mut self,
        store: &Store,
        mount: &Mount,
        proof: &Allowed,
        method: CapabilitiesMethod,
        args: &Value,
    ) -> Result<Value, CallError> {
        projections::check_no_args(proof, args)?;
        match method {
            CapabilitiesMethod::List => {
                let app = self.active_app(store, mount);
                let answers = self
                    .answers
                    .get(&mount.mount_id)
                    .cloned()
                    .unwrap_or_default();
                Ok(projections::entry_capabilities(
                    &self.facts,
                    store,
                    &self.profile,
                    &mount.caller(),
                    app.as_deref(),
                    &answers,
                ))
            }
        }
    }

    pub(super) fn workspace_call(
        &self,
        proof: &Allowed,
        method: WorkspaceMethod,
        args: &Value,
    ) -> Result<Value, CallError> {
        projections::check_no_args(proof, args)?;
        match method {
            WorkspaceMethod::Get => Ok(projections::workspace(&self.workspace_facts())),
        }
    }

    pub(super) fn workspace_facts(&self) -> WorkspaceFacts {
        WorkspaceFacts {
            workspace_id: self.env.workspace_id.clone(),
            tenant_id: self.env.tenant_id.clone(),
            display_name: self.env.workspace_name.clone(),
            locale: self.env.locale.clone(),
            timezone: self.env.timezone.clone(),
        }
    }

    /// The snapshot's install mode, the entry's readiness with its setup actions, and the
    /// model's status, read from the store now.
    pub(super) fn snapshot_setup(&self, store: &Store, mount: &Mount) -> SnapshotSetup {
        let install_mode = store.install_mode(&mount.app_id).unwrap_or("installed");
        let readiness = match store.readiness(&mount.app_id, &self.profile) {
            Ok(r) => {
                let entry = r.entries.iter().find(|e| e.entry_key == mount.entry_key);
                SnapshotReadiness {
                    status: entry.map_or(r.status, |e| e.status).as_str().to_owned(),
                    app_status: r.status.as_str().to_owned(),
                    missing: entry.map(|e| e.missing.clone()).unwrap_or_default(),
                    setup_actions: r
                        .setup_actions
                        .iter()
                        .map(|a| SnapshotSetupAction {
                            key: a.key.clone(),
                            title: a.title.clone(),
                            kind: a.kind.to_owned(),
                        })
                        .collect(),
                }
            }
            Err(_) => SnapshotReadiness {
                status: "blocked".into(),
                app_status: "blocked".into(),
                missing: Vec::new(),
                setup_actions: Vec::new(),
            },
        };
        SnapshotSetup {
            install_mode: install_mode.to_owned(),
            readiness,
            model: SnapshotModel {
                status: projections::model_status(store).to_owned(),
            },
        }
    }
}

/// What [`BridgeHost::snapshot_setup`] reads for the snapshot.
pub(super) struct SnapshotSetup {
    pub install_mode: String,
    pub readiness: SnapshotReadiness,
    pub model: SnapshotModel,
}
