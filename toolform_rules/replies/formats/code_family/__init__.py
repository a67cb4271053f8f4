"""The code family: calls written as code, ``name(arguments)`` (Python, SQL, GraphQL, S-expressions, brackets).

:mod:`.shared` holds what the family's protocols share; each protocol is one module named by its id.
"""
