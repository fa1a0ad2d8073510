//! The host UI's `lime.files` commands over a real store: the picker an app's
//! `lime.files.requestFiles` asks for (drawn by the host UI, answered with the refs it granted),
//! uploads kept 0600 and bounded, refs listed and revoked. The app never gets a path, and an
//! answer naming another app's ref passes nothing on.

mod support;

use host_core::api::{self, Session};
use host_core::foundation::paths::DataDir;
use host_core::hosting::bridge::message::PROTOCOL;
use serde_json::{json, Value};
use support::agent::{call, session};
use support::{hello_app_as, install};

const APP: &str = "picker-app";

fn setup() -> (tempfile::TempDir, DataDir, Session) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path().join("data"));
    for name in [APP, "other-app"] {
        install(
            &dir,
            &hello_app_as(
                tmp.path(),
                name,
                &[
                    (
                        "    lime.storage: \"^0.10.0\"\n",
                        "    lime.storage: \"^0.10.0\"\n    lime.files: \"^0.10.0\"\n",
                    ),
                    (
                        "requiredCapabilities: [lime.ui, lime.storage]",
                        "requiredCapabilities: [lime.ui, lime.storage, lime.files]",
                    ),
                ],
            ),
        );
    }
    let s = session(&dir);
    (tmp, dir, s)
}

fn invoke(s: &Session, mount: &Value, id: &str, method: &str, args: Value) -> Value {
    let data =
        json!({"protocol": PROTOCOL, "version": 1, "type": "capability:invoke", "requestId": id,
        "appId": APP, "entryKey": "notes",
        "payload": {"capability": "lime.files", "method": method, "args": args}})
        .to_string();
    call(
        s,
        "bridge_message",
        json!({"mountId": mount["mountId"], "origin": mount["origin"], "data": data}),
    )
}

fn ready(s: &Session) -> Value {
    let mount = call(s, "mount_entry", json!({"appId": APP, "entryKey": "notes"}));
    let data = json!({"protocol": PROTOCOL, "version": 1, "type": "app:ready", "requestId": "r0",
        "appId": APP, "entryKey": "notes", "payload": {}})
    .to_string();
    call(
        s,
        "bridge_message",
        json!({"mountId": mount["mountId"], "origin": mount["origin"], "data": data}),
    );
    mount
}

