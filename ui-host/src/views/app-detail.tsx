// App detail: overview and readme, entries, permissions (grant, revoke), data, versions (update
// from a package, rollback), danger zone (enable/disable, uninstall modes each showing its plan).

import type { JSX } from "preact";
import { useCallback, useContext, useEffect, useRef, useState } from "preact/hooks";

import * as api from "../api.js";
import { HostContext } from "../context.js";
import {
  formatBytes,
  permissionId,
  readinessBadge,
  readinessReasons,
  readinessWords,
  shownVersion,
  stringList,
  trustBadge,
  valueText,
} from "../format.js";
import { DETAIL_TABS, type DetailTab } from "../router.js";
import { TasksPage } from "./tasks.js";
import { Badge, Button, Empty, ErrorBox, Facts, Loading } from "../ui/components.js";
import { DataTable, GrantBadge, GrantToggle, type Column } from "../ui/data-table.js";
import { Markdown } from "../ui/markdown-view.js";
import type { AppDetail, AppSummary, CleanupPlan, DetailPermission, DisablePlan, UninstallMode } from "../types.js";
import { AppIcon } from "./app-list.js";
import { FilesSection } from "./app-files.js";
import { MaterialSection } from "./app-material.js";
import { ServicesSection } from "./app-detail-services.js";

const TAB_LABELS: Record<DetailTab, string> = {
  overview: "Overview",
  entries: "Entries",
  permissions: "Permissions",
  data: "Data",
  tasks: "Tasks",
  versions: "Versions",
  danger: "Danger zone",
};

function useDetail(appId: string): { detail: AppDetail | null; error: unknown; reload: () => Promise<void> } {
  const [detail, setDetail] = useState<AppDetail | null>(null);
  const [error, setError] = useState<unknown>(null);
  const reload = useCallback(async () => {
    try {
      setDetail(await api.appDetail(appId));
      setError(null);
    } catch (e: unknown) {
      setError(e);
    }
  }, [appId]);
  useEffect(() => {
    setDetail(null);
    void reload();
  }, [reload]);
  return { detail, error, reload };
}

export function AppDetailPage(props: { appId: string; tab: DetailTab }): JSX.Element {
  const host = useContext(HostContext);
  const summary = host.apps?.find((a) => a.name === props.appId) ?? null;
  const { detail, error, reload } = useDetail(props.appId);
  const app: AppSummary | null = detail?.summary ?? summary;
  const after = async (): Promise<void> => {
    await Promise.all([reload(), host.reload()]);
  };
  if (app === null) {
    return (
      <section class="page" aria-labelledby="detail-heading">
        <h2 id="detail-heading">{props.appId}</h2>
        {error !== null ? <ErrorBox error={error} /> : <Loading />}
        <Button onClick={() => host.navigate({ page: "apps" })}>Back to the apps</Button>
      </section>
    );
  }
  const name = app.displayName ?? app.name;
  return (
    <section class="page" aria-labelledby="detail-heading" data-testid="app-detail" data-app-id={app.name}>
      <div class="detail-head">
        <AppIcon icon={app.icon} name={app.name} displayName={app.displayName} />
        <div>
          <h2 id="detail-heading" class="detail-title">
            {name} <span class="app-version">v{shownVersion(app.activeVersion, app.versions)}</span>
          </h2>
          <p class="muted">
            {app.name}
            {app.publisher != null && app.publisher !== "" ? ` · by ${app.publisher}` : ""}
          </p>
        </div>
        <div class="app-badges">
          {app.dev === true && <Badge text={{ label: "DEV", tone: "warn", title: "A development install (apphost dev)" }} class="dev-badge" />}
          <Badge text={trustBadge(app.trust)} class="trust-badge" data={{ trust: app.trust }} />
          <Badge text={readinessBadge(app.readiness)} class="readiness-badge" data={{ readiness: app.readiness }} />
        </div>
      </div>
      <nav class="subnav" aria-label={`${name} sections`}>
        {DETAIL_TABS.map((t) => (
          <a
            key={t}
            href={`#/apps/${encodeURIComponent(app.name)}${t === "overview" ? "" : `/${t}`}`}
            aria-current={t === props.tab ? "page" : undefined}
            data-testid={`detail-tab-${t}`}
          >
            {TAB_LABELS[t]}
          </a>
        ))}
      </nav>
      {error !== null && <ErrorBox error={error} title="The app's details could not be loaded." />}
      {props.tab === "overview" && <Overview app={app} detail={detail} failed={error !== null} after={after} />}
      {props.tab === "entries" && <Entries app={app} detail={detail} />}
      {props.tab === "permissions" && <Permissions app={app} detail={detail} failed={error !== null} after={after} />}
      {props.tab === "data" && <Data appId={app.name} detail={detail} failed={error !== null} />}
      {props.tab === "tasks" && <TasksPage appId={props.appId} apps={[props.appId]} />}
      {props.tab === "versions" && <Versions app={app} detail={detail} after={after} />}
      {props.tab === "danger" && <Danger key={app.name} app={app} detail={detail} after={after} />}
    </section>
  );
}

