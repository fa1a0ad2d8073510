// "A newer AppHost exists" (docs/shipping.md, "Updates"): asked once, a few seconds after the
// first paint so the start-up never waits on the network. Rust shows a notice only from an update
// feed whose signature verified with the key built into this AppHost. Deb and rpm installs do not
// replace themselves, so the notice says where to get the new version. An AppImage updates itself
// (Tauri's updater, `src-tauri/src/desktop/appimage_update.rs`), but only after the user presses
// "Install and restart" here: Rust then downloads the AppImage, checks its signature with the
// same key and replaces the file, or refuses with an `update.*` code shown in the notice. A
// failed or disabled check shows nothing here (Diagnostics has the host's logs).

import type { JSX } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";

import * as api from "../api.js";
import type { UpdateNotice as Notice, UpdateStatus } from "../generated/host-api.js";
import { invoke } from "../transport.js";
import { Button } from "../ui/components.js";

/** How long after the first paint the check starts. */
export const CHECK_DELAY_MS = 3_000;

/** The notice to show for a check's answer, if any. */
export function noticeOf(status: UpdateStatus | null): Notice | null {
  return status?.state === "available" && status.notice ? status.notice : null;
}

/** Whether this window runs from an AppImage that can update itself (false in a browser). */
function selfUpdateSupported(): Promise<boolean> {
  return invoke<boolean>("appimage_update_supported").then(
    (yes) => yes === true,
    () => false,
  );
}

/** Where an AppImage's self-update is: offered, installing, installed, or refused with a code. */
export type SelfUpdate =
  | { step: "offer" }
  | { step: "installing" }
  | { step: "installed" }
  | { step: "refused"; code: string; message: string };

/** The refusal a failed install call carries (a HostError `{code, message}`). */
export function refusalOf(error: unknown): SelfUpdate {
  const e = (error ?? {}) as { code?: unknown; message?: unknown };
  return {
    step: "refused",
    code: typeof e.code === "string" ? e.code : "internal",
    message: typeof e.message === "string" ? e.message : String(error),
  };
}

export function UpdateNotice(): JSX.Element | null {
  const [notice, setNotice] = useState<Notice | null>(null);
  const [self, setSelf] = useState<SelfUpdate | null>(null);
  useEffect(() => {
    const timer = setTimeout(() => {
      api.checkUpdate().then(
        (status) => {
          const found = noticeOf(status);
          setNotice(found);
          if (found) void selfUpdateSupported().then((yes) => setSelf(yes ? { step: "offer" } : null));
        },
        () => setNotice(null),
      );
    }, CHECK_DELAY_MS);
    return () => clearTimeout(timer);
  }, []);
  if (notice === null) return null;
  const dismiss = (
    <Button variant="plain" class="link-button" onClick={() => setNotice(null)} aria-label="Dismiss the update notice">
      Dismiss
    </Button>
  );
  if (self !== null) {
    return <SelfUpdateNotice notice={notice} state={self} setState={setSelf} dismiss={dismiss} />;
  }
  return (
    <p class="update-notice" role="status" data-testid="update-notice" data-version={notice.version}>
      AppHost {notice.version} is available. This installation does not update itself:{" "}
      <a
        href={notice.url}
        onClick={(e) => {
          e.preventDefault();
          void api.openExternal(notice.url);
        }}
      >
        get the new version
      </a>
      . {dismiss}
    </p>
  );
}

/** The AppImage's prompt: nothing is downloaded before the user presses "Install and restart". */
export function SelfUpdateNotice(props: {
  notice: Notice;
  state: SelfUpdate;
  setState: (next: SelfUpdate) => void;
  dismiss: JSX.Element;
}): JSX.Element {
  const { notice, state, setState, dismiss } = props;
  // The step's button takes the keyboard focus (Enter confirms; the package test presses it).
  const action = useRef<HTMLButtonElement>(null);
  useEffect(() => action.current?.focus(), [state.step]);
  const install = () => {
    setState({ step: "installing" });
    invoke<{ installed: string }>("appimage_update_install", { version: notice.version }).then(
      () => setState({ step: "installed" }),
      (error) => setState(refusalOf(error)),
    );
  };
  const restart = () => void invoke("appimage_update_restart").catch((error) => setState(refusalOf(error)));
  return (
    <p
      class="update-notice"
      role="status"
      data-testid="update-notice"
      data-version={notice.version}
      data-self-update={state.step}
      data-code={state.step === "refused" ? state.code : undefined}
    >
      {state.step === "offer" && (
        <>
          AppHost {notice.version} is available.{" "}
          <button type="button" class="button button--primary" ref={action} onClick={install}>
            Install and restart
          </button>{" "}
          {dismiss}
        </>
      )}
      {state.step === "installing" && <>Installing AppHost {notice.version}…</>}
      {state.step === "installed" && (
        <>
          AppHost {notice.version} is installed.{" "}
          <button type="button" class="button button--primary" ref={action} onClick={restart}>
            Restart now
          </button>
        </>
      )}
      {state.step === "refused" && (
        <>
          The update to AppHost {notice.version} was refused ({state.code}): {state.message.replace(/\.?$/, ".")} This AppImage is unchanged.{" "}
          {dismiss}
        </>
      )}
    </p>
  );
}
