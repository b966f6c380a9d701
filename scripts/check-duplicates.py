#!/usr/bin/env python3
"""Fails on a block of production code repeated elsewhere that is not an accepted pair.

jscpd (pinned in tests/clients/package.json, installed by scripts/install-test-deps.sh) finds
every block of at least 10 lines and 80 tokens that stands twice in `crates/*/src`. Each pair
of files it reports must be listed in scripts/duplicates-allowed.txt (`a.rs ~ b.rs  # why`,
either order); any other pair fails the check, naming both places, so a new copy is either
made one piece of code or accepted with its reason in review.
"""

import json
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
JSCPD = ROOT / "tests/clients/node_modules/.bin/jscpd"
ALLOWED = ROOT / "scripts/duplicates-allowed.txt"


def allowed_pairs():
    pairs = set()
    for line in ALLOWED.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        first, _, second = line.partition("~")
        pairs.add(frozenset((first.strip(), second.strip())))
    return pairs


def main():
    if not JSCPD.exists():
        print(
            f"check-duplicates: {JSCPD.relative_to(ROOT)} is missing; run "
            "scripts/install-test-deps.sh (scripts/test.sh does)",
            file=sys.stderr,
        )
        return 1
    sources = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "crates").glob("*/src"))
    with tempfile.TemporaryDirectory() as out:
        subprocess.run(
            [str(JSCPD), "--format", "rust", "--min-lines", "10", "--min-tokens", "80",
             "--reporters", "json", "--output", out, "--silent", *sources],
            cwd=ROOT, check=True, stdout=subprocess.DEVNULL,
        )
        report = json.loads((pathlib.Path(out) / "jscpd-report.json").read_text())
    accepted = allowed_pairs()
    new = []
    for clone in report.get("duplicates", []):
        a, b = clone["firstFile"], clone["secondFile"]
        if frozenset((a["name"], b["name"])) in accepted:
            continue
        new.append(f"  {a['name']}:{a['start']}-{a['end']} ~ {b['name']}:{b['start']}-{b['end']}"
                   f" ({clone['lines']} lines)")
    if new:
        print("check-duplicates: code repeated in a new place (make it one piece of code, or "
              "accept the pair with its reason in scripts/duplicates-allowed.txt):",
              file=sys.stderr)
        print("\n".join(new), file=sys.stderr)
        return 1
    print(f"check-duplicates: no new duplicated block ({len(report.get('duplicates', []))} "
          "accepted)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
