//! A bounded YAML 1.2 loader that produces `serde_json::Value`.
//!
//! Built on yaml-rust2's pull parser so that limits are enforced *while* parsing, before any
//! expansion happens: nesting depth, the number of nodes produced including alias expansion
//! (a "billion laughs" document is stopped after `max_nodes`, not after it has eaten the heap;
//! the error says whether the document itself was over, `NodeLimit`, or its anchors and aliases
//! pushed it over, `AliasLimit`),
//! and the bytes that anchors and aliases copy (an alias to a 500 KiB string is one node but
//! 500 KiB of memory; the copies are counted, and refused, before they are made). So a document
//! of `n` bytes materialises at most `n + max_alias_bytes` bytes of scalar text, in at most
//! `max_nodes` nodes (both counts include the copy the anchor table keeps of each anchored node).
//! Scalars are resolved with the YAML 1.2 core schema; anything else (timestamps, for instance)
//! stays a string, which is what the Agent App reference CLI does too. Duplicate mapping keys
//! are an error, as the YAML spec requires.

use serde_json::{Map, Number, Value};
use yaml_rust2::parser::{Event, Parser};
use yaml_rust2::scanner::TScalarStyle;

#[derive(Debug, Clone, Copy)]
pub struct YamlLimits {
    pub max_depth: usize,
    pub max_nodes: usize,
    /// Bytes of scalar text (keys included) that anchors and aliases may copy in total: each
    /// anchored node is copied once when defined, and once more for every alias to it.
    pub max_alias_bytes: usize,
}

impl Default for YamlLimits {
    fn default() -> Self {
        YamlLimits {
            max_depth: 64,
            max_nodes: 100_000,
            max_alias_bytes: 1024 * 1024,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum YamlError {
    Syntax {
        line: usize,
        col: usize,
        message: String,
    },
    DepthLimit {
        limit: usize,
    },
    /// The document itself holds more than `max_nodes` nodes (no alias needed).
    NodeLimit {
        limit: usize,
    },
    /// The copies made by anchors and aliases push the node count past `max_nodes`.
    AliasLimit {
        limit: usize,
    },
    ExpansionLimit {
        limit: usize,
    },
    DuplicateKey {
        key: String,
    },
    ComplexKey,
    UnknownAnchor,
    MultipleDocuments,
}

impl std::fmt::Display for YamlError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            YamlError::Syntax { line, col, message } => {
                write!(
                    f,
                    "YAML syntax error at line {line}, column {col}: {message}"
                )
            }
            YamlError::DepthLimit { limit } => write!(f, "YAML nesting deeper than {limit} levels"),
            YamlError::NodeLimit { limit } => {
                write!(f, "YAML document has more than {limit} nodes")
            }
            YamlError::AliasLimit { limit } => write!(
                f,
                "YAML anchors and aliases expand the document past {limit} nodes (alias expansion is bounded)"
            ),
            YamlError::ExpansionLimit { limit } => write!(
                f,
                "YAML anchors and aliases copy more than {limit} bytes (alias expansion is bounded)"
            ),
            YamlError::DuplicateKey { key } => write!(f, "duplicate mapping key {key:?}"),
            YamlError::ComplexKey => f.write_str("mapping keys must be scalars"),
            YamlError::UnknownAnchor => f.write_str("alias refers to an unknown anchor"),
            YamlError::MultipleDocuments => f.write_str("only one YAML document is allowed"),
        }
    }
}

enum Frame {
    Seq {
        items: Vec<Value>,
        anchor: usize,
        nodes: usize,
        bytes: usize,
        depth: usize,
    },
    Map {
        map: Map<String, Value>,
        key: Option<String>,
        anchor: usize,
        nodes: usize,
        bytes: usize,
        depth: usize,
    },
}

/// A finished node with the bookkeeping needed to bound alias expansion: how many nodes it
/// holds, how many bytes of scalar text, and how deep it is.
struct Node {
    value: Value,
    nodes: usize,
    bytes: usize,
    depth: usize,
}

