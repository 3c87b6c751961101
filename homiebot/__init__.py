"""homiebot: a modular, hierarchical runtime for language-model-planned mobile manipulation."""

__version__ = "0.1.0"

from homiebot import _moved

_moved.install()  # old module paths keep working, with a DeprecationWarning, for one release
