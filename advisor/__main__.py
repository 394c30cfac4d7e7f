"""``python -m advisor``: the same as the ``advisor`` command."""

from advisor.cli import main

main()
