use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;

use super::chunk::{chunks, html_blocks, markdown_blocks, text_blocks};
use super::*;

fn area(tmp: &Path) -> AppArea {
    AppArea::open(&tmp.join("apps/demo")).unwrap()
}

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, text).unwrap();
}

#[test]
fn markdown_sections_carry_titles_and_exact_byte_offsets() {
    let doc = "Intro line\n\n# Alpha\nfirst para\nstill first\n\n## Beta ##\n```\n# not a heading\n```\nbody é\n";
    let cs = chunks(&markdown_blocks(doc));
    let sections: Vec<&str> = cs.iter().map(|c| c.section.as_str()).collect();
    assert_eq!(sections, ["", "Alpha", "Beta"]);
    assert_eq!(&doc[cs[0].start..cs[0].end], "Intro line");
    assert_eq!(
        &doc[cs[1].start..cs[1].end],
        "# Alpha\nfirst para\nstill first"
    );
    assert!(doc[cs[2].start..cs[2].end].starts_with("## Beta ##"));
    assert!(doc[cs[2].start..cs[2].end].ends_with("body é"));
    assert!(
        cs[2].text.contains("# not a heading"),
        "fenced code stays body text"
    );
}

#[test]
fn long_sections_are_split_into_chunks_of_the_same_section() {
    let para = "word ".repeat(300);
    let doc = format!("# Big\n{para}\n\n{para}\n\n{para}\n");
    let cs = chunks(&markdown_blocks(&doc));
    assert!(cs.len() >= 2);
    assert!(cs.iter().all(|c| c.section == "Big"));
    for c in &cs {
        assert!(doc[c.start..c.end].trim_end().ends_with("word"));
    }
    let plain = chunks(&text_blocks("a\n\n\nb\n"));
    assert_eq!(plain.len(), 1);
    assert_eq!(plain[0].text, "a\n\nb");
}

#[test]
fn html_is_stripped_with_headings_as_sections_and_offsets_into_the_source() {
    let doc = "<html><head><title>T</title><style>p{x:1}</style></head><body>\
<h1>Guide &amp; Intro</h1><p>Hello <b>world</b></p><script>var secret=1;</script>\
<!-- hidden --><h2>Next</h2><p>a &lt; b</p></body></html>";
    let blocks = html_blocks(doc);
    let cs = chunks(&blocks);
    let sections: Vec<&str> = cs.iter().map(|c| c.section.as_str()).collect();
    assert_eq!(sections, ["Guide & Intro", "Next"]);
    assert!(cs[0].text.contains("Hello world"));
    assert!(!cs
        .iter()
        .any(|c| c.text.contains("secret") || c.text.contains("hidden") || c.text.contains("x:1")));
    assert_eq!(&doc[cs[1].start..cs[1].end], "Next</h2><p>a &lt; b");
    assert!(cs[1].text.contains("a < b"));
    // Broken markup stays bounded and never panics.
    for bad in [
        "<",
        "<a",
        "<!--",
        "<script>",
        "&#xFFFFFFFF;",
        "<h1>x",
        "a < b <",
        "&;&#;&#x;",
    ] {
        let _ = chunks(&html_blocks(bad));
    }
}

