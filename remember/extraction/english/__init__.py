"""English for the offline engine: category cues, chit-chat, third-person rewriting,
and keywords with a vendored stopword list (English dates are read by ``legaltext.dates_en``).

The submodules are imported where they are used (``lexicon`` uses
``keywords``; ``offline`` uses ``cues`` and ``rewrite``), so nothing here imports
``lexicon`` back at package import time.
"""
