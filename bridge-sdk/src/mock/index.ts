// An in-memory `lime` runtime for app authors' unit tests. It follows the host's services
// (crates/host-core/src/capability/services/*.rs, runtime-core's app_artifacts.rs and
// app_evidence.rs, docs/bridge-protocol.md §5–6): the same methods, argument checks, result
// shapes, error codes and causeCodes, so a test that passes here exercises what the host answers.
// One module per capability (storage, artifacts, evidence, secrets, events, policy, agent,
// workflow, files, ui);
// this one wires them to one `invoke` and the typed handles. The conformance app's capability
// rows (fixtures/apps/conformance-app/ui/capability-checks.js) run against it in
// test/conformance.test.mjs, so it cannot drift from the host.

import { buildHandles, type Provenance, type RuntimeCorrelation } from "../handles.js";
import { createAgent } from "./agent.js";
import { createArtifacts } from "./artifacts.js";
import { randomHex, type MockContext, type Refusal, type Service } from "./common.js";
import { createEvents } from "./events.js";
import { createEvidence } from "./evidence.js";
import { createFiles } from "./files.js";
import { createInvoke, createWait } from "./invoke.js";
import { createPolicy } from "./policy.js";
import { createProjections } from "./projections.js";
import { createKnowledge } from "./knowledge.js";
import { createServices } from "./services.js";
import { createSecrets } from "./secrets.js";
import { createStorage } from "./storage.js";
import { createTools } from "./tools.js";
import { MOCK_CAPABILITIES, type MockCall, type MockLimeRuntime, type MockOptions } from "./types.js";
import { createUi } from "./ui.js";
import { createWorkflow } from "./workflow.js";

export { createMockEventBus, type MockBusMember, type MockEventBus } from "./bus.js";
export { sha256Hex } from "./encoding.js";
export type { MockFileGrant } from "./files.js";
export {
  MOCK_CAPABILITIES,
  type MockAgent,
  type MockArtifact,
  type MockCall,
  type MockLimeRuntime,
  type MockOptions,
  type MockPermission,
  type MockTable,
  type MockTaskStep,
  type MockTool,
  type MockWorkflow,
  type MockWorkflowState,
  type MockWorkflowUser,
} from "./types.js";

/**
 * An in-memory `lime` runtime with the same surface, types and errors as the real host, for app
 * authors' unit tests. No network, no frame, no host.
 */