/** While the detail loads: "Loading…"; once it failed (the error is shown above): a note. */
function Pending(props: { failed: boolean }): JSX.Element {
  return props.failed ? <Empty>Not available: the app's details could not be loaded.</Empty> : <Loading />;
}

/** "Bind secret <slot>": a write-only field; the value goes to Rust's secret store and is cleared. */
function BindSecret(props: { appId: string; slot: string; after: () => Promise<void> }): JSX.Element {
  const [value, setValue] = useState("");
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const id = `secret-${props.slot}`;
  const bind = async (): Promise<void> => {
    setBusy(true);
    try {
      await api.bindSecret(props.appId, props.slot, value);
      setValue("");
      setError(null);
      await props.after();
    } catch (e: unknown) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form
      class="row bind-secret"
      onSubmit={(e) => {
        e.preventDefault();
        void bind();
      }}
    >
      <label class="field field--inline" for={id}>
        <span>Value of {props.slot}</span>
      </label>
      <input id={id} type="password" autoComplete="off" value={value} onInput={(e) => setValue(e.currentTarget.value)} data-testid={`secret-value-${props.slot}`} />
      <Button type="submit" variant="primary" disabled={busy || value === ""} data-testid={`bind-secret-${props.slot}`}>
        Bind
      </Button>
      {error !== null && <ErrorBox error={error} />}
    </form>
  );
}

/** "Bind knowledge <template>": a folder path; Rust indexes it and records the binding. */
function BindKnowledge(props: { appId: string; template: string; after: () => Promise<void> }): JSX.Element {
  const [folder, setFolder] = useState("");
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [done, setDone] = useState<string | null>(null);
  const id = `knowledge-${props.template}`;
  const bind = async (): Promise<void> => {
    setBusy(true);
    try {
      const r = await api.bindKnowledge(props.appId, props.template, folder.trim());
      setDone(`${r.report.files} files, ${r.report.chunks} chunks indexed`);
      setError(null);
      await props.after();
    } catch (e: unknown) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form
      class="row bind-knowledge"
      onSubmit={(e) => {
        e.preventDefault();
        void bind();
      }}
    >
      <label class="field field--inline" for={id}>
        <span>Folder for {props.template}</span>
      </label>
      <input id={id} type="text" placeholder="/home/me/Documents/handbook" value={folder} onInput={(e) => setFolder(e.currentTarget.value)} data-testid={`knowledge-folder-${props.template}`} />
      <Button type="submit" variant="primary" disabled={busy || folder.trim() === ""} data-testid={`bind-knowledge-${props.template}`}>
        Bind
      </Button>
      {done !== null && <span class="muted">{done}</span>}
      {error !== null && <ErrorBox error={error} />}
    </form>
  );
}

