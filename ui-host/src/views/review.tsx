// The install review sheet: everything the package asks for, before anything is stored. Nothing
// installs without the consent button; a publisher change needs its own checkbox; blockers keep
// the consent button off; a failure shows code, message and what to do.

import type { JSX } from "preact";
import { useState } from "preact/hooks";

import { changeLabel, formatBytes, readinessBadge, reviewTrustBadge } from "../format.js";
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

function show(value: unknown): string {
  if (value === null || value === undefined) {
    return "–";
  }
  return typeof value === "string" ? value : JSON.stringify(value);
}

function PermissionRow(props: { p: ReviewPermission; update: boolean }): JSX.Element {
  const { p } = props;
  const change = changeLabel(p.change);
  return (
    <tr data-testid="review-permission" data-scope={p.scope} data-change={p.change ?? ""}>
      <th scope="row">
        <code>{p.scope}</code>
        {p.access != null && p.access !== "" && <span class="muted"> · {p.access}</span>}
      </th>
      <td>{p.required ? <Badge text={{ label: "Required", tone: "info", title: "Granted by installing" }} /> : <Badge text={{ label: "Optional", tone: "muted", title: "Ask or grant later" }} />}</td>
      <td>
        {p.reason != null && p.reason !== "" ? p.reason : <span class="muted">No reason given</span>}
        {(p.domains ?? []).length > 0 && <div class="muted">Domains: {(p.domains ?? []).join(", ")}</div>}
        {(p.paths ?? []).length > 0 && <div class="muted">Paths: {(p.paths ?? []).join(", ")}</div>}
        {props.update && p.change !== undefined && p.change !== "unchanged" && p.change !== "added" && (
          <div class="diff">
            <span class="diff-old">was {show(p.old)}</span> → <span class="diff-new">now {show(p.new)}</span>
          </div>
        )}
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
  const notVerified = r.trust.state !== "trusted";
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
      </div>

      {notVerified && (
        <div class="warning" role="note" data-testid="review-trust-warning">
          <strong>{trust.label}:</strong> {trust.title}. Install it only if you trust where the file came from.
        </div>
      )}
      {r.publisherChange != null && (
        <div class="warning warning--strong" data-testid="review-publisher-change">
          <p>
            <strong>The publisher changed</strong> from {r.publisherChange.from ?? "none"} to {r.publisherChange.to ?? "none"}. A
            different publisher can read and change this app's data.
          </p>
          <label class="check">
            <input
              type="checkbox"
              data-testid="review-accept-publisher"
              checked={props.acceptPublisher}
              onChange={(e) => props.setAcceptPublisher(e.currentTarget.checked)}
            />
            I accept the new publisher
          </label>
        </div>
      )}
      {r.blockers.length > 0 && (
        <div class="error-box" role="alert" data-testid="review-blockers">
          <p class="error-title">This package cannot be installed:</p>
          <ul>
            {r.blockers.map((b) => (
              <li key={b.code}>
                <code class="error-code">{b.code}</code> {b.message}
              </li>
            ))}
          </ul>
        </div>
      )}

      <h3>Package</h3>
      <Facts
        rows={[
          ["Signature", r.trust.signer != null ? `key ${r.trust.signer.keyId} · ${r.trust.signer.fingerprint}` : "none"],
          ["Package hash", <code class="hash">{r.packageHash}</code>],
          ["Size", formatBytes(r.bytes)],
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
              <PermissionRow key={p.scope} p={p} update={update} />
            ))}
          </tbody>
        </table>
      )}

      <h3>Network</h3>
      <p data-testid="review-domains">{r.network.domains.length > 0 ? r.network.domains.join(", ") : "No network access."}</p>

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
          ["Quota", r.storage.quota == null ? "default" : typeof r.storage.quota === "number" ? formatBytes(r.storage.quota) : r.storage.quota],
          ["Tables", r.storage.tables.length > 0 ? r.storage.tables.join(", ") : "none"],
          [
            update ? "Planned migrations" : "Migrations",
            r.storage.migrations.length > 0 ? r.storage.migrations.map((m) => m.id).join(", ") : "none",
          ],
        ]}
      />
      {r.services.length > 0 && (
        <>
          <h3>Services</h3>
          <ul class="plain">
            {r.services.map((s, i) => (
              <li key={i}>{show(s)}</li>
            ))}
          </ul>
        </>
      )}

      <h3>Readiness</h3>
      <p>
        <Badge text={readinessBadge(r.readiness.status)} />{" "}
        {r.readiness.reasons.length > 0 ? r.readiness.reasons.join(" ") : "Nothing is missing."}
      </p>
      {r.readiness.setupActions.length > 0 && (
        <ul class="plain">
          {r.readiness.setupActions.map((a) => (
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
    (review.publisherChange == null || acceptPublisher);
  const title =
    review === null
      ? "Review the package"
      : `${review.mode === "update" ? "Update" : "Install"} ${review.app.name ?? review.app.id}?`;
  return (
    <Modal title={title} testid="review-sheet" onClose={props.onCancel} wide>
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
          <Button data-testid="review-cancel" onClick={props.onCancel}>
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
