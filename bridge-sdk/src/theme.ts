import type { ThemeSnapshot } from "./protocol.js";

/** The element theme helpers write to (the app's own `<html>`). */
export interface ThemeTarget {
  style: { setProperty(name: string, value: string): void };
  setAttribute(name: string, value: string): void;
}

const ALLOWED = /^--(lime|app)-[A-Za-z0-9_-]+$/;

/**
 * Applies the host's theme to the app's own root element: only `--lime-*` / `--app-*` variables,
 * plus `data-lime-theme`, `data-lime-theme-effective` and `data-lime-color-scheme`.
 * Returns the names of the variables it applied.
 */
export function applyLimeHostTheme(theme: ThemeSnapshot, target?: ThemeTarget): string[] {
  const el = target ?? (globalThis as { document?: { documentElement: ThemeTarget } }).document?.documentElement;
  if (!el) return [];
  const applied: string[] = [];
  for (const [name, value] of Object.entries(theme.tokens ?? {})) {
    if (ALLOWED.test(name) && typeof value === "string" && !/[;{}]/.test(value)) {
      el.style.setProperty(name, value);
      applied.push(name);
    }
  }
  el.setAttribute("data-lime-theme", String(theme.themeMode));
  el.setAttribute("data-lime-theme-effective", String(theme.effectiveThemeMode));
  el.setAttribute("data-lime-color-scheme", String(theme.colorSchemeId));
  return applied;
}
