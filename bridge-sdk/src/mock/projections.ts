// lime.modelSettings, lime.capabilities and lime.workspace in memory, as the host answers them
// (crates/host-core/src/hosting/capability/projections.rs): no arguments (anything else is
// `APP_E900` with the capability's own cause), the model's status and the app's token limit from
// the options, each capability's standing from what the mock host offers and denies.
import type { CapabilityList, ModelSettings, WorkspaceInfo } from "../projections.js";
import { invalid, type MockContext, type Refusal, type Service } from "./common.js";
import { MOCK_CAPABILITIES } from "./types.js";

type Reason = CapabilityList["capabilities"][number]["reason"];

/** Every namespace the standard names (the host profile's list). */
export const STANDARD_CAPABILITIES = [
  "lime.ui", "lime.storage", "lime.files", "lime.agent", "lime.knowledge", "lime.tools", "lime.artifacts",
  "lime.workflow", "lime.policy", "lime.evidence", "lime.secrets", "lime.cloudSession", "lime.modelSettings",
  "lime.branding", "lime.billing", "lime.appUpdates", "lime.events", "lime.connectors", "lime.workspace",
  "lime.capabilities",
];

/** The largest per-task budget the host accepts (`foundation/budget_keys.rs`). */
export const MAX_TOKEN_BUDGET = 1_000_000_000_000;

const noArgs = (cause: string) => (a: Record<string, unknown>) => {
  if (Object.keys(a).length > 0) throw invalid("this method takes no arguments", cause);
};

export function createProjections(ctx: MockContext, services: () => Record<string, Service>) {
  const { options, offered, denied } = ctx;
  const checkModel = noArgs("modelSettings.invalid_argument");
  const checkCaps = noArgs("capabilities.invalid_argument");
  const checkWs = noArgs("workspace.invalid_argument");
  const modelSettings = (): ModelSettings => {
    const model = options.model ?? null;
    return {
      status: model ? "ready" : "needs-setup",
      profile: model ? { provider: "openai-compatible", model: model.model, apiKeyConfigured: model.apiKeyConfigured ?? false } : null,
      limits: { maxTokensPerTask: options.tokenBudget ?? null, maxTokensPerTaskCeiling: MAX_TOKEN_BUDGET },
      setupAction: model
        ? null
        : { key: "model", title: "Set up a model", kind: "model", description: "The user sets the model in the host's settings; an app never does." },
    };
  };
  const capabilityList = (): CapabilityList => {
    const all = services();
    const rows = STANDARD_CAPABILITIES.map((capability) => {
      const implemented = MOCK_CAPABILITIES.includes(capability) || capability in all;
      const methods = Object.keys(all[capability] ?? {}).map((method) => {
        const blocked: Reason = !offered.has(capability) ? (implemented ? "undeclared" : "not-available") : denied.has(`${capability}.${method}`) ? "denied" : null;
        return {
          method,
          status: blocked ? ("blocked" as const) : ("available" as const),
          reason: blocked,
          causeCode: blocked === "undeclared" ? "capability.not_declared" : blocked === "denied" ? "permission.denied" : null,
        };
      });
      const open = offered.has(capability) && methods.some((m) => m.status === "available");
      const reason = open ? null : !implemented ? "not-available" : !offered.has(capability) ? "undeclared" : "denied";
      return {
        capability,
        status: open ? ("available" as const) : ("blocked" as const),
        reason: reason as Reason,
        causeCode: reason === null ? null : reason === "not-available" ? "capability.not_available" : reason === "undeclared" ? "capability.not_declared" : "permission.denied",
        code: reason === null ? null : reason === "not-available" ? "APP_E001" : "APP_E002",
        methods,
      };
    });
    return { appId: ctx.appId, entryKey: ctx.entryKey, available: rows.filter((r) => r.status === "available").map((r) => r.capability), capabilities: rows };
  };
  const workspace = (): WorkspaceInfo => ({
    workspaceId: "local",
    tenantId: "local",
    displayName: "Local workspace",
    locale: "en-US",
    timezone: "UTC",
    ...options.workspace,
  });
  const modelService: Service = {
    get: (a) => {
      checkModel(a);
      return modelSettings();
    },
  };
  const capabilitiesService: Service = {
    list: (a) => {
      checkCaps(a);
      return capabilityList();
    },
  };
  const workspaceService: Service = {
    get: (a) => {
      checkWs(a);
      return workspace();
    },
  };
  const notAnObject: Record<string, Refusal> = {
    "lime.modelSettings": invalid("this method takes no arguments", "modelSettings.invalid_argument"),
    "lime.capabilities": invalid("this method takes no arguments", "capabilities.invalid_argument"),
    "lime.workspace": invalid("this method takes no arguments", "workspace.invalid_argument"),
  };
  return { modelService, capabilitiesService, workspaceService, notAnObject, modelStatus: () => modelSettings().status, workspace };
}
