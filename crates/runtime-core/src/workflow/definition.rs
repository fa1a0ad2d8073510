//! A workflow definition as data: the typed form of one `workflows[]` entry of the manifest.
//! [`parse`] builds it from the entry's JSON value (bounded) and reports what it cannot accept
//! as [`Finding`](super::finding::Finding)s; graph and capability checks are in `validate`.

mod fields;
mod parse;

pub use parse::parse;

use super::expr::Expr;
use super::template::Template;

/// The state kinds: the schema's enum plus the spec's `user-input`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    Start,
    AgentTask,
    ToolCall,
    HumanReview,
    UserInput,
    StorageWrite,
    ArtifactCreate,
    Branch,
    Wait,
    End,
}

impl Kind {
    pub const ALL: [Kind; 10] = [
        Kind::Start,
        Kind::AgentTask,
        Kind::ToolCall,
        Kind::HumanReview,
        Kind::UserInput,
        Kind::StorageWrite,
        Kind::ArtifactCreate,
        Kind::Branch,
        Kind::Wait,
        Kind::End,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Kind::Start => "start",
            Kind::AgentTask => "agent-task",
            Kind::ToolCall => "tool-call",
            Kind::HumanReview => "human-review",
            Kind::UserInput => "user-input",
            Kind::StorageWrite => "storage-write",
            Kind::ArtifactCreate => "artifact-create",
            Kind::Branch => "branch",
            Kind::Wait => "wait",
            Kind::End => "end",
        }
    }

    pub fn from_name(s: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == s)
    }

    /// A state where a run stops and waits (for a person or a timer): a cycle must pass one.
    pub fn waits(self) -> bool {
        matches!(self, Kind::Wait | Kind::HumanReview | Kind::UserInput)
    }

    /// A state that performs a capability call (and so can fail or time out).
    pub fn calls(self) -> bool {
        matches!(
            self,
            Kind::AgentTask | Kind::ToolCall | Kind::StorageWrite | Kind::ArtifactCreate
        )
    }
}

/// What to do when a step fails or times out (`recovery.onError` / `recovery.onTimeout`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OnFailure {
    /// Try again (after backoff) while retries are left, then fail the run.
    Retry,
    /// Like `Retry`, doubling the step's timeout on each attempt (timeouts only).
    RetryWithLongerTimeout,
    /// Ask the user: retry the step or fail the run (`show_error_and_allow_retry`).
    AskUser,
    /// Fail the run.
    Fail,
    /// Continue at another state (`goto:<state>`), the failure recorded as the step's output.
    Goto(String),
}

/// The spec's `recovery` object.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Recovery {
    pub on_timeout: Option<OnFailure>,
    pub on_error: Option<OnFailure>,
    pub max_retries: Option<u32>,
    /// Accepted for the spec; every fact is durable, so checkpoints are always kept.
    pub save_checkpoint: Option<bool>,
}

/// The schema's `retryPolicy` object, AppHost's reading of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts including the first.
    pub max_attempts: Option<u32>,
    /// Delay before the second attempt.
    pub backoff_ms: u64,
    /// Each further delay is the previous one times this.
    pub multiplier: u32,
    pub max_backoff_ms: u64,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: None,
            backoff_ms: 1000,
            multiplier: 2,
            max_backoff_ms: 60_000,
        }
    }
}

/// An `agent-task`'s target: a declared entry, or a task kind.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AgentTarget {
    Entry(String),
    TaskKind(String),
}

