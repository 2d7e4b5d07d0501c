"""mathlas build pipeline: corpora -> Documents -> retrieval text -> embeddings -> bundle.

Build and runtime meet at bytes on disk. From the runtime the pipeline imports only the format
(``mathlas.bundle``), the encoder a bundle carries (``mathlas.encoder``: documents and queries are
embedded by one implementation), the errors and the version string; it installs what it built by
running the ``mathlas`` command. ``tests/test_layout.py`` enforces this (docs/bundle-format.md).
"""
