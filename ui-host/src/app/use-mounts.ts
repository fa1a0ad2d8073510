// The mount controller in the shell: made once (tabs restored from localStorage), its snapshots
// rendered, tabs saved on each change, restored tabs of removed apps dropped, and the frames'
// visibility kept in step with the active tab and the page (`set_visibility`; a sleeping tab
// mounts when it is shown).

import { useEffect, useState } from "preact/hooks";

import * as api from "../api.js";
import { parseRoute, type Route } from "../router.js";
import { isPanel, restoreTabs, saveTabs, TABS_STORAGE_KEY } from "../tabs.js";
import type { AppSummary } from "../types.js";
import { MountController, type MountDeps, type MountSnapshot } from "./mount-controller.js";
import type { RelayHandle } from "./use-relay.js";
import { isMissingCommand } from "./shell-state.js";
import { storage } from "./storage.js";

export type MountShellDeps = Omit<MountDeps, "mountEntry" | "unmount" | "attach" | "drop" | "currentPage">;

export function useMounts(
  relay: RelayHandle,
  deps: MountShellDeps,
  route: Route,
  apps: readonly AppSummary[] | null,
): { controller: MountController; snapshot: MountSnapshot } {
  const [controller] = useState(
    () =>
      new MountController(
        {
          ...deps,
          mountEntry: api.mountEntry,
          unmount: api.unmount,
          attach: (mount, title, kind) => {
            const container = isPanel(kind) ? document.getElementById("surface-panels") ?? undefined : undefined;
            relay.relay().attach(mount, title, container);
          },
          drop: (mountIds) => relay.current()?.drop(mountIds),
          currentPage: () => parseRoute(location.hash).page,
        },
        restoreTabs(storage()?.getItem(TABS_STORAGE_KEY) ?? null),
      ),
  );
  const [snapshot, setSnapshot] = useState(() => controller.snapshot());
  useEffect(() => {
    const unsubscribe = controller.subscribe(setSnapshot);
    setSnapshot(controller.snapshot());
    return unsubscribe;
  }, [controller]);

  // Restored tabs whose app is gone (uninstalled, or another data directory) are dropped.
  useEffect(() => {
    if (apps !== null) controller.keepInstalled(new Set(apps.map((a) => a.name)));
  }, [apps, controller]);

  // Tabs survive a restart.
  useEffect(() => {
    storage()?.setItem(TABS_STORAGE_KEY, saveTabs(snapshot.tabs));
  }, [snapshot.tabs]);

  // Only the active tab's frame is shown; the others keep running, hidden. Rust is told each
  // change (`set_visibility`), and tells the frame (`host:visibility`).
  useEffect(() => {
    const { tabs, mounts } = snapshot;
    const activeMount = tabs.active === null ? undefined : mounts[tabs.active]?.mountId;
    for (const frame of document.querySelectorAll<HTMLIFrameElement>("#surface-frames iframe")) {
      frame.hidden = frame.dataset.mountId !== activeMount;
      const visible = !frame.hidden && route.page === "running";
      const mountId = frame.dataset.mountId;
      // A new mount starts visible on the Rust side.
      if (mountId !== undefined && (frame.dataset.visible ?? "true") !== String(visible)) {
        frame.dataset.visible = String(visible);
        api
          .setVisibility(mountId, visible)
          .then((outgoing) => relay.current()?.execute(outgoing))
          .catch((error: unknown) => {
            if (!isMissingCommand(error)) console.warn("set_visibility failed", error);
          });
      }
    }
    // A restored (sleeping) tab mounts when it is shown.
    const sleeping = controller.sleepingTabToWake(route.page, apps !== null);
    if (sleeping !== null) {
      void controller.mount(sleeping.appId, sleeping.entryKey, false);
    }
    // `relay` is stable.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [snapshot, route, apps, controller]);

  return { controller, snapshot };
}