export function createMockLimeRuntime(options: MockOptions = {}): MockLimeRuntime {
  const appId = options.appId ?? "mock-app";
  const entryKey = options.entryKey ?? "home";
  const appVersion = options.appVersion ?? "1.0.0";
  const packageHash = options.packageHash ?? `sha256:${"0".repeat(64)}`;
  const manifestHash = options.manifestHash ?? `sha256:${"0".repeat(64)}`;
  const offered = new Set(options.capabilities ?? MOCK_CAPABILITIES);
  const denied = new Set(options.denied ?? []);
  let traceId = "";
  // Bound once the handles exist: task and app events go to their listeners.
  let deliver: (payload: unknown) => void = () => undefined;
  const ctx: MockContext = {
    options,
    appId,
    entryKey,
    appVersion,
    packageHash,
    manifestHash,
    offered,
    denied,
    now: () => (options.now ? options.now() : new Date()).toISOString(),
    provenance: (): Provenance => ({ appId, appVersion, entryKey, packageHash, manifestHash, traceId }),
    artifactsReadable: () => offered.has("lime.artifacts") && !denied.has("lime.artifacts.read"),
    deliver: (payload) => deliver(payload),
    filePickRequests: [],
  };

  const storage = createStorage(ctx);
  const artifacts = createArtifacts(ctx);
  // The pack's runtimeCorrelation reads the agent's tasks (made below).
  let correlate: (taskId: string) => RuntimeCorrelation | undefined = () => undefined;
  const evidence = createEvidence(ctx, artifacts.artifactStore, (id) => correlate(id));
  const secrets = createSecrets(ctx);
  const knowledge = createKnowledge(ctx);
  const events = createEvents(ctx);
  const policy = createPolicy(ctx);
  const files = createFiles(ctx);
  const agent = createAgent(ctx, files.attach);
  correlate = agent.correlation;
  const tools = createTools(ctx);
  const workflow = createWorkflow(ctx);
  const appServices = createServices(ctx);
  const wait = createWait(ctx);
  // The projections list every service's methods: bound once `services` exists.
  let allServices: Record<string, Service> = {};
  const projections = createProjections(ctx, () => allServices);
  const ui = createUi(ctx, artifacts.artifactStore, wait, projections.modelStatus);

  const services: Record<string, Service> = {
    "lime.ui": ui.service,
    "lime.storage": storage.service,
    "lime.artifacts": artifacts.service,
    "lime.evidence": evidence.service,
    "lime.secrets": secrets.service,
    "lime.knowledge": knowledge.service,
    "lime.events": events.service,
    "lime.agent": agent.service,
    "lime.policy": policy.service,
    "lime.files": files.service,
    "lime.tools": tools.service,
    "lime.workflow": workflow.service,
    "lime.modelSettings": projections.modelService,
    "lime.capabilities": projections.capabilitiesService,
    "lime.workspace": projections.workspaceService,
    "lime.services": appServices.service,
  };
  allServices = services;
  const notAnObject: Record<string, Refusal> = {
    "lime.storage": storage.notAnObject,
    "lime.artifacts": artifacts.notAnObject,
    "lime.evidence": evidence.notAnObject,
    "lime.secrets": secrets.notAnObject,
    "lime.knowledge": knowledge.notAnObject,
    "lime.events": events.notAnObject,
    "lime.policy": policy.notAnObject,
    "lime.agent": agent.notAnObject,
    "lime.files": files.notAnObject,
    "lime.tools": tools.notAnObject,
    "lime.workflow": workflow.notAnObject,
    ...projections.notAnObject,
    "lime.services": appServices.notAnObject,
  };
  const calls: MockCall[] = [];
  const invoke = createInvoke(
    {
      ctx,
      services,
      notAnObject,
      calls,
      newTrace: () => {
        traceId = `trace_${randomHex()}`;
      },
    },
    wait,
  );
  const handles = buildHandles(invoke, ui.messages);
  deliver = (payload) => void handles.hub.deliver(payload);

  const rt: MockLimeRuntime = {
    appId,
    entryKey,
    calls,
    store: storage.store,
    tables: storage.tables,
    artifactStore: artifacts.artifactStore,
    evidenceRecords: evidence.evidenceRecords,
    permissionPrompts: policy.permissionPrompts,
    toolPrompts: tools.toolPrompts,
    toasts: ui.toasts,
    navigations: ui.navigations,
    downloads: ui.downloads,
    ready: async () => ui.snapshot(),
    snapshot: () => ui.snapshot(),
    onSnapshot: ui.onSnapshot,
    onVisibility: () => () => undefined,
    invoke,
    ui: handles.ui,
    storage: handles.storage,
    artifacts: handles.artifacts,
    evidence: handles.evidence,
    secrets: handles.secrets,
    knowledge: handles.knowledge,
    events: handles.events,
    policy: handles.policy,
    agent: handles.agent,
    files: handles.files,
    grantFile: files.grantFile,
    revokeFile: files.revokeFile,
    filePickRequests: ctx.filePickRequests,
    tools: handles.tools,
    workflow: handles.workflow,
    modelSettings: handles.modelSettings,
    capabilities: handles.capabilities,
    workspace: handles.workspace,
    services: handles.services,
    answerReview: workflow.answerReview,
    setSecretBound: secrets.setBound,
    setKnowledgeBound: knowledge.setBound,
    setTheme: ui.setTheme,
    routes: ui.routes,
    launch: (l) => void handles.launches.deliver(l),
    close: () => {
      ui.close();
      handles.hub.clear();
      handles.launches.clear();
      events.close();
    },
  };
  return rt;
}
