// Compile-time checks only (`npm run typecheck`; never imported): host commands are typed by the
// generated `HostCommands` map, so a wrong command name or argument is a TypeScript error. Each
// `@ts-expect-error` fails the typecheck if the line ever compiles.

import { call } from "./api.js";

export function hostCommandTypeChecks(): void {
  // @ts-expect-error: no such command
  void call("list_app");
  // @ts-expect-error: a misspelled argument
  void call("mount_entry", { appId: "a", entrykey: "b" });
  // @ts-expect-error: a missing argument
  void call("mount_entry", { appId: "a" });
  // @ts-expect-error: a wrong argument type
  void call("set_enabled", { appId: "a", enabled: "no" });
  // @ts-expect-error: a command with required arguments called without them
  void call("app_detail");
  void call("list_apps").then((apps) => apps.map((a) => a.name satisfies string));
  void call("mount_entry", { appId: "a", entryKey: "b" }).then((m) => m.mountId satisfies string);
  void call("audit");
}
