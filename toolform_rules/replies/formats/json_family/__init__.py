"""The JSON family: calls written as JSON documents (objects, arrays, lines, code blocks, tags around JSON).

:mod:`.shared` holds what the family's protocols share; each protocol is one module named by its id.
"""
