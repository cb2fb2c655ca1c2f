"""YAML text → plain data, with the mark (line, column) of every value and key.

libyaml's composer is used when PyYAML has it (its marks are PyYAML's), else PyYAML's
own; malformed YAML is composed again by PyYAML's, so the messages do not depend on
which one is installed (PyYAML's, :mod:`sim.scenario.pure_yaml`: linear in depth, as
libyaml is). Top-level ``x-`` keys are free (a place for anchors): their
values are never expanded. Every bound below is a located error, never a crash:

* a file is at most :data:`MAX_BYTES` (read with that bound: ``/dev/zero`` is refused);
* characters YAML forbids (control characters) are reported where they stand;
* values nest at most :data:`MAX_DEPTH` deep (libyaml stops at 1,000, PyYAML at
  Python's recursion limit);
* aliases (and merge keys) may add at most :data:`MAX_ALIAS_VALUES` values by
  expansion, and an alias inside the collection it names is refused (a cycle).
"""

from __future__ import annotations

import sys
from typing import Any

import yaml

from sim.scenario.diagnostics import Diagnostic, FieldPath, format_path
from sim.scenario.pure_yaml import EXPONENT_FLOAT, FLOAT_TAG, PureSafeLoader, with_exponent_floats

Mark = tuple[int, int]  # 1-based (line, column)

#: Top-level keys with this prefix are ignored (a place for YAML anchors).
EXTENSION_PREFIX = "x-"
#: The largest scenario file, in bytes (a 16,000-agent file is about 3 MB).
MAX_BYTES = 32 * 1024 * 1024
#: The deepest nesting of values (a scenario needs about ten levels; a tool's JSON
#: Schema a few more per level of properties).
MAX_DEPTH = 64
#: Values that aliases and merge keys may add to the document by expansion.
MAX_ALIAS_VALUES = 100_000

#: PyYAML's composer (its words for malformed YAML), linear in the depth of flow values.
PURE_LOADER = PureSafeLoader
#: libyaml's composer when PyYAML was built with it (marks are the same), else PyYAML's;
#: both read a plain ``1e12`` as a float, as YAML 1.2 and JSON do (docs/scenario.md).
FAST_LOADER: type[yaml.SafeLoader] = (
    with_exponent_floats(type("FastSafeLoader", (yaml.CSafeLoader,), {}))
    if hasattr(yaml, "CSafeLoader")
    else PURE_LOADER
)

_MERGE_TAG = "tag:yaml.org,2002:merge"


class Document:
    """The plain data of a YAML document with the mark of every value and key."""

    def __init__(self, file: str) -> None:
        self.file = file
        #: field path → PyYAML's mark (0-based) of the value / of the key
        self.value_marks: dict[FieldPath, yaml.Mark] = {}
        self.key_marks: dict[FieldPath, yaml.Mark] = {}
        self.problems: list[Diagnostic] = []
        #: id of a flattened mapping node → how many of its pairs came from merge keys
        self.merged: dict[int, int] = {}

    def locate(self, path: FieldPath, *, at_key: bool = False) -> Mark:
        """The mark of ``path``, or of its nearest ancestor present in the file."""
        probe = path
        while probe:
            if at_key and probe in self.key_marks:
                return _one_based(self.key_marks[probe])
            if probe in self.value_marks:
                return _one_based(self.value_marks[probe])
            probe = probe[:-1]
        root = self.value_marks.get(())
        return _one_based(root) if root is not None else (1, 1)

    def diagnostic(
        self, path: FieldPath, message: str, *, at_key: bool = False, warning: bool = False
    ) -> Diagnostic:
        line, column = self.locate(path, at_key=at_key)
        return Diagnostic(
            self.file,
            line,
            column,
            format_path(path),
            message,
            "warning" if warning else "error",
        )


class _Refused(Exception):
    """A bound of this module was passed at ``path`` (construction stops)."""

    def __init__(self, path: FieldPath, message: str, mark: Mark | None = None) -> None:
        super().__init__(message)
        self.path = path
        self.message = message
        self.mark = mark


def _one_based(mark: yaml.Mark) -> Mark:
    return (mark.line + 1, mark.column + 1)


def _mark(node: yaml.Node) -> Mark:
    return _one_based(node.start_mark)


_STR_TAG = "tag:yaml.org,2002:str"
#: Scalar tags whose constructor is a plain function of the node (no generator).
_SCALAR_TAGS = frozenset(
    f"tag:yaml.org,2002:{t}" for t in ("null", "bool", "int", "float", "timestamp", "binary")
)


