"""Helpers the test modules share: where the corpora are, how values and calls are compared,
the checks every protocol test makes, the BFCL readers.  One helper per meaning, named for
what it does; pytest puts ``tests/`` on the path, so test modules import ``support.<module>``.
"""
