"""The schema side: the tool IR (``ir``), the loaders of tool definitions (``loaders``),
toolsets with name resolution (``toolset``) and the naming conventions (``names``).

Nothing is imported here: importing one part loads only what that part needs.
"""
