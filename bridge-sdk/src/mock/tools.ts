// lime.tools in memory (crates/host-core/src/hosting/capability/services/tools.rs): the tools
// the app declares and the user granted; a destructive one asks the mock user, and a refusal is
// APP_E002 `tools.denied`, as in the host.
import { ErrorCodes } from "../errors.js";
import { invalid, isRecord, refuse, type MockContext, type Service } from "./common.js";

const TOOL_REF = /^[a-z0-9][a-z0-9_-]{0,63}\/[A-Za-z0-9_.-]{1,128}$/;

export function createTools(ctx: MockContext) {
  const tools = ctx.options.tools ?? {};
  const toolPrompts: string[] = [];
  const entries = () => Object.entries(tools).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const service: Service = {
    list() {
      return {
        tools: entries()
          .filter(([, t]) => t.declared !== false && t.granted !== false)
          .map(([tool, t]) => {
            const [server, name] = tool.split("/") as [string, string];
            return {
              tool,
              server,
              name,
              ...(t.description === undefined ? {} : { description: t.description }),
              inputSchema: t.inputSchema ?? { type: "object" },
              needsApproval: t.needsApproval === true,
            };
          }),
      };
    },
    invoke(a) {
      const tool = a["tool"];
      if (typeof tool !== "string" || !TOOL_REF.test(tool)) throw invalid('args.tool must be "<server>/<tool>"', "tools.invalid");
      const args = a["arguments"] ?? {};
      if (!isRecord(args)) throw invalid("the arguments must be a JSON object", "tools.invalid");
      const t = Object.hasOwn(tools, tool) ? tools[tool] : undefined;
      if (!t || t.declared === false) throw refuse(ErrorCodes.PERMISSION_DENIED, `the app declares no toolRefs[] item for ${tool}`, "tools.not_declared");
      if (t.granted === false) throw refuse(ErrorCodes.PERMISSION_DENIED, `${tool} is not granted to the app`, "tools.not_granted");
      if (t.needsApproval) {
        toolPrompts.push(tool);
        if (ctx.options.approveTools !== true) throw refuse(ErrorCodes.PERMISSION_DENIED, "the user did not approve this destructive tool call", "tools.denied");
      }
      return t.run ? t.run(args) : { content: [{ type: "text", text: JSON.stringify(args) }], isError: false };
    },
  };
  const notAnObject = invalid('args.tool must be "<server>/<tool>"', "tools.invalid");
  return { service, notAnObject, toolPrompts };
}
