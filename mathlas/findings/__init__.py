"""Findings: results an agent found on the web and saved with ``add_finding``, searchable at once.

``store.py`` keeps them (``data_dir()/findings/findings.jsonl``, crash-safe appends, optional
vectors); ``search.py`` makes them a search channel that ``Bundle.rank`` fuses with the bundle's
own channels. In results they carry the source ``SOURCE`` and the kind ``KIND``.
"""
SOURCE = "findings"          # the source name findings carry in search results and filters
KIND = "finding"
LICENSE = "unknown (web)"    # what a finding's license field says: the agent's source decides