/// Parses one YAML document (an empty document is `null`).
pub fn parse(text: &str, limits: YamlLimits) -> Result<Value, YamlError> {
    let mut parser = Parser::new_from_str(text);
    let mut stack: Vec<Frame> = Vec::new();
    // anchor id -> (value, node count, depth); yaml-rust2 numbers anchors from 1.
    let mut anchors: Vec<Option<Node>> = Vec::new();
    // Nodes as written, and nodes copied by anchors and aliases: the limit is on their sum,
    // and which of the two pushed it over decides the error.
    let mut count = NodeCount::default();
    // Bytes copied by anchors and aliases so far.
    let mut copied = 0usize;
    let mut root: Option<Value> = None;
    let mut documents = 0usize;

    loop {
        let (event, mark) = parser.next_token().map_err(|e| {
            // yaml-rust2 stops flow collections nested deeper than its own bound.
            if e.info().contains("recursion limit") {
                YamlError::DepthLimit {
                    limit: limits.max_depth,
                }
            } else {
                YamlError::Syntax {
                    line: e.marker().line(),
                    col: e.marker().col() + 1,
                    message: e.info().to_owned(),
                }
            }
        })?;
        let finished: Option<(Node, usize)> = match event {
            Event::StreamStart | Event::Nothing => None,
            Event::StreamEnd => break,
            Event::DocumentStart => {
                documents += 1;
                if documents > 1 {
                    return Err(YamlError::MultipleDocuments);
                }
                None
            }
            Event::DocumentEnd => None,
            Event::Scalar(text, style, anchor, tag) => {
                count.written(1, limits)?;
                let forced_str = tag.as_ref().is_some_and(|t| t.suffix == "str");
                let bytes = text.len();
                let value = if style == TScalarStyle::Plain && !forced_str {
                    resolve_plain(&text)
                } else {
                    Value::String(text)
                };
                Some((
                    Node {
                        value,
                        nodes: 1,
                        bytes,
                        depth: 0,
                    },
                    anchor,
                ))
            }
            Event::Alias(id) => {
                let node = anchors
                    .get(id)
                    .and_then(|a| a.as_ref())
                    .ok_or(YamlError::UnknownAnchor)?;
                count.copied(node.nodes, limits)?;
                copied = copied.saturating_add(node.bytes);
                check_copied(copied, limits)?;
                if stack.len() + node.depth > limits.max_depth {
                    return Err(YamlError::DepthLimit {
                        limit: limits.max_depth,
                    });
                }
                Some((
                    Node {
                        value: node.value.clone(),
                        nodes: node.nodes,
                        bytes: node.bytes,
                        depth: node.depth,
                    },
                    0,
                ))
            }
            Event::SequenceStart(anchor, _) | Event::MappingStart(anchor, _) => {
                count.written(1, limits)?;
                if stack.len() + 1 > limits.max_depth {
                    return Err(YamlError::DepthLimit {
                        limit: limits.max_depth,
                    });
                }
                stack.push(if matches!(event, Event::SequenceStart(..)) {
                    Frame::Seq {
                        items: Vec::new(),
                        anchor,
                        nodes: 1,
                        bytes: 0,
                        depth: 1,
                    }
                } else {
                    Frame::Map {
                        map: Map::new(),
                        key: None,
                        anchor,
                        nodes: 1,
                        bytes: 0,
                        depth: 1,
                    }
                });
                None
            }
            Event::SequenceEnd | Event::MappingEnd => match stack.pop() {
                Some(Frame::Seq {
                    items,
                    anchor,
                    nodes,
                    bytes,
                    depth,
                }) => Some((
                    Node {
                        value: Value::Array(items),
                        nodes,
                        bytes,
                        depth,
                    },
                    anchor,
                )),
                Some(Frame::Map {
                    map,
                    anchor,
                    nodes,
                    bytes,
                    depth,
                    ..
                }) => Some((
                    Node {
                        value: Value::Object(map),
                        nodes,
                        bytes,
                        depth,
                    },
                    anchor,
                )),
                None => {
                    return Err(YamlError::Syntax {
                        line: mark.line(),
                        col: mark.col() + 1,
                        message: "unbalanced collection end".into(),
                    })
                }
            },
        };

        let Some((node, anchor)) = finished else {
            continue;
        };
        if anchor > 0 {
            // The anchor table keeps its own copy: count its nodes and bytes before making it.
            count.copied(node.nodes, limits)?;
            copied = copied.saturating_add(node.bytes);
            check_copied(copied, limits)?;
            if anchors.len() <= anchor {
                anchors.resize_with(anchor + 1, || None);
            }
            anchors[anchor] = Some(Node {
                value: node.value.clone(),
                nodes: node.nodes,
                bytes: node.bytes,
                depth: node.depth,
            });
        }
        match stack.last_mut() {
            None => root = Some(node.value),
            Some(Frame::Seq {
                items,
                nodes,
                bytes,
                depth,
                ..
            }) => {
                *nodes += node.nodes;
                *bytes = bytes.saturating_add(node.bytes);
                *depth = (*depth).max(node.depth + 1);
                items.push(node.value);
            }
            Some(Frame::Map {
                map,
                key,
                nodes,
                bytes,
                depth,
                ..
            }) => {
                *nodes += node.nodes;
                *bytes = bytes.saturating_add(node.bytes);
                *depth = (*depth).max(node.depth + 1);
                match key.take() {
                    None => {
                        let k = match node.value {
                            Value::String(s) => s,
                            Value::Null => "null".to_owned(),
                            Value::Bool(b) => b.to_string(),
                            Value::Number(n) => n.to_string(),
                            _ => return Err(YamlError::ComplexKey),
                        };
                        if map.contains_key(&k) {
                            return Err(YamlError::DuplicateKey { key: k });
                        }
                        *key = Some(k);
                    }
                    Some(k) => {
                        map.insert(k, node.value);
                    }
                }
            }
        }
    }
    Ok(root.unwrap_or(Value::Null))
}

