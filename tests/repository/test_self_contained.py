"""The repository stands on its own: no file points outside it, every Markdown link resolves.

Checked on the tracked files (``git ls-files``; without a Git checkout, the files of the
tree less the build, cache and result folders). A link resolves when its target is a
tracked file or a folder holding one, inside the repository, and its ``#anchor`` (if any)
is a heading of the target in GitHub's slug style (or an explicit ``id``/``name``).
"""

from __future__ import annotations

import re
import subprocess
import unicodedata
import warnings
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import unquote

import pytest

REPO = Path(__file__).resolve().parents[2]

#: Paths that exist only on the team's machines, never in a clone (spelled in two parts so
#: that this file does not contain them).
FORBIDDEN = ("../" + "shared", "/work/" + "shared")

#: Folders of a working tree that are not part of the repository.
UNTRACKED_DIRS = frozenset(
    {".git", ".venv", "results", "build", "dist", "__pycache__", ".pytest_cache"}
    | {".mypy_cache", ".ruff_cache", ".hypothesis"}
)


def repository_files(root: Path) -> list[str]:
    """The repository's files under ``root``, as POSIX paths relative to it, sorted."""
    if (root / ".git").exists():
        listed = subprocess.run(
            ["git", "-C", str(root), "ls-files", "-z"], capture_output=True, check=True
        ).stdout.decode()
        return sorted(p for p in listed.split("\0") if p and (root / p).is_file())
    found = []
    for path in root.rglob("*"):
        rel = path.relative_to(root)
        skipped = any(p in UNTRACKED_DIRS or p.endswith(".egg-info") for p in rel.parts)
        if path.is_file() and not skipped:
            found.append(rel.as_posix())
    return sorted(found)


def forbidden_references(root: Path, files: Iterable[str]) -> list[str]:
    """``FILE:LINE: text`` for every line of a text file that names a FORBIDDEN path."""
    hits = []
    for name in files:
        try:
            text = (root / name).read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue  # binary files name no path
        for number, line in enumerate(text.splitlines(), 1):
            if any(f in line for f in FORBIDDEN):
                hits.append(f"{name}:{number}: {line.strip()}")
    return hits


# --- Markdown: links and anchors --------------------------------------------------------

_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_ATX = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_SETEXT = re.compile(r"^\s{0,3}(=+|-+)\s*$")
_CODE_SPAN = re.compile(r"(`+)(.+?)\1")
_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+\"[^\"]*\")?\s*\)")
_REF_DEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)")
_HTML_ID = re.compile(r"<a\s[^>]*(?:id|name)=\"([^\"]+)\"", re.IGNORECASE)
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def prose_lines(text: str) -> list[tuple[int, str]]:
    """(line number, line) of the lines outside fenced code blocks."""
    out, fence = [], ""
    for number, line in enumerate(text.splitlines(), 1):
        opened = _FENCE.match(line)
        if fence:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = ""
        elif opened:
            fence = opened.group(1)
        else:
            out.append((number, line))
    return out


