// Pure parts of the install review flow (use-review.ts): what `install` is sent, what is said and
// where the window goes once it installed, which review a cancel drops on the Rust side. No DOM,
// no Preact: unit-tested (ui-host/test/shell.test.mjs).

import type { InstallOptions } from "../api.js";
import type { Route } from "../router.js";
import type { AppSummary, InstallReview } from "../types.js";
import type { ReviewPhase } from "../views/review.js";
import type { Notice } from "./mount-controller.js";

export interface ConsentChoices {
  acceptPublisherChange: boolean;
  reattachData: boolean;
}

/** The options `install` gets: only the questions this review asked. */
export function installOptions(review: InstallReview, choices: ConsentChoices): InstallOptions {
  const opts: InstallOptions = {};
  if (review.publisherChange?.needsAcceptance === true) opts.acceptPublisherChange = choices.acceptPublisherChange;
  if (review.existingData) opts.reattachData = choices.reattachData;
  return opts;
}

/** What `#surface-notice` says after an install or update. */
export function installedNotice(summary: AppSummary, mode: InstallReview["mode"]): Notice {
  const done = mode === "update" ? "updated" : "installed";
  return { appId: summary.name, reason: done, text: `${summary.displayName ?? summary.name} ${summary.activeVersion} is ${done}.` };
}

/** Where the window goes after an install (the list) or an update (the app's versions). */
export function afterInstallRoute(summary: AppSummary, mode: InstallReview["mode"]): Route {
  return mode === "update" ? { page: "app", appId: summary.name, tab: "versions" } : { page: "apps" };
}

/** The review a cancel drops on the Rust side: one that was shown, or whose install failed. */
export function reviewToCancel(state: ReviewPhase | null): string | null {
  return state?.phase === "review" || state?.phase === "failed" ? state.review?.reviewId ?? null : null;
}
