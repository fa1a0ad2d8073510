// The bridge relay (one per window, made when the first frame is attached) and the permission
// prompts it has queued per mount (the running tabs' badges).

import { useCallback, useRef, useState } from "preact/hooks";

import * as api from "../api.js";
import { BridgeRelay } from "../bridge-relay.js";
import { countPrompt } from "./shell-state.js";

export interface RelayHandle {
  /** The relay, made on first use inside `#surface-frames`. */
  relay(): BridgeRelay;
  /** The relay if it was made (events and answers that arrive before any frame find none). */
  current(): BridgeRelay | null;
  /** Pending permission prompts by mount id. */
  prompts: Record<string, number>;
}

export function useRelay(fail: (error: unknown) => void): RelayHandle {
  const [prompts, setPrompts] = useState<Record<string, number>>({});
  const relayRef = useRef<BridgeRelay | null>(null);
  const relay = useCallback((): BridgeRelay => {
    if (relayRef.current === null) {
      const frames = document.getElementById("surface-frames");
      if (frames === null) {
        throw new Error("host UI is missing #surface-frames");
      }
      relayRef.current = new BridgeRelay(api.relayTransport, frames, (error) => {
        console.error("bridge relay", error);
        fail(error);
      }, {
        prompt: (mountId, pending) => setPrompts((p) => countPrompt(p, mountId, pending)),
      });
    }
    return relayRef.current;
    // `fail` is a state setter: stable.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);
  const current = useCallback(() => relayRef.current, []);
  return { relay, current, prompts };
}
