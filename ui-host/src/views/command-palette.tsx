// The command palette (Ctrl/Cmd+K): one search field over the host's pages, the apps' UI
// entries, their `command` entries and the routes they registered (`app/palette.ts`). A combobox
// with a listbox: arrows move, Enter chooses, Escape closes; focus returns where it was.

import type { JSX } from "preact";
import { useEffect, useMemo, useRef, useState } from "preact/hooks";

import { filterItems, type PaletteItem } from "../app/palette.js";

export function CommandPalette(props: { items: PaletteItem[]; loading: boolean; onChoose(item: PaletteItem): void; onClose(): void }): JSX.Element {
  const [query, setQuery] = useState("");
  const [active, setActive] = useState(0);
  const input = useRef<HTMLInputElement>(null);
  const shown = useMemo(() => filterItems(props.items, query), [props.items, query]);
  const current = shown[Math.min(active, shown.length - 1)];

  useEffect(() => {
    const before = document.activeElement as HTMLElement | null;
    input.current?.focus();
    return () => before?.focus?.();
  }, []);
  useEffect(() => setActive(0), [query]);
  useEffect(() => {
    if (current !== undefined) document.getElementById(optionId(current))?.scrollIntoView?.({ block: "nearest" });
  }, [current]);

  const onKey = (e: KeyboardEvent): void => {
    if (e.key === "ArrowDown") {
      e.preventDefault();
      setActive((a) => (shown.length === 0 ? 0 : (Math.min(a, shown.length - 1) + 1) % shown.length));
    } else if (e.key === "ArrowUp") {
      e.preventDefault();
      setActive((a) => (shown.length === 0 ? 0 : (Math.min(a, shown.length - 1) - 1 + shown.length) % shown.length));
    } else if (e.key === "Enter") {
      e.preventDefault();
      if (current !== undefined) props.onChoose(current);
    } else if (e.key === "Escape") {
      e.preventDefault();
      props.onClose();
    }
  };

  return (
    <div class="palette-backdrop" onClick={(e) => e.target === e.currentTarget && props.onClose()}>
      <div class="palette" role="dialog" aria-modal="true" aria-label="Command palette" data-testid="command-palette">
        <input
          ref={input}
          type="text"
          class="palette-input"
          data-testid="palette-input"
          role="combobox"
          aria-expanded="true"
          aria-controls="palette-options"
          aria-activedescendant={current === undefined ? undefined : optionId(current)}
          aria-label="Search pages, apps, commands and routes"
          placeholder="Search pages, apps, commands, routes…"
          value={query}
          onInput={(e) => setQuery(e.currentTarget.value)}
          onKeyDown={onKey}
        />
        <ul id="palette-options" class="palette-options" role="listbox" aria-label="Results">
          {shown.map((item) => (
            <li
              key={item.id}
              id={optionId(item)}
              role="option"
              aria-selected={item === current}
              class={item === current ? "palette-option palette-option--active" : "palette-option"}
              data-testid="palette-option"
              data-item={item.id}
              onMouseDown={(e) => e.preventDefault()}
              onClick={() => props.onChoose(item)}
            >
              <span class="palette-group">{item.group}</span> <span class="palette-label">{item.label}</span>{" "}
              <span class="palette-detail">{item.detail}</span>
            </li>
          ))}
        </ul>
        {shown.length === 0 && (
          <p class="palette-empty" role="status">
            {props.loading ? "Loading…" : "Nothing matches."}
          </p>
        )}
      </div>
    </div>
  );
}

function optionId(item: PaletteItem): string {
  return `palette-${item.id.replace(/[^A-Za-z0-9_-]/g, "_")}`;
}