class _Construction:
    """One document's construction: marks, the alias budget, the collections open.

    Aliases share nodes: a collection met again is expanded again, and the values it
    holds (counted at its first construction) are charged to the alias budget once,
    however deep the aliases inside it go.
    """

    def __init__(self, loader: yaml.SafeLoader, doc: Document) -> None:
        self.loader = loader
        self.constructors = loader.yaml_constructors
        self.doc = doc
        self.values = 0  # values constructed so far
        self.sizes: dict[int, int] = {}  # collection node → values it holds (first time)
        self.open: set[int] = set()  # collection nodes being constructed (for cycles)
        self.replaying = False  # inside a collection met again (already charged)
        self.expanded = 0  # values constructed again through an alias or merge
        self.merge_sizes: dict[int, int] = {}

    def value(self, node: yaml.Node, path: FieldPath) -> Any:
        self.doc.value_marks[path] = node.start_mark
        self.values += 1
        if isinstance(node, yaml.ScalarNode):
            if node.tag == _STR_TAG:
                return node.value
            return self._scalar(node, path)
        key = id(node)
        if key in self.open:
            raise _Refused(
                path,
                f"an alias refers to the collection that contains it (line {_mark(node)[0]}): "
                "the value would be infinite",
            )
        if len(path) >= MAX_DEPTH:
            raise _Refused(path[:1], f"values nest deeper than {MAX_DEPTH} levels", _mark(node))
        size = self.sizes.get(key)
        replaying = self.replaying
        if size is not None and not replaying:
            self.expanded += size
            if self.expanded > MAX_ALIAS_VALUES:
                raise _Refused(
                    path[:1],
                    f"aliases expand to more than {MAX_ALIAS_VALUES:,} values (an alias "
                    "bomb?); repeat less, or anchor smaller values",
                )
            self.replaying = True
        before = self.values
        self.open.add(key)
        try:
            if isinstance(node, yaml.MappingNode):
                result: Any = self._mapping(node, path)
            else:
                result = [self.value(item, (*path, i)) for i, item in enumerate(node.value)]
        finally:
            self.open.discard(key)
            self.replaying = replaying
        if size is None:
            self.sizes[key] = self.values - before
        return result

    def _scalar(self, node: yaml.ScalarNode, path: FieldPath) -> Any:
        try:
            if node.tag in _SCALAR_TAGS:
                return self.constructors[node.tag](self.loader, node)
            return self.loader.construct_object(node, deep=True)
        except (ValueError, OverflowError) as exc:
            reason = str(exc)
            if "digits" in reason:  # Python's bound on reading integers
                reason = f"a whole number of more than {sys.get_int_max_str_digits():,} digits"
            raise _Refused(path, f"cannot read this value: {reason}", _mark(node)) from None

    def _merge_size(self, node: yaml.Node, path: FieldPath, stack: frozenset[int]) -> int:
        """The pairs ``node`` has once its merge keys are flattened (without flattening)."""
        if not isinstance(node, yaml.MappingNode):
            return 0
        key = id(node)
        if key in stack:
            raise _Refused(path, "merge keys (<<) form a cycle: the mapping would be infinite")
        if key not in self.merge_sizes:
            size = 0
            for key_node, value_node in node.value:
                if key_node.tag != _MERGE_TAG:
                    size += 1
                    continue
                subs = (
                    value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]
                )
                for sub in subs:
                    size += self._merge_size(sub, path, stack | {key})
                if size > MAX_ALIAS_VALUES:
                    break
            self.merge_sizes[key] = size
        return self.merge_sizes[key]

    def _mapping(self, node: yaml.MappingNode, path: FieldPath) -> dict[Any, Any]:
        doc = self.doc
        if id(node) not in doc.merged:
            own = sum(1 for k, _ in node.value if k.tag != _MERGE_TAG)
            if own < len(node.value):
                if self._merge_size(node, path, frozenset()) > MAX_ALIAS_VALUES:
                    raise _Refused(
                        path[:1],
                        f"merge keys (<<) expand to more than {MAX_ALIAS_VALUES:,} entries",
                    )
                self.loader.flatten_mapping(node)
            doc.merged[id(node)] = len(node.value) - own
        n_merged = doc.merged[id(node)]
        result: dict[Any, Any] = {}
        own_keys: set[str] = set()
        key_marks = doc.key_marks
        extensions = not path  # top-level `x-` keys: their values are never expanded
        for index, (key_node, value_node) in enumerate(node.value):
            if key_node.tag == _STR_TAG and isinstance(key_node, yaml.ScalarNode):
                key: str = key_node.value
            else:
                other = self._key(key_node, path)
                if other is None:
                    continue
                key = other
            at = (*path, key)
            if index < n_merged:  # from `<<: *anchor`: later merges and own keys win
                key_marks[at] = key_node.start_mark
                result[key] = self.value(value_node, at)
                continue
            if key in own_keys:
                line, column = _mark(key_node)
                first = _one_based(key_marks[at])
                doc.problems.append(
                    Diagnostic(
                        doc.file,
                        line,
                        column,
                        format_path(at),
                        f"duplicate key '{key}' (first given at line {first[0]})",
                    )
                )
                continue
            own_keys.add(key)
            key_marks[at] = key_node.start_mark
            if extensions and key.startswith(EXTENSION_PREFIX):
                continue
            result[key] = self.value(value_node, at)
        return result

    def _key(self, node: yaml.Node, path: FieldPath) -> str | None:
        """A mapping key as a string; None (and a problem) when it is not a scalar."""
        if node.tag == FLOAT_TAG and EXPONENT_FLOAT.fullmatch(node.value):
            return str(node.value)  # its text, as before YAML 1.2's floats (``5e-1:``)
        key = self._scalar(node, path) if isinstance(node, yaml.ScalarNode) else None
        if not isinstance(key, str | int | float | bool):
            line, column = _mark(node)
            self.doc.problems.append(
                Diagnostic(self.doc.file, line, column, format_path(path), "keys must be scalars")
            )
            return None
        return key if isinstance(key, str) else str(key)


