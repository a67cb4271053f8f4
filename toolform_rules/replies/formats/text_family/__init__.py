"""The text family: calls written as plain lines (command lines, key=value, pipes, tables, URLs, CSV, symbols).

:mod:`.shared` holds what the family's protocols share; each protocol is one module named by its id.
"""
