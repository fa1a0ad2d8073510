//! The closed vocabularies of the facts RuntimeCore records: statuses, decisions and kinds, each
//! owned by serde. A payload field keeps the wire string (`Option<String>`, so a foreign event
//! with a status this version does not know still decodes); the constructors in `facts` write
//! it from these enums, and `as_str` is the serde name (pinned by the tests below).

use serde::{Deserialize, Serialize};

macro_rules! wire_enum {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident => $wire:literal,)+ }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
        pub enum $name {
            $($(#[$vdoc])* #[serde(rename = $wire)] $variant,)+
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant,)+];

            /// The wire string (the serde name).
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $wire,)+ }
            }

            /// The value whose wire string is `s`.
            pub fn parse(s: &str) -> Option<$name> {
                match s { $($wire => Some($name::$variant),)+ _ => None }
            }
        }

        impl From<$name> for String {
            fn from(v: $name) -> String {
                v.as_str().to_owned()
            }
        }
    };
}

wire_enum!(
    /// `session.created` / `session.updated` status.
    SessionStatus { Idle => "idle", }
);
wire_enum!(
    /// `thread.started` / `thread.updated` status: a thread is running while one of its turns
    /// runs, idle otherwise.
    ThreadStatus {
        Idle => "idle",
        Running => "running",
    }
);
wire_enum!(
    /// `turn.submitted` status.
    SubmitStatus {
        Accepted => "accepted",
        Queued => "queued",
    }
);
wire_enum!(
    /// The status of a turn's lifecycle facts (`turn.started`, `turn.completed`, `turn.failed`).
    /// The App Server's view of a turn is `read_model::TurnStatus`.
    TurnFactStatus {
        Running => "running",
        Completed => "completed",
        Failed => "failed",
        Cancelled => "cancelled",
    }
);
wire_enum!(
    /// How a turn ends when it does not complete: `turn.failed` with `status: "failed"` or
    /// `"cancelled"` (the standard has no turn-cancel type), and the matching `task.failed` /
    /// `task.cancelled`.
    TurnEnd {
        Failed => "failed",
        Cancelled => "cancelled",
    }
);
wire_enum!(
    /// `run.status` phase: a run (one attempt of a turn) is running, then completed, failed
    /// (a retry starts a new run) or cancelled.
    RunPhase {
        Running => "running",
        Completed => "completed",
        Failed => "failed",
        Cancelled => "cancelled",
    }
);
wire_enum!(
    /// `turn.completed` outcome.
    TurnOutcome {
        AssistantMessage => "assistant_message",
        StructuredOutput => "structured_output",
    }
);
wire_enum!(
    /// `task.*` status.
    TaskStatus {
        Accepted => "accepted",
        Running => "running",
        Completed => "completed",
        Failed => "failed",
        Cancelling => "cancelling",
        Cancelled => "cancelled",
        Retrying => "retrying",
    }
);
wire_enum!(
    /// `task.attempt.*` status.
    AttemptStatus {
        Running => "running",
        Completed => "completed",
        Failed => "failed",
    }
);
wire_enum!(
    /// `model.requested` / `model.completed` / `model.failed` status.
    ModelStatus {
        Started => "started",
        Completed => "completed",
        Failed => "failed",
        Cancelled => "cancelled",
    }
);
wire_enum!(
    /// `tool.started` / `tool.result` / `tool.failed` status.
    ToolCallStatus {
        Started => "started",
        Completed => "completed",
        Failed => "failed",
    }
);
wire_enum!(
    /// A tool's risk (`tool.started`, `permission.evaluated`).
    Risk {
        Low => "low",
        High => "high",
    }
);
wire_enum!(
    /// `permission.evaluated` result.
    PermissionResult {
        Allow => "allow",
        Ask => "ask",
    }
);
wire_enum!(
    /// `action.required` / `action.resolved` status.
    ActionStatus {
        Pending => "pending",
        Resolved => "resolved",
        /// Closed by the runtime when its turn ended.
        Cancelled => "cancelled",
        /// Closed by recovery: the process that asked is gone.
        Expired => "expired",
    }
);
wire_enum!(
    /// A decision on an action (`action.resolved` decision; `agentSession/action/respond`).
    Decision {
        AllowOnce => "allow_once",
        AllowForSession => "allow_for_session",
        Decline => "decline",
        Cancel => "cancel",
    }
);

impl Decision {
    pub fn allows(self) -> bool {
        matches!(self, Decision::AllowOnce | Decision::AllowForSession)
    }
}

