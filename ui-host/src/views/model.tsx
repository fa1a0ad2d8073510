// The Model page: the OpenAI-compatible endpoint the agent runtime uses (`set_model`), with a
// write-only API key field and "Test connection" (`test_model`: latency or the provider's error).

import type { JSX } from "preact";
import { useEffect, useState } from "preact/hooks";

import * as api from "../api.js";
import { Button, ErrorBox, Facts } from "../ui/components.js";

/** What the key line says: whether a key is set, never the key. */
export function keyText(s: api.ModelStatus | null): string {
  if (s === null || !s.apiKey.set) {
    return "not set";
  }
  if (s.apiKey.present === false) {
    return "set, but missing from the secret store: enter it again";
  }
  return `set${s.apiKey.location ? ` (kept in the ${s.apiKey.location})` : ""}`;
}

export function ModelView(props: {
  status: api.ModelStatus | null;
  tested: api.ModelTest | null;
  error: unknown;
  busy: boolean;
  baseUrl: string;
  model: string;
  apiKey: string;
  onBaseUrl(v: string): void;
  onModel(v: string): void;
  onApiKey(v: string): void;
  onSave(): void;
  onTest(): void;
}): JSX.Element {
  return (
    <section class="page" aria-labelledby="model-heading" data-testid="model-page">
      <h2 id="model-heading">Model</h2>
      <Facts
        rows={[
          ["Status", <span data-testid="model-status">{props.status?.status ?? "…"}</span>],
          ["API key", <span data-testid="model-key-status">{keyText(props.status)}</span>],
        ]}
      />
      {props.error !== null && <ErrorBox error={props.error} testid="model-error" />}
      <form
        class="key-form"
        onSubmit={(e) => {
          e.preventDefault();
          props.onSave();
        }}
      >
        <label class="field">
          <span>Base URL (OpenAI-compatible API root)</span>
          <input type="url" value={props.baseUrl} onInput={(e) => props.onBaseUrl(e.currentTarget.value)} required data-testid="model-base-url" />
        </label>
        <label class="field">
          <span>Model</span>
          <input value={props.model} onInput={(e) => props.onModel(e.currentTarget.value)} required data-testid="model-name" />
        </label>
        <label class="field">
          <span>API key (write-only; leave empty to keep the stored one)</span>
          <input type="password" autocomplete="off" value={props.apiKey} onInput={(e) => props.onApiKey(e.currentTarget.value)} data-testid="model-api-key" />
        </label>
        <Button type="submit" variant="primary" disabled={props.busy} data-testid="model-save">
          Save
        </Button>{" "}
        <Button type="button" disabled={props.busy || props.status?.baseUrl == null} onClick={props.onTest} data-testid="model-test">
          Test connection
        </Button>
      </form>
      {props.tested !== null && (
        <p role="status" data-testid="model-test-result">
          {props.tested.model} answered in {props.tested.latencyMs} ms (first event after {props.tested.firstEventMs} ms)
        </p>
      )}
    </section>
  );
}

export function ModelPage(): JSX.Element {
  const [status, setStatus] = useState<api.ModelStatus | null>(null);
  const [tested, setTested] = useState<api.ModelTest | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [baseUrl, setBaseUrl] = useState("");
  const [model, setModelName] = useState("");
  const [apiKey, setApiKey] = useState("");
  const show = (s: api.ModelStatus): void => {
    setStatus(s);
    setBaseUrl(s.baseUrl ?? "");
    setModelName(s.model ?? "");
  };
  useEffect(() => {
    api.modelSettings().then(show, setError);
  }, []);
  const run = async (work: () => Promise<void>): Promise<void> => {
    setBusy(true);
    setTested(null);
    try {
      await work();
      setError(null);
    } catch (e: unknown) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  return (
    <ModelView
      status={status}
      tested={tested}
      error={error}
      busy={busy}
      baseUrl={baseUrl}
      model={model}
      apiKey={apiKey}
      onBaseUrl={setBaseUrl}
      onModel={setModelName}
      onApiKey={setApiKey}
      onSave={() =>
        void run(async () => {
          const done = await api.setModel(baseUrl.trim(), model.trim(), apiKey);
          setApiKey("");
          show(done.status);
        })
      }
      onTest={() => void run(async () => setTested(await api.testModel()))}
    />
  );
}
