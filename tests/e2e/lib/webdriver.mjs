// A small W3C WebDriver client on Node's built-in fetch: just what the AppHost desktop tests
// need, so no selenium or webdriverio download is required. It talks to tauri-driver, which
// forwards to WebKitWebDriver and launches the real app binary for each session.

/** The W3C key under which an element reference is returned. */
export const ELEMENT_KEY = "element-6066-11e4-a52e-4f735466cecf";

export class WebDriverError extends Error {
  /**
   * @param {string} message
   * @param {{ status?: number, error?: string, command?: string }} [info]
   */
  constructor(message, info = {}) {
    super(message);
    this.name = "WebDriverError";
    this.status = info.status;
    this.error = info.error;
    this.command = info.command;
  }
}

/**
 * Sends one WebDriver command and returns its `value`.
 * @param {string} baseUrl e.g. http://127.0.0.1:4444
 * @param {"GET"|"POST"|"DELETE"} method
 * @param {string} path
 * @param {unknown} [body]
 * @param {number} [timeoutMs]
 */
export async function command(baseUrl, method, path, body, timeoutMs = 30_000) {
  const label = `${method} ${path}`;
  let response;
  try {
    response = await fetch(new URL(path, baseUrl), {
      method,
      headers: body === undefined ? {} : { "content-type": "application/json; charset=utf-8" },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (cause) {
    throw new WebDriverError(`${label}: cannot reach the WebDriver server at ${baseUrl}: ${cause}`, {
      command: label,
    });
  }
  const text = await response.text();
  let json;
  try {
    json = text === "" ? {} : JSON.parse(text);
  } catch {
    throw new WebDriverError(`${label}: HTTP ${response.status}, not JSON: ${text.slice(0, 500)}`, {
      status: response.status,
      command: label,
    });
  }
  const value = json?.value;
  if (!response.ok || (value && typeof value === "object" && "error" in value)) {
    const error = value?.error ?? `http ${response.status}`;
    const message = value?.message ?? text.slice(0, 500);
    throw new WebDriverError(`${label}: ${error}: ${message}`, {
      status: response.status,
      error,
      command: label,
    });
  }
  return value;
}

/** Polls `probe` until it returns a truthy value; returns that value. */
export async function waitFor(probe, { timeoutMs = 15_000, intervalMs = 100, what = "condition" } = {}) {
  const deadline = Date.now() + timeoutMs;
  let lastError;
  for (;;) {
    try {
      const value = await probe();
      if (value) {
        return value;
      }
    } catch (error) {
      lastError = error;
    }
    if (Date.now() >= deadline) {
      const suffix = lastError ? ` (last error: ${lastError.message ?? lastError})` : "";
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${suffix}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

export class Session {
  /**
   * @param {string} baseUrl
   * @param {string} id
   */
  constructor(baseUrl, id) {
    this.baseUrl = baseUrl;
    this.id = id;
    this.deleted = false;
  }

  /**
   * Starts a session, i.e. launches the app. tauri-driver's capabilities: browserName "wry" and
   * `tauri:options.application` = the binary to launch.
   * @param {string} baseUrl
   * @param {{ application: string, args?: string[] }} tauriOptions
   * @param {number} [timeoutMs]
   */
  static async create(baseUrl, tauriOptions, timeoutMs = 90_000) {
    const value = await command(
      baseUrl,
      "POST",
      "/session",
      { capabilities: { alwaysMatch: { browserName: "wry", "tauri:options": tauriOptions } } },
      timeoutMs,
    );
    if (!value?.sessionId) {
      throw new WebDriverError(`POST /session: no sessionId in ${JSON.stringify(value)}`);
    }
    return new Session(baseUrl, value.sessionId);
  }

  /** @param {"GET"|"POST"|"DELETE"} method @param {string} path @param {unknown} [body] */
  cmd(method, path, body) {
    return command(this.baseUrl, method, `/session/${this.id}${path}`, body);
  }

  /** Ends the session, which closes the app. Safe to call twice; never throws. */
  async delete() {
    if (this.deleted) {
      return;
    }
    this.deleted = true;
    try {
      await command(this.baseUrl, "DELETE", `/session/${this.id}`, undefined, 20_000);
    } catch (error) {
      console.error(`# warning: could not delete WebDriver session ${this.id}: ${error.message}`);
    }
  }

  title() {
    return this.cmd("GET", "/title");
  }

  source() {
    return this.cmd("GET", "/source");
  }

  /** A PNG screenshot of the page, base64-encoded. */
  screenshot() {
    return this.cmd("GET", "/screenshot");
  }

  /** @param {string} script @param {unknown[]} [args] */
  execute(script, args = []) {
    return this.cmd("POST", "/execute/sync", { script, args });
  }

  /** The element id of the first match, or null. @param {string} css */
  async find(css) {
    const found = await this.findAll(css);
    return found[0] ?? null;
  }

  /** Element ids of every match. @param {string} css @param {string} [from] an element id */
  async findAll(css, from) {
    const path = from === undefined ? "/elements" : `/element/${from}/elements`;
    const values = await this.cmd("POST", path, { using: "css selector", value: css });
    return values.map((/** @type {Record<string, string>} */ v) => v[ELEMENT_KEY]);
  }

  /** The first match inside element `from`, or null. @param {string} from @param {string} css */
  async findIn(from, css) {
    const found = await this.findAll(css, from);
    return found[0] ?? null;
  }

  /** Waits until `css` matches and returns the element id. */
  waitForElement(css, timeoutMs = 15_000) {
    return waitFor(() => this.find(css), { timeoutMs, what: `element ${css}` });
  }

  /** @param {string} element */
  text(element) {
    return this.cmd("GET", `/element/${element}/text`);
  }

  /** @param {string} element @param {string} name */
  attribute(element, name) {
    return this.cmd("GET", `/element/${element}/attribute/${encodeURIComponent(name)}`);
  }

  /** Clicks an element like a user would (scrolls it into view first). @param {string} element */
  click(element) {
    return this.cmd("POST", `/element/${element}/click`, {});
  }

  /** Runs an async script: it gets a callback as its last argument. */
  executeAsync(script, args = []) {
    return this.cmd("POST", "/execute/async", { script, args });
  }

  /** Switches into the frame `element` (an iframe element id). */
  switchToFrame(element) {
    return this.cmd("POST", "/frame", { id: { [ELEMENT_KEY]: element } });
  }

  /** Switches back to the top-level document. */
  switchToTop() {
    return this.cmd("POST", "/frame", { id: null });
  }

  /** @param {string} element */
  displayed(element) {
    return this.cmd("GET", `/element/${element}/displayed`);
  }
}