/// Nodes produced so far: those written in the document, and the copies that anchors (the
/// anchor table's own copy) and aliases make. Over `max_nodes` in all, the error names the
/// cause: `NodeLimit` when the written nodes alone are over, else `AliasLimit`.
#[derive(Default)]
struct NodeCount {
    written: usize,
    copied: usize,
}

impl NodeCount {
    fn written(&mut self, n: usize, limits: YamlLimits) -> Result<(), YamlError> {
        self.written = self.written.saturating_add(n);
        self.check(limits)
    }

    fn copied(&mut self, n: usize, limits: YamlLimits) -> Result<(), YamlError> {
        self.copied = self.copied.saturating_add(n);
        self.check(limits)
    }

    fn check(&self, limits: YamlLimits) -> Result<(), YamlError> {
        let limit = limits.max_nodes;
        if self.written > limit {
            Err(YamlError::NodeLimit { limit })
        } else if self.written.saturating_add(self.copied) > limit {
            Err(YamlError::AliasLimit { limit })
        } else {
            Ok(())
        }
    }
}

fn check_copied(copied: usize, limits: YamlLimits) -> Result<(), YamlError> {
    if copied > limits.max_alias_bytes {
        Err(YamlError::ExpansionLimit {
            limit: limits.max_alias_bytes,
        })
    } else {
        Ok(())
    }
}

/// YAML 1.2 core schema resolution for plain scalars.
fn resolve_plain(s: &str) -> Value {
    match s {
        "" | "~" | "null" | "Null" | "NULL" => return Value::Null,
        "true" | "True" | "TRUE" => return Value::Bool(true),
        "false" | "False" | "FALSE" => return Value::Bool(false),
        _ => {}
    }
    if let Some(n) = parse_int(s) {
        return Value::Number(n);
    }
    if is_core_float(s) {
        if let Some(n) = s.parse::<f64>().ok().and_then(Number::from_f64) {
            return Value::Number(n);
        }
    }
    // .inf / .nan have no JSON form: keep them as text.
    Value::String(s.to_owned())
}

fn parse_int(s: &str) -> Option<Number> {
    let (neg, digits) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let parsed = if let Some(oct) = s.strip_prefix("0o") {
        i64::from_str_radix(oct, 8).ok()
    } else if let Some(hex) = s.strip_prefix("0x") {
        i64::from_str_radix(hex, 16).ok()
    } else if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        digits.parse::<i64>().ok().map(|v| if neg { -v } else { v })
    } else {
        None
    };
    parsed.map(Number::from)
}

