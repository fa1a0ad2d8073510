// The stateless views the node tests render (build.mjs --test bundles this with preact external).
export { AppCard, AppCards } from "../views/app-list.js";
export { ReviewBody } from "../views/review.js";
export { MODES, PlanView } from "../views/app-detail.js";
export { DevBannerView, devBannerKey, devBannersShown, devStatusList } from "../views/dev-banner.js";
export { SelfUpdateNotice, noticeOf, refusalOf } from "../views/update-notice.js";
export { AuditTable, GrantsTable, KeysTable } from "../views/pages.js";
export { TabStrip } from "../views/surface.js";
export { Markdown } from "./markdown-view.js";
export { ErrorBox, ProgressBar } from "./components.js";
export { ModelView, keyText } from "../views/model.js";
export { TaskDetailView, TaskList } from "../views/tasks.js";
export { DataTable, FilterBar, FilterSelect, FilterText, GrantBadge, GrantToggle, appOptions } from "./data-table.js";
export { PathInstall } from "../app/path-install.js";
export { ShellHeader } from "../app/header.js";
export { ApprovalPromptView, promptItems } from "../views/approval-prompt.js";
export { appendBounded, asDevLine, devLineWhere, MAX_DEV_LINES } from "../views/dev-console.js";
export { MAX_EVIDENCE_LOOKS, PendingPanel, RunDetailView, RunList, Schedules, duration, evidenceLooks } from "../views/workflow-runs.js";
