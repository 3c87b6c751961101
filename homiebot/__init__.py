"""homiebot: a modular, hierarchical runtime for language-model-planned mobile manipulation."""

__version__ = "0.1.0"