def _position(text: str, index: int) -> Mark:
    """The 1-based (line, column) of character ``index`` of ``text``."""
    line = text.count("\n", 0, index) + 1
    return line, index - (text.rfind("\n", 0, index) + 1) + 1


def reader_diagnostic(exc: yaml.reader.ReaderError, text: str, file: str) -> Diagnostic:
    """A character YAML forbids, located, with the escape that writes it."""
    found = yaml.reader.Reader.NON_PRINTABLE.search(text)
    if found is None:  # not a forbidden character: PyYAML's own words
        return Diagnostic(file, 1, 1, "<root>", f"cannot read: {exc}")
    line, column = _position(text, found.start())
    code = ord(found.group())
    escape = f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"
    return Diagnostic(
        file,
        line,
        column,
        "<root>",
        f"character U+{code:04X} is not allowed in YAML text (a control character); "
        f'write it as an escape in a double-quoted string ("{escape}")',
    )


def _yaml_diagnostic(exc: yaml.MarkedYAMLError, file: str) -> Diagnostic:
    """PyYAML's error as a located diagnostic; a tab gets a hint, a context its start."""
    problem, context = exc.problem_mark, exc.context_mark
    mark = problem or context
    line, column = (mark.line + 1, mark.column + 1) if mark else (1, 1)
    message = f"malformed YAML: {exc.problem or 'cannot be parsed'}"
    if "'\\t'" in message:
        message += "; indent with spaces, not tabs"
    elif "expected <block end>" in message or "mapping values are not allowed" in message:
        message += "; check the indentation of this line"
    elif "maximum nesting depth" in message:  # libyaml's own bound (1,000 levels)
        return Diagnostic(
            file, line, column, "<root>", f"values nest deeper than {MAX_DEPTH} levels"
        )
    if exc.context:
        if context is not None and problem is not None and context.line != problem.line:
            where = f"line {context.line + 1}, column {context.column + 1}"
            message += f" ({exc.context} that starts at {where})"
        else:
            message += f" ({exc.context})"
    return Diagnostic(file, line, column, "<root>", message)


