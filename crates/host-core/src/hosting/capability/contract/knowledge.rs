//! `lime.knowledge`: search a declared knowledge template the user bound to a folder.

use super::*;

pub fn contract() -> NamespaceContract {
    let hit = object(
        &[
            ("document", string()),
            ("section", any()),
            ("start", integer(0, None)),
            ("end", integer(0, None)),
            ("snippet", string()),
            ("score", json!({"type": "number"})),
        ],
        &["document", "snippet"],
    );
    NamespaceContract {
        capability: "lime.knowledge",
        rows: vec![row(
            "search",
            "The best chunks of a bound template's documents, best first.",
            closed(
                &[
                    ("template", string()),
                    ("query", string()),
                    ("topK", integer(1, Some(50))),
                ],
                &["template", "query"],
            ),
            object(
                &[("template", string()), ("hits", array(hit))],
                &["template", "hits"],
            ),
        )],
    }
}