function Overview(props: { app: AppSummary; detail: AppDetail | null; failed: boolean; after: () => Promise<void> }): JSX.Element {
  const { app, detail } = props;
  const readiness = detail?.readiness;
  const reasons = readinessReasons(readiness);
  const setup = readiness?.setupActions ?? [];
  return (
    <div data-testid="detail-overview">
      {app.description !== "" && <p>{app.description}</p>}
      <h3>Readiness</h3>
      <p>
        <Badge text={readinessBadge(readiness?.status ?? app.readiness)} />{" "}
        {reasons.length > 0 ? reasons.join(" ") : readinessWords(app.readiness)}
      </p>
      {setup.length > 0 && (
        <ul class="plain" data-testid="setup-actions">
          {setup.map((a) => (
            <li key={a.key}>
              <strong>{a.title}</strong> <span class="muted">({a.kind})</span>
              {a.description != null && a.description !== "" && <> — {a.description}</>}
              {a.kind === "configure-secret" && typeof a.target === "string" && a.target !== "" && (
                <BindSecret appId={app.name} slot={a.target} after={props.after} />
              )}
              {a.kind === "bind-knowledge" && typeof a.target === "string" && a.target !== "" && (
                <BindKnowledge appId={app.name} template={a.target} after={props.after} />
              )}
            </li>
          ))}
        </ul>
      )}
      <Facts
        rows={[
          ["Installed", app.installedAt ?? "–"],
          ["Updated", app.updatedAt ?? "–"],
          ["Package hash", <code class="hash">{app.packageHash ?? "–"}</code>],
        ]}
      />
      <h3>Read me</h3>
      {detail === null ? <Pending failed={props.failed} /> : detail.readme != null && detail.readme.trim() !== "" ? <Markdown source={detail.readme} /> : <Empty>The app has no read-me text.</Empty>}
    </div>
  );
}

function Entries(props: { app: AppSummary; detail: AppDetail | null }): JSX.Element {
  const host = useContext(HostContext);
  const entries = props.detail?.entries ?? props.app.entries ?? [];
  if (entries.length === 0) {
    return <Empty>The app has no entries.</Empty>;
  }
  return (
    <ul class="plain entry-list">
      {entries.map((e) => (
        <li key={e.key}>
          <span>
            {e.title ?? e.key} <span class="muted">({e.kind})</span>
          </span>
          {e.mountable && (
            <Button
              class="open-entry"
              data-entry-key={e.key}
              disabled={!props.app.enabled}
              onClick={() => void host.openEntry(props.app.name, e.key)}
            >
              Open
            </Button>
          )}
          {e.kind === "workflow" && <RunWorkflow app={props.app} entryKey={e.key} />}
        </li>
      ))}
    </ul>
  );
}

/** The Run action of a `workflow` entry: asks for the run's input (JSON, `{}` by default),
 * starts it (Rust reads the workflow from the store) and opens the Tasks page, where the run
 * and its review are. */
function RunWorkflow(props: { app: AppSummary; entryKey: string }): JSX.Element {
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [open, setOpen] = useState(false);
  const [input, setInput] = useState("{}");
  const run = async (): Promise<void> => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(input) as unknown;
    } catch {
      setError({ code: "api.bad_arguments", message: "The input is not valid JSON." });
      return;
    }
    setBusy(true);
    try {
      await api.workflowStart(props.app.name, props.entryKey, parsed);
      setError(null);
      setOpen(false);
      window.location.hash = "#/tasks";
    } catch (e: unknown) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <Button class="run-workflow" data-testid="run-workflow" data-entry-key={props.entryKey} disabled={!props.app.enabled || busy} onClick={() => setOpen(!open)}>
        Run…
      </Button>
      {open && (
        <div class="run-workflow-form">
          <label class="field">
            <span>Input (JSON)</span>
            <textarea rows={4} value={input} spellcheck={false} onInput={(e) => setInput(e.currentTarget.value)} data-testid="run-workflow-input" />
          </label>
          <Button variant="primary" disabled={busy} onClick={() => void run()} data-testid="run-workflow-start">
            Start
          </Button>
        </div>
      )}
      {error !== null && <ErrorBox error={error} testid="run-workflow-error" />}
    </>
  );
}

