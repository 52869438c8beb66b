#!/usr/bin/env python3
"""Every Markdown table in the tracked docs has as many cells in each row as in its header.

A bare | inside a cell (a regex in backticks, say) starts a new cell where Markdown renders tables, so the row shows in
pieces; write it \\| (docs/OPERATIONS.md's alert table). Tables inside fenced code blocks are not tables.

    scripts/check-doc-tables.py            # every tracked .md file
    scripts/check-doc-tables.py selftest   # the checker refuses a broken table and accepts a good one
"""
import re
import subprocess
import sys


def cells(row):
    """The cell count of a table row: its unescaped pipes, less the outer two."""
    return len(re.findall(r"(?<!\\)\|", row.strip())) - 1


def problems(text, name):
    """One line per table row whose cell count differs from its header's."""
    found = []
    fence = None
    header = None
    for number, line in enumerate(text.split("\n"), start=1):
        stripped = line.strip()
        opener = re.match(r"(```+|~~~+)", stripped)
        if fence:
            if stripped.startswith(fence):
                fence = None
            continue
        if opener:
            fence = opener.group(1)
            header = None
            continue
        if not stripped.startswith("|"):
            header = None
            continue
        if header is None:
            header = (number, cells(stripped))
        elif cells(stripped) != header[1]:
            found.append(f"{name}:{number}: {cells(stripped)} cells where the table's header at line {header[0]} has {header[1]}")
    return found


def selftest():
    broken = "| a | b |\n|---|---|\n| `x|y` | z |\n"
    good = "| a | b |\n|---|---|\n| `x\\|y` | z |\n\n```\n| not | a | table |\n```\n"
    if not problems(broken, "broken"):
        sys.exit("check-doc-tables: the checker accepted a row with a bare | in a cell")
    if problems(good, "good"):
        sys.exit("check-doc-tables: the checker refused a good table: " + "; ".join(problems(good, "good")))
    print("check-doc-tables: the checker refuses the table it must")


def main():
    if sys.argv[1:] == ["selftest"]:
        selftest()
        return
    files = subprocess.run(["git", "ls-files", "*.md"], capture_output=True, text=True, check=True).stdout.split()
    found = []
    for name in files:
        with open(name, encoding="utf-8") as handle:
            found += problems(handle.read(), name)
    for line in found:
        print(line)
    if found:
        sys.exit(f"check-doc-tables: {len(found)} table rows with the wrong number of cells")
    print(f"check-doc-tables: every table in {len(files)} Markdown files has rows of one cell count")


main()
