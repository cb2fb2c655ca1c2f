"""A plug-in module that raises while it is imported (the fuzzer's matrix)."""

raise RuntimeError("fuzz: the plug-in module raised at import")
