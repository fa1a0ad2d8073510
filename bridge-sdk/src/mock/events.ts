// lime.events in memory (crates/host-core/src/capability/services/events.rs): topics declared in
// the manifest's events[] for their direction, per-frame subscriptions, delivery to the app's
// other frames only (through a MockEventBus).
import { ErrorCodes } from "../errors.js";
import type { LimeAppEvent } from "../handles.js";
import { bytes, invalid, json, MAX_PAYLOAD_BYTES, MAX_SUBSCRIPTIONS, MAX_TOPIC_BYTES, refuse, type MockContext, type Service } from "./common.js";
import { createMockEventBus, type MockBusMember } from "./bus.js";

const isTopic = (t: unknown): t is string => typeof t === "string" && t.length > 0 && t.length <= MAX_TOPIC_BYTES && /^[A-Za-z0-9._:/-]+$/.test(t);

export function createEvents(ctx: MockContext) {
  const { appId, entryKey } = ctx;
  const declaredEvents = ctx.options.events;
  const bus = ctx.options.bus ?? createMockEventBus();
  const subscribed = new Set<string>();
  const checkDeclared = (topic: string, direction: "publish" | "subscribe") => {
    if (declaredEvents === undefined) return;
    const d = Object.hasOwn(declaredEvents, topic) ? declaredEvents[topic] : undefined;
    if (d !== direction && d !== "both") {
      throw refuse(ErrorCodes.PERMISSION_DENIED, `the app's manifest declares no event ${JSON.stringify(topic)} to ${direction} (events[])`, "events.undeclared_topic");
    }
  };
  const member: MockBusMember = {
    accepts: (topic) => subscribed.has(topic),
    deliver: (e) => ctx.deliver(e),
  };
  const leave = bus.join(appId, member);

  const service: Service = {
    publish(a) {
      const topic = a["topic"];
      if (!isTopic(topic)) throw invalid(`args.topic must be 1-${MAX_TOPIC_BYTES} bytes of A-Z a-z 0-9 . _ - : /`, "events.invalid_topic");
      checkDeclared(topic, "publish");
      const payload = a["payload"] === undefined ? null : a["payload"];
      if (bytes(json(payload)) > MAX_PAYLOAD_BYTES) {
        throw invalid(`an event payload may be at most ${MAX_PAYLOAD_BYTES} bytes of JSON`, "events.payload_too_large");
      }
      const event: LimeAppEvent = { capability: "lime.events", topic, payload: structuredClone(payload), sourceEntryKey: entryKey };
      return { delivered: bus.publish(appId, member, event) };
    },
    subscribe(a) {
      const topic = a["topic"];
      if (!isTopic(topic)) throw invalid(`args.topic must be 1-${MAX_TOPIC_BYTES} bytes of A-Z a-z 0-9 . _ - : /`, "events.invalid_topic");
      checkDeclared(topic, "subscribe");
      if (!subscribed.has(topic) && subscribed.size >= MAX_SUBSCRIPTIONS) {
        throw invalid(`a frame may subscribe to at most ${MAX_SUBSCRIPTIONS} topics`, "events.too_many_subscriptions");
      }
      subscribed.add(topic);
      return { subscribed: true, topic };
    },
    unsubscribe(a) {
      const topic = a["topic"];
      if (!isTopic(topic)) throw invalid(`args.topic must be 1-${MAX_TOPIC_BYTES} bytes of A-Z a-z 0-9 . _ - : /`, "events.invalid_topic");
      return { unsubscribed: subscribed.delete(topic), topic };
    },
  };
  const notAnObject = invalid("args.topic must be a topic", "events.invalid_topic");
  /** Leaves the bus and drops every subscription. */
  const close = () => {
    subscribed.clear();
    leave();
  };
  return { service, notAnObject, close };
}
