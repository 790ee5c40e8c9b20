"""Imports: Obsidian vaults, Notion Markdown & CSV exports and Markdown folders, with a ledger for every item.

``archive`` reads a folder or a zip without trusting or changing it;
``detect`` names the source; ``vault`` and ``notion`` turn an archive into a
``plan`` (``content``, ``canvas``, ``databases`` help them read it);
``resolve`` and ``rewrite`` turn its links into ones the write path makes
edges of; ``titles`` keeps those links unambiguous; ``runner`` writes the
plan through NoteService and TypeService; ``ledger`` is the row for every
item and the summary; ``service`` is what the surfaces call.
"""
