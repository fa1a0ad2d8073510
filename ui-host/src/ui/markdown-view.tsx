// Renders a readme through the safe markdown reader: text children only, links shown as text.

import type { JSX } from "preact";

import { parseMarkdown, type Block, type Inline } from "../markdown.js";

function inline(run: Inline, i: number): JSX.Element | string {
  switch (run.kind) {
    case "text":
      return run.text;
    case "strong":
      return <strong key={i}>{run.text}</strong>;
    case "em":
      return <em key={i}>{run.text}</em>;
    case "code":
      return <code key={i}>{run.text}</code>;
    case "link":
      // No href: a readme never navigates the host window. The address is shown next to the text.
      return (
        <span key={i} class="md-link" title={run.url}>
          {run.text} <span class="md-url">({run.url})</span>
        </span>
      );
  }
}

function block(b: Block, i: number): JSX.Element {
  switch (b.kind) {
    case "heading": {
      // Readme headings sit under the page's own h2/h3.
      const level = Math.min(6, b.level + 2);
      const Tag = `h${level}` as "h3";
      return <Tag key={i}>{b.inlines.map(inline)}</Tag>;
    }
    case "paragraph":
      return <p key={i}>{b.inlines.map(inline)}</p>;
    case "list": {
      const items = b.items.map((it, j) => <li key={j}>{it.map(inline)}</li>);
      return b.ordered ? <ol key={i}>{items}</ol> : <ul key={i}>{items}</ul>;
    }
    case "code":
      return (
        <pre key={i}>
          <code>{b.text}</code>
        </pre>
      );
    case "quote":
      return <blockquote key={i}>{b.inlines.map(inline)}</blockquote>;
    case "rule":
      return <hr key={i} />;
  }
}

export function Markdown(props: { source: string }): JSX.Element {
  return <div class="markdown">{parseMarkdown(props.source).map(block)}</div>;
}
