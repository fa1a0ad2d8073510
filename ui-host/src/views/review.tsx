// The install review sheet: everything the package asks for, before anything is stored. Nothing
// installs without the consent button; a publisher change needs its own checkbox; blockers keep
// the consent button off; a failure shows code, message and what to do.

import type { JSX } from "preact";
import { useState } from "preact/hooks";

import {
  changeLabel,
  errorHelp,
  formatBytes,
  permissionId,
  readinessBadge,
  readinessReasons,
  reviewTrustBadge,
  signerText,
  networkDomains,
  stringList,
  valueText,
} from "../format.js";
import { Badge, Button, ErrorBox, Facts, Loading, Modal, ProgressBar } from "../ui/components.js";
import type { InstallReview, ReviewPermission } from "../types.js";
import { AppIcon } from "./app-list.js";

export type ReviewPhase =
  | { phase: "uploading"; fileName: string; bytes: number }
  | { phase: "reviewing"; fileName: string }
  | { phase: "review"; review: InstallReview }
  | { phase: "installing"; review: InstallReview }
  | { phase: "failed"; error: unknown; review: InstallReview | null; fileName: string };

export interface ReviewProps {
  state: ReviewPhase;
  progress: { done: number; total: number } | null;
  onConsent(options: { acceptPublisherChange: boolean; reattachData: boolean }): void;
  onCancel(): void;
}

const GRANT_WORDS: Record<string, string> = {
  kept: "stays granted",
  asked: "granted by your consent",
  "at-first-use": "asked when first used",
  dropped: "its grant is removed",
  none: "",
};

function PermissionRow(props: { p: ReviewPermission; update: boolean }): JSX.Element {
  const { p } = props;
  const change = changeLabel(p.change);
  const domains = stringList(p.domains);
  const paths = stringList(p.paths);
  const access = valueText(p.access);
  const reason = valueText(p.reason);
  const grant = p.grant !== undefined ? GRANT_WORDS[p.grant] ?? p.grant : "";
  return (
    <tr data-testid="review-permission" data-key={permissionId(p)} data-change={p.change ?? ""}>
      <th scope="row">
        <code>{permissionId(p)}</code>
        <span class="muted">
          {" "}
          · {valueText(p.scope)}
          {access !== "" && ` · ${access}`}
        </span>
      </th>
      <td>
        {p.required ? (
          <Badge text={{ label: "Required", tone: "info", title: "Granted by installing" }} />
        ) : (
          <Badge text={{ label: "Optional", tone: "muted", title: "Asked when first used, or granted later" }} />
        )}
      </td>
      <td>
        {reason !== "" ? reason : <span class="muted">No reason given</span>}
        {domains.length > 0 && <div class="muted">Domains: {domains.join(", ")}</div>}
        {paths.length > 0 && <div class="muted">Paths: {paths.join(", ")}</div>}
        {(p.fields ?? []).map((f) => (
          <div class="diff" key={f.field} data-field={f.field}>
            {f.field}: <span class="diff-old">{valueText(f.old) || "none"}</span> → <span class="diff-new">{valueText(f.new) || "none"}</span>
          </div>
        ))}
        {grant !== "" && <div class="muted">{grant}</div>}
      </td>
      {props.update && <td>{change !== null && <Badge text={change} class="change-badge" />}</td>}
    </tr>
  );
}

