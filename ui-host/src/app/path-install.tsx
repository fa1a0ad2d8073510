// "Install from a folder or file path on this computer": a path goes to the install review.

import type { JSX } from "preact";
import { useState } from "preact/hooks";

import { FilterBar, FilterText } from "../ui/data-table.js";

export function PathInstall(props: { reviewPath(path: string): void }): JSX.Element {
  const [path, setPath] = useState("");
  return (
    <details class="path-install">
      <summary>Install from a folder or file path on this computer</summary>
      <FilterBar
        onSubmit={() => {
          if (path.trim() !== "") props.reviewPath(path.trim());
        }}
      >
        <FilterText label="Path" value={path} onInput={setPath} testid="install-path" />
        <button type="submit" class="button">
          Review
        </button>
      </FilterBar>
    </details>
  );
}
