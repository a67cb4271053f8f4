"""Reading a model's reply: the text → calls, graded.

:mod:`.parse` reads a whole reply (``parse_reply``), :mod:`.stream` a reply as it streams in, :mod:`.provider_calls`
the calls a provider returned as structured data.  The 31 answer protocols are in :mod:`.formats`, one folder
per family; the model-native formats are one declarative catalogue, interpreted by :mod:`.model_formats`.
"""
