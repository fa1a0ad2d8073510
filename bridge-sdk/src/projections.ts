// The platform projections (issue 19 §2): `lime.modelSettings`, `lime.capabilities`,
// `lime.workspace`. Read-only, non-sensitive host facts; the shapes are the generated per-method
// types (crates/host-core/src/hosting/capability/contract/{model_settings,capabilities,workspace}.rs).
import type { CallOptions, Invoke } from "./handles.js";
import type { CapabilitiesListResult, ModelSettingsGetResult, WorkspaceGetResult } from "./generated/capabilities.js";

export type ModelSettings = ModelSettingsGetResult;
export type CapabilityList = CapabilitiesListResult;
export type CapabilityStanding = CapabilitiesListResult["capabilities"][number];
export type WorkspaceInfo = WorkspaceGetResult;

export interface LimeModelSettings {
  /**
   * The effective model profile (provider kind and model name), the app's token limits, the
   * setup status and the setup action the user takes in the host. Never a key, a key's ref or
   * the endpoint; an app never changes global model settings.
   */
  get(opts?: CallOptions): Promise<ModelSettings>;
}

export interface LimeCapabilities {
  /**
   * Every capability the standard names, with each method's standing for the calling entry:
   * `available`, `ask` (the user is asked on the call) or `blocked`, and why (`undeclared`,
   * `not-available`, `not-ready`, `not-granted`, `denied`, `policy`, ...).
   */
  list(opts?: CallOptions): Promise<CapabilityList>;
}

export interface LimeWorkspace {
  /** The workspace's and tenant's ids, its display name, the locale and the IANA time zone. */
  get(opts?: CallOptions): Promise<WorkspaceInfo>;
}

export function buildProjections(invoke: Invoke) {
  return {
    modelSettings: { get: (o?: CallOptions) => invoke<ModelSettings>("lime.modelSettings", "get", {}, o) } as LimeModelSettings,
    capabilities: { list: (o?: CallOptions) => invoke<CapabilityList>("lime.capabilities", "list", {}, o) } as LimeCapabilities,
    workspace: { get: (o?: CallOptions) => invoke<WorkspaceInfo>("lime.workspace", "get", {}, o) } as LimeWorkspace,
  };
}
