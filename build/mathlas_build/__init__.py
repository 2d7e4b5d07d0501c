"""mathlas build pipeline: corpora -> Documents -> retrieval text -> embeddings -> bundle.

Imports only ``mathlas.bundle`` from the runtime: build and runtime meet at bytes on disk.
"""
