//! Documents into sections: blocks (a heading, or a paragraph) with their byte spans in the
//! original file, grouped into chunks. A heading starts a new section (its text is the section
//! title of every chunk until the next heading); paragraphs are appended to the section's chunk
//! until it would pass [`MAX_CHUNK_BYTES`], then a new chunk of the same section starts. Offsets
//! are byte offsets into the file as read (`start..end`, UTF-8 boundaries), so a citation can be
//! cut out of the document exactly.
//!
//! Markdown: ATX headings (`#` .. `######`) outside fenced code blocks; paragraphs are runs of
//! non-blank lines. Plain text: paragraphs only. HTML: [`html_blocks`], a small bounded scanner
//! (no tree, no recursion): tags are dropped, `script`/`style`/comments skipped, `h1`-`h6` are
//! headings, block-level tags end a paragraph, a few entities are decoded.

/// A chunk grows to about this many bytes of text before a new one starts.
pub const MAX_CHUNK_BYTES: usize = 2048;
/// Longest section title kept (bytes, cut at a character boundary).
pub const MAX_TITLE_BYTES: usize = 200;

/// One block of a document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    pub start: usize,
    pub end: usize,
    pub text: String,
    pub heading: bool,
}

/// One indexed chunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    pub section: String,
    pub start: usize,
    pub end: usize,
    pub text: String,
}

/// Markdown blocks of `text`.
pub fn markdown_blocks(text: &str) -> Vec<Block> {
    line_blocks(text, true)
}

/// Plain-text blocks (paragraphs) of `text`.
pub fn text_blocks(text: &str) -> Vec<Block> {
    line_blocks(text, false)
}

fn line_blocks(text: &str, markdown: bool) -> Vec<Block> {
    let mut out = Vec::new();
    let mut para: Option<(usize, usize)> = None;
    let mut fence: Option<&str> = None;
    let mut pos = 0;
    let flush = |para: &mut Option<(usize, usize)>, out: &mut Vec<Block>| {
        if let Some((s, e)) = para.take() {
            out.push(Block {
                start: s,
                end: e,
                text: text[s..e].to_owned(),
                heading: false,
            });
        }
    };
    for line in text.split_inclusive('\n') {
        let start = pos;
        pos += line.len();
        let body = line.trim_end_matches(['\n', '\r']);
        let end = start + body.len();
        let trimmed = body.trim_start();
        if markdown {
            let marker = ["```", "~~~"].into_iter().find(|m| trimmed.starts_with(m));
            if let Some(m) = marker {
                fence = match fence {
                    Some(open) if open == m => None,
                    Some(open) => Some(open),
                    None => Some(m),
                };
            } else if fence.is_none() {
                if let Some(title) = atx_heading(trimmed) {
                    flush(&mut para, &mut out);
                    out.push(Block {
                        start,
                        end,
                        text: title.to_owned(),
                        heading: true,
                    });
                    continue;
                }
            }
        }
        if body.trim().is_empty() && fence.is_none() {
            flush(&mut para, &mut out);
            continue;
        }
        para = Some(match para {
            Some((s, _)) => (s, end),
            None => (start + (body.len() - trimmed.len()), end),
        });
    }
    flush(&mut para, &mut out);
    out
}

/// The title of an ATX heading line (`## Title ##`), if it is one.
fn atx_heading(line: &str) -> Option<&str> {
    let hashes = line.bytes().take_while(|b| *b == b'#').count();
    if !(1..=6).contains(&hashes) {
        return None;
    }
    let rest = &line[hashes..];
    if !(rest.is_empty() || rest.starts_with([' ', '\t'])) {
        return None;
    }
    Some(rest.trim().trim_end_matches('#').trim_end())
}

/// Tags whose content is never text.
const SKIPPED: &[&str] = &["script", "style", "template", "noscript", "svg", "head"];
/// Tags that end a paragraph.
const BLOCK_TAGS: &[&str] = &[
    "p",
    "div",
    "br",
    "li",
    "ul",
    "ol",
    "tr",
    "td",
    "th",
    "table",
    "section",
    "article",
    "header",
    "footer",
    "main",
    "nav",
    "aside",
    "blockquote",
    "pre",
    "hr",
    "dt",
    "dd",
    "dl",
    "figure",
    "figcaption",
    "title",
    "body",
    "html",
];

