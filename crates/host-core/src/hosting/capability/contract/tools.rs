//! `lime.tools`: the MCP tools the user granted the app (`hosting/tools/`).

use super::*;

fn tool_ref() -> Value {
    described(bounded(3, 257), "`<server>/<tool>`.")
}

pub fn contract() -> NamespaceContract {
    NamespaceContract {
        capability: "lime.tools",
        rows: vec![
            row(
                "list",
                "The declared tool refs the user granted, from the servers' last listings.",
                no_args(),
                object(
                    &[(
                        "tools",
                        array(object(
                            &[
                                ("tool", string()),
                                ("server", string()),
                                ("name", string()),
                                ("description", string()),
                                ("inputSchema", any()),
                                ("needsApproval", boolean()),
                            ],
                            &["tool", "server", "name"],
                        )),
                    )],
                    &["tools"],
                ),
            ),
            row(
                "invoke",
                "Call a granted tool (the MCP `tools/call` result).",
                closed(
                    &[("tool", tool_ref()), ("arguments", any_object())],
                    &["tool"],
                ),
                object(
                    &[
                        ("content", array(any())),
                        ("structuredContent", any()),
                        ("isError", boolean()),
                    ],
                    &["content"],
                ),
            ),
        ],
    }
}
