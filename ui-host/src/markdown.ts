// A small markdown reader for app readmes (APP.md bodies). It produces blocks of plain text
// runs, never HTML: the view renders them as elements with text children, so nothing in a
// package can inject markup or script. Links are shown as text with their address (no href):
// a readme cannot navigate the host window. Pure, unit-tested.

export type Inline =
  | { kind: "text"; text: string }
  | { kind: "strong"; text: string }
  | { kind: "em"; text: string }
  | { kind: "code"; text: string }
  | { kind: "link"; text: string; url: string };

export type Block =
  | { kind: "heading"; level: 1 | 2 | 3 | 4 | 5 | 6; inlines: Inline[] }
  | { kind: "paragraph"; inlines: Inline[] }
  | { kind: "list"; ordered: boolean; items: Inline[][] }
  | { kind: "code"; text: string }
  | { kind: "quote"; inlines: Inline[] }
  | { kind: "rule" };

/** Readmes longer than this are cut (bounded work for any package). */
export const MAX_README_CHARS = 200_000;

const INLINE = /(`[^`]+`)|(\*\*[^*]+\*\*|__[^_]+__)|(\*[^*\s][^*]*\*|_[^_\s][^_]*_)|(\[[^\]]*\]\([^)\s]*\))/g;

/** Splits one line of text into inline runs. */
export function parseInline(text: string): Inline[] {
  const out: Inline[] = [];
  let last = 0;
  for (const match of text.matchAll(INLINE)) {
    const at = match.index;
    if (at > last) {
      out.push({ kind: "text", text: text.slice(last, at) });
    }
    const token = match[0];
    if (match[1] !== undefined) {
      out.push({ kind: "code", text: token.slice(1, -1) });
    } else if (match[2] !== undefined) {
      out.push({ kind: "strong", text: token.slice(2, -2) });
    } else if (match[3] !== undefined) {
      out.push({ kind: "em", text: token.slice(1, -1) });
    } else {
      const close = token.indexOf("](");
      out.push({ kind: "link", text: token.slice(1, close), url: token.slice(close + 2, -1) });
    }
    last = at + token.length;
  }
  if (last < text.length) {
    out.push({ kind: "text", text: text.slice(last) });
  }
  return out;
}

/** Reads markdown into blocks. Unknown syntax (including raw HTML) stays literal text. */
export function parseMarkdown(source: string): Block[] {
  const lines = source.slice(0, MAX_README_CHARS).replace(/\r\n?/g, "\n").split("\n");
  const blocks: Block[] = [];
  let paragraph: string[] = [];
  let list: { ordered: boolean; items: Inline[][] } | null = null;
  const flush = (): void => {
    if (paragraph.length > 0) {
      blocks.push({ kind: "paragraph", inlines: parseInline(paragraph.join(" ")) });
      paragraph = [];
    }
    if (list !== null) {
      blocks.push({ kind: "list", ordered: list.ordered, items: list.items });
      list = null;
    }
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? "";
    const fence = /^\s*(```|~~~)/.exec(line);
    if (fence !== null) {
      flush();
      const code: string[] = [];
      i++;
      while (i < lines.length && !(lines[i] ?? "").trimStart().startsWith(fence[1] ?? "```")) {
        code.push(lines[i] ?? "");
        i++;
      }
      blocks.push({ kind: "code", text: code.join("\n") });
      continue;
    }
    const heading = /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading !== null) {
      flush();
      const level = (heading[1] ?? "#").length as 1 | 2 | 3 | 4 | 5 | 6;
      blocks.push({ kind: "heading", level, inlines: parseInline(heading[2] ?? "") });
      continue;
    }
    if (/^\s*([-*_])(\s*\1){2,}\s*$/.test(line)) {
      flush();
      blocks.push({ kind: "rule" });
      continue;
    }
    const item = /^\s*(?:([-*+])|(\d+)[.)])\s+(.*)$/.exec(line);
    if (item !== null) {
      const ordered = item[2] !== undefined;
      if (paragraph.length > 0 || (list !== null && list.ordered !== ordered)) {
        flush();
      }
      list ??= { ordered, items: [] };
      list.items.push(parseInline(item[3] ?? ""));
      continue;
    }
    const quote = /^\s*>\s?(.*)$/.exec(line);
    if (quote !== null) {
      flush();
      blocks.push({ kind: "quote", inlines: parseInline(quote[1] ?? "") });
      continue;
    }
    if (line.trim() === "") {
      flush();
      continue;
    }
    if (list !== null) {
      flush();
    }
    paragraph.push(line.trim());
  }
  flush();
  return blocks;
}
