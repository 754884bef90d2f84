"""Records' writes, each in ``transaction.atomic`` with its audit entry: erasure (``erasure``),
retention and legal hold (``retention``), matter import (``matter_transfer``) and the scrub of
erased notes from saved replies (``reply_scrub``)."""
