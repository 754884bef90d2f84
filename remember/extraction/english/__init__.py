"""English for the offline engine: category cues, chit-chat, third-person rewriting,
dates resolved against the day said, and keywords with a vendored stopword list.

The submodules are imported where they are used (``lexicon`` uses ``dates`` and
``keywords``; ``offline`` uses ``cues`` and ``rewrite``), so nothing here imports
``lexicon`` back at package import time.
"""
