// The hash route: read on start and on `hashchange`; `navigate` sets both.

import { useCallback, useEffect, useRef, useState } from "preact/hooks";

import { parseRoute, routeHash, type Route } from "../router.js";

export function useRoute(): { route: Route; navigate(next: Route): void } {
  const firstHash = useRef(location.hash);
  const [route, setRoute] = useState<Route>(() => parseRoute(firstHash.current));
  const navigate = useCallback((next: Route) => {
    const hash = routeHash(next);
    if (location.hash !== hash) {
      location.hash = hash;
    }
    setRoute(next);
  }, []);
  useEffect(() => {
    const onHash = (): void => setRoute(parseRoute(location.hash));
    window.addEventListener("hashchange", onHash);
    // A hash change between the first render's read and this listener (a deep link followed
    // at once by a navigation, as a test's second goto does) would otherwise be lost.
    if (location.hash !== firstHash.current) onHash();
    return () => window.removeEventListener("hashchange", onHash);
  }, []);
  return { route, navigate };
}