def slug(heading: str) -> str:
    """GitHub's anchor for a heading's text: markup dropped, lower case, punctuation but
    ``-`` and ``_`` removed, each space a ``-``."""
    text = _CODE_SPAN.sub(lambda m: m.group(2), heading)
    text = re.sub(r"!?\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"<[^>]+>", "", text).replace("*", "")
    kept = "".join(
        c for c in text.strip().lower() if c in " -_" or unicodedata.category(c)[0] in "LNM"
    )
    return kept.replace(" ", "-")


def anchors(text: str) -> set[str]:
    """Every anchor a Markdown text defines: its headings' slugs (a repeated slug gets
    ``-1``, ``-2``, ... as on GitHub) and explicit HTML ``id``/``name`` attributes."""
    found: set[str] = set()
    seen: dict[str, int] = {}
    lines = prose_lines(text)
    for i, (number, line) in enumerate(lines):
        atx = _ATX.match(line)
        heading = atx.group(2) if atx else None
        following = lines[i + 1] if i + 1 < len(lines) else None
        if (
            heading is None
            and following is not None
            and following[0] == number + 1
            and _SETEXT.match(following[1])
            and line.strip()
            and not line.lstrip().startswith(("|", "-", "*", ">"))
        ):
            heading = line.strip()
        if heading is not None:
            base = slug(heading)
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
        found.update(_HTML_ID.findall(line))
    return found


def link_targets(text: str) -> list[tuple[int, str]]:
    """(line number, target) of every inline link, image and link definition outside code."""
    out = []
    for number, line in prose_lines(text):
        bare = _CODE_SPAN.sub("", line)
        targets = [m.group(1) for m in _LINK.finditer(bare)]
        definition = _REF_DEF.match(bare)
        if definition:
            targets.append(definition.group(1))
        out += [(number, t[1:-1] if t.startswith("<") else t) for t in targets]
    return out


def broken_links(root: Path, files: Iterable[str]) -> list[str]:
    """``FILE:LINE: TARGET: why`` for every relative link of the Markdown files among
    ``files`` that does not resolve inside ``root`` (see the module docstring)."""
    listed = set(files)
    folders = {str(Path(f).parent.as_posix()) for f in listed}
    folders |= {p.as_posix() for f in listed for p in Path(f).parents}
    texts: dict[str, str] = {}

    def text_of(name: str) -> str:
        if name not in texts:
            texts[name] = (root / name).read_text(encoding="utf-8")
        return texts[name]

    problems = []
    for name in sorted(f for f in listed if f.endswith(".md")):
        for number, target in link_targets(text_of(name)):
            if _SCHEME.match(target) or target.startswith("//"):
                continue  # a URL, not a file of the repository
            where = f"{name}:{number}: {target}"
            path_part, _, anchor = target.partition("#")
            if path_part.startswith("/"):
                problems.append(f"{where}: absolute path")
                continue
            resolved = (root / name).parent / unquote(path_part) if path_part else root / name
            try:
                rel = resolved.resolve().relative_to(root.resolve()).as_posix()
            except ValueError:
                problems.append(f"{where}: outside the repository")
                continue
            if rel not in listed and rel not in folders:
                problems.append(f"{where}: no such file in the repository")
                continue
            if anchor and rel.endswith(".md") and unquote(anchor) not in anchors(text_of(rel)):
                problems.append(f"{where}: no heading with anchor #{anchor} in {rel}")
    return problems


# --- module length ----------------------------------------------------------------------

#: The length past which a module is named in a warning, tests and benchmarks included:
#: a module that long probably holds two concerns; split it by concern, never by this
#: number (docs/architecture.md, "Module length").
MAX_LINES = 500
#: The length past which a module fails the suite: no one concern is that long.
HARD_MAX_LINES = 2 * MAX_LINES
#: The folders of Python code the limit applies to.
CODE_DIRS = ("sim", "tests", "benchmarks")


class ModuleLengthWarning(UserWarning):
    """A module longer than :data:`MAX_LINES`: look for its concerns."""


def long_modules(root: Path, limit: int = MAX_LINES) -> list[str]:
    """``PATH: N lines`` for every ``.py`` file under ``root``'s :data:`CODE_DIRS` longer
    than ``limit`` lines."""
    out = []
    for folder in CODE_DIRS:
        for path in sorted((root / folder).rglob("*.py")):
            lines = len(path.read_text(encoding="utf-8").splitlines())
            if lines > limit:
                out.append(f"{path.relative_to(root).as_posix()}: {lines} lines")
    return out


def module_lengths(root: Path) -> list[str]:
    """The modules past :data:`HARD_MAX_LINES` (returned: the suite fails on them); each
    past :data:`MAX_LINES` named in a :class:`ModuleLengthWarning`."""
    for entry in long_modules(root):
        message = f"{entry} (over {MAX_LINES}: split by concern?)"
        warnings.warn(message, ModuleLengthWarning, stacklevel=2)
    return long_modules(root, HARD_MAX_LINES)


# --- the repository ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def files() -> list[str]:
    listed = repository_files(REPO)
    assert {"README.md", "pyproject.toml", "tests/conftest.py"} <= set(listed)
    return listed


def test_no_file_refers_to_the_team_folder(files: list[str]) -> None:
    assert forbidden_references(REPO, files) == []


def test_every_markdown_link_resolves(files: list[str]) -> None:
    assert any(f.endswith(".md") for f in files)
    assert broken_links(REPO, files) == []


def test_the_readme_links_the_reference_and_the_data(files: list[str]) -> None:
    targets = {t for _, t in link_targets((REPO / "README.md").read_text(encoding="utf-8"))}
    assert {"data/README.md", "docs/reference/README.md", "docs/reference/cli.md"} <= targets
    for source in ("sgd", "mcp_tools", "mcp_wire", "mcp_spec"):
        assert f"data/{source}/README.md" in files


# --- the checkers on bad input ----------------------------------------------------------


def _tree(root: Path, contents: dict[str, str]) -> list[str]:
    for name, text in contents.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return repository_files(root)


def test_a_reference_to_the_team_folder_is_found(tmp_path: Path) -> None:
    files = _tree(
        tmp_path,
        {
            "ok.py": "from mcp.shared import x  # the SDK's package is fine\n",
            "docs/a.md": "intro\nsee " + FORBIDDEN[0] + "/SPEC.md\n",
            "b.yaml": "path: " + FORBIDDEN[1] + "/data\n",
        },
    )
    (tmp_path / "blob.bin").write_bytes(b"\xff\xfe" + FORBIDDEN[0].encode())
    assert forbidden_references(tmp_path, [*files, "blob.bin"]) == [
        f"b.yaml:1: path: {FORBIDDEN[1]}/data",
        f"docs/a.md:2: see {FORBIDDEN[0]}/SPEC.md",
    ]


def test_the_walk_skips_what_is_not_the_repository(tmp_path: Path) -> None:
    files = _tree(
        tmp_path,
        {
            "README.md": "x",
            "sim/a.py": "",
            ".venv/lib/x.py": "",
            "results/r/trace.jsonl": "",
            "protomesh.egg-info/PKG-INFO": "",
        },
    )
    assert files == ["README.md", "sim/a.py"]


GOOD = """# Guide: the *first* part

Text with [a link](other.md#exit-codes-0-1-2), [a folder](sub/), [itself](#guide-the-first-part),
an image ![plot](sub/p.png "title"), a [URL](https://example.org/x.md) and `[code](nope.md)`.

```markdown
[inside a fence](missing.md)
```

[ref]: other.md#setup

## Setup
## Setup
"""

OTHER = """Exit codes: 0, 1, 2
==================

# Setup

<a id="custom"></a>
[to the second Setup](guide.md#setup-1) and [custom](#custom)
"""


def test_links_that_resolve_pass(tmp_path: Path) -> None:
    files = _tree(tmp_path, {"guide.md": GOOD, "other.md": OTHER, "sub/p.png": "png"})
    assert broken_links(tmp_path, files) == []


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("[gone](missing.md)", "missing.md: no such file in the repository"),
        (
            "[x](other.md#no-such-part)",
            "other.md#no-such-part: no heading with anchor #no-such-part in other.md",
        ),
        ("[own anchor](#nowhere)", "#nowhere: no heading with anchor #nowhere in guide.md"),
        ("[escape](../outside.md)", "../outside.md: outside the repository"),
        ("[abs](/etc/passwd)", "/etc/passwd: absolute path"),
        ("[untracked](untracked.md)", "untracked.md: no such file in the repository"),
        ("[ref]: other.md#nope", "other.md#nope: no heading with anchor #nope in other.md"),
    ],
)
def test_a_bad_link_is_named(tmp_path: Path, line: str, why: str) -> None:
    (tmp_path.parent / "outside.md").write_text("x", encoding="utf-8")  # exists, outside
    text = GOOD + "\n" + line + "\n"
    files = _tree(tmp_path, {"guide.md": text, "other.md": OTHER, "sub/p.png": "png"})
    (tmp_path / "untracked.md").write_text("x", encoding="utf-8")  # exists, not listed
    assert broken_links(tmp_path, files) == [f"guide.md:{len(text.splitlines())}: {why}"]


