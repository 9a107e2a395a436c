"""Summarise a coverage.py JSON report by top-level package."""

import json
from collections import defaultdict
from pathlib import Path


def summarize(args):
    report = json.loads(Path(args.get("report", "coverage.json")).read_text())
    threshold = float(args.get("threshold", 80))
    covered = defaultdict(int)
    statements = defaultdict(int)
    for filename, data in report.get("files", {}).items():
        package = filename.split("/", 1)[0]
        summary = data.get("summary", {})
        covered[package] += summary.get("covered_lines", 0)
        statements[package] += summary.get("num_statements", 0)
    packages = {
        name: round(100.0 * covered[name] / statements[name], 1) if statements[name] else 100.0
        for name in sorted(statements)
    }
    total_statements = sum(statements.values())
    total = round(100.0 * sum(covered.values()) / total_statements, 1) if total_statements else 100.0
    below = [name for name, percent in packages.items() if percent < threshold]
    return {"total": total, "below_threshold": below, "packages": packages}
