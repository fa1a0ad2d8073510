//! The capability decision: a pure function of the facts about one call.
//!
//! `Allow` only when every gate says yes: the host provides the capability, the manifest declares
//! it, the calling entry is ready (or ready-degraded), the permission the call needs is declared
//! and granted, and policy allows. Deny wins: any gate that says no makes the decision a deny,
//! whatever the others say. `Ask` only when nothing denies and the one open question is the
//! user's (a permission not granted yet, or a policy that asks for confirmation); an unanswered
//! ask is not an allow.

use serde::Serialize;

use super::code::ErrorCode;

/// The readiness of the calling entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum EntryState {
    Ready,
    ReadyDegraded,
    NeedsSetup,
    Blocked,
    Disabled,
}

impl EntryState {
    pub const ALL: [EntryState; 5] = [
        EntryState::Ready,
        EntryState::ReadyDegraded,
        EntryState::NeedsSetup,
        EntryState::Blocked,
        EntryState::Disabled,
    ];
    fn runs(self) -> bool {
        matches!(self, EntryState::Ready | EntryState::ReadyDegraded)
    }
}

/// Whether the user granted the permission a call needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum GrantState {
    Granted,
    /// Never granted, or revoked: the user is asked.
    NotGranted,
    /// The user answered "deny" for this mount; asking again would be nagging.
    Denied,
}

/// The permission a call needs, as the manifest declares it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PermissionFact {
    /// The method needs no permission (`lime.ui`, `lime.events`, ...).
    NotNeeded,
    /// The method needs a permission of a scope the manifest does not declare.
    Undeclared,
    Declared(GrantState),
}

/// What host policy says about this call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PolicyVerdict {
    Allow,
    /// Allowed after the user confirms (risky operations).
    Ask,
    Deny,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CallFacts {
    /// The host implements the capability (and the method).
    pub available: bool,
    /// The manifest declares the capability (`requires.capabilities` or the entry's
    /// `requiredCapabilities`).
    pub declared: bool,
    pub entry: EntryState,
    pub permission: PermissionFact,
    pub policy: PolicyVerdict,
}

/// Why a call was denied: a stable reason and the standard's error code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DenyReason {
    CapabilityNotAvailable,
    CapabilityNotDeclared,
    EntryNotReady,
    PermissionNotDeclared,
    PermissionDenied,
    PolicyDenied,
}

impl DenyReason {
    pub fn as_str(self) -> &'static str {
        match self {
            DenyReason::CapabilityNotAvailable => "capability.not_available",
            DenyReason::CapabilityNotDeclared => "capability.not_declared",
            DenyReason::EntryNotReady => "entry.not_ready",
            DenyReason::PermissionNotDeclared => "permission.not_declared",
            DenyReason::PermissionDenied => "permission.denied",
            DenyReason::PolicyDenied => "policy.denied",
        }
    }
    /// The standard's code (`APP_E001` CAPABILITY_NOT_AVAILABLE, `APP_E002` PERMISSION_DENIED).
    pub fn app_code(self) -> ErrorCode {
        match self {
            DenyReason::CapabilityNotAvailable | DenyReason::EntryNotReady => {
                ErrorCode::CapabilityNotAvailable
            }
            DenyReason::CapabilityNotDeclared
            | DenyReason::PermissionNotDeclared
            | DenyReason::PermissionDenied
            | DenyReason::PolicyDenied => ErrorCode::PermissionDenied,
        }
    }
}

/// Why the user is asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum AskReason {
    /// The permission is declared but not granted (optional, or revoked).
    PermissionNotGranted,
    /// Policy wants a confirmation for this call.
    PolicyConfirmation,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Decision {
    Allow,
    Ask(AskReason),
    Deny(DenyReason),
}

