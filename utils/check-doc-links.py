#!/usr/bin/env python3
"""Checks the repository's Markdown documentation for broken references.

Usage: check-doc-links.py REPO_ROOT

For every tracked-looking Markdown file (README.md files, docs/, the
dialects' docs/), reports:
  * a relative link `[text](target)` whose target does not exist;
  * a link or a cited path that leaves the repository (`../..` above the
    root, or an absolute path such as /work/...);
  * a repository path cited in backquotes (`lib/Pipelines/Pipelines.cpp`,
    `test/blockc/pipeline-parity.test`) that does not exist.
Exits 1 and prints one line per problem (file:line: message), else 0.
"""

import os
import re
import sys

TOP_DIRS = ("benchmarks", "cmake", "dialects", "docs", "examples", "fuzz",
            "include", "lib", "scripts", "test", "tools", "unittests", "utils")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
CODE = re.compile(r"`([^`\s]+)`")


def markdown_files(root):
    skip = {".git", "build", "__pycache__", ".cache"}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames
                       if d not in skip and not d.startswith("build-")]
        for name in filenames:
            if name.endswith(".md"):
                yield os.path.join(dirpath, name)


def inside(root, path):
    root = os.path.realpath(root)
    path = os.path.realpath(path)
    return path == root or path.startswith(root + os.sep)


def check_file(root, path):
    problems = []
    rel = os.path.relpath(path, root)
    base = os.path.dirname(path)
    in_fence = False
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if line.lstrip().startswith("```"):
                in_fence = not in_fence
                continue
            if in_fence:
                continue
            for target in LINK.findall(line):
                if re.match(r"^[a-z]+:", target) or target.startswith("#"):
                    continue  # URLs and anchors
                target = target.split("#", 1)[0]
                if not target:
                    continue
                if os.path.isabs(target):
                    problems.append(f"{rel}:{number}: absolute link {target}")
                    continue
                full = os.path.normpath(os.path.join(base, target))
                if not inside(root, full):
                    problems.append(
                        f"{rel}:{number}: link leaves the repository: {target}")
                elif not os.path.exists(full):
                    problems.append(f"{rel}:{number}: broken link: {target}")
            for cited in CODE.findall(line):
                if cited.startswith(("/work", "/shared", "../shared")):
                    problems.append(
                        f"{rel}:{number}: cites a path outside the repository: "
                        f"{cited}")
                    continue
                first = cited.split("/", 1)[0]
                if first not in TOP_DIRS or "/" not in cited:
                    continue
                if any(c in cited for c in "*<>{}$%?|"):
                    continue  # patterns and placeholders
                cited = cited.rstrip(".,:;")
                if not os.path.exists(os.path.join(root, cited)):
                    problems.append(
                        f"{rel}:{number}: cited path does not exist: {cited}")
    return problems


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    root = sys.argv[1]
    problems = []
    count = 0
    for path in sorted(markdown_files(root)):
        count += 1
        problems.extend(check_file(root, path))
    for p in problems:
        print(p)
    print(f"check-doc-links: {count} files, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
