"""Sphinx configuration for the pymc-rbm documentation.

Build with ``./dev docs`` (warnings are errors), which runs
``python -m sphinx -W --keep-going -b html docs docs/_build/html``.
"""

from __future__ import annotations

import os
import sys

# Document the package in this checkout even when it is not installed.
sys.path.insert(0, os.path.abspath(".."))

import pymc_rbm  # noqa: E402

project = "pymc-rbm"
author = "pymc-rbm contributors"
copyright = "pymc-rbm contributors"
release = pymc_rbm.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    # sphinx.ext.intersphinx is off on purpose: builds must work offline.
]

source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]
nitpicky = False

# --- MyST ------------------------------------------------------------------
myst_enable_extensions = ["dollarmath", "colon_fence", "deflist"]
myst_heading_anchors = 3

# --- autodoc / autosummary / numpydoc --------------------------------------
autodoc_member_order = "bysource"
autodoc_typehints = "none"  # the numpydoc sections already give the types
autodoc_default_options = {"show-inheritance": False}
autosummary_generate = False  # no generated stub pages (docs/api/generated/ stays empty)
numpydoc_show_class_members = False  # autodoc :members: lists them; avoids duplicate objects
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True
numpydoc_xref_param_type = False


def _skip_namedtuple_fields(app, what, name, obj, skip, options):
    """Skip the ``Alias for field number N`` members of NamedTuples.

    Their fields are described in the class docstring's Attributes section.
    """
    doc = getattr(obj, "__doc__", None) or ""
    if what == "class" and doc.startswith("Alias for field number"):
        return True
    return None


def setup(app):
    app.connect("autodoc-skip-member", _skip_namedtuple_fields)


# --- HTML --------------------------------------------------------------------
html_theme = "alabaster"
html_title = f"pymc-rbm {release}"
html_theme_options = {
    "description": "Binary restricted Boltzmann machines in PyMC",
    "fixed_sidebar": True,
}
html_static_path: list[str] = []
