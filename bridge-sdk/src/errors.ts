import type { ErrorCode, ErrorPayload } from "./protocol.js";

/** Error codes the host or this SDK can produce (docs/bridge-protocol.md §6), by name. */
export const ErrorCodes = {
  CAPABILITY_NOT_AVAILABLE: "APP_E001",
  PERMISSION_DENIED: "APP_E002",
  KNOWLEDGE_NOT_BOUND: "APP_E003",
  SECRET_NOT_BOUND: "APP_E011",
  MODEL_NOT_CONFIGURED: "APP_E012",
  STORAGE_QUOTA_EXCEEDED: "APP_E201",
  STORAGE_MIGRATION_REQUIRED: "APP_E202",
  STORAGE_SCHEMA_MISMATCH: "APP_E203",
  WORKFLOW_INVALID_STATE: "APP_E301",
  INVALID_ARGUMENT: "APP_E900",
  NOT_FOUND: "APP_E904",
  UNKNOWN_ERROR: "APP_E999",
  RATE_LIMITED: "HOST_E_RATE_LIMITED",
  DUPLICATE_REQUEST: "HOST_E_DUPLICATE_REQUEST",
  TIMEOUT: "HOST_E_TIMEOUT",
  CANCELLED: "HOST_E_CANCELLED",
} as const satisfies Record<string, ErrorCode>;

/** What a `LimeCapabilityError` is built from: a `host:error` payload, or the SDK's own. */
export type LimeCapabilityErrorInit = Omit<ErrorPayload, "retryable" | "causeCode"> & {
  retryable?: boolean;
  causeCode?: string | undefined;
};

/** A failed capability call: the host's `host:error`, or a timeout / cancellation. */
export class LimeCapabilityError extends Error {
  readonly code: ErrorCode;
  readonly causeCode: string | undefined;
  readonly capability: string;
  readonly method: string;
  readonly retryable: boolean;
  /** Structured facts about the refusal when the code has them (`{binding}` for
   * `agent.binding_unsupported`); `undefined` otherwise. */
  readonly details: unknown;

  constructor(p: LimeCapabilityErrorInit) {
    super(p.message);
    this.name = "LimeCapabilityError";
    this.code = p.code;
    this.causeCode = p.causeCode;
    this.capability = p.capability;
    this.method = p.method;
    this.retryable = p.retryable ?? false;
    this.details = p.details;
  }
}
