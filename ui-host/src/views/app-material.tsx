// The app detail page's "Tools and knowledge" section (Data tab): the MCP tools the app declares
// (toolRefs[]) with their state and Grant / Revoke, and its knowledge templates with the bound
// folder, Bind (a folder path) and Unbind (docs/host-api.md "Tools and knowledge"). Rust checks
// everything (declared, server present, policy); this only shows and asks.

import type { JSX } from "preact";
import { useCallback, useEffect, useState } from "preact/hooks";

import * as api from "../api.js";
import type { AppMaterial, TemplateState, ToolRefState } from "../generated/host-api.js";
import { Button, Empty, ErrorBox, Loading } from "../ui/components.js";

function toolState(t: ToolRefState): string {
  if (!t.serverPresent) return "server not configured";
  if (t.denied) return "denied by the admin policy";
  const parts = [t.granted ? "granted" : "not granted", t.listed ? "listed" : "not listed yet"];
  if (t.destructive) parts.push("asks before each call");
  return parts.join(" · ");
}

function BindForm(props: { appId: string; t: TemplateState; busy: boolean; act: (f: () => Promise<unknown>) => Promise<void> }): JSX.Element {
  const [folder, setFolder] = useState("");
  const id = `material-bind-${props.t.template}`;
  const submit = (e: Event): void => {
    e.preventDefault();
    const f = folder.trim();
    if (f === "") return;
    void props.act(async () => {
      await api.bindKnowledge(props.appId, props.t.template, f);
      setFolder("");
    });
  };
  return (
    <form class="row" onSubmit={submit} data-testid={`material-bind-form-${props.t.template}`}>
      <label for={id}>Folder (its full path)</label>
      <input id={id} type="text" autoComplete="off" value={folder} onInput={(e) => setFolder(e.currentTarget.value)} data-testid={`material-bind-path-${props.t.template}`} />
      <Button type="submit" variant="primary" disabled={props.busy || folder.trim() === ""} data-testid={`material-bind-${props.t.template}`}>
        Bind
      </Button>
    </form>
  );
}

export function MaterialSection(props: { appId: string }): JSX.Element {
  const [m, setM] = useState<AppMaterial | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const reload = useCallback(async () => {
    try {
      setM(await api.appMaterial(props.appId));
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
  return (
    <section data-testid="detail-material" aria-labelledby="material-heading">
      <h3 id="material-heading">Tools and knowledge</h3>
      <p class="muted">MCP tools this app may call (and its agent tasks with them), and the folders its knowledge search reads.</p>
      {error !== null && <ErrorBox error={error} />}
      {m === null ? (
        error === null && <Loading />
      ) : (
        <>
          <h4>Tools</h4>
          {m.tools.length === 0 ? (
            <Empty>This app declares no tools.</Empty>
          ) : (
            <ul class="plain">
              {m.tools.map((t) => (
                <li key={t.tool} data-testid="material-tool" data-tool={t.tool} data-granted={String(t.granted)}>
                  <code>{t.tool}</code>
                  {t.required ? " (required)" : ""} <span class="muted">{toolState(t)}</span>{" "}
                  {t.granted ? (
                    <Button disabled={busy} onClick={() => void act(() => api.revokeTool(props.appId, t.tool))} data-testid={`material-revoke-${t.tool}`}>
                      Revoke
                    </Button>
                  ) : (
                    <Button disabled={busy || !t.serverPresent || t.denied} onClick={() => void act(() => api.grantTool(props.appId, t.tool))} data-testid={`material-grant-${t.tool}`}>
                      Grant
                    </Button>
                  )}
                </li>
              ))}
            </ul>
          )}
          <h4>Knowledge</h4>
          {m.knowledge.length === 0 ? (
            <Empty>This app declares no knowledge templates.</Empty>
          ) : (
            <ul class="plain">
              {m.knowledge.map((t) => (
                <li key={t.template} data-testid="material-knowledge" data-template={t.template} data-bound={String(t.folder !== null)}>
                  <code>{t.template}</code>
                  {t.required ? " (required)" : ""}{" "}
                  {t.folder !== null ? (
                    <>
                      <span class="muted">
                        {t.folder} · {t.files} files, {t.chunks} passages
                      </span>{" "}
                      <Button disabled={busy} onClick={() => void act(() => api.unbindKnowledge(props.appId, t.template))} data-testid={`material-unbind-${t.template}`}>
                        Unbind
                      </Button>
                    </>
                  ) : (
                    <BindForm appId={props.appId} t={t} busy={busy} act={act} />
                  )}
                </li>
              ))}
            </ul>
          )}
        </>
      )}
    </section>
  );
}
