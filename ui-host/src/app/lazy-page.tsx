// Pages that are not the first view, loaded after the first paint: the bundle's entry (main.js)
// holds the shell, the app list and the running surface; each page below is its own chunk
// (build.mjs: esbuild code splitting), fetched when first shown or by `preloadPages` once the
// list is on screen, so switching to it later does not wait.

import type { ComponentType, JSX } from "preact";
import { useEffect, useState } from "preact/hooks";

type Loader<P> = () => Promise<ComponentType<P>>;

const preloads: Array<() => Promise<unknown>> = [];

/** A page component whose code loads on first use; renders nothing until it has. */
export function lazyPage<P extends object>(load: Loader<P>): (props: P) => JSX.Element | null {
  let loaded: ComponentType<P> | null = null;
  let pending: Promise<ComponentType<P>> | null = null;
  const get = (): Promise<ComponentType<P>> =>
    (pending ??= load().then(
      (page) => (loaded = page),
      (error: unknown) => {
        pending = null; // a later render retries
        throw error;
      },
    ));
  preloads.push(get);
  return function LazyPage(props: P): JSX.Element | null {
    const [, setReady] = useState(0);
    useEffect(() => {
      if (loaded !== null) return;
      let live = true;
      get().then(
        () => live && setReady((n) => n + 1),
        (error: unknown) => console.error("could not load a page", error),
      );
      return () => {
        live = false;
      };
    }, []);
    const Page = loaded;
    return Page === null ? null : <Page {...props} />;
  };
}

/** Loads every lazy page's code (after the first paint). */
export function preloadPages(): void {
  for (const get of preloads) void get().catch(() => undefined);
}
