//! The remote catalog's happy paths through the CLI: build (publisher), add, search, list,
//! install by id, update by id and `--all`, channels, `catalog remove`.

mod catalog_support;
mod common;

use catalog_support::server::Server;
use catalog_support::{cli, code_of, Repo};
use serde_json::Value;

#[test]
fn build_add_search_install_update_and_channels() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let data = t.join("data");
    let run = |args: &[&str]| cli(t, &data, args, &[]);

    // Before any catalog is added, a name that is no path is still a missing source.
    let (code, v) = run(&["install", "hello-app", "--yes"]);
    assert_eq!((code, code_of(&v).as_str()), (3, "source.not_found"), "{v}");

    // Publisher: a key and `apphost catalog build`.
    let repo = Repo::new(&t.join("publisher"));
    repo.add("hello-app");
    repo.add("notes-viewer");
    let key = t.join("catalog-key.json");
    let (code, v) = run(&["keygen", "--out", key.to_str().unwrap()]);
    assert_eq!(code, 0, "{v}");
    let out = repo.out.to_str().unwrap().to_owned();
    let build = |extra: &[&str]| {
        let mut args = vec![
            "catalog",
            "build",
            repo.packages.to_str().unwrap(),
            "--key",
            key.to_str().unwrap(),
            "--out",
            &out,
        ];
        args.extend_from_slice(extra);
        let (code, v) = cli(t, &data, &args, &[]);
        assert_eq!(code, 0, "{v}");
        v
    };
    let v = build(&[]);
    assert_eq!(v["releases"].as_array().unwrap().len(), 2, "{v}");
    assert_eq!(v["targetsVersion"], 1);

    let server = Server::start();
    server.serve_dir(&repo.out);
    let root = repo.root_file();
    let (code, v) = run(&[
        "catalog",
        "add",
        "main",
        &server.url,
        "--root",
        root.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(
        (v["apps"].as_u64(), v["releases"].as_u64()),
        (Some(2), Some(2)),
        "{v}"
    );
    // The same name again is refused; a non-loopback http URL too.
    let (_, v) = run(&[
        "catalog",
        "add",
        "main",
        &server.url,
        "--root",
        root.to_str().unwrap(),
    ]);
    assert_eq!(code_of(&v), "catalog.exists");
    let (_, v) = run(&[
        "catalog",
        "add",
        "other",
        "http://example.com/",
        "--root",
        root.to_str().unwrap(),
    ]);
    assert_eq!(code_of(&v), "catalog.insecure_url");

    let (_, found) = run(&["catalog", "search", "VIEWER"]);
    assert_eq!(found.as_array().unwrap().len(), 1, "{found}");
    assert_eq!(found[0]["appId"], "notes-viewer");
    let (_, all) = run(&["catalog", "search"]);
    assert_eq!(all.as_array().unwrap().len(), 2);

    // Installing needs consent and trust as any install does.
    let (code, v) = run(&["install", "hello-app", "--yes"]);
    assert_ne!(code, 0);
    assert_eq!(code_of(&v), "verify.unsigned", "{v}");
    let (code, v) = run(&["install", "hello-app", "--yes", "--sideload"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["app"]["activeVersion"], "1.0.0");

    // A new stable release and a beta.
    repo.add("hello-app-v2");
    repo.add("hello-app-v3");
    std::fs::write(
        repo.packages.join("hello-app-v3.release.json"),
        r#"{"channel": "beta"}"#,
    )
    .unwrap();
    let v = build(&[]);
    assert_eq!(v["targetsVersion"], 2);
    server.serve_dir(&repo.out);
    let (code, v) = run(&["update", "--all", "--yes", "--sideload"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["updated"][0]["to"], "1.1.0", "{v}");
    let (_, v) = run(&["update", "hello-app", "--yes", "--sideload"]);
    assert_eq!(v["upToDate"], "1.1.0", "{v}");
    // Switching the app to the beta channel.
    let (code, v) = run(&[
        "update",
        "hello-app",
        "--channel",
        "beta",
        "--yes",
        "--sideload",
    ]);
    assert_eq!(code, 0, "{v}");
    let (_, v) = run(&["list"]);
    assert_eq!(v[0]["activeVersion"], "1.2.0", "{v}");
    // And back (rollback keeps working the usual way).
    let (code, _) = run(&["rollback", "hello-app"]);
    assert_eq!(code, 0);

    let (_, list) = run(&["catalog", "list"]);
    assert_eq!(list[0]["stale"], false, "{list}");
    assert_eq!(list[0]["targetsVersion"], 2);
    let (code, _) = run(&["catalog", "remove", "main"]);
    assert_eq!(code, 0);
    let (_, list) = run(&["catalog", "list"]);
    assert_eq!(list, Value::Array(vec![]));
    // The installed app stays.
    let (_, v) = run(&["list"]);
    assert_eq!(v[0]["name"], "hello-app");
}
