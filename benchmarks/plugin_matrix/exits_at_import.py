"""A plug-in module that calls sys.exit(5) while it is imported (the fuzzer's matrix)."""

import sys

sys.exit(5)
