//! The host UI's files, embedded at build time from `ui-host/dist` (see `build.rs`): the binary
//! is self-contained and always serves the UI built for its own command layer, wherever it is
//! installed (the desktop window embeds the same folder).

include!(concat!(env!("OUT_DIR"), "/ui_files.rs"));

/// Whether the UI was built before this binary (else `apphost serve` cannot start).
pub fn available() -> bool {
    file("index.html").is_some()
}

/// An embedded file by its path under `/` (no leading slash).
pub fn file(path: &str) -> Option<&'static [u8]> {
    UI_FILES.iter().find(|(p, _)| *p == path).map(|(_, b)| *b)
}

/// `index.html` for a deep link (`/apps/<app>/<entry>`): with `<base href="/">` so its relative
/// script and style links still resolve from the root.
pub fn index_for_deep_link() -> Option<Vec<u8>> {
    let index = std::str::from_utf8(file("index.html")?).ok()?;
    Some(match index.find("<head>") {
        Some(at) => {
            let (head, rest) = index.split_at(at + "<head>".len());
            format!("{head}\n    <base href=\"/\" />{rest}").into_bytes()
        }
        None => index.as_bytes().to_vec(),
    })
}

/// The `Content-Type` of a UI file.
pub fn mime(path: &str) -> &'static str {
    match path.rsplit_once('.').map(|(_, ext)| ext) {
        Some("html") => "text/html; charset=utf-8",
        Some("js" | "mjs") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("json" | "map") => "application/json",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        Some("ico") => "image/x-icon",
        Some("woff2") => "font/woff2",
        _ => "application/octet-stream",
    }
}