const PERMISSION_COLUMNS: ReadonlyArray<Column<DetailPermission>> = [
  {
    label: "Permission",
    rowHeader: true,
    cell: (p) => (
      <>
        <code>{permissionId(p)}</code>{" "}
        <span class="muted">
          {valueText(p.scope)} · {valueText(p.access)} · {p.required ? "required" : "optional"}
        </span>
      </>
    ),
  },
  {
    label: "Why",
    cell: (p) => {
      const domains = stringList(p.domains);
      return (
        <>
          {valueText(p.reason)}
          {domains.length > 0 && <div class="muted">Domains: {domains.join(", ")}</div>}
        </>
      );
    },
  },
  { label: "State", cell: (p) => <GrantBadge granted={p.granted} /> },
];

function Permissions(props: { app: AppSummary; detail: AppDetail | null; failed: boolean; after: () => Promise<void> }): JSX.Element {
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState<string | null>(null);
  if (props.detail === null) {
    return <Pending failed={props.failed} />;
  }
  const change = async (scope: string, to: boolean): Promise<void> => {
    setBusy(scope);
    try {
      await (to ? api.grant(props.app.name, scope) : api.revoke(props.app.name, scope));
      setError(null);
      await props.after();
    } catch (e: unknown) {
      setError(e);
    } finally {
      setBusy(null);
    }
  };
  return (
    <div>
      {error !== null && <ErrorBox error={error} />}
      <DataTable
        testid="detail-permissions"
        columns={[
          ...PERMISSION_COLUMNS,
          {
            label: "Action",
            cell: (p) => <GrantToggle granted={p.granted} testid="permission" label={permissionId(p)} disabled={busy !== null} onToggle={() => void change(permissionId(p), !p.granted)} />,
          },
        ]}
        rows={props.detail.permissions}
        rowKey={(p) => permissionId(p)}
        rowAttrs={(p) => ({ "data-key": permissionId(p), "data-granted": String(p.granted) })}
        empty="The app asks for no permissions."
      />
    </div>
  );
}

function Data(props: { appId: string; detail: AppDetail | null; failed: boolean }): JSX.Element {
  if (props.detail === null) {
    return <Pending failed={props.failed} />;
  }
  const d = props.detail.data;
  return (
    <div data-testid="detail-data">
      <Facts
        rows={[
          ["Storage", `${formatBytes(d.storageBytes)}${d.files !== undefined ? ` in ${d.files} files` : ""}`],
          ["Artifacts", String(d.artifacts)],
          ["Evidence records", String(d.evidence)],
        ]}
      />
      <p class="muted">To export the data, use “Export, then uninstall” in the Danger zone or `apphost export` in a terminal.</p>
      <FilesSection appId={props.appId} />
      <MaterialSection appId={props.appId} />
      <ServicesSection appId={props.appId} />
    </div>
  );
}

function Versions(props: { app: AppSummary; detail: AppDetail | null; after: () => Promise<void> }): JSX.Element {
  const host = useContext(HostContext);
  const [error, setError] = useState<unknown>(null);
  const input = useRef<HTMLInputElement>(null);
  const versions = props.detail?.versions ?? props.app.versions.map((v) => ({ version: v, installedAt: "", active: v === props.app.activeVersion }));
  const canRollback = (props.app.previousVersion ?? null) !== null || versions.length > 1;
  const rollback = async (): Promise<void> => {
    try {
      await api.rollback(props.app.name);
      setError(null);
      await props.after();
    } catch (e: unknown) {
      setError(e);
    }
  };
  return (
    <div data-testid="detail-versions">
      {error !== null && <ErrorBox error={error} />}
      <ul class="plain">
        {versions.map((v) => (
          <li key={v.version} data-version={v.version}>
            v{v.version} {v.active && <Badge text={{ label: "Active", tone: "good", title: "" }} />} <span class="muted">{v.installedAt}</span>
          </li>
        ))}
      </ul>
      <div class="row">
        <label class="button">
          Update from a package…
          <input
            ref={input}
            class="visually-hidden"
            type="file"
            accept=".zip,application/zip"
            data-testid="update-file"
            onChange={(e) => {
              const file = e.currentTarget.files?.[0];
              if (file !== undefined) {
                host.reviewFile(file);
              }
              e.currentTarget.value = "";
            }}
          />
        </label>
        <Button data-testid="rollback" disabled={!canRollback} onClick={() => void rollback()}>
          Roll back to the previous version
        </Button>
      </div>
    </div>
  );
}

