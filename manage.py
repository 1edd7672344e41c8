#!/usr/bin/env python
"""Django's command-line utility for Userbench."""

import os
import sys


def main():
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    from django.conf import settings
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line

    try:
        execute_from_command_line(sys.argv)
    except ImproperlyConfigured as error:
        if settings.configured:
            raise  # a command's own error: its traceback says where
        # The settings could not load (a variable is missing): the reason in one line.
        sys.exit(f"Userbench cannot start: {error}")


if __name__ == "__main__":
    main()
