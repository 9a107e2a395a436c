"""Reads {"message": "..."} as JSON on stdin; writes {"ok": bool, "problems": [...]}."""

import json
import re
import sys

TYPES = ("feat", "fix", "docs", "refactor", "perf", "test", "build", "ci", "chore", "revert")
HEADER = re.compile(r"^(?P<type>[a-z]+)(\((?P<scope>[a-z0-9-]+)\))?(?P<bang>!)?: (?P<subject>.+)$")


def lint(message):
    problems = []
    lines = message.splitlines() or [""]
    match = HEADER.match(lines[0])
    if not match:
        problems.append("the first line must look like `type(scope): subject`")
    else:
        if match["type"] not in TYPES:
            problems.append(f"unknown type `{match['type']}`; use one of {', '.join(TYPES)}")
        if match["subject"].endswith("."):
            problems.append("the subject must not end with a period")
    if len(lines[0]) > 72:
        problems.append("the first line is longer than 72 characters")
    if len(lines) > 1 and lines[1].strip():
        problems.append("leave a blank line between the subject and the body")
    return {"ok": not problems, "problems": problems}


if __name__ == "__main__":
    json.dump(lint(json.load(sys.stdin)["message"]), sys.stdout)
