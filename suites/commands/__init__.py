"""Subcommands of `lingprobe`: each module here defines `register(parsers)`."""
