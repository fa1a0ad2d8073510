//! The TUF subset's signature rules, without a server: a threshold counts distinct keys, so
//! repeating one signature (or naming one key under two ids) never meets a threshold of two.

use host_core::install::remote::publish::{self, Keys};
use host_core::install::remote::tuf::metadata::{Envelope, Root};
use host_core::install::remote::tuf::sign::sign;
use host_core::install::remote::tuf::verify::{self, self_signed_root};
use host_core::install::signature::generate_key;
use host_core::ErrorCode;

fn month() -> jiff::Timestamp {
    jiff::Timestamp::now()
        .checked_add(jiff::SignedDuration::from_hours(720))
        .unwrap()
}

#[test]
fn one_signature_repeated_does_not_meet_a_threshold_of_two() {
    let keys = Keys::single(&generate_key().unwrap());
    let mut root = publish::root_for(&keys, month(), 1);
    let second = generate_key().unwrap();
    let pk = host_core::install::remote::tuf::sign::public_key(&second.verifying_key());
    let id = verify::key_id(&pk);
    root.keys.insert(id.clone(), pk);
    let r = root.roles.get_mut("root").unwrap();
    r.keyids.push(id);
    r.threshold = 2;
    // Signed by the first key only, its signature listed twice.
    let bytes = sign(&root, &[&keys.root, &keys.root]);
    let env: Envelope = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(env.signatures.len(), 2);
    let err = self_signed_root(&bytes).unwrap_err();
    assert_eq!(err.code, ErrorCode::CatalogSignatureInvalid, "{err:?}");
    assert_eq!(err.details["valid"], 1);
    // Both keys: accepted.
    assert!(self_signed_root(&sign(&root, &[&keys.root, &second])).is_ok());
}

#[test]
fn a_key_named_under_a_second_id_is_refused() {
    let keys = Keys::single(&generate_key().unwrap());
    let mut root: Root = publish::root_for(&keys, month(), 1);
    let (id, key) = root
        .keys
        .iter()
        .next()
        .map(|(i, k)| (i.clone(), k.clone()))
        .unwrap();
    let fake = "00".repeat(32);
    root.keys.insert(fake.clone(), key);
    let r = root.roles.get_mut("root").unwrap();
    r.keyids = vec![id, fake];
    r.threshold = 2;
    let err = self_signed_root(&sign(&root, &[&keys.root])).unwrap_err();
    assert_eq!(err.code, ErrorCode::CatalogMetadataInvalid, "{err:?}");
}

#[test]
fn a_changed_signed_field_breaks_the_signature() {
    let keys = Keys::single(&generate_key().unwrap());
    let root = publish::root_for(&keys, month(), 1);
    let bytes = sign(&root, &[&keys.root]);
    let mut env: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    env["signed"]["version"] = 2.into();
    let err = self_signed_root(&serde_json::to_vec(&env).unwrap()).unwrap_err();
    assert_eq!(err.code, ErrorCode::CatalogSignatureInvalid);
    // Whitespace and key order do not matter: the signature covers canonical JSON.
    let pretty =
        serde_json::to_vec_pretty(&serde_json::from_slice::<serde_json::Value>(&bytes).unwrap())
            .unwrap();
    assert!(self_signed_root(&pretty).is_ok());
}
