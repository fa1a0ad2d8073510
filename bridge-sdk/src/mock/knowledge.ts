// lime.knowledge in memory (crates/host-core/src/hosting/capability/services/knowledge.rs):
// declared templates, bound to documents or not; the query is matched as words only (runs of
// letters and digits, any of them), with the host's limits and refusals.
import { ErrorCodes } from "../errors.js";
import type { KnowledgeHit } from "../handles.js";
import { bytes, invalid, isRecord, refuse, type MockContext, type Service } from "./common.js";

export const MAX_QUERY_BYTES = 1024;
export const MAX_TERMS = 32;
export const MAX_TOP_K = 50;
export const MAX_TEMPLATE_BYTES = 128;

/** One document of a bound template in the mock: its path, and sections of text. */
export interface MockKnowledgeDoc {
  document: string;
  sections: { title?: string; text: string }[];
}

const queryInvalid = (m: string) => invalid(m, "knowledge.query_invalid");

export function terms(query: string): string[] {
  if (bytes(query) > MAX_QUERY_BYTES) throw queryInvalid(`the query is ${bytes(query)} bytes (at most ${MAX_QUERY_BYTES})`);
  const t = query.match(/[\p{L}\p{N}]+/gu) ?? [];
  if (t.length === 0) throw queryInvalid("the query has no words to search for");
  if (t.length > MAX_TERMS) throw queryInvalid(`the query has ${t.length} words (at most ${MAX_TERMS})`);
  return [...new Set(t.map((w) => w.toLowerCase()))];
}

export function createKnowledge(ctx: MockContext) {
  const templates = new Map<string, MockKnowledgeDoc[] | null>(Object.entries(ctx.options.knowledge ?? {}));
  const service: Service = {
    search(a) {
      for (const k of Object.keys(a)) {
        if (!["template", "query", "topK"].includes(k)) throw invalid(`unknown argument ${JSON.stringify(k.slice(0, 64))}`, "knowledge.invalid_argument");
      }
      const template = a["template"];
      const query = a["query"];
      if (typeof template !== "string") throw invalid("args.template is required", "knowledge.invalid_argument");
      if (typeof query !== "string") throw invalid("args.query is required", "knowledge.invalid_argument");
      const topK = a["topK"] ?? 5;
      if (typeof topK !== "number" || !Number.isInteger(topK) || topK < 1 || topK > MAX_TOP_K) throw queryInvalid(`args.topK must be an integer 1-${MAX_TOP_K}`);
      if (template.length === 0 || bytes(template) > MAX_TEMPLATE_BYTES) throw invalid("args.template must be a template key", "knowledge.invalid_argument");
      const docs = templates.get(template);
      if (docs === undefined) throw refuse(ErrorCodes.PERMISSION_DENIED, "the app's manifest declares no knowledge template with this key", "knowledge.template_not_declared");
      if (docs === null) throw refuse(ErrorCodes.KNOWLEDGE_NOT_BOUND, "no folder is bound to this knowledge template yet; the user binds one in the host", "knowledge.not_bound");
      const words = terms(query);
      const hits: KnowledgeHit[] = [];
      for (const d of docs) {
        let offset = 0;
        for (const s of d.sections) {
          const text = s.title ? `${s.title}\n${s.text}` : s.text;
          const start = offset;
          offset += bytes(text) + 2;
          const found = (text.match(/[\p{L}\p{N}]+/gu) ?? []).map((w) => w.toLowerCase());
          const score = words.reduce((n, w) => n + found.filter((f) => f === w).length, 0);
          if (score === 0) continue;
          const snippet = text.replace(/[\p{L}\p{N}]+/gu, (w) => (words.includes(w.toLowerCase()) ? `[${w}]` : w)).slice(0, 200);
          hits.push({ document: d.document, section: s.title ?? "", start, end: start + bytes(text), snippet, score });
        }
      }
      hits.sort((x, y) => y.score - x.score);
      return { template, hits: hits.slice(0, topK) };
    },
  };
  const notAnObject = invalid("args must be an object", "knowledge.invalid_argument");
  /** Binds documents to (or, with `null`, unbinds) a declared template, as the user would. */
  const setBound = (template: string, docs: MockKnowledgeDoc[] | null) => {
    templates.set(template, docs);
    (ctx.options.knowledge ??= {})[template] = docs;
  };
  void isRecord;
  return { service, notAnObject, setBound };
}
