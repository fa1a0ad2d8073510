// The shell's follow loops: on start, the app list and then the entry the window was opened for
// (a launch target, or the page path `/apps/<app>/<entry>`); then the `next_events` long poll
// (host-events.ts) for as long as the shell lives.

import { useEffect } from "preact/hooks";

import * as api from "../api.js";
import { tasksChanged } from "../tasks.js";
import { launchFromPath } from "../transport.js";
import type { LaunchTarget } from "../types.js";
import { STORE_CHANGED } from "../views/dev-banner.js";
import { recordDevDiagnostic } from "../views/dev-console.js";
import { afterFirstPaint } from "./after-paint.js";
import { runEventLoop, type HostEventHandlers } from "./host-events.js";
import { isMissingCommand } from "./shell-state.js";

export interface HostEventDeps {
  reload(): Promise<void>;
  refreshApprovals(): Promise<void>;
  /** Opens an entry in a tab and shows it. */
  open(appId: string, entryKey: string): Promise<void>;
  /** Opens the install review sheet for a package file. */
  reviewPath(path: string): void;
  progress(done: number, total: number): void;
  mountsEnded: HostEventHandlers["mountsEnded"];
  outgoing: HostEventHandlers["outgoing"];
  fail(error: unknown): void;
}

/** The start-up: approvals, the list, then the launch target's entry or the launch package's review. Every dependency is stable. */
export function useStartup(deps: HostEventDeps): void {
  useEffect(() => {
    // The approval badges show on running tabs: none are open before the first paint.
    afterFirstPaint(() => void deps.refreshApprovals());
    void (async () => {
      const fromPath = launchFromPath(location.pathname);
      // Asked beside the list, not after it: a deep-linked window's frame starts one round trip
      // earlier. Its answer is used once the list is in.
      const asked =
        fromPath === null
          ? api.launchTarget().then(
              (found) => ({ found }),
              (error: unknown) => ({ error }),
            )
          : null;
      await deps.reload();
      if (fromPath !== null) {
        // The deep link is consumed: the page lives at "/" from now on, so in-page links
        // ("#/grants", "#content"), which the deep-link page's <base href="/"> resolves against
        // "/", stay in this document instead of loading "/" afresh and dropping every frame.
        history.replaceState(history.state, "", `/${location.hash}`);
      }
      let target: LaunchTarget | null = fromPath;
      if (asked !== null) {
        const answer = await asked;
        if ("error" in answer) {
          if (!isMissingCommand(answer.error)) deps.fail(answer.error);
        } else {
          target = answer.found;
        }
      }
      if (target !== null) {
        await deps.open(target.appId, target.entryKey);
        return;
      }
      // A package file the window was started for (a file manager's "Open with", or
      // `apphost open <file>`): the review sheet, as if the file had been dropped.
      try {
        const pkg = await api.launchPackage();
        if (pkg !== null) deps.reviewPath(pkg.path);
      } catch (error: unknown) {
        if (!isMissingCommand(error)) deps.fail(error);
      }
    })();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);
}

/**
 * Host→UI pushes (docs/host-api.md), followed from the first paint (Rust queues what happens
 * before: nothing is lost) until the shell unmounts. Every dependency is stable.
 */
export function useHostEvents(deps: HostEventDeps): void {
  useEffect(() => {
    let stopped = false;
    const follow = (): void => void runEventLoop(
      {
        poll: api.events,
        stopped: () => stopped,
        sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
        failed: (error) => console.warn("next_events failed", error),
      },
      {
        progress: deps.progress,
        storeChanged: async () => {
          await deps.reload();
          // Views with their own store data (the dev banner) reload too, even when the app list
          // did not change (a dev app's held change is a settings row).
          window.dispatchEvent(new Event(STORE_CHANGED));
        },
        mountsEnded: deps.mountsEnded,
        outgoing: deps.outgoing,
        tasksChanged,
        approvalsChanged: () => void deps.refreshApprovals(),
        devDiagnostic: recordDevDiagnostic,
      },
    );
    afterFirstPaint(() => {
      if (!stopped) follow();
    });
    return () => {
      stopped = true;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);
}
