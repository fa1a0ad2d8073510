// Compile-time contract of the public API, as an app author (strict, exactOptionalPropertyTypes)
// sees it through the package's `types`. `npm test` typechecks this file; every
// `@ts-expect-error` line must fail to compile, so loosening a type breaks the test.
import {
  createMockLimeRuntime,
  getLimeRuntime,
  ErrorCodes,
  LimeCapabilityError,
  type AppMessage,
  type ErrorCode,
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
    await lime.artifacts.create({ name: "r.txt", content: "hi" }, { timeoutMs: 1000, signal: new AbortController().signal });
  } catch (e) {
    if (e instanceof LimeCapabilityError && e.code === ErrorCodes.STORAGE_QUOTA_EXCEEDED) void e.retryable;
  }

  // @ts-expect-error toast levels are the generated union
  lime.ui.toast("x", "loud");
  // @ts-expect-error a route is a string
  await lime.ui.navigate(42);
  // @ts-expect-error getRef needs the slot key
  await lime.secrets.getRef({});
  // @ts-expect-error artifact content is text or base64, not bytes
  await lime.artifacts.create({ content: new Uint8Array(1) });
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

export const mock: LimeRuntime = createMockLimeRuntime({ appId: "a", secrets: { k: true } });
export const real: () => LimeRuntime = () => getLimeRuntime();
