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
    "lime.capabilities",
    "lime.services",
];

/// The namespaces this build implements: exactly `hosting::capability::Capability::ALL`'s
/// wire names (a test there keeps the two lists equal). Kept here, below the capability
/// registry, so the install half computes readiness without knowing the hosting half.
pub const IMPLEMENTED_CAPABILITIES: &[&str] = &[
    "lime.ui",
    "lime.storage",
    "lime.secrets",
    "lime.events",
    "lime.policy",
    "lime.artifacts",
    "lime.evidence",
    "lime.agent",
    "lime.files",
    "lime.tools",
    "lime.workflow",
    "lime.knowledge",
    "lime.modelSettings",
    "lime.capabilities",
    "lime.workspace",
    "lime.services",
];

impl HostProfile {
    /// The profile of this build: a capability is available exactly when this host implements
    /// at least one of its methods ([`IMPLEMENTED_CAPABILITIES`]); every other one is listed as
    /// unavailable with `capability.not_implemented`.
    pub fn current() -> Self {
        let capabilities = KNOWN_CAPABILITIES
            .iter()
            .map(|name| {
                let available = IMPLEMENTED_CAPABILITIES.contains(name);
                (
                    name.to_string(),
                    CapabilityInfo {
                        version: STANDARD_VERSION.into(),
                        available,
                        reason: (!available).then(|| "capability.not_implemented".into()),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_capability_is_available_exactly_when_it_is_implemented() {
        let profile = HostProfile::current();
        assert_eq!(profile.capabilities.len(), KNOWN_CAPABILITIES.len());
        for (name, info) in &profile.capabilities {
            let implemented = IMPLEMENTED_CAPABILITIES.contains(&name.as_str());
            assert_eq!(info.available, implemented, "{name}");
            assert_eq!(
                info.reason.as_deref(),
                (!info.available).then_some("capability.not_implemented"),
                "{name}"
            );
        }
        assert!(profile.available("lime.ui").is_some());
        assert!(profile.available("lime.storage").is_some());
        assert!(profile.available("lime.cloudSession").is_none());
        // Every implemented capability is one the profile publishes.
        for c in IMPLEMENTED_CAPABILITIES {
            assert!(KNOWN_CAPABILITIES.contains(c), "{c}");
        }
    }
}
