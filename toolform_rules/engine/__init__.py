"""The rules engine: rule files and profiles (``rules``), the operation registry
(``operations``) with one function per operation (``validation_ops``,
``normalisation_ops``), the compiler to closures (``compiler``), reports (``report``) and
the public verbs (``verbs``: validate a call, an instance, normalise a call).

Nothing is imported here: importing one part of the engine loads only what that part needs.
"""