#[test]
fn the_picker_answers_the_app_with_the_refs_granted_from_the_users_choice() {
    let (tmp, _dir, s) = setup();
    let mount = ready(&s);
    let out = invoke(
        &s,
        &mount,
        "p1",
        "requestFiles",
        json!({"multiple": true, "accept": [".md"]}),
    );
    assert_eq!(out[0]["kind"], "pickFiles", "{out}");
    assert_eq!(out[0]["appId"], APP);
    assert_eq!(
        out[0]["request"],
        json!({"multiple": true, "folder": false, "accept": [".md"]})
    );
    let prompt = out[0]["promptId"].as_str().unwrap().to_owned();

    // The user picks a path and uploads a file; another app's ref is not passed on.
    let doc = tmp.path().join("notes.md");
    std::fs::write(&doc, "# notes").unwrap();
    let a = call(&s, "file_grant_path", json!({"appId": APP, "path": doc}));
    let b = call(
        &s,
        "file_upload",
        json!({"appId": APP, "name": "up.txt", "base64": "aGk="}),
    );
    let foreign = call(
        &s,
        "file_grant_path",
        json!({"appId": "other-app", "path": doc}),
    );
    let out = call(
        &s,
        "answer_file_pick",
        json!({"promptId": prompt, "refs": [a["ref"], b["ref"], foreign["ref"]]}),
    );
    let value = &out[0]["message"]["payload"]["value"];
    assert_eq!(out[0]["message"]["type"], "host:response", "{out}");
    assert_eq!(value["cancelled"], false);
    let names: Vec<&str> = value["refs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["notes.md", "up.txt"]);
    assert!(
        !out.to_string().contains(tmp.path().to_str().unwrap()),
        "a path reached the app"
    );
    // The app reads the upload by its ref.
    let read = invoke(
        &s,
        &mount,
        "p2",
        "readRef",
        json!({"ref": b["ref"], "encoding": "text"}),
    );
    assert_eq!(read[0]["message"]["payload"]["value"]["content"], "hi");
    // Answering again does nothing.
    assert_eq!(
        call(
            &s,
            "answer_file_pick",
            json!({"promptId": prompt, "refs": []})
        ),
        json!([])
    );
}

#[test]
fn a_cancelled_or_single_pick_passes_on_nothing_more_than_asked() {
    let (tmp, _dir, s) = setup();
    let mount = ready(&s);
    let out = invoke(&s, &mount, "p1", "requestFiles", json!({}));
    let prompt = out[0]["promptId"].as_str().unwrap().to_owned();
    let out = call(&s, "answer_file_pick", json!({"promptId": prompt}));
    assert_eq!(
        out[0]["message"]["payload"]["value"],
        json!({"cancelled": true, "refs": []})
    );

    let out = invoke(&s, &mount, "p2", "requestFiles", json!({"multiple": false}));
    let prompt = out[0]["promptId"].as_str().unwrap().to_owned();
    std::fs::write(tmp.path().join("a.txt"), "a").unwrap();
    std::fs::write(tmp.path().join("b.txt"), "b").unwrap();
    let a = call(
        &s,
        "file_grant_path",
        json!({"appId": APP, "path": tmp.path().join("a.txt")}),
    );
    let b = call(
        &s,
        "file_grant_path",
        json!({"appId": APP, "path": tmp.path().join("b.txt")}),
    );
    let out = call(
        &s,
        "answer_file_pick",
        json!({"promptId": prompt, "refs": [a["ref"], b["ref"]]}),
    );
    assert_eq!(
        out[0]["message"]["payload"]["value"]["refs"]
            .as_array()
            .unwrap()
            .len(),
        1
    );

    for bad in [
        json!({"multiple": "yes"}),
        json!({"accept": "md"}),
        json!({"accept": [""]}),
        json!({"x": 1}),
    ] {
        let out = invoke(&s, &mount, "p3", "requestFiles", bad.clone());
        assert_eq!(
            out[0]["message"]["payload"]["code"], "APP_E900",
            "{bad}: {out}"
        );
    }
}

#[test]
fn uploads_are_bounded_private_and_go_with_the_ref() {
    let (_tmp, dir, s) = setup();
    let big = "A".repeat(host_core::api::files::MAX_JSON_UPLOAD_BYTES.div_ceil(3) * 4 + 4);
    let e = api::call(
        &s,
        "file_upload",
        json!({"appId": APP, "name": "big", "base64": big}),
    )
    .unwrap_err();
    assert_eq!(e.code.as_str(), "files.too_large");
    let e = api::call(
        &s,
        "file_upload",
        json!({"appId": APP, "name": "x", "base64": "%%%"}),
    )
    .unwrap_err();
    assert_eq!(e.code.as_str(), "api.bad_arguments");
    let e = api::call(
        &s,
        "file_upload",
        json!({"appId": "nope", "name": "x", "base64": "aGk="}),
    )
    .unwrap_err();
    assert_eq!(e.code.as_str(), "app.not_installed");
    assert_eq!(call(&s, "file_refs", json!({"appId": APP})), json!([]));

    let up = call(
        &s,
        "file_upload",
        json!({"appId": APP, "name": "../secret.txt", "base64": "aGk="}),
    );
    assert_eq!(up["displayName"], "secret.txt");
    let copy = dir.user_file_uploads().join(up["ref"].as_str().unwrap());
    let mode =
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&copy).unwrap().permissions());
    assert_eq!(mode & 0o777, 0o600);
    assert_eq!(
        call(&s, "file_refs", json!({"appId": APP}))[0]["ref"],
        up["ref"]
    );
    let e = api::call(
        &s,
        "file_ref_revoke",
        json!({"appId": "other-app", "ref": up["ref"]}),
    )
    .unwrap_err();
    assert_eq!(e.code.as_str(), "files.ref_not_found");
    assert!(copy.exists());
    call(
        &s,
        "file_ref_revoke",
        json!({"appId": APP, "ref": up["ref"]}),
    );
    assert!(!copy.exists());
    assert_eq!(call(&s, "file_refs", json!({"appId": APP})), json!([]));
    let leftovers: Vec<_> = std::fs::read_dir(dir.user_file_uploads())
        .unwrap()
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}