/** The sheet's body for a review (no state of its own beyond the checkboxes: render-tested). */
export function ReviewBody(props: {
  review: InstallReview;
  acceptPublisher: boolean;
  setAcceptPublisher(v: boolean): void;
  reattach: boolean;
  setReattach(v: boolean): void;
}): JSX.Element {
  const r = props.review;
  const update = r.mode === "update";
  const trust = reviewTrustBadge(r.trust.state);
  const notVerified = r.trust.state !== "trusted" || r.trust.sideload === true;
  const domains = networkDomains(r.network.domains);
  const migrations = r.storage.migrations ?? [];
  const reasons = readinessReasons(r.readiness);
  const setup = r.readiness.setupActions ?? [];
  const services = Array.isArray(r.services) ? r.services : [];
  const pc = r.publisherChange;
  return (
    <div class="review-body">
      <div class="review-app">
        <AppIcon icon={r.app.icon} name={r.app.id} displayName={r.app.name ?? null} />
        <div>
          <p class="review-app-name">
            {r.app.name ?? r.app.id} <span class="app-version">v{r.app.version}</span>
          </p>
          <p class="muted">
            {r.app.id}
            {r.app.publisher != null && r.app.publisher !== "" ? ` · by ${r.app.publisher}` : " · publisher not stated"}
          </p>
          {r.app.description != null && r.app.description !== "" && <p>{r.app.description}</p>}
        </div>
        <Badge text={trust} class="review-trust" data={{ trust: r.trust.state, testid: "review-trust" }} />
        {r.trust.sideload === true && <Badge text={{ label: "Sideload", tone: "warn", title: "Installed from a file, not a catalog" }} />}
      </div>

      {notVerified && (
        <div class="warning" role="note" data-testid="review-trust-warning">
          <strong>{r.trust.state === "trusted" ? "Sideload" : trust.label}:</strong>{" "}
          {r.trust.state === "trusted" ? "installed from a file rather than a catalog" : trust.title}. Install it only if you trust
          where the file came from.
        </div>
      )}
      {pc != null && (pc.needsAcceptance === true || pc.status === "changed") && (
        <div class="warning warning--strong" data-testid="review-publisher-change">
          <p>
            <strong>The publisher changed</strong> from {signerText(pc.from)} to {signerText(pc.to)}. A different publisher can
            read and change this app's data.
          </p>
          {pc.needsAcceptance === true && (
            <label class="check">
              <input
                type="checkbox"
                data-testid="review-accept-publisher"
                checked={props.acceptPublisher}
                onChange={(e) => props.setAcceptPublisher(e.currentTarget.checked)}
              />
              I accept the new publisher
            </label>
          )}
        </div>
      )}
      {r.blockers.length > 0 && (
        <div class="error-box" role="alert" data-testid="review-blockers">
          <p class="error-title">This package cannot be installed:</p>
          <ul>
            {r.blockers.map((b) => (
              <li key={b.code}>
                <code class="error-code">{b.code}</code> {b.message} <span class="error-help">{errorHelp(b.code)}</span>
              </li>
            ))}
          </ul>
        </div>
      )}

      <h3>Package</h3>
      <Facts
        rows={[
          ["Signature", r.trust.signer != null ? signerText(r.trust.signer) : "none"],
          ["Package hash", <code class="hash">{r.packageHash}</code>],
          ["Size", `${formatBytes(r.bytes)}${r.files !== undefined ? ` in ${r.files} files` : ""}`],
          ...(r.fromVersion != null ? ([["Installed now", `v${r.fromVersion}`]] as Array<[string, string]>) : []),
        ]}
      />

      <h3>Permissions</h3>
      {r.permissions.length === 0 ? (
        <p class="muted">No permissions.</p>
      ) : (
        <table class="table" data-testid="review-permissions">
          <thead>
            <tr>
              <th scope="col">Permission</th>
              <th scope="col">Kind</th>
              <th scope="col">Why</th>
              {update && <th scope="col">Change</th>}
            </tr>
          </thead>
          <tbody>
            {r.permissions.map((p) => (
              <PermissionRow key={permissionId(p)} p={p} update={update} />
            ))}
          </tbody>
        </table>
      )}

      <h3>Network</h3>
      <p data-testid="review-domains">{domains.length > 0 ? domains.join(", ") : "No network access."}</p>

      <h3>Entries</h3>
      <ul class="plain">
        {r.entries.map((e) => (
          <li key={e.key}>
            {e.title ?? e.key} <span class="muted">({e.kind})</span>
            {e.readiness !== undefined && <> · <Badge text={readinessBadge(e.readiness)} /></>}
          </li>
        ))}
      </ul>

      <h3>Storage</h3>
      <Facts
        rows={[
          [
            "Quota",
            r.storage.quota == null ? "default" : typeof r.storage.quota === "number" ? formatBytes(r.storage.quota) : r.storage.quota,
          ],
          ...((r.storage.tables ?? []).length > 0 ? ([["Tables", (r.storage.tables ?? []).join(", ")]] as Array<[string, string]>) : []),
          [update ? "Planned migrations" : "Migrations", migrations.length > 0 ? migrations.map((m) => m.id).join(", ") : "none"],
        ]}
      />
      {services.length > 0 && (
        <>
          <h3>Services</h3>
          <ul class="plain">
            {services.map((svc, i) => (
              <li key={i}>{valueText(svc)}</li>
            ))}
          </ul>
        </>
      )}
      {(r.remoteServices ?? []).length > 0 && (
        <>
          <h3>Remote services</h3>
          <p class="muted">These run on a server, not on this computer. AppHost sends their calls only after you allow each one.</p>
          <ul class="plain" data-testid="review-remote-services">
            {(r.remoteServices ?? []).map((rs) => (
              <li key={rs.key}>
                <strong>{rs.key}</strong> sends data to {rs.origin}
                {rs.auth !== "none" && rs.secret != null ? ` (with your secret ${rs.secret})` : ""}
                <p class="muted">Data boundary: {rs.dataBoundary}</p>
              </li>
            ))}
          </ul>
        </>
      )}
      {(r.prunes ?? []).length > 0 && (
        <p class="muted">Also removed to keep the version history short: {(r.prunes ?? []).join(", ")}.</p>
      )}

      <h3>Readiness</h3>
      <p>
        <Badge text={readinessBadge(r.readiness.status)} />{" "}
        {reasons.length > 0 ? reasons.join(" ") : "Nothing is missing."}
      </p>
      {setup.length > 0 && (
        <ul class="plain">
          {setup.map((a) => (
            <li key={a.key}>
              After installing: {a.title}
              {a.description != null && a.description !== "" && <span class="muted"> — {a.description}</span>}
            </li>
          ))}
        </ul>
      )}

      {r.existingData && (
        <label class="check">
          <input
            type="checkbox"
            data-testid="review-reattach"
            checked={props.reattach}
            onChange={(e) => props.setReattach(e.currentTarget.checked)}
          />
          Reattach the data kept from an earlier install of this app
        </label>
      )}
      {r.needsConsent.length > 0 && (
        <p class="consent-note" data-testid="review-needs-consent">
          {update ? "Updating" : "Installing"} grants: {r.needsConsent.join(", ")}.
        </p>
      )}
    </div>
  );
}

