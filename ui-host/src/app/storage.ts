// The window's localStorage, or null where it is refused (a sandboxed or private window).

export function storage(): Storage | null {
  try {
    return window.localStorage;
  } catch {
    return null;
  }
}
