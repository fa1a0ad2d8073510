//! A small, bounded scanner over an app's HTML and CSS for what the frame's CSP and sandbox
//! will refuse at run time (`surface/csp.rs`): inline scripts, inline styles and `style=`
//! attributes, `on*=` handlers, forms, and resources from other origins.
//!
//! It is a lexer, not an HTML parser: tags, attributes, comments and raw-text elements
//! (`script`, `style`) are recognized well enough for findings, never for rendering. Work is
//! linear in the bytes given (the caller bounds them); malformed markup is skipped, never an
//! error.

/// What one scan reports: a kind and the 1-based line it starts on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    pub kind: HitKind,
    pub line: u32,
    /// The attribute, tag or URL concerned (at most [`MAX_DETAIL`] characters).
    pub detail: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HitKind {
    InlineScript,
    InlineStyle,
    StyleAttribute,
    InlineHandler,
    Form,
    ExternalUrl,
}

/// Most characters of a URL or attribute name quoted in a hit.
pub const MAX_DETAIL: usize = 80;

fn detail(s: &str) -> String {
    let mut out: String = s.chars().take(MAX_DETAIL).collect();
    if s.chars().nth(MAX_DETAIL).is_some() {
        out.push('…');
    }
    out
}

/// Whether a URL as written loads from another origin: `http:`, `https:`, `ws:`, `wss:` or
/// scheme-relative `//host`. `data:`, `blob:` and relative URLs are the app's own.
pub fn is_external(url: &str) -> bool {
    let u = url.trim_start().to_ascii_lowercase();
    u.starts_with("//")
        || ["http:", "https:", "ws:", "wss:", "ftp:"]
            .iter()
            .any(|s| u.starts_with(s))
}

/// Counts lines as the scan moves forward (never backwards), so the cost stays linear.
struct Lines<'a> {
    text: &'a [u8],
    pos: usize,
    line: u32,
}

impl Lines<'_> {
    fn at(&mut self, pos: usize) -> u32 {
        let end = pos.min(self.text.len());
        if end > self.pos {
            self.line += self.text[self.pos..end]
                .iter()
                .filter(|b| **b == b'\n')
                .count() as u32;
            self.pos = end;
        }
        self.line
    }
}

fn find(hay: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    if from >= hay.len() {
        return None;
    }
    hay[from..]
        .windows(needle.len())
        .position(|w| w.eq_ignore_ascii_case(needle))
        .map(|p| p + from)
}

/// One parsed tag: lower-cased name, attributes (lower-cased name, value as written), and the
/// offsets of the attributes for line numbers.
struct Tag {
    name: String,
    attrs: Vec<(String, String, usize)>,
    end: usize,
}

const MAX_ATTRS: usize = 256;

/// Parses the tag opening at `start` (`text[start] == b'<'`); `None` when it is not one.
fn parse_tag(text: &[u8], start: usize) -> Option<Tag> {
    let mut i = start + 1;
    let name_start = i;
    while i < text.len() && (text[i].is_ascii_alphanumeric() || text[i] == b'-') {
        i += 1;
    }
    if i == name_start || !text[name_start].is_ascii_alphabetic() {
        return None;
    }
    let name = String::from_utf8_lossy(&text[name_start..i]).to_ascii_lowercase();
    let mut attrs = Vec::new();
    loop {
        while i < text.len() && (text[i].is_ascii_whitespace() || text[i] == b'/') {
            i += 1;
        }
        if i >= text.len() {
            return Some(Tag {
                name,
                attrs,
                end: text.len(),
            });
        }
        if text[i] == b'>' {
            return Some(Tag {
                name,
                attrs,
                end: i + 1,
            });
        }
        let a_start = i;
        while i < text.len()
            && !text[i].is_ascii_whitespace()
            && !matches!(text[i], b'=' | b'>' | b'/')
        {
            i += 1;
        }
        if i == a_start {
            i += 1; // a stray byte: skip it
            continue;
        }
        let a_name = String::from_utf8_lossy(&text[a_start..i]).to_ascii_lowercase();
        while i < text.len() && text[i].is_ascii_whitespace() {
            i += 1;
        }
        let mut value = String::new();
        if i < text.len() && text[i] == b'=' {
            i += 1;
            while i < text.len() && text[i].is_ascii_whitespace() {
                i += 1;
            }
            if i < text.len() && matches!(text[i], b'"' | b'\'') {
                let q = text[i];
                let v_start = i + 1;
                let v_end = text[v_start..]
                    .iter()
                    .position(|b| *b == q)
                    .map_or(text.len(), |p| p + v_start);
                value = String::from_utf8_lossy(&text[v_start..v_end]).into_owned();
                i = (v_end + 1).min(text.len());
            } else {
                let v_start = i;
                while i < text.len() && !text[i].is_ascii_whitespace() && text[i] != b'>' {
                    i += 1;
                }
                value = String::from_utf8_lossy(&text[v_start..i]).into_owned();
            }
        }
        if attrs.len() < MAX_ATTRS {
            attrs.push((a_name, value, a_start));
        }
    }
}

