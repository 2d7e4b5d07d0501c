"""The ``mathlas`` command line: ``main.py`` builds the parser from one module per command group
(``search``, ``index``, ``lean``, ``findings``...), ``common.py`` holds the shared options and the
exit codes. Importing a command module loads no tool: tools load inside ``run``."""
