// lime.events between mock runtimes: the entries of one app share a bus; apps never do.
import type { LimeAppEvent } from "../handles.js";

/** One entry's end of a {@link MockEventBus}. */
export interface MockBusMember {
  /** Whether the entry subscribes to `topic`. */
  accepts(topic: string): boolean;
  deliver(event: LimeAppEvent): void;
}

/** App events shared by several mock runtimes (entries of one app); never across apps. */
export interface MockEventBus {
  /** Delivers `event` to every member of `appId` but `from` that accepts its topic; returns how many. */
  publish(appId: string, from: MockBusMember, event: LimeAppEvent): number;
  join(appId: string, member: MockBusMember): () => void;
}

export function createMockEventBus(): MockEventBus {
  const members = new Map<string, Set<MockBusMember>>();
  return {
    publish(appId, from, event) {
      let n = 0;
      for (const m of [...(members.get(appId) ?? [])]) {
        if (m === from || !m.accepts(event.topic)) continue;
        n += 1;
        m.deliver(structuredClone(event));
      }
      return n;
    },
    join(appId, member) {
      const set = members.get(appId) ?? new Set();
      members.set(appId, set);
      set.add(member);
      return () => set.delete(member);
    },
  };
}