/// Whether a `<script type=…>` runs as script (and so needs `script-src`): no type, a
/// JavaScript MIME type, `module` or `importmap`. Data blocks (`application/json`, templates)
/// never run.
fn runs_as_script(ty: Option<&str>) -> bool {
    match ty.map(|t| t.trim().to_ascii_lowercase()) {
        None => true,
        Some(t) => t.is_empty() || t.contains("javascript") || t == "module" || t == "importmap",
    }
}

/// The attributes whose URL the browser loads as a subresource (never `<a href>`, which is a
/// navigation the sandbox governs).
fn loads_url(tag: &str, attr: &str) -> bool {
    match attr {
        "src" | "poster" => true,
        "href" => tag == "link",
        "data" => tag == "object",
        "srcset" => true,
        _ => false,
    }
}

/// Scans HTML (already cut to the caller's byte bound), keeping the hits `keep` accepts (what
/// the app allowed, e.g. inline styles, neither counts toward `max_hits` nor hides what follows).
pub fn scan_html(
    text: &[u8],
    hits: &mut Vec<Hit>,
    max_hits: usize,
    keep: &dyn Fn(HitKind) -> bool,
) {
    let mut lines = Lines {
        text,
        pos: 0,
        line: 1,
    };
    let mut i = 0;
    while i < text.len() && hits.len() < max_hits {
        let Some(lt) = text[i..].iter().position(|b| *b == b'<').map(|p| p + i) else {
            break;
        };
        if text[lt..].starts_with(b"<!--") {
            i = find(text, lt + 4, b"-->").map_or(text.len(), |p| p + 3);
            continue;
        }
        let Some(tag) = parse_tag(text, lt) else {
            i = lt + 1;
            continue;
        };
        let tag_line = lines.at(lt);
        let push = |hits: &mut Vec<Hit>, kind, line, d: &str| {
            if hits.len() < max_hits && keep(kind) {
                hits.push(Hit {
                    kind,
                    line,
                    detail: detail(d),
                });
            }
        };
        for (name, value, at) in &tag.attrs {
            let line = lines.at(*at);
            if name.len() > 2 && name.starts_with("on") {
                push(hits, HitKind::InlineHandler, line, name);
            } else if name == "style" {
                push(hits, HitKind::StyleAttribute, line, name);
                for url in css_urls(value.as_bytes()) {
                    push(hits, HitKind::ExternalUrl, line, &url.1);
                }
            } else if loads_url(&tag.name, name) {
                let first = value.split([' ', ',']).find(|s| !s.is_empty());
                let urls: Vec<&str> = if name == "srcset" {
                    value
                        .split(',')
                        .filter_map(|c| c.split_whitespace().next())
                        .collect()
                } else {
                    first.into_iter().collect()
                };
                if let Some(u) = urls.into_iter().find(|u| is_external(u)) {
                    push(hits, HitKind::ExternalUrl, line, u);
                }
            }
        }
        if tag.name == "form" {
            push(hits, HitKind::Form, tag_line, "form");
        }
        let attr = |n: &str| {
            tag.attrs
                .iter()
                .find(|(a, _, _)| a == n)
                .map(|(_, v, _)| v.as_str())
        };
        i = tag.end;
        if tag.name == "script" || tag.name == "style" {
            let close: &[u8] = if tag.name == "script" {
                b"</script"
            } else {
                b"</style"
            };
            let body_end = find(text, i, close).unwrap_or(text.len());
            let body = &text[i.min(body_end)..body_end];
            let has_body = body.iter().any(|b| !b.is_ascii_whitespace());
            if tag.name == "script" {
                if has_body && attr("src").is_none() && runs_as_script(attr("type")) {
                    push(hits, HitKind::InlineScript, tag_line, "script");
                }
            } else {
                if has_body {
                    push(hits, HitKind::InlineStyle, tag_line, "style");
                }
                let mut body_lines = Lines {
                    text: body,
                    pos: 0,
                    line: 0,
                };
                for (at, url) in css_urls(body) {
                    let line = tag_line + body_lines.at(at);
                    push(hits, HitKind::ExternalUrl, line, &url);
                }
            }
            i = find(text, body_end, b">").map_or(text.len(), |p| p + 1);
        }
    }
}