/// How long a `wait` waits.
#[derive(Clone, Debug, PartialEq)]
pub enum WaitFor {
    DurationMs(u64),
    /// An expression giving an RFC 3339 timestamp.
    Until(Box<Expr>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Case {
    pub when: Expr,
    pub next: String,
}

/// The per-kind settings of a state.
#[derive(Clone, Debug, PartialEq)]
pub enum Settings {
    Start,
    AgentTask {
        target: AgentTarget,
        input: Option<Template>,
        expected_output: Option<serde_json::Value>,
    },
    ToolCall {
        uses: String,
        arguments: Option<Template>,
    },
    HumanReview {
        prompt: String,
        show: Option<Template>,
    },
    UserInput {
        prompt: String,
        schema: Option<serde_json::Value>,
    },
    StorageWrite {
        storage_key: String,
        value: Template,
    },
    ArtifactCreate {
        artifact_kind: String,
        title: Template,
        content: Template,
    },
    Branch {
        cases: Vec<Case>,
        default: Option<String>,
    },
    Wait(WaitFor),
    End {
        result: Option<Template>,
    },
}

/// One state.
#[derive(Clone, Debug, PartialEq)]
pub struct State {
    pub key: String,
    pub kind: Kind,
    pub next: Option<String>,
    /// The name the state's result gets in `outputs`.
    pub output: Option<String>,
    pub timeout_ms: Option<u64>,
    pub retry: Option<RetryPolicy>,
    pub recovery: Option<Recovery>,
    pub settings: Settings,
}

/// Workflow-level `timeoutMs`, `retryPolicy` and `recovery`: the defaults of every step.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Defaults {
    pub timeout_ms: Option<u64>,
    pub retry: Option<RetryPolicy>,
    pub recovery: Option<Recovery>,
}

/// A parsed workflow.
#[derive(Clone, Debug, PartialEq)]
pub struct Definition {
    pub key: String,
    pub states: Vec<State>,
    pub defaults: Defaults,
}

impl Definition {
    pub fn state(&self, key: &str) -> Option<&State> {
        self.states.iter().find(|s| s.key == key)
    }

    pub fn start(&self) -> Option<&State> {
        self.states.iter().find(|s| s.kind == Kind::Start)
    }

    /// The states a state can go to: `next`, branch cases and default, recovery `goto`s.
    pub fn successors(&self, s: &State) -> Vec<String> {
        let mut out: Vec<String> = s.next.iter().cloned().collect();
        if let Settings::Branch { cases, default } = &s.settings {
            out.extend(cases.iter().map(|c| c.next.clone()));
            out.extend(default.iter().cloned());
        }
        // Only a step that can fail or time out follows a recovery `goto`.
        let can_fail = s.kind.calls() || matches!(s.kind, Kind::HumanReview | Kind::UserInput);
        let recoveries = [s.recovery.as_ref(), self.defaults.recovery.as_ref()];
        for r in recoveries.into_iter().flatten().filter(|_| can_fail) {
            for f in [&r.on_error, &r.on_timeout].into_iter().flatten() {
                if let OnFailure::Goto(k) = f {
                    out.push(k.clone());
                }
            }
        }
        out
    }

    /// The recovery that applies to a state: its own, else the workflow's.
    pub fn recovery_of<'a>(&'a self, s: &'a State) -> Option<&'a Recovery> {
        s.recovery.as_ref().or(self.defaults.recovery.as_ref())
    }

    pub fn retry_of<'a>(&'a self, s: &'a State) -> Option<&'a RetryPolicy> {
        s.retry.as_ref().or(self.defaults.retry.as_ref())
    }

    pub fn timeout_of(&self, s: &State) -> Option<u64> {
        s.timeout_ms.or(self.defaults.timeout_ms)
    }

    /// Attempts a step visit may make: from `recovery.maxRetries`, else `retryPolicy.maxAttempts`,
    /// else 1; capped at [`MAX_ATTEMPTS`](super::limits::MAX_ATTEMPTS).
    pub fn max_attempts(&self, s: &State) -> u32 {
        let from_recovery = self
            .recovery_of(s)
            .and_then(|r| r.max_retries)
            .map(|n| n.saturating_add(1));
        let from_policy = self.retry_of(s).and_then(|p| p.max_attempts);
        from_recovery
            .or(from_policy)
            .unwrap_or(1)
            .clamp(1, super::limits::MAX_ATTEMPTS)
    }

    /// Backoff before attempt `attempt + 1` (attempts count from 1).
    pub fn backoff_ms(&self, s: &State, attempt: u32) -> u64 {
        let p = self.retry_of(s).cloned().unwrap_or_default();
        let mut d = p.backoff_ms;
        for _ in 1..attempt {
            d = d.saturating_mul(u64::from(p.multiplier.max(1)));
        }
        d.min(p.max_backoff_ms).min(super::limits::MAX_BACKOFF_MS)
    }
}