def kind_of(value: Any) -> str:
    """``value``'s kind in YAML words: 'a list', 'a string', 'a number', ..."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return f"a {type(value).__name__}"


def too_large(file: str) -> Diagnostic:
    """The diagnostic of a file over :data:`MAX_BYTES`."""
    return Diagnostic(
        file,
        1,
        1,
        "<root>",
        f"the file is larger than {MAX_BYTES // 2**20} MiB, the most a scenario may be",
    )


def _composed(text: str, loader_class: type[Any]) -> yaml.Node | None:
    loader = loader_class(text)
    try:
        node: yaml.Node | None = loader.get_single_node()
        return node
    finally:
        loader.dispose()


def _compose(text: str, doc: Document, loader_class: type[Any]) -> yaml.Node | None:
    """The document's root node (:func:`composed`); malformed YAML is recorded."""
    try:
        return composed(text, loader_class)
    except TooDeep:
        doc.problems.append(
            Diagnostic(doc.file, 1, 1, "<root>", f"values nest deeper than {MAX_DEPTH} levels")
        )
    except yaml.reader.ReaderError as exc:
        doc.problems.append(reader_diagnostic(exc, text, doc.file))
    except yaml.MarkedYAMLError as exc:
        doc.problems.append(_yaml_diagnostic(exc, doc.file))
    except yaml.YAMLError as exc:
        doc.problems.append(Diagnostic(doc.file, 1, 1, "<root>", f"malformed YAML: {exc}"))
    return None


def parse_yaml(text: str, doc: Document, loader_class: type[Any] = FAST_LOADER) -> Any:
    """Compose and construct ``text`` with the marks in ``doc``; the data, or None with
    the reasons in ``doc.problems``. ``loader_class`` chooses the composer."""
    if len(text) > MAX_BYTES:
        doc.problems.append(too_large(doc.file))
        return None
    node = _compose(text, doc, loader_class)
    if node is None:
        if not doc.problems:
            doc.problems.append(
                Diagnostic(
                    doc.file,
                    1,
                    1,
                    "<root>",
                    "the file is empty; a scenario is a mapping with at least name, "
                    "protocols and agents",
                )
            )
        return None
    loader = loader_class("")
    try:
        data = _Construction(loader, doc).value(node, ())
    except _Refused as exc:
        line, column = exc.mark or doc.locate(exc.path, at_key=True)
        doc.problems.append(Diagnostic(doc.file, line, column, format_path(exc.path), exc.message))
        return None
    except yaml.MarkedYAMLError as exc:
        doc.problems.append(_yaml_diagnostic(exc, doc.file))
        return None
    finally:
        loader.dispose()
    if not isinstance(data, dict):
        doc.problems.append(
            doc.diagnostic((), f"a scenario is a mapping of fields, not {kind_of(data)}")
        )
        return None
    return data


class TooDeep(yaml.YAMLError):
    """Values nested past what PyYAML's composer takes (its stack), where libyaml is not
    there to say where."""


def composed(text: str, loader_class: type[Any] = FAST_LOADER) -> yaml.Node | None:
    """The root node of ``text`` as :func:`parse_yaml` composes it: ``loader_class``'s
    composer; malformed YAML raised in PyYAML's words (libyaml's composer retried by
    PyYAML's, whose error wins unless it runs out of stack: then libyaml's), nesting past
    what PyYAML's composer takes without libyaml :class:`TooDeep`."""
    error: yaml.YAMLError | None = None
    try:
        return _composed(text, loader_class)
    except yaml.YAMLError as exc:
        error = exc
    except RecursionError:
        pass
    if not issubclass(loader_class, yaml.SafeLoader):  # libyaml's: PyYAML's words
        try:
            return _composed(text, PURE_LOADER)
        except yaml.YAMLError as exc:
            error = exc
        except RecursionError:
            pass
    raise error if error is not None else TooDeep("values nest too deep for PyYAML's composer")


def plain_data(text: str) -> Any:
    """All of YAML ``text`` as plain data, ``x-`` values included (a file read again for
    them): by libyaml when PyYAML has it, which takes the 1,000 levels the loader lets an
    ``x-`` value have; nesting past what a composer takes is a :class:`yaml.YAMLError`."""
    try:
        return yaml.load(text, Loader=FAST_LOADER)  # a safe loader: libyaml or PyYAML
    except RecursionError:  # PyYAML's composer without libyaml
        raise yaml.YAMLError("values nest too deep for PyYAML's composer") from None


def locate_field(source: str | None, path: FieldPath) -> str:
    """``file:line:col: field`` of ``path`` in the scenario file ``source`` (its nearest
    ancestor present there), or the field alone when the file cannot be read again."""
    field = format_path(path)
    if source is None:
        return field
    try:
        with open(source, encoding="utf-8") as fh:
            text = fh.read()
        doc = Document(source)
        parse_yaml(text, doc)
    except (OSError, UnicodeDecodeError):
        return field
    line, column = doc.locate(path)
    return f"{source}:{line}:{column}: {field}"
