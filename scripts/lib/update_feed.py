#!/usr/bin/env python3
"""Writes latest.json, AppHost's update feed (docs/shipping.md, "Updates"), to stdout.

    python3 scripts/lib/update_feed.py PACKAGE_DIR VERSION DOWNLOAD_BASE

Tauri's updater format (version, notes, pub_date, platforms.<target>.{signature, url}) with one
platform per package kind found in PACKAGE_DIR (linux-x86_64-deb, linux-x86_64-rpm,
linux-x86_64-appimage: the entry the AppImage's self-update installs, src-tauri's
appimage_update.rs), each signature the content of the package's .sig (tauri signer sign
--app-version), plus downloadPage (DOWNLOAD_BASE), the link a deb or rpm install's notice shows.
package.sh then signs this file.
"""
import datetime
import json
import os
import sys

directory, version, base = sys.argv[1:4]
platforms = {}
for name in sorted(os.listdir(directory)):
    kind = {".deb": "deb", ".rpm": "rpm", ".AppImage": "appimage"}.get(os.path.splitext(name)[1])
    if kind is None:
        continue
    with open(os.path.join(directory, name + ".sig"), encoding="utf-8") as sig:
        platforms[f"linux-x86_64-{kind}"] = {
            "signature": sig.read().strip(),
            "url": f"{base.rstrip('/')}/{name}",
        }
if not platforms:
    sys.exit("update_feed: no .deb, .rpm or .AppImage in " + directory)
feed = {
    "version": version,
    "notes": os.environ.get("APPHOST_RELEASE_NOTES", f"AppHost {version}"),
    "pub_date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    "downloadPage": base,
    "platforms": platforms,
}
json.dump(feed, sys.stdout, indent=2)
sys.stdout.write("\n")