export function ReviewSheet(props: ReviewProps): JSX.Element {
  const [acceptPublisher, setAcceptPublisher] = useState(false);
  const [reattach, setReattach] = useState(false);
  const s = props.state;
  const review = s.phase === "review" || s.phase === "installing" ? s.review : s.phase === "failed" ? s.review : null;
  const busy = s.phase === "uploading" || s.phase === "reviewing" || s.phase === "installing";
  const canConsent =
    s.phase === "review" &&
    review !== null &&
    review.blockers.length === 0 &&
    (review.publisherChange?.needsAcceptance !== true || acceptPublisher);
  const title =
    review === null
      ? "Review the package"
      : `${review.mode === "update" ? "Update" : "Install"} ${review.app.name ?? review.app.id}?`;
  return (
    // While installing, the sheet stays: the install finishes in Rust either way, and its result
    // (or failure) is shown here.
    <Modal title={title} testid="review-sheet" onClose={s.phase === "installing" ? () => undefined : props.onCancel} wide>
      <div data-phase={s.phase} class="review-sheet">
        {s.phase === "uploading" && <Loading label={`Reading ${s.fileName} (${formatBytes(s.bytes)})…`} />}
        {s.phase === "reviewing" && <Loading label={`Verifying ${s.fileName}…`} />}
        {s.phase === "installing" && <Loading label="Installing…" />}
        {busy && props.progress !== null && (
          <ProgressBar done={props.progress.done} total={props.progress.total} label="Bytes verified" />
        )}
        {s.phase === "failed" && (
          <ErrorBox
            error={s.error}
            testid="review-error"
            title={review === null ? `${s.fileName} could not be reviewed. Nothing was installed.` : "The install failed. Nothing was installed."}
          />
        )}
        {review !== null && (
          <ReviewBody
            review={review}
            acceptPublisher={acceptPublisher}
            setAcceptPublisher={setAcceptPublisher}
            reattach={reattach}
            setReattach={setReattach}
          />
        )}
        <div class="dialog-actions">
          <Button data-testid="review-cancel" onClick={props.onCancel} disabled={s.phase === "installing"}>
            {s.phase === "failed" ? "Close" : "Cancel"}
          </Button>
          {s.phase !== "failed" && (
            <Button
              variant="primary"
              data-testid="review-consent"
              disabled={!canConsent}
              onClick={() => props.onConsent({ acceptPublisherChange: acceptPublisher, reattachData: reattach })}
            >
              {review?.mode === "update" ? "Update" : "Install"}
            </Button>
          )}
        </div>
      </div>
    </Modal>
  );
}
