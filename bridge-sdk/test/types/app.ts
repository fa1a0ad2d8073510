// Compile-time contract of the public API, as an app author (strict, exactOptionalPropertyTypes)
// sees it through the package's `types`. `npm test` typechecks this file; every
// `@ts-expect-error` line must fail to compile, so loosening a type breaks the test.
import {
  createMockLimeRuntime,
  getLimeRuntime,
  ErrorCodes,
  LimeCapabilityError,
  type AppMessage,
  type ArtifactMetadata,
  type ErrorCode,
  type EvidencePack,
  type HostMessagePayloads,
  type HostSnapshot,
  type LimeRuntime,
  type PermissionResult,
} from "@apphost/bridge-sdk";

export async function app(lime: LimeRuntime): Promise<void> {
  const snap: HostSnapshot = await lime.ready();
  const mode: string = snap.theme.effectiveThemeMode;
  const blockedCode: ErrorCode = snap.capabilities.blocked[0]!.code;
  void [mode, blockedCode];

  const n: { text: string } | null = await lime.storage.get<{ text: string }>("note:1");
  void n;
  const page = await lime.storage.list<number>({ prefix: "n:", limit: 10 });
  const first: number | undefined = page.items[0]?.value;
  void first;
  const perm: PermissionResult = await lime.policy.requestPermission({ permission: "network" });
  const p: "once" | "always" | "denied" = perm.persistence;
  void p;
  const off: () => Promise<void> = await lime.events.subscribe("saved", (e) => void e.topic.toUpperCase());
  await off();
  const locale = await lime.ui.getLocale();
  void locale.timezone;

  try {
    const meta: ArtifactMetadata = await lime.artifacts.create({ name: "r.txt", text: "hi" }, { timeoutMs: 1000, signal: new AbortController().signal });
    const read = await lime.artifacts.read({ id: meta.id, encoding: "text" });
    const body: string = read.content;
    const sha: string = read.sha256;
    const version: string = read.provenance.appVersion;
    void [body, sha, version];
    await lime.artifacts.create({ name: "b.bin", base64: "AAEC", mimeType: "application/octet-stream" });
    const page = await lime.artifacts.list({ limit: 10 });
    const next: string | null = page.nextCursor;
    const firstName: string | undefined = page.items[0]?.name;
    const { deleted }: { deleted: boolean } = await lime.artifacts.delete({ id: meta.id });
    void [next, firstName, deleted];
  } catch (e) {
    if (e instanceof LimeCapabilityError && e.code === ErrorCodes.STORAGE_QUOTA_EXCEEDED) void e.retryable;
    if (e instanceof LimeCapabilityError && e.code === ErrorCodes.NOT_FOUND) void e.causeCode;
  }
  const rec = await lime.evidence.record({ kind: "eval.result", summary: "3/3", data: { passed: 3 }, artifactIds: [] });
  const recId: string = rec.id;
  const refSha: string | undefined = rec.artifacts[0]?.sha256;
  const pack: EvidencePack = await lime.evidence.export({ kind: "eval.result" });
  const schemaVersion: "apphost.evidence-pack.v1" = pack.schemaVersion;
  const packed = pack.artifacts[0];
  if (packed?.present) void packed.mimeType.length;
  void [recId, refSha, schemaVersion];
  const secret = await lime.secrets.getRef({ key: "apiKey" });
  const secretRef: string = secret.ref;
  const published: number = (await lime.events.publish("saved", { id: 1 })).delivered;
  const offSource = await lime.events.subscribe("saved", (e) => void e.sourceEntryKey.toUpperCase());
  await offSource();
  void [secretRef, published];
  const notes = lime.storage.table<{ id: number; title: string }>("notes");
  const { rows } = await notes.query({ where: { title: "a" }, orderBy: "title", descending: true, limit: 5, offset: 0 });
  const title: string | undefined = rows[0]?.title;
  const inserted = await notes.insert({ row: { title: "b" } });
  const row = await notes.get({ id: inserted.id });
  const updated: boolean = (await notes.update({ id: inserted.id, patch: { title: "c" } })).updated;
  void [title, row?.title, updated];

  // @ts-expect-error toast levels are the generated union
  lime.ui.toast("x", "loud");
  // @ts-expect-error a route is a string
  await lime.ui.navigate(42);
  // @ts-expect-error getRef needs the slot key
  await lime.secrets.getRef({});
  // @ts-expect-error artifact content is text or base64, not bytes
  await lime.artifacts.create({ name: "x", text: new Uint8Array(1) });
  // @ts-expect-error text and base64 are exclusive
  await lime.artifacts.create({ name: "x", text: "a", base64: "YQ==" });
  // @ts-expect-error one of text or base64 is required
  await lime.artifacts.create({ name: "x" });
  // @ts-expect-error artifact arguments are closed: the host refuses unknown fields
  await lime.artifacts.create({ name: "x", text: "a", encoding: "text" });
  // @ts-expect-error artifacts are addressed by `id`
  await lime.artifacts.read({ artifactId: "artifact_1" });
  // @ts-expect-error tableQuery answers {rows}, not an array
  const notRows: unknown[] = await notes.query();
  void notRows;
  // The standard's call shapes (§7.4) type-check as written.
  await lime.storage.set({ key: "draft", value: { title: "x" } });
  const draft: { title: string } | null = await lime.storage.get<{ title: string }>({ key: "draft" });
  void draft;
  await lime.storage.delete({ key: "draft" });
  await notes.get("note-1");
  await lime.artifacts.create({ kind: "report", title: "Weekly", content: "# Week" });
  await lime.artifacts.create({ type: "triage", data: { items: [1] } });
  await lime.evidence.record({ kind: "model.call", message: "asked", refs: ["doc-1"] });
  await lime.evidence.record({ subject: "claim", sources: [] });
  await lime.agent.startTask({
    entryKey: "main", taskKind: "triage", input: {}, idempotencyKey: "k",
    expectedOutput: { outputFormat: { type: "json_schema", schemaRef: "schemas/out.json" } }, context: { c: 1 },
  });
  // @ts-expect-error set({key, value}) takes no separate value
  await lime.storage.set({ key: "draft", value: 1 }, 2);
  // @ts-expect-error the standard's kind form needs its content
  await lime.artifacts.create({ kind: "report", title: "Weekly" });
  const resumed = await lime.agent.startTask({ input: "x", sessionPolicy: { mode: "resume", businessObjectRef: "doc-1" } });
  await lime.agent.startTask({ input: "y", sessionPolicy: { mode: "resume", taskId: resumed.taskId } });
  await lime.agent.startTask({ input: "z", sessionPolicy: "new" });
  // @ts-expect-error resume names a taskId or a businessObjectRef
  await lime.agent.startTask({ input: "x", sessionPolicy: { mode: "resume" } });
  // @ts-expect-error not both
  await lime.agent.startTask({ input: "x", sessionPolicy: { mode: "resume", taskId: "t", businessObjectRef: "r" } });
  // @ts-expect-error fork is not a sessionPolicy the host accepts
  await lime.agent.startTask({ input: "x", sessionPolicy: { mode: "fork" } });
  // @ts-expect-error error codes are the generated union
  const bad: ErrorCode = "APP_E123";
  void bad;
}

// Wire messages are typed per type.
export const ok: AppMessage = {
  protocol: "lime.agentApp.bridge", version: 1, type: "host:navigate", appId: "a", entryKey: "e", payload: { route: "/x" },
};
export const wrongPayload: AppMessage = {
  protocol: "lime.agentApp.bridge", version: 1, type: "host:navigate", appId: "a", entryKey: "e",
  // @ts-expect-error host:navigate carries {route}
  payload: { url: "/x" },
};
// @ts-expect-error only version 1 exists
export const wrongVersion: AppMessage = { protocol: "lime.agentApp.bridge", version: 2, type: "app:ready", appId: "a", entryKey: "e" };
export const retryable: HostMessagePayloads["host:error"]["retryable"] = true;

export const mock: LimeRuntime = createMockLimeRuntime({
  appId: "a",
  secrets: { k: true },
  permissions: { sync: "dismissed", files: "required", network: "granted" },
  tables: { notes: { primaryKey: "id", columns: ["id", "title"] } },
});
export const real: () => LimeRuntime = () => getLimeRuntime();