@pytest.mark.parametrize(
    ("heading", "anchor"),
    [
        ("Calculus: bisimulation and Φ⁺", "calculus-bisimulation-and-φ"),
        ("MCP vs MCP+: what a plain-MCP caller loses", "mcp-vs-mcp-what-a-plain-mcp-caller-loses"),
        ("`write_approval` (P2)", "write_approval-p2"),
        ("Resume, force and atomic runs", "resume-force-and-atomic-runs"),
        ("A — B", "a--b"),
        ("[Link](x.md) and **bold**", "link-and-bold"),
    ],
)
def test_slugs_follow_github(heading: str, anchor: str) -> None:
    assert slug(heading) == anchor


# --- docs/reference/cli.md against --help ---------------------------------------------

CLI_PAGE = REPO / "docs" / "reference" / "cli.md"
_OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
_COMMAND_HEADING = re.compile(r"^### `([a-z ]+)`$")


def help_text(capsys: pytest.CaptureFixture[str], *command: str) -> str:
    """What ``python -m sim COMMAND... --help`` prints."""
    from sim.cli import main

    capsys.readouterr()
    assert main([*command, "--help"]) == 0
    return capsys.readouterr().out


def listed_commands(help_output: str) -> list[str]:
    """The sub-commands an argparse help lists (indented names under the positionals)."""
    return re.findall(r"^ {4}([a-z][a-z-]*)(?: {2,}|$)", help_output, re.MULTILINE)


def documented_commands(text: str) -> dict[str, set[str]]:
    """``{"run": {"--router", ...}}``: each ``### `command` `` section of the page and the
    options it names."""
    sections: dict[str, set[str]] = {}
    current: str | None = None
    for line in text.splitlines():
        heading = _COMMAND_HEADING.match(line)
        if heading:
            current = heading.group(1)
            sections[current] = set()
        elif line.startswith("#"):
            current = None
        elif current is not None:
            sections[current].update(_OPTION.findall(line))
    return sections


