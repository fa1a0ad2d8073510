//! A search query into an FTS5 expression of *terms* only. The app's text is never handed to
//! FTS5's query parser as written: it is split into runs of letters and digits (the same
//! characters FTS5's `unicode61` tokenizer keeps), each run becomes a double-quoted string
//! (which cannot hold an operator, a column filter, `NEAR`, `*` or `^`), and the strings are
//! joined with `OR` (BM25 ranks documents matching more of them first). Bounded: at most
//! [`MAX_QUERY_BYTES`] bytes and [`MAX_TERMS`] terms.

/// Longest query accepted (bytes).
pub const MAX_QUERY_BYTES: usize = 1024;
/// Most terms in one query.
pub const MAX_TERMS: usize = 32;
/// Longest term kept (characters); longer runs are cut (nothing indexes longer words usefully).
const MAX_TERM_CHARS: usize = 64;

/// Why a query was refused (`knowledge.query_invalid`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryError(pub String);

/// The FTS5 `MATCH` expression for `query`.
pub fn fts_expression(query: &str) -> Result<String, QueryError> {
    if query.len() > MAX_QUERY_BYTES {
        return Err(QueryError(format!(
            "the query is {} bytes (at most {MAX_QUERY_BYTES})",
            query.len()
        )));
    }
    let terms: Vec<String> = query
        .split(|c: char| !c.is_alphanumeric())
        .filter(|t| !t.is_empty())
        .map(|t| t.chars().take(MAX_TERM_CHARS).collect())
        .collect();
    if terms.is_empty() {
        return Err(QueryError("the query has no words to search for".into()));
    }
    if terms.len() > MAX_TERMS {
        return Err(QueryError(format!(
            "the query has {} words (at most {MAX_TERMS})",
            terms.len()
        )));
    }
    let mut seen = std::collections::BTreeSet::new();
    let quoted: Vec<String> = terms
        .into_iter()
        .filter(|t| seen.insert(t.to_lowercase()))
        .map(|t| format!("\"{t}\""))
        .collect();
    Ok(quoted.join(" OR "))
}
