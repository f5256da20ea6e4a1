"""`python -m factdebate.cli`: the `factdebate` command."""

from factdebate.cli import main

main()