/// Decides one call. Deny reasons are checked in a fixed order so the reported reason is the
/// most fundamental one (a capability the host lacks is reported as such, not as a missing grant).
pub fn decide(f: &CallFacts) -> Decision {
    if !f.available {
        return Decision::Deny(DenyReason::CapabilityNotAvailable);
    }
    if !f.declared {
        return Decision::Deny(DenyReason::CapabilityNotDeclared);
    }
    if !f.entry.runs() {
        return Decision::Deny(DenyReason::EntryNotReady);
    }
    if f.policy == PolicyVerdict::Deny {
        return Decision::Deny(DenyReason::PolicyDenied);
    }
    match f.permission {
        PermissionFact::Undeclared => return Decision::Deny(DenyReason::PermissionNotDeclared),
        PermissionFact::Declared(GrantState::Denied) => {
            return Decision::Deny(DenyReason::PermissionDenied)
        }
        PermissionFact::Declared(GrantState::NotGranted) => {
            return Decision::Ask(AskReason::PermissionNotGranted)
        }
        PermissionFact::Declared(GrantState::Granted) | PermissionFact::NotNeeded => {}
    }
    if f.policy == PolicyVerdict::Ask {
        return Decision::Ask(AskReason::PolicyConfirmation);
    }
    Decision::Allow
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all_facts() -> Vec<CallFacts> {
        let permissions = [
            PermissionFact::NotNeeded,
            PermissionFact::Undeclared,
            PermissionFact::Declared(GrantState::Granted),
            PermissionFact::Declared(GrantState::NotGranted),
            PermissionFact::Declared(GrantState::Denied),
        ];
        let policies = [
            PolicyVerdict::Allow,
            PolicyVerdict::Ask,
            PolicyVerdict::Deny,
        ];
        let mut out = Vec::new();
        for available in [true, false] {
            for declared in [true, false] {
                for entry in EntryState::ALL {
                    for permission in permissions {
                        for policy in policies {
                            out.push(CallFacts {
                                available,
                                declared,
                                entry,
                                permission,
                                policy,
                            });
                        }
                    }
                }
            }
        }
        out
    }

    /// The table, every combination (2 × 2 × 5 × 5 × 3 = 300 rows), checked against the rule
    /// written independently of `decide`'s control flow.
    #[test]
    fn every_combination_follows_deny_wins() {
        let facts = all_facts();
        assert_eq!(facts.len(), 300);
        let mut allows = 0;
        for f in facts {
            let any_deny = !f.available
                || !f.declared
                || !matches!(f.entry, EntryState::Ready | EntryState::ReadyDegraded)
                || f.policy == PolicyVerdict::Deny
                || f.permission == PermissionFact::Undeclared
                || f.permission == PermissionFact::Declared(GrantState::Denied);
            let any_ask = f.policy == PolicyVerdict::Ask
                || f.permission == PermissionFact::Declared(GrantState::NotGranted);
            let d = decide(&f);
            match d {
                Decision::Deny(_) => assert!(any_deny, "{f:?} -> {d:?}"),
                Decision::Ask(_) => assert!(!any_deny && any_ask, "{f:?} -> {d:?}"),
                Decision::Allow => {
                    allows += 1;
                    assert!(!any_deny && !any_ask, "{f:?} -> {d:?}")
                }
            }
            if any_deny {
                assert!(matches!(d, Decision::Deny(_)), "deny wins: {f:?} -> {d:?}");
            }
        }
        // Allow: available, declared, 2 running states, 2 permission facts, policy allow.
        assert_eq!(allows, 4);
    }

    #[test]
    fn the_reported_reason_is_the_most_fundamental() {
        let base = CallFacts {
            available: true,
            declared: true,
            entry: EntryState::Ready,
            permission: PermissionFact::Declared(GrantState::Granted),
            policy: PolicyVerdict::Allow,
        };
        assert_eq!(decide(&base), Decision::Allow);
        let all_bad = CallFacts {
            available: false,
            declared: false,
            entry: EntryState::Blocked,
            permission: PermissionFact::Declared(GrantState::Denied),
            policy: PolicyVerdict::Deny,
        };
        assert_eq!(
            decide(&all_bad),
            Decision::Deny(DenyReason::CapabilityNotAvailable)
        );
        assert_eq!(
            decide(&CallFacts {
                permission: PermissionFact::Declared(GrantState::NotGranted),
                policy: PolicyVerdict::Ask,
                ..base
            }),
            Decision::Ask(AskReason::PermissionNotGranted)
        );
        assert_eq!(
            decide(&CallFacts {
                policy: PolicyVerdict::Ask,
                ..base
            }),
            Decision::Ask(AskReason::PolicyConfirmation)
        );
        assert_eq!(DenyReason::EntryNotReady.app_code().as_str(), "APP_E001");
        assert_eq!(DenyReason::PermissionDenied.app_code().as_str(), "APP_E002");
    }
}
