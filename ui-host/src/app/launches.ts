// lime.ui launches from the host: open an app's entry for a route (a `#/app/<app>/<entry>/<route>`
// deep link or a palette route), run a `command` entry (mount the app's UI entry, deliver the
// command) or open an artifact in a viewer of its type (`#/artifact/<app>/<id>/<type>`, the Tasks
// page). The entry is mounted through the normal path (`mount_entry`: readiness, disabled apps);
// Rust checks the launch against the mount's own app (`ui_launch`) and posts it to the frame.
// When two apps view a type the user chooses, and the choice is remembered per type. Pure parts
// are unit-tested (ui-host/test/launches.test.mjs).

import type { ArtifactViewer, UiLaunchPayload } from "../generated/host-api.js";
import type { Outgoing } from "../types.js";

/** What a launch needs from the shell (the page, or a test double). */
export interface LaunchDeps {
  /** Mounts (or shows) the entry in a tab; answers its mount id, or null when it failed. */
  open(appId: string, entryKey: string): Promise<string | null>;
  /** `ui_launch`. */
  launch(mountId: string, launch: UiLaunchPayload): Promise<Outgoing[]>;
  /** Carries out Rust's answer (the relay). */
  execute(outgoing: Outgoing[]): Promise<void>;
  /** `artifact_viewers`. */
  viewers(artifactType: string): Promise<ArtifactViewer[]>;
  /** Asks the user which viewer opens `artifactType` (null: cancelled). */
  choose(viewers: ArtifactViewer[], artifactType: string): Promise<ArtifactViewer | null>;
  /** The remembered viewer per type (`<app>/<entry>`). */
  remembered: { get(artifactType: string): string | null; set(artifactType: string, viewer: string): void };
  fail(error: unknown): void;
}

/** The storage key of a type's remembered viewer. */
export const VIEWER_CHOICE_PREFIX = "apphost.viewer.";

export const viewerKey = (v: { appId: string; entryKey: string }): string => `${v.appId}/${v.entryKey}`;

/** The viewer to use without asking (the only one, or the remembered one still there), "ask", or null (none). */
export function pickViewer(viewers: readonly ArtifactViewer[], remembered: string | null): ArtifactViewer | "ask" | null {
  if (viewers.length === 0) return null;
  const kept = remembered === null ? undefined : viewers.find((v) => viewerKey(v) === remembered);
  if (kept !== undefined) return kept;
  const [only] = viewers;
  return viewers.length === 1 && only !== undefined ? only : "ask";
}

/** Opens `entryKey` of `appId` and delivers `launch` to its frame. Failures go to `deps.fail`. */
export async function launchInto(deps: LaunchDeps, appId: string, entryKey: string, launch: UiLaunchPayload): Promise<boolean> {
  try {
    const mountId = await deps.open(appId, entryKey);
    if (mountId === null) return false;
    await deps.execute(await deps.launch(mountId, launch));
    return true;
  } catch (error: unknown) {
    deps.fail(error);
    return false;
  }
}

/** Opens an artifact of `ownerAppId` in a viewer of its type (asking when several apps view it). */
export async function openArtifact(deps: LaunchDeps, ownerAppId: string, artifactId: string, artifactType: string): Promise<boolean> {
  let viewers: ArtifactViewer[];
  try {
    viewers = await deps.viewers(artifactType);
  } catch (error: unknown) {
    deps.fail(error);
    return false;
  }
  let viewer = pickViewer(viewers, deps.remembered.get(artifactType));
  if (viewer === null) {
    deps.fail({ code: "ui.no_viewer", message: `No installed app views ${artifactType} artifacts.` });
    return false;
  }
  if (viewer === "ask") {
    viewer = await deps.choose(viewers, artifactType);
    if (viewer === null) return false;
    deps.remembered.set(artifactType, viewerKey(viewer));
  }
  return launchInto(deps, viewer.appId, viewer.entryKey, { kind: "artifact", artifactId, artifactType, ownerAppId });
}
