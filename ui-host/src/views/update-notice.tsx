// "A newer AppHost exists" (docs/shipping.md, "Updates"): asked once, a few seconds after the
// first paint so the start-up never waits on the network. Rust shows a notice only from an update
// feed whose signature verified with the key built into this AppHost; deb and rpm installs do not
// replace themselves, so the notice says where to get the new version. A failed or disabled
// check shows nothing here (Diagnostics has the host's logs).

import type { JSX } from "preact";
import { useEffect, useState } from "preact/hooks";

import * as api from "../api.js";
import type { UpdateNotice as Notice, UpdateStatus } from "../generated/host-api.js";
import { Button } from "../ui/components.js";

/** How long after the first paint the check starts. */
export const CHECK_DELAY_MS = 3_000;

/** The notice to show for a check's answer, if any. */
export function noticeOf(status: UpdateStatus | null): Notice | null {
  return status?.state === "available" && status.notice ? status.notice : null;
}

export function UpdateNotice(): JSX.Element | null {
  const [notice, setNotice] = useState<Notice | null>(null);
  useEffect(() => {
    const timer = setTimeout(() => {
      api.checkUpdate().then(
        (status) => setNotice(noticeOf(status)),
        () => setNotice(null),
      );
    }, CHECK_DELAY_MS);
    return () => clearTimeout(timer);
  }, []);
  if (notice === null) return null;
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
      .{" "}
      <Button variant="plain" class="link-button" onClick={() => setNotice(null)} aria-label="Dismiss the update notice">
        Dismiss
      </Button>
    </p>
  );
}
