"""Build hook for the one compiled piece: the double-dummy solver behind the `pimc` and `oracle` bots.

All project metadata lives in pyproject.toml; this file only declares the C extension, which
`pip install -e .` compiles with the system C compiler.
"""

import sys

from setuptools import Extension, setup

flags = ["/O2"] if sys.platform == "win32" else ["-O3", "-std=c99"]

setup(ext_modules=[Extension("euchre_agents._dds", sources=["euchre_agents/_dds.c"], extra_compile_args=flags)])
