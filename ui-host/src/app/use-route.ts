// The hash route: read on start and on `hashchange`; `navigate` sets both.

import { useCallback, useEffect, useState } from "preact/hooks";

import { parseRoute, routeHash, type Route } from "../router.js";

export function useRoute(): { route: Route; navigate(next: Route): void } {
  const [route, setRoute] = useState<Route>(() => parseRoute(location.hash));
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
    return () => window.removeEventListener("hashchange", onHash);
  }, []);
  return { route, navigate };
}