/// HTML blocks of `text`: one pass, no recursion, memory bounded by the input.
pub fn html_blocks(text: &str) -> Vec<Block> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut cur = Pending::default();
    let mut heading = false;
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'<' {
            // A run of text up to the next tag.
            let next = memchr(b'<', &b[i..]).map_or(b.len(), |n| i + n);
            cur.push(text, i, next);
            i = next;
            continue;
        }
        if b[i..].starts_with(b"<!--") {
            i = find(b, i + 4, b"-->").map_or(b.len(), |n| n + 3);
            continue;
        }
        let close = b.get(i + 1) == Some(&b'/');
        let name_start = i + 1 + usize::from(close);
        let name_end = name_start
            + b[name_start..]
                .iter()
                .take_while(|c| c.is_ascii_alphanumeric())
                .count();
        if name_end == name_start {
            // `<` not starting a tag (`a < b`, `<!DOCTYPE`, `<?xml`): skip to `>` if it is a
            // declaration, else keep it as text.
            if matches!(b.get(i + 1), Some(b'!' | b'?')) {
                i = memchr(b'>', &b[i..]).map_or(b.len(), |n| i + n + 1);
            } else {
                cur.push(text, i, i + 1);
                i += 1;
            }
            continue;
        }
        let name = text[name_start..name_end].to_ascii_lowercase();
        let tag_end = memchr(b'>', &b[name_end..]).map_or(b.len(), |n| name_end + n + 1);
        let is_heading =
            name.len() == 2 && name.starts_with('h') && (b'1'..=b'6').contains(&name.as_bytes()[1]);
        if !close && SKIPPED.contains(&name.as_str()) {
            cur.flush(&mut out, heading);
            let end_tag = format!("</{name}");
            i = find_ci(b, tag_end, end_tag.as_bytes())
                .and_then(|n| memchr(b'>', &b[n..]).map(|m| n + m + 1))
                .unwrap_or(b.len());
            continue;
        }
        if is_heading {
            cur.flush(&mut out, heading);
            heading = !close;
        } else if BLOCK_TAGS.contains(&name.as_str()) {
            cur.flush(&mut out, heading);
        }
        i = tag_end;
    }
    cur.flush(&mut out, heading);
    out
}

/// The text of the block being read, with the span it came from.
#[derive(Default)]
struct Pending {
    start: Option<usize>,
    end: usize,
    text: String,
}

impl Pending {
    fn push(&mut self, src: &str, from: usize, to: usize) {
        let raw = &src[from..to];
        if raw.trim().is_empty() {
            if !self.text.is_empty() && !self.text.ends_with(' ') {
                self.text.push(' ');
            }
            return;
        }
        let lead = raw.len() - raw.trim_start().len();
        if self.start.is_none() {
            self.start = Some(from + lead);
        }
        self.end = from + raw.trim_end().len();
        decode_into(raw, &mut self.text);
    }

    fn flush(&mut self, out: &mut Vec<Block>, heading: bool) {
        if let Some(start) = self.start.take() {
            let text = collapse(&std::mem::take(&mut self.text));
            if !text.is_empty() {
                out.push(Block {
                    start,
                    end: self.end,
                    text,
                    heading,
                });
            }
        }
        self.text.clear();
    }
}

fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Appends `raw` with the common entities decoded (others kept as written).
fn decode_into(raw: &str, out: &mut String) {
    let mut rest = raw;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        let tail = &rest[amp..];
        let semi = tail.find(';').filter(|n| *n <= 10);
        let decoded = semi.and_then(|n| entity(&tail[1..n]));
        match (semi, decoded) {
            (Some(n), Some(c)) => {
                out.push(c);
                rest = &tail[n + 1..];
            }
            _ => {
                out.push('&');
                rest = &tail[1..];
            }
        }
    }
    out.push_str(rest);
}

fn entity(name: &str) -> Option<char> {
    match name {
        "amp" => Some('&'),
        "lt" => Some('<'),
        "gt" => Some('>'),
        "quot" => Some('"'),
        "apos" => Some('\''),
        "nbsp" => Some(' '),
        _ => {
            let num = name.strip_prefix('#')?;
            let code = match num.strip_prefix(['x', 'X']) {
                Some(hex) => u32::from_str_radix(hex, 16).ok()?,
                None => num.parse().ok()?,
            };
            char::from_u32(code).filter(|c| !c.is_control() || c.is_whitespace())
        }
    }
}

fn memchr(needle: u8, hay: &[u8]) -> Option<usize> {
    hay.iter().position(|c| *c == needle)
}

fn find(hay: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    hay.get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|n| from + n)
}

fn find_ci(hay: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    hay.get(from..)?
        .windows(needle.len())
        .position(|w| w.eq_ignore_ascii_case(needle))
        .map(|n| from + n)
}

/// Groups blocks into chunks (see the module doc). A document without a heading has the
/// section title `""`.
pub fn chunks(blocks: &[Block]) -> Vec<Chunk> {
    let mut out: Vec<Chunk> = Vec::new();
    let mut section = String::new();
    let mut open: Option<Chunk> = None;
    for b in blocks {
        if b.heading {
            if let Some(c) = open.take() {
                out.push(c);
            }
            section = cut(&b.text, MAX_TITLE_BYTES).to_owned();
            // The heading is part of its section's first chunk, so its words are found too.
            open = Some(Chunk {
                section: section.clone(),
                start: b.start,
                end: b.end,
                text: b.text.clone(),
            });
            continue;
        }
        match open.as_mut() {
            Some(c) if c.text.len() + b.text.len() < MAX_CHUNK_BYTES => {
                c.text.push_str("\n\n");
                c.text.push_str(&b.text);
                c.end = b.end;
            }
            _ => {
                if let Some(c) = open.take() {
                    out.push(c);
                }
                open = Some(Chunk {
                    section: section.clone(),
                    start: b.start,
                    end: b.end,
                    text: b.text.clone(),
                });
            }
        }
    }
    out.extend(open);
    out
}

/// `s` cut to at most `max` bytes at a character boundary.
pub fn cut(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut n = max;
    while !s.is_char_boundary(n) {
        n -= 1;
    }
    &s[..n]
}
