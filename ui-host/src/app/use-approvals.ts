// Pending agent-task approvals per app, for the running tabs' badges (refreshed on start and on
// `tasks:changed`).

import { useCallback, useState } from "preact/hooks";

import * as api from "../api.js";
import { approvalsByApp } from "../tasks.js";
import { isMissingCommand } from "./shell-state.js";

export function useApprovals(): { approvals: Map<string, number>; refresh(): Promise<void> } {
  const [approvals, setApprovals] = useState<Map<string, number>>(new Map());
  const refresh = useCallback(async (): Promise<void> => {
    try {
      setApprovals(approvalsByApp(await api.listTasks(undefined, "waiting_approval")));
    } catch (error: unknown) {
      if (!isMissingCommand(error)) console.warn("list_tasks failed", error);
    }
  }, []);
  return { approvals, refresh };
}
