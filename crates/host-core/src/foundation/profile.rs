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
/// The standard's releases (its CHANGELOG), oldest first.
pub const STANDARD_RELEASES: &[&str] = &[
    "0.1.0", "0.2.0", "0.3.0", "0.4.0", "0.5.0", "0.6.0", "0.7.0", "0.8.0", "0.9.0", "0.10.0",
];
/// The oldest release whose apps this host's SDK still serves: each release from 0.4.0 on is
/// backward compatible with the apps of the one before, and 0.3.0 made the SDK a typed
/// contract (`install::compat::sdk` fits a package's range to them).
pub const SDK_OLDEST_COMPATIBLE: &str = "0.3.0";

/// The SDK releases a host whose SDK is `current` provides, oldest first: the standard's
/// releases from [`SDK_OLDEST_COMPATIBLE`] up to `current` (and `current` itself, a patch
/// release included). Empty when `current` is not a version.
pub fn provided_sdk_versions(current: &str) -> Vec<semver::Version> {
    let Ok(current) = semver::Version::parse(current) else {
        return Vec::new();
    };
    let oldest = semver::Version::parse(SDK_OLDEST_COMPATIBLE).unwrap_or_else(|_| current.clone());
    let mut out: Vec<semver::Version> = STANDARD_RELEASES
        .iter()
        .filter_map(|r| semver::Version::parse(r).ok())
        .filter(|v| *v >= oldest && *v <= current)
        .collect();
    if !out.contains(&current) {
        out.push(current);
    }
    out.sort();
    out
}

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
    /// Every SDK release this host serves apps of (oldest first): the standard's releases
    /// from [`SDK_OLDEST_COMPATIBLE`] to `sdk_version`.
    pub sdk_provides: Vec<String>,
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
            sdk_provides: provided_sdk_versions(STANDARD_VERSION)
                .iter()
                .map(ToString::to_string)
                .collect(),
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
