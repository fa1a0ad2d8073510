//! Permission diffs and publisher identity.

use super::*;

fn perm(v: Value) -> Value {
    v
}

fn granted(keys: &[&str]) -> BTreeSet<String> {
    keys.iter().map(|k| (*k).to_owned()).collect()
}

fn by_key<'a>(d: &'a [PermissionChange], key: &str) -> &'a PermissionChange {
    d.iter().find(|p| p.key == key).unwrap()
}

#[test]
fn any_field_change_drops_the_grant_and_shows_old_and_new() {
    let old = vec![
        perm(
            json!({"key": "net", "scope": "network", "access": "read", "required": true, "domains": ["a.example"]}),
        ),
        perm(
            json!({"key": "files", "scope": "filesystem", "access": "read", "required": true, "paths": ["~/Notes"]}),
        ),
        perm(json!({"key": "store", "scope": "storage", "access": "read-write", "required": true})),
        perm(json!({"key": "opt", "scope": "network", "access": "read", "required": false})),
        perm(json!({"key": "gone", "scope": "storage", "access": "read"})),
        perm(json!({"key": "demoted", "scope": "storage", "access": "read", "required": true})),
    ];
    let new = vec![
        perm(
            json!({"key": "net", "scope": "network", "access": "read", "required": true, "domains": ["a.example", "b.example"]}),
        ),
        perm(
            json!({"key": "files", "scope": "filesystem", "access": "read", "required": true, "paths": ["~"]}),
        ),
        perm(json!({"key": "store", "scope": "storage", "access": "read-write", "required": true})),
        perm(json!({"key": "opt", "scope": "network", "access": "read-write", "required": false})),
        perm(json!({"key": "demoted", "scope": "storage", "access": "read", "required": false})),
        perm(json!({"key": "promoted", "scope": "storage", "access": "read", "required": true})),
    ];
    let g = granted(&["net", "files", "store", "opt", "gone", "demoted"]);
    let d = diff_permissions(&old, &new, &g);

    let net = by_key(&d, "net");
    assert_eq!((net.change, net.grant), ("changed", "asked"));
    assert_eq!(
        net.fields,
        [FieldChange {
            field: "domains".into(),
            old: json!(["a.example"]),
            new: json!(["a.example", "b.example"])
        }]
    );
    let files = by_key(&d, "files");
    assert_eq!((files.change, files.grant), ("changed", "asked"));
    assert_eq!(files.fields[0].field, "paths");
    assert_eq!(files.fields[0].old, json!(["~/Notes"]));
    assert_eq!(files.fields[0].new, json!(["~"]));
    assert_eq!(by_key(&d, "store").grant, "kept");
    // An optional permission that changed loses its grant and is asked at first use.
    let opt = by_key(&d, "opt");
    assert_eq!((opt.change, opt.grant), ("changed", "at-first-use"));
    assert_eq!(opt.fields[0].field, "access");
    // required -> optional is a change too: the grant goes.
    let demoted = by_key(&d, "demoted");
    assert_eq!((demoted.change, demoted.grant), ("changed", "at-first-use"));
    assert_eq!(
        demoted.fields,
        [FieldChange {
            field: "required".into(),
            old: json!(true),
            new: json!(false)
        }]
    );
    assert_eq!(by_key(&d, "promoted").grant, "asked");
    let gone = by_key(&d, "gone");
    assert_eq!((gone.change, gone.grant), ("removed", "dropped"));
}

#[test]
fn a_missing_required_flag_equals_false_and_unchanged_ungranted_required_is_asked() {
    let old = vec![
        json!({"key": "a", "scope": "storage"}),
        json!({"key": "b", "scope": "storage", "required": true}),
    ];
    let new = vec![
        json!({"key": "a", "scope": "storage", "required": false}),
        json!({"key": "b", "scope": "storage", "required": true}),
    ];
    let d = diff_permissions(&old, &new, &BTreeSet::new());
    assert_eq!(
        (by_key(&d, "a").change, by_key(&d, "a").grant),
        ("unchanged", "at-first-use")
    );
    assert_eq!(
        (by_key(&d, "b").change, by_key(&d, "b").grant),
        ("unchanged", "asked")
    );
}

#[test]
fn publishers_are_the_same_only_by_full_key() {
    let k = |id: &str, pk: &str| Signer::pinned(Some(id.into()), Some(pk.into()));
    let unsigned = Signer::pinned(None, None);
    assert!(k("ed25519:aa", "K1").same_as(&k("ed25519:aa", "K1")));
    assert!(
        !k("ed25519:aa", "K1").same_as(&k("ed25519:aa", "K2")),
        "same id, other key"
    );
    assert!(!k("ed25519:aa", "K1").same_as(&unsigned));
    assert!(unsigned.same_as(&Signer::pinned(None, None)));
    let legacy = Signer::pinned(Some("ed25519:aa".into()), None);
    assert!(
        !legacy.same_as(&k("ed25519:aa", "K1")),
        "an id alone proves nothing"
    );
    assert!(!legacy.same_as(&legacy.clone()));
}
