//! Identifier newtypes.

use std::fmt;

/// An app's identity as RuntimeCore sees it: the manifest `name`, validated against the
/// standard's pattern `^[a-z0-9][a-z0-9-_.]*$` (1..=64 characters). Because the pattern excludes
/// `/`, `\\` and a leading `.`, an `AppId` is always safe to use as one path component.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(transparent)]
pub struct AppId(String);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid app id {0:?}: must match ^[a-z0-9][a-z0-9-_.]*$ and be 1..=64 characters")]
pub struct InvalidAppId(pub String);

impl AppId {
    pub fn new(name: &str) -> Result<Self, InvalidAppId> {
        if is_valid_app_name(name) {
            Ok(AppId(name.to_owned()))
        } else {
            Err(InvalidAppId(name.to_owned()))
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for AppId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The standard's app-name rule (`app-manifest.schema.json#/properties/name`).
pub fn is_valid_app_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    if bytes.is_empty() || bytes.len() > 64 {
        return false;
    }
    let first_ok = bytes[0].is_ascii_lowercase() || bytes[0].is_ascii_digit();
    first_ok
        && bytes.iter().all(|&b| {
            b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'-' | b'_' | b'.')
        })
}

/// The longest runtime id we accept from a caller (bytes).
pub const MAX_ID_LEN: usize = 128;

/// A caller-supplied runtime id was empty, too long, or used a character outside
/// `[A-Za-z0-9_.:-]`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid {kind} {value:?}: must be 1..=128 characters of [A-Za-z0-9_.:-]")]
pub struct InvalidId {
    pub kind: &'static str,
    pub value: String,
}

/// The charset rule every runtime id follows (so ids are safe in logs, URLs and file names).
pub fn is_valid_runtime_id(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= MAX_ID_LEN
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b':' | b'-'))
}

/// 128 random bits from the OS, as 32 lowercase hex digits. Ids are the only randomness in
/// RuntimeCore and they are minted at the edges (log, executor, server), never in the turn
/// machine, which derives its ids from the turn id.
pub fn random_hex() -> String {
    let mut b = [0u8; 16];
    // The OS RNG failing is not recoverable; getrandom documents it as practically infallible.
    getrandom::fill(&mut b).expect("OS random number generator unavailable");
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(32);
    for x in b {
        s.push(HEX[(x >> 4) as usize] as char);
        s.push(HEX[(x & 15) as usize] as char);
    }
    s
}

macro_rules! runtime_ids {
    ($($(#[$doc:meta])* $name:ident => $prefix:literal),* $(,)?) => {$(
        $(#[$doc])*
        #[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, schemars::JsonSchema)]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            /// The prefix of freshly minted ids of this kind.
            pub const PREFIX: &'static str = $prefix;

            /// Validates a caller-supplied id.
            pub fn new(s: impl Into<String>) -> Result<Self, InvalidId> {
                let s = s.into();
                if is_valid_runtime_id(&s) {
                    Ok($name(s))
                } else {
                    Err(InvalidId { kind: stringify!($name), value: s })
                }
            }

            /// A fresh random id (`<prefix>_<32 hex>`).
            pub fn random() -> Self {
                $name(format!("{}_{}", $prefix, random_hex()))
            }

            /// A deterministic child id: `<prefix>_<parent>_<n>` (bounded to [`MAX_ID_LEN`] by
            /// keeping the tail of the parent). Used by the sans-IO turn machine.
            pub fn derived(parent: &str, n: u64) -> Self {
                let mut s = format!("{}_{}_{}", $prefix, parent, n);
                if s.len() > MAX_ID_LEN {
                    let cut = s.len() - MAX_ID_LEN;
                    s = s[cut..].to_owned();
                }
                $name(s)
            }

            pub fn as_str(&self) -> &str {
                &self.0
            }

            pub fn into_string(self) -> String {
                self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = String::deserialize(d)?;
                $name::new(s).map_err(serde::de::Error::custom)
            }
        }
    )*};
}

runtime_ids! {
    /// One runtime install / instance.
    RuntimeId => "runtime",
    /// A durable, user-visible container of threads.
    SessionId => "sess",
    /// An ordered execution context inside a session.
    ThreadId => "thread",
    /// One submitted input cycle.
    TurnId => "turn",
    /// One ordered runtime item inside a turn.
    StepId => "step",
    /// A durable unit of work (one per turn in v0).
    TaskId => "task",
    /// One execution attempt of a task; a retry is a new run.
    RunId => "run",
    /// The standard's attempt id (same value space as `RunId` here).
    AttemptId => "attempt",
    /// One tool invocation.
    ToolCallId => "call",
    /// One pending human / policy decision (`requestId` on the App Server wire).
    ActionId => "action",
    /// A child runtime context.
    SubagentId => "subagent",
    /// A reference to an artifact (owned by the artifact service).
    ArtifactId => "artifact",
    /// A reference to evidence (owned by the evidence system).
    EvidenceId => "evidence",
    /// One event.
    EventId => "evt",
    /// Telemetry trace correlation.
    TraceId => "trace",
    /// Telemetry span correlation.
    SpanId => "span",
    /// Transport / API request correlation.
    RequestId => "req",
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runtime_ids_validate_and_mint() {
        assert!(SessionId::new("sess_lime_001").is_ok());
        for bad in ["", "a b", "a/b", "é", &"x".repeat(129)] {
            assert!(TurnId::new(bad).is_err(), "{bad:?}");
        }
        let a = TurnId::random();
        assert!(a.as_str().starts_with("turn_") && a.as_str().len() == 37);
        assert_ne!(a, TurnId::random());
        let long = "t".repeat(200);
        let d = StepId::derived(&long, 7);
        assert!(d.as_str().len() <= MAX_ID_LEN && d.as_str().ends_with("_7"));
        assert!(serde_json::from_str::<TurnId>("\"a b\"").is_err());
    }

    #[test]
    fn accepts_standard_names() {
        for ok in ["a", "content-factory-app", "x.y_z-1", "0app"] {
            assert!(AppId::new(ok).is_ok(), "{ok}");
        }
    }

    #[test]
    fn rejects_names_that_could_escape_a_directory() {
        for bad in [
            "",
            ".",
            "..",
            ".hidden",
            "a/b",
            "a\\b",
            "A",
            "-a",
            "é",
            &"a".repeat(65),
        ] {
            assert!(AppId::new(bad).is_err(), "{bad:?}");
        }
    }
}
