// The install review flow: a package file (picked or dropped) or a path is reviewed, shown in the
// review sheet, and installed on consent; install progress comes from `install:progress` events.

import { useCallback, useRef, useState } from "preact/hooks";

import * as api from "../api.js";
import type { Route } from "../router.js";
import type { InstallReview } from "../types.js";
import type { ReviewPhase } from "../views/review.js";
import type { Notice } from "./mount-controller.js";
import { needsSheet } from "./catalog-flow.js";
import { afterInstallRoute, installedNotice, installOptions, reviewToCancel, type ConsentChoices } from "./review-flow.js";

export interface ReviewFlow {
  review: ReviewPhase | null;
  progress: { done: number; total: number } | null;
  setProgress(p: { done: number; total: number } | null): void;
  reviewFile(file: File): void;
  reviewPath(path: string): void;
  /** Downloads a catalog release and reviews it; an update that asks for nothing new installs
   * without the sheet (`quietUpdate`, app/catalog-flow.ts). */
  reviewCatalog(args: api.CatalogReviewArgs, quietUpdate: boolean): void;
  consent(choices: ConsentChoices): Promise<void>;
  cancel(): void;
}

export function useReview(deps: { reload(): Promise<void>; navigate(route: Route): void; notice(n: Notice): void }): ReviewFlow {
  const [review, setReview] = useState<ReviewPhase | null>(null);
  const [progress, setProgress] = useState<{ done: number; total: number } | null>(null);
  const reviewFile = useCallback((file: File) => {
    void (async () => {
      setProgress(null);
      setReview({ phase: "uploading", fileName: file.name, bytes: file.size });
      try {
        const bytes = new Uint8Array(await file.arrayBuffer());
        const upload = await api.uploadPackage(bytes);
        setReview({ phase: "reviewing", fileName: file.name });
        const r = await api.reviewInstall({ uploadId: upload.uploadId });
        setReview({ phase: "review", review: r });
      } catch (error: unknown) {
        setReview({ phase: "failed", error, review: null, fileName: file.name });
      }
    })();
  }, []);
  const reviewPath = useCallback((path: string) => {
    void (async () => {
      setProgress(null);
      setReview({ phase: "reviewing", fileName: path });
      try {
        setReview({ phase: "review", review: await api.reviewInstall({ path }) });
      } catch (error: unknown) {
        setReview({ phase: "failed", error, review: null, fileName: path });
      }
    })();
  }, []);
  const installReviewed = async (r: InstallReview, choices: ConsentChoices): Promise<void> => {
    setReview({ phase: "installing", review: r });
    try {
      const summary = await api.install(r.reviewId, installOptions(r, choices));
      setReview(null);
      setProgress(null);
      await deps.reload();
      deps.notice(installedNotice(summary, r.mode));
      deps.navigate(afterInstallRoute(summary, r.mode));
    } catch (error: unknown) {
      setReview({ phase: "failed", error, review: r, fileName: r.app.id });
    }
  };
  const consent = async (choices: ConsentChoices): Promise<void> => {
    if (review?.phase !== "review") return;
    await installReviewed(review.review, choices);
  };
  // The latest install function for the stable `reviewCatalog` (the shell memoizes its context).
  const installRef = useRef(installReviewed);
  installRef.current = installReviewed;
  // Bumped by `cancel`: a catalog review still downloading when the user cancels is stopped in
  // Rust (`cancel_review` with its progressId: the partial file is removed), and one that arrives
  // anyway is cancelled instead of reappearing.
  const generation = useRef(0);
  const downloading = useRef<string | null>(null);
  const reviewCatalog = useCallback((args: api.CatalogReviewArgs, quietUpdate: boolean): void => {
    void (async () => {
      const name = `${args.appId}${args.version != null ? `@${args.version}` : ""}`;
      const mine = ++generation.current;
      const progressId = `catalog-${mine}-${Date.now()}`;
      downloading.current = progressId;
      setProgress(null);
      setReview({ phase: "reviewing", fileName: name });
      try {
        const r = await api.catalogReviewInstall({ ...args, progressId });
        if (downloading.current === progressId) downloading.current = null;
        if (generation.current !== mine) {
          api.cancelReview(r.reviewId).catch((error: unknown) => console.warn("cancel_review failed", error));
          return;
        }
        if (quietUpdate && !needsSheet(r)) {
          await installRef.current(r, { acceptPublisherChange: false, reattachData: false });
        } else {
          setReview({ phase: "review", review: r });
        }
      } catch (error: unknown) {
        if (downloading.current === progressId) downloading.current = null;
        if (generation.current === mine) setReview({ phase: "failed", error, review: null, fileName: name });
      }
    })();
  }, []);
  const cancel = (): void => {
    generation.current += 1;
    const inFlight = downloading.current;
    downloading.current = null;
    if (inFlight !== null) {
      api.cancelReview(inFlight).catch((error: unknown) => console.warn("cancel_review failed", error));
    }
    const id = reviewToCancel(review);
    setReview(null);
    setProgress(null);
    if (id !== null) {
      api.cancelReview(id).catch((error: unknown) => console.warn("cancel_review failed", error));
    }
  };
  return { review, progress, setProgress, reviewFile, reviewPath, reviewCatalog, consent, cancel };
}
