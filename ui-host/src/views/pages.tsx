// The grants page (across apps), the diagnostics page and the settings page.

import type { JSX } from "preact";
import { useCallback, useEffect, useState } from "preact/hooks";

import * as api from "../api.js";
import { formatBytes, permissionId, valueText } from "../format.js";
import type { ThemeChoice } from "../theme.js";
import { Button, Empty, ErrorBox, Facts, Loading } from "../ui/components.js";
import { appOptions, DataTable, FilterBar, FilterSelect, FilterText, GrantBadge, GrantToggle, type Column, type FilterOption } from "../ui/data-table.js";
import type { AuditRow, GrantRow, HostSettings, TrustedKey, VerifyReport } from "../types.js";

function useLoad<T>(load: () => Promise<T>): { value: T | null; error: unknown; reload: () => Promise<void> } {
  const [value, setValue] = useState<T | null>(null);
  const [error, setError] = useState<unknown>(null);
  const reload = useCallback(async () => {
    try {
      setValue(await load());
      setError(null);
    } catch (e: unknown) {
      setError(e);
    }
  }, [load]);
  useEffect(() => void reload(), [reload]);
  return { value, error, reload };
}

// ---------------------------------------------------------------------------------------------

const GRANT_COLUMNS: ReadonlyArray<Column<GrantRow>> = [
  { label: "App", cell: (g) => g.appId },
  {
    label: "Permission",
    rowHeader: true,
    cell: (g) => (
      <>
        <code>{permissionId(g)}</code>
        <span class="muted">
          {" "}
          {valueText(g.scope)} · {valueText(g.access)}
          {g.required ? " · required" : ""}
        </span>
      </>
    ),
  },
  { label: "State", cell: (g) => <GrantBadge granted={g.granted} /> },
];

export function GrantsTable(props: { rows: GrantRow[]; busy: boolean; onToggle(row: GrantRow): void }): JSX.Element {
  const columns: ReadonlyArray<Column<GrantRow>> = [
    ...GRANT_COLUMNS,
    {
      label: "Action",
      cell: (g) => <GrantToggle granted={g.granted} testid="grant" label={`${permissionId(g)} for ${g.appId}`} disabled={props.busy} onToggle={() => props.onToggle(g)} />,
    },
  ];
  return (
    <DataTable
      testid="grants-table"
      columns={columns}
      rows={props.rows}
      rowKey={(g) => `${g.appId}/${permissionId(g)}`}
      rowAttrs={(g) => ({ "data-testid": "grant-row", "data-app-id": g.appId, "data-key": permissionId(g), "data-granted": String(g.granted) })}
      empty="No app has asked for a permission."
    />
  );
}

