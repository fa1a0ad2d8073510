//! `lime.files.requestFiles`: the user picks files (or a folder) for the app in a picker the
//! host UI draws (`Outgoing::PickFiles`); the call waits like a permission prompt (the same
//! bound on waiting prompts). The host UI grants what the user chose (`file_grant_path`,
//! `file_upload`) and answers with those refs (`answer_file_pick`); only live refs of the
//! calling app are passed on, at most one unless `multiple`. The value is `{cancelled, refs:
//! [{ref, name, kind, size?, mimeType?, ...}]}`: never a path. The answer is audited
//! (`files.pick_answer`).

use super::*;
use crate::hosting::capability::services::{describe_file_ref, PickRequest};

impl BridgeHost {
    /// Shows the picker for `call` (or refuses when too many prompts wait).
    pub(super) fn pick_files(
        &mut self,
        mount: &Mount,
        call: Call,
        trace_id: &str,
        request: PickRequest,
    ) -> Vec<Outgoing> {
        if self.prompts.len() >= MAX_PENDING_PROMPTS {
            let mut e = error_for(
                &call,
                ErrorCode::RateLimited,
                "too many prompts are waiting",
            );
            e.retryable = true;
            self.table.end_call(&mount.mount_id, &call.request_id);
            return vec![self.call_error(mount, &call.request_id, &e)];
        }
        let prompt_id = self.new_id("pick");
        self.prompts.insert(
            prompt_id.clone(),
            PendingPrompt {
                mount_id: mount.mount_id.clone(),
                call,
                permission: None,
                trace_id: trace_id.to_owned(),
                kind: PromptKind::PickFiles {
                    multiple: request.multiple,
                },
            },
        );
        vec![Outgoing::PickFiles {
            prompt_id,
            mount_id: mount.mount_id.clone(),
            app_id: mount.app_id.clone(),
            entry_key: mount.entry_key.clone(),
            request,
        }]
    }

    /// The user's choice for a pending picker: `None` = cancelled. Unknown prompt ids answer
    /// nothing.
    pub fn answer_file_pick(
        &mut self,
        store: &Store,
        prompt_id: &str,
        refs: Option<Vec<String>>,
    ) -> Vec<Outgoing> {
        let Some(p) = self.prompts.remove(prompt_id) else {
            return Vec::new();
        };
        let Some(mount) = self.table.get(&p.mount_id).cloned() else {
            return Vec::new();
        };
        self.finish_pick(store, &mount, p, refs)
    }

    pub(super) fn finish_pick(
        &mut self,
        store: &Store,
        mount: &Mount,
        p: PendingPrompt,
        refs: Option<Vec<String>>,
    ) -> Vec<Outgoing> {
        let multiple = matches!(p.kind, PromptKind::PickFiles { multiple: true });
        let mut chosen = Vec::new();
        for r in refs.iter().flatten() {
            if !multiple && !chosen.is_empty() {
                break;
            }
            match store.file_ref(&mount.app_id, r) {
                Ok(Some(found)) => chosen.push(found),
                Ok(None) => {}
                Err(e) => tracing::warn!(error = %e.message, "cannot read a picked file ref"),
            }
        }
        let cancelled = refs.is_none();
        let details = json!({
            "entryKey": mount.entry_key, "cancelled": cancelled,
            "refs": chosen.iter().map(|r| r.handle.clone()).collect::<Vec<_>>(),
            "requestId": p.call.request_id, "traceId": p.trace_id, "mountId": mount.mount_id,
        });
        if let Err(e) = store.record_audit(
            "files.pick_answer",
            Some(&mount.app_id),
            Some(&mount.version),
            &details,
        ) {
            tracing::warn!(error = %e.message, "cannot audit a file pick");
        }
        self.table.end_call(&mount.mount_id, &p.call.request_id);
        let value = json!({
            "cancelled": cancelled,
            "refs": chosen.iter().map(describe_file_ref).collect::<Vec<_>>(),
        });
        vec![self.post(
            mount,
            "host:response",
            Some(&p.call.request_id),
            json!({ "value": value, "traceId": p.trace_id }),
        )]
    }
}
