// The app detail page's "Files" section (Data tab): the lime.files refs the user granted the
// app, each with Revoke, and a path field to grant a file or folder (docs/host-api.md "Files").
// Rust checks everything (what a path may be, whose ref it is); this only shows and asks.

import type { JSX } from "preact";
import { useCallback, useEffect, useState } from "preact/hooks";

import * as api from "../api.js";
import type { FileRef } from "../generated/host-api.js";
import { formatBytes } from "../format.js";
import { Button, Empty, ErrorBox, Loading } from "../ui/components.js";

export function FilesSection(props: { appId: string }): JSX.Element {
  const [refs, setRefs] = useState<FileRef[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [path, setPath] = useState("");
  const [busy, setBusy] = useState(false);
  const reload = useCallback(async () => {
    try {
      setRefs(await api.fileRefs(props.appId));
      setError(null);
    } catch (e: unknown) {
      setError(e);
    }
  }, [props.appId]);
  useEffect(() => {
    void reload();
  }, [reload]);
  const act = async (f: () => Promise<unknown>): Promise<void> => {
    setBusy(true);
    try {
      await f();
      setError(null);
    } catch (e: unknown) {
      setError(e);
    } finally {
      setBusy(false);
      await reload();
    }
  };
  const grant = (e: Event): void => {
    e.preventDefault();
    const p = path.trim();
    if (p === "") return;
    void act(async () => {
      await api.fileGrantPath(props.appId, p);
      setPath("");
    });
  };
  return (
    <section data-testid="detail-files" aria-labelledby="files-heading">
      <h3 id="files-heading">Files</h3>
      <p class="muted">Files and folders you chose for this app. It reads them by an opaque ref, never by their path.</p>
      {error !== null && <ErrorBox error={error} />}
      {refs === null ? (
        error === null && <Loading />
      ) : refs.length === 0 ? (
        <Empty>No files are shared with this app.</Empty>
      ) : (
        <ul class="plain file-refs">
          {refs.map((r) => (
            <li key={r.ref} data-testid="file-ref" data-ref={r.ref} data-kind={r.kind}>
              <span class="file-ref-name">{r.displayName}</span>{" "}
              <span class="muted">
                {r.kind === "folder" ? "folder" : formatBytes(r.size)} · {r.origin === "upload" ? "uploaded" : r.path}
              </span>{" "}
              <Button disabled={busy} onClick={() => void act(() => api.fileRefRevoke(props.appId, r.ref))} data-testid={`file-ref-revoke-${r.ref}`}>
                Revoke
              </Button>
            </li>
          ))}
        </ul>
      )}
      <form class="row" onSubmit={grant} data-testid="file-grant-form">
        <label for="file-grant-path">Share a file or folder (its full path)</label>
        <input id="file-grant-path" type="text" autoComplete="off" value={path} onInput={(e) => setPath(e.currentTarget.value)} data-testid="file-grant-path" />
        <Button type="submit" variant="primary" disabled={busy || path.trim() === ""} data-testid="file-grant-submit">
          Share
        </Button>
      </form>
    </section>
  );
}