/** The standard's four uninstall states (§9.2), offered as one chooser. */
export const MODES: Array<{ mode: UninstallMode; label: string; text: string; run: string }> = [
  { mode: "disable", label: "Disable only", text: "Hides its entries; the package, its data and grants stay.", run: "Disable" },
  { mode: "keep-data", label: "Uninstall, keep data", text: "Removes the app; its data stays for a later reinstall.", run: "Uninstall" },
  { mode: "delete-data", label: "Uninstall and delete data", text: "Removes the app and everything it stored.", run: "Uninstall and delete" },
  { mode: "export", label: "Export, then delete", text: "Writes the app's data to a file, then removes the app and its data.", run: "Export, then delete" },
];

/** What "Disable only" does, in words. */
function DisablePlanView(props: { plan: DisablePlan }): JSX.Element {
  const p = props.plan;
  return (
    <div class="plan" data-testid="uninstall-plan" data-mode="disable">
      <p>Hides:</p>
      <ul>
        {p.entriesHidden.length > 0 ? p.entriesHidden.map((e) => <li key={e}>entry {e}</li>) : <li>no entries</li>}
      </ul>
      <p>Keeps:</p>
      <ul>
        {p.retained.map((r) => (
          <li key={r}>{r}</li>
        ))}
        {p.dataFileCount > 0 && <li>{p.dataFileCount} data files ({formatBytes(p.dataBytes)})</li>}
      </ul>
      <p>Removes: nothing.</p>
    </div>
  );
}

/** The cleanup plan in words: what goes, what stays. The full plan is under "Details". */
export function PlanView(props: { plan: CleanupPlan | DisablePlan }): JSX.Element {
  if ("entriesHidden" in props.plan) {
    return <DisablePlanView plan={props.plan as DisablePlan} />;
  }
  const p = props.plan;
  const rows = p.rows ?? [];
  const removedData = Array.isArray(p.dataFilesRemoved) ? p.dataFilesRemoved.length : 0;
  const keptData = Array.isArray(p.dataFilesKept) ? p.dataFilesKept.length : 0;
  return (
    <div class="plan" data-testid="uninstall-plan">
      <p>Removes:</p>
      <ul>
        {(p.versions ?? []).length > 0 && <li>versions {(p.versions ?? []).join(", ")}</li>}
        {rows.map((r) => (
          <li key={r.table}>
            {r.rows} × {r.what}
          </li>
        ))}
        {p.blobBytesRemoved !== undefined && <li>{formatBytes(p.blobBytesRemoved)} of package files</li>}
        {removedData > 0 && (
          <li>
            {removedData} data files{p.dataBytes !== undefined ? ` (${formatBytes(p.dataBytes)})` : ""}
          </li>
        )}
      </ul>
      <p>Keeps:</p>
      <ul>
        {keptData > 0 && <li>{keptData} data files{p.dataDir !== undefined ? ` in ${p.dataDir}` : ""}</li>}
        {(p.retained ?? []).map((r) => (
          <li key={r}>{r}</li>
        ))}
        {keptData === 0 && (p.retained ?? []).length === 0 && <li>nothing</li>}
      </ul>
      <details>
        <summary>Details</summary>
        <pre class="json">{JSON.stringify(p, null, 2)}</pre>
      </details>
    </div>
  );
}

