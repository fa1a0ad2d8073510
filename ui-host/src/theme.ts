// Light and dark: the user's choice (system, light, dark), the system's preference, and what the
// page and the app frames get. Pure parts unit-tested.

import type { ThemeMode } from "./types.js";

export type ThemeChoice = ThemeMode;
export const THEME_STORAGE_KEY = "apphost.theme";

export function parseThemeChoice(value: string | null): ThemeChoice {
  return value === "light" || value === "dark" ? value : "system";
}

/** The theme shown: the choice, or the system's preference under "system". */
export function effectiveTheme(choice: ThemeChoice, systemDark: boolean): "light" | "dark" {
  return choice === "system" ? (systemDark ? "dark" : "light") : choice;
}

/** Sets the page's theme (CSS reads `html[data-theme]`). */
export function applyTheme(effective: "light" | "dark"): void {
  const root = document.documentElement;
  if (root.dataset.theme !== effective) root.dataset.theme = effective;
}
