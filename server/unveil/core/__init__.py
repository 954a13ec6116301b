"""The pure analysis core: document model, markdown/frontmatter layers, checks, token cost.

Nothing in this package imports pygls or lsprotocol. Positions are code-point offsets into
``Document.text`` unless a function says otherwise.
"""
