"""The README starts where a user starts (what gpuwrite is, `make demo` / `make test`, a quickstart, the install
line with every extra, all in its first 40 lines), its quickstart runs, and every relative link in the README and
docs/ leads to a file and heading that exist."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
FIRST_LINES = 40
DOCS = sorted([README, REPO / "bench" / "README.md", *(REPO / "docs").glob("*.md")])
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def _head() -> str:
    """The README's first 40 lines."""
    return "\n".join(README.read_text().splitlines()[:FIRST_LINES])


def _extras() -> list[str]:
    """The optional-dependency extras pyproject.toml declares."""
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    return sorted(project["optional-dependencies"])


def test_readme_opens_with_what_it_is_the_two_commands_and_a_quickstart() -> None:
    """What gpuwrite is, both make targets with what they do, the quickstart (pyarrow, pandas, polars, DuckDB,
    the command line) and the install line naming every extra, within the first 40 lines."""
    head = _head()
    assert head.startswith("# gpuwrite\n\ngpuwrite writes Apache Parquet v2 files")
    assert re.search(r"^make demo +# .*polars and DuckDB", head, re.MULTILINE)
    assert re.search(r"^make test +# .*then the suite", head, re.MULTILINE)
    assert "## Quickstart" in head
    quickstart = head[head.index("## Quickstart"):]
    for word in ("pyarrow", "pandas", "polars", "duckdb", "gpuwrite.write_table(", "gpuwrite write ",
                 "gpuwrite inspect "):
        assert word in quickstart, word
    install = head[head.index("Install: `pip install .`"):]
    missing = [extra for extra in _extras() if f"`[{extra}]`" not in install]
    assert not missing, f"extras not on the README's install line: {missing}"


def test_readme_quickstart_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The quickstart's Python block writes each file it names, and each reads back with its rows."""
    pytest.importorskip("duckdb")
    pytest.importorskip("polars")
    pytest.importorskip("pandas")
    import pyarrow.parquet as pq

    head = _head()
    (block,) = re.findall(r"```python\n(.*?)```", head[head.index("## Quickstart"):], re.DOTALL)
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, Any] = {}
    exec(compile(block, str(README), "exec"), namespace)
    rows = {name: pq.read_table(f"{name}.parquet").num_rows for name in ("cities", "pandas", "polars", "duckdb",
                                                                          "zstd")}
    assert rows == {"cities": 3, "pandas": 2, "polars": 2, "duckdb": 1, "zstd": 3}
    assert pq.ParquetFile("zstd.parquet").metadata.row_group(0).column(0).compression == "ZSTD"
    assert namespace["result"].num_rows == 3


def _slug(heading: str) -> str:
    """GitHub's anchor for a markdown heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    """The anchors of a markdown file's headings (outside code blocks)."""
    text = re.sub(r"```.*?```", "", path.read_text(), flags=re.DOTALL)
    return {_slug(m.group(1)) for m in re.finditer(r"^#{1,6} (.+)$", text, re.MULTILINE)}


def broken_links(path: Path) -> list[str]:
    """Each relative link of a markdown file whose file, or heading in it, does not exist."""
    text = re.sub(r"```.*?```", "", path.read_text(), flags=re.DOTALL)
    broken = []
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target):  # https:, mailto:
            continue
        file, _, anchor = target.partition("#")
        resolved = (path.parent / file).resolve() if file else path
        if not resolved.exists():
            broken.append(f"{target} (no such file)")
        elif anchor and resolved.suffix == ".md" and anchor not in _anchors(resolved):
            broken.append(f"{target} (no such heading)")
    return broken


@pytest.mark.parametrize("path", DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_leads_somewhere(path: Path) -> None:
    """Links to files and to headings within them resolve from the file that holds them."""
    assert broken_links(path) == []


def test_the_link_check_sees_missing_files_and_headings(tmp_path: Path) -> None:
    """A link to a missing file or heading is reported; web links, code blocks and good links are not."""
    (tmp_path / "other.md").write_text("# Other\n\n## Python workers (tuning)\n")
    page = tmp_path / "page.md"
    page.write_text("[a](other.md) [b](other.md#python-workers-tuning) [c](missing.md) [d](other.md#nope)\n"
                    "[e](https://example.com/x.md) ![f](img.png) [g](#page)\n```\n[h](gone.md)\n```\n# Page\n")
    assert broken_links(page) == ["missing.md (no such file)", "other.md#nope (no such heading)",
                                  "img.png (no such file)"]
