"""The call loop and the clients it talks to: :mod:`.call_loop` (prompt, parse, validate, execute, feed back)
and :mod:`.clients` (the providers' chat APIs).
"""
