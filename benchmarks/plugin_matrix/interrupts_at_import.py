"""A plug-in module that raises KeyboardInterrupt while it is imported (the fuzzer's matrix)."""

raise KeyboardInterrupt