function Danger(props: { app: AppSummary; detail: AppDetail | null; after: () => Promise<void> }): JSX.Element {
  const host = useContext(HostContext);
  const [error, setError] = useState<unknown>(null);
  const [mode, setMode] = useState<UninstallMode | null>(null);
  const [plan, setPlan] = useState<CleanupPlan | DisablePlan | null>(null);
  const [exportPath, setExportPath] = useState("");
  const [done, setDone] = useState<string | null>(null);
  const name = props.app.displayName ?? props.app.name;
  const showPlan = useCallback(
    async (m: UninstallMode): Promise<void> => {
      setMode(m);
      setPlan(null);
      try {
        setPlan(await api.uninstallPlan(props.app.name, m));
        setError(null);
      } catch (e: unknown) {
        setError(e);
      }
    },
    [props.app.name],
  );
  // The manifest's storage.uninstallPolicy preselects a state (and shows its plan); `ask`: none.
  // (Only the detail of this app: the previous app's may still be shown for one render.)
  const ownDetail = props.detail !== null && props.detail.summary.name === props.app.name ? props.detail : null;
  const preset = ownDetail?.uninstallDefault ?? null;
  const presetDone = useRef(false);
  useEffect(() => {
    if (!presetDone.current && preset !== null && mode === null) {
      presetDone.current = true;
      void showPlan(preset);
    }
  }, [preset, mode, showPlan]);
  const enable = async (): Promise<void> => {
    try {
      await api.setEnabled(props.app.name, true);
      setError(null);
      setDone(null);
      await props.after();
    } catch (e: unknown) {
      setError(e);
    }
  };
  const run = async (): Promise<void> => {
    if (mode === null) {
      return;
    }
    try {
      if (mode === "disable") {
        await api.setEnabled(props.app.name, false);
        setDone(`${name} is disabled; its package and data are kept.`);
        setMode(null);
        setPlan(null);
        await props.after();
        return;
      }
      const result = await api.uninstall(props.app.name, mode, mode === "export" ? exportPath : undefined);
      setDone(result.exportedTo != null ? `Uninstalled; data exported to ${result.exportedTo}.` : "Uninstalled.");
      await host.reload();
      host.navigate({ page: "apps" });
    } catch (e: unknown) {
      setError(e);
    }
  };
  const chosen = MODES.find((m) => m.mode === mode);
  const policy = ownDetail?.uninstallPolicy ?? null;
  return (
    <div class="danger" data-testid="detail-danger">
      {error !== null && <ErrorBox error={error} />}
      {done !== null && <p role="status">{done}</p>}
      {!props.app.enabled && (
        <p>
          {name} is disabled.{" "}
          <Button data-testid="toggle-enabled" onClick={() => void enable()}>
            Enable the app
          </Button>
        </p>
      )}
      <fieldset class="modes" data-testid="uninstall-chooser" data-default={preset ?? ""}>
        <legend>Disable or uninstall: choose what happens to the app and its data</legend>
        <p class="muted" data-testid="uninstall-policy">
          {preset !== null
            ? `The app asks for “${MODES.find((m) => m.mode === preset)?.label ?? preset}” by default (storage.uninstallPolicy: ${policy ?? ""}).`
            : "Pick one: the app sets no default" + (policy === "ask" ? " (storage.uninstallPolicy: ask)." : ".")}
        </p>
        {MODES.map((m) => (
          <label key={m.mode} class="mode">
            <input
              type="radio"
              name="uninstall-mode"
              value={m.mode}
              checked={mode === m.mode}
              disabled={m.mode === "disable" && !props.app.enabled}
              onChange={() => void showPlan(m.mode)}
              data-testid={`uninstall-plan-${m.mode}`}
            />
            <span>
              <strong>{m.label}</strong>
              {m.mode === preset && <span class="muted"> (default)</span>} <span class="muted">{m.text}</span>
            </span>
          </label>
        ))}
      </fieldset>
      {mode !== null && chosen !== undefined && (
        <div class="confirm" data-mode={mode}>
          <h4>Before “{chosen.label}” runs</h4>
          {plan === null ? error === null && <Loading label="Computing the plan…" /> : <PlanView plan={plan} />}
          {mode === "export" && (
            <label class="field">
              <span>Export to (a file path on this computer)</span>
              <input data-testid="export-path" value={exportPath} onInput={(e) => setExportPath(e.currentTarget.value)} />
            </label>
          )}
          <div class="row">
            <Button onClick={() => { setMode(null); setPlan(null); }}>Cancel</Button>
            <Button
              variant="danger"
              data-testid="uninstall-confirm"
              disabled={plan === null || (mode === "export" && exportPath.trim() === "")}
              onClick={() => void run()}
            >
              {chosen.run} {name}
            </Button>
          </div>
        </div>
      )}
    </div>
  );
}
