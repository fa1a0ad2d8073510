// Theme: the user's choice (kept in localStorage), the system's preference, the page, and Rust
// (which sends `theme:update` to ready frames; its answer's bridge actions are executed).

import { useEffect, useLayoutEffect, useState } from "preact/hooks";

import * as api from "../api.js";
import type { BridgeRelay } from "../bridge-relay.js";
import { applyTheme, effectiveTheme, parseThemeChoice, THEME_STORAGE_KEY, type ThemeChoice } from "../theme.js";
import { isMissingCommand } from "./shell-state.js";
import { storage } from "./storage.js";

export function useTheme(relay: () => BridgeRelay | null): { theme: ThemeChoice; setTheme(t: ThemeChoice): void } {
  const [theme, setTheme] = useState<ThemeChoice>(() => parseThemeChoice(storage()?.getItem(THEME_STORAGE_KEY) ?? null));
  const [systemDark, setSystemDark] = useState(() => window.matchMedia?.("(prefers-color-scheme: dark)").matches ?? false);
  useEffect(() => {
    const media = window.matchMedia?.("(prefers-color-scheme: dark)");
    const onChange = (e: MediaQueryListEvent): void => setSystemDark(e.matches);
    media?.addEventListener("change", onChange);
    return () => media?.removeEventListener("change", onChange);
  }, []);
  const effective = effectiveTheme(theme, systemDark);
  // On the page before the frame that paints it: set after the first paint, it restyled and
  // repainted the whole page one frame later.
  useLayoutEffect(() => applyTheme(effective), [effective]);
  useEffect(() => {
    storage()?.setItem(THEME_STORAGE_KEY, theme);
    api
      .setTheme(theme, effective)
      .then((answer) => {
        if (Array.isArray(answer?.outgoing)) {
          void relay()?.execute(answer.outgoing);
        }
      })
      .catch((error: unknown) => {
        if (!isMissingCommand(error)) console.warn("set_theme failed", error);
      });
    // `relay` is stable.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [theme, effective]);
  return { theme, setTheme };
}