def test_the_cli_page_names_exactly_each_commands_options(
    capsys: pytest.CaptureFixture[str],
) -> None:
    documented = documented_commands(CLI_PAGE.read_text(encoding="utf-8"))
    top = listed_commands(help_text(capsys))
    assert {"validate", "run", "compare", "check", "serve"} <= set(top)
    groups = {c: listed_commands(help_text(capsys, c)) for c in ("import", "export", "serve")}
    existing = {c for c in top if c not in groups} | {
        f"{g} {k}" for g, kinds in groups.items() for k in kinds
    }
    problems = [f"`{c}` is documented but is no command" for c in documented if c not in existing]
    for command, named in sorted(documented.items()):
        if command not in existing:
            continue
        actual = set(_OPTION.findall(help_text(capsys, *command.split()))) - {"--help"}
        if named - actual:
            problems.append(f"`{command}`: documented, not an option: {sorted(named - actual)}")
        if actual - named:
            problems.append(f"`{command}`: undocumented options: {sorted(actual - named)}")
    assert problems == [], (
        f"{CLI_PAGE.relative_to(REPO)} must show each command's options as "
        "`python -m sim COMMAND --help` does"
    )


def test_the_cli_page_check_sees_a_missing_option() -> None:
    page = "### `run`\n\n```\npython -m sim run FILE [--router NAME]\n```\n\n## Next\n--jobs\n"
    assert documented_commands(page) == {"run": {"--router"}}
    listing = "positional arguments:\n  COMMAND\n    validate  load\n    run       simulate\n"
    assert listed_commands(listing) == ["validate", "run"]


# --- docs/reference/trace.md against the trace vocabulary --------------------------------

TRACE_PAGE = REPO / "docs" / "reference" / "trace.md"


def documented_labels(text: str) -> dict[str, set[str]]:
    """``{label: names in backticks on its table row}`` for each table row that starts with
    one or more backticked labels."""
    rows: dict[str, set[str]] = {}
    for _, line in prose_lines(text):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("| `") or len(cells) < 2:
            continue
        named = set(re.findall(r"`([^`]+)`", " ".join(cells[1:])))
        for label in re.findall(r"`([a-z_]+)`", cells[0]):
            rows[label] = rows.get(label, set()) | named
    return rows


def test_the_trace_page_names_every_label_and_detail_key() -> None:
    from sim.vocabulary import LABELS

    text = TRACE_PAGE.read_text(encoding="utf-8")
    rows = documented_labels(text)
    anywhere = {n for _, line in prose_lines(text) for n in re.findall(r"`([^`]+)`", line)}
    problems = [f"label `{name}` has no row" for name in LABELS if name not in rows]
    for name, label in LABELS.items():
        for key in label.keys:
            # the engine's keys on the label's row; the dialogue converter's on the page
            named = rows.get(name, set()) if key.source == "engine" else anywhere
            if name in rows and key.name not in named:
                problems.append(f"`{name}`: detail key `{key.name}` not named")
    assert problems == [], f"{TRACE_PAGE.relative_to(REPO)} must follow sim/vocabulary"


def test_the_trace_page_check_sees_a_missing_key() -> None:
    page = (
        "| label | detail |\n|---|---|\n| `hop` | `msg`, `from` |\n"
        "| `node_down`, `node_up` | `{}` |\n"
    )
    assert documented_labels(page) == {
        "hop": {"msg", "from"},
        "node_down": {"{}"},
        "node_up": {"{}"},
    }


def test_no_module_is_longer_than_the_hard_limit() -> None:
    """Past :data:`MAX_LINES` a module is named in a warning; past the hard limit it fails."""
    assert module_lengths(REPO) == []


def test_a_module_longer_than_the_limit_is_named(tmp_path: Path) -> None:
    (tmp_path / "sim").mkdir()
    (tmp_path / "sim" / "at_the_limit.py").write_text("x = 1\n" * MAX_LINES)
    (tmp_path / "tests" / "deep").mkdir(parents=True)
    (tmp_path / "tests" / "deep" / "long.py").write_text("x = 1\n" * (MAX_LINES + 1))
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "elsewhere.py").write_text("x = 1\n" * (MAX_LINES + 1))
    assert long_modules(tmp_path) == [f"tests/deep/long.py: {MAX_LINES + 1} lines"]
    with pytest.warns(ModuleLengthWarning, match=r"^tests/deep/long\.py: 501 lines") as seen:
        assert module_lengths(tmp_path) == []  # a warning, not a failure
    assert len(seen) == 1
    (tmp_path / "sim" / "huge.py").write_text("x = 1\n" * (HARD_MAX_LINES + 1))
    with pytest.warns(ModuleLengthWarning):
        assert module_lengths(tmp_path) == [f"sim/huge.py: {HARD_MAX_LINES + 1} lines"]
