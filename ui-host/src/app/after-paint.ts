// Work that the app center's first frame does not need (approval badges, dev banners, catalog
// offers on the cards, the `next_events` loop, the other pages' code) waits until that frame is
// painted: otherwise its calls, their answers and the re-renders they cause land in the frames
// the window's first paint is made of (docs/benchmarks.md, "Window start-up").
//
// `firstViewShown()` is called from the layout effect that puts the list (or its error) on
// screen; the waiting work then runs two animation frames later, when the page is idle (at
// most `IDLE_CAP_MS` after that). If the first view never shows (a list that neither answers
// nor fails), the work runs `SHOW_CAP_MS` after the gate was made. No DOM, no Preact: unit-tested
// with a stand-in scheduler (ui-host/test/after-paint.test.mjs).

/** Longest wait for an idle moment once the first view painted (ms). */
export const IDLE_CAP_MS = 200;
/** Longest wait for the first view itself (ms). */
export const SHOW_CAP_MS = 2000;

export interface PaintScheduler {
  frame(run: () => void): void;
  idle(run: () => void, capMs: number): void;
  timer(run: () => void, ms: number): void;
}

export class AfterPaintGate {
  private waiting: Array<() => void> = [];
  private shown = false;
  private open = false;

  constructor(private readonly scheduler: PaintScheduler) {
    scheduler.timer(() => this.release(), SHOW_CAP_MS);
  }

  /** Runs `work` once the first view painted (at once if it has). */
  after(work: () => void): void {
    if (this.open) work();
    else this.waiting.push(work);
  }

  /** The first view is on screen (called before the frame that paints it). */
  shownNow(): void {
    if (this.shown) return;
    this.shown = true;
    const { frame, idle } = this.scheduler;
    frame(() => frame(() => idle(() => this.release(), IDLE_CAP_MS)));
  }

  /** Whether the waiting work has been let go. */
  released(): boolean {
    return this.open;
  }

  private release(): void {
    if (this.open) return;
    this.open = true;
    for (const work of this.waiting.splice(0)) {
      try {
        work();
      } catch (error: unknown) {
        console.error("deferred start-up work failed", error);
      }
    }
  }
}

function browserScheduler(): PaintScheduler {
  return {
    frame: (run) => {
      if (typeof requestAnimationFrame === "function") requestAnimationFrame(() => run());
      else setTimeout(run, 16);
    },
    idle: (run, capMs) => {
      if (typeof requestIdleCallback === "function") requestIdleCallback(() => run(), { timeout: capMs });
      else setTimeout(run, 0);
    },
    timer: (run, ms) => void setTimeout(run, ms),
  };
}

let gate: AfterPaintGate | null = null;
const theGate = (): AfterPaintGate => (gate ??= new AfterPaintGate(browserScheduler()));

/** Runs `work` after the app center's first paint. */
export function afterFirstPaint(work: () => void): void {
  theGate().after(work);
}

/** The first view (the list, or its error) is going on screen. */
export function firstViewShown(): void {
  theGate().shownNow();
}
