"""The write path's actions (zulip's ``do_*``): each owns its rule, the rows it writes and its
side effects, inside one ``transaction.atomic``, and leaves its record (a routing decision, an
audit entry through ``memory.services``) at its end."""
