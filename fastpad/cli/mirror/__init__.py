"""The disk mirror (spec › Markdown and export › The disk mirror): ``fp pull`` and ``fp push``.

A mirror is a directory of canonical Markdown files, one per note, plus
``.fastpad/`` beside them: the manifest (each file's note, the frontier it was
pulled at and its content hash), a copy of each file as pulled (the base a
push diffs against, so ``push --dry-run`` works offline) and the journal of
pushes sent but not yet acknowledged.
"""
