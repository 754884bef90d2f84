#!/usr/bin/env python
"""Django's command-line utility; configuration errors are reported in one line."""
import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "legalmem_site.settings")
    from django.core.management import execute_from_command_line

    from legalmem_site.environment import ConfigError

    try:
        execute_from_command_line(sys.argv)
    except ConfigError as error:
        print(f"configuration error: {error}", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
