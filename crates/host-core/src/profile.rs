//! The host's published capability profile: what this AppHost build offers to apps.
//!
//! Readiness and compatibility are computed against this data, never against assumptions. A
//! capability is listed with the standard version it follows and whether this build can
//! actually serve it; AppHost does not claim what it cannot do (an unavailable capability makes
//! an app that requires it `blocked`, with the reason).

use std::collections::BTreeMap;

use serde::Serialize;

pub const STANDARD: &str = "agentapp";
pub const STANDARD_VERSION: &str = "0.10.0";
pub const SDK_PACKAGE: &str = "@lime/app-sdk";

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CapabilityInfo {
    pub version: String,
    pub available: bool,
    /// Why it is unavailable, as a stable code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HostProfile {
    pub host_version: String,
    pub app_runtime_version: String,
    pub sdk_package: String,
    pub sdk_version: String,
    pub capabilities: BTreeMap<String, CapabilityInfo>,
}

/// The standard's capability namespaces (spec table plus the names the standard uses elsewhere).
pub const KNOWN_CAPABILITIES: &[&str] = &[
    "lime.ui",
    "lime.storage",
    "lime.files",
    "lime.agent",
    "lime.knowledge",
    "lime.tools",
    "lime.artifacts",
    "lime.workflow",
    "lime.policy",
    "lime.evidence",
    "lime.secrets",
    "lime.cloudSession",
    "lime.modelSettings",
    "lime.branding",
    "lime.billing",
    "lime.appUpdates",
    "lime.events",
    "lime.connectors",
    "lime.workspace",
];

impl HostProfile {
    /// The profile of this build. Capability handlers arrive with the Host Bridge and
    /// RuntimeCore; until a handler exists the capability is listed as unavailable.
    pub fn current() -> Self {
        let capabilities = KNOWN_CAPABILITIES
            .iter()
            .map(|name| {
                (
                    name.to_string(),
                    CapabilityInfo {
                        version: STANDARD_VERSION.into(),
                        available: false,
                        reason: Some("capability.not_implemented".into()),
                    },
                )
            })
            .collect();
        HostProfile {
            host_version: env!("CARGO_PKG_VERSION").into(),
            app_runtime_version: STANDARD_VERSION.into(),
            sdk_package: SDK_PACKAGE.into(),
            sdk_version: STANDARD_VERSION.into(),
            capabilities,
        }
    }

    /// The capability if this build can serve it (listed and available), else `None`.
    pub fn available(&self, name: &str) -> Option<&CapabilityInfo> {
        self.capabilities.get(name).filter(|c| c.available)
    }

    /// A profile where every known capability is available (for tests and for hosts embedding
    /// host-core with their own handlers).
    pub fn all_available() -> Self {
        let mut p = HostProfile::current();
        for c in p.capabilities.values_mut() {
            c.available = true;
            c.reason = None;
        }
        p
    }
}
