"""Sphinx configuration of combpred's documentation: user guide, API reference from the docstrings
(numpydoc), the examples as a gallery whose plots are built with the docs (sphinx-gallery), and the
Markdown design notes and benchmarks (MyST). Build: ``python -m sphinx -W -b html docs docs/_build``."""

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault("COMBPRED_EXAMPLE_QUICK", "1")  # the gallery runs the examples on less data

try:  # the installed package (with its compiled core); a source tree with a built core otherwise
    import combpred
except ImportError:
    sys.path.insert(0, str(ROOT / "python"))
    import combpred

project = "combpred"
author = "the combpred developers"
copyright = "2026, the combpred developers"
release = version = combpred.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "myst_parser",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "auto_examples/*.ipynb", "auto_examples/*.py", "auto_examples/*.zip"]
myst_enable_extensions = ["dollarmath"]
myst_heading_anchors = 3
suppress_warnings = ["myst.header"]  # the included Markdown starts below level 1 in places

autosummary_generate = True
# scikit-learn's metadata-routing setters document themselves with links into scikit-learn's own
# glossary, which does not exist here.
_ROUTING = [f"set_{m}_request" for m in ("fit", "partial_fit", "predict", "score", "decision_function", "transform")]
autodoc_default_options = {"members": True, "inherited-members": False, "exclude-members": ",".join(_ROUTING)}
# The docstrings write the number of structures as |Y|, which reStructuredText would read as a
# substitution: define it as itself.
rst_prolog = r"""
.. |Y| replace:: \|Y\|
"""
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False

sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"\.py$",
    "download_all_examples": False,
    "remove_config_comments": True,
}

html_theme = "alabaster"
html_static_path: list[str] = []
html_title = f"combpred {release}"
