"""MkDocs hook: the README's links into the repository must lead somewhere, checked with the site's own build.

The README is not a page of the site (it is the repository's first screen), so MkDocs would not see a link of it
that a renamed page or heading broke. Each relative link is checked here: the file exists, and a ``#fragment`` into
a Markdown file names one of its headings (slugged as the site's table of contents slugs them). A miss is a
warning, which ``mkdocs build --strict`` turns into a failed build.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

from markdown.extensions.toc import slugify

log = logging.getLogger("mkdocs.hooks.readme_links")

LINK = re.compile(r"\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*$", re.M)
FENCE = re.compile(r"^```.*?^```", re.M | re.S)


def anchors(markdown: str) -> set[str]:
    return {slugify(title, "-") for title in HEADING.findall(FENCE.sub("", markdown))}


def broken_links(readme: Path) -> list[str]:
    root = readme.parent
    broken = []
    for target in LINK.findall(FENCE.sub("", readme.read_text(encoding="utf-8"))):
        if re.match(r"^[a-z]+:", target):  # http:, mailto:: not ours to check offline
            continue
        path, _, fragment = target.partition("#")
        file = root / path if path else readme
        if not file.exists():
            broken.append(f"{target}: no file {path}")
        elif fragment and file.suffix == ".md" and fragment not in anchors(file.read_text(encoding="utf-8")):
            broken.append(f"{target}: no heading #{fragment} in {path or readme.name}")
    return broken


def on_pre_build(config: Any, **_: Any) -> None:
    readme = Path(config["config_file_path"]).parent / "README.md"
    for problem in broken_links(readme):
        log.warning("README.md links to %s", problem)
