"""The corpus's kernel sources are compiler input (Triton, Numba and CuTe DSL modules need their tools), and
generate.py a script: none of them is a test module or a doctest module. This list replaces the root
conftest's for this folder, so it names this conftest too."""

collect_ignore = ["src", "generate.py", "conftest.py"]