wire_enum!(
    /// `action.resolved` scope: what an allowing decision covers.
    GrantScope {
        Call => "call",
        /// `allow_for_session`: the session's later calls of the tool run without asking.
        Session => "session",
    }
);
wire_enum!(
    /// `queue.changed` change.
    QueueChange {
        Added => "added",
        Removed => "removed",
        /// Put back after a restart (paused).
        Restored => "restored",
        Resumed => "resumed",
    }
);
wire_enum!(
    /// `queue.changed` status.
    QueueStatus { Paused => "paused", }
);
wire_enum!(
    /// `artifact.changed` status.
    ArtifactStatus { Created => "created", }
);
wire_enum!(
    /// `snapshot.repaired` status.
    SnapshotStatus { Repaired => "repaired", }
);

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Each enum's wire strings, literally: a rename here changes the event log's bytes.
    fn pin<T>(expected: &[&str])
    where
        T: Copy + PartialEq + std::fmt::Debug + Serialize + serde::de::DeserializeOwned,
        T: WireStr + 'static,
    {
        let all = T::all();
        assert_eq!(all.len(), expected.len(), "{}", std::any::type_name::<T>());
        for (v, wire) in all.iter().zip(expected) {
            assert_eq!(serde_json::to_value(v).unwrap(), json!(wire));
            assert_eq!(serde_json::from_value::<T>(json!(wire)).unwrap(), *v);
            assert_eq!(v.wire(), *wire);
            assert_eq!(T::parse_wire(wire), Some(*v));
        }
        assert!(serde_json::from_value::<T>(json!("not-a-status")).is_err());
        assert_eq!(T::parse_wire("not-a-status"), None);
    }

    trait WireStr: Sized {
        fn all() -> &'static [Self];
        fn wire(self) -> &'static str;
        fn parse_wire(s: &str) -> Option<Self>;
    }

    macro_rules! wire_str {
        ($($t:ty),*) => {$(
            impl WireStr for $t {
                fn all() -> &'static [Self] { <$t>::ALL }
                fn wire(self) -> &'static str { self.as_str() }
                fn parse_wire(s: &str) -> Option<Self> { <$t>::parse(s) }
            }
        )*};
    }
    wire_str!(
        SessionStatus,
        ThreadStatus,
        RunPhase,
        SubmitStatus,
        TurnFactStatus,
        TurnEnd,
        TurnOutcome,
        TaskStatus,
        AttemptStatus,
        ModelStatus,
        ToolCallStatus,
        Risk,
        PermissionResult,
        ActionStatus,
        Decision,
        GrantScope,
        QueueChange,
        QueueStatus,
        ArtifactStatus,
        SnapshotStatus
    );

    #[test]
    fn status_wire_strings_are_pinned() {
        pin::<SessionStatus>(&["idle"]);
        pin::<ThreadStatus>(&["idle", "running"]);
        pin::<RunPhase>(&["running", "completed", "failed", "cancelled"]);
        pin::<SubmitStatus>(&["accepted", "queued"]);
        pin::<TurnFactStatus>(&["running", "completed", "failed", "cancelled"]);
        pin::<TurnEnd>(&["failed", "cancelled"]);
        pin::<TurnOutcome>(&["assistant_message", "structured_output"]);
        pin::<TaskStatus>(&[
            "accepted",
            "running",
            "completed",
            "failed",
            "cancelling",
            "cancelled",
            "retrying",
        ]);
        pin::<AttemptStatus>(&["running", "completed", "failed"]);
        pin::<ModelStatus>(&["started", "completed", "failed", "cancelled"]);
        pin::<ToolCallStatus>(&["started", "completed", "failed"]);
        pin::<Risk>(&["low", "high"]);
        pin::<PermissionResult>(&["allow", "ask"]);
        pin::<ActionStatus>(&["pending", "resolved", "cancelled", "expired"]);
        pin::<Decision>(&["allow_once", "allow_for_session", "decline", "cancel"]);
        pin::<GrantScope>(&["call", "session"]);
        pin::<QueueChange>(&["added", "removed", "restored", "resumed"]);
        pin::<QueueStatus>(&["paused"]);
        pin::<ArtifactStatus>(&["created"]);
        pin::<SnapshotStatus>(&["repaired"]);
    }

    #[test]
    fn decision_allows_only_the_allowing_answers() {
        assert!(Decision::AllowOnce.allows());
        assert!(Decision::AllowForSession.allows());
        assert!(!Decision::Decline.allows());
        assert!(!Decision::Cancel.allows());
    }
}
