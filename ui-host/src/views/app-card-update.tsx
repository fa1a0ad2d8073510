// An installed app's card on the Apps page: "Update available" from the catalog the app follows
// (cached metadata: `browse_catalog` reads disk only, loaded after the list's first paint), with
// the permission diff (+/−), a publisher change flagged, and Update through the same flow as the
// Browse page (the review sheet when the update asks for more, app/catalog-flow.ts `needsSheet`);
// an installed release the publisher revoked is flagged.

import type { JSX } from "preact";

import type { CardOffer } from "../app/catalog-flow.js";
import { Button } from "../ui/components.js";

export function CardUpdate(props: { appName: string; offer: CardOffer; onUpdate: (offer: CardOffer) => void }): JSX.Element {
  const { offer } = props;
  const update = offer.update;
  const grows = update !== null && (update.permissionsAdded.length > 0 || update.publisherChanged === true);
  return (
    <div class="card-catalog" data-testid="card-catalog" data-catalog={offer.catalog}>
      {offer.revoked !== null && (
        <p class="catalog-revoked" role="status" data-testid="card-revoked">
          This version is revoked by its publisher: {offer.revoked}
        </p>
      )}
      {update !== null && (
        <div class="catalog-update" data-testid="card-update" data-version={update.version} data-grows={String(grows)}>
          <strong>Update available: {update.version}</strong> <span class="muted">({update.channel} · {offer.catalog})</span>
          {update.permissionsAdded.length > 0 && (
            <p data-testid="card-diff-added">
              New permissions: {update.permissionsAdded.map((k) => <code key={k}>+{k} </code>)}
            </p>
          )}
          {update.permissionsRemoved.length > 0 && (
            <p data-testid="card-diff-removed">
              No longer asked: {update.permissionsRemoved.map((k) => <code key={k}>−{k} </code>)}
            </p>
          )}
          {update.publisherChanged === true && (
            <p class="catalog-revoked" data-testid="card-publisher-changed">
              Signed by another publisher key than the installed version: updating needs your acceptance of the new publisher.
            </p>
          )}
          <Button
            variant="primary"
            data-testid="card-update-button"
            disabled={offer.stale}
            title={offer.stale ? "The catalog is stale: refresh it on the Browse page first." : grows ? "Opens the review sheet: the update asks for more" : undefined}
            onClick={() => props.onUpdate(offer)}
            aria-label={`Update ${props.appName} to ${update.version}`}
          >
            {grows ? "Review update" : "Update"}
          </Button>
        </div>
      )}
    </div>
  );
}
