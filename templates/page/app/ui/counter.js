// @ts-check
// The app's logic, apart from the page so tests/counter.test.mjs can run it on the SDK's mock
// runtime (no host, no browser). `storage` is `lime.storage` (the page passes the real one).

/** @typedef {import("./sdk/handles.js").LimeStorage} LimeStorage */

export const CLICKS_KEY = "clicks";

/**
 * The stored count (0 before the first click).
 * @param {LimeStorage} storage
 * @returns {Promise<number>}
 */
export async function readClicks(storage) {
  const value = await storage.get(CLICKS_KEY);
  return typeof value === "number" ? value : 0;
}

/**
 * Adds one click, stores it and reads it back.
 * @param {LimeStorage} storage
 * @returns {Promise<number>}
 */
export async function addClick(storage) {
  await storage.set(CLICKS_KEY, (await readClicks(storage)) + 1);
  return readClicks(storage);
}

/**
 * "1 click", "2 clicks".
 * @param {number} n
 */
export function clicksLabel(n) {
  return `${n} click${n === 1 ? "" : "s"}`;
}

/**
 * What the page shows for a failed call: `CODE (causeCode)`, or the message.
 * @param {unknown} e
 */
export function errorLabel(e) {
  const err = /** @type {{code?: string, causeCode?: string}} */ (e ?? {});
  return err.code ? `${err.code}${err.causeCode ? ` (${err.causeCode})` : ""}` : String(e);
}