/// Scans a stylesheet for `url(…)` and `@import` of other origins.
pub fn scan_css(text: &[u8], hits: &mut Vec<Hit>, max_hits: usize) {
    let mut lines = Lines {
        text,
        pos: 0,
        line: 1,
    };
    for (at, url) in css_urls(text) {
        if hits.len() >= max_hits {
            break;
        }
        let line = lines.at(at);
        hits.push(Hit {
            kind: HitKind::ExternalUrl,
            line,
            detail: detail(&url),
        });
    }
}

/// The external URLs in CSS text: `url(…)` and `@import "…"`, with their byte offsets.
fn css_urls(text: &[u8]) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < text.len() {
        let next_url = find(text, i, b"url(");
        let next_import = find(text, i, b"@import");
        let (at, skip) = match (next_url, next_import) {
            (Some(u), Some(m)) if m < u => (m, 7),
            (Some(u), _) => (u, 4),
            (None, Some(m)) => (m, 7),
            (None, None) => break,
        };
        let mut j = at + skip;
        let skip_blank = |mut j: usize| {
            while j < text.len()
                && (text[j].is_ascii_whitespace() || matches!(text[j], b'"' | b'\''))
            {
                j += 1;
            }
            j
        };
        j = skip_blank(j);
        if skip == 7 && text[j..].len() >= 4 && text[j..j + 4].eq_ignore_ascii_case(b"url(") {
            j = skip_blank(j + 4); // `@import url("…")`
        }
        let start = j;
        while j < text.len() && !matches!(text[j], b'"' | b'\'' | b')' | b';' | b'\n' | b' ') {
            j += 1;
        }
        let url = String::from_utf8_lossy(&text[start..j]);
        if is_external(&url) {
            out.push((at, url.into_owned()));
        }
        i = j.max(at + 1);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn html(s: &str) -> Vec<(HitKind, u32, String)> {
        let mut hits = Vec::new();
        scan_html(s.as_bytes(), &mut hits, 100, &|_| true);
        hits.into_iter()
            .map(|h| (h.kind, h.line, h.detail))
            .collect()
    }

    #[test]
    fn finds_each_kind_with_its_line() {
        let page = "<!doctype html>\n<html><head>\n<script>alert(1)</script>\n<style>p{color:red}</style>\n<link rel=stylesheet href=\"https://cdn.example/x.css\">\n</head><body>\n<button onclick=\"go()\" style=\"color:red\">x</button>\n<form action=\"/x\"></form>\n<img src='//img.example/a.png'>\n</body></html>";
        let hits = html(page);
        let kinds: Vec<(HitKind, u32)> = hits.iter().map(|h| (h.0, h.1)).collect();
        assert_eq!(
            kinds,
            vec![
                (HitKind::InlineScript, 3),
                (HitKind::InlineStyle, 4),
                (HitKind::ExternalUrl, 5),
                (HitKind::InlineHandler, 7),
                (HitKind::StyleAttribute, 7),
                (HitKind::Form, 8),
                (HitKind::ExternalUrl, 9),
            ]
        );
        assert_eq!(hits[2].2, "https://cdn.example/x.css");
        assert_eq!(hits[3].2, "onclick");
    }

    #[test]
    fn what_the_csp_allows_is_not_reported() {
        let page = "<script src=\"app.js\" type=\"module\"></script>\n<script type=\"application/json\">{\"a\":1}</script>\n<!-- <script>old()</script> <form> -->\n<a href=\"https://example.com\">docs</a>\n<img src=\"data:image/png;base64,AA\"><link rel=stylesheet href=\"app.css\">\n<script></script>";
        assert_eq!(html(page), vec![]);
    }

    #[test]
    fn css_urls_and_imports() {
        let mut hits = Vec::new();
        scan_css(
            b"@import url(\"https://fonts.example/f.css\");\nbody{background:url(img/a.png)}\n.x{background:url( 'http://x.example/b.png' )}",
            &mut hits,
            10,
        );
        let got: Vec<(u32, &str)> = hits.iter().map(|h| (h.line, h.detail.as_str())).collect();
        assert_eq!(
            got,
            vec![
                (1, "https://fonts.example/f.css"),
                (3, "http://x.example/b.png")
            ]
        );
    }

    #[test]
    fn hostile_markup_is_bounded_and_never_panics() {
        for page in [
            "<",
            "<a",
            "<a b='",
            "<script>",
            "<style>url(",
            "<!--",
            "<x onclick",
            "<\u{0}\u{ff}>",
        ] {
            html(page);
        }
        let many = "<b onclick=x>".repeat(10_000);
        let mut hits = Vec::new();
        scan_html(many.as_bytes(), &mut hits, 7, &|_| true);
        assert_eq!(hits.len(), 7);
        let long = format!("<img src=\"https://{}\">", "a".repeat(5000));
        let h = html(&long);
        assert_eq!(h.len(), 1);
        assert!(h[0].2.chars().count() <= MAX_DETAIL + 1);
    }
}
