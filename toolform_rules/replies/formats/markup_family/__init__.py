"""The markup family: calls written in tags, YAML, TOML or labelled text (XML, function tags, ReAct, intents).

:mod:`.shared` holds what the family's protocols share; each protocol is one module named by its id.
"""