#[test]
fn queries_become_quoted_terms_never_fts5_syntax() {
    use super::query::fts_expression;
    assert_eq!(
        fts_expression("hello World").unwrap(),
        "\"hello\" OR \"World\""
    );
    assert_eq!(
        fts_expression("\"a\" OR x:*").unwrap(),
        "\"a\" OR \"OR\" OR \"x\""
    );
    assert_eq!(
        fts_expression("NEAR(a b) ^c").unwrap(),
        "\"NEAR\" OR \"a\" OR \"b\" OR \"c\""
    );
    for bad in ["", "   ", "*:^()\"", &"x".repeat(2000), &"a ".repeat(40)] {
        assert!(fts_expression(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn an_index_finds_sections_with_citations_and_injection_is_just_words() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("docs");
    write(
        &root,
        "guide.md",
        "# Install\nRun the installer twice.\n\n# Refunds\nRefunds take 14 days.\n",
    );
    write(
        &root,
        "sub/page.html",
        "<h1>Shipping</h1><p>Parcels ship on Monday.</p>",
    );
    write(&root, "notes.txt", "plain words about refunds\n");
    let a = area(tmp.path());
    let mut idx = KnowledgeIndex::open(&a, "faq").unwrap();
    let r = idx.reindex(&root, &Limits::default(), "t1").unwrap();
    assert_eq!((r.files, r.indexed, r.unchanged), (3, 3, 0));
    let hits = idx.search("refunds", 5).unwrap();
    assert_eq!(hits.len(), 2);
    let md = hits.iter().find(|h| h.document == "guide.md").unwrap();
    assert_eq!(md.section, "Refunds");
    let text = fs::read_to_string(root.join("guide.md")).unwrap();
    assert_eq!(
        &text[md.start as usize..md.end as usize],
        "# Refunds\nRefunds take 14 days."
    );
    assert!(md.snippet.contains("[Refunds]"));
    let ship = idx.search("monday", 5).unwrap();
    assert_eq!(ship[0].document, "sub/page.html");
    assert_eq!(ship[0].section, "Shipping");
    // FTS5 syntax from the caller is only words: no error, no column filter, no prefix match.
    assert!(idx.search("\"a\" OR x:*", 5).unwrap().is_empty());
    assert!(idx.search("NEAR(", 5).unwrap().is_empty());
    assert!(idx
        .search("title:Refunds", 5)
        .unwrap()
        .iter()
        .all(|h| h.section == "Refunds" || h.document == "notes.txt"));
    assert_eq!(
        idx.search("*", 5).unwrap_err().code(),
        "knowledge.query_invalid"
    );
    // Another template of the same app is another file.
    let other = KnowledgeIndex::open(&a, "other").unwrap();
    assert!(other.search("refunds", 5).unwrap().is_empty());
    assert_ne!(index_file_name("faq"), index_file_name("other"));
    assert_eq!(idx.status().unwrap().last_indexed.as_deref(), Some("t1"));
}

#[test]
fn reindexing_is_incremental_by_mtime_and_hash() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("docs");
    write(&root, "a.md", "# A\nalpha\n");
    write(&root, "b.md", "# B\nbravo\n");
    let a = area(tmp.path());
    let mut idx = KnowledgeIndex::open(&a, "t").unwrap();
    idx.reindex(&root, &Limits::default(), "1").unwrap();
    let r = idx.reindex(&root, &Limits::default(), "2").unwrap();
    assert_eq!((r.indexed, r.unchanged, r.removed), (0, 2, 0));
    write(&root, "a.md", "# A\ncharlie\n");
    fs::remove_file(root.join("b.md")).unwrap();
    let r = idx.reindex(&root, &Limits::default(), "3").unwrap();
    assert_eq!((r.indexed, r.removed, r.files), (1, 1, 1));
    assert!(idx.search("alpha", 5).unwrap().is_empty());
    assert!(idx.search("bravo", 5).unwrap().is_empty());
    assert_eq!(idx.search("charlie", 5).unwrap().len(), 1);
}

#[test]
fn links_out_of_the_folder_are_skipped_and_reported_fifos_never_opened() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("docs");
    let outside = tmp.path().join("outside");
    write(&outside, "secret.md", "# Secret\nexfiltrated\n");
    write(&root, "ok.md", "# Ok\nfine\n");
    symlink(outside.join("secret.md"), root.join("link.md")).unwrap();
    symlink(&outside, root.join("linkdir")).unwrap();
    rustix::fs::mknodat(
        rustix::fs::CWD,
        root.join("pipe.md"),
        FileType::Fifo,
        Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    let a = area(tmp.path());
    let mut idx = KnowledgeIndex::open(&a, "t").unwrap();
    // A FIFO opened without O_NONBLOCK would hang this call: it returns.
    let r = idx.reindex(&root, &Limits::default(), "1").unwrap();
    assert_eq!(r.files, 1);
    let codes: Vec<(&str, &str)> = r
        .problems
        .iter()
        .map(|p| (p.code.as_str(), p.path.as_str()))
        .collect();
    assert!(
        codes.contains(&("knowledge.link_skipped", "link.md")),
        "{codes:?}"
    );
    assert!(
        codes.contains(&("knowledge.link_skipped", "linkdir")),
        "{codes:?}"
    );
    assert!(
        codes.contains(&("knowledge.special_file_skipped", "pipe.md")),
        "{codes:?}"
    );
    assert!(idx.search("exfiltrated", 5).unwrap().is_empty());
    assert_eq!(idx.status().unwrap().problems.len(), 3);
}

#[test]
fn a_sparse_gigabyte_file_is_refused_by_size_without_reading_it() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("docs");
    fs::create_dir_all(&root).unwrap();
    let f = fs::File::create(root.join("huge.txt")).unwrap();
    f.set_len(1 << 30).unwrap();
    write(&root, "small.txt", "tiny document\n");
    write(&root, "report.pdf", "%PDF-1.4");
    let a = area(tmp.path());
    let mut idx = KnowledgeIndex::open(&a, "t").unwrap();
    let started = std::time::Instant::now();
    let r = idx.reindex(&root, &Limits::default(), "1").unwrap();
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    assert_eq!(r.files, 1);
    let codes: Vec<&str> = r.problems.iter().map(|p| p.code.as_str()).collect();
    assert!(codes.contains(&"knowledge.too_large"));
    assert!(codes.contains(&"knowledge.unsupported_format"));
    // The total bound stops at the first file that would pass it.
    let limits = Limits {
        max_total_bytes: 4,
        ..Limits::default()
    };
    let r = idx.reindex(&root, &limits, "2").unwrap();
    assert_eq!(r.files, 0);
    assert!(r
        .problems
        .iter()
        .any(|p| p.code == "knowledge.limit_reached"));
}

#[test]
fn deep_trees_and_many_files_are_bounded() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("docs");
    let mut deep = root.clone();
    for i in 0..40 {
        deep = deep.join(format!("d{i}"));
    }
    fs::create_dir_all(&deep).unwrap();
    fs::write(deep.join("bottom.md"), "deepword\n").unwrap();
    for i in 0..10 {
        write(&root, &format!("f{i}.md"), "many\n");
    }
    let a = area(tmp.path());
    let mut idx = KnowledgeIndex::open(&a, "t").unwrap();
    let limits = Limits {
        max_files: 5,
        ..Limits::default()
    };
    let r = idx.reindex(&root, &limits, "1").unwrap();
    assert_eq!(r.files, 5);
    assert!(r.problems.iter().any(|p| p.code == "knowledge.too_deep"));
    assert!(r
        .problems
        .iter()
        .any(|p| p.code == "knowledge.limit_reached"));
    assert!(idx.search("deepword", 5).unwrap().is_empty());
    let limits = Limits {
        max_problems: 1,
        ..limits
    };
    let r = idx.reindex(&root, &limits, "2").unwrap();
    assert_eq!(r.problems.len(), 1);
    assert!(r.problems_dropped >= 1);
}

#[test]
fn a_missing_folder_is_refused_and_the_index_is_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("docs");
    write(&root, "a.md", "kept\n");
    let a = area(tmp.path());
    let mut idx = KnowledgeIndex::open(&a, "t").unwrap();
    idx.reindex(&root, &Limits::default(), "1").unwrap();
    let e = idx
        .reindex(&tmp.path().join("none"), &Limits::default(), "2")
        .unwrap_err();
    assert_eq!(e.code(), "knowledge.folder_invalid");
    assert_eq!(idx.search("kept", 5).unwrap().len(), 1);
    drop(idx);
    KnowledgeIndex::remove(&a, "t").unwrap();
    assert!(KnowledgeIndex::open_existing(&a, "t").unwrap().is_none());
}
