// What every view gets from the shell (app.tsx): the app list and the actions that change it.

import { createContext } from "preact";

import type { Route } from "./router.js";
import type { AppSummary } from "./types.js";

export interface Host {
  apps: AppSummary[] | null;
  /** Reloads the app list. */
  reload(): Promise<void>;
  navigate(route: Route): void;
  /** Mounts an entry in a tab (or the side pane) and shows it. */
  openEntry(appId: string, entryKey: string): Promise<void>;
  /** Starts the install review of a file (or a path); `appId` set for an update from the detail page. */
  reviewFile(file: File): void;
  reviewPath(path: string): void;
  /** Starts the review of a catalog release (Browse page); `quietUpdate`: an update that asks
   * for nothing new installs without the sheet. */
  reviewCatalog(args: import("./api.js").CatalogReviewArgs, quietUpdate: boolean): void;
  /** Shows a failure in the banner. */
  fail(error: unknown): void;
  /** Opens an artifact in a viewer of its type (lime.ui artifact viewers). */
  openArtifact(ownerAppId: string, artifactId: string, artifactType: string): void;
}

export const HostContext = createContext<Host>({
  apps: null,
  reload: async () => undefined,
  navigate: () => undefined,
  openEntry: async () => undefined,
  reviewFile: () => undefined,
  reviewPath: () => undefined,
  reviewCatalog: () => undefined,
  fail: () => undefined,
  openArtifact: () => undefined,
});