/// `[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?`
fn is_core_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = usize::from(matches!(b.first(), Some(b'-' | b'+')));
    let int_start = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    let int_digits = i - int_start;
    let mut frac_digits = 0;
    if i < b.len() && b[i] == b'.' {
        i += 1;
        let f = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        frac_digits = i - f;
    }
    if int_digits == 0 && frac_digits == 0 {
        return false;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'-' || b[i] == b'+') {
            i += 1;
        }
        let e = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == e {
            return false;
        }
    }
    i == b.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn p(s: &str) -> Result<Value, YamlError> {
        parse(s, YamlLimits::default())
    }

    #[test]
    fn core_schema_scalars() {
        let v = p("a: 1\nb: 1.5\nc: true\nd: ~\ne: '1'\nf: 2026-01-08T00:00:00Z\ng: 0.10\nh: \"0.10.0\"\ni: .inf\nj: 0x1f\n").unwrap();
        assert_eq!(
            v,
            json!({"a": 1, "b": 1.5, "c": true, "d": null, "e": "1", "f": "2026-01-08T00:00:00Z",
                   "g": 0.1, "h": "0.10.0", "i": ".inf", "j": 31})
        );
    }

    #[test]
    fn block_scalars_flow_maps_and_anchors_work() {
        let v = p("x: &a {k: [1, 2]}\ny: *a\nz: |\n  line1\n  line2\n").unwrap();
        assert_eq!(
            v,
            json!({"x": {"k": [1, 2]}, "y": {"k": [1, 2]}, "z": "line1\nline2\n"})
        );
    }

    #[test]
    fn billion_laughs_is_stopped() {
        let mut doc = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..10 {
            let prev = format!("*a{}", i - 1);
            doc.push_str(&format!(
                "a{i}: &a{i} [{}]\n",
                [prev.as_str(); 10].join(", ")
            ));
        }
        assert!(matches!(p(&doc), Err(YamlError::AliasLimit { .. })));
    }

    #[test]
    fn a_large_document_without_aliases_hits_the_node_limit_not_the_alias_limit() {
        // 10,000 permissions of 5 fields each: 110,001 nodes as written, not one alias.
        let mut doc = String::from("permissions:\n");
        for i in 0..10_000 {
            doc.push_str(&format!(
                "  - {{key: p{i}, scope: tool, access: read, required: false, reason: r}}\n"
            ));
        }
        assert_eq!(
            p(&doc),
            Err(YamlError::NodeLimit {
                limit: YamlLimits::default().max_nodes
            })
        );
        // Just at the limit it parses: 1 mapping + 1 key + 1 sequence + n scalars.
        let limits = YamlLimits {
            max_nodes: 103,
            ..YamlLimits::default()
        };
        let doc = format!("k: [{}]\n", vec!["x"; 100].join(", "));
        assert!(parse(&doc, limits).is_ok());
        let doc = format!("k: [{}]\n", vec!["x"; 101].join(", "));
        assert_eq!(
            parse(&doc, limits),
            Err(YamlError::NodeLimit { limit: 103 })
        );
        // The same count reached through one alias is the alias limit.
        let doc = format!("a: &a [{}]\nb: *a\n", vec!["x"; 40].join(", "));
        assert_eq!(
            parse(&doc, limits),
            Err(YamlError::AliasLimit { limit: 103 })
        );
    }

    fn with_alias_bytes(max_alias_bytes: usize) -> YamlLimits {
        YamlLimits {
            max_alias_bytes,
            ..YamlLimits::default()
        }
    }

    /// `x: &a <anchored>` then `refs:` with `n` aliases to it, each written by `alias`.
    fn doc_with_aliases(anchored: &str, n: usize, alias: &str) -> String {
        let mut doc = format!("x: &a {anchored}\nrefs:\n");
        for _ in 0..n {
            doc.push_str("  - ");
            doc.push_str(alias);
            doc.push('\n');
        }
        doc
    }

    #[test]
    fn alias_copies_are_counted_in_bytes_exactly() {
        // The anchor keeps one copy of its 1,000 bytes, and each of 9 aliases makes another:
        // 10,000 bytes copied in all.
        let long = "y".repeat(1000);
        let doc = doc_with_aliases(&long, 9, "*a");
        let v = parse(&doc, with_alias_bytes(10_000)).unwrap();
        assert_eq!(v["refs"][8].as_str().map(str::len), Some(1000));
        assert_eq!(
            parse(&doc, with_alias_bytes(9_999)),
            Err(YamlError::ExpansionLimit { limit: 9_999 })
        );
    }

    #[test]
    fn alias_to_a_long_string_is_stopped_before_it_is_copied() {
        // The shape of the report: a 500 KiB string and tens of thousands of aliases to it
        // (~45 GB once expanded, one node each). Stopped after ~1 MiB of copies.
        let long = "z".repeat(500 * 1024);
        let mut doc = format!("big: &s {long}\nrefs: [");
        doc.push_str(&["*s"; 90_000].join(", "));
        doc.push_str("]\n");
        assert_eq!(
            p(&doc),
            Err(YamlError::ExpansionLimit {
                limit: YamlLimits::default().max_alias_bytes
            })
        );
    }

    #[test]
    fn alias_to_a_sequence_or_mapping_counts_every_scalar_inside() {
        // 100 items of 100 bytes: 10,000 bytes per copy (keys count too for mappings).
        let item = "q".repeat(100);
        let seq = format!("[{}]", vec![item.as_str(); 100].join(", "));
        let doc = doc_with_aliases(&seq, 3, "*a");
        assert!(parse(&doc, with_alias_bytes(40_000)).is_ok());
        assert_eq!(
            parse(&doc, with_alias_bytes(39_999)),
            Err(YamlError::ExpansionLimit { limit: 39_999 })
        );

        let map: String = (0..100)
            .map(|i| format!("k{i:02}: {}", &item[..97]))
            .collect::<Vec<_>>()
            .join(", ");
        let doc = doc_with_aliases(&format!("{{{map}}}"), 3, "*a");
        let v = parse(&doc, with_alias_bytes(40_000)).unwrap();
        assert_eq!(v["refs"][2]["k99"].as_str().map(str::len), Some(97));
        assert_eq!(
            parse(&doc, with_alias_bytes(39_999)),
            Err(YamlError::ExpansionLimit { limit: 39_999 })
        );
    }

    #[test]
    fn merge_keys_count_like_any_alias() {
        // `<<: *a` is an alias to a mapping under the key `<<` (the loader does not merge).
        let item = "m".repeat(1000);
        let mut doc = format!("base: &a {{k: {item}}}\n");
        for i in 0..20 {
            doc.push_str(&format!("m{i}:\n  <<: *a\n  own: {i}\n"));
        }
        let v = parse(&doc, with_alias_bytes(21 * 1001)).unwrap();
        assert_eq!(v["m19"]["<<"]["k"].as_str().map(str::len), Some(1000));
        assert_eq!(
            parse(&doc, with_alias_bytes(21 * 1001 - 1)),
            Err(YamlError::ExpansionLimit {
                limit: 21 * 1001 - 1
            })
        );
        // With the default limits, a merge-key bomb over a 64 KiB mapping is stopped.
        let big = "b".repeat(64 * 1024);
        let mut doc = format!("base: &a {{k: {big}}}\n");
        for i in 0..1000 {
            doc.push_str(&format!("m{i}: {{<<: *a}}\n"));
        }
        assert!(matches!(p(&doc), Err(YamlError::ExpansionLimit { .. })));
    }

    #[test]
    fn nested_anchors_count_each_copy() {
        // Every anchored level keeps its own copy of what it holds.
        let long = "n".repeat(1000);
        let doc = format!("x: &a [&b [&c [&d {long}]]]\n");
        assert!(parse(&doc, with_alias_bytes(4000)).is_ok());
        assert!(matches!(
            parse(&doc, with_alias_bytes(3999)),
            Err(YamlError::ExpansionLimit { .. })
        ));
    }

    #[test]
    fn nested_anchors_over_empty_items_count_their_node_copies() {
        // 60 nested anchored sequences around 90,000 empty items: no scalar bytes at all, but
        // every level would keep its own copy of all 90,000 nodes.
        let mut doc = String::new();
        for i in 0..60 {
            doc.push_str(&format!("{}- &a{i}\n", "  ".repeat(i)));
        }
        let indent = "  ".repeat(60);
        for _ in 0..90_000 {
            doc.push_str(&indent);
            doc.push_str("-\n");
        }
        assert_eq!(
            p(&doc),
            Err(YamlError::AliasLimit {
                limit: YamlLimits::default().max_nodes
            })
        );
        // One anchored level of 40,000 items fits (80,000 nodes with its copy).
        let doc = format!("x: &a\n{}", "  -\n".repeat(40_000));
        assert_eq!(p(&doc).unwrap()["x"].as_array().map(Vec::len), Some(40_000));
    }

    #[test]
    fn deep_nesting_is_stopped_without_recursion() {
        let doc = "[".repeat(100_000) + &"]".repeat(100_000);
        assert!(matches!(p(&doc), Err(YamlError::DepthLimit { .. })));
        let block: String = (0..200)
            .map(|i| format!("{}k{i}:\n", "  ".repeat(i)))
            .collect();
        assert!(matches!(
            p(&block),
            Err(YamlError::DepthLimit { limit: 64 })
        ));
    }

    #[test]
    fn alias_depth_counts_toward_the_limit() {
        let limits = YamlLimits {
            max_depth: 4,
            max_nodes: 1000,
            ..YamlLimits::default()
        };
        let doc = "a: &x [[[1]]]\nb: [[*x]]\n";
        assert!(matches!(
            parse(doc, limits),
            Err(YamlError::DepthLimit { .. })
        ));
    }

    #[test]
    fn duplicate_keys_are_rejected() {
        assert_eq!(
            p("a: 1\na: 2\n"),
            Err(YamlError::DuplicateKey { key: "a".into() })
        );
    }

    #[test]
    fn syntax_errors_carry_a_position() {
        match p("a: [1, 2\nb: 3\n") {
            Err(YamlError::Syntax { line, .. }) => assert!(line >= 1),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn multiple_documents_are_rejected() {
        assert_eq!(p("a: 1\n---\nb: 2\n"), Err(YamlError::MultipleDocuments));
    }

    #[test]
    fn empty_document_is_null() {
        assert_eq!(p("").unwrap(), Value::Null);
    }
}