export function GrantsPage(): JSX.Element {
  const load = useCallback(() => api.listGrants(), []);
  const { value, error, reload } = useLoad(load);
  const [busy, setBusy] = useState(false);
  const [actionError, setActionError] = useState<unknown>(null);
  const toggle = async (g: GrantRow): Promise<void> => {
    setBusy(true);
    try {
      await (g.granted ? api.revoke(g.appId, permissionId(g)) : api.grant(g.appId, permissionId(g)));
      setActionError(null);
      await reload();
    } catch (e: unknown) {
      setActionError(e);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section class="page" aria-labelledby="grants-heading" data-testid="grants-page">
      <h2 id="grants-heading">Permissions granted to apps</h2>
      {error !== null && <ErrorBox error={error} />}
      {actionError !== null && <ErrorBox error={actionError} />}
      {value === null ? error === null && <Loading /> : <GrantsTable rows={value} busy={busy} onToggle={(g) => void toggle(g)} />}
    </section>
  );
}

// ---------------------------------------------------------------------------------------------

/** The call an audit row is about (`capability.method` of a `capability.call`), else "". */
function auditCall(details: unknown): { call: string; decision: string; reason: string } {
  if (typeof details !== "object" || details === null) {
    return { call: "", decision: "", reason: "" };
  }
  const d = details as Record<string, unknown>;
  const call = typeof d.capability === "string" ? `${d.capability}${typeof d.method === "string" ? `.${d.method}` : ""}` : "";
  return { call, decision: valueText(d.decision), reason: valueText(d.reason) };
}

type AuditView = { row: AuditRow; call: ReturnType<typeof auditCall> };

const AUDIT_COLUMNS: ReadonlyArray<Column<AuditView>> = [
  { label: "When", cell: (v) => v.row.at },
  {
    label: "App",
    cell: (v) => (
      <>
        {v.row.app ?? ""}
        {v.row.version != null ? ` ${v.row.version}` : ""}
      </>
    ),
  },
  { label: "Action", cell: (v) => v.row.action },
  { label: "Call", cell: (v) => <code>{v.call.call}</code> },
  { label: "Decision", cell: (v) => v.call.decision },
  { label: "Reason", cell: (v) => v.call.reason },
];

export function AuditTable(props: { rows: AuditRow[] }): JSX.Element {
  return (
    <DataTable
      testid="audit-table"
      columns={AUDIT_COLUMNS}
      rows={props.rows.map((row) => ({ row, call: auditCall(row.details) }))}
      rowKey={(v) => v.row.id}
      rowAttrs={(v) => ({ "data-id": v.row.id, "data-action": v.row.action, "data-decision": v.call.decision })}
      empty="No audit records match."
    />
  );
}

const DECISIONS: readonly FilterOption[] = [
  { value: "", label: "Any" },
  { value: "allow", label: "Allowed" },
  { value: "ask", label: "Asked" },
  { value: "deny", label: "Denied" },
];

interface Refusal {
  reason?: string;
  appId?: string | null;
  at?: string;
  bytes?: number;
}

export function DiagnosticsPage(props: { apps: readonly string[] }): JSX.Element {
  const [filters, setFilters] = useState({ appId: "", capability: "", decision: "" });
  const [rows, setRows] = useState<AuditRow[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [verify, setVerify] = useState<VerifyReport | null>(null);
  const [bundle, setBundle] = useState<{ path: string; bytes: number } | null>(null);
  const loadBridge = useCallback(() => api.bridgeDiagnostics(), []);
  const bridge = useLoad(loadBridge);
  const search = useCallback(async () => {
    const q: api.AuditQuery = { limit: 200 };
    if (filters.appId !== "") q.appId = filters.appId;
    if (filters.capability.trim() !== "") q.capability = filters.capability.trim();
    if (filters.decision !== "") q.decision = filters.decision;
    try {
      setRows(await api.audit(q));
      setError(null);
    } catch (e: unknown) {
      setError(e);
    }
  }, [filters]);
  useEffect(() => void search(), []); // eslint-disable-line react-hooks/exhaustive-deps
  const act = async <T,>(run: () => Promise<T>, set: (v: T) => void): Promise<void> => {
    try {
      set(await run());
      setError(null);
    } catch (e: unknown) {
      setError(e);
    }
  };
  const refusals = Array.isArray(bridge.value?.recentRefusals) ? (bridge.value.recentRefusals as Refusal[]) : [];
  return (
    <section class="page" aria-labelledby="diag-heading" data-testid="diagnostics-page">
      <h2 id="diag-heading">Diagnostics</h2>
      {error !== null && <ErrorBox error={error} />}
      <h3>Audit log</h3>
      <FilterBar onSubmit={() => void search()}>
        <FilterSelect label="App" value={filters.appId} options={appOptions(props.apps, "All apps")} onChange={(appId) => setFilters({ ...filters, appId })} />
        <FilterText label="Capability" value={filters.capability} placeholder="lime.storage" onInput={(capability) => setFilters({ ...filters, capability })} />
        <FilterSelect label="Decision" value={filters.decision} options={DECISIONS} onChange={(decision) => setFilters({ ...filters, decision })} />
        <Button type="submit" data-testid="audit-search">
          Filter
        </Button>
      </FilterBar>
      {rows === null ? error === null && <Loading /> : <AuditTable rows={rows} />}

      <h3>Refused bridge messages</h3>
      {bridge.error !== null && <ErrorBox error={bridge.error} />}
      {refusals.length === 0 ? (
        <Empty>No message was refused.</Empty>
      ) : (
        <ul class="plain" data-testid="refusals">
          {refusals.map((r, i) => (
            <li key={i}>
              <code>{r.reason ?? "?"}</code> {r.appId ?? ""} <span class="muted">{r.at ?? ""}</span>
            </li>
          ))}
        </ul>
      )}

      <h3>Store</h3>
      <div class="row">
        <Button data-testid="verify-store" onClick={() => void act(() => api.verifyStore(false), setVerify)}>
          Verify store
        </Button>
        <Button data-testid="diagnostics-bundle" onClick={() => void act(() => api.diagnosticsBundle(), setBundle)}>
          Export a diagnostics bundle
        </Button>
      </div>
      {verify !== null && (
        <pre class="json" data-testid="verify-result">
          {JSON.stringify(verify, null, 2)}
        </pre>
      )}
      {bundle !== null && (
        <p role="status" data-testid="bundle-result">
          Written to <code>{bundle.path}</code> ({formatBytes(bundle.bytes)}). It holds no secrets.
        </p>
      )}
    </section>
  );
}

// ---------------------------------------------------------------------------------------------

export function KeysTable(props: { keys: TrustedKey[]; onRemove(key: TrustedKey): void }): JSX.Element {
  const columns: ReadonlyArray<Column<TrustedKey>> = [
    { label: "Label", cell: (k) => k.name ?? "" },
    { label: "Key", cell: (k) => <code>{k.keyId}</code> },
    { label: "Fingerprint", cell: (k) => <code class="hash">{k.fingerprint}</code> },
    {
      label: "Action",
      cell: (k) => (
        <Button aria-label={`Remove key ${k.name ?? k.keyId}`} onClick={() => props.onRemove(k)}>
          Remove
        </Button>
      ),
    },
  ];
  return (
    <DataTable
      testid="trusted-keys"
      columns={columns}
      rows={props.keys}
      rowKey={(k) => k.publicKey ?? k.keyId}
      rowAttrs={(k) => ({ "data-key-id": k.keyId })}
      empty="No trusted publisher keys: every package is shown as sideloaded."
    />
  );
}

export function SettingsPage(props: { theme: ThemeChoice; setTheme(t: ThemeChoice): void }): JSX.Element {
  const loadSettings = useCallback(() => api.hostSettings(), []);
  const settings = useLoad<HostSettings>(loadSettings);
  const loadKeys = useCallback(() => api.trustedKeys(), []);
  const keys = useLoad<TrustedKey[]>(loadKeys);
  const [publicKey, setPublicKey] = useState("");
  const [label, setLabel] = useState("");
  const [error, setError] = useState<unknown>(null);
  const add = async (): Promise<void> => {
    try {
      await api.addTrustedKey(publicKey.trim(), label.trim());
      setPublicKey("");
      setLabel("");
      setError(null);
      await keys.reload();
    } catch (e: unknown) {
      setError(e);
    }
  };
  const remove = async (k: TrustedKey): Promise<void> => {
    try {
      // The full public key: unambiguous when several trusted keys share a key id.
      await api.removeTrustedKey(k.publicKey ?? k.keyId);
      setError(null);
      await keys.reload();
    } catch (e: unknown) {
      setError(e);
    }
  };
  return (
    <section class="page" aria-labelledby="settings-heading" data-testid="settings-page">
      <h2 id="settings-heading">Settings</h2>
      <h3>Theme</h3>
      <fieldset class="theme-choice">
        <legend>Colour theme</legend>
        {(["system", "light", "dark"] as const).map((t) => (
          <label key={t} class="check">
            <input type="radio" name="theme" value={t} checked={props.theme === t} onChange={() => props.setTheme(t)} data-testid={`theme-${t}`} />
            {t === "system" ? "Follow the system" : t === "light" ? "Light" : "Dark"}
          </label>
        ))}
      </fieldset>

      <h3>Trusted publisher keys</h3>
      {error !== null && <ErrorBox error={error} />}
      {keys.error !== null && <ErrorBox error={keys.error} />}
      {keys.value === null ? keys.error === null && <Loading /> : <KeysTable keys={keys.value} onRemove={(k) => void remove(k)} />}
      <form
        class="key-form"
        onSubmit={(e) => {
          e.preventDefault();
          void add();
        }}
      >
        <label class="field">
          <span>Public key (base64, or the text of a .pub.json file)</span>
          <textarea rows={2} value={publicKey} onInput={(e) => setPublicKey(e.currentTarget.value)} required data-testid="key-public" />
        </label>
        <label class="field">
          <span>Name (optional)</span>
          <input value={label} onInput={(e) => setLabel(e.currentTarget.value)} data-testid="key-label" />
        </label>
        <Button type="submit" disabled={publicKey.trim() === ""} data-testid="key-add">
          Add key
        </Button>
      </form>

      <h3>This host</h3>
      {settings.error !== null && <ErrorBox error={settings.error} />}
      {settings.value !== null && (
        <>
          <Facts
            rows={[
              ["Data directory", <code data-testid="data-dir">{settings.value.dataDir}</code>],
              ["AppHost version", settings.value.version],
            ]}
          />
          <h4>Limits</h4>
          <Facts rows={Object.entries(settings.value.limits).map(([k, v]) => [k, typeof v === "number" && /bytes/i.test(k) ? formatBytes(v) : String(v)])} />
        </>
      )}
    </section>
  );
}
