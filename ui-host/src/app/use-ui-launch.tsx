// lime.ui in the shell: the command palette (Ctrl/Cmd+K, or the header's button), deep links
// (`#/app/<app>/<entry>/<route>`, `#/artifact/<app>/<id>/<type>`) and opening artifacts in
// their viewers (`app/launches.ts`). Every action goes through the normal mount path.

import type { JSX } from "preact";
import { useCallback, useEffect, useMemo, useState } from "preact/hooks";

import * as api from "../api.js";
import { dialog } from "../bridge-relay.js";
import type { ArtifactViewer, PaletteCommand, RegisteredRoute } from "../generated/host-api.js";
import type { Route } from "../router.js";
import { tabKey } from "../tabs.js";
import type { AppSummary } from "../types.js";
import { CommandPalette } from "../views/command-palette.js";
import { launchInto, openArtifact, VIEWER_CHOICE_PREFIX, type LaunchDeps } from "./launches.js";
import type { MountController } from "./mount-controller.js";
import { paletteItems, type PaletteItem } from "./palette.js";
import { storage } from "./storage.js";
import type { RelayHandle } from "./use-relay.js";

async function chooseViewer(viewers: ArtifactViewer[], artifactType: string): Promise<ArtifactViewer | null> {
  const p = document.createElement("p");
  p.textContent = `Several apps can open ${artifactType} artifacts. Your choice is remembered.`;
  const buttons = viewers.map((v, i) => ({ value: String(i), label: `${v.appTitle} · ${v.title}`, id: `viewer-choice-${i}`, primary: i === 0 }));
  const chosen = await dialog("viewer-choice", `Open with`, [p], [...buttons, { value: "cancel", label: "Cancel", id: "viewer-choice-cancel" }], "cancel");
  return chosen === "cancel" ? null : viewers[Number(chosen)] ?? null;
}

export interface UiLaunchDeps {
  route: Route;
  navigate(route: Route): void;
  controller: MountController;
  relay: RelayHandle;
  apps: AppSummary[] | null;
  fail(error: unknown): void;
}

/** The palette element (or null) and the shell's way to open an artifact. */
export function useUiLaunch(d: UiLaunchDeps): { palette: JSX.Element | null; openPalette(): void; openArtifact(owner: string, id: string, type: string): void } {
  const deps = useMemo<LaunchDeps>(
    () => ({
      open: async (appId, entryKey) => {
        await d.controller.mount(appId, entryKey, true);
        return d.controller.snapshot().mounts[tabKey({ appId, entryKey })]?.mountId ?? null;
      },
      launch: (mountId, launch) => api.call("ui_launch", { mountId, launch }),
      execute: async (outgoing) => {
        await d.relay.current()?.execute(outgoing);
      },
      viewers: (artifactType) => api.call("artifact_viewers", { artifactType }),
      choose: chooseViewer,
      remembered: {
        get: (t) => storage()?.getItem(`${VIEWER_CHOICE_PREFIX}${t}`) ?? null,
        set: (t, v) => storage()?.setItem(`${VIEWER_CHOICE_PREFIX}${t}`, v),
      },
      fail: d.fail,
    }),
    // The controller, relay handle and fail are stable for the shell's life.
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [],
  );

  // Deep links: act once per hash, then leave the launch page (a failed mount goes back to Apps).
  const { route, navigate } = d;
  useEffect(() => {
    if (route.page === "launch") {
      void launchInto(deps, route.appId, route.entryKey, { kind: "route", route: route.route }).then((ok) => {
        if (!ok) navigate({ page: "apps" });
      });
    } else if (route.page === "artifact") {
      void openArtifact(deps, route.appId, route.artifactId, route.artifactType).then((ok) => {
        if (!ok) navigate({ page: "apps" });
      });
    }
  }, [route, deps, navigate]);

  const [open, setOpen] = useState(false);
  const [data, setData] = useState<{ commands: PaletteCommand[]; routes: RegisteredRoute[] } | null>(null);
  const openPalette = useCallback(() => {
    setOpen(true);
    setData(null);
    api
      .call("ui_palette")
      .then(setData)
      .catch((error: unknown) => {
        setData({ commands: [], routes: [] });
        d.fail(error);
      });
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);
  useEffect(() => {
    const onKey = (e: KeyboardEvent): void => {
      if ((e.ctrlKey || e.metaKey) && !e.altKey && e.key.toLowerCase() === "k") {
        e.preventDefault();
        openPalette();
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [openPalette]);

  const choose = (item: PaletteItem): void => {
    setOpen(false);
    const a = item.action;
    switch (a.kind) {
      case "page":
        navigate({ page: a.page } as Route);
        return;
      case "entry":
        void d.controller.mount(a.appId, a.entryKey, true);
        return;
      case "command":
        void launchInto(deps, a.appId, a.surfaceEntry, a.command === null ? { kind: "command", entryKey: a.entryKey } : { kind: "command", entryKey: a.entryKey, command: a.command });
        return;
      case "route":
        void launchInto(deps, a.appId, a.entryKey, { kind: "route", route: a.path });
        return;
    }
  };

  const items = useMemo(() => paletteItems(d.apps, data), [d.apps, data]);
  return {
    palette: open ? <CommandPalette items={items} loading={data === null} onChoose={choose} onClose={() => setOpen(false)} /> : null,
    openPalette,
    openArtifact: (owner, id, type) => void openArtifact(deps, owner, id, type),
  };
}
