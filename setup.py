"""The package's build: pyproject.toml holds the metadata; this file adds the optional native core.

``workbench/engine/_native.pyx`` is compiled when Cython (a build requirement) and a C compiler are
at hand. Without either the package installs as pure Python, with the same behaviour
(``workbench.engine.native`` says which is in use).
"""

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


class OptionalBuildExt(build_ext):
    """``build_ext`` that leaves the package pure Python, with a warning, when the compiler fails."""

    def build_extensions(self) -> None:
        built = []
        for ext in self.extensions:
            try:
                self.build_extension(ext)
            except Exception as err:  # why: any compiler failure (missing, broken, no headers) alike
                print(f"warning: {ext.name} was not built ({err}); the package is pure Python")
            else:
                built.append(ext)
        self.extensions[:] = built  # why: an editable install copies only what was built


try:
    from Cython.Build import cythonize
except ImportError:  # why: a build without Cython still installs the pure-Python package
    ext_modules: list[Extension] = []
else:
    ext_modules = cythonize(
        [Extension("workbench.engine._native", ["workbench/engine/_native.pyx"])],
        compiler_directives={"language_level": "3"},
        quiet=True,
    )

setup(ext_modules=ext_modules, cmdclass={"build_ext": OptionalBuildExt})
